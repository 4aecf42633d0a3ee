//! The log's writes in flight against a file whose posts complete late and out of order:
//! durable in LSN order only, a failed write never told durable, the bound never passed.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::*;
use crate::io::{Completion, PostOp};
use crate::sim::control::io_ages::IoAges;
use crate::sim::control::throttle::Throttle;
use crate::sim::engine::logblock;
use crate::sim::engine::wal::{FlushHook, Wal};

/// A log file whose posted writes complete later, out of order (each after a delay of its
/// own, on a thread of its own), and which records the writes that completed.
#[derive(Debug)]
struct LatePosts {
    inner: Arc<dyn Storage>,
    done: Arc<Mutex<Vec<(u64, u64)>>>,
    fail_post: AtomicU64,
    posts: AtomicU64,
    /// The log written, once made: each post checks the writer's bound against it.
    wal: std::sync::OnceLock<std::sync::Weak<Wal>>,
    /// Posts that ended past the durable end plus the bound, and the furthest past it.
    past_bound: AtomicU64,
    furthest: AtomicU64,
}

impl LatePosts {
    /// Checks that a write of `len` bytes at `offset`, posted now, ends within the
    /// bound past the durable end. It is not durable yet, so its LSN is the first at or
    /// after the durable end that falls at its offset.
    fn check_bound(&self, offset: u64, len: u64) {
        let Some(wal) = self.wal.get().and_then(std::sync::Weak::upgrade) else {
            return;
        };
        let (area, end) = (wal.area_len(), wal.durable_end());
        let at = offset - logblock::LOG_AREA_START;
        let lsn = end + (at + area - end % area) % area;
        let past = lsn + len - end;
        self.furthest.fetch_max(past, Ordering::AcqRel);
        if past > unflushed_bound(area) {
            self.past_bound.fetch_add(1, Ordering::AcqRel);
        }
    }
}

impl Storage for LatePosts {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.inner.write_at(buf, offset)
    }
    fn read_vectored_at(&self, bufs: &mut [&mut [u8]], offset: u64) -> io::Result<usize> {
        self.inner.read_vectored_at(bufs, offset)
    }
    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        self.inner.write_vectored_at(bufs, offset)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.inner.sync_data()
    }
    fn allocate(&self, len: u64) -> io::Result<()> {
        self.inner.allocate(len)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn path(&self) -> &Path {
        self.inner.path()
    }
    fn post(&self, op: PostOp, to: &Arc<Completions>, token: u64) {
        let n = self.posts.fetch_add(1, Ordering::AcqRel);
        self.check_bound(op.offset(), op.total() as u64);
        let fail = self.fail_post.load(Ordering::Acquire) == n;
        let (inner, done, to) = (
            Arc::clone(&self.inner),
            Arc::clone(&self.done),
            Arc::clone(to),
        );
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_micros(200 + (n * 7919) % 3000));
            let (offset, total) = (op.offset(), op.total() as u64);
            let (result, frames) = if fail {
                (
                    Err(io::Error::from_raw_os_error(libc::EIO)),
                    op.into_frames(),
                )
            } else {
                op.run_blocking(inner.as_ref())
            };
            if result.is_ok() {
                done.lock().push((offset, total));
            }
            to.push(Completion {
                token,
                result,
                done_at: std::time::Instant::now(),
                frames,
            });
        });
    }
    fn posts_async(&self) -> bool {
        true
    }
}

/// A log of `len` bytes over late posts (failing post number `fail_post`), its writes
/// recorded, and every end the hook was told.
fn late_log(len: u64, fail_post: u64) -> (Arc<Wal>, Arc<LatePosts>, Arc<Mutex<Vec<u64>>>) {
    late_log_synced(len, fail_post, true)
}

/// [`late_log`], its writes taken as durable when they complete (`write_through`) or
/// synced once per group commit.
fn late_log_synced(
    len: u64,
    fail_post: u64,
    write_through: bool,
) -> (Arc<Wal>, Arc<LatePosts>, Arc<Mutex<Vec<u64>>>) {
    let backend = crate::io::FaultyBackend::new(5);
    let inner = crate::io::Backend::open(
        &backend,
        Path::new("/late.ldx"),
        crate::io::OpenOptions::default(),
    )
    .expect("open");
    inner.set_len(len).expect("size");
    let late = Arc::new(LatePosts {
        inner,
        done: Arc::default(),
        fail_post: AtomicU64::new(fail_post),
        posts: AtomicU64::new(0),
        wal: std::sync::OnceLock::new(),
        past_bound: AtomicU64::new(0),
        furthest: AtomicU64::new(0),
    });
    let storage: Arc<dyn Storage> = late.clone();
    let wal = Arc::new(Wal::new(storage, 9, 1, len, write_through, 512).expect("wal"));
    let _ = late.wal.set(Arc::downgrade(&wal));
    let told = Arc::new(Mutex::new(Vec::new()));
    let (t, done) = (Arc::clone(&told), Arc::clone(&late.done));
    wal.on_flush(FlushHook(Box::new(move |_last, end| {
        // Told only of what is durable: every byte of the log below `end` was written by a
        // write that completed before (checked over the first lap, where offsets are LSNs).
        if end > len - logblock::LOG_AREA_START {
            t.lock().push(end);
            return;
        }
        let mut ranges: Vec<(u64, u64)> = done
            .lock()
            .iter()
            .map(|&(off, n)| (off - logblock::LOG_AREA_START, n))
            .collect();
        ranges.sort_unstable();
        let mut covered = 0;
        for (lsn, n) in ranges {
            if lsn <= covered {
                covered = covered.max(lsn + n);
            }
        }
        assert!(covered >= end, "told of {end}, only {covered} written");
        t.lock().push(end);
    })));
    (wal, late, told)
}

/// Eight users append and flush at once over a log whose writes complete late.
fn eight_flushers(wal: &Arc<Wal>, throttle: &Throttle, io_ages: &IoAges) -> usize {
    let failures = AtomicU64::new(0);
    std::thread::scope(|s| {
        for u in 0..8u32 {
            let (wal, failures) = (Arc::clone(wal), &failures);
            s.spawn(move || {
                let gate = LogGate {
                    throttle,
                    io_ages,
                    burst: true,
                };
                for i in 0..60 {
                    let lsn = wal.append(300 + (u * 131 + i * 17) % 20_000);
                    match wal.flush_to(lsn, &gate) {
                        Ok(_) => assert!(wal.durable_end() > lsn, "Ok only when durable"),
                        Err(_) => {
                            failures.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    failures.load(Ordering::Relaxed) as usize
}

#[test]
fn several_log_writes_are_in_flight_and_the_log_is_durable_in_lsn_order_only() {
    let (wal, _late, told) = late_log(64 << 20, u64::MAX);
    let throttle = Throttle::new(Duration::from_secs(3600), 256);
    let io_ages = IoAges::new(256);
    assert_eq!(eight_flushers(&wal, &throttle, &io_ages), 0);
    let most = throttle.max_outstanding();
    assert!(
        (2..=MAX_LOG_WRITES_IN_FLIGHT).contains(&most),
        "log writes in flight at once: {most}"
    );
    let told = told.lock();
    assert!(told.len() > 1);
    assert!(told.windows(2).all(|w| w[0] < w[1]), "in LSN order");
    assert_eq!(told.last().copied(), Some(wal.durable_end()));
}

#[test]
fn a_failed_log_write_fails_its_flush_and_is_never_told_durable_alone() {
    let (wal, late, told) = late_log(64 << 20, 40);
    let throttle = Throttle::new(Duration::from_secs(3600), 256);
    let io_ages = IoAges::new(256);
    // One write failed: the flush that posted it says so, and only that one; the next
    // flush wrote the block again.
    assert_eq!(eight_flushers(&wal, &throttle, &io_ages), 1);
    assert!(late.posts.load(Ordering::Acquire) > 40);
    // The hook checked, for every end it was told, that every byte below it was written:
    // never past the failed block before it was written again.
    let told = told.lock();
    assert!(told.windows(2).all(|w| w[0] < w[1]), "in LSN order");
    let gate_controls = crate::sim::engine::logio::OwnControls::default();
    wal.flush_all(&gate_controls.gate()).expect("flush");
    let spec = crate::sim::engine::logscan::ChainSpec {
        run_id: 9,
        file_id: 1,
        area_len: wal.area_len(),
        last_block: wal.last_block(),
        durable_end: wal.durable_end(),
        max_blocks: usize::MAX,
        unit: 512,
    };
    let report = crate::sim::engine::logscan::scan_chain(
        wal.storage().as_ref(),
        &spec,
        &gate_controls.gate(),
    )
    .expect("scan");
    assert_eq!(report.problem, None, "the chain is whole: {report:?}");
    assert!(report.blocks_ok > 10);
}

#[test]
fn the_writer_never_posts_past_the_bound_beyond_the_durable_end() {
    // A 1 MiB area (a bound of 256 KiB) written round many times by eight users, each
    // flushing three 15 KB records at a time (blocks enough to run far ahead), whose
    // writes complete late: synced once per group commit as in forced flush, then taken
    // as durable on completion as with O_DSYNC.
    for write_through in [false, true] {
        let (wal, late, _told) = late_log_synced((1 << 20) + 8192, u64::MAX, write_through);
        let throttle = Throttle::new(Duration::from_secs(3600), 256);
        let io_ages = IoAges::new(256);
        std::thread::scope(|s| {
            for _ in 0..8 {
                let wal = Arc::clone(&wal);
                let (throttle, io_ages) = (&throttle, &io_ages);
                s.spawn(move || {
                    let gate = LogGate {
                        throttle,
                        io_ages,
                        burst: true,
                    };
                    for _ in 0..40 {
                        let lsn = (0..3).fold(0, |_, _| wal.append(15_000));
                        wal.flush_to(lsn, &gate).expect("flush");
                        assert!(wal.durable_end() > lsn);
                    }
                });
            }
        });
        assert!(wal.durable_end() > 4 * wal.area_len(), "wrapped");
        let bound = unflushed_bound(wal.area_len());
        let furthest = late.furthest.load(Ordering::Acquire);
        assert_eq!(
            late.past_bound.load(Ordering::Acquire),
            0,
            "posted up to {furthest} bytes past the durable end; the bound is {bound}"
        );
        // The bound is what held the writer back: it came near it.
        assert!(furthest > bound / 2, "{furthest} of {bound}");
    }
}
