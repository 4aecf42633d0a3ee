//! The I/O of the volatile cache: reads that see the cached bytes, writes into the cache,
//! writing back on a flush or when the cache is full, lying about flushes, power cuts, and
//! keeping truncate, fallocate, unlink and rename coherent with what is cached.
//!
//! Locks: `writeback` (held across every write-back, truncate, hole punch and power cut, so
//! two of them never reorder bytes on the backing file) is taken before `cache`, which is
//! held only for memory work, never across I/O. A read takes the cache epoch, reads the
//! backing file, and retries if cached bytes left the cache meanwhile: otherwise it could
//! miss bytes that moved from the cache to the backing file during its read.

use fuser::Errno;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use super::Batch;
use crate::fs::{lock, FaultFs};
use crate::io::read_full;
use crate::sys;

impl FaultFs {
    /// Reads `len` bytes at `off` of file `ino`: the backing file's bytes with the cached
    /// ones laid over (short only at the end of the file as the cache extends it).
    pub fn read_through(
        &self,
        ino: u64,
        file: &File,
        off: u64,
        len: u64,
    ) -> Result<Vec<u8>, Errno> {
        loop {
            let epoch = {
                let c = lock(&self.cache);
                (!c.is_clean(ino)).then(|| c.epoch())
            };
            let mut buf = read_full(file, off, len)?;
            let Some(epoch) = epoch else {
                return Ok(buf);
            };
            let c = lock(&self.cache);
            if c.epoch() == epoch {
                c.overlay(ino, off, &mut buf, len);
                return Ok(buf);
            }
        }
    }

    /// Stores a write: into the cache when it is on (writing back the oldest data if it is
    /// then over its bound), else straight into the backing file.
    pub fn store(&self, ino: u64, file: &Arc<File>, off: u64, data: &[u8]) -> Result<(), Errno> {
        let over = {
            let mut c = lock(&self.cache);
            // A file with cached bytes keeps going through the cache until they are written
            // back, so a direct write can never be overtaken by an older cached one.
            if !c.enabled && c.is_clean(ino) {
                drop(c);
                return file.write_all_at(data, off).map_err(Errno::from);
            }
            c.store(ino, file, off, data);
            c.over_budget()
        };
        if over {
            self.evict().map_err(Errno::from)?;
        }
        Ok(())
    }

    /// The size a file shows: its backing size, or more when cached writes extend it.
    pub fn shown_size(&self, ino: u64, backing_size: u64) -> u64 {
        backing_size.max(lock(&self.cache).cached_end(ino))
    }

    /// Writes back the oldest cached data until the cache is 1/8 below its bound, as a disk
    /// whose cache is full destages it (that data then survives a power cut).
    fn evict(&self) -> io::Result<()> {
        let _wb = lock(&self.writeback);
        let batches = {
            let c = lock(&self.cache);
            if !c.over_budget() {
                return Ok(());
            }
            c.oldest(c.bytes() - c.max_bytes / 8 * 7)
        };
        for b in &batches {
            self.write_batch(b, true)?;
        }
        Ok(())
    }

    /// Writes a batch to its backing file and takes it out of the cache; `writeback` held.
    fn write_batch(&self, b: &Batch, evicted: bool) -> io::Result<u64> {
        let mut n = 0;
        for (off, data, _) in &b.pieces {
            b.backing.write_all_at(data, *off)?;
            n += data.len() as u64;
        }
        lock(&self.cache).written_back(b, evicted);
        Ok(n)
    }

    /// Writes back what is cached of `[off, end)` of `ino`; returns the bytes written.
    fn write_back(&self, ino: u64, off: u64, end: u64) -> io::Result<u64> {
        let _wb = lock(&self.writeback);
        self.write_back_held(ino, off, end)
    }

    fn write_back_held(&self, ino: u64, off: u64, end: u64) -> io::Result<u64> {
        let batch = lock(&self.cache).batch(ino, off, end);
        match batch {
            Some(b) => self.write_batch(&b, false),
            None => Ok(0),
        }
    }

    /// fsync (`datasync` false) or fdatasync of file `ino` through `file`.
    pub fn sync_file(&self, ino: u64, file: &File, datasync: bool) -> Result<(), Errno> {
        self.make_durable(ino, file, 0, u64::MAX, datasync)
    }

    /// Makes `[off, end)` of `ino` durable (an O_DSYNC write, or a whole-file sync) — or,
    /// while the device lies about this file, acknowledges it without doing so.
    pub fn make_durable(
        &self,
        ino: u64,
        file: &File,
        off: u64,
        end: u64,
        datasync: bool,
    ) -> Result<(), Errno> {
        let name = self.name_of(ino).unwrap_or_default();
        {
            let mut c = lock(&self.cache);
            if c.lies_about(&name) {
                let n = c.lie_about(ino, off, end);
                drop(c);
                self.note(format_args!(
                    "lied about a flush of {name}: {n} cached writes"
                ));
                return Ok(());
            }
            c.stats.flushes += 1;
        }
        self.write_back(ino, off, end).map_err(Errno::from)?;
        let synced = if datasync {
            file.sync_data()
        } else {
            file.sync_all()
        };
        synced.map_err(Errno::from)
    }

    /// Sets the size of `ino` (truncate or extend); cached bytes beyond it are dropped.
    pub fn set_len_through(&self, ino: u64, file: &File, size: u64) -> Result<(), Errno> {
        let _wb = lock(&self.writeback);
        file.set_len(size).map_err(Errno::from)?;
        lock(&self.cache).discard(ino, size, u64::MAX);
        Ok(())
    }

    /// fallocate(2): a hole punch or zeroed range drops the cached bytes there (they are
    /// zeros now); collapsing or inserting a range writes the file's cache back first.
    pub fn fallocate_through(
        &self,
        ino: u64,
        file: &File,
        mode: i32,
        off: u64,
        len: u64,
    ) -> Result<(), Errno> {
        let _wb = lock(&self.writeback);
        let shifts = libc::FALLOC_FL_COLLAPSE_RANGE | libc::FALLOC_FL_INSERT_RANGE;
        if mode & shifts != 0 {
            self.write_back_held(ino, 0, u64::MAX)
                .map_err(Errno::from)?;
        }
        sys::fallocate(file, mode, off, len).map_err(Errno::from)?;
        if mode & (libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) != 0 {
            lock(&self.cache).discard(ino, off, off.saturating_add(len));
        }
        Ok(())
    }

    /// Before `name` goes away (unlink, or replaced by a rename): its cached bytes are
    /// written back (so descriptors still open on it read them) and forgotten.
    pub fn retire(&self, name: &str) -> Result<(), Errno> {
        let Some(ino) = self.ino_of(name) else {
            return Ok(());
        };
        let _wb = lock(&self.writeback);
        self.write_back_held(ino, 0, u64::MAX)
            .map_err(Errno::from)?;
        lock(&self.cache).forget(ino);
        Ok(())
    }

    /// Writes back and syncs everything cached (clean unmount, `cache off`); returns bytes.
    pub fn flush_all(&self) -> io::Result<u64> {
        let mut total = 0;
        loop {
            let dirty = lock(&self.cache).dirty_files();
            if dirty.is_empty() {
                return Ok(total);
            }
            for ino in dirty {
                let _wb = lock(&self.writeback);
                let batch = lock(&self.cache).batch(ino, 0, u64::MAX);
                if let Some(b) = batch {
                    total += self.write_batch(&b, false)?;
                    b.backing.sync_data()?;
                }
            }
        }
    }

    /// `cache off`: writes from now on go straight through; what is cached is written back.
    pub fn cache_off(&self) -> io::Result<u64> {
        lock(&self.cache).enabled = false;
        self.flush_all()
    }

    /// `power-cut [torn]`: drops everything cached; with `torn`, the first sectors of the
    /// newest cached write reach the backing file first. Returns the reply.
    pub fn power_cut(&self, torn: bool) -> io::Result<String> {
        let _wb = lock(&self.writeback);
        let name = |ino| self.name_of(ino).unwrap_or_else(|| format!("#{ino}"));
        let cut = lock(&self.cache).power_cut(torn, name);
        let mut reply = format!(
            "ok dropped_writes={} dropped_bytes={} lied_lost={}",
            cut.writes, cut.bytes, cut.lied
        );
        match &cut.torn {
            Some(t) => {
                t.backing.write_all_at(&t.kept, t.off)?;
                let (at, len, kept) = (t.off, t.len, t.kept.len());
                reply += &format!(" torn={}@{at}+{len} kept={kept}", name(t.ino));
            }
            None if torn => reply += " torn=none",
            None => {}
        }
        self.note(format_args!("power cut: {reply}"));
        reply.push('\n');
        Ok(reply)
    }

    fn note(&self, what: std::fmt::Arguments<'_>) {
        if self.verbose {
            eprintln!("faultfs: {what}");
        }
    }
}
