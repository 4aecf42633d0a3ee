//! In-process power cuts during journal compactions (issue #21 §7): compactions made
//! frequent (the hidden knob SQLIOSIM_JOURNAL_COMPACT_BYTES=0, set before anything runs;
//! this file holds one test so that no other test of the binary reads the environment
//! meanwhile), a cut at every journal sync and replacement and at seeded points of every
//! phase, each judged as `sqliosim verify` would: an honest device is never a finding.
//!
//! A binary of its own, outside tests/model/: the environment it sets is the whole
//! process's, and a compaction knob seen by the other in-process tests changed their journals.

mod model_cut_support;
mod sim_support;

use std::sync::Arc;
use std::time::Duration;

use crate::model_cut_support::{judge, plan, run_and_judge, Cutter};
use sqliosim::io::faulty::Keep;
use sqliosim::io::FaultyBackend;

#[test]
fn honest_cuts_around_journal_compactions_are_never_a_finding() {
    // SAFETY (of the test): the only test of this binary, before any thread reads it.
    std::env::set_var("SQLIOSIM_JOURNAL_COMPACT_BYTES", "0");
    // How many compactions a main phase holds depends on the machine's speed (one on a
    // loaded machine in 900 ms): a longer phase is tried until two are cut around.
    for main_ms in [900, 2500, 6000] {
        let (compactions, at_compaction) = cut_around_compactions(main_ms);
        if compactions >= 2 && at_compaction >= 2 {
            return;
        }
        eprintln!("{main_ms} ms: {compactions} compaction(s), {at_compaction} cut(s) right after one: longer");
    }
    panic!("compactions were not frequent even in a 6 s main phase");
}

/// One cut run with a main phase of `main_ms`; asserts that no cut is a finding, returns the
/// compactions and the cuts right after one.
fn cut_around_compactions(main_ms: u64) -> (u64, usize) {
    // O_DSYNC data writes: every one journaled, so the journal grows and compacts fast.
    let mut plan = plan(0xC7, Duration::from_millis(main_ms));
    plan.write_through = true;
    let backend = FaultyBackend::new(plan.seed);
    backend.enable_volatile_cache();
    backend.cut_at_syncs(crate::model_cut_support::journal(), 8, Keep::Units(512));
    let sink = Arc::new(Cutter::new(&backend, plan.seed, Keep::Units(512), 8, 300));
    let (mut cuts, mut at_compaction, mut failures) = (0, 0, Vec::new());
    let out = run_and_judge(plan.clone(), &backend, sink, |cut| {
        cuts += 1;
        at_compaction += usize::from(cut.label.starts_with("at a replacement"));
        let j = judge(&cut.backend, &plan);
        if !j.found.is_empty() || j.journal_damage.is_some() {
            failures.push(format!(
                "cut {} (after {} writes): {:?} {:?}",
                cut.label,
                cut.writes,
                j.found.iter().take(2).collect::<Vec<_>>(),
                j.journal_damage
            ));
        }
    });
    let compactions = out.summary.journal.as_ref().map_or(0, |j| j.compactions);
    assert!(
        failures.is_empty(),
        "{} of {cuts} cuts:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{cuts} cuts, {at_compaction} right after one of {compactions} compactions");
    (compactions, at_compaction)
}
