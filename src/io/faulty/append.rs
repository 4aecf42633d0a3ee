//! The faulty backend's append files (the journal), in memory, through the same fault plan as
//! its pages: an armed or random write fault whose target covers an append acts on it.
//!
//! A lost append is acknowledged and stores nothing: the file still grows by its length (the
//! next append lands after it), so the gap reads as zeros, as a lost write of newly allocated
//! blocks does on a disk. A torn append stores only its first part ([`Tear`]); `WriteEio`
//! fails it. Misdirection has no meaning for an append and is skipped.

use std::io;
use std::path::Path;
use std::sync::Arc;

use rand::Rng;

use super::memfile::MemFile;
use super::plan::{Access, Detail, Fault, Tear};
use super::FaultyState;
use crate::io::append::{replacement_path, AppendFile};
use crate::page::SECTOR_SIZE;

/// An append file of the faulty backend.
#[derive(Debug)]
pub struct MemAppend {
    file: Arc<MemFile>,
    shared: Arc<FaultyState>,
    len: u64,
}

impl MemAppend {
    pub(crate) fn new(file: Arc<MemFile>, shared: Arc<FaultyState>) -> MemAppend {
        file.data.write().clear();
        file.appended
            .store(true, std::sync::atomic::Ordering::Relaxed);
        // Created empty with its directory synced: durable at once.
        shared.settled(&file);
        MemAppend {
            file,
            shared,
            len: 0,
        }
    }

    /// The append file over `file`, keeping what it holds: appends go after it.
    pub(crate) fn open(file: Arc<MemFile>, shared: Arc<FaultyState>) -> MemAppend {
        let len = file.data.read().len() as u64;
        MemAppend { file, shared, len }
    }

    /// Bytes of an append of `len` a tear keeps.
    fn kept(&self, t: Tear, len: usize) -> usize {
        let keep = match t {
            Tear::Sectors512 => {
                let sectors = len.div_ceil(SECTOR_SIZE).max(2);
                SECTOR_SIZE * self.shared.plan.lock().rng.random_range(1..sectors)
            }
            Tear::At4096 => 4096,
            Tear::Bytes(n) => n,
        };
        keep.min(len)
    }

    /// Grows the stored file to `end` with zeros (what a lost or torn append leaves unwritten).
    fn grow(&self, end: u64) {
        let mut data = self.file.data.write();
        let end = usize::try_from(end).unwrap_or(usize::MAX);
        if data.len() < end {
            data.resize(end, 0);
        }
    }
}

impl AppendFile for MemAppend {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        let at = self.len;
        let path = self.file.path.clone();
        if let Some(d) = self.shared.service(bytes.len()) {
            self.shared.clock.sleep(d);
        }
        let picked = self
            .shared
            .plan
            .lock()
            .pick(Access::Write, &path, at, bytes.len());
        let (stored, fired) = match picked {
            None => (bytes.len(), None),
            Some((Fault::Latency(d), _)) => {
                self.shared.clock.sleep(d);
                (bytes.len(), None)
            }
            Some((Fault::WriteEio, page)) => {
                self.shared
                    .log_write(&path, Fault::WriteEio, page, Detail::None);
                return Err(io::Error::from_raw_os_error(libc::EIO));
            }
            Some((Fault::LostWrite, page)) => (0, Some((Fault::LostWrite, page))),
            Some((Fault::TornWrite(t), page)) => {
                let keep = self.kept(t, bytes.len());
                (keep, Some((Fault::TornWrite(t), page)))
            }
            Some((other, page)) => {
                self.shared
                    .plan
                    .lock()
                    .skipped
                    .push((other, path.clone(), page));
                (bytes.len(), None)
            }
        };
        self.shared.land(&self.file, at, &bytes[..stored], false);
        self.len += bytes.len() as u64;
        self.grow(self.len);
        self.shared.wrote();
        if let Some((fault, page)) = fired {
            let detail = match fault {
                Fault::TornWrite(_) => Detail::KeptBytes(stored),
                _ => Detail::None,
            };
            self.shared.log_write(&path, fault, page, detail);
        }
        Ok(())
    }

    fn sync_data(&mut self) -> io::Result<()> {
        self.shared.sync(&self.file);
        Ok(())
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.file
            .data
            .write()
            .truncate(usize::try_from(len).unwrap_or(usize::MAX));
        self.shared.resized(&self.file, len);
        self.len = len;
        Ok(())
    }

    fn replace(
        &mut self,
        fill: &mut dyn FnMut(&mut dyn io::Write) -> io::Result<()>,
    ) -> io::Result<()> {
        // In memory, the content is gathered: the file itself is a vector.
        let mut bytes = Vec::new();
        fill(&mut bytes)?;
        let file = Arc::new(MemFile::new(&self.file.path));
        file.appended
            .store(true, std::sync::atomic::Ordering::Relaxed);
        file.store(0, &bytes);
        // Written beside, synced, renamed over, the directory synced: durable whole, and a
        // cut sees the old file or this one.
        self.shared.settled(&file);
        let mut files = self.shared.files.lock();
        files.remove(&replacement_path(&self.file.path));
        files.insert(self.file.path.clone(), Arc::clone(&file));
        drop(files);
        self.file = file;
        self.len = bytes.len() as u64;
        Ok(())
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn path(&self) -> &Path {
        &self.file.path
    }
}
