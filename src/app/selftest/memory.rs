//! The self-test's in-memory half: one small simulation per fault class on the faulty
//! backend, each fault armed at one page of the data file.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::plan::selftest_plan;
use super::Row;
use crate::events::MemorySink;
use crate::findings::FindingClass as C;
use crate::io::faulty::classes::{self, Aim};
use crate::io::faulty::{Fault, Misdirect, Trigger};
use crate::io::FaultyBackend;
use crate::page::SECTORS_PER_PAGE;

/// One fault class: what is armed where, and what must be reported.
struct Case {
    name: String,
    fault: Option<Fault>,
    page: u64,
    expect: Vec<(C, u64)>,
}

/// Where each class of the table of fault classes (`io::faulty::classes`) is armed in the
/// self-test: its page, and for a misdirected write the page it is sent to. A class of the
/// table with an in-memory fault and no place here fails a test; a delay reports nothing to
/// check, so it has none.
const PLACES: &[(&str, u64, Option<u64>)] = &[
    ("lost write", 10, None),
    ("torn write (512 B sectors)", 80, None),
    ("torn write (4 KB)", 90, None),
    // The stray page lands inside its own request: the faulty backend completes posted
    // requests out of order, so a page of another request in flight could be written after
    // the stray one and hide it (as on a real device), and the row would not be
    // reproducible.
    ("misdirected write", 150, Some(140)),
    ("bit flip at rest", 220, None),
    ("zeroed sector", 290, None),
    ("stale read", 600, None),
    ("EIO on read", 360, None),
    ("EIO on write", 430, None),
    ("short read (claims full length)", 500, None),
    // A page of the backup stream, not of the data file: the second carried page of its
    // first block (16 KB of header, then 8 KB pages), flipped at rest before the verify-only
    // pass reads it back.
    (classes::BACKUP_STREAM, 3, None),
    // A page of DBCC User 0's snapshot file, in a row where nothing writes the data file
    // during the check: every page of the snapshot is a hole, flipped at rest before the check
    // of the sparse file reads it.
    ("snapshot hole not zeros", 40, None),
    // A page of Sort User 0's tempdb file, read once as its earlier version.
    ("stale reused extent", 3, None),
];

fn cases() -> Vec<Case> {
    let mut out = vec![Case {
        name: "none (clean run)".into(),
        fault: None,
        page: 0,
        expect: Vec::new(),
    }];
    for &(name, page, to) in PLACES {
        let Some(class) = classes::by_name(name) else {
            continue;
        };
        let mut fault = class.fault.clone();
        let mut shown = class.name.to_string();
        let mut expect: Vec<(C, u64)> = class.caught_as.iter().map(|&c| (c, page)).collect();
        if let (Some(to), Some(Fault::MisdirectedWrite(_))) = (to, &fault) {
            fault = Some(Fault::MisdirectedWrite(Misdirect::Page(to)));
            shown = format!("{} (to page {to})", class.name);
            // The stray copy is found where it landed, the page it left is a lost write.
            for e in expect.iter_mut().filter(|e| e.0 == C::MisdirectedWrite) {
                e.1 = to;
            }
        }
        out.push(Case {
            name: shown,
            fault,
            page,
            expect,
        });
    }
    out
}

/// Runs every case; one row each.
pub fn run(seed: u64) -> anyhow::Result<Vec<Row>> {
    cases().into_iter().map(|c| run_case(&c, seed)).collect()
}

/// The main phase of a case's run, then the longer ones the case runs again with while its
/// fault never fired. The Backup, DBCC and Sort Users meet their faults in the main phase; on a
/// busy machine 300 ms can end before the actor reached its page (a full CI run beside seed 11
/// did, once in several runs). A fault that never fired says nothing of detection, so the case
/// goes again, afresh; a fault that fired is judged on that run, and one that never fires in
/// the longest phase is a row marked no.
const PHASES: [Duration; 3] = [
    Duration::from_millis(300),
    Duration::from_secs(2),
    Duration::from_secs(10),
];

fn run_case(case: &Case, seed: u64) -> anyhow::Result<Row> {
    run_case_in(case, seed, &PHASES)
}

/// Runs `case` with the first of `phases` as its main phase, and again with the next while
/// its fault never fired; the row of the last run.
fn run_case_in(case: &Case, seed: u64, phases: &[Duration]) -> anyhow::Result<Row> {
    super::until_fired(phases.iter().copied(), |main| run_once(case, seed, main))?
        .ok_or_else(|| anyhow::anyhow!("no phase to run the case {} in", case.name))
}

/// One run of `case` with a `main` long main phase; its row, and whether its fault fired
/// (true for the clean run).
fn run_once(case: &Case, seed: u64, main: Duration) -> anyhow::Result<(Row, bool)> {
    let dir = Path::new("/selftest");
    let aim = classes::by_name(&case.name).map_or(Aim::DataFile, |c| c.aim);
    let mut plan = selftest_plan(dir, seed, main, true);
    super::plan::aim_plan(&mut plan, aim);
    let backend = FaultyBackend::new(seed);
    if let (Some(f), Some(path)) = (&case.fault, crate::app::faults::target(&plan, aim)) {
        let target = Trigger::Page {
            path,
            page: case.page,
        };
        backend.inject(armed(f, seed), target);
    }
    let sink = Arc::new(MemorySink::default());
    crate::sim::driver::simulate(plan, &backend, sink.clone())?;
    let fired = case.fault.is_none() || !backend.fired().is_empty();
    let row = Row::judge(
        "memory",
        &case.name,
        case.page,
        &case.expect,
        &sink.findings(),
        fired,
    );
    Ok((row, fired))
}

/// The fault armed for a case run with `seed`: a zeroed sector is one the seed picks among all
/// but the page's last. The self-test's pages are written once (its main phase only reads), and
/// a page written once whose last sector is zero is exactly what a torn first write leaves (the
/// device kept a prefix, the old content was zero), which the verifier reports as torn: bytes
/// and expectation are the same, so no verifier can tell the two (docs/page-format.md). Left to
/// the backend's draw among all 16 sectors, 1 seed in 16 (19, for one) zeroed the last sector
/// and the row said torn_write (issue #38); the row is there to prove the zeroed-sector verdict,
/// so it zeroes a sector only zeroing explains.
fn armed(fault: &Fault, seed: u64) -> Fault {
    match fault {
        Fault::ZeroedSector(None) => {
            let sectors = SECTORS_PER_PAGE as u64 - 1;
            // Below SECTORS_PER_PAGE, so it fits.
            Fault::ZeroedSector(Some((seed % sectors) as usize))
        }
        f => f.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every class of the table that the in-memory backend injects and that has something to
    /// report is a case of the self-test.
    #[test]
    fn every_class_with_a_finding_is_a_case() {
        let names: Vec<String> = cases().into_iter().map(|c| c.name).collect();
        for c in classes::CLASSES {
            if c.fault.is_some() && !c.caught_as.is_empty() {
                assert!(
                    names.iter().any(|n| n.starts_with(c.name)),
                    "no self-test case for {}",
                    c.name
                );
            }
        }
        assert_eq!(
            names.len(),
            PLACES.len() + 1,
            "a place names no class: {names:?}"
        );
    }

    fn zeroed_sector_case() -> Case {
        cases()
            .into_iter()
            .find(|c| c.name == "zeroed sector")
            .expect("a zeroed sector case")
    }

    fn backup_case() -> Case {
        cases()
            .into_iter()
            .find(|c| c.name == classes::BACKUP_STREAM)
            .expect("a backup stream case")
    }

    /// A main phase that ends before the Backup User reached its stream (a busy machine gave
    /// the 300 ms too little: CI-51's seed 11, "fault never fired") runs the case again
    /// longer: the row is judged on the run where the fault fired. The phases after the first
    /// are the self-test's own (300 ms, 2 s, 10 s): with 300 ms alone after it, this test
    /// failed beside a full CI (CI-58), as the self-test did before it ran again.
    #[test]
    fn a_case_whose_fault_never_fired_runs_again_with_a_longer_phase() {
        let case = backup_case();
        let short = run_case_in(&case, 11, &[Duration::ZERO]).expect("the case runs");
        assert!(
            !short.ok,
            "a phase of nothing reaches the stream: {short:?}"
        );
        assert_eq!(short.reported, "fault never fired");
        let phases: Vec<Duration> = std::iter::once(Duration::ZERO).chain(PHASES).collect();
        let row = run_case_in(&case, 11, &phases).expect("the case runs");
        assert!(row.ok, "{row:?}");
    }

    /// Seed 19 drew the page's last sector, and a page written once with a zero tail is a torn
    /// first write to the verifier: the row said torn_write@290 on every machine, loaded or not.
    #[test]
    fn the_zeroed_sector_row_is_zeroed_sectors_for_the_seed_that_drew_the_last_sector() {
        let row = run_case(&zeroed_sector_case(), 19).expect("the case runs");
        assert!(row.ok, "{row:?}");
        assert_eq!(row.reported, "zeroed_sectors@290");
    }

    /// Whatever the seed, the sector zeroed is not the last one, and the seeds spread over the
    /// others.
    #[test]
    fn no_seed_zeroes_the_last_sector() {
        let fault = zeroed_sector_case().fault.expect("a fault");
        let mut seen = [false; SECTORS_PER_PAGE];
        for seed in 0..1000 {
            match armed(&fault, seed) {
                Fault::ZeroedSector(Some(s)) => seen[s] = true,
                other => panic!("seed {seed} armed {other:?}"),
            }
        }
        assert_eq!(
            seen.iter().filter(|s| **s).count(),
            SECTORS_PER_PAGE - 1,
            "{seen:?}"
        );
        assert!(!seen[SECTORS_PER_PAGE - 1]);
    }
}
