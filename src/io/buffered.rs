//! The buffered backend (NoBuffering=FALSE): the same files through the page cache.
//!
//! Writes are durable only after `sync_data` unless write-through (O_DSYNC) is asked for; a
//! crash test on this backend proves nothing about the device (fio issue #1300).

use std::path::Path;
use std::sync::Arc;

use super::direct::DirectBackend;
use super::{Backend, IoError, OpenOptions, Storage};

/// Opens files without O_DIRECT, whatever `OpenOptions::direct` says.
#[derive(Debug, Default, Clone, Copy)]
pub struct BufferedBackend;

impl BufferedBackend {
    /// The buffered backend.
    pub fn new() -> BufferedBackend {
        BufferedBackend
    }
}

/// The direct backend with O_DIRECT always off: files are removed and described the same way
/// in both (the `Backend` defaults).
impl Backend for BufferedBackend {
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Arc<dyn Storage>, IoError> {
        let opts = OpenOptions {
            direct: false,
            ..opts
        };
        DirectBackend.open(path, opts)
    }
}
