//! The journal through the faulty backend: a simulation on in-memory files whose journal
//! write is lost or torn by a fault armed at the journal itself. The journal read back through
//! the same backend is damaged before its end (whole records follow), which is told apart
//! from a torn tail; and the run reports nothing against the data files.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sqliosim::events::MemorySink;
use sqliosim::io::faulty::{Fault, Tear, Trigger};
use sqliosim::io::{Backend, FaultyBackend};
use sqliosim::sim::engine::journal::{Flaw, JournalState, JOURNAL_NAME};

/// Runs a short simulation with O_DSYNC data writes (a journal batch every few
/// milliseconds), `fault` armed on the journal append that reaches its second 8 KB.
fn run_with(fault: Fault) -> (FaultyBackend, PathBuf, u64) {
    let dir = Path::new("/mem");
    let mut plan = crate::sim_support::small_plan(dir, 1, Duration::from_millis(1500));
    plan.write_through = true;
    let journal = dir.join(JOURNAL_NAME);
    let backend = FaultyBackend::stepped(11);
    let target = Trigger::Page {
        path: journal.clone(),
        page: 1,
    };
    backend.inject(fault, target);
    let sink = Arc::new(MemorySink::default());
    let outcome = sqliosim::sim::driver::simulate(plan, &backend, sink.clone()).expect("run");
    let fired = backend.fired().iter().filter(|f| f.path == journal).count();
    assert_eq!(
        fired,
        1,
        "the journal fault did not fire: {:?}",
        backend.fired()
    );
    assert!(
        sink.findings().is_empty(),
        "a journal fault is not a finding against the data: {:?}",
        sink.findings()
    );
    (backend, journal, outcome.findings)
}

#[test]
fn a_lost_journal_append_leaves_zeros_with_whole_records_after_them() {
    let (backend, journal, findings) = run_with(Fault::LostWrite);
    assert_eq!(findings, 0);
    let st = JournalState::load(&backend, &journal).expect("journal");
    let len = backend
        .read_whole(&journal, sqliosim::io::safefile::Use::Input)
        .map(|b| b.len())
        .unwrap_or(0);
    let d = st.damage.unwrap_or_else(|| {
        panic!(
            "no damage: journal {len} bytes, torn tail {}, clean {}",
            st.torn_tail, st.clean
        )
    });
    assert_eq!(d.flaw, Flaw::Zeros, "{d}");
    assert!(d.offset < 2 * 8192 && d.records_after > 0, "{d}");
    assert!(d.end_after, "the run ended cleanly after the damage: {d}");
    assert!(
        !st.torn_tail && !st.clean,
        "only what precedes the damage is replayed"
    );
}

#[test]
fn a_torn_journal_append_is_a_checksum_mismatch_before_the_end() {
    let (backend, journal, _) = run_with(Fault::TornWrite(Tear::Bytes(24)));
    let st = JournalState::load(&backend, &journal).expect("journal");
    let d = st.damage.expect("damage found");
    assert!(
        matches!(d.flaw, Flaw::ChecksumMismatch { .. }),
        "24 bytes of a record kept: header whole, payload not: {d}"
    );
    assert!(d.records_after > 0, "{d}");
    let text = d.to_string();
    assert!(text.contains(&format!("at offset {}", d.offset)), "{text}");
}
