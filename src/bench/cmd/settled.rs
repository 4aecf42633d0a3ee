//! The engine a sweep's runs share: the first run at each kind of queue (one request per
//! thread, or more; `probe::Queue`) settles it, with why, for every later run of that kind, so
//! a sweep probes at most twice and a queue-depth-1 row's psync never carries a deep row.

use crate::bench::job::Job;
use crate::io::aio::probe::Queue;
use crate::io::aio::RingKind;

/// The engine (and why) each kind of queue settled on in its first run, for a sweep's later
/// runs of that kind (`probe::Queue`: one request per thread, or more).
#[derive(Default)]
pub(super) struct Settled {
    one: Option<(RingKind, Option<String>)>,
    deep: Option<(RingKind, Option<String>)>,
}

impl Settled {
    fn slot(&mut self, depth: u32) -> &mut Option<(RingKind, Option<String>)> {
        match Queue::of(depth) {
            Queue::One => &mut self.one,
            Queue::Deep => &mut self.deep,
        }
    }

    /// Gives `job` the engine its kind of queue settled on, if any.
    pub(super) fn apply(&mut self, job: &mut Job) {
        if let Some((kind, why)) = self.slot(job.depth) {
            (job.ring_kind, job.engine_why) = (*kind, why.clone());
        }
    }

    /// Keeps the engine a run settled, unless its kind of queue has one already.
    pub(super) fn keep(&mut self, ran: &Job) {
        self.slot(ran.depth)
            .get_or_insert_with(|| (ran.ring_kind, ran.engine_why.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn job(depth: u32) -> Job {
        Job {
            depth,
            ..Job::with_defaults(PathBuf::from("/x"), 8 << 20)
        }
    }

    #[test]
    fn a_queue_depth_1_engine_carries_only_queue_depth_1_runs() {
        let mut s = Settled::default();
        let mut qd1 = job(1);
        (qd1.ring_kind, qd1.engine_why) = (RingKind::Psync, Some("cheaper".into()));
        s.keep(&qd1);
        // A deep run is not settled by it: it probes for itself.
        let mut deep = job(32);
        s.apply(&mut deep);
        assert_eq!(
            (deep.ring_kind, deep.engine_why.as_deref()),
            (RingKind::Uring, None)
        );
        // Once a deep run settled, deep runs take it and queue-depth-1 runs keep theirs.
        deep.engine_why = Some("default".into());
        s.keep(&deep);
        let (mut later_deep, mut later_qd1) = (job(8), job(1));
        s.apply(&mut later_deep);
        s.apply(&mut later_qd1);
        assert_eq!(
            (later_deep.ring_kind, later_deep.engine_why.as_deref()),
            (RingKind::Uring, Some("default"))
        );
        assert_eq!(
            (later_qd1.ring_kind, later_qd1.engine_why.as_deref()),
            (RingKind::Psync, Some("cheaper"))
        );
        // The first run of a kind settles it; a later one does not overwrite it.
        let mut other = job(1);
        other.engine_why = Some("other".into());
        s.keep(&other);
        let mut again = job(1);
        s.apply(&mut again);
        assert_eq!(again.engine_why.as_deref(), Some("cheaper"));
    }
}
