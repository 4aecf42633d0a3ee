//! One in-memory file of the faulty backend: the bytes reads see, the previous version of
//! each page (so a stale read can return it) and the volatile cache that knows which bytes are
//! durable. The handles on it (`storage`), the appends (`append`) and power cuts (`cut`) act
//! on it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::sync::{Mutex, RwLock};

use super::cache::Volatile;
use crate::page::PAGE_SIZE;

/// The page size as a file offset.
pub(crate) const PS: u64 = PAGE_SIZE as u64;

/// The bytes of one file (as reads see them), the previous version of each page, and the
/// volatile cache that knows which bytes are durable.
#[derive(Debug)]
pub(crate) struct MemFile {
    pub(crate) path: PathBuf,
    pub(crate) data: RwLock<Vec<u8>>,
    pub(crate) prev: Mutex<HashMap<u64, Vec<u8>>>,
    pub(crate) cache: Mutex<Volatile>,
    /// Written by appending (the journal), which a cut may keep in order.
    pub(crate) appended: std::sync::atomic::AtomicBool,
}

fn page_of(data: &[u8], page: u64) -> Vec<u8> {
    let start = usize::try_from(page * PS)
        .unwrap_or(usize::MAX)
        .min(data.len());
    let mut v = data[start..(start + PAGE_SIZE).min(data.len())].to_vec();
    v.resize(PAGE_SIZE, 0);
    v
}

impl MemFile {
    pub(crate) fn new(path: &Path) -> MemFile {
        MemFile {
            path: path.to_path_buf(),
            data: RwLock::new(Vec::new()),
            prev: Mutex::new(HashMap::new()),
            cache: Mutex::default(),
            appended: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Forgets every page's previous version (after a power cut, the cache that held them
    /// is gone).
    pub(crate) fn forget_history(&self) {
        self.prev.lock().clear();
    }

    /// Stores `bytes` at `offset`, remembering the old version of every page that changes.
    pub(crate) fn store(&self, offset: u64, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let start = to_usize(offset);
        let end = start + bytes.len();
        let mut data = self.data.write();
        let mut prev = self.prev.lock();
        for page in offset / PS..=(offset + bytes.len() as u64 - 1) / PS {
            let old = page_of(&data, page);
            let (ps, pe) = (to_usize(page * PS), to_usize((page + 1) * PS));
            let (a, b) = (start.max(ps), end.min(pe));
            if old[a - ps..b - ps] != bytes[a - start..b - start] {
                prev.insert(page, old);
            }
        }
        if data.len() < end {
            data.resize(end, 0);
        }
        data[start..end].copy_from_slice(bytes);
    }
}

/// `v` as an index, saturated (a file of the faulty backend is far smaller).
pub(crate) fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}
