//! The reader: a cursor over bytes that takes fields in little-endian order and says `None`
//! when the bytes run out, so a short or torn input ends a decoding instead of panicking.
//! A format that places its fields at fixed offsets (a page header, a log block header) reads
//! one with a reader started there ([`Reader::at`]): one way of reading a field, in order or
//! by offset.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// A cursor over bytes being read.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    rest: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `b`.
    pub fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { rest: b, at: 0 }
    }

    /// A reader at byte `off` of `b`, for a field at a fixed offset. Its
    /// [`position`](Reader::position) counts from the start of `b`; when `b` is not longer
    /// than `off` it has nothing to read (every field `None`).
    pub fn at(b: &'a [u8], off: usize) -> Reader<'a> {
        Reader {
            rest: b.get(off..).unwrap_or_default(),
            at: off,
        }
    }

    /// The next `n` bytes, or `None` (nothing taken) when fewer are left.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.rest.len() < n {
            return None;
        }
        let (a, b) = self.rest.split_at(n);
        self.rest = b;
        self.at += n;
        Some(a)
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Some(a)
    }

    /// Skips `n` bytes (a spare field).
    pub fn skip(&mut self, n: usize) -> Option<()> {
        self.take(n).map(|_| ())
    }

    /// One byte.
    pub fn u8(&mut self) -> Option<u8> {
        self.array::<1>().map(|[b]| b)
    }

    /// A `u16`.
    pub fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_le_bytes)
    }

    /// A `u32`.
    pub fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }

    /// A `u64`.
    pub fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }

    /// Bytes written by [`Writer::put_bytes`](super::Writer::put_bytes): a `u32` length and
    /// as many bytes. `None` (and the reader where it was) when they are not all there.
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let mut probe = *self;
        let n = usize::try_from(probe.u32()?).ok()?;
        let b = probe.take(n)?;
        *self = probe;
        Some(b)
    }

    /// A path written by [`Writer::put_path`](super::Writer::put_path).
    pub fn path(&mut self) -> Option<PathBuf> {
        self.bytes().map(|b| PathBuf::from(OsStr::from_bytes(b)))
    }

    /// What is left.
    pub fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// Where the next field starts: the bytes taken so far, from the offset the reader
    /// started at (0, or the one given to [`Reader::at`]).
    pub fn position(&self) -> usize {
        self.at
    }

    /// True when every byte was taken.
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }
}
