//! Property: random sequences of page writes and reads on the faulty backend, through the
//! oracle and retry/triage, with faults injected at random steps. Every fault that fired is
//! reported with the verdict of its class and the right triage, and nothing else is reported.
//!
//! Expected verdict per fault class (the page is clean before each fault: damage is repaired
//! by two clean writes right after it is seen):
//!
//! | Fault | Verdict of the read that meets it | Triage |
//! |---|---|---|
//! | lost write | Stale (NeverWritten if it was the first write) | persistent |
//! | torn write 512 / 4096 | TornWrite | persistent |
//! | misdirected (page, file) | home: Stale/NeverWritten; where it landed: Misdirected | persistent |
//! | bit flip at rest | ChecksumMismatch, single bit | persistent |
//! | zeroed sector | ZeroedSectors (TornWrite when it is the last sector of a generation-1 page: a torn first write looks the same) | persistent |
//! | stale read | Stale (NeverWritten when the previous version is blank) | transient |
//! | EIO on read | IoError | transient |
//! | EIO on write | the write fails with EIO; the page then reads Ok (unknown, not corrupt) | — |
//! | short read (honest or silent) | ShortRead | transient |
//! | latency spike | Ok | — |

use std::path::PathBuf;
use std::time::Duration;

use crate::page_support::{read_page, write_ok, write_page, PS};
use proptest::prelude::*;
use sqliosim::io::faulty::{Access, Detail, Fault, FiredFault, Misdirect, Tear, Trigger};
use sqliosim::io::{FaultyBackend, FaultyStorage, Storage};
use sqliosim::page::{Verdict, VerdictKind};
use sqliosim::sim::engine::oracle::Oracle;
use sqliosim::sim::engine::retry::ReadOutcome;

const PAGES: u64 = 8;
const NAMES: [&str; 2] = ["f0.mdx", "f1.mdx"];

fn fault_strategy() -> impl Strategy<Value = Fault> {
    prop_oneof![
        Just(Fault::LostWrite),
        Just(Fault::TornWrite(Tear::Sectors512)),
        Just(Fault::TornWrite(Tear::At4096)),
        Just(Fault::MisdirectedWrite(Misdirect::OtherPage)),
        Just(Fault::MisdirectedWrite(Misdirect::OtherFile)),
        Just(Fault::BitFlip(None)),
        Just(Fault::StaleRead),
        Just(Fault::ZeroedSector(None)),
        Just(Fault::ReadEio),
        Just(Fault::WriteEio),
        Just(Fault::ShortRead { silent: false }),
        Just(Fault::ShortRead { silent: true }),
        Just(Fault::Latency(Duration::from_micros(50))),
    ]
}

#[derive(Debug, Clone)]
struct Step {
    file: usize,
    page: u64,
    write: bool,
    fault: Option<Fault>,
}

fn step_strategy() -> impl Strategy<Value = Step> {
    (
        0..2usize,
        0..PAGES,
        any::<bool>(),
        prop::option::weighted(0.3, fault_strategy()),
    )
        .prop_map(|(file, page, write, fault)| Step {
            file,
            page,
            write,
            fault,
        })
}

struct World {
    b: FaultyBackend,
    st: Vec<std::sync::Arc<FaultyStorage>>,
    o: Vec<Oracle>,
}

impl World {
    fn new(seed: u64) -> World {
        let b = FaultyBackend::new(seed);
        let st: Vec<_> = NAMES.iter().map(|n| b.open_faulty(n.as_ref())).collect();
        for s in &st {
            s.set_len(PAGES * PS).expect("set_len");
        }
        let o = (0..2)
            .map(|f| Oracle::new(0x7E57, f as u32, PAGES))
            .collect();
        World { b, st, o }
    }

    fn file_of(&self, path: &std::path::Path) -> usize {
        NAMES
            .iter()
            .position(|n| path == std::path::Path::new(n))
            .expect("known file")
    }

    fn read(&self, file: usize, page: u64) -> ReadOutcome {
        read_page(&*self.st[file], &self.o[file], page)
    }

    fn repair(&self, file: usize, page: u64) {
        write_ok(&*self.st[file], &self.o[file], page);
        write_ok(&*self.st[file], &self.o[file], page);
    }

    fn generation(&self, file: usize, page: u64) -> u64 {
        self.o[file].expected_state(page).max_issued()
    }
}

fn expect(r: &ReadOutcome, kinds: &[VerdictKind], persistent: bool, what: &FiredFault) {
    assert!(
        kinds.contains(&r.first.kind()),
        "{what:?}: got {:?}",
        r.first
    );
    assert_eq!(
        r.persistent, persistent,
        "{what:?}: triage of {:?}, retries {:?}",
        r.first, r.retries
    );
}

const LOST: [VerdictKind; 2] = [VerdictKind::Stale, VerdictKind::NeverWritten];

/// Checks what a write that met fault `f` left behind, then repairs it.
fn check_write_fault(w: &World, f: &FiredFault, result: &std::io::Result<()>) {
    let home = (w.file_of(&f.path), f.page);
    match &f.fault {
        Fault::WriteEio => {
            assert_eq!(
                result.as_ref().err().and_then(|e| e.raw_os_error()),
                Some(libc::EIO)
            );
            assert!(
                w.read(home.0, home.1).is_ok(),
                "a failed write makes the page unknown, not corrupt"
            );
        }
        Fault::LostWrite => expect(&w.read(home.0, home.1), &LOST, true, f),
        Fault::TornWrite(_) => expect(&w.read(home.0, home.1), &[VerdictKind::TornWrite], true, f),
        Fault::MisdirectedWrite(_) => {
            let Detail::Landed { path, page } = &f.detail else {
                panic!("{f:?}")
            };
            let victim = (w.file_of(path), *page);
            expect(&w.read(home.0, home.1), &LOST, true, f);
            let r = w.read(victim.0, victim.1);
            expect(&r, &[VerdictKind::Misdirected], true, f);
            w.repair(victim.0, victim.1);
        }
        Fault::Latency(_) => return assert!(result.is_ok(), "{f:?}: {result:?}"),
        other => panic!("read fault fired on a write: {other:?}"),
    }
    w.repair(home.0, home.1);
}

/// Checks the outcome of a read that met fault `f`, then repairs damage at rest.
fn check_read_fault(w: &World, f: &FiredFault, r: &ReadOutcome, generation: u64) {
    match &f.fault {
        Fault::BitFlip(_) => {
            expect(r, &[VerdictKind::ChecksumMismatch], true, f);
            let Verdict::ChecksumMismatch { diff, .. } = &r.first else {
                unreachable!()
            };
            let Detail::Bit { byte, .. } = f.detail else {
                panic!("{f:?}")
            };
            assert!(
                diff.single_bit() && diff.first_bad_byte == Some(byte as u32),
                "{f:?}: {diff:?}"
            );
        }
        // The last sector of a page written once, zeroed, is a torn first write to the eye.
        Fault::ZeroedSector(_) if generation == 1 && f.detail == Detail::Sector(15) => {
            expect(r, &[VerdictKind::TornWrite], true, f)
        }
        Fault::ZeroedSector(_) => expect(r, &[VerdictKind::ZeroedSectors], true, f),
        Fault::StaleRead => expect(r, &LOST, false, f),
        Fault::ReadEio => expect(r, &[VerdictKind::IoError], false, f),
        Fault::ShortRead { .. } => expect(r, &[VerdictKind::ShortRead], false, f),
        Fault::Latency(_) => assert!(r.is_ok(), "{f:?}: {:?}", r.first),
        other => panic!("write fault fired on a read: {other:?}"),
    }
    if r.persistent {
        w.repair(w.file_of(&f.path), f.page);
    }
}

fn run_step(w: &World, s: &Step) {
    // A fault decides the kind of request it needs; a latency spike fits either.
    let write = match &s.fault {
        Some(f) if f.applies_to(Access::Write) && f.applies_to(Access::Read) => s.write,
        Some(f) => f.applies_to(Access::Write),
        None => s.write,
    };
    if let Some(f) = &s.fault {
        let path = PathBuf::from(NAMES[s.file]);
        w.b.inject(f.clone(), Trigger::Page { path, page: s.page });
    }
    let generation = w.generation(s.file, s.page);
    if write {
        let (_, result) = write_page(&*w.st[s.file], &w.o[s.file], s.page);
        match w.b.take_fired().as_slice() {
            [] => assert!(result.is_ok(), "write failed without a fault: {result:?}"),
            [f] => check_write_fault(w, f, &result),
            many => panic!("several faults on one write: {many:?}"),
        }
    } else {
        let r = w.read(s.file, s.page);
        match w.b.take_fired().as_slice() {
            [] => assert!(
                r.is_ok(),
                "false alarm on file {} page {}: {:?}",
                s.file,
                s.page,
                r.first
            ),
            [f] => check_read_fault(w, f, &r, generation),
            many => panic!("several faults on one read: {many:?}"),
        }
    }
    // A fault that found nothing to act on (stale read of a page with no older version,
    // zeroed sector of a blank page) must not leave an alarm either.
    w.b.clear_faults();
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_fired_fault_is_reported_and_nothing_else(
        seed in any::<u64>(),
        steps in prop::collection::vec(step_strategy(), 1..80),
    ) {
        let w = World::new(seed);
        for s in &steps {
            run_step(&w, s);
        }
        for file in 0..2 {
            for page in 0..PAGES {
                let r = w.read(file, page);
                prop_assert!(r.is_ok(), "final scan: file {} page {}: {:?}", file, page, r.first);
            }
        }
        prop_assert!(w.b.take_fired().is_empty());
    }
}
