//! The direct backend: files opened with O_DIRECT (and O_DSYNC in FUA mode), and what
//! the filesystem says about direct I/O (statx STATX_DIOALIGN, statfs magic).
//!
//! tmpfs, btrfs and FUSE accept O_DIRECT without enforcing it (machine.md §3): they report no
//! DIOALIGN, and [`DirectIoInfo::honoured`] is false there so the caller can warn or refuse.
//! [`o_direct_honoured`] is that rule, the one both the simulator and bench apply.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fd::AsFd;
use rustix::fs::{AtFlags, Mode, OFlags, Statx, StatxFlags, CWD};

use super::file::FileStorage;
use super::safefile::{Create, Dir, SafeFileError, Use};
use super::{Backend, DirectIoInfo, IoError, OpenOptions, Storage};

/// statfs magic numbers of the filesystems this tool knows about.
const FS_MAGICS: [(u64, &str); 8] = [
    (0xEF53, "ext4"),
    (0x5846_5342, "xfs"),
    (0x9123_683E, "btrfs"),
    (0x0102_1994, "tmpfs"),
    (0x6573_5546, "fuse"),
    (0x6969, "nfs"),
    (0x794C_7630, "overlayfs"),
    (0x2FC1_2FC1, "zfs"),
];

/// Filesystems that accept O_DIRECT without honouring it.
const NOT_HONOURED: [&str; 3] = ["tmpfs", "btrfs", "fuse"];

/// Filesystems known to honour O_DIRECT, on which kernels before 6.1 report no statx
/// DIOALIGN (it came with 6.1): their silence says nothing against them.
const KNOWN_HONOURING: [&str; 3] = ["ext4", "xfs", "nfs"];

/// Whether O_DIRECT on a file of `filesystem` bypasses the page cache, from the two facts the
/// kernel gives: the filesystem (statfs magic, named by [`fs_name`]) and whether statx
/// reported a DIOALIGN for the file. Never on tmpfs, btrfs and FUSE (they accept O_DIRECT
/// without enforcing it); elsewhere when DIOALIGN was reported, or without it on a filesystem
/// known to honour O_DIRECT (a kernel before 6.1). The one rule of the simulator's
/// [`DirectIoInfo::honoured`] and bench's `direct_io.honoured` (issue #22 §8).
pub fn o_direct_honoured(filesystem: &str, dioalign_reported: bool) -> bool {
    if NOT_HONOURED.contains(&filesystem) {
        return false;
    }
    dioalign_reported || KNOWN_HONOURING.contains(&filesystem)
}

/// The name of the filesystem whose statfs magic is `magic`, if this tool knows it.
pub fn fs_name(magic: u64) -> Option<&'static str> {
    let magic = magic & 0xFFFF_FFFF;
    FS_MAGICS.iter().find(|(m, _)| *m == magic).map(|(_, n)| *n)
}

/// Filesystems that get no flush for an `O_DSYNC` write, only the flag on the write request:
/// the kernel sends FUSE no fsync after an io_uring or libaio write, nor after any write to a
/// file its daemon opened FOPEN_DIRECT_IO (measured with scripts/dsync-flushes.sh, see
/// docs/durability.md). ext4, XFS and btrfs flush (or FUA) every such write whatever submits it.
const DSYNC_NOT_FLUSHED: [&str; 1] = ["fuse"];

/// True when an `O_DSYNC` write on `filesystem` reaches the medium when it completes,
/// whatever submits it; false where the tool must follow it with an fdatasync itself.
pub fn dsync_flushed(filesystem: &str) -> bool {
    !DSYNC_NOT_FLUSHED.contains(&filesystem)
}

/// Opens files with O_DIRECT (unless `OpenOptions::direct` is false).
#[derive(Debug, Default, Clone, Copy)]
pub struct DirectBackend;

impl DirectBackend {
    /// The direct backend.
    pub fn new() -> DirectBackend {
        DirectBackend
    }
}

/// O_DSYNC itself. rustix's `OFlags::DSYNC` is O_SYNC on Linux (its linux_raw backend), which
/// makes every write also wait for the file's metadata (mtime): strace of a WriteThrough run
/// showed `O_SYNC` before issue #24 §3. SQL Server on Linux's FUA mode, and SQLIOSim's
/// write-through, ask for data integrity only: O_DSYNC.
const O_DSYNC: OFlags = OFlags::from_bits_retain(libc::O_DSYNC as u32);

/// Opens a data or log file of the set with the given extra open(2) flags, through
/// [`safefile`](super::safefile): never following a symlink, never waiting on a FIFO, and
/// refusing anything but a regular file with one link (a hard link to another run's file).
fn open_file(
    path: &Path,
    opts: OpenOptions,
    mut flags: OFlags,
) -> Result<std::fs::File, SafeFileError> {
    if opts.write_through {
        flags |= O_DSYNC;
    }
    let how = if opts.create {
        Create::Either
    } else {
        Create::Existing
    };
    let (dir, name) = Dir::of(path)?;
    dir.open_with(&name, how, Use::Named, flags)
}

pub(crate) fn os_error(path: &Path, what: &'static str, source: std::io::Error) -> IoError {
    IoError::Os {
        path: path.to_path_buf(),
        what,
        source,
    }
}

/// Opens `path` as the direct backend does (O_DIRECT when `opts.direct`), for every backend
/// that reaches a real file: the same flags, mode and errors everywhere.
pub(crate) fn open_storage(path: &Path, opts: OpenOptions) -> Result<FileStorage, IoError> {
    let opened = open_file(path, opts, direct_flag(opts));
    storage_of(opened, path, path, opts, "cannot open")
}

/// A new file with no name in directory `dir` (`O_TMPFILE`), opened as [`open_storage`] opens
/// (O_DIRECT when `opts.direct`), for a file the tool needs only while it holds it: nothing
/// planted can take its place, and nothing is left when the process ends.
pub(crate) fn unnamed_storage(dir: &Path, opts: OpenOptions) -> Result<FileStorage, IoError> {
    let opened = Dir::open(dir).and_then(|d| d.unnamed_file(direct_flag(opts)));
    storage_of(
        opened,
        &dir.join("(an unnamed file)"),
        dir,
        opts,
        "cannot create",
    )
}

fn direct_flag(opts: OpenOptions) -> OFlags {
    if opts.direct {
        OFlags::DIRECT
    } else {
        OFlags::empty()
    }
}

/// The storage of a file just opened at `path` (on the filesystem of `fs_path`), or the error
/// as the direct backend says it: EINVAL to an O_DIRECT open is direct I/O refused.
fn storage_of(
    opened: Result<std::fs::File, SafeFileError>,
    path: &Path,
    fs_path: &Path,
    opts: OpenOptions,
    what: &'static str,
) -> Result<FileStorage, IoError> {
    match opened {
        Ok(file) => {
            let unit = file_io_info(&file, path).unit();
            Ok(FileStorage::new(file, path.to_path_buf()).with_dio_align(unit))
        }
        Err(SafeFileError::Os { source, .. })
            if opts.direct && source.raw_os_error() == Some(libc::EINVAL) =>
        {
            Err(IoError::DirectRefused {
                path: path.to_path_buf(),
                filesystem: filesystem_name(fs_path),
                source,
            })
        }
        Err(SafeFileError::Os { source, .. }) => Err(os_error(path, what, source)),
        Err(e) => Err(e.into()),
    }
}

/// Opens an existing file or device as a ring's file (capacity runs, verify): read-only unless
/// `write`, O_DIRECT when `opts.direct`, O_DSYNC when `opts.write_through`; never creates,
/// never waits on a FIFO, and follows a symlink only when `follow` (a device named through
/// /dev/disk/by-id: the caller then checks what it reached).
pub fn open_existing_file(
    path: &Path,
    opts: OpenOptions,
    write: bool,
    follow: bool,
) -> Result<FileStorage, IoError> {
    let mut flags = if opts.direct { libc::O_DIRECT } else { 0 };
    flags |= libc::O_NONBLOCK;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    if opts.write_through {
        flags |= libc::O_DSYNC;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| os_error(path, "cannot open", e))?;
    // O_NONBLOCK only kept the open from waiting on a FIFO: io_uring would turn it into
    // EAGAIN for every request, so it goes once the descriptor is known to be a file or device.
    let st = rustix::fs::fstat(&file).map_err(|e| os_error(path, "cannot stat", e.into()))?;
    let kind = rustix::fs::FileType::from_raw_mode(st.st_mode);
    if !matches!(
        kind,
        rustix::fs::FileType::RegularFile | rustix::fs::FileType::BlockDevice
    ) {
        return Err(os_error(
            path,
            "refusing to use",
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "neither a regular file nor a block device",
            ),
        ));
    }
    let fl = rustix::fs::fcntl_getfl(&file).map_err(|e| os_error(path, "fcntl", e.into()))?;
    rustix::fs::fcntl_setfl(&file, fl - rustix::fs::OFlags::NONBLOCK)
        .map_err(|e| os_error(path, "fcntl", e.into()))?;
    let unit = file_io_info(&file, path).unit();
    Ok(FileStorage::new(file, path.to_path_buf()).with_dio_align(unit))
}

impl Backend for DirectBackend {
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn Storage>, IoError> {
        Ok(Arc::new(open_storage(path, opts)?))
    }
}

/// Removes a file; a missing file is not an error.
pub(crate) fn remove_file(path: &Path) -> Result<(), IoError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(os_error(path, "cannot remove", e))
        }
        _ => Ok(()),
    }
}

/// Renames `from` over `to`, both in one directory, relative to that directory opened once
/// (a rename replaces whatever entry `to` names, never writes through it), then syncs the
/// directory so that the rename survives a power cut.
pub(crate) fn rename_file(from: &Path, to: &Path) -> Result<(), IoError> {
    let (dir, from_name) = Dir::of(from)?;
    let (to_dir, to_name) = super::safefile::split(to)?;
    if to_dir != dir.path() {
        return Err(os_error(
            to,
            "cannot rename into another directory than",
            std::io::Error::from(std::io::ErrorKind::InvalidInput),
        ));
    }
    dir.rename(&from_name, &to_name)?;
    dir.sync()?;
    Ok(())
}

/// `path` if it exists, else its nearest existing ancestor (a file not created yet).
fn existing(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    while !p.exists() {
        match p.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => p = parent.to_path_buf(),
            _ => return PathBuf::from("."),
        }
    }
    p
}

/// Name of the filesystem holding `path` ("unknown (0x…)" for magics not in the table).
pub fn filesystem_name(path: &Path) -> String {
    match rustix::fs::statfs(existing(path).as_path()) {
        Ok(st) => {
            let magic = st.f_type as u64 & 0xFFFF_FFFF;
            fs_name(magic).map_or_else(|| format!("unknown (0x{magic:x})"), str::to_string)
        }
        Err(e) => format!("unknown ({e})"),
    }
}

/// statx of `path` (or of the fd itself with `AtFlags::EMPTY_PATH`), asking for DIOALIGN.
fn statx_dio<Fd: AsFd>(fd: Fd, path: &Path, flags: AtFlags) -> Option<Statx> {
    rustix::fs::statx(
        fd,
        path,
        flags,
        StatxFlags::DIOALIGN | StatxFlags::BASIC_STATS,
    )
    .ok()
}

/// statx of `path`; for a directory (which reports no DIOALIGN), of an unnamed temporary file
/// (O_TMPFILE, gone when closed) in it, i.e. of a file not created yet.
fn statx_path(path: &Path) -> Option<Statx> {
    let target = existing(path);
    if !target.is_dir() {
        return statx_dio(CWD, target.as_path(), AtFlags::empty());
    }
    let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC;
    match rustix::fs::open(target.as_path(), flags, Mode::from_raw_mode(0o600)) {
        Ok(fd) => statx_dio(&fd, Path::new(""), AtFlags::EMPTY_PATH),
        // No O_TMPFILE here (FUSE, some network filesystems): the directory still names the
        // device, though not the DIOALIGN.
        Err(_) => statx_dio(CWD, target.as_path(), AtFlags::empty()),
    }
}

/// (memory, offset) DIOALIGN of a statx answer, when the filesystem reported it.
fn dio_of(st: &Statx) -> Option<(u32, u32)> {
    let reported = st.stx_mask & StatxFlags::DIOALIGN.bits() != 0;
    (reported && st.stx_dio_mem_align != 0 && st.stx_dio_offset_align != 0)
        .then_some((st.stx_dio_mem_align, st.stx_dio_offset_align))
}

/// statx DIOALIGN (memory, offset) of an open file, when the kernel and filesystem report it.
pub fn file_dio_align(file: &std::fs::File) -> Option<(u32, u32)> {
    statx_dio(file, Path::new(""), AtFlags::EMPTY_PATH)
        .as_ref()
        .and_then(dio_of)
}

/// statx DIOALIGN (memory, offset) for `path`, when the kernel and filesystem report it.
pub fn dio_align(path: &Path) -> Option<(u32, u32)> {
    statx_path(path).as_ref().and_then(dio_of)
}

/// Direct-I/O facts from a statx answer about `path` (a file, or the directory it will be in).
fn info_of(st: Option<&Statx>, path: &Path) -> DirectIoInfo {
    let filesystem = filesystem_name(path);
    let align = st.and_then(dio_of);
    let at = existing(path);
    let logical_block =
        st.and_then(|st| super::sysfs::device_block_size(st.stx_dev_major, st.stx_dev_minor, &at));
    let physical_block = st
        .and_then(|st| super::sysfs::device_physical_size(st.stx_dev_major, st.stx_dev_minor, &at));
    info_from(filesystem, align, logical_block, physical_block)
}

/// Direct-I/O facts from what the kernel said: the filesystem's name, the statx DIOALIGN
/// (memory, offset) if reported, the device's logical and physical block sizes if there is
/// one.
pub fn info_from(
    filesystem: String,
    align: Option<(u32, u32)>,
    logical_block: Option<u32>,
    physical_block: Option<u32>,
) -> DirectIoInfo {
    DirectIoInfo {
        physical_block,
        mem_align: align.map(|a| a.0),
        offset_align: align.map(|a| a.1),
        honoured: o_direct_honoured(&filesystem, align.is_some()),
        filesystem,
        logical_block,
    }
}

/// Direct-I/O facts for the filesystem holding `path`.
pub fn direct_io_info(path: &Path) -> DirectIoInfo {
    info_of(statx_path(path).as_ref(), path)
}

/// Direct-I/O facts for an open file (what its [`Storage::dio_align`] is decided from).
pub fn file_io_info(file: &std::fs::File, path: &Path) -> DirectIoInfo {
    let st = statx_dio(file, Path::new(""), AtFlags::EMPTY_PATH);
    info_of(st.as_ref(), path)
}
