//! Time formatting for log entries: SQLIOSim's local TIME (HH:MM:SS) and DATE (MM/DD/YY).

use time::{OffsetDateTime, UtcOffset};

/// Formats timestamps in the local time zone found when the log was opened.
#[derive(Debug, Clone, Copy)]
pub struct LogClock {
    offset: UtcOffset,
}

impl Default for LogClock {
    fn default() -> Self {
        LogClock::local()
    }
}

impl LogClock {
    /// The local offset; UTC when it cannot be determined (the `time` crate refuses to read it
    /// once the process has several threads, so open the log early).
    pub fn local() -> LogClock {
        LogClock {
            offset: UtcOffset::current_local_offset().unwrap_or(UtcOffset::UTC),
        }
    }

    /// Always UTC (tests, reproducible output).
    pub fn utc() -> LogClock {
        LogClock {
            offset: UtcOffset::UTC,
        }
    }

    fn at(&self, time_us: u64) -> OffsetDateTime {
        let ns = i128::from(time_us) * 1000;
        OffsetDateTime::from_unix_timestamp_nanos(ns)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH)
            .to_offset(self.offset)
    }

    /// ("HH:MM:SS", "MM/DD/YY") of a time in microseconds since the Unix epoch.
    pub fn time_date(&self, time_us: u64) -> (String, String) {
        let t = self.at(time_us);
        (
            format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second()),
            format!(
                "{:02}/{:02}/{:02}",
                u8::from(t.month()),
                t.day(),
                t.year().rem_euclid(100)
            ),
        )
    }
}

/// RFC 3339 UTC time with microseconds, for structured fields.
pub fn iso_utc(time_us: u64) -> String {
    let t = OffsetDateTime::from_unix_timestamp_nanos(i128::from(time_us) * 1000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.microsecond()
    )
}

/// UTC time to the second for tables, "2024-05-01 12:34:56Z" ("-" when unknown).
pub fn utc(us: Option<u64>) -> String {
    match us {
        Some(us) => {
            let iso = iso_utc(us);
            format!("{}Z", iso.get(..19).unwrap_or(&iso).replacen('T', " ", 1))
        }
        None => "-".into(),
    }
}

/// Microseconds since the Unix epoch, now.
pub fn now_us() -> u64 {
    crate::page::layout::now_us()
}
