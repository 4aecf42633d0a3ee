//! Generations are never reused: a restart over existing files (`--resume`) issues every page
//! a generation above anything issued before, even writes the device lost, so an old copy of a
//! page put back by a device is reported as a lost write, never taken for the current page.
//! And a tear between a page's image from before a restart and one from after is still a torn
//! write, an old copy still stale, however far the generations jumped.

use std::path::Path;
use std::time::Duration;

use crate::crash_support::*;
use sqliosim::page::{layout::read_stamp, verify as verify_page, ExpectedState, Verdict};

/// Data pages that exist whatever the shrink user did (InitialSize 8 MB of the small config).
const PAGES: u64 = 1024;

/// Pages whose old copies are put back (fewer than the console's 50 printed findings).
const RESTORED: [u64; 12] = [1, 2, 3, 64, 100, 255, 256, 511, 512, 700, 900, 1023];

fn generation(page: &[u8]) -> u64 {
    read_stamp(page).map_or(0, |s| s.generation)
}

fn generations(data: &Path) -> Vec<u64> {
    (1..PAGES)
        .map(|p| generation(&read_page(data, p)))
        .collect()
}

fn resume(config: &Path, dir: &Path, seed: u64, secs: u32) -> std::process::Output {
    run_cmd(config, dir)
        .args(["--resume", "--cycles", "1", "--duration", &secs.to_string()])
        .args(["--seed", &seed.to_string()])
        .output()
        .expect("resume")
}

/// Every file of the set as it is now (data, log, journal), the header page excepted.
struct Snapshot(Vec<(std::path::PathBuf, Vec<u8>)>);

impl Snapshot {
    fn take(dir: &Path) -> Snapshot {
        let names = ["sqliosim.mdx", "sqliosim.ldx", "sqliosim.journal"];
        Snapshot(
            names
                .iter()
                .map(|n| (dir.join(n), std::fs::read(dir.join(n)).expect("read")))
                .collect(),
        )
    }

    /// Puts every file back as it was, but keeps the data file's current header page: what a
    /// crash leaves with a device that lost the writes issued since (never made durable) and
    /// kept the header, which is rewritten durably before any generation it does not cover.
    fn restore_keeping_header(&self) {
        for (path, bytes) in &self.0 {
            let mut bytes = bytes.clone();
            if path.extension().is_some_and(|e| e == "mdx") {
                bytes[..PAGE as usize].copy_from_slice(&read_page(path, 0));
            }
            std::fs::write(path, bytes).expect("restore");
        }
    }
}

#[test]
fn a_restart_never_reuses_a_generation_and_old_copies_are_lost_writes() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 0, 2, false);
    let data = dir.path().join("sqliosim.mdx");
    // A run killed mid-way, and the file set as it was then.
    let mut child = start_run(&config, dir.path(), 1);
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().expect("kill");
    child.wait().expect("wait");
    let crashed = Snapshot::take(dir.path());
    // A resumed run rewrites every page; keep its pages.
    assert_exit(&resume(&config, dir.path(), 2, 2), 0);
    let later: Vec<Vec<u8>> = (0..PAGES).map(|p| read_page(&data, p)).collect();
    let later_max = generations(&data).into_iter().max().unwrap_or(0);
    // The device loses every write of that resumed run but the header's; resume again.
    crashed.restore_keeping_header();
    assert_exit(&resume(&config, dir.path(), 3, 2), 0);
    let now = generations(&data);
    let (lowest, page) = now
        .iter()
        .enumerate()
        .map(|(i, g)| (*g, i + 1))
        .min()
        .expect("pages");
    assert!(
        lowest > later_max,
        "page {page} was issued generation {lowest}, not above the {later_max} issued before the device lost it"
    );
    // Old copies of rewritten pages put back: each is a lost write, and nothing else is wrong.
    for &p in &RESTORED {
        write_page(&data, p, &later[p as usize]);
    }
    let expected: Vec<(String, u64)> = RESTORED
        .iter()
        .map(|&p| ("lost_write".to_string(), p))
        .collect();
    let out = verify(dir.path());
    assert_exit(&out, 1);
    let mut got = findings(&out);
    got.sort_by_key(|f| f.1);
    assert_eq!(got, expected, "{}", String::from_utf8_lossy(&out.stderr));
    let out = resume(&config, dir.path(), 4, 1);
    assert_exit(&out, 1);
    let mut got = findings(&out);
    got.sort_by_key(|f| f.1);
    assert_eq!(got, expected, "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn every_cycle_and_every_resume_writes_above_the_last() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 2, 1, false);
    let data = dir.path().join("sqliosim.mdx");
    let out = run_cmd(&config, dir.path())
        .args(["--seed", "5"])
        .output()
        .expect("run");
    assert_exit(&out, 0);
    let first = generations(&data);
    assert!(
        first.iter().all(|&g| g >= 2),
        "two cycles: every page written by each initial update"
    );
    assert_exit(&resume(&config, dir.path(), 6, 1), 0);
    let second = generations(&data);
    let before = first.iter().max().copied().unwrap_or(0);
    assert!(
        second.iter().all(|&g| g > before),
        "after the resume every page is above {before}: {:?}",
        second.iter().min()
    );
}

/// A page at generation 3 before a restart and at a generation far above after it.
const OLD: u64 = 3;
const NEW: u64 = 3 + (1 << 24) + 7;

#[test]
fn a_tear_across_a_restart_is_a_torn_write() {
    let (old, new) = (
        crate::common::page(1, 7, OLD),
        crate::common::page(1, 7, NEW),
    );
    let torn = crate::common::tear(&new, &old, 5);
    let states = [
        ExpectedState::InFlight { old: OLD, new: NEW },
        ExpectedState::Written { generation: OLD },
        ExpectedState::Written { generation: NEW },
    ];
    for state in states {
        let v = verify_page(&torn, &crate::common::at(state));
        assert!(
            matches!(v, Verdict::TornWrite { .. }),
            "expected {state:?}: {v:?}"
        );
    }
    let v = verify_page(
        &torn,
        &sqliosim::page::Expect::offline(Some(crate::common::RUN), 1, 7),
    );
    assert!(matches!(v, Verdict::TornWrite { .. }), "offline: {v:?}");
}

#[test]
fn an_old_copy_from_before_a_restart_is_stale() {
    let old = crate::common::page(1, 7, OLD);
    assert_eq!(
        verify_page(&old, &crate::common::written(NEW)),
        Verdict::Stale {
            found: OLD,
            expected: NEW
        }
    );
}

mod restarts {
    //! Property: under random writes (completed, failed, lost), shrinks, growths and restarts
    //! (a new oracle over what the disk shows, with the header's ceiling read back), every
    //! generation issued to a page is above every one issued to it before.

    use std::collections::HashMap;
    use std::sync::Arc;

    use proptest::prelude::*;
    use sqliosim::io::{AlignedBuf, Backend, FaultyBackend, OpenOptions, Storage};
    use sqliosim::page::{ExpectedState, FileHeader, FileRole, PAGE_SIZE};
    use sqliosim::sim::engine::ceiling::Ceiling;
    use sqliosim::sim::engine::oracle::Oracle;

    #[derive(Debug, Clone)]
    enum Op {
        /// A write; `lands` false: the device loses it (the disk keeps the older page).
        Write {
            page: u64,
            ok: bool,
            lands: bool,
        },
        Resize {
            pages: u64,
        },
        Restart,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            8 => (1..12u64, prop::bool::weighted(0.9), prop::bool::weighted(0.7))
                .prop_map(|(page, ok, lands)| Op::Write { page, ok, lands }),
            1 => (2..12u64).prop_map(|pages| Op::Resize { pages }),
            1 => Just(Op::Restart),
        ]
    }

    fn file() -> Arc<dyn Storage> {
        let s = FaultyBackend::new(1)
            .open(std::path::Path::new("/mem/g.mdx"), OpenOptions::default())
            .expect("open");
        let h = FileHeader {
            run_id: 1,
            file_id: 0,
            page_size: PAGE_SIZE as u32,
            role: FileRole::Data,
            tool_version: String::new(),
            created_us: 0,
            sector_size: 512,
        };
        let mut buf = AlignedBuf::new(PAGE_SIZE).expect("buf");
        buf.copy_from_slice(&h.encode());
        s.write_at(&buf, 0).expect("header");
        s
    }

    /// A restart: a new oracle over what the disk shows, above the header's ceiling.
    fn restart(
        storage: &Arc<dyn Storage>,
        pages: u64,
        disk: &HashMap<u64, u64>,
    ) -> (Oracle, Ceiling) {
        let (c, on_disk) = Ceiling::open(Arc::clone(storage)).expect("reopen");
        let o = Oracle::new(1, 0, pages);
        let mut seen = 0;
        for (&p, &g) in disk.iter().filter(|(p, _)| **p < pages) {
            o.set(p, ExpectedState::Written { generation: g });
            seen = seen.max(g);
        }
        o.raise_floor(on_disk.max(seen));
        (o, c)
    }

    proptest! {
        #[test]
        fn no_generation_is_issued_twice(ops in prop::collection::vec(op(), 1..300)) {
            let storage = file();
            let mut pages = 12;
            let (mut o, mut c) = restart(&storage, pages, &HashMap::new());
            let mut issued: HashMap<u64, u64> = HashMap::new();
            let mut disk: HashMap<u64, u64> = HashMap::new();
            for op in ops {
                match op {
                    Op::Write { page, ok, lands } if page < pages => {
                        let g = o.begin_write(page);
                        c.reserve(g).expect("reserve");
                        let before = issued.get(&page).copied().unwrap_or(0);
                        prop_assert!(g > before, "page {}: {} issued again after {}", page, g, before);
                        issued.insert(page, g);
                        o.complete_write(page, g, ok);
                        if ok && lands {
                            disk.insert(page, g);
                        }
                    }
                    Op::Resize { pages: to } => {
                        o.resize(to);
                        disk.retain(|p, _| *p < to);
                        pages = to;
                    }
                    Op::Restart => (o, c) = restart(&storage, pages, &disk),
                    _ => {}
                }
            }
        }
    }
}
