//! The thread that runs completion hooks ([`crate::io::OnComplete`]) off the thread that
//! carries I/O, one batch after another, in the order they were handed over.
//!
//! A hook may block: in forced flush it waits for an `fdatasync` that started after the
//! completions it was handed ([`crate::io::FlushGate`]). Run on the I/O service's thread, that
//! wait held every other completion and every new submission for the length of the flush, so
//! the next reap pass found only what completed meanwhile, and one flush covered about 1.3
//! writes. Handed to this thread instead, the I/O goes on while a flush runs, and the batches
//! that arrive meanwhile are all covered by the next flush, whose mark is above every ticket
//! they carry: group commit, without the hook doing anything but asking its file's gate.
//!
//! One thread for the process, started on first use, so that the hooks of every poster (a
//! checkpoint's, a lazy writer's, a bulk updater's) share it and the flushes they ask for.
//! A batch's completions are queued to its poster only after its hook returned, so the poster
//! still sees a write done only once it was flushed. When the thread cannot be started the
//! batch is run where it was handed over, as before. The queue of batches is bounded by the
//! requests in flight: each batch holds completions of requests posted and not yet taken,
//! which the posters' depths bound.

use std::sync::OnceLock;

use crossbeam::channel::{unbounded, Sender};

/// One batch: its hook, then the queueing of its completions.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

static THREAD: OnceLock<Option<Sender<Job>>> = OnceLock::new();

/// Runs `job` on the hook thread, after the jobs handed over before it (here when the thread
/// could not be started).
pub(crate) fn run(job: Job) {
    // A stepped run keeps every thread of its own (`crate::clock`): the shared thread would run
    // beside it, unstepped.
    if crate::clock::is_stepped() {
        return hand(None, job);
    }
    hand(THREAD.get_or_init(start).as_ref(), job);
}

/// Sends `job` to the thread behind `tx`, or runs it here when there is none (it could not be
/// started: `ulimit -u`) or it is gone.
fn hand(tx: Option<&Sender<Job>>, job: Job) {
    let job = match tx {
        Some(tx) => match tx.send(job) {
            Ok(()) => return,
            Err(e) => e.into_inner(),
        },
        None => job,
    };
    job();
}

fn start() -> Option<Sender<Job>> {
    let (tx, rx) = unbounded::<Job>();
    std::thread::Builder::new()
        .name("sqliosim-hooks".into())
        .spawn(move || {
            for job in rx {
                job();
            }
        })
        .ok()
        .map(|_| tx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    fn flag_job() -> (Arc<AtomicBool>, Job) {
        let ran = Arc::new(AtomicBool::new(false));
        let r = Arc::clone(&ran);
        (ran, Box::new(move || r.store(true, Ordering::SeqCst)))
    }

    /// Without a hook thread (it could not be started, or it is gone) a batch runs where it
    /// was handed over, before `hand` returns: its completions are still queued, after its
    /// hook.
    #[test]
    fn without_the_thread_a_batch_runs_where_it_was_handed_over() {
        let (ran, job) = flag_job();
        hand(None, job);
        assert!(
            ran.load(Ordering::SeqCst),
            "run inline when no thread started"
        );
        let (tx, rx) = unbounded::<Job>();
        drop(rx);
        let (ran, job) = flag_job();
        hand(Some(&tx), job);
        assert!(
            ran.load(Ordering::SeqCst),
            "run inline when the thread is gone"
        );
        let (tx, rx) = unbounded::<Job>();
        let (ran, job) = flag_job();
        hand(Some(&tx), job);
        assert!(!ran.load(Ordering::SeqCst), "handed over, not run here");
        (rx.recv().expect("the job"))();
        assert!(ran.load(Ordering::SeqCst));
    }
}
