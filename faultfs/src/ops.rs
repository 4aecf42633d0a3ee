//! The `fuser::Filesystem` implementation: each kernel request mapped to the backing directory.
//!
//! Every open replies FOPEN_DIRECT_IO, so the kernel page cache never hides a fault:
//! each application read and write reaches `read`/`write` here as one request.

use fuser::{
    Errno, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, WriteFlags,
};
use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::control::{ControlHandle, CONTROL_INO, CONTROL_NAME};
use crate::fs::{control_attr, lock, FaultFs, Handle};
use crate::{io, sys};

/// Attributes are never cached: tests change backing files behind the kernel's back.
const TTL: Duration = Duration::ZERO;

fn open_flags() -> FopenFlags {
    FopenFlags::FOPEN_DIRECT_IO | FopenFlags::FOPEN_PARALLEL_DIRECT_WRITES
}

/// A file name of the flat root, as UTF-8.
fn root_name(parent: INodeNo, name: &OsStr) -> Result<&str, Errno> {
    if parent != INodeNo::ROOT {
        return Err(Errno::ENOENT);
    }
    name.to_str().ok_or(Errno::EINVAL)
}

/// Backing-file open options for FUSE open flags; always readable, since stale reads
/// must read the old bytes before a write.
fn backing_options(flags: i32) -> OpenOptions {
    let mut o = OpenOptions::new();
    o.read(true).write(flags & libc::O_ACCMODE != libc::O_RDONLY);
    o
}

impl FaultFs {
    fn attr_of(&self, ino: INodeNo) -> Result<fuser::FileAttr, Errno> {
        match ino.0 {
            1 => self.root_attr(),
            CONTROL_INO => Ok(control_attr()),
            n => {
                let name = self.name_of(n).ok_or(Errno::ENOENT)?;
                self.file_attr(n, &name)
            }
        }
    }

    fn do_lookup(&self, parent: INodeNo, name: &OsStr) -> Result<fuser::FileAttr, Errno> {
        let name = root_name(parent, name)?;
        if name == CONTROL_NAME {
            return Ok(control_attr());
        }
        let ino = self.ino_for(name);
        self.file_attr(ino, name)
    }

    fn do_create(&self, parent: INodeNo, name: &OsStr, mode: u32, flags: i32) -> Result<(fuser::FileAttr, u64), Errno> {
        let name = root_name(parent, name)?;
        if name == CONTROL_NAME {
            return Err(Errno::EEXIST);
        }
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

    fn do_open(&self, ino: INodeNo, flags: i32) -> Result<u64, Errno> {
        if ino.0 == CONTROL_INO {
            let h = Arc::new(Mutex::new(ControlHandle::default()));
            return Ok(self.add_handle(Handle::Control(h)));
        }
        let name = self.name_of(ino.0).ok_or(Errno::ENOENT)?;
        let file = backing_options(flags)
            .open(self.backing_path(&name))
            .map_err(Errno::from)?;
        Ok(self.add_handle(Handle::File(ino.0, Arc::new(file))))
    }

    fn do_setattr(&self, ino: INodeNo, mode: Option<u32>, size: Option<u64>, fh: Option<FileHandle>) -> Result<fuser::FileAttr, Errno> {
        if ino.0 == CONTROL_INO || ino == INodeNo::ROOT {
            return self.attr_of(ino);
        }
        let name = self.name_of(ino.0).ok_or(Errno::ENOENT)?;
        let path = self.backing_path(&name);
        if let Some(size) = size {
            let file = match fh.map(|fh| self.handle(fh.0)) {
                Some(Ok(Handle::File(_, f))) => f,
                _ => Arc::new(OpenOptions::new().write(true).open(&path).map_err(Errno::from)?),
            };
            file.set_len(size).map_err(Errno::from)?;
        }
        if let Some(mode) = mode {
            use std::os::unix::fs::PermissionsExt;
            let perm = std::fs::Permissions::from_mode(mode & 0o7777);
            std::fs::set_permissions(&path, perm).map_err(Errno::from)?;
        }
        self.file_attr(ino.0, &name)
    }

    fn file_handle(&self, fh: FileHandle) -> Result<Arc<File>, Errno> {
        match self.handle(fh.0)? {
            Handle::File(_, f) => Ok(f),
            Handle::Control(_) => Err(Errno::EINVAL),
        }
    }

    fn do_read(&self, ino: INodeNo, fh: FileHandle, off: u64, size: u32, flags: i32) -> Result<Vec<u8>, Errno> {
        match self.handle(fh.0)? {
            Handle::Control(c) => Ok(lock(&c).read(self, size as usize)),
            Handle::File(_, file) => {
                io::check_direct(self, flags, off, size.into())?;
                let name = self.name_of(ino.0).unwrap_or_default();
                io::read(self, &file, &name, off, size.into())
            }
        }
    }

    fn do_write(&self, ino: INodeNo, fh: FileHandle, off: u64, data: &[u8], flags: i32) -> Result<u32, Errno> {
        match self.handle(fh.0)? {
            Handle::Control(c) => lock(&c).write(self, data).map(|()| data.len() as u32),
            Handle::File(_, file) => {
                io::check_direct(self, flags, off, data.len() as u64)?;
                let name = self.name_of(ino.0).unwrap_or_default();
                io::write(self, &file, &name, off, data)
            }
        }
    }

    fn do_readdir(&self, ino: INodeNo, offset: u64, reply: &mut ReplyDirectory) -> Result<(), Errno> {
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

/// Replies to `reply` with the result of `r`, or its error.
macro_rules! answer {
    ($reply:expr, $r:expr, |$v:ident| $ok:expr) => {
        match $r {
            Ok($v) => $ok,
            Err(e) => $reply.error(e),
        }
    };
}

impl Filesystem for FaultFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        answer!(reply, self.do_lookup(parent, name), |a| reply.entry(&TTL, &a, Generation(0)));
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        answer!(reply, self.attr_of(ino), |a| reply.attr(&TTL, &a));
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<std::time::SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<std::time::SystemTime>,
        _chgtime: Option<std::time::SystemTime>,
        _bkuptime: Option<std::time::SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        answer!(reply, self.do_setattr(ino, mode, size, fh), |a| reply.attr(&TTL, &a));
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let r = root_name(parent, name).and_then(|n| {
            std::fs::remove_file(self.backing_path(n)).map_err(Errno::from)?;
            self.forget_name(n);
            Ok(())
        });
        answer!(reply, r, |_v| reply.ok());
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let r = (|| {
            let (from, to) = (root_name(parent, name)?, root_name(newparent, newname)?);
            if !flags.is_empty() || from == CONTROL_NAME || to == CONTROL_NAME {
                return Err(Errno::EINVAL);
            }
            std::fs::rename(self.backing_path(from), self.backing_path(to)).map_err(Errno::from)?;
            self.rename_name(from, to);
            Ok(())
        })();
        answer!(reply, r, |_v| reply.ok());
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        answer!(reply, self.do_open(ino, flags.0), |fh| reply.opened(FileHandle(fh), open_flags()));
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        answer!(reply, self.do_read(ino, fh, offset, size, flags.0), |d| reply.data(&d));
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        answer!(reply, self.do_write(ino, fh, offset, data, flags.0), |n| reply.written(n));
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, _lo: LockOwner, reply: ReplyEmpty) {
        let r = match self.handle(fh.0) {
            Ok(Handle::Control(c)) => lock(&c).flush(self),
            Ok(Handle::File(..)) => Ok(()),
            Err(e) => Err(e),
        };
        answer!(reply, r, |_v| reply.ok());
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.remove_handle(fh.0);
        reply.ok();
    }

    fn fsync(&self, _req: &Request, _ino: INodeNo, fh: FileHandle, datasync: bool, reply: ReplyEmpty) {
        let r = match self.handle(fh.0) {
            Ok(Handle::File(_, f)) if datasync => f.sync_data().map_err(Errno::from),
            Ok(Handle::File(_, f)) => f.sync_all().map_err(Errno::from),
            Ok(Handle::Control(_)) => Ok(()),
            Err(e) => Err(e),
        };
        answer!(reply, r, |_v| reply.ok());
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        answer!(reply, self.do_readdir(ino, offset, &mut reply), |_v| reply.ok());
    }

    fn fsyncdir(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        let r = File::open(self.backing_dir()).and_then(|d| d.sync_all());
        answer!(reply, r.map_err(Errno::from), |_v| reply.ok());
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        answer!(reply, sys::statvfs(self.backing_dir()).map_err(Errno::from), |s| {
            reply.statfs(s.blocks, s.bfree, s.bavail, s.files, s.ffree, s.bsize, s.namelen, s.frsize)
        });
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        answer!(reply, self.do_create(parent, name, mode & !umask, flags), |v| {
            reply.created(&TTL, &v.0, Generation(0), FileHandle(v.1), open_flags())
        });
    }

    fn fallocate(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let r = self
            .file_handle(fh)
            .and_then(|f| sys::fallocate(&f, mode, offset, length).map_err(Errno::from));
        answer!(reply, r, |_v| reply.ok());
    }
}
