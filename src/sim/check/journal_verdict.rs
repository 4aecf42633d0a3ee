//! `sqliosim verify`'s reading of the journal: what the device is held to, and what a damaged
//! journal means.
//!
//! A journal unreadable before its end (whole records after the damage) is not the torn tail
//! a crash leaves: the journal's device lost, tore or corrupted a write it had acknowledged as
//! durable. Verify then trusts only what comes before the damage, says so (the durability
//! check is partial), and decides what the damage says about the device:
//!
//! - the journal on the device under test (the same device as a file checked): the device
//!   broke an acknowledged write, which is one integrity error against the device — named as
//!   the journal's, never as a data page's;
//! - the journal on another device (`--journal-dir`): not a finding against the files checked;
//!   a warning that the journal's own device is suspect.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::sim::engine::journal::{Damage, Flaw, JournalState};

/// The journal as verify read it.
pub struct JournalRead {
    /// Replayed up to its first flaw.
    pub state: JournalState,
    /// Integrity errors the journal itself stands for (1 when damaged on the device under test).
    pub findings: u64,
    /// What verify prints about it, line by line (the caller prints: nothing below `app`
    /// writes to stdout).
    pub lines: Vec<String>,
}

/// What the journal read at `path` is and what the device is held to; `checked` are the files
/// the scan checks (to tell whether the journal shares their device).
pub fn report(path: &Path, st: JournalState, checked: &[PathBuf]) -> JournalRead {
    let mut lines = Vec::new();
    lines.push(format!(
        "Journal {}: run {:016x}, {}{}",
        path.display(),
        st.run_id,
        ended(&st),
        if st.torn_tail {
            ", torn tail ignored"
        } else {
            ""
        }
    ));
    let findings = match &st.damage {
        Some(d) => report_damage(path, d, &st, shared_device(path, checked), &mut lines),
        None => 0,
    };
    lines.push(held_to(&st));
    JournalRead {
        state: st,
        findings,
        lines,
    }
}

fn ended(st: &JournalState) -> &'static str {
    match (&st.damage, st.clean, st.void.is_some()) {
        (Some(d), _, _) if d.end_after => "clean shutdown (its End record is after the damage)",
        (Some(_), _, _) => "how the run ended is not known (the journal is damaged)",
        (None, true, _) => "clean shutdown",
        (None, false, true) => "the journal went void: how the run ended is not recorded",
        (None, false, false) => "no clean shutdown (crash or kill)",
    }
}

/// A checked file on the same device as the journal, if any.
fn shared_device(journal: &Path, checked: &[PathBuf]) -> Option<PathBuf> {
    let dev = |p: &Path| std::fs::metadata(p).ok().map(|m| m.dev());
    let j = dev(journal)?;
    checked.iter().find(|p| dev(p) == Some(j)).cloned()
}

/// Says the damage and what it means in `lines`; returns the integrity errors it counts for.
fn report_damage(
    path: &Path,
    d: &Damage,
    st: &JournalState,
    dut: Option<PathBuf>,
    lines: &mut Vec<String>,
) -> u64 {
    lines.push(format!("JOURNAL DAMAGED: {}: {d}.", path.display()));
    lines.push(format!(
        "The durability check is PARTIAL: {}; pages are held only to what the journal recorded before offset {}{}, and the {} record(s) after the damage are not used. Writes acknowledged after that are NOT held to account.",
        match d.flaw {
            Flaw::Invalid { .. } => "the journal holds a record no run writes (a write corrupted with its checksum, or a journal not written by sqliosim)",
            _ => "the journal's device lost or tore a write it had acknowledged as durable (a crash leaves only a torn tail, never whole records after it)",
        },
        d.offset,
        st.last_mark
            .map(|(us, _)| format!(" (its last batch before the damage at {})", at(us)))
            .unwrap_or_default(),
        d.records_after
    ));
    match dut {
        Some(file) => {
            lines.push(format!(
                "The journal is on the device under test (the same device as {}): that device broke a write it acknowledged as durable. This counts as 1 integrity error against the device, at the journal (offset {}), not against any data or log page.",
                file.display(),
                d.offset
            ));
            1
        }
        None => {
            lines.push("The journal is not on the device under test (another device than the files checked): this is not a finding against them; check the journal's own device.".into());
            0
        }
    }
}

/// A wall-clock time as `HH:MM:SS.mmm UTC`.
fn at(us: u64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(us) * 1000)
        .map(|t| {
            format!(
                "{:02}:{:02}:{:02}.{:03} UTC",
                t.hour(),
                t.minute(),
                t.second(),
                t.millisecond()
            )
        })
        .unwrap_or_else(|_| format!("{us} us"))
}

/// True when the journal holds no page generation and no log position.
fn holds_nothing(st: &JournalState) -> bool {
    st.durable.iter().all(|d| d.iter().all(|(_, g)| g == 0)) && st.log.iter().all(Option::is_none)
}

/// What the device is held to: every write acknowledged up to the last journal batch.
fn held_to(st: &JournalState) -> String {
    let mut s = match (st.clean, st.last_mark, &st.damage) {
        (_, Some((us, _)), Some(d)) => format!(
            "Held to every write acknowledged as durable up to the journal's last batch before the damage at offset {}, at {}.",
            d.offset,
            at(us)
        ),
        (_, None, Some(d)) => format!(
            "Held only to what the journal recorded before the damage at offset {} (no batch mark before it).",
            d.offset
        ),
        (true, _, None) => "Held to every write acknowledged as durable during the run (clean shutdown).".to_string(),
        (false, Some((us, ms)), None) => format!(
            "Held to every write acknowledged as durable up to the last journal batch at {} (batches every {ms} ms at most, each made durable by an fdatasync: acknowledgements after that batch, i.e. of the last {ms} ms before the cut plus the journal's fdatasync time, may be missing from the journal and are not held).",
            at(us)
        ),
        // Every batch carries a mark: a journal that holds something without one is from
        // before marks were written.
        (false, None, None) if holds_nothing(st) => "Held to nothing: no batch was journaled before the cut (only the run's Start record).".to_string(),
        (false, None, None) => "Held to the writes journaled at sync points (a journal written before batches were marked).".to_string(),
    };
    if let Some((us, why)) = &st.void {
        s.push_str(&format!(
            "\nThe journal could not be written from {} ({why}): writes acknowledged after that are NOT held; the durability check is void for that part of the run.",
            at(*us)
        ));
    }
    s
}
