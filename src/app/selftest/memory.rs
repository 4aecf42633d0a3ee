//! The self-test's in-memory half: one small simulation per fault class on the faulty
//! backend, each fault armed at one page of the data file.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::plan::{selftest_plan, DATA};
use super::Row;
use crate::events::MemorySink;
use crate::findings::FindingClass as C;
use crate::io::faulty::{Fault, Misdirect, Target, Tear};
use crate::io::FaultyBackend;

/// One fault class: what is armed where, and what must be reported.
struct Case {
    name: &'static str,
    fault: Option<Fault>,
    page: u64,
    expect: &'static [(C, u64)],
}

fn cases() -> Vec<Case> {
    let c = |name, fault, page, expect| Case {
        name,
        fault: Some(fault),
        page,
        expect,
    };
    vec![
        Case {
            name: "none (clean run)",
            fault: None,
            page: 0,
            expect: &[],
        },
        c("lost write", Fault::LostWrite, 10, &[(C::LostWrite, 10)]),
        c(
            "torn write (512 B sectors)",
            Fault::TornWrite(Tear::Sectors512),
            80,
            &[(C::TornWrite, 80)],
        ),
        c(
            "torn write (4 KB)",
            Fault::TornWrite(Tear::At4096),
            90,
            &[(C::TornWrite, 90)],
        ),
        // The stray page lands inside its own request: the faulty backend completes posted
        // requests out of order, so a page of another request in flight could be written
        // after the stray one and hide it (as on a real device), and the row would not be
        // reproducible.
        c(
            "misdirected write (to page 140)",
            Fault::MisdirectedWrite(Misdirect::Page(140)),
            150,
            &[(C::MisdirectedWrite, 140), (C::LostWrite, 150)],
        ),
        c(
            "bit flip at rest",
            Fault::BitFlip(None),
            220,
            &[(C::BitRot, 220)],
        ),
        c(
            "zeroed sector",
            Fault::ZeroedSector(None),
            290,
            &[(C::ZeroedSectors, 290)],
        ),
        c("stale read", Fault::StaleRead, 600, &[(C::StaleRead, 600)]),
        c("EIO on read", Fault::ReadEio, 360, &[(C::ReadError, 360)]),
        c(
            "EIO on write",
            Fault::WriteEio,
            430,
            &[(C::WriteError, 430)],
        ),
        c(
            "short read (claims full length)",
            Fault::ShortRead { silent: true },
            500,
            &[(C::ShortRead, 500)],
        ),
    ]
}

/// Runs every case; one row each.
pub fn run(seed: u64) -> anyhow::Result<Vec<Row>> {
    cases().into_iter().map(|c| run_case(&c, seed)).collect()
}

fn run_case(case: &Case, seed: u64) -> anyhow::Result<Row> {
    let dir = Path::new("/selftest");
    let plan = selftest_plan(dir, seed, Duration::from_millis(300), true);
    let backend = FaultyBackend::new(seed);
    if let Some(f) = &case.fault {
        let target = Target::Page {
            path: dir.join(DATA),
            page: case.page,
        };
        backend.inject(f.clone(), target);
    }
    let sink = Arc::new(MemorySink::default());
    crate::sched::simulate(plan, &backend, sink.clone())?;
    let fired = case.fault.is_none() || !backend.fired().is_empty();
    let expect: Vec<(C, u64)> = case.expect.to_vec();
    Ok(Row::judge(
        "memory",
        case.name,
        case.page,
        &expect,
        &sink.findings(),
        fired,
    ))
}
