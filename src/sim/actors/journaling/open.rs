//! The journal at setup: what a resumed run's old journal held ([`prior`]), and the new
//! journal created through the backend (so the faulty one reaches it too), its thread started
//! and the logs' flushes hooked to it ([`open`]).

use std::path::Path;
use std::sync::Arc;

use super::{journal_path, Journal, JournalSlot};
use crate::events::Event;
use crate::findings::{Message, Severity};
use crate::io::Backend;
use crate::page::PAGE_SIZE;
use crate::sim::actors::context::Run;
use crate::sim::engine::files::SimFile;
use crate::sim::engine::journal::{
    Ack, JournalFile, JournalOptions, JournalService, JournalState, JournalWriter, LoadError,
};
use crate::sim::engine::setup::SetupError;
use crate::sim::engine::wal::FlushHook;
use crate::sim::plan::SimPlan;

/// The journal of this file set left by the run being resumed, if any, read through the
/// run's backend. A damaged one is used up to its damage, and said so. One that cannot be
/// read, or whose Start record is lost or torn, refuses the resume: the resume would replace
/// it (and its evidence) and then hold the files to nothing (it used to go on silently).
pub fn prior(run: &Run<'_>) -> Result<Option<JournalState>, SetupError> {
    let Some(st) = resumable(&run.plan, run.backend)? else {
        return Ok(None);
    };
    let path = journal_path(&run.plan).unwrap_or_default();
    if st.run_id != run.files.run_id {
        return Ok(None);
    }
    if let Some(d) = &st.damage {
        run.message(
            Severity::Warning,
            "System",
            "Resume",
            format!(
                "the journal {} is damaged ({d}): its device lost or tore a write it had acknowledged; the existing files are held only to what it recorded before offset {}",
                path.display(),
                d.offset
            ),
        );
    }
    Ok(Some(st))
}

/// The journal a resume of `plan` would carry on, read (`None`: there is none), or the
/// resume's refusal: one that cannot be read or whose Start record is lost. Asked by the app
/// before the resume touches anything, and again by the resume itself.
pub fn resumable(
    plan: &SimPlan,
    backend: &dyn Backend,
) -> Result<Option<JournalState>, SetupError> {
    let Some(path) = journal_path(plan) else {
        return Ok(None);
    };
    if !backend.exists(&path) {
        return Ok(None);
    }
    let st = JournalState::load_own(backend, &path).map_err(|e| match e {
        LoadError::Foreign(f) => SetupError::Foreign(f),
        LoadError::Io(e) => SetupError::JournalUnreadable {
            path: path.clone(),
            detail: e.to_string(),
        },
    })?;
    if st.start_lost() {
        return Err(SetupError::JournalStartLost {
            path,
            damage: st.damage.as_ref().map(ToString::to_string),
        });
    }
    Ok(Some(st))
}

/// The most pages `f` can have during the run, which the journal records so that a page
/// beyond it is known as damage: its MaxSize, or its size now when larger (a resumed file or a
/// block device).
fn largest_size(run: &Run<'_>, f: &SimFile) -> u64 {
    let plan = &run.plan.files[f.index];
    let now = f.storage.len().unwrap_or(0).div_ceil(PAGE_SIZE as u64);
    plan.max_pages.max(plan.initial_pages).max(now).max(1)
}

/// Creates the journal through the backend and starts its thread. A resumed run's journal
/// begins with what `prior`, the old journal, held (see [`JournalState::carried_over`]).
/// A journal that cannot be created (`ulimit -n`, a full or read-only directory) stops the
/// run before it starts, exit 2: a run without one cannot find lost writes, which the user
/// chooses with `--no-journal` (it used to go on with a warning and exit 0).
pub fn open(run: &Run<'_>, prior: Option<&JournalState>) -> Result<JournalSlot, SetupError> {
    if !run.plan.journal {
        return Ok(None);
    }
    let Some(path) = journal_path(&run.plan) else {
        return Ok(None);
    };
    let files: Vec<JournalFile> = run
        .files
        .iter()
        .map(|f| JournalFile {
            file_id: f.index as u32,
            role: f.role,
            path: f.path.clone(),
            max_pages: Some(largest_size(run, f)),
        })
        .collect();
    let state = match prior {
        Some(p) => JournalState::carried_over(p, run.files.run_id, files),
        None => JournalState::started(run.files.run_id, files),
    };
    match start(run, &path, state) {
        Ok(service) => {
            hook_logs(run, &service);
            say_where_the_journal_is(run, &path);
            Ok(Some(Journal::new(service)))
        }
        Err(detail) => Err(SetupError::JournalCreate { path, detail }),
    }
}

/// Writes the journal's first records at `path` and starts its thread, which warns through
/// the run's sink.
fn start(run: &Run<'_>, path: &Path, state: JournalState) -> Result<JournalService, String> {
    let sink = Arc::clone(&run.reporting.sink);
    let warn = Box::new(move |text: &str| {
        sink.emit(Event::Message(Message::new(
            Severity::Warning,
            "System",
            "Journal",
            text,
        )));
    });
    let witness = witness(run, state.run_id)?;
    JournalWriter::create(run.backend, path, &state.snapshot())
        .map_err(|e| e.to_string())
        .and_then(|w| {
            let oracles = run.files.iter().map(|f| Arc::clone(&f.oracle)).collect();
            JournalService::start(w, state, oracles, journal_options(), warn, witness)
                .map_err(|e| format!("{}: cannot start the journal thread: {e}", path.display()))
        })
}

/// The sender to `--witness`, started (it connects in the background).
fn witness(run: &Run<'_>, run_id: u64) -> Result<Option<crate::witness::Sender>, String> {
    let Some(t) = &run.plan.witness else {
        return Ok(None);
    };
    let key = match &t.token_file {
        Some(p) => crate::witness::Key::from_file(p).map_err(|e| e.to_string())?,
        None => crate::witness::Key::none(),
    };
    let opts = crate::witness::SenderOptions {
        addr: t.addr.clone(),
        key,
        host: crate::witness::client::host_name(),
        run_id,
        buffer_bytes: witness_buffer(),
        wait_at_end: t.wait,
    };
    run.message(
        Severity::Info,
        "System",
        "Journal",
        format!("Witness: {} (every journal batch also goes there)", t.addr),
    );
    crate::witness::Sender::start(opts)
        .map(Some)
        .map_err(|e| format!("cannot start the witness thread: {e}"))
}

/// Bytes of unacknowledged batches the sender holds: 64 MiB, or SQLIOSIM_WITNESS_BUFFER_BYTES
/// (a hidden knob for tests of the overflow).
fn witness_buffer() -> usize {
    std::env::var("SQLIOSIM_WITNESS_BUFFER_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64 << 20)
}

/// Every log flush is acknowledged to the journal as it completes, except in mode None, where
/// a completed log write is not durable (nothing syncs it before the next sync point, which
/// journals the log's position itself).
fn hook_logs(run: &Run<'_>, service: &JournalService) {
    if run.plan.write_through && !run.plan.acks_each_write() {
        return;
    }
    for log in &run.files.logs {
        let tx = service.sender();
        let file_id = log.file as u32;
        log.wal
            .on_flush(FlushHook(Box::new(move |last_block, durable_end| {
                let _ = tx.send(Ack::Log {
                    file_id,
                    last_block,
                    durable_end,
                });
            })));
    }
}

/// Batching and compaction, with two hidden knobs for tests: SQLIOSIM_JOURNAL_BATCH_MS and
/// SQLIOSIM_JOURNAL_COMPACT_BYTES (compaction threshold, to make compactions frequent).
fn journal_options() -> JournalOptions {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let mut o = JournalOptions::default();
    if let Some(ms) = env("SQLIOSIM_JOURNAL_BATCH_MS") {
        o.interval = std::time::Duration::from_millis(ms.max(1));
    }
    if let Some(b) = env("SQLIOSIM_JOURNAL_COMPACT_BYTES") {
        o.compact_min_bytes = b;
    }
    o
}

/// Names the journal in the run header, and warns when it shares a device with the data.
fn say_where_the_journal_is(run: &Run<'_>, path: &Path) {
    use std::os::unix::fs::MetadataExt;
    let dev = |p: &Path| std::fs::metadata(p).ok().map(|m| m.dev());
    let journal_dev = path.parent().and_then(dev);
    let shared = run
        .files
        .iter()
        .any(|f| journal_dev.is_some() && dev(&f.path) == journal_dev);
    run.message(
        Severity::Info,
        "System",
        "Journal",
        format!("Journal: {}", path.display()),
    );
    if shared && run.plan.witness.is_some() {
        run.message(
            Severity::Info,
            "System",
            "Journal",
            "journal on the device under test; the witness keeps its batches off the host too",
        );
    } else if shared && run.plan.journal_dir.is_some() {
        // A --journal-dir meant to be elsewhere that is not: the user's choice went wrong.
        run.message(
            Severity::Warning,
            "System",
            "Journal",
            "journal on the device under test (the --journal-dir is on the same device as a test file): a device that loses it weakens the check; choose a directory on another device",
        );
    } else if shared {
        // The default place, beside the first data file: said in the log, not warned about at
        // every run (a warning every run gives is one people learn to skip).
        run.message(
            Severity::Info,
            "System",
            "Journal",
            "journal on the device under test, beside the data (the default): a device that loses it weakens the check; --journal-dir on another device, or --witness, keeps it off the host",
        );
    }
}
