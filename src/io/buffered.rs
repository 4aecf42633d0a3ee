//! The buffered backend (NoBuffering=FALSE): the same files through the page cache.
//!
//! Writes are durable only after `sync_data` unless write-through (O_DSYNC) is asked for; a
//! crash test on this backend proves nothing about the device (fio issue #1300).

use std::path::Path;
use std::sync::Arc;

use super::direct::{direct_io_info, open_file, os_error, remove_file};
use super::file::FileStorage;
use super::{Backend, DirectIoInfo, IoError, OpenOptions, Storage};

/// Opens files without O_DIRECT, whatever `OpenOptions::direct` says.
#[derive(Debug, Default, Clone, Copy)]
pub struct BufferedBackend;

impl BufferedBackend {
    /// The buffered backend.
    pub fn new() -> BufferedBackend {
        BufferedBackend
    }
}

impl Backend for BufferedBackend {
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn Storage>, IoError> {
        let file = open_file(path, opts, 0).map_err(|e| os_error(path, "cannot open", e))?;
        Ok(Arc::new(FileStorage::new(file, path.to_path_buf())))
    }

    fn remove(&self, path: &Path) -> Result<(), IoError> {
        remove_file(path)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn direct_io_info(&self, path: &Path) -> DirectIoInfo {
        direct_io_info(path)
    }
}
