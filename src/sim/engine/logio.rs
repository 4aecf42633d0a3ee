//! The run-time controls every log request passes through, as a data page's request does: the
//! file's throttle (its permit counts the request in the file's and the run's depth gauges,
//! and its duration moves the file's running average) and the in-flight table the long-I/O
//! monitor watches. Not the process-wide MaxOutstandingIO gate: a log write is made while the
//! writer of a data page waits for the log to be durable past the page's LSN, and that writer
//! may hold gate slots for requests of its own in flight, which it releases only once it handles
//! their completions — a log request waiting for the gate could wait for itself (it did: a
//! bulk update with MaxOutstandingIO=2 hung in `Wal::flush_to`). SQL Server bounds its log
//! writer's outstanding I/O apart from the data pages' too. What the log did comes back as
//! [`LogIo`]s for the caller's statistics.

use std::io;
use std::time::{Duration, Instant};

use crate::sim::control::io_ages::{IoAgeGuard, IoAges};
use crate::sim::control::throttle::{Gate, Permit, Throttle};

/// One request the log made, for the caller's statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogIo {
    /// Bytes moved (0 for a sync).
    pub bytes: u64,
    /// How long it took.
    pub latency_ns: u64,
    /// True for an fdatasync.
    pub is_sync: bool,
    /// True for a read (the log read back).
    pub is_read: bool,
    /// True when the request had to wait for the file's throttle.
    pub throttled: bool,
}

/// What the log's requests pass instead of the process-wide gate: no limit (see the module doc).
static NO_GATE: Gate = Gate::new(0);

/// The controls of the log file's requests, borrowed from the run's.
#[derive(Debug, Clone, Copy)]
pub struct LogGate<'a> {
    /// The log file's throttle.
    pub throttle: &'a Throttle,
    /// The in-flight table of the long-I/O monitor.
    pub io_ages: &'a IoAges,
    /// Throttling lifted (AllowIOBursts during the initial update and checkpoints).
    pub burst: bool,
}

impl<'a> LogGate<'a> {
    /// Does one request of `bytes` bytes under a throttle permit and an in-flight slot.
    pub fn request<T>(
        &self,
        bytes: u64,
        is_read: bool,
        io: impl FnOnce() -> io::Result<T>,
    ) -> io::Result<(T, LogIo)> {
        let begun = self.begin(bytes, is_read);
        let res = io();
        let done = begun.end(crate::clock::now());
        res.map(|v| (v, done))
    }

    /// Starts one request of `bytes` bytes that completes later (a posted log write): waits for
    /// the file's throttle, then takes an in-flight slot. A caller that holds permits of its
    /// own asks [`LogGate::try_begin`] instead, which never waits.
    pub fn begin(&self, bytes: u64, is_read: bool) -> Begun<'a> {
        let waited_before = self.throttle.throttled();
        let permit = self.throttle.enter(&NO_GATE, self.burst);
        let throttled = self.throttle.throttled() > waited_before;
        self.started(permit, bytes, is_read, throttled)
    }

    /// [`LogGate::begin`] without waiting: `None` (counted as throttled) when the file's
    /// throttle has no room now.
    pub fn try_begin(&self, bytes: u64, is_read: bool) -> Option<Begun<'a>> {
        match self.throttle.try_enter(&NO_GATE, self.burst) {
            Ok(permit) => Some(self.started(permit, bytes, is_read, false)),
            Err(_) => {
                self.throttle.count_throttled();
                None
            }
        }
    }

    fn started(&self, permit: Permit<'a>, bytes: u64, is_read: bool, throttled: bool) -> Begun<'a> {
        Begun {
            throttle: self.throttle,
            permit,
            _watched: self.io_ages.begin(),
            start: crate::clock::now(),
            bytes,
            is_read,
            throttled,
        }
    }
    /// Times an fdatasync of the log (outside the throttle, as a data file's sync).
    pub fn sync(io: impl FnOnce() -> io::Result<()>) -> io::Result<LogIo> {
        let t = crate::clock::now();
        io()?;
        Ok(LogIo {
            bytes: 0,
            latency_ns: crate::clock::since(t).as_nanos() as u64,
            is_sync: true,
            is_read: false,
            throttled: false,
        })
    }
}

/// One log request started and not yet done: its throttle permit and in-flight slot, held
/// until [`Begun::end`].
#[derive(Debug)]
pub struct Begun<'a> {
    throttle: &'a Throttle,
    permit: Permit<'a>,
    _watched: IoAgeGuard<'a>,
    start: Instant,
    bytes: u64,
    is_read: bool,
    throttled: bool,
}

impl Begun<'_> {
    /// The request ended at `done_at`: gives back its slot and permit (its duration moves the
    /// file's running average) and returns it for the statistics.
    pub fn end(self, done_at: Instant) -> LogIo {
        let took = done_at.saturating_duration_since(self.start);
        let Begun {
            throttle,
            permit,
            _watched,
            bytes,
            is_read,
            throttled,
            ..
        } = self;
        drop(_watched);
        throttle.complete(permit, took);
        LogIo {
            bytes,
            latency_ns: took.as_nanos() as u64,
            is_sync: false,
            is_read,
            throttled,
        }
    }
}

/// Controls of its own for a log used outside a run (tests, tools): no throttling to speak
/// of, nothing watched.
#[derive(Debug)]
pub struct OwnControls {
    throttle: Throttle,
    io_ages: IoAges,
}

impl Default for OwnControls {
    fn default() -> OwnControls {
        OwnControls {
            throttle: Throttle::new(Duration::from_secs(3600), 64),
            io_ages: IoAges::new(64),
        }
    }
}

impl OwnControls {
    /// The gate over these controls.
    pub fn gate(&self) -> LogGate<'_> {
        LogGate {
            throttle: &self.throttle,
            io_ages: &self.io_ages,
            burst: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_request_moves_the_running_average_and_is_watched_in_flight() {
        let throttle = Throttle::new(Duration::from_millis(1), 4);
        let io_ages = IoAges::new(4);
        let g = LogGate {
            throttle: &throttle,
            io_ages: &io_ages,
            burst: false,
        };
        let before = throttle.running_average_ms();
        for _ in 0..20 {
            let (_, io) = g
                .request(4096, false, || {
                    assert_eq!(io_ages.newly_long(Duration::ZERO), 1, "watched in flight");
                    std::thread::sleep(Duration::from_millis(30));
                    Ok(())
                })
                .expect("request");
            assert_eq!((io.bytes, io.is_read), (4096, false));
        }
        assert!(throttle.running_average_ms() > before, "the average moved");
        assert_eq!(throttle.max_outstanding(), 1, "counted outstanding");
    }
}
