//! The text part of a page dump: decoded headers of both images and a hex dump of the
//! differing ranges with context.

use std::fmt::Write;

use crate::codec::Reader;
use crate::findings::Finding;
use crate::page::layout::{self, page_checksum};
use crate::page::verdict::ExpectedState;
use crate::page::PAGE_SIZE;

use crate::report::sinks::clock::iso_utc;

/// Bytes of context shown around each differing range.
const CONTEXT: usize = 16;
/// Most hex lines printed; the raw files hold everything.
const MAX_LINES: usize = 192;

/// The whole text dump of a finding.
pub fn dump_text(f: &Finding) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "sqliosim page dump (finding #{}, {})",
        f.seq,
        f.class.as_str()
    );
    let _ = writeln!(
        s,
        "File: {}  Page: {}  Offset: 0x{:X} ({})",
        f.path.display(),
        f.page_id,
        f.offset,
        f.offset
    );
    if let Some(l) = &f.location {
        let _ = writeln!(s, "On the device: {}", l.describe());
    }
    let _ = writeln!(
        s,
        "Found: {} UTC by {} {}  Seed: 0x{:016X}",
        iso_utc(f.time_us),
        f.actor.name(),
        f.actor_id,
        f.seed
    );
    let _ = writeln!(s, "Verdict: {}", f.verdict.describe());
    if let Some(d) = &f.detail {
        let _ = writeln!(s, "Detail: {d}");
    }
    let _ = writeln!(s, "Expected state: {}", expected_words(f.expected));
    retries(&mut s, f);
    let _ = writeln!(s, "Persistent: {}", if f.persistent { "yes" } else { "no" });
    history(&mut s, f);
    images(&mut s, f);
    s
}

/// What the run expected of the page, in words (not Rust's debug form).
pub fn expected_words(e: Option<ExpectedState>) -> String {
    let before = |old: u64| match old {
        0 => "never written".to_string(),
        g => format!("wholly generation {g}"),
    };
    match e {
        None => "nothing known (the page was checked only against itself)".into(),
        Some(ExpectedState::NeverWritten) => "never written".into(),
        Some(ExpectedState::Written { generation }) => {
            format!("written, generation {generation} (the last write that completed)")
        }
        Some(ExpectedState::InFlight { old, new }) => format!(
            "a write of generation {new} in flight: the page must be {} or wholly generation {new}",
            before(old)
        ),
        Some(ExpectedState::Unknown { old, issued }) => format!(
            "uncertain after a failed write: any intact page from {} to generation {issued}",
            match old {
                0 => "never written".to_string(),
                g => format!("generation {g}"),
            }
        ),
    }
}

/// The page's recent operations.
fn history(s: &mut String, f: &Finding) {
    s.push_str("\nFILE HISTORY (oldest first)\n");
    if f.history.is_empty() {
        // A heading with nothing under it read as a lost section.
        s.push_str("  (none recorded for this page)\n");
    }
    for h in &f.history {
        let _ = writeln!(
            s,
            "  {}  {:<8} {:<16} generation {:<8} {}",
            iso_utc(h.time_us),
            h.op,
            h.actor.name(),
            h.generation,
            if h.ok { "ok" } else { "FAILED" }
        );
    }
}

/// Both headers decoded, then the differences.
fn images(s: &mut String, f: &Finding) {
    header_section(s, "WRITE (EXPECTED) IMAGE", f.expected_image.as_deref());
    header_section(s, "READ (RECEIVED) IMAGE", f.received.as_deref());
    match (f.expected_image.as_deref(), f.received.as_deref()) {
        (Some(e), Some(r)) => differences(s, e, r),
        _ => s.push_str("\nDIFFERENCES: only one image is available; see the checksums above.\n"),
    }
}

/// Re-read verdicts, runs of identical ones on one line ("Re-reads 1-15: …").
fn retries(s: &mut String, f: &Finding) {
    let mut i = 0;
    while i < f.retries.len() {
        let same = f.retries[i..]
            .iter()
            .take_while(|r| **r == f.retries[i])
            .count();
        let what = f.retries[i].describe();
        let _ = match same {
            1 => writeln!(s, "Re-read {}: {what}", i + 1),
            n => writeln!(s, "Re-reads {}-{}: {what}", i + 1, i + n),
        };
        i += same;
    }
}

fn header_section(s: &mut String, title: &str, page: Option<&[u8]>) {
    let _ = writeln!(s, "\n{title}");
    let Some(p) = page.filter(|p| p.len() >= PAGE_SIZE) else {
        s.push_str("  (not available)\n");
        return;
    };
    let magic: String = p[..8]
        .iter()
        .map(|&b| if b.is_ascii_graphic() { b as char } else { '.' })
        .collect();
    // Each field read where the layout puts it; `p` is a whole page, so none is missing.
    let at = |off| Reader::at(p, off);
    let field = |s: &mut String, name: &str, v: Option<u64>| {
        let _ = match v {
            Some(v) => writeln!(s, "  {name:<14} 0x{v:016X}  {v}"),
            None => writeln!(s, "  {name:<14} (missing)"),
        };
    };
    let _ = writeln!(s, "  {:<14} {magic:?}", "magic");
    field(s, "version", at(layout::OFF_VERSION).u16().map(u64::from));
    field(s, "kind", at(layout::OFF_KIND).u16().map(u64::from));
    field(s, "file_id", at(layout::OFF_FILE_ID).u32().map(u64::from));
    field(s, "page_id", at(layout::OFF_PAGE_ID).u64());
    field(s, "generation", at(layout::OFF_GENERATION).u64());
    field(s, "run_id", at(layout::OFF_RUN_ID).u64());
    field(s, "lsn", at(layout::OFF_LSN).u64());
    field(
        s,
        "writer_kind",
        at(layout::OFF_WRITER_KIND).u8().map(u64::from),
    );
    field(
        s,
        "writer_id",
        at(layout::OFF_WRITER_ID).u16().map(u64::from),
    );
    if let Some(t) = at(layout::OFF_WRITE_TIME).u64() {
        let _ = writeln!(s, "  {:<14} {t} ({} UTC)", "write_time_us", iso_utc(t));
    } else {
        field(s, "write_time_us", None);
    }
    let _ = writeln!(
        s,
        "  {:<14} 0x{:08X}",
        "stored crc",
        layout::stored_checksum(p)
    );
    let _ = writeln!(s, "  {:<14} 0x{:08X}", "calculated crc", page_checksum(p));
}

/// Ranges `[start, end)` of differing bytes, merged when closer than two contexts.
fn diff_ranges(e: &[u8], r: &[u8]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for i in (0..e.len().min(r.len())).filter(|&i| e[i] != r[i]) {
        match out.last_mut() {
            Some(last) if i <= last.1 + 2 * CONTEXT => last.1 = i + 1,
            _ => out.push((i, i + 1)),
        }
    }
    out
}

fn differences(s: &mut String, e: &[u8], r: &[u8]) {
    let ranges = diff_ranges(e, r);
    let bytes = e.iter().zip(r).filter(|(a, b)| a != b).count();
    let _ = writeln!(
        s,
        "\nDIFFERENCES: {bytes} byte(s) differ in {} range(s)",
        ranges.len()
    );
    let mut lines = 0;
    for (start, end) in ranges {
        let _ = writeln!(
            s,
            "\nRange 0x{start:04X}..0x{end:04X} ({} bytes)",
            end - start
        );
        let from = start.saturating_sub(CONTEXT) / 16 * 16;
        let to = (end + CONTEXT).min(e.len()).div_ceil(16) * 16;
        for line in (from..to.min(e.len())).step_by(16) {
            if lines == MAX_LINES {
                s.push_str("\n... truncated: the .expected and .received files hold both images in full.\n");
                return;
            }
            hex_line(s, line, e, r);
            lines += 1;
        }
    }
}

fn hex_line(s: &mut String, at: usize, e: &[u8], r: &[u8]) {
    let end = (at + 16).min(e.len()).min(r.len());
    let hex = |b: &[u8]| {
        b.iter()
            .map(|x| format!("{x:02x}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let marks: String = (at..end)
        .map(|i| if e[i] != r[i] { "^^ " } else { "   " })
        .collect();
    let _ = writeln!(s, "  {at:04X}  E: {}", hex(&e[at..end]));
    let _ = writeln!(s, "        R: {}", hex(&r[at..end]));
    if marks.contains('^') {
        let _ = writeln!(s, "           {}", marks.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_state_is_written_in_words() {
        let w = |e| expected_words(Some(e));
        assert_eq!(
            w(ExpectedState::Written { generation: 33 }),
            "written, generation 33 (the last write that completed)"
        );
        assert_eq!(w(ExpectedState::NeverWritten), "never written");
        assert_eq!(
            w(ExpectedState::InFlight { old: 0, new: 4 }),
            "a write of generation 4 in flight: the page must be never written or wholly generation 4"
        );
        assert!(w(ExpectedState::Unknown { old: 2, issued: 5 })
            .contains("from generation 2 to generation 5"));
        assert!(!expected_words(None).contains("None"));
    }

    #[test]
    fn an_empty_history_says_so_under_its_heading() {
        let mut s = String::new();
        let f = Finding::page(
            0,
            "f".into(),
            0,
            1,
            crate::page::ActorKind::Verifier,
            0,
            crate::page::Verdict::Garbage {
                first_bytes: [0; 16],
            },
        );
        history(&mut s, &f);
        assert_eq!(
            s,
            "\nFILE HISTORY (oldest first)\n  (none recorded for this page)\n"
        );
    }
}
