//! The stepping driver: what moves a model run's stepped clock ([`crate::clock::Stepped`]),
//! and when.
//!
//! The clock moves to the earliest deadline of a sleeper only when every thread of the run
//! waits, so waiting costs no wall time, the time a run reads is what its backend charged, and
//! a thread that the machine's load keeps from its CPU holds the time still rather than falling
//! behind it. Two drivers know when every thread waits:
//!
//! - **Quiet** (every stepped run by default): a stepping thread at normal priority knows the
//!   threads asleep on the clock itself; the others (waiting on a lock, a condition, a channel,
//!   a join) it asks the kernel about: each must be asleep in `/proc/self/task/TID/stat` at two
//!   looks with its count of turns on a CPU (`schedstat`) unchanged between them
//!   (`Looks`). The run's threads keep the machine's scheduling and every CPU, so a
//!   stepped run beside other work takes its share and no more; which thread goes first when
//!   two can is still the machine's choice, so a seed is not replayed event for event.
//! - **In turns** ([`Clock::stepped_in_turns`], for a run that must replay exactly): the run's
//!   threads run one at a time on one CPU under `SCHED_FIFO` at priority 2, and the stepping
//!   thread beside them at priority 1. The kernel runs a `SCHED_FIFO` thread until it blocks
//!   and never runs a lower priority while a higher one can run, so the stepping thread runs
//!   only when every thread of the run waits, and the threads take turns in an order the
//!   kernel fixes from the order they became runnable, which the run's own steps fix. With the
//!   in-memory backend, whose random choices derive from the seed, the same seed is the same
//!   run. A run in turns holds its CPU for as long as a thread of it can run (it gives it back
//!   10 ms in every 20 only when all wait): beside a whole test tier that starved the kernel's
//!   own work on that CPU (btrfs I/O of another test stalled for 15 s), which is why it is
//!   kept for the runs that replay a seed. Real-time scheduling needs `CAP_SYS_NICE` (root, or
//!   an `RLIMIT_RTPRIO` of 2); without it such a run steps quietly, and
//!   [`Stepping::repeatable`] says so.
//!
//! Why not a crate: `thread-priority` would wrap the one `sched_setscheduler` call, and
//! `procfs` would parse every field of the two `/proc` files of which the quiet driver reads
//! two figures; the rest is the clock's own protocol.

#![expect(
    unsafe_code,
    reason = "sched_setscheduler(2) and sched_getparam(2) through libc take a C struct"
)]

use std::num::NonZeroU64;
use std::sync::Arc;
use std::thread::JoinHandle;

use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};

use crate::clock::{Clock, Entered, Stepped};
use looks::Looks;

mod looks;
#[cfg(test)]
mod tests;

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
/// The nice value of a quiet run's threads where the process may raise it (root). Every advance
/// of the clock waits for the run's threads to run and sleep again and for the stepping thread
/// to see it, so on a loaded machine each such turn waits for a CPU: beside four CPU spinners
/// on two CPUs, eleven `sim` model tests took 177 s at nice 0 and 55 s at -10 (32 s on an
/// idle machine). The kernel's fair scheduler still gives everything else its share by weight,
/// where `SCHED_FIFO` gave it nothing while the run could run.
const QUIET_NICE: i32 = -10;

/// How long the stepping thread gives the CPU back after [`RUN`].
const PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

/// A stepped run in progress on the calling thread: undone (the thread's clock, CPUs and
/// policy as they were; the stepping thread stopped) when dropped.
pub struct Stepping {
    stepped: Arc<Stepped>,
    stepper: Option<JoinHandle<()>>,
    before: Option<Before>,
    /// The calling thread's nice value before a quiet run raised it.
    nice: Option<i32>,
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
    /// Starts stepping `clock` for a run on the calling thread (in turns, every thread the run
    /// starts inherits the CPU and the policy); `None` for the real clock.
    pub fn start(clock: &Clock) -> std::io::Result<Option<Stepping>> {
        let Some(stepped) = clock.as_stepped().map(Arc::clone) else {
            return Ok(None);
        };
        let (before, repeatable, nice) = if stepped.in_turns() {
            let cpu = stepped.cpu(pick_cpu);
            let before = Before::take();
            let pinned = pin(cpu);
            (before, pinned && set_fifo(RUN_PRIORITY), None)
        } else {
            (None, false, raise_nice())
        };
        stepped.rearm();
        let stepper = {
            let stepped = Arc::clone(&stepped);
            std::thread::Builder::new()
                .name("stepper".into())
                .spawn(move || {
                    if repeatable {
                        step_in_turns(&stepped);
                    } else {
                        let mut looks = Looks::default();
                        // Its waits between looks are a few microseconds, not the default
                        // 50 µs of slack on top.
                        let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
                        while stepped.advance_when_quiet(|t| looks.all_asleep(t)) {}
                    }
                })
        };
        let stepper = match stepper {
            Ok(h) => h,
            Err(e) => {
                if let Some(b) = before {
                    b.restore();
                }
                restore_nice(nice);
                return Err(e);
            }
        };
        Ok(Some(Stepping {
            _clock: crate::clock::enter(clock.clone()),
            stepped,
            stepper: Some(stepper),
            before,
            nice,
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
        restore_nice(self.nice.take());
    }
}

/// Gives the calling thread (and so every thread of the run it starts) the nice value
/// [`QUIET_NICE`] where the process may raise it; returns the value before.
fn raise_nice() -> Option<i32> {
    let before = rustix::process::getpriority_process(None).ok()?;
    (before > QUIET_NICE && rustix::process::setpriority_process(None, QUIET_NICE).is_ok())
        .then_some(before)
}

fn restore_nice(before: Option<i32>) {
    if let Some(n) = before {
        let _ = rustix::process::setpriority_process(None, n);
    }
}

/// The stepping loop of a run in turns: this thread runs below the run's, so only when every
/// thread of the run waits.
fn step_in_turns(stepped: &Stepped) {
    set_fifo(STEP_PRIORITY);
    let mut ran_since = std::time::Instant::now();
    while stepped.advance() {
        // Every thread of the run waits: a pause here changes nothing in its order, and gives
        // the CPU back to the machine (see `PAUSE`).
        if ran_since.elapsed() >= RUN {
            std::thread::sleep(PAUSE);
            ran_since = std::time::Instant::now();
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
