//! The sweeps of every cycle, one thread per data file: the initial update writes every page
//! once, the audit pass reads every page back; and the final log check, which flushes every
//! log and walks its chain.

use super::cursor::whole_file;
use super::log_writer;
use super::outstanding::{After, Outstanding};
use super::worker::Worker;
use crate::findings::Severity;

/// Writes every page of the `i`-th data file once (generation 1 of this cycle's pages),
/// posting the writes without waiting for each (with AllowIOBursts, as many as the depth
/// allows).
pub fn initial_update(w: &mut Worker<'_>, i: usize) {
    let run = w.run;
    let file = run.files.data[i];
    let pages = *run.files[file].pages.read();
    let t = crate::clock::now();
    let mut flight = Outstanding::new(run);
    for (page, n) in whole_file(pages, w.max_pages() as u64) {
        if run.controls.stop.run_stopped() {
            break;
        }
        flight.write(w, file, page, n, 0, After::Nothing);
    }
    flight.drain(w);
    let name = run.files[file].path.display().to_string();
    let text = format!(
        "Initial update of {name} {}",
        flight.describe_writes(crate::clock::since(t))
    );
    run.message(Severity::Info, "InitialUpdate", "InitialUpdate", text);
}

/// Reads and verifies every page of the `i`-th data file (the audit phase).
pub fn audit(w: &mut Worker<'_>, i: usize) {
    let file = w.run.files.data[i];
    let n = audit_pass(w, file);
    w.run.message(
        Severity::Info,
        "Audit User",
        "AuditPass",
        format!(
            "Audit pass verified {n} pages of {}",
            w.run.files[file].path.display()
        ),
    );
}

/// Flushes every log and checks its whole chain (the audit phase).
pub fn log_chains(w: &mut Worker<'_>, _: usize) {
    for i in 0..w.run.files.logs.len() {
        let file = w.run.files.logs[i].file;
        w.flush_log_index(i);
        log_writer::check_log_chain(w, i, file, usize::MAX);
        log_writer::read_log_forward(w, i, file);
    }
}

/// The end-of-cycle audit: every page of every data file read and verified, and the whole
/// retained log chain checked.
pub fn audit_pass(w: &mut Worker<'_>, file: usize) -> u64 {
    let pages = *w.run.files[file].pages.read();
    let mut verified = 0;
    for (page, n) in whole_file(pages, w.max_pages() as u64) {
        if w.run.controls.stop.run_stopped() {
            break;
        }
        verified += w.read_run(file, page, n).pages;
    }
    verified
}
