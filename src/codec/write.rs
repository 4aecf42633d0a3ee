//! The writer: fields appended in little-endian order to a growing buffer.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Bytes being written, field after field, little-endian.
#[derive(Debug, Default, Clone)]
pub struct Writer(Vec<u8>);

impl Writer {
    /// An empty writer.
    pub fn new() -> Writer {
        Writer(Vec::new())
    }

    /// An empty writer with room for `n` bytes.
    pub fn with_capacity(n: usize) -> Writer {
        Writer(Vec::with_capacity(n))
    }

    /// Appends one byte.
    pub fn put_u8(&mut self, x: u8) -> &mut Self {
        self.0.push(x);
        self
    }

    /// Appends a `u16`.
    pub fn put_u16(&mut self, x: u16) -> &mut Self {
        self.put_raw(&x.to_le_bytes())
    }

    /// Appends a `u32`.
    pub fn put_u32(&mut self, x: u32) -> &mut Self {
        self.put_raw(&x.to_le_bytes())
    }

    /// Appends a `u64`.
    pub fn put_u64(&mut self, x: u64) -> &mut Self {
        self.put_raw(&x.to_le_bytes())
    }

    /// Appends bytes as they are (a magic, a fixed-size field).
    pub fn put_raw(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }

    /// Appends `n` zero bytes (a spare field).
    pub fn put_zeros(&mut self, n: usize) -> &mut Self {
        self.0.resize(self.0.len() + n, 0);
        self
    }

    /// Appends bytes as their length (`u32`) and the bytes. Every caller's bytes are far
    /// below 4 GiB (a path, a reason, a host name); longer ones are cut at `u32::MAX`.
    pub fn put_bytes(&mut self, b: &[u8]) -> &mut Self {
        let n = u32::try_from(b.len()).unwrap_or(u32::MAX);
        self.put_u32(n);
        self.put_raw(&b[..n as usize])
    }

    /// Appends a path as [`Writer::put_bytes`] of its bytes as the kernel has them: a name
    /// that is not UTF-8 (a directory named in Latin-1, say) is found again by the same bytes.
    pub fn put_path(&mut self, p: &Path) -> &mut Self {
        self.put_bytes(p.as_os_str().as_bytes())
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The bytes written so far.
    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }

    /// The bytes written.
    pub fn into_vec(self) -> Vec<u8> {
        self.0
    }
}
