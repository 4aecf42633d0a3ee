//! The structured FINDING child of an integrity ENTRY, and the entry's description text.

use crate::findings::Finding;
use crate::page::layout::{page_checksum, stored_checksum};
use crate::page::torn::torn_map;
use crate::page::verdict::sector_list;
use crate::page::{BitDiff, ExpectedState, Verdict, PAGE_SIZE};

use crate::report::sinks::clock::iso_utc;
use crate::report::sinks::entry::{close, empty_elem, open, text_elem, Out};
use crate::report::sinks::hresult::errno_text;

/// The EXTENDED_DESCRIPTION of a finding: SQLIOSim's validation text, then what was found.
pub fn description(f: &Finding) -> String {
    let head = match f.class {
        crate::findings::FindingClass::ReadError => "Read failed on",
        crate::findings::FindingClass::WriteError => "Write failed on",
        _ => "Buffer validation failed on",
    };
    format!(
        "{head} {} Page: {}, offset 0x{:X}: {}. {}",
        f.path.display(),
        f.page_id,
        f.offset,
        what(f),
        retry_text(f)
    )
}

/// What is wrong: the finding's own detail (log chain, WAL rule) or its verdict; an I/O error
/// names its Linux errno, since HRESULT carries the Win32 code (see [`crate::report::sinks::hresult`]).
pub fn what(f: &Finding) -> String {
    match (&f.detail, &f.verdict) {
        (Some(d), _) => d.clone(),
        (None, Verdict::IoError { errno }) => format!("I/O error: {}", errno_text(*errno)),
        (None, v) => v.describe(),
    }
}

fn retry_text(f: &Finding) -> String {
    match f.retries.iter().position(Verdict::is_ok) {
        _ if f.retries.is_empty() => "Not re-read.".to_string(),
        Some(i) => format!(
            "Re-read {} of {} returned the right page.",
            i + 1,
            f.retries.len()
        ),
        None => format!("All {} re-reads failed.", f.retries.len()),
    }
}

/// Expected generation as text: "5", or "4..5" when either is acceptable.
fn expected_generation(s: ExpectedState) -> String {
    let (lo, hi) = (s.min_acceptable(), s.max_issued());
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}..{hi}")
    }
}

fn hex32(v: u32) -> String {
    format!("0x{v:08X}")
}

/// (expected, received, calculated) checksums, as far as known.
fn checksums(f: &Finding) -> [Option<u32>; 3] {
    if let Verdict::ChecksumMismatch {
        stored,
        calculated,
        expected,
        ..
    } = f.verdict
    {
        return [Some(expected), Some(stored), Some(calculated)];
    }
    let page = |b: &Option<Vec<u8>>| b.as_ref().filter(|b| b.len() >= PAGE_SIZE).cloned();
    let exp = page(&f.expected_image).map(|p| stored_checksum(&p));
    let (rec, calc) = match page(&f.received) {
        Some(p) => (Some(stored_checksum(&p)), Some(page_checksum(&p))),
        None => (None, None),
    };
    [exp, rec, calc]
}

/// Attributes EXPECTED / RECEIVED, leaving out the unknown ones.
fn pair<'a>(exp: &'a Option<String>, rec: &'a Option<String>) -> Vec<(&'static str, &'a str)> {
    let mut v = Vec::new();
    if let Some(e) = exp {
        v.push(("EXPECTED", e.as_str()));
    }
    if let Some(r) = rec {
        v.push(("RECEIVED", r.as_str()));
    }
    v
}

/// Writes the FINDING element; `run_id` is the run id of the file set, if known.
pub fn write_finding(w: &mut Out, f: &Finding, run_id: Option<u64>) {
    let seq = f.seq.to_string();
    let seed = format!("0x{:016X}", f.seed);
    let persistent = f.persistent.to_string();
    let time = iso_utc(f.time_us);
    let pages = f.page_count.to_string();
    open(
        w,
        "FINDING",
        &[
            ("SEQ", &seq),
            ("CLASS", f.class.as_str()),
            ("PERSISTENT", &persistent),
            ("TIME", &time),
            ("SEED", &seed),
            ("PAGES", &pages),
        ],
    );
    text_elem(w, "PATH", &[], &f.path.display().to_string());
    if let Some(d) = &f.detail {
        text_elem(w, "DETAIL", &[], d);
    }
    write_identity(w, f, run_id);
    write_location(w, f);
    write_verdicts(w, f);
    write_history(w, f);
    if let Some(d) = &f.dump {
        text_elem(w, "DUMP", &[], &d.display().to_string());
    }
    // The finding itself, for `sqliosim report`: the elements above are for people and scripts.
    let json = serde_json::to_string(f).unwrap_or_default();
    text_elem(w, "DATA", &[("FORMAT", "json")], &json);
    close(w, "FINDING");
}

fn write_identity(w: &mut Out, f: &Finding, run_id: Option<u64>) {
    let h = f.received_header;
    let offset = f.offset.to_string();
    let hex = format!("0x{:X}", f.offset);
    text_elem(w, "OFFSET", &[("HEX", &hex)], &offset);
    let s = |v: u64| Some(v.to_string());
    let (e, r) = (
        s(u64::from(f.file_id)),
        h.and_then(|h| s(u64::from(h.file_id))),
    );
    empty_elem(w, "FILE_ID", &pair(&e, &r));
    let (e, r) = (s(f.page_id), h.and_then(|h| s(h.page_id)));
    empty_elem(w, "PAGE_ID", &pair(&e, &r));
    let (e, r) = (
        f.expected.map(expected_generation),
        h.and_then(|h| s(h.generation)),
    );
    empty_elem(w, "GENERATION", &pair(&e, &r));
    let x = |v: u64| Some(format!("0x{v:016X}"));
    let (e, r) = (run_id.and_then(x), h.and_then(|h| x(h.run_id)));
    empty_elem(w, "RUN_ID", &pair(&e, &r));
    let id = f.actor_id.to_string();
    empty_elem(w, "ACTOR", &[("NAME", f.actor.name()), ("ID", &id)]);
    if let Some(e) = f.expected {
        let words = crate::report::sinks::dump_text::expected_words(Some(e));
        text_elem(w, "EXPECTED_STATE", &[], &words);
    }
}

/// DEVICE_LOCATION: the device, the disk and the page's LBA on it (attributes when known),
/// and the sentence saying it or why it is not known.
fn write_location(w: &mut Out, f: &Finding) {
    let Some(l) = &f.location else {
        return;
    };
    let lba = l.lba().map(|v| v.to_string());
    let size = l.logical_sector_size.map(|v| v.to_string());
    let start = l.partition_start.map(|v| v.to_string());
    let mut attrs: Vec<(&str, &str)> = Vec::new();
    for (k, v) in [("DEVICE", &l.device), ("DISK", &l.disk)] {
        if !v.is_empty() {
            attrs.push((k, v.as_str()));
        }
    }
    for (k, v) in [
        ("LBA", &lba),
        ("SECTOR_SIZE", &size),
        ("PARTITION_START", &start),
    ] {
        if let Some(v) = v {
            attrs.push((k, v.as_str()));
        }
    }
    text_elem(w, "DEVICE_LOCATION", &attrs, &l.describe());
}

fn write_verdicts(w: &mut Out, f: &Finding) {
    text_elem(
        w,
        "VERDICT",
        &[("KIND", f.verdict.kind().as_str())],
        &f.verdict.describe(),
    );
    let [e, r, c] = checksums(f).map(|v| v.map(hex32));
    let mut attrs = pair(&e, &r);
    if let Some(c) = &c {
        attrs.push(("CALCULATED", c.as_str()));
    }
    if !attrs.is_empty() {
        empty_elem(w, "CHECKSUM", &attrs);
    }
    match &f.verdict {
        Verdict::TornWrite { sectors } => text_elem(w, "SECTOR_MAP", &[], &torn_map(sectors)),
        Verdict::ZeroedSectors { sectors, .. } => {
            text_elem(w, "SECTOR_MAP", &[("ZEROED", &sector_list(*sectors))], "")
        }
        Verdict::ChecksumMismatch { diff, .. } => write_bit_diff(w, diff),
        _ => {}
    }
    let count = f.retries.len().to_string();
    open(w, "RETRIES", &[("COUNT", &count)]);
    for (i, r) in f.retries.iter().enumerate() {
        let n = (i + 1).to_string();
        text_elem(
            w,
            "RETRY",
            &[("N", &n), ("KIND", r.kind().as_str())],
            &r.describe(),
        );
    }
    close(w, "RETRIES");
}

fn write_bit_diff(w: &mut Out, diff: &BitDiff) {
    let hex = |b: Option<u32>| b.map_or_else(String::new, |b| format!("0x{b:X}"));
    let v = [
        diff.bits_flipped.to_string(),
        diff.bytes_differing.to_string(),
        hex(diff.first_bad_byte),
        hex(diff.last_bad_byte),
        sector_list(diff.sectors),
    ];
    let names = ["BITS", "BYTES", "FIRST", "LAST", "SECTORS"];
    let attrs: Vec<(&str, &str)> = names
        .into_iter()
        .zip(v.iter().map(String::as_str))
        .collect();
    empty_elem(w, "BIT_DIFF", &attrs);
}

fn write_history(w: &mut Out, f: &Finding) {
    open(w, "HISTORY", &[]);
    for h in &f.history {
        let (time, gen, ok) = (
            iso_utc(h.time_us),
            h.generation.to_string(),
            h.ok.to_string(),
        );
        empty_elem(
            w,
            "EVENT",
            &[
                ("TIME", &time),
                ("OP", &h.op),
                ("ACTOR", h.actor.name()),
                ("GENERATION", &gen),
                ("OK", &ok),
            ],
        );
    }
    close(w, "HISTORY");
}
