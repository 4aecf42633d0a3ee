//! The cost of the request hand-off (issue #15 §3): one thread posts 8 KiB random O_DIRECT
//! reads or writes, keeping QD requests in flight, through
//!
//! - `service`: the shared I/O service (`Storage::post` of the service-backed storage, the
//!   completion collected from the poster's `Completions` queue), as the asynchronous actors
//!   posted before; every request crosses to the service thread and back;
//! - `own`: a [`PostRing`] the posting thread owns, submitting and reaping on its own thread.
//!
//! Prints one line per run (IOPS, CPU µs per I/O from getrusage of the whole process, so the
//! service thread is counted) and the medians. Not a criterion bench: rounds alternate the two
//! paths so a noisy neighbour hits both alike. Run through `scripts/handoff.sh`, or:
//!
//! ```text
//! cargo build --release --bench handoff
//! target/release/deps/handoff-* FILE [SECONDS [ROUNDS]]
//! ```

// Unsafe code is denied crate-wide (Cargo.toml [lints]).
#![expect(unsafe_code, reason = "getrusage(2) through libc")]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqliosim::io::{
    Backend, BufPool, Completions, OpenOptions, PostOp, PostRing, RingFile, ServiceBackend,
};

const BLOCK: usize = 8192;
const FILE_MB: u64 = 256;

/// One measured run.
#[derive(Debug, Clone, Copy)]
struct Figures {
    iops: f64,
    cpu_us: f64,
}

/// What one run does.
#[derive(Debug, Clone, Copy)]
struct Case {
    read: bool,
    depth: usize,
    secs: f64,
}

/// Random block offsets (xorshift), the same sequence for both paths.
struct Offsets(u64);

impl Offsets {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % (FILE_MB * 1024 * 1024 / BLOCK as u64)) * BLOCK as u64
    }
}

fn cpu_s() -> f64 {
    // SAFETY: getrusage fills the zero-initialised struct we own; RUSAGE_SELF is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(ru.ru_utime) + s(ru.ru_stime)
}

/// A request of one frame of `pool` (one is free: each completion is dropped before the next
/// post, which gives its frame back).
fn op(pool: &Arc<BufPool>, read: bool, offset: u64) -> PostOp {
    let frames = pool.take_many(1).expect("a free frame");
    if read {
        PostOp::read(offset, frames, BLOCK)
    } else {
        PostOp::write(offset, frames, BLOCK)
    }
}

/// Runs `case` posting through `post` (slot, PostOp) and collecting with `next` (a
/// completion's slot, waiting for one); returns the figures once `secs` have passed and
/// everything in flight is back.
fn drive(
    case: Case,
    pool: &Arc<BufPool>,
    mut post: impl FnMut(usize, PostOp),
    mut next: impl FnMut() -> usize,
) -> Figures {
    let mut offsets = Offsets(0x9E37_79B9_7F4A_7C15);
    let (t0, c0) = (Instant::now(), cpu_s());
    let end = t0 + Duration::from_secs_f64(case.secs);
    for slot in 0..case.depth {
        post(slot, op(pool, case.read, offsets.next()));
    }
    let (mut done, mut live) = (0u64, case.depth);
    while live > 0 {
        let slot = next();
        done += 1;
        live -= 1;
        if Instant::now() < end {
            post(slot, op(pool, case.read, offsets.next()));
            live += 1;
        }
    }
    let (secs, cpu) = (t0.elapsed().as_secs_f64(), cpu_s() - c0);
    Figures {
        iops: done as f64 / secs,
        cpu_us: cpu * 1e6 / done as f64,
    }
}

fn through_service(path: &Path, case: Case) -> Figures {
    let backend = ServiceBackend::start(sqliosim::io::aio::RingKind::Uring, 64, false)
        .expect("start the I/O service");
    let opts = OpenOptions {
        create: false,
        direct: true,
        write_through: false,
    };
    let storage = backend.open(path, opts).expect("open through the service");
    let queue = Arc::new(Completions::default());
    let pool = BufPool::new(case.depth, BLOCK).expect("frames");
    let q = Arc::clone(&queue);
    drive(
        case,
        &pool,
        |slot, op| storage.post(op, &q, slot as u64),
        || {
            let c = queue.wait();
            c.result.expect("I/O through the service");
            c.token as usize
        },
    )
}

fn through_own_ring(path: &Path, case: Case) -> Figures {
    let opts = OpenOptions {
        create: false,
        direct: true,
        write_through: false,
    };
    let file = sqliosim::io::direct::open_existing_file(path, opts, true, true).expect("open");
    let queue = Arc::new(Completions::default());
    let ring = PostRing::new(case.depth, Arc::clone(&queue))
        .expect("ring")
        .expect("io_uring allowed here");
    let ring = std::cell::RefCell::new(ring);
    let pool = BufPool::new(case.depth, BLOCK).expect("frames");
    let file = RingFile::new(file);
    drive(
        case,
        &pool,
        |slot, op| ring.borrow_mut().post(&file, op, slot as u64),
        || loop {
            if let Some(c) = queue.try_take() {
                c.result.expect("I/O through the own ring");
                return c.token as usize;
            }
            ring.borrow_mut().wait();
        },
    )
}

fn prepare(path: &Path) {
    let want = FILE_MB << 20;
    if std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) >= want {
        return;
    }
    // Real data, not a hole: O_DIRECT reads of unwritten extents would not reach the disk.
    let chunk = vec![0x5Au8; 1 << 20];
    let mut out = std::fs::File::create(path).expect("create the test file");
    for _ in 0..FILE_MB {
        std::io::Write::write_all(&mut out, &chunk).expect("fill the test file");
    }
    out.sync_all().expect("sync the test file");
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let path = Path::new(args.first().map_or("handoff.dat", String::as_str)).to_path_buf();
    let secs: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    prepare(&path);
    for (read, depth) in [(true, 1), (false, 1), (true, 64), (false, 64)] {
        let case = Case { read, depth, secs };
        let name = format!("8k rand{} QD{depth}", if read { "read" } else { "write" });
        let mut figs: [Vec<Figures>; 2] = [Vec::new(), Vec::new()];
        for round in 0..rounds {
            // Alternate which path goes first.
            for which in [round % 2, 1 - round % 2] {
                let f = if which == 0 {
                    through_service(&path, case)
                } else {
                    through_own_ring(&path, case)
                };
                let label = ["service", "own"][which];
                println!(
                    "{name} round {round} {label}: {:.0} IOPS, {:.2} CPU µs/I/O",
                    f.iops, f.cpu_us
                );
                figs[which].push(f);
            }
        }
        let med = |which: usize| {
            let mut i: Vec<f64> = figs[which].iter().map(|f| f.iops).collect();
            let mut c: Vec<f64> = figs[which].iter().map(|f| f.cpu_us).collect();
            (median(&mut i), median(&mut c))
        };
        let ((si, sc), (oi, oc)) = (med(0), med(1));
        println!(
            "MEDIAN {name}: service {si:.0} IOPS {sc:.2} µs | own {oi:.0} IOPS {oc:.2} µs | IOPS {:.2}x CPU {:.2}x",
            oi / si,
            oc / sc
        );
    }
}
