//! The write-ahead log on the .ldx file: packs log records into blocks, group-commits them, and
//! knows how far the log is durable.
//!
//! Records are packed into log blocks of at most 60 KB ([`super::logpack`]); a block is closed
//! by the commit that needs it durable or when it is full. A data page carrying LSN `l` may be
//! written only once `durable_end() > l`, which [`Wal::flush_to`] ensures. Whoever calls
//! `flush_to` closes the block its LSN is in and posts every closed block, one asynchronous
//! write per block, up to 32 in flight ([`super::logwrites`], SQL Server's log writer); the
//! log becomes durable over the contiguous prefix of completed (and synced) blocks, in LSN
//! order, and callers whose LSN is in a block another caller posted wait for it (group commit).

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::sync::Mutex;

use super::logblock::{LOG_AREA_START, MAX_LOG_UNIT, MIN_LOG_UNIT, NO_PREV};
use super::logpack::Packer;
use super::logwrites::{LogWrites, Publish};
use crate::io::Storage;

/// Slack, in bytes of the stream, a reader of the log allows between what was appended when
/// it looked and what a writer may have reached meanwhile (kept at the 1 MiB of the groups
/// the log was once written in: it only ever spares a block that was being lapped).
pub const MAX_GROUP: u64 = 1 << 20;

pub use super::logio::{LogGate, LogIo};

/// The write-ahead log of one log file.
#[derive(Debug)]
pub struct Wal {
    storage: Arc<dyn Storage>,
    area_len: u64,
    unit: u32,
    write_through: bool,
    pending: Mutex<Packer>,
    writes: LogWrites,
    durable_end: AtomicU64,
    last_block: AtomicU64,
    on_flush: std::sync::OnceLock<FlushHook>,
    /// Where the next forward read starts: (the block before, the LSN).
    forward: Mutex<(u64, u64)>,
}

/// Told (last durable block, durable end) after every flush, in flush order.
pub struct FlushHook(pub Box<dyn Fn(u64, u64) + Send + Sync>);

impl std::fmt::Debug for FlushHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FlushHook")
    }
}

impl Wal {
    /// A log over `storage`, whose log area is `file_len - LOG_AREA_START` bytes, written in
    /// blocks that are multiples of `unit` (the log's sector size, 512..=8192).
    pub fn new(
        storage: Arc<dyn Storage>,
        run_id: u64,
        file_id: u32,
        file_len: u64,
        write_through: bool,
        unit: u32,
    ) -> io::Result<Wal> {
        if !unit.is_power_of_two() || !(MIN_LOG_UNIT..=MAX_LOG_UNIT).contains(&unit) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("log sector size {unit} is not a power of two from 512 to 8192"),
            ));
        }
        let area_len = file_len.saturating_sub(LOG_AREA_START) / u64::from(unit) * u64::from(unit);
        if area_len < 64 * 1024 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "log file too small: at least 72 KB needed",
            ));
        }
        Ok(Wal {
            storage,
            area_len,
            unit,
            write_through,
            pending: Mutex::new(Packer::new(run_id, file_id, area_len, unit)),
            writes: LogWrites::new(0, super::logwrites::unflushed_bound(area_len))?,
            durable_end: AtomicU64::new(0),
            last_block: AtomicU64::new(NO_PREV),
            on_flush: std::sync::OnceLock::new(),
            forward: Mutex::new((NO_PREV, 0)),
        })
    }

    /// Continues an existing log whose newest valid block ends at `end`: new blocks follow it in
    /// the stream (at `end`, rounded up to the unit), so each has a higher LSN than any block
    /// already in the file, and each overwrites only what a lap ago was older than the oldest
    /// block a verify walks back to, as in a log that was never stopped. Starting on the next
    /// lap instead would overwrite the newest lap's own first blocks, still durable in the
    /// journal: a cut tearing that unacknowledged write read as a broken durable log chain
    /// (issue #21, the model's resumes of early cuts).
    pub fn continue_after(&self, end: u64) {
        let unit = u64::from(self.unit);
        let start = end.div_ceil(unit) * unit;
        self.pending.lock().continue_at(start);
        self.writes.restart_at(start);
        *self.forward.lock() = (NO_PREV, start);
        self.durable_end.store(start, Ordering::Release);
    }

    /// Sets the hook told of every flush (the journal's); only the first one set counts.
    pub fn on_flush(&self, hook: FlushHook) {
        let _ = self.on_flush.set(hook);
    }

    /// Length of the circular log area.
    pub fn area_len(&self) -> u64 {
        self.area_len
    }

    /// The log's unit: every block length (and so every write's offset and length) is a
    /// multiple of it.
    pub fn unit(&self) -> u32 {
        self.unit
    }

    /// The log file.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// LSN up to which (exclusive) the log is durable.
    pub fn durable_end(&self) -> u64 {
        self.durable_end.load(Ordering::Acquire)
    }

    /// End of everything appended so far (durable or not).
    pub fn appended_end(&self) -> u64 {
        self.pending.lock().appended_end()
    }

    /// LSN of the last durable block (`NO_PREV` when none).
    pub fn last_block(&self) -> u64 {
        self.last_block.load(Ordering::Acquire)
    }

    /// File offset of LSN `lsn`.
    pub fn offset_of(&self, lsn: u64) -> u64 {
        LOG_AREA_START + lsn % self.area_len
    }

    /// Where the next forward read of the log starts: the LSN the last one ended at and the
    /// block before it (the first block it reads must link to it).
    pub fn forward_mark(&self) -> (u64, u64) {
        *self.forward.lock()
    }

    /// A forward read reached `end`, the block before it being `last_block`.
    pub fn set_forward_mark(&self, last_block: u64, end: u64) {
        let mut m = self.forward.lock();
        if end > m.1 {
            *m = (last_block, end);
        }
    }

    /// Holds the log from LSN `oldest` on, which a log backup has not read yet: no block that
    /// would overwrite it is written until it lets go (`None`) or holds from a later LSN
    /// (see `logwrites`, "What a log backup has not read yet").
    pub fn retain_from(&self, oldest: Option<u64>) {
        self.writes.retain_from(oldest, self.area_len);
    }

    /// Appends a log record of `bytes` bytes (packed into the open block); returns its LSN.
    pub fn append(&self, bytes: u32) -> u64 {
        self.pending.lock().append(bytes)
    }

    /// Makes the log durable at least past `lsn` (group commit), each write through `gate`;
    /// returns the I/Os this caller did. `Ok` only once `durable_end() > lsn`.
    pub fn flush_to(&self, lsn: u64, gate: &LogGate<'_>) -> io::Result<Vec<LogIo>> {
        if lsn != NO_PREV && self.durable_end() > lsn {
            return Ok(Vec::new());
        }
        let close = || {
            let mut p = self.pending.lock();
            p.close_through(lsn);
            p.take_closed()
        };
        self.writes.flush(
            self.storage.as_ref(),
            self.write_through,
            (lsn != NO_PREV).then_some(lsn),
            |lsn| self.offset_of(lsn),
            close,
            gate,
            self,
        )
    }

    /// Flushes everything appended so far.
    pub fn flush_all(&self, gate: &LogGate<'_>) -> io::Result<Vec<LogIo>> {
        self.flush_to(NO_PREV, gate)
    }
}

impl Publish for Wal {
    fn publish(&self, last_block: u64, durable_end: u64) {
        self.last_block.store(last_block, Ordering::Release);
        self.durable_end.store(durable_end, Ordering::Release);
        if let Some(hook) = self.on_flush.get() {
            (hook.0)(last_block, durable_end);
        }
    }

    fn durable_end(&self) -> u64 {
        Wal::durable_end(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wal_wraps_and_never_writes_past_the_file() {
        wraps_with_unit(512);
    }

    #[test]
    fn a_4096_unit_log_works_where_only_whole_sectors_are_accepted() {
        // The faulty backend refuses (EINVAL) any transfer not a multiple of 4096, as a 4Kn
        // device does: a 512-byte block anywhere fails the flush.
        wraps_with_unit(4096);
    }

    #[test]
    fn a_unit_that_is_not_a_sector_is_refused() {
        let backend = crate::io::FaultyBackend::new(1);
        let storage = crate::io::Backend::open(
            &backend,
            std::path::Path::new("/x.ldx"),
            crate::io::OpenOptions::default(),
        )
        .expect("open");
        for unit in [0, 1000, 16384] {
            assert!(Wal::new(Arc::clone(&storage), 1, 1, 1 << 20, false, unit).is_err());
        }
    }

    #[test]
    fn a_log_held_for_a_log_backup_waits_full_until_the_backup_lets_it_reuse_space() {
        let backend = crate::io::FaultyBackend::new(5);
        let path = std::path::Path::new("/h.ldx");
        let len = 8192 + 256 * 1024;
        let storage = crate::io::Backend::open(&backend, path, crate::io::OpenOptions::default())
            .expect("open");
        storage.set_len(len).expect("size");
        let wal = Arc::new(Wal::new(Arc::clone(&storage), 7, 1, len, false, 512).expect("wal"));
        let area = wal.area_len();
        // A log backup has read nothing past LSN 0: nothing may be written past one lap.
        wal.retain_from(Some(0));
        let writer = {
            let wal = Arc::clone(&wal);
            std::thread::spawn(move || {
                let own = crate::sim::engine::logio::OwnControls::default();
                let gate = own.gate();
                let mut last = 0;
                while last < 3 * area {
                    last = wal.append(3000);
                    wal.flush_to(last, &gate).expect("flush");
                }
                last
            })
        };
        // Polled, not slept on: a loaded machine may take long to get there, never further.
        let reached = |at_least: u64| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            while wal.durable_end() <= at_least && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            wal.durable_end()
        };
        let held = reached(area / 2);
        assert!(
            held > area / 2,
            "the log filled up to its lap: {held} of {area}"
        );
        // Time for a writer that ignored the hold to overrun it (a held one never does).
        std::thread::sleep(std::time::Duration::from_millis(200));
        let held = wal.durable_end();
        assert!(
            held <= area,
            "nothing past one lap is written: {held} of {area}"
        );
        assert!(!writer.is_finished(), "the writer waits on a full log");
        // The log backup read a lap and a half: the writer may go on that far, no further.
        wal.retain_from(Some(area + area / 2));
        assert!(
            reached(area) > area,
            "the writer goes on once the hold moves"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
        let held = wal.durable_end();
        assert!(held > area && held <= 2 * area + area / 2, "{held}");
        assert!(!writer.is_finished());
        wal.retain_from(None);
        let last = writer.join().expect("writer");
        assert!(wal.durable_end() > last);
    }

    /// Drives a WAL of the given unit round its area a few times on files that refuse any
    /// transfer not a multiple of `unit`, and checks the chain.
    fn wraps_with_unit(unit: u32) {
        let backend = crate::io::FaultyBackend::new(3);
        backend.set_dio_align(unit);
        let path = std::path::Path::new("/w.ldx");
        let len = 8192 + 64 * 1024;
        let storage = crate::io::Backend::open(&backend, path, crate::io::OpenOptions::default())
            .expect("open");
        storage.set_len(len).expect("size");
        assert!(
            storage.write_at(&[0u8; 512], 8192 + 512).is_err() || unit == 512,
            "the backend enforces the unit"
        );
        let wal = Wal::new(std::sync::Arc::clone(&storage), 7, 1, len, false, unit).expect("wal");
        let own = crate::sim::engine::logio::OwnControls::default();
        let gate = own.gate();
        let mut last = 0;
        for i in 0..200 {
            last = wal.append(500 + (i % 7) * 300);
            if i % 5 == 0 {
                wal.flush_to(last, &gate).expect("flush");
            }
        }
        wal.flush_all(&gate).expect("flush");
        assert!(wal.durable_end() > last);
        assert!(
            wal.durable_end() > 2 * wal.area_len(),
            "the log wrapped at least twice"
        );
        assert_eq!(
            storage.len().expect("len"),
            len,
            "no write past the end of the file"
        );
        let spec = crate::sim::engine::logscan::ChainSpec {
            run_id: 7,
            file_id: 1,
            area_len: wal.area_len(),
            last_block: wal.last_block(),
            durable_end: wal.durable_end(),
            max_blocks: usize::MAX,
            unit,
        };
        let report =
            crate::sim::engine::logscan::scan_chain(storage.as_ref(), &spec, &gate).expect("scan");
        assert_eq!(report.problem, None);
        // A lap of 64 KB holds a few blocks of five packed records each.
        assert!(report.blocks_ok >= 4, "{report:?}");
    }
}
