//! The stepping driver: what moves a model run's stepped clock ([`crate::clock::Stepped`]),
//! and how the run is made the same for a seed.
//!
//! A stepped run's threads run one at a time on one CPU under `SCHED_FIFO` at priority 2, and
//! a stepping thread runs beside them at priority 1. The kernel runs a `SCHED_FIFO` thread until
//! it blocks and never runs a lower priority while a higher one can run, so:
//!
//! - the stepping thread runs only when every thread of the run waits (on the clock, a lock, a
//!   condition, a join): it then moves the time to the earliest deadline of a sleeper and wakes
//!   it. Waiting costs no wall time, and the time a run reads is what its backend charged.
//! - the threads of the run take turns in an order the kernel fixes from the order they became
//!   runnable, which the run's own steps fix: no time slice, no other CPU, no load of the
//!   machine's decides who goes next (a thread of another process preempts one of the run and
//!   gives the CPU back to the same thread). With the in-memory backend, whose random choices
//!   derive from the seed, the same seed is the same run.
//!
//! Real-time scheduling needs `CAP_SYS_NICE` (root, or an `RLIMIT_RTPRIO` of 2). Without it
//! the run still steps its clock, with the stepping thread at normal priority: the time still
//! moves only by the charged and slept amounts, but when the stepping thread runs depends on
//! the machine, so the run is not repeatable; [`Stepping::repeatable`] says which.
//!
//! Why not a crate: `thread-priority` would wrap the one `sched_setscheduler` call; the rest is
//! the clock's own protocol.

#![expect(
    unsafe_code,
    reason = "sched_setscheduler(2) and sched_getparam(2) through libc take a C struct"
)]

use std::sync::Arc;
use std::thread::JoinHandle;

use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};

use crate::clock::{Clock, Entered, Stepped};

/// The real-time priority of a stepped run's threads.
const RUN_PRIORITY: i32 = 2;
/// The stepping thread's, below them.
const STEP_PRIORITY: i32 = 1;

/// Wall time a stepped run holds its CPU before the stepping thread pauses it for [`PAUSE`].
/// A run under `SCHED_FIFO` never waits on the wall clock, so without the pauses it would keep
/// the CPU but for the kernel's real-time reserve (5 %), starving the processes beside it (the
/// slow test tier's runs share the machine with the model tier); with them it takes about
/// half of one CPU. The pause falls where every thread of the run waits, so the run's order
/// and its stepped time are the same with or without it.
const RUN: std::time::Duration = std::time::Duration::from_millis(10);
/// How long the stepping thread gives the CPU back after [`RUN`].
const PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

/// A stepped run in progress on the calling thread: undone (the thread's clock, CPUs and
/// policy as they were; the stepping thread stopped) when dropped.
pub struct Stepping {
    stepped: Arc<Stepped>,
    stepper: Option<JoinHandle<()>>,
    before: Option<Before>,
    _clock: Entered,
    repeatable: bool,
}

/// The calling thread's CPUs and scheduling before the run.
struct Before {
    cpus: CpuSet,
    policy: i32,
    priority: i32,
}

impl Stepping {
    /// Starts stepping `clock` for a run on the calling thread (every thread the run starts
    /// inherits the CPU and the policy); `None` for the real clock.
    pub fn start(clock: &Clock) -> std::io::Result<Option<Stepping>> {
        let Some(stepped) = clock.as_stepped().map(Arc::clone) else {
            return Ok(None);
        };
        let cpu = stepped.cpu(pick_cpu);
        let before = Before::take();
        let pinned = pin(cpu);
        let repeatable = pinned && set_fifo(RUN_PRIORITY);
        stepped.rearm();
        let stepper = {
            let stepped = Arc::clone(&stepped);
            std::thread::Builder::new()
                .name("stepper".into())
                .spawn(move || {
                    if repeatable {
                        // Below the run: it runs only when no thread of the run can.
                        set_fifo(STEP_PRIORITY);
                    }
                    let mut ran_since = std::time::Instant::now();
                    while stepped.advance() {
                        // Every thread of the run waits: a pause here changes nothing in its
                        // order, and gives the CPU back to the machine (see `PAUSE`).
                        if ran_since.elapsed() >= RUN {
                            std::thread::sleep(PAUSE);
                            ran_since = std::time::Instant::now();
                        }
                    }
                })
        };
        let stepper = match stepper {
            Ok(h) => h,
            Err(e) => {
                if let Some(b) = before {
                    b.restore();
                }
                return Err(e);
            }
        };
        Ok(Some(Stepping {
            _clock: crate::clock::enter(clock.clone()),
            stepped,
            stepper: Some(stepper),
            before,
            repeatable,
        }))
    }

    /// Whether the run is the same for the same seed (real-time scheduling was granted).
    pub fn repeatable(&self) -> bool {
        self.repeatable
    }
}

impl Drop for Stepping {
    fn drop(&mut self) {
        self.stepped.release();
        if let Some(h) = self.stepper.take() {
            let _ = h.join();
        }
        if let Some(b) = self.before.take() {
            b.restore();
        }
    }
}

/// Whether this process may run a stepped run repeatably (may use `SCHED_FIFO`).
pub fn available() -> bool {
    let before = Before::take();
    let ok = set_fifo(RUN_PRIORITY);
    if let Some(b) = before {
        b.restore();
    }
    ok
}

/// The last CPU this thread may use: every stepped run takes that one, so however many run at
/// once they hold one CPU (at most the kernel's real-time share of it, 95 % by default) and
/// leave the others to everything else (the slow test tier runs beside the model tier).
fn pick_cpu() -> usize {
    sched_getaffinity(None)
        .ok()
        .and_then(|set| (0..CpuSet::MAX_CPU).rev().find(|&c| set.is_set(c)))
        .unwrap_or(0)
}

/// Pins the calling thread to `cpu`.
fn pin(cpu: usize) -> bool {
    let mut set = CpuSet::new();
    set.set(cpu);
    sched_setaffinity(None, &set).is_ok()
}

/// Puts the calling thread under `SCHED_FIFO` at `priority`.
fn set_fifo(priority: i32) -> bool {
    set_policy(libc::SCHED_FIFO, priority)
}

fn set_policy(policy: i32, priority: i32) -> bool {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param that outlives the call; pid 0 is the calling
    // thread; the call reads the struct and changes nothing else of ours.
    unsafe { libc::sched_setscheduler(0, policy, &param) == 0 }
}

impl Before {
    fn take() -> Option<Before> {
        let cpus = sched_getaffinity(None).ok()?;
        // SAFETY: pid 0 is the calling thread; sched_getscheduler reads no memory of ours.
        let policy = unsafe { libc::sched_getscheduler(0) };
        let mut param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid, writable sched_param for the call to fill.
        let got = unsafe { libc::sched_getparam(0, &mut param) };
        (policy >= 0 && got == 0).then_some(Before {
            cpus,
            policy,
            priority: param.sched_priority,
        })
    }

    fn restore(self) {
        set_policy(self.policy, self.priority);
        let _ = sched_setaffinity(None, &self.cpus);
    }
}
