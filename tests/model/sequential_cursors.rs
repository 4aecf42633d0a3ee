//! Read-ahead and bulk update follow sequential cursors (issue #24 §2): each user's next
//! request starts where its previous one ended, in the same data file; at a file's end (or
//! when the shrink user cut the file below the cursor) the walk goes on at page 1 of the next
//! data file. A recording backend over the in-memory one keeps every data-file request with
//! the name of the thread that made it; without a storage of its own that posts
//! asynchronously, a flight's request is carried on the spot by the actor's thread, so the
//! record is in each user's posting order.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::sim_support::small_plan;
use sqliosim::events::MemorySink;
use sqliosim::io::{
    AppendFile, Backend, DirectIoInfo, FaultyBackend, IoError, OpenOptions, Storage,
};
use sqliosim::page::PAGE_SIZE;
use sqliosim::sim::driver::simulate;
use sqliosim::sim::plan::{FilePlan, SimPlan};

const PAGE: u64 = PAGE_SIZE as u64;

/// One request on a data file: who made it, where, how long, read or write.
#[derive(Debug, Clone)]
struct Req {
    thread: String,
    path: PathBuf,
    first: u64,
    pages: u64,
    write: bool,
}

type Log = Arc<Mutex<Vec<Req>>>;

/// The in-memory backend, with every data-file request recorded.
struct Recording {
    inner: FaultyBackend,
    log: Log,
}

#[derive(Debug)]
struct RecFile {
    inner: Arc<dyn Storage>,
    log: Log,
}

impl RecFile {
    fn note(&self, offset: u64, len: usize, write: bool) {
        if self.inner.path().extension().is_some_and(|e| e == "mdx") {
            self.log.lock().push(Req {
                thread: std::thread::current().name().unwrap_or("").to_string(),
                path: self.inner.path().to_path_buf(),
                first: offset / PAGE,
                pages: len as u64 / PAGE,
                write,
            });
        }
    }
}

impl Storage for RecFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.note(offset, buf.len(), false);
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.note(offset, buf.len(), true);
        self.inner.write_at(buf, offset)
    }
    fn read_vectored_at(&self, bufs: &mut [&mut [u8]], offset: u64) -> io::Result<usize> {
        self.note(offset, bufs.iter().map(|b| b.len()).sum(), false);
        self.inner.read_vectored_at(bufs, offset)
    }
    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        self.note(offset, bufs.iter().map(|b| b.len()).sum(), true);
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
    fn dio_align(&self) -> u32 {
        self.inner.dio_align()
    }
}

impl Backend for Recording {
    fn clock(&self) -> sqliosim::clock::Clock {
        self.inner.clock()
    }
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn Storage>, IoError> {
        let inner = self.inner.open(path, opts)?;
        Ok(Arc::new(RecFile {
            inner,
            log: Arc::clone(&self.log),
        }))
    }
    fn remove(&self, path: &Path) -> Result<(), IoError> {
        self.inner.remove(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn create_append(&self, path: &Path) -> Result<Box<dyn AppendFile>, IoError> {
        self.inner.create_append(path)
    }
    fn open_append(&self, path: &Path) -> Result<Box<dyn AppendFile>, IoError> {
        self.inner.open_append(path)
    }
    fn read_whole(
        &self,
        path: &Path,
        use_: sqliosim::io::safefile::Use,
    ) -> Result<Vec<u8>, IoError> {
        self.inner.read_whole(path, use_)
    }
    fn direct_io_info(&self, path: &Path) -> DirectIoInfo {
        self.inner.direct_io_info(path)
    }
}

/// Two data files of 2 MB (256 pages) and a log; only the user kind under test runs.
fn plan(read_ahead: bool, shrinking: bool) -> SimPlan {
    let dir = PathBuf::from("/virtual");
    let mut plan = small_plan(&dir, 2, Duration::from_millis(700));
    let second = FilePlan::data(dir.join("u.mdx"), 256);
    plan.files.insert(1, second);
    for f in plan
        .files
        .iter_mut()
        .filter(|f| f.path.extension().is_some_and(|e| e == "mdx"))
    {
        if shrinking {
            f.shrinkable = true;
            f.max_pages = 512;
            f.increment_pages = 32;
        } else {
            f.shrinkable = false;
            f.max_pages = f.initial_pages;
        }
    }
    if shrinking {
        // Often enough that the files grow and shrink back several times in the phase.
        plan.shrink.min_interval = Duration::from_millis(20);
        plan.shrink.max_interval = Duration::from_millis(60);
    }
    plan.journal = false;
    plan.cycles = 1;
    plan.force_read_ahead = true;
    plan.random.users = 0;
    plan.audit.users = 0;
    plan.read_ahead.users = if read_ahead { 2 } else { 0 };
    plan.bulk.users = if read_ahead { 0 } else { 2 };
    plan
}

/// Runs `plan` and returns each user's requests in order, keyed by its thread name, and how
/// many times the shrink user shrank a file.
fn requests_by_user(
    plan: SimPlan,
    prefix: &str,
    write: bool,
) -> (BTreeMap<String, Vec<Req>>, usize) {
    let backend = Recording {
        inner: FaultyBackend::stepped(11),
        log: Log::default(),
    };
    let sink = Arc::new(MemorySink::default());
    let out = simulate(plan, &backend, sink.clone()).expect("simulate");
    assert!(!out.worker_panicked, "a worker thread panicked");
    assert_eq!(sink.findings(), vec![], "a clean run finds nothing");
    let mut users: BTreeMap<String, Vec<Req>> = BTreeMap::new();
    for r in backend.log.lock().iter() {
        if r.thread.starts_with(prefix) && r.write == write {
            users.entry(r.thread.clone()).or_default().push(r.clone());
        }
    }
    let shrinks = sink
        .messages()
        .iter()
        .filter(|m| m.text.contains(" shrank from "))
        .count();
    (users, shrinks)
}

/// Checks one user's requests: never page 0, contiguous except where a walk reached the
/// end of its file (`fixed_end`: the fixed size, else any size) and went on at page 1 of the
/// other data file. Returns (contiguous steps, wraps).
fn check_walk(user: &str, reqs: &[Req], fixed_end: Option<u64>) -> (usize, usize) {
    let (mut steps, mut wraps) = (0, 0);
    for r in reqs {
        assert!(
            r.first >= 1 && r.pages >= 1,
            "{user}: {r:?} touches the header page"
        );
        if let Some(end) = fixed_end {
            assert!(r.first + r.pages <= end, "{user}: {r:?} goes past the end");
        }
    }
    for pair in reqs.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.path == b.path && b.first == a.first + a.pages {
            steps += 1;
            continue;
        }
        let at_end = fixed_end.is_none_or(|end| a.first + a.pages == end);
        assert!(
            at_end && b.first == 1 && b.path != a.path,
            "{user}: {b:?} does not continue {a:?} (a walk jumps only at a file's end, to page 1 of the next file)"
        );
        wraps += 1;
    }
    (steps, wraps)
}

fn walks_are_sequential(read_ahead: bool) {
    let (prefix, write) = if read_ahead {
        ("Read Ahead User", false)
    } else {
        ("Bulk Update User", true)
    };
    let (users, _) = requests_by_user(plan(read_ahead, false), prefix, write);
    assert_eq!(
        users.len(),
        2,
        "both users made requests: {:?}",
        users.keys()
    );
    for (user, reqs) in &users {
        let (steps, wraps) = check_walk(user, reqs, Some(256));
        assert!(
            steps >= 20 && wraps >= 1,
            "{user}: {steps} contiguous steps and {wraps} wraps in {} requests",
            reqs.len()
        );
    }
}

#[test]
fn read_ahead_requests_follow_a_sequential_cursor() {
    walks_are_sequential(true);
}

#[test]
fn bulk_update_requests_follow_a_sequential_cursor() {
    walks_are_sequential(false);
}

#[test]
fn cursors_under_shrink_stay_in_the_file_and_off_the_header() {
    for read_ahead in [true, false] {
        let (prefix, write) = if read_ahead {
            ("Read Ahead User", false)
        } else {
            ("Bulk Update User", true)
        };
        let (users, shrinks) = requests_by_user(plan(read_ahead, true), prefix, write);
        assert!(!users.is_empty(), "{prefix}: no requests");
        assert!(shrinks > 0, "{prefix}: the shrink user never shrank a file");
        for (user, reqs) in &users {
            // The size moves under the cursor: a request past the end would have read
            // short (a finding, checked above) or grown the file behind the size lock.
            let (steps, _) = check_walk(user, reqs, None);
            assert!(
                reqs.iter().all(|r| r.first + r.pages <= 512),
                "{user}: a request past the largest size"
            );
            assert!(steps >= 10, "{user}: {steps} contiguous steps");
        }
    }
}
