//! The `fuser::Filesystem` implementation: each kernel request answered from handlers.rs.

use fuser::{
    Errno, FileHandle, Filesystem, Generation, INodeNo, LockOwner, OpenFlags, RenameFlags,
    ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen,
    ReplyStatfs, ReplyWrite, Request, WriteFlags,
};
use std::ffi::OsStr;
use std::fs::File;

use crate::control::CONTROL_NAME;
use crate::fs::{lock, FaultFs, Handle};
use crate::handlers::{open_flags, root_name, TTL};
use crate::sys;

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
    /// A clean unmount writes the volatile cache back, as a disk flushes at an orderly
    /// shutdown (a `kill -9` of the daemon loses it, like a power cut).
    fn destroy(&mut self) {
        if let Err(e) = self.flush_all() {
            eprintln!("faultfs: writing the volatile cache back at unmount failed: {e}");
        }
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        answer!(reply, self.do_lookup(parent, name), |a| reply.entry(
            &TTL,
            &a,
            Generation(0)
        ));
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
        answer!(reply, self.do_setattr(ino, mode, size, fh), |a| reply
            .attr(&TTL, &a));
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let r = root_name(parent, name).and_then(|n| {
            self.retire(n)?;
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
            self.retire(to)?;
            std::fs::rename(self.backing_path(from), self.backing_path(to)).map_err(Errno::from)?;
            self.rename_name(from, to);
            Ok(())
        })();
        answer!(reply, r, |_v| reply.ok());
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        answer!(reply, self.do_open(ino, flags.0), |fh| reply
            .opened(FileHandle(fh), open_flags()));
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
        answer!(reply, self.do_read(ino, fh, offset, size, flags.0), |d| {
            reply.data(&d)
        });
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
        answer!(reply, self.do_write(ino, fh, offset, data, flags.0), |n| {
            reply.written(n)
        });
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _lo: LockOwner,
        reply: ReplyEmpty,
    ) {
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

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        let r = match self.handle(fh.0) {
            Ok(Handle::File(_, f)) => {
                let n = &self.requests.fsyncs;
                n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                self.sync_file(ino.0, &f, datasync)
            }
            Ok(Handle::Control(_)) => Ok(()),
            Err(e) => Err(e),
        };
        answer!(reply, r, |_v| reply.ok());
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        answer!(reply, self.do_readdir(ino, offset, &mut reply), |_v| reply
            .ok());
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let r = File::open(self.backing_dir()).and_then(|d| d.sync_all());
        answer!(reply, r.map_err(Errno::from), |_v| reply.ok());
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        answer!(
            reply,
            sys::statvfs(self.backing_dir()).map_err(Errno::from),
            |s| {
                reply.statfs(
                    s.blocks, s.bfree, s.bavail, s.files, s.ffree, s.bsize, s.namelen, s.frsize,
                )
            }
        );
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
        answer!(
            reply,
            self.do_create(parent, name, mode & !umask, flags),
            |v| { reply.created(&TTL, &v.0, Generation(0), FileHandle(v.1), open_flags()) }
        );
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let r = self
            .file_handle(fh)
            .and_then(|f| self.fallocate_through(ino.0, &f, mode, offset, length));
        answer!(reply, r, |_v| reply.ok());
    }
}
