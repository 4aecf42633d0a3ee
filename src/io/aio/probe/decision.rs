//! The engine the probe's medians point to, and what a run makes of it (pure, no I/O): the
//! rule is per queue, because a ring pays for itself only where requests overlap.
//!
//! At queue depth 1 (each thread waits for its one request, as `bench --outstanding 1`) a
//! ring has nothing to gain, and psync there is a plain pread on the worker's own thread (no
//! helper, no hand-off, fio's default engine): io_uring is kept only where it reads measurably
//! faster. On zram here io_uring took 3–9 µs a read against 1–1.4 µs through pread, which a
//! rule made for deep queues (3 times slower and 20 µs longer) let through. A deep queue keeps
//! io_uring unless it adds latency grossly, as before: there its ring carries the overlap
//! that psync's helper threads buy with a thread per request.

use std::time::Duration;

use super::{ProbeError, Qd1Medians};
use crate::io::aio::RingKind;

/// Deep queues: io_uring is passed over when its median is more than this many times psync's...
pub const SLOWER_FACTOR: u32 = 3;
/// ...and more than this much longer.
pub const SLOWER_BY: Duration = Duration::from_micros(20);
/// Queue depth 1: io_uring is kept only when its median is more than this many percent below
/// psync's. The probe's medians of 200 reads on the virtio disk here swing by 5–10 % from one
/// run to the next; within that, the engine with nothing in between (psync) is taken.
pub const QD1_FASTER_PCT: u32 = 10;

/// How many requests each thread of a run keeps in flight, as far as the engine choice cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queue {
    /// One: the thread waits for each request (`bench --outstanding 1`).
    One,
    /// More than one (a bench thread's deeper queue, the simulation's posted requests).
    Deep,
}

impl Queue {
    /// The queue of a thread that keeps `per_thread` requests in flight.
    pub fn of(per_thread: u32) -> Queue {
        if per_thread <= 1 {
            Queue::One
        } else {
            Queue::Deep
        }
    }
}

/// The engine the medians point to for `queue`: at depth 1 psync unless io_uring's median is
/// more than [`QD1_FASTER_PCT`] % below psync's; deeper, psync only when io_uring's median is
/// more than [`SLOWER_FACTOR`] times psync's and more than [`SLOWER_BY`] longer.
pub fn pick(m: &Qd1Medians, queue: Queue) -> RingKind {
    let psync_wins = match queue {
        Queue::One => m.uring * 100 >= m.psync * (100 - QD1_FASTER_PCT),
        Queue::Deep => m.uring > m.psync * SLOWER_FACTOR && m.uring > m.psync + SLOWER_BY,
    };
    if psync_wins {
        RingKind::Psync
    } else {
        RingKind::Uring
    }
}

/// The engine a run uses and why: what [`decide`] makes of a probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineDecision {
    /// The engine that carries the I/O.
    pub kind: RingKind,
    /// `default`, `named` (by `--engine`), `measured` (the probe found io_uring adding
    /// latency to a deep queue and chose psync) or `cheaper` (psync chosen at queue depth 1,
    /// io_uring not measurably faster).
    pub chosen: &'static str,
    /// What the probe measured, or why it measured nothing; `None` without a probe.
    pub probe: Option<String>,
    /// A faster engine than the one named, when the probe found one.
    pub recommended: Option<RingKind>,
}

/// The engine for a run that asked for `asked` (named by `--engine` when `named`), keeping
/// `queue` requests in flight per thread, given the probe's outcome (`None`: no probe was
/// made). Only an io_uring left to the default gives way to psync; a named one is kept and
/// psync recommended.
pub fn decide(
    asked: RingKind,
    named: bool,
    queue: Queue,
    probe: Option<Result<Qd1Medians, ProbeError>>,
) -> EngineDecision {
    let mut d = EngineDecision {
        kind: asked,
        chosen: if named { "named" } else { "default" },
        probe: None,
        recommended: None,
    };
    let m = match probe {
        None => return d,
        Some(Err(e)) => {
            d.probe = Some(format!("the engine probe measured nothing: {e}"));
            return d;
        }
        Some(Ok(m)) => m,
    };
    d.probe = Some(m.describe());
    let better = pick(&m, queue);
    if asked == RingKind::Uring && better != asked {
        if named {
            d.recommended = Some(better);
        } else {
            d.kind = better;
            d.chosen = match queue {
                Queue::One => "cheaper",
                Queue::Deep => "measured",
            };
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn medians_ns(uring_ns: u64, psync_ns: u64) -> Qd1Medians {
        Qd1Medians {
            path: "/x".into(),
            written: false,
            uring: Duration::from_nanos(uring_ns),
            psync: Duration::from_nanos(psync_ns),
            reads: 200,
        }
    }

    fn medians(uring_us: u64, psync_us: u64) -> Qd1Medians {
        medians_ns(uring_us * 1000, psync_us * 1000)
    }

    #[test]
    fn a_deep_queue_leaves_io_uring_only_when_it_is_much_slower_both_ways() {
        let deep = |m: Qd1Medians| pick(&m, Queue::Deep);
        // zram here (issue #24 §3): 53 µs against 3.6 µs.
        assert_eq!(deep(medians_ns(53_000, 3_600)), RingKind::Psync);
        // zram on a quiet machine (issue #39): 9.1 µs against 1.4 µs, a deep queue keeps it.
        assert_eq!(deep(medians_ns(9_100, 1_400)), RingKind::Uring);
        // A disk: close medians.
        assert_eq!(deep(medians(110, 95)), RingKind::Uring);
        // Three times slower but only by 16 µs: not worth leaving io_uring.
        assert_eq!(deep(medians(24, 8)), RingKind::Uring);
        // 25 µs longer but only twice as slow.
        assert_eq!(deep(medians(50, 25)), RingKind::Uring);
        // Both conditions, just past the edges.
        assert_eq!(deep(medians(31, 10)), RingKind::Psync);
        assert_eq!(deep(medians(30, 10)), RingKind::Uring);
        // io_uring faster: stays.
        assert_eq!(deep(medians(5, 50)), RingKind::Uring);
    }

    #[test]
    fn at_queue_depth_1_io_uring_stays_only_where_it_is_measurably_faster() {
        let qd1 = |m: Qd1Medians| pick(&m, Queue::One);
        // zram on a quiet machine (issue #39): 9.1 µs against 1.4 µs, far under 20 µs.
        assert_eq!(qd1(medians_ns(9_100, 1_400)), RingKind::Psync);
        assert_eq!(qd1(medians_ns(3_100, 900)), RingKind::Psync);
        // The virtio disk: medians within the probe's noise go to pread.
        assert_eq!(qd1(medians_ns(16_000, 15_500)), RingKind::Psync);
        assert_eq!(qd1(medians_ns(14_400, 15_400)), RingKind::Psync);
        // io_uring more than 10 % faster stays; the edge itself goes to psync.
        assert_eq!(qd1(medians_ns(16_600, 22_400)), RingKind::Uring);
        assert_eq!(qd1(medians(89, 100)), RingKind::Uring);
        assert_eq!(qd1(medians(90, 100)), RingKind::Psync);
        assert_eq!(Queue::of(1), Queue::One);
        assert_eq!(Queue::of(2), Queue::Deep);
    }

    #[test]
    fn only_a_default_io_uring_gives_way_and_a_named_one_gets_a_recommendation() {
        let slow = || Some(Ok(medians(53, 4)));
        let d = decide(RingKind::Uring, false, Queue::Deep, slow());
        assert_eq!(
            (d.kind, d.chosen, d.recommended),
            (RingKind::Psync, "measured", None)
        );
        assert!(d
            .probe
            .as_deref()
            .is_some_and(|p| p.contains("53.0 µs through io_uring")));
        let d = decide(RingKind::Uring, true, Queue::Deep, slow());
        assert_eq!(
            (d.kind, d.chosen, d.recommended),
            (RingKind::Uring, "named", Some(RingKind::Psync))
        );
        let d = decide(
            RingKind::Uring,
            false,
            Queue::Deep,
            Some(Ok(medians(60, 55))),
        );
        assert_eq!(
            (d.kind, d.chosen, d.recommended),
            (RingKind::Uring, "default", None)
        );
        let d = decide(RingKind::Kaio, true, Queue::One, None);
        assert_eq!((d.kind, d.chosen, d.probe), (RingKind::Kaio, "named", None));
        let refused = Some(Err(ProbeError::UringRefused));
        let d = decide(RingKind::Uring, false, Queue::One, refused);
        assert_eq!((d.kind, d.chosen), (RingKind::Uring, "default"));
        assert!(d
            .probe
            .is_some_and(|p| p.contains("measured nothing: io_uring is refused")));
    }

    #[test]
    fn queue_depth_1_on_zram_takes_psync_a_deep_queue_keeps_io_uring_and_a_name_is_kept() {
        // Issue #39's figures: bench --outstanding 1 on a raw zram device.
        let zram = || Some(Ok(medians_ns(9_100, 1_400)));
        let d = decide(RingKind::Uring, false, Queue::One, zram());
        assert_eq!(
            (d.kind, d.chosen, d.recommended),
            (RingKind::Psync, "cheaper", None)
        );
        let d = decide(RingKind::Uring, false, Queue::Deep, zram());
        assert_eq!(
            (d.kind, d.chosen, d.recommended),
            (RingKind::Uring, "default", None)
        );
        let d = decide(RingKind::Uring, true, Queue::One, zram());
        assert_eq!(
            (d.kind, d.chosen, d.recommended),
            (RingKind::Uring, "named", Some(RingKind::Psync))
        );
        // A named psync or libaio is not probed, and kept.
        let d = decide(RingKind::Psync, true, Queue::One, None);
        assert_eq!((d.kind, d.chosen), (RingKind::Psync, "named"));
    }
}
