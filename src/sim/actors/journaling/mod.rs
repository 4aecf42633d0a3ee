//! The durability journal's whole lifecycle in a run, over the journal service of
//! [`crate::sim::engine::journal`]:
//!
//! - at setup, [`open`] reads what the journal of a resumed run held ([`prior`]), creates the
//!   new journal through the backend (carrying that over), starts its thread and hooks the
//!   logs' flushes to it;
//! - while the run works, synchronous `O_DSYNC` writes are acknowledged by their writer
//!   ([`acknowledged`]), asynchronous ones as they complete (`acks`), resizes are journaled
//!   in order ([`resize`]), and checkpoints are sync points ([`sync_point`]);
//! - at the end, [`shutdown`] marks a clean end and stops the thread, [`summary`] says what it
//!   wrote, and [`remove`] deletes the journal before the files when DeleteAtShutdown asks.

pub(super) mod acks;
mod open;
mod sync;

use std::path::PathBuf;

use crate::sync::Mutex;

use super::context::Run;
use crate::sim::engine::journal::{JournalService, JournalSummary};
use crate::sim::plan::SimPlan;

pub use open::{open, prior, resumable};
pub use sync::{acknowledged, backup_finished, resize, sync_point};

/// The journal of a run.
#[derive(Debug)]
pub struct Journal {
    /// The journal thread.
    pub service: JournalService,
    /// Held by sync points and resizes, so that no sync point journals pages of the old size
    /// after a new size is recorded.
    order: Mutex<()>,
}

impl Journal {
    /// Wraps a running journal.
    pub fn new(service: JournalService) -> Journal {
        Journal {
            service,
            order: Mutex::new(()),
        }
    }
}

/// The journal, if the run keeps one.
pub type JournalSlot = Option<Journal>;

/// Where the journal of a plan's file set is: in `--journal-dir`, else beside the first data
/// file.
pub fn journal_path(plan: &SimPlan) -> Option<PathBuf> {
    crate::sim::engine::manifest::journal_path(plan)
}

/// Ends the journal of a run: a clean run (`clean`: it was not stopped, or only by a signal)
/// gets a last sync point and its End record; then the thread writes what it holds and stops.
pub fn shutdown(run: &Run<'_>, clean: bool) {
    if clean {
        sync::end(run);
    }
    sync::finish(run);
}

/// What the journal thread wrote, if the run kept a journal.
pub fn summary(run: &Run<'_>) -> Option<JournalSummary> {
    run.journal.as_ref().map(|j| j.service.summary())
}

/// Deletes the run's journal (DeleteAtShutdown). It goes before the files: a crash in between
/// leaves files without a journal, never a journal naming files that are gone (which verify
/// reports as lost files).
pub fn remove(run: &Run<'_>) {
    if run.journal.is_some() {
        if let Some(path) = journal_path(&run.plan) {
            let _ = run.backend.remove(&path);
        }
    }
}
