//! The self-test's kernel half (`--fuse`): each fault class injected by a faultfs mount, under
//! a simulation doing real O_DIRECT I/O through the kernel's FUSE module.
//!
//! Every page is its own request (no scatter/gather), so a fault hits exactly its page.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::faultfs::{find_binary, unavailable, Daemon};
use super::plan::{selftest_plan, DATA, DATA_PAGES};
use super::Row;
use crate::events::MemorySink;
use crate::findings::FindingClass as C;
use crate::io::faulty::classes::Aim;
use crate::io::safefile::{self, Dir};
use crate::io::DirectBackend;

/// One fault class through faultfs.
struct Case {
    name: &'static str,
    /// faultfs `inject` arguments (none for the clean run).
    spec: Option<&'static str>,
    /// Armed only once the initial update has written every page (damage at rest).
    late: bool,
    cycles: u32,
    page: u64,
    expect: &'static [(C, u64)],
    /// The file the fault is aimed at (its actor is on in this row only).
    aim: Aim,
}

const fn case(
    name: &'static str,
    spec: &'static str,
    page: u64,
    expect: &'static [(C, u64)],
) -> Case {
    Case {
        name,
        spec: Some(spec),
        late: false,
        cycles: 1,
        page,
        expect,
        aim: Aim::DataFile,
    }
}

const CASES: &[Case] = &[
    Case {
        name: "none (clean run)",
        spec: None,
        late: false,
        cycles: 1,
        page: 0,
        expect: &[],
        aim: Aim::DataFile,
    },
    case(
        "lost write",
        "lost file=sqliosim.mdx page=10",
        10,
        &[(C::LostWrite, 10)],
    ),
    case(
        "torn write (512 B kept)",
        "torn file=sqliosim.mdx page=80 keep=512",
        80,
        &[(C::TornWrite, 80)],
    ),
    case(
        "torn write (4 KB kept)",
        "torn file=sqliosim.mdx page=90 keep=4096",
        90,
        &[(C::TornWrite, 90)],
    ),
    case(
        "misdirected write (to page 200)",
        "misdirect file=sqliosim.mdx page=300 shift=-819200",
        300,
        &[(C::MisdirectedWrite, 200), (C::LostWrite, 300)],
    ),
    Case {
        late: true,
        ..case(
            "bit flip at rest",
            "flip file=sqliosim.mdx page=220 byte=1806240 bit=3",
            220,
            &[(C::BitRot, 220)],
        )
    },
    case(
        "bit flip on every read",
        "flip-read file=sqliosim.mdx page=230 byte=1888356 bit=6",
        230,
        &[(C::BitRot, 230)],
    ),
    Case {
        late: true,
        cycles: 2,
        ..case(
            "stale read (previous generation)",
            "stale file=sqliosim.mdx page=600",
            600,
            &[(C::StaleRead, 600)],
        )
    },
    case(
        "EIO on read",
        "eio-read file=sqliosim.mdx page=360",
        360,
        &[(C::ReadError, 360)],
    ),
    case(
        "EIO on write",
        "eio-write file=sqliosim.mdx page=430",
        430,
        &[(C::WriteError, 430)],
    ),
    // The second carried page of the backup stream's first block (16 KB of header, then 8 KB
    // pages), flipped on every read: the verify-only pass reads it back damaged, under its
    // name once the finished backup is renamed over it (faultfs matches a file by its name).
    Case {
        aim: Aim::BackupStream,
        ..case(
            "backup stream block damaged",
            "flip-read file=sqliosim.bak page=3 byte=29576 bit=2",
            3,
            &[(C::BackupCorruption, 3)],
        )
    },
    // A hole of DBCC User 0's snapshot (nothing writes the data file in this row), read as
    // non-zero when the check of the sparse file reads it.
    Case {
        aim: Aim::Snapshot,
        ..case(
            "snapshot hole not zeros",
            "flip-read file=sqliosim.mdx_MSSQL_DBCC0 page=40 byte=332680 bit=5",
            40,
            &[(C::HoleNotZeros, 40)],
        )
    },
    // A tempdb page read once as what it held before its last write: the Sort User's merge
    // reads it stale, and right when it re-reads.
    Case {
        aim: Aim::Tempdb,
        ..case(
            "stale reused extent",
            "stale file=sqliosim.mdx.sort0 page=3",
            3,
            &[(C::StaleRead, 3)],
        )
    },
];

/// Runs every case through faultfs; Err says why they cannot run here.
pub fn run(seed: u64) -> Result<Vec<Row>, String> {
    if let Some(why) = unavailable() {
        return Err(format!("FUSE is not usable here: {why}"));
    }
    let bin = find_binary()?;
    let work = work_dir()?;
    let rows = CASES
        .iter()
        .enumerate()
        .map(|(i, c)| {
            // Each run on a new mount of its own, as the in-memory rows run afresh.
            super::until_fired(LONGER.iter().enumerate(), |(k, &longer)| {
                let name = match k {
                    0 => format!("s{i:02}"),
                    k => format!("s{i:02}.{k}"),
                };
                run_case(c, &bin, &new_dir(&work, &name)?, seed, longer)
            })?
            .ok_or_else(|| format!("no run of the case {}", c.name))
        })
        .collect::<Result<Vec<Row>, String>>();
    let _ = std::fs::remove_dir_all(work.path());
    rows
}

/// The self-test's own working directory: a new one with a random name and mode 0700 in the
/// temporary directory (never a name found there: one guessed from the pid and planted
/// ahead would have root mount over, unmount or write what another user chose), and only in
/// a temporary directory no other user can change (whoever can rename entries in it could
/// swap the working directory for a symlink while the mounts are made).
fn work_dir() -> Result<Dir, String> {
    let tmp = std::env::temp_dir();
    let real = std::fs::canonicalize(&tmp).map_err(|e| {
        format!(
            "cannot resolve the temporary directory {}: {e}",
            tmp.display()
        )
    })?;
    let said = safefile::exposure(&real);
    if !said.is_empty() {
        return Err(format!(
            "the temporary directory {} can be changed by another user ({}): set TMPDIR to a directory only you can change",
            tmp.display(),
            said.join("; ")
        ));
    }
    Dir::open(&real)
        .and_then(|d| d.new_private("sqliosim-selftest-"))
        .map_err(|e| e.to_string())
}

fn new_dir(parent: &Dir, name: &str) -> Result<Dir, String> {
    parent
        .new_subdir(std::ffi::OsStr::new(name))
        .map_err(|e| e.to_string())
}

/// How many times longer than its first run a case's main phase is in each run, while its
/// fault never fired (a busy machine can end the first before the actor reached its page).
const LONGER: [u32; 3] = [1, 3, 10];

/// One run of `case` in `dir`, its main phase `longer` times the first run's; its row, and
/// whether its fault fired (true for the clean run).
fn run_case(
    case: &Case,
    bin: &Path,
    dir: &Dir,
    seed: u64,
    longer: u32,
) -> Result<(Row, bool), String> {
    let backing = new_dir(dir, "backing")?.path().to_path_buf();
    let mnt = new_dir(dir, "mnt")?.path().to_path_buf();
    let daemon = Daemon::mount(bin, &backing, &mnt)?;
    let early = match (case.spec, case.late) {
        (Some(spec), false) => Some(daemon.inject(spec)?),
        _ => None,
    };
    let mut plan = selftest_plan(&mnt, seed, Duration::from_secs(1), false);
    super::plan::aim_plan(&mut plan, case.aim);
    if case.aim == Aim::BackupStream {
        // A whole backup of the 8 MB file, one page a request through FUSE, then its
        // verify-only pass, within the phase.
        plan.cycle_duration = Duration::from_secs(4);
        plan.backup.verify_only = true;
    }
    plan.cycle_duration *= longer;
    plan.cycles = case.cycles;
    plan.journal = true;
    let sink = Arc::new(MemorySink::default());
    let (result, late) = std::thread::scope(|s| {
        let sim =
            s.spawn(|| crate::sim::driver::simulate(plan, &DirectBackend::new(), sink.clone()));
        let late = match (case.spec, case.late) {
            (Some(spec), true)
                if wait_initial_update(&backing.join(DATA), || sim.is_finished()) =>
            {
                Some(daemon.inject(spec))
            }
            _ => None,
        };
        (sim.join(), late)
    });
    let id = match late {
        Some(r) => Some(r?),
        None => early,
    };
    result
        .map_err(|_| "the simulation panicked".to_string())?
        .map_err(|e| {
            format!(
                "the simulation on {} failed: {}",
                mnt.display(),
                crate::exit::error_text(&e)
            )
        })?;
    let fired = match (case.spec, id) {
        (None, _) => true,
        (Some(_), Some(id)) => daemon.fired(id) > 0,
        (Some(_), None) => false,
    };
    drop(daemon);
    let row = Row::judge(
        "faultfs",
        case.name,
        case.page,
        case.expect,
        &sink.findings(),
        fired,
    );
    Ok((row, fired))
}

/// Waits until the last data page holds something in the backing file (the initial update
/// has written every page once); false when the simulation ended first or it takes too long.
fn wait_initial_update(path: &Path, finished: impl Fn() -> bool) -> bool {
    use std::os::unix::fs::FileExt;
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut buf = vec![0u8; crate::page::PAGE_SIZE];
    let at = (DATA_PAGES - 1) * buf.len() as u64;
    while !finished() && Instant::now() < deadline {
        let written = std::fs::File::open(path)
            .and_then(|f| f.read_at(&mut buf, at))
            .is_ok_and(|n| n == buf.len() && buf.iter().any(|&b| b != 0));
        if written {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::faulty::classes::CLASSES;

    /// Each faultfs case injects a kind of the table of fault classes and expects what the
    /// table says catches it; every faultfs kind of a class with a finding has a case.
    #[test]
    fn the_cases_are_the_tables_classes() {
        let mut covered = Vec::new();
        for case in CASES {
            let Some(spec) = case.spec else { continue };
            let kind = spec.split_whitespace().next().unwrap_or_default();
            let mut want: Vec<C> = case.expect.iter().map(|e| e.0).collect();
            want.sort_by_key(|c| c.as_str());
            let class = CLASSES.iter().find(|c| {
                let mut got = c.caught_as.to_vec();
                got.sort_by_key(|c| c.as_str());
                c.faultfs.contains(&kind) && got == want
            });
            assert!(
                class.is_some(),
                "{}: {spec} is no class of the table",
                case.name
            );
            covered.push(kind);
        }
        for c in CLASSES.iter().filter(|c| !c.caught_as.is_empty()) {
            for k in c.faultfs {
                assert!(covered.contains(k), "no faultfs case for {} ({k})", c.name);
            }
        }
    }
}
