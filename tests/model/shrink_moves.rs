//! A shrink is DBCC SHRINKFILE's: the pages of the part cut off are moved into the part kept
//! one page at a time, each read and checked at its old place and written at its new one, and
//! only then is the file truncated.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::sim_support::small_plan;
use sqliosim::events::MemorySink;
use sqliosim::io::FaultyBackend;
use sqliosim::sim::driver::simulate;

#[test]
fn a_shrink_moves_the_pages_it_cuts_off_one_page_at_a_time() {
    let mut plan = small_plan(&PathBuf::from("/virtual"), 2, Duration::from_millis(3000));
    plan.journal = false;
    plan.audit.users = 0;
    plan.read_ahead.users = 0;
    plan.bulk.users = 0;
    let sink = Arc::new(MemorySink::default());
    let out = simulate(plan, &FaultyBackend::stepped(11), sink.clone()).expect("simulate");
    assert!(!out.worker_panicked, "a worker thread panicked");
    assert_eq!(
        sink.findings(),
        vec![],
        "no corruption in a run without faults"
    );
    let shrinks: Vec<String> = sink
        .messages()
        .iter()
        .filter(|m| m.text.contains(" shrank from "))
        .map(|m| m.text.clone())
        .collect();
    assert!(
        !shrinks.is_empty(),
        "no shrink in 3 s: {:?}",
        sink.messages()
    );
    let moved: u64 = shrinks
        .iter()
        .filter_map(|t| {
            t.split("after moving ")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    assert!(moved > 0, "{shrinks:?}");
    let shrink = out
        .summary
        .actors
        .iter()
        .find(|a| a.name == "Shrink User")
        .expect("the Shrink User's I/O in the statistics");
    let (reads, writes) = (
        shrink.io.reads + shrink.io.scatter_reads,
        shrink.io.writes + shrink.io.gather_writes,
    );
    // One 8 KB request per page: a write per page moved, a read per page of the part cut
    // off (every one is read, even where the part kept has no room for it).
    assert_eq!(writes, moved, "{shrinks:?}");
    assert!(reads >= moved, "reads {reads}, moved {moved}: {shrinks:?}");
    assert_eq!(shrink.io.gather_writes + shrink.io.scatter_reads, 0);
}
