//! Test files: the `SQLIOSIM-BENCH` header that marks files we created, creating and filling
//! them with stamped incompressible data (through the `io` door: `target::fill`), and opening
//! them with the requested flags.
//!
//! Layout: the first 4 KiB hold a text header (`SQLIOSIM-BENCH v2`, the seed, the size);
//! the rest of the first MiB is unused, so that I/O starts 1 MiB-aligned like a partition;
//! the measured region is `[1 MiB, size)` rounded down to whole blocks.

use super::error::BenchError;
use crate::io::file::FileStorage;
use fill::{fill_and_seal, open_for_fill, open_probe, write_header};
use rand::Rng;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::AtomicBool;

mod fill;
mod header;

pub use header::{read_header, Header, MAGIC};

/// Where measured I/O begins.
pub const DATA_OFFSET: u64 = 1 << 20;
const FILL_CHUNK: usize = 1 << 20;

/// How the file is opened for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenMode {
    /// O_DIRECT.
    pub direct: bool,
    /// O_DSYNC (write-through).
    pub dsync: bool,
    /// Open for writing too.
    pub write: bool,
}

/// What `prepare` found or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// The seed in the file's header (stamps carry it).
    pub seed: u64,
    /// Size of the file now.
    pub size: u64,
    /// Bytes written to create or extend it (0 when it was ready).
    pub filled: u64,
}

/// Opens `path` with the flags of `mode`, through the io layer: the handle the ring
/// registers with io_uring.
pub fn open(path: &Path, mode: OpenMode, device: Option<u64>) -> Result<FileStorage, BenchError> {
    let opts = crate::io::OpenOptions {
        create: false,
        direct: mode.direct,
        write_through: mode.dsync,
    };
    let f = crate::io::direct::open_existing_file(path, opts, mode.write, device.is_some())
        .map_err(|e| fill::bench_error("open", path, e))?;
    check_opened(f.file(), path, device)?;
    Ok(f)
}

/// What a run will do with its target, which decides what preparing it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Overwrite what is not ours.
    pub force: bool,
    /// Fill with O_DIRECT.
    pub direct: bool,
    /// The run writes.
    pub write: bool,
    /// The run checks stamps of what it reads.
    pub verify: bool,
    /// The run writes blocks without stamps (`--data zeros`, or blocks or offsets that are
    /// not multiples of 4 KiB): the header then says so before the first write.
    pub unstamped_writes: bool,
    /// The block device claimed for the run (`st_rdev`; None for a file): every open that
    /// may write must reach it, and a file's must reach no device.
    pub device: Option<u64>,
}

/// The header of a target that is reused as it is.
#[derive(Debug, Clone, Copy)]
struct Reused {
    seed: u64,
    /// How far it is prepared (the header's `size=`).
    size: u64,
    /// Its stamps are intact (`stamps=` is not `broken`).
    intact: bool,
}

/// What an existing header lets a run do: reuse the target, or `None` when it must be
/// (re)filled from the start; refuses what must not happen.
fn reusable(path: &Path, header: Header, access: Access) -> Result<Option<Reused>, BenchError> {
    match header {
        Header::Ours { intact: false, .. } if access.verify && !access.force => {
            Err(BenchError::StampsBroken {
                path: path.to_path_buf(),
            })
        }
        Header::Ours { intact: false, .. } if access.verify => Ok(None),
        Header::Ours { seed, size, intact } => Ok(Some(Reused { seed, size, intact })),
        Header::OursOld | Header::Foreign => Ok(None),
    }
}

/// Marks the header's stamps as broken before a run that writes unstamped blocks, unless
/// they are already marked; `size` is the prepared size the header records.
fn mark_unstamped(
    path: &Path,
    access: Access,
    seed: u64,
    size: u64,
    intact: bool,
) -> Result<(), BenchError> {
    if !access.unstamped_writes || !intact {
        return Ok(());
    }
    let file = open_for_fill(path, access)?;
    write_header(&*file, path, seed, size, false)?;
    file.sync_data()
        .map_err(|e| BenchError::io("sync", path, e))
}

/// True when `path` is a block device.
pub fn is_block_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// The device number (`st_rdev`) of the block device at `path`, if it is one.
pub fn device_number(path: &Path) -> Option<u64> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = std::fs::metadata(path).ok()?;
    m.file_type().is_block_device().then(|| m.rdev())
}

/// Size of the block device at `path` in bytes (its end, as `lseek` reports it).
pub fn device_size(path: &Path) -> Result<u64, BenchError> {
    use std::io::{Seek, SeekFrom};
    let f = open_probe(path).map_err(|e| fill::bench_error("open", path, e))?;
    f.file()
        .seek(SeekFrom::End(0))
        .map_err(|e| BenchError::io("size", path, e))
}

/// The size a run on `path` uses when none is given: an existing bench file's size, a
/// block device's prepared size (its header) or whole size, else 1 GiB for a new file.
pub fn default_size(path: &Path) -> u64 {
    let header = open_probe(path).map_or(Header::Foreign, |f| read_header(f.file()));
    if is_block_device(path) {
        return match header {
            Header::Ours { size, .. } if size > 0 => size,
            _ => device_size(path).unwrap_or(0),
        };
    }
    match std::fs::metadata(path) {
        Ok(m) if header != Header::Foreign => m.len(),
        _ => 1 << 30,
    }
}

/// Makes a block device ready for a run over `[0, size)`, `size` capped at the device.
///
/// A device is never written unless it carries our header or `force` is given. A device
/// that is not ours can still be read (`--rw read` without `--verify`): nothing is written
/// and the run reads whatever is there, as fio would.
fn prepare_device(
    path: &Path,
    size: u64,
    access: Access,
    stop: &AtomicBool,
) -> Result<Prepared, BenchError> {
    let whole = device_size(path)?;
    let size = size.min(whole) / 4096 * 4096;
    if size < DATA_OFFSET + 4096 {
        return Err(BenchError::Usage(format!(
            "{}: the device ({whole} bytes, using {size}) leaves no room after the 1 MiB \
             header area",
            path.display()
        )));
    }
    let probe = open_probe(path).map_err(|e| fill::bench_error("open", path, e))?;
    let header = read_header(probe.file());
    let new = Reused {
        seed: rand::rng().random::<u64>(),
        size: DATA_OFFSET,
        intact: true,
    };
    let r = match (reusable(path, header, access)?, header) {
        (Some(r), _) => r,
        (None, Header::Ours { .. } | Header::OursOld) => new,
        (None, Header::Foreign) if access.force => new,
        (None, Header::Foreign) if !access.write && !access.verify => {
            return Ok(Prepared {
                seed: 0,
                size,
                filled: 0,
            })
        }
        (None, Header::Foreign) => {
            return Err(BenchError::DeviceNotOurs {
                path: path.to_path_buf(),
                verify: access.verify,
            })
        }
    };
    let (seed, fill_from) = (r.seed, r.size.max(DATA_OFFSET));
    let (filled, recorded) = if fill_from >= size {
        (0, r.size)
    } else if !(access.write || access.verify || access.force) {
        // A read run never claimed the device (bench::inuse), so it never writes it, not
        // even to extend our own fill: the device may be in use by now.
        return Err(BenchError::Usage(format!(
            "{}: the device is prepared up to {} bytes of the {size} asked; a read run does not write it: give --size {} or less, or prepare it with a write run (or --verify)",
            path.display(),
            r.size,
            r.size
        )));
    } else {
        let file = open_for_fill(path, access)?;
        write_header(&*file, path, seed, fill_from, r.intact)?;
        let filled = fill_and_seal(&*file, path, seed, (fill_from, size), r.intact, stop)?;
        (filled, size)
    };
    mark_unstamped(path, access, seed, recorded, r.intact)?;
    Ok(Prepared { seed, size, filled })
}

/// Makes `path` a bench file of at least `size` bytes: creates and fills it when missing,
/// extends it when ours and short, refuses a foreign non-empty file unless `force`. Block
/// devices are handled by `prepare_device`.
///
/// The header is written before the data, so a fill cut short by `stop` leaves a file that is
/// ours and shorter than asked: the next run carries on from where this one stopped.
pub fn prepare(
    path: &Path,
    size: u64,
    access: Access,
    stop: &AtomicBool,
) -> Result<Prepared, BenchError> {
    use std::os::unix::fs::FileTypeExt;
    let Access { force, .. } = access;
    let existing = std::fs::metadata(path).ok();
    if existing.is_none() && crate::io::nodes::among_device_nodes(path) {
        return Err(BenchError::NoSuchDevice {
            path: path.to_path_buf(),
        });
    }
    if let Some(m) = &existing {
        if m.file_type().is_block_device() {
            return prepare_device(path, size, access, stop);
        }
        if !m.is_file() {
            return Err(BenchError::Usage(format!(
                "{} is neither a regular file nor a block device",
                path.display()
            )));
        }
    }
    check_planted(path)?;
    let old_len = existing.map(|m| m.len()).unwrap_or(0);
    let probe = if old_len > 0 {
        Some(open_probe(path).map_err(|e| fill::bench_error("open", path, e))?)
    } else {
        None
    };
    let header = probe
        .as_ref()
        .map_or(Header::Foreign, |p| read_header(p.file()));
    let ours = reusable(path, header, access)?;
    let (seed, fill_from) = match ours {
        Some(r) => (r.seed, old_len.max(DATA_OFFSET)),
        None if old_len == 0 || force || header != Header::Foreign => {
            (rand::rng().random::<u64>(), DATA_OFFSET)
        }
        None => {
            return Err(BenchError::NotOurs {
                path: path.to_path_buf(),
            })
        }
    };
    let size = size.max(old_len);
    let intact = ours.is_none_or(|r| r.intact);
    let (filled, recorded) = match ours {
        Some(r) if fill_from >= size => (0, r.size),
        _ => {
            let file = open_for_fill(path, access)?;
            if ours.is_none() {
                // Taking over an empty, old or (with --force) foreign file: drop its old content
                // so that an interrupted fill cannot leave unstamped blocks behind a valid header.
                file.set_len(0)
                    .map_err(|e| BenchError::io("truncate", path, e))?;
                write_header(&*file, path, seed, size, true)?;
            }
            let from = fill_from / 4096 * 4096;
            (
                fill_and_seal(&*file, path, seed, (from, size), intact, stop)?,
                size,
            )
        }
    };
    mark_unstamped(path, access, seed, recorded, intact)?;
    Ok(Prepared { seed, size, filled })
}

/// Refuses a bench file (not a device) whose name is a symlink or has other hard links: a
/// name planted in a shared directory would have the run write another file (a symlink to a
/// block device, as /dev/disk/by-id has, is the device's business: `prepare_device`).
fn check_planted(path: &Path) -> Result<(), BenchError> {
    use crate::io::safefile::{problem_of, SafeFileError, Use};
    let Ok(st) = rustix::fs::lstat(path) else {
        return Ok(());
    };
    match problem_of(&st, Use::Named) {
        Some(problem) => Err(BenchError::io(
            "open",
            path,
            SafeFileError::Refused {
                path: path.to_path_buf(),
                problem,
            }
            .into(),
        )),
        None => Ok(()),
    }
}

/// Refuses an opened target that is not what was checked: another block device than the one
/// claimed (`device`), a block device where a file was checked (a name swapped for a symlink
/// between the check and the open; the in-use checks and the exclusive claim hold only for
/// the device they were made on), or a file with other hard links (one planted since
/// `check_planted`: the truncation, the fill and the run would reach its victim).
pub fn check_opened(file: &File, path: &Path, device: Option<u64>) -> Result<(), BenchError> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = file
        .metadata()
        .map_err(|e| BenchError::io("stat", path, e))?;
    let now = m.file_type().is_block_device().then(|| m.rdev());
    if now == device && device.is_some() {
        return Ok(());
    }
    if now == device {
        use crate::io::safefile::{check_fd, Use};
        return check_fd(file, path, Use::Named)
            .map_err(|e| BenchError::io("open", path, e.into()));
    }
    Err(BenchError::Usage(format!(
        "{}: the name now reaches {}, not the {} checked before it was opened (was it swapped?): refused, nothing written",
        path.display(),
        what(now),
        what(device)
    )))
}

fn what(device: Option<u64>) -> String {
    match device {
        Some(rdev) => format!(
            "block device {}:{}",
            rustix::fs::major(rdev),
            rustix::fs::minor(rdev)
        ),
        None => "file".to_string(),
    }
}

/// Installed RAM in bytes, from `/proc/meminfo` (0 when unknown).
pub fn ram_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
