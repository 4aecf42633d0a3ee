//! Opening, filling and stamping a bench target through the `io` door (issue #22 §8): a file
//! is opened as the simulator opens its data files (`Backend::open` of the direct backend,
//! whose `io::safefile` refuses a planted symlink or hard link and never waits on a FIFO), a
//! block device as the run opens it (`io::direct::open_existing_file`, then checked to be the
//! device claimed); the header and the stamped data are written through [`Storage`].

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rand::{Rng, SeedableRng};

use super::header::header_text;
use super::{check_opened, Access, FILL_CHUNK};
use crate::bench::error::BenchError;
use crate::bench::stamp;
use crate::io::file::FileStorage;
use crate::io::{AlignedBuf, Backend, DirectBackend, IoError, OpenOptions, Storage};

/// The bench error for an `io` error met while doing `what` to `path`.
pub(super) fn bench_error(what: &'static str, path: &Path, e: IoError) -> BenchError {
    match e {
        IoError::Os { source, .. } | IoError::DirectRefused { source, .. } => {
            BenchError::io(what, path, source)
        }
        IoError::Unsafe(e) => BenchError::io(what, path, e.into()),
    }
}

/// Opens `path` read-only to read its header, following a symlink (a device named through
/// /dev/disk/by-id) and never waiting on a FIFO.
pub(super) fn open_probe(path: &Path) -> Result<FileStorage, IoError> {
    let opts = OpenOptions {
        create: false,
        direct: false,
        write_through: false,
    };
    crate::io::direct::open_existing_file(path, opts, false, true)
}

/// Opens (a file: creates) `path` for writing its header and data, with O_DIRECT when
/// `access.direct` (filling through the page cache would leave the file cached and flatter the
/// first read run; buffered only where O_DIRECT is refused).
pub(super) fn open_for_fill(path: &Path, access: Access) -> Result<Arc<dyn Storage>, BenchError> {
    let opts = |direct| OpenOptions {
        create: access.device.is_none(),
        direct,
        write_through: false,
    };
    if access.device.is_none() {
        let st = match DirectBackend.open(path, opts(access.direct)) {
            Err(IoError::DirectRefused { .. }) => DirectBackend.open(path, opts(false)),
            other => other,
        };
        return st.map_err(|e| bench_error("create", path, e));
    }
    // A device may be named through a symlink; whatever the name reaches now must be the
    // device claimed (`check_opened`), never another one swapped in.
    let open = |direct| crate::io::direct::open_existing_file(path, opts(direct), true, true);
    let f = match open(access.direct) {
        Err(_) if access.direct => open(false),
        other => other,
    }
    .map_err(|e| bench_error("create", path, e))?;
    check_opened(f.file(), path, access.device)?;
    Ok(Arc::new(f))
}

/// Writes the header through an aligned buffer, as O_DIRECT requires.
pub(super) fn write_header(
    st: &dyn Storage,
    path: &Path,
    seed: u64,
    size: u64,
    intact: bool,
) -> Result<(), BenchError> {
    let mut buf = AlignedBuf::new(stamp::SECTOR).map_err(|e| BenchError::io("map", path, e))?;
    buf.copy_from_slice(&header_text(seed, size, intact));
    st.write_at(&buf, 0)
        .map_err(|e| BenchError::io("write header", path, e))
}

/// Fills `[from, size)`, then records `size` in the header (keeping whether the stamps
/// before `from` are `intact`) and syncs; returns bytes written.
pub(super) fn fill_and_seal(
    st: &dyn Storage,
    path: &Path,
    seed: u64,
    (from, size): (u64, u64),
    intact: bool,
    stop: &AtomicBool,
) -> Result<u64, BenchError> {
    let filled = fill(st, path, seed, from, size, stop)?;
    write_header(st, path, seed, size, intact)?;
    st.sync_data()
        .map_err(|e| BenchError::io("sync", path, e))?;
    Ok(filled)
}

/// Writes stamped random data over `[from, to)`; returns the bytes written.
fn fill(
    st: &dyn Storage,
    path: &Path,
    seed: u64,
    from: u64,
    to: u64,
    stop: &AtomicBool,
) -> Result<u64, BenchError> {
    let mut buf = AlignedBuf::new(FILL_CHUNK).map_err(|e| BenchError::io("map", path, e))?;
    rand::rngs::SmallRng::seed_from_u64(seed).fill(&mut buf[..]);
    let mut crcs = stamp::PayloadCrcs::default();
    let mut off = from;
    while off < to {
        let len = ((to - off) as usize).min(FILL_CHUNK) / 4096 * 4096;
        if len == 0 {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            let _ = st.sync_data();
            return Err(BenchError::FillInterrupted {
                path: path.to_path_buf(),
                done: off,
            });
        }
        let chunk = &mut buf[..len];
        stamp::stamp_cached(chunk, off, seed, 0, &mut crcs);
        st.write_at(chunk, off)
            .map_err(|e| BenchError::io("fill", path, e))?;
        off += len as u64;
    }
    if off < to {
        st.set_len(to)
            .map_err(|e| BenchError::io("extend", path, e))?;
    }
    Ok(off - from)
}
