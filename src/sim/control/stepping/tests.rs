//! The quiet driver, tried with threads of a stepped clock that work, wait off the clock and
//! start late.

use super::looks::Looks;
use super::*;
use std::time::{Duration, Instant};

/// Waits for `h` at most a minute of wall time (a driver that never moves the time would
/// hang the test rather than fail it).
fn joined<T>(h: std::thread::JoinHandle<T>) -> T {
    let until = Instant::now() + Duration::from_secs(60);
    while !h.is_finished() {
        assert!(Instant::now() < until, "the stepped threads never finished");
        std::thread::sleep(Duration::from_millis(5));
    }
    h.join().expect("the thread")
}

/// Runs `f` on a thread of `clock`, handed the clock before it starts as the driver hands
/// it to each actor's thread.
fn on_clock<T: Send + 'static>(
    clock: &Clock,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    let handed = clock.hand_on();
    std::thread::spawn(move || {
        let _c = handed.enter();
        f()
    })
}

/// The time on the calling thread's stepped clock.
fn stepped_now() -> Duration {
    crate::clock::current()
        .as_stepped()
        .expect("a thread of a stepped clock")
        .elapsed()
}

/// The quiet driver of `clock`, on a thread of its own.
fn drive(clock: &Clock) -> (Arc<Stepped>, std::thread::JoinHandle<()>) {
    let stepped = Arc::clone(clock.as_stepped().expect("stepped"));
    let driver = {
        let stepped = Arc::clone(&stepped);
        std::thread::spawn(move || {
            let mut looks = Looks::default();
            while stepped.advance_when_quiet(|t| looks.all_asleep(t)) {}
        })
    };
    (stepped, driver)
}

/// Stops the driver once the threads are done; the clock's time then.
fn stop(stepped: &Stepped, driver: std::thread::JoinHandle<()>) -> Duration {
    stepped.release();
    joined(driver);
    stepped.elapsed()
}

#[test]
fn the_quiet_driver_holds_the_time_while_a_thread_of_the_clock_still_runs() {
    let clock = Clock::stepped();
    let sleeper = on_clock(&clock, || crate::clock::sleep(Duration::from_secs(1)));
    let worker = on_clock(&clock, || {
        // Work the CPU for a fifth of a second of wall time; however long the machine
        // keeps this thread from its CPU, it has not waited, so no time may pass.
        let until = Instant::now() + Duration::from_millis(200);
        let mut spin = 0u64;
        while Instant::now() < until {
            spin = std::hint::black_box(spin.wrapping_add(1));
        }
        let at = stepped_now();
        crate::clock::sleep(Duration::from_millis(1));
        at
    });
    let (stepped, driver) = drive(&clock);
    let at = joined(worker);
    joined(sleeper);
    let end = stop(&stepped, driver);
    assert_eq!(
        at,
        Duration::ZERO,
        "the time moved while a thread of the clock was working"
    );
    assert_eq!(end, Duration::from_secs(1));
}

#[test]
fn the_quiet_driver_moves_the_time_when_the_other_threads_wait_off_the_clock() {
    let clock = Clock::stepped();
    let (tx, rx) = crossbeam::channel::bounded::<()>(1);
    let sender = on_clock(&clock, move || {
        crate::clock::sleep(Duration::from_secs(5));
        let _ = tx.send(());
    });
    // Waits on a channel, not on the clock: the driver must see it asleep.
    let receiver = on_clock(&clock, move || {
        rx.recv().expect("sent");
        stepped_now()
    });
    let (stepped, driver) = drive(&clock);
    let got_at = joined(receiver);
    joined(sender);
    stop(&stepped, driver);
    assert_eq!(got_at, Duration::from_secs(5));
}

#[test]
fn the_quiet_driver_holds_the_time_while_a_thread_handed_the_clock_has_not_entered_it() {
    let clock = Clock::stepped();
    let sleeper = on_clock(&clock, || crate::clock::sleep(Duration::from_secs(1)));
    // The thread takes a fifth of a second (of wall time) to enter the clock it was handed.
    let handed = clock.hand_on();
    let late = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        let _c = handed.enter();
        let at = stepped_now();
        crate::clock::sleep(Duration::from_millis(1));
        at
    });
    let (stepped, driver) = drive(&clock);
    let at = joined(late);
    joined(sleeper);
    stop(&stepped, driver);
    assert_eq!(
        at,
        Duration::ZERO,
        "the time moved before a thread handed the clock had entered it"
    );
}

#[test]
fn a_thread_gone_counts_as_asleep_and_a_running_one_does_not() {
    let mut looks = Looks::default();
    assert!(
        looks.all_asleep(&[i32::MAX]),
        "no such thread waits for nothing"
    );
    let me = rustix::thread::gettid().as_raw_nonzero().get();
    assert!(!looks.all_asleep(&[me]), "the thread asking is running");
}
