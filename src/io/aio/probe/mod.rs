//! The engine probe (issue #24 §3): a short measurement of 8 KiB O_DIRECT random reads at
//! queue depth 1 through io_uring and through psync; the pure decision of the engine that adds
//! no latency ([`pick`], [`decide`]) is in `decision.rs`.
//!
//! Why: on a device that completes in a few microseconds (a RAM block device such as zram), a
//! read submitted through io_uring at low depth is handed to the kernel's worker pool and took
//! a median 53 µs where pread took 3.6 µs (fio's io_uring shows the same 49 µs). A capacity run
//! would then report the engine's latency as the device's, and a simulation's synchronous
//! reads would pay it. On an ordinary disk the two medians are close and io_uring stays.
//!
//! Each engine reads for at most [`PROBE_READS`] reads or [`PROBE_BUDGET`], whichever ends
//! first, after a few reads not counted; the whole probe stays well under half a second.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{AlignedBuffers, Direction, Op, Ring, RingConfig, RingError, RingKind};
use crate::io::file::FileStorage;
use crate::io::{IoError, OpenOptions, Storage};

mod decision;
pub use decision::{decide, pick, EngineDecision, Queue, QD1_FASTER_PCT, SLOWER_BY, SLOWER_FACTOR};

/// Bytes per probe read.
pub const PROBE_BLOCK: u32 = 8192;
/// Most reads counted per engine.
pub const PROBE_READS: usize = 200;
/// Most time spent reading per engine.
pub const PROBE_BUDGET: Duration = Duration::from_millis(100);
/// Reads before the counted ones (the first touch of a ring or a cold path).
const WARMUP_READS: usize = 5;
/// The size of the file [`measure_in_dir`] writes, when no data file exists yet.
pub const PROBE_FILE_BYTES: u64 = 8 << 20;

/// The medians a probe measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Qd1Medians {
    /// The file read.
    pub path: PathBuf,
    /// The file was written for the probe (no data file existed yet), and is gone.
    pub written: bool,
    /// Median read through io_uring.
    pub uring: Duration,
    /// Median read through psync (pread in the calling thread).
    pub psync: Duration,
    /// Reads counted per engine (the smaller count).
    pub reads: usize,
}

impl Qd1Medians {
    /// E.g. `8 KiB O_DIRECT reads at queue depth 1 on /mnt/x/sqliosim.mdx: median 53.1 µs
    /// through io_uring, 3.6 µs through psync (200 reads each)`.
    pub fn describe(&self) -> String {
        let on = match (self.written, self.path.parent()) {
            (true, Some(dir)) => {
                format!("an unnamed file written for the probe in {}", dir.display())
            }
            _ => self.path.display().to_string(),
        };
        format!(
            "8 KiB O_DIRECT reads at queue depth 1 on {on}: median {:.1} µs through io_uring, {:.1} µs through psync ({} reads each)",
            micros(self.uring),
            micros(self.psync),
            self.reads
        )
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Why a probe measured nothing.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The file could not be opened, written or removed.
    #[error(transparent)]
    File(#[from] IoError),
    /// A ring could not be built or driven.
    #[error(transparent)]
    Ring(#[from] RingError),
    /// io_uring was refused, so there is nothing to compare.
    #[error("io_uring is refused here")]
    UringRefused,
    /// A probe read failed or came back short.
    #[error("a probe read of {path} failed: {detail}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The errno or the short count.
        detail: String,
    },
    /// The file is too small to read at random.
    #[error("{path} is too small to probe ({size} bytes)")]
    TooSmall {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
}

/// Probes `file` (open with O_DIRECT, readable) over its first `size` bytes.
pub fn measure(file: FileStorage, size: u64) -> Result<Qd1Medians, ProbeError> {
    measure_files(&Arc::from(vec![file]), size)
}

/// Probes the first of `files` (open with O_DIRECT, readable) over its first `size` bytes.
pub fn measure_files(files: &Arc<[FileStorage]>, size: u64) -> Result<Qd1Medians, ProbeError> {
    let path = files[0].path().to_path_buf();
    let blocks = size / u64::from(PROBE_BLOCK);
    if blocks < 2 {
        return Err(ProbeError::TooSmall { path, size });
    }
    let uring = reads_through(RingKind::Uring, files, blocks)?;
    let psync = reads_through(RingKind::Psync, files, blocks)?;
    Ok(Qd1Medians {
        path,
        written: false,
        reads: uring.len().min(psync.len()),
        uring: median(uring),
        psync: median(psync),
    })
}

/// Probes an existing file (a data file of an earlier run, a bench target) of `size` bytes.
pub fn measure_file(path: &Path, size: u64) -> Result<Qd1Medians, ProbeError> {
    let opts = OpenOptions {
        create: false,
        direct: true,
        write_through: false,
    };
    let file = crate::io::direct::open_existing_file(path, opts, false, false)?;
    measure(file, size)
}

/// Probes `path`: the file or device itself when it exists (a data file of an earlier run, a
/// device named as a file), else — or when it is a file under 1 MiB — a file written for the
/// purpose in its directory ([`measure_in_dir`]).
pub fn measure_at(path: &Path) -> Result<Qd1Medians, ProbeError> {
    let existing = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => m.len() >= 1 << 20,
        Ok(_) => true,
        Err(_) => false,
    };
    if existing {
        let opts = OpenOptions {
            create: false,
            direct: true,
            write_through: false,
        };
        let file = crate::io::direct::open_existing_file(path, opts, false, false)?;
        let size = file
            .len()
            .map_err(|e| crate::io::direct::os_error(path, "cannot size", e))?;
        return measure(file, size);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    measure_in_dir(dir)
}

/// Probes a file of [`PROBE_FILE_BYTES`] written for the purpose in `dir`'s filesystem. It
/// has no name (`O_TMPFILE`): nothing planted in a directory others can write can take its
/// place or be removed for it, and a run killed during the probe leaves nothing behind.
pub fn measure_in_dir(dir: &Path) -> Result<Qd1Medians, ProbeError> {
    let file = write_probe_file(dir)?;
    measure(file, PROBE_FILE_BYTES).map(|m| Qd1Medians { written: true, ..m })
}

/// An unnamed O_DIRECT file in `dir`, filled with non-zero bytes (a device may answer reads
/// of zero pages without touching its store).
fn write_probe_file(dir: &Path) -> Result<FileStorage, ProbeError> {
    let file = crate::io::direct::unnamed_storage(dir, OpenOptions::default())?;
    let path = file.path().to_path_buf();
    let chunk = 1 << 20;
    let mut buf = AlignedBuffers::new(1, chunk)?;
    for (i, b) in buf.slot_mut(0).iter_mut().enumerate() {
        *b = (i % 251) as u8 + 1;
    }
    for at in (0..PROBE_FILE_BYTES).step_by(chunk) {
        file.file()
            .write_all_at(buf.slot(0), at)
            .map_err(|e| crate::io::direct::os_error(&path, "cannot write", e))?;
    }
    Ok(file)
}

/// The latencies of up to [`PROBE_READS`] random reads at depth 1 through `kind`.
fn reads_through(
    kind: RingKind,
    files: &Arc<[FileStorage]>,
    blocks: u64,
) -> Result<Vec<Duration>, ProbeError> {
    let cfg = RingConfig {
        kind,
        depth: 1,
        slot_len: PROBE_BLOCK as usize,
        submit_batch: 1,
    };
    let mut ring = Ring::new(&cfg, files.clone())?;
    if ring.kind() != kind {
        return Err(ProbeError::UringRefused);
    }
    let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
    let (mut out, mut took) = (Vec::with_capacity(2), Vec::with_capacity(PROBE_READS));
    let deadline = Instant::now() + PROBE_BUDGET;
    for i in 0..WARMUP_READS + PROBE_READS {
        // xorshift64: any spread of offsets will do, and the same one for both engines.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let op = Op {
            kind: Direction::Read,
            file: 0,
            offset: (rng % blocks) * u64::from(PROBE_BLOCK),
            slot: 0,
            len: PROBE_BLOCK,
            user_data: i as u64,
        };
        out.clear();
        let start = Instant::now();
        ring.submit(op)?;
        ring.reap(1, &mut out)?;
        let elapsed = start.elapsed();
        check_read(&out, files[0].path())?;
        if i >= WARMUP_READS {
            took.push(elapsed);
            if Instant::now() >= deadline {
                break;
            }
        }
    }
    Ok(took)
}

fn check_read(out: &[super::RingCompletion], path: &Path) -> Result<(), ProbeError> {
    match out.first().map(|c| c.result) {
        Some(Ok(n)) if n == PROBE_BLOCK => Ok(()),
        other => Err(ProbeError::Read {
            path: path.to_path_buf(),
            detail: match other {
                Some(Err(errno)) => std::io::Error::from_raw_os_error(errno).to_string(),
                Some(Ok(n)) => format!("{n} of {PROBE_BLOCK} bytes"),
                None => "no completion".into(),
            },
        }),
    }
}

fn median(mut d: Vec<Duration>) -> Duration {
    d.sort_unstable();
    d.get(d.len() / 2).copied().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_of_a_directory_measures_both_engines_and_leaves_nothing() {
        let dir = tempfile::tempdir_in(".").expect("tempdir");
        match measure_in_dir(dir.path()) {
            Ok(m) => {
                assert!(m.reads >= 1 && m.reads <= PROBE_READS, "{m:?}");
                assert!(
                    m.uring > Duration::ZERO && m.psync > Duration::ZERO,
                    "{m:?}"
                );
                assert!(m.written, "{m:?}");
                assert!(m.describe().contains("through psync"), "{}", m.describe());
            }
            // Where the build directory refuses O_DIRECT there is nothing to measure.
            Err(ProbeError::File(IoError::DirectRefused { .. })) => {}
            Err(e) => panic!("probe failed: {e}"),
        }
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("list").collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
