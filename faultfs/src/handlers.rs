//! Request handlers behind the `Filesystem` methods: each returns a Result so ops.rs
//! only has to turn it into a reply.
//!
//! Every open replies FOPEN_DIRECT_IO, so the kernel page cache never hides a fault:
//! each application read and write reaches `do_read`/`do_write` as one request.

use fuser::{Errno, FileHandle, FileType, FopenFlags, INodeNo, ReplyDirectory};
use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::control::{ControlHandle, CONTROL_INO, CONTROL_NAME};
use crate::fs::{control_attr, lock, FaultFs, Handle};
use crate::{io, sys};
/// Attributes are never cached: tests change backing files behind the kernel's back.
pub const TTL: Duration = Duration::ZERO;

/// Flags of every open: bypass the page cache; let parallel direct writes through.
pub fn open_flags() -> FopenFlags {
    FopenFlags::FOPEN_DIRECT_IO | FopenFlags::FOPEN_PARALLEL_DIRECT_WRITES
}

/// A file name of the flat root, as UTF-8.
pub fn root_name(parent: INodeNo, name: &OsStr) -> Result<&str, Errno> {
    if parent != INodeNo::ROOT {
        return Err(Errno::ENOENT);
    }
    name.to_str().ok_or(Errno::EINVAL)
}

/// Backing-file open options for FUSE open flags; always readable, since stale reads
/// must read the old bytes before a write.
fn backing_options(flags: i32) -> OpenOptions {
    let mut o = OpenOptions::new();
    o.read(true)
        .write(flags & libc::O_ACCMODE != libc::O_RDONLY);
    o
}

impl FaultFs {
    /// Attributes of any inode: root, control file or a backing file.
    pub fn attr_of(&self, ino: INodeNo) -> Result<fuser::FileAttr, Errno> {
        match ino.0 {
            1 => self.root_attr(),
            CONTROL_INO => Ok(control_attr()),
            n => {
                let name = self.name_of(n).ok_or(Errno::ENOENT)?;
                self.file_attr(n, &name)
            }
        }
    }

    /// Looks a name up in the flat root.
    pub fn do_lookup(&self, parent: INodeNo, name: &OsStr) -> Result<fuser::FileAttr, Errno> {
        let name = root_name(parent, name)?;
        if name == CONTROL_NAME {
            return Ok(control_attr());
        }
        // Check first, so probes for missing names do not fill the inode map.
        let mut attr = self.file_attr(0, name)?;
        let ino = self.ino_for(name);
        attr.ino = INodeNo(ino);
        attr.size = self.shown_size(ino, attr.size);
        Ok(attr)
    }

    /// Creates (or opens) a backing file and returns its attributes and handle.
    pub fn do_create(
        &self,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        flags: i32,
    ) -> Result<(fuser::FileAttr, u64), Errno> {
        let name = root_name(parent, name)?;
        if name == CONTROL_NAME {
            return Err(Errno::EEXIST);
        }
        self.check_open_flags(flags)?;
        let mut o = backing_options(flags);
        o.write(true).mode(mode);
        if flags & libc::O_EXCL != 0 {
            o.create_new(true);
        } else {
            o.create(true);
        }
        let file = o.open(self.backing_path(name)).map_err(Errno::from)?;
        let ino = self.ino_for(name);
        let attr = self.file_attr(ino, name)?;
        Ok((attr, self.add_handle(Handle::File(ino, Arc::new(file)))))
    }

    /// With `--refuse-direct`, an open asking for O_DIRECT fails with EINVAL.
    fn check_open_flags(&self, flags: i32) -> Result<(), Errno> {
        if self.refuse_direct && flags & libc::O_DIRECT != 0 {
            if self.verbose {
                eprintln!("faultfs: refused an O_DIRECT open (--refuse-direct)");
            }
            return Err(Errno::EINVAL);
        }
        Ok(())
    }

    /// Opens the control file or a backing file; returns the handle number.
    pub fn do_open(&self, ino: INodeNo, flags: i32) -> Result<u64, Errno> {
        if ino.0 == CONTROL_INO {
            let h = Arc::new(Mutex::new(ControlHandle::default()));
            return Ok(self.add_handle(Handle::Control(h)));
        }
        let name = self.name_of(ino.0).ok_or(Errno::ENOENT)?;
        self.check_open_flags(flags)?;
        let file = backing_options(flags)
            .open(self.backing_path(&name))
            .map_err(Errno::from)?;
        Ok(self.add_handle(Handle::File(ino.0, Arc::new(file))))
    }

    /// Applies size (truncate/extend) and mode changes; other attributes are ignored.
    pub fn do_setattr(
        &self,
        ino: INodeNo,
        mode: Option<u32>,
        size: Option<u64>,
        fh: Option<FileHandle>,
    ) -> Result<fuser::FileAttr, Errno> {
        if ino.0 == CONTROL_INO || ino == INodeNo::ROOT {
            return self.attr_of(ino);
        }
        let name = self.name_of(ino.0).ok_or(Errno::ENOENT)?;
        let path = self.backing_path(&name);
        if let Some(size) = size {
            let file = match fh.map(|fh| self.handle(fh.0)) {
                Some(Ok(Handle::File(_, f))) => f,
                _ => Arc::new(
                    OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .map_err(Errno::from)?,
                ),
            };
            self.set_len_through(ino.0, &file, size)?;
        }
        if let Some(mode) = mode {
            use std::os::unix::fs::PermissionsExt;
            let perm = std::fs::Permissions::from_mode(mode & 0o7777);
            std::fs::set_permissions(&path, perm).map_err(Errno::from)?;
        }
        self.file_attr(ino.0, &name)
    }

    /// The backing file of handle `fh`; EINVAL for the control file.
    pub fn file_handle(&self, fh: FileHandle) -> Result<Arc<File>, Errno> {
        match self.handle(fh.0)? {
            Handle::File(_, f) => Ok(f),
            Handle::Control(_) => Err(Errno::EINVAL),
        }
    }

    /// Serves a read of the control file or of a regular file.
    pub fn do_read(
        &self,
        ino: INodeNo,
        fh: FileHandle,
        off: u64,
        size: u32,
        flags: i32,
    ) -> Result<Vec<u8>, Errno> {
        match self.handle(fh.0)? {
            Handle::Control(c) => Ok(lock(&c).read(self, size as usize)),
            Handle::File(_, file) => {
                io::check_direct(self, flags, off, size.into())?;
                let name = self.name_of(ino.0).unwrap_or_default();
                io::read(self, ino.0, &file, &name, off, size.into())
            }
        }
    }

    /// Serves a write to the control file or to a regular file.
    pub fn do_write(
        &self,
        ino: INodeNo,
        fh: FileHandle,
        off: u64,
        data: &[u8],
        flags: i32,
    ) -> Result<u32, Errno> {
        match self.handle(fh.0)? {
            Handle::Control(c) => lock(&c).write(self, data).map(|()| data.len() as u32),
            Handle::File(_, file) => {
                io::check_direct(self, flags, off, data.len() as u64)?;
                let name = self.name_of(ino.0).unwrap_or_default();
                let n = io::write(self, ino.0, &file, &name, off, data)?;
                self.requests.writes.fetch_add(1, Ordering::Relaxed);
                // O_DSYNC/O_SYNC writes must be durable when acknowledged, as on a disk;
                // the backing file is buffered (and the write may be cached), so write it
                // back and sync it (O_SYNC includes the O_DSYNC bit).
                if flags & libc::O_DSYNC != 0 {
                    self.requests.dsync_writes.fetch_add(1, Ordering::Relaxed);
                }
                if flags & libc::O_DSYNC != 0 && !self.ignore_dsync {
                    let end = off + data.len() as u64;
                    self.make_durable(ino.0, &file, off, end, true)?;
                }
                Ok(n)
            }
        }
    }

    /// Lists the root: `.`, `..`, the control file, then the backing files by name.
    pub fn do_readdir(
        &self,
        ino: INodeNo,
        offset: u64,
        reply: &mut ReplyDirectory,
    ) -> Result<(), Errno> {
        if ino != INodeNo::ROOT {
            return Err(Errno::ENOTDIR);
        }
        let mut entries = vec![
            (1, FileType::Directory, ".".to_string()),
            (1, FileType::Directory, "..".to_string()),
            (CONTROL_INO, FileType::RegularFile, CONTROL_NAME.to_string()),
        ];
        for name in sys::regular_files(self.backing_dir()).map_err(Errno::from)? {
            entries.push((self.ino_for(&name), FileType::RegularFile, name));
        }
        for (i, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(ino), i as u64 + 1, kind, &name) {
                break;
            }
        }
        Ok(())
    }
}
