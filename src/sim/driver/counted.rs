//! A storage that counts its reads and writes in depth gauges: the log files' requests, which
//! the WAL issues itself rather than through a worker's throttle permit, still show in the
//! depth the device saw.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::io::Storage;
use crate::sim::control::depth::DepthGauge;

/// `inner`, with every read and write counted in flight in `file` and `run`.
#[derive(Debug)]
pub struct Counted {
    inner: Arc<dyn Storage>,
    file: Arc<DepthGauge>,
    run: Arc<DepthGauge>,
}

impl Counted {
    /// Counts the requests to `inner`.
    pub fn new(inner: Arc<dyn Storage>, file: Arc<DepthGauge>, run: Arc<DepthGauge>) -> Counted {
        Counted { inner, file, run }
    }

    fn counted<T>(&self, io: impl FnOnce(&dyn Storage) -> T) -> T {
        let at = Instant::now();
        self.file.issue_at(at);
        self.run.issue_at(at);
        let r = io(self.inner.as_ref());
        let at = Instant::now();
        self.file.complete_at(at);
        self.run.complete_at(at);
        r
    }
}

impl Storage for Counted {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.counted(|s| s.read_at(buf, offset))
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.counted(|s| s.write_at(buf, offset))
    }
    fn read_vectored_at(&self, bufs: &mut [&mut [u8]], offset: u64) -> io::Result<usize> {
        self.counted(|s| s.read_vectored_at(bufs, offset))
    }
    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        self.counted(|s| s.write_vectored_at(bufs, offset))
    }
    fn sync_data(&self) -> io::Result<()> {
        self.inner.sync_data()
    }
    fn allocate(&self, len: u64) -> io::Result<()> {
        self.inner.allocate(len)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn is_empty(&self) -> io::Result<bool> {
        self.inner.is_empty()
    }
    fn path(&self) -> &Path {
        self.inner.path()
    }
    fn dio_align(&self) -> u32 {
        self.inner.dio_align()
    }
}
