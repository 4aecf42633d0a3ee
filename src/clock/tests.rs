use super::stepped::STEPPED_WALL_START;
use super::*;

#[test]
fn a_stepped_clock_moves_only_when_advanced() {
    let c = Stepped::new();
    let t0 = c.now();
    assert_eq!(c.now(), t0, "no time passes by itself");
    c.advance_by(Duration::from_millis(25));
    assert_eq!(c.now() - t0, Duration::from_millis(25));
    assert_eq!(
        c.system_now(),
        SystemTime::UNIX_EPOCH + STEPPED_WALL_START + Duration::from_millis(25)
    );
}

#[test]
fn a_sleeper_wakes_when_the_time_reaches_its_deadline_and_not_before() {
    let c = Arc::new(Stepped::new());
    let sleeper = {
        let c = Arc::clone(&c);
        std::thread::spawn(move || {
            let _e = enter(Clock::Stepped(Arc::clone(&c)));
            sleep(Duration::from_secs(3600));
            c.elapsed()
        })
    };
    // The sleeper's deadline appears; the driver's step moves the time exactly there.
    while c.next_deadline().is_none() {
        std::thread::yield_now();
    }
    assert_eq!(c.next_deadline(), Some(Duration::from_secs(3600)));
    c.advance_by(Duration::from_secs(1));
    assert!(
        !sleeper.is_finished(),
        "a second does not end an hour's sleep"
    );
    assert!(c.advance());
    let woke_at = sleeper.join().expect("sleeper");
    assert_eq!(
        woke_at,
        Duration::from_secs(3600),
        "an hour, stepped at once"
    );
}

#[test]
fn a_released_clock_stops_its_driver() {
    let c = Arc::new(Stepped::new());
    let driver = {
        let c = Arc::clone(&c);
        std::thread::spawn(move || while c.advance() {})
    };
    c.release();
    driver.join().expect("the driver ends");
    c.rearm();
    c.advance_by(Duration::from_millis(1));
    assert_eq!(c.elapsed(), Duration::from_millis(1));
}

#[test]
fn the_real_clock_is_every_threads_unless_entered() {
    assert!(!is_stepped());
    let c = Clock::stepped();
    {
        let _e = enter(c.clone());
        assert!(is_stepped());
        let t = now();
        assert_eq!(now(), t, "stepped time stands still");
        let passed = std::thread::spawn(is_stepped).join().expect("thread");
        assert!(
            !passed,
            "a thread started without its clock keeps the real one"
        );
    }
    assert!(!is_stepped(), "the guard gives the thread its clock back");
}
