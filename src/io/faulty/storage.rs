//! The handles of the faulty backend's files ([`FaultyStorage`]), and how each fault acts on a
//! request (the file itself is `memfile`).
//!
//! A request is handled under the file's lock, so concurrent readers see a write entirely or
//! not at all (unless a fault says otherwise). The previous version of every page is kept so a
//! stale read can return it.

use std::io;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use rand::Rng;

use super::memfile::{to_usize, MemFile, PS};
use super::plan::{Access, Detail, Fault, FiredFault, Misdirect, Tear};
use super::FaultyState;
use crate::io::Storage;
use crate::page::{PAGE_SIZE, SECTORS_PER_PAGE, SECTOR_SIZE};

/// An open file of the faulty backend.
#[derive(Debug)]
pub struct FaultyStorage {
    file: Arc<MemFile>,
    shared: Arc<FaultyState>,
    /// Opened O_DSYNC: each write is durable when it completes (unless the device lies).
    through: bool,
}

impl FaultyStorage {
    pub(crate) fn new(file: Arc<MemFile>, shared: Arc<FaultyState>) -> FaultyStorage {
        FaultyStorage {
            file,
            shared,
            through: false,
        }
    }

    /// The same handle, its writes O_DSYNC when `through`.
    pub(crate) fn write_through(self, through: bool) -> FaultyStorage {
        FaultyStorage { through, ..self }
    }

    /// Another handle on the same file (for a posted request's helper thread).
    pub(crate) fn twin(&self) -> FaultyStorage {
        FaultyStorage::new(Arc::clone(&self.file), Arc::clone(&self.shared))
            .write_through(self.through)
    }

    /// Stores bytes of a write of this handle's in `file` (this file unless misdirected).
    fn land(&self, file: &MemFile, offset: u64, bytes: &[u8]) {
        self.shared.land(file, offset, bytes, self.through);
    }

    fn log(&self, fault: Fault, page: u64, op: Access, detail: Detail) {
        let mut plan = self.shared.plan.lock();
        let seq = plan.fired.len() as u64 + 1;
        plan.fired.push(FiredFault {
            seq,
            fault,
            path: self.file.path.clone(),
            page,
            op,
            detail,
            time_us: crate::page::layout::now_us(),
        });
    }

    fn skip(&self, fault: Fault, page: u64) {
        let path = self.file.path.clone();
        self.shared.plan.lock().skipped.push((fault, path, page));
    }

    /// The fault acting on this request; latency spikes are served here.
    fn pick(&self, op: Access, offset: u64, len: usize) -> Option<(Fault, u64)> {
        if let Some(d) = self.shared.service(len) {
            self.wait(d);
        }
        let picked = self
            .shared
            .plan
            .lock()
            .pick(op, &self.file.path, offset, len);
        if let Some((Fault::Latency(d), page)) = picked {
            // On the helper thread the completion waits instead (see `post`).
            self.wait(d);
            self.log(Fault::Latency(d), page, op, Detail::None);
            return None;
        }
        picked
    }

    /// Takes `d` of the backend's clock: on the helper thread the completion waits instead.
    fn wait(&self, d: std::time::Duration) {
        if !super::helper::defer_latency(d) {
            self.shared.clock.sleep(d);
        }
    }

    fn rand_below(&self, n: usize) -> usize {
        self.shared.plan.lock().rng.random_range(0..n.max(1))
    }

    /// Copies stored bytes into `buf`; returns how many exist at `offset`.
    fn copy_out(&self, buf: &mut [u8], offset: u64, limit: usize) -> usize {
        let data = self.file.data.read();
        let start = to_usize(offset).min(data.len());
        let n = (data.len() - start).min(buf.len()).min(limit);
        buf[..n].copy_from_slice(&data[start..start + n]);
        n
    }

    fn write_fault(&self, fault: Fault, page: u64, buf: &[u8], offset: u64) -> io::Result<()> {
        let Span { ps, pe, skew } = span(page, offset, buf.len());
        if fault == Fault::WriteEio {
            self.log(fault, page, Access::Write, Detail::None);
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        self.land(&self.file, offset, &buf[..ps]);
        self.land(&self.file, offset + pe as u64, &buf[pe..]);
        let part = &buf[ps..pe];
        let detail = match &fault {
            Fault::TornWrite(t) => {
                let keep = self.tear_len(*t).min(part.len());
                self.land(&self.file, page * PS + skew as u64, &part[..keep]);
                Detail::KeptBytes(keep)
            }
            Fault::MisdirectedWrite(m) => match self.landing(m, page) {
                Some((file, dest)) => {
                    self.land(&file, dest * PS + skew as u64, part);
                    Detail::Landed {
                        path: file.path.clone(),
                        page: dest,
                    }
                }
                None => {
                    self.land(&self.file, page * PS + skew as u64, part);
                    self.skip(fault, page);
                    return Ok(());
                }
            },
            _ => Detail::None, // LostWrite: the target page is simply not stored.
        };
        self.log(fault, page, Access::Write, detail);
        Ok(())
    }

    fn tear_len(&self, t: Tear) -> usize {
        match t {
            Tear::Sectors512 => (1 + self.rand_below(SECTORS_PER_PAGE - 1)) * SECTOR_SIZE,
            Tear::At4096 => 4096,
            Tear::Bytes(n) => n,
        }
    }

    /// Where a misdirected write of `page` lands, if such a place exists.
    fn landing(&self, m: &Misdirect, page: u64) -> Option<(Arc<MemFile>, u64)> {
        match m {
            Misdirect::Page(p) => Some((Arc::clone(&self.file), *p)),
            Misdirect::OtherPage => {
                let pages = (self.file.data.read().len() as u64).div_ceil(PS).max(2);
                let r = self.rand_below(to_usize(pages - 1)) as u64;
                Some((Arc::clone(&self.file), if r >= page { r + 1 } else { r }))
            }
            Misdirect::File(p) => self
                .shared
                .files
                .lock()
                .get(p)
                .map(|f| (Arc::clone(f), page)),
            Misdirect::OtherFile => {
                let files = self.shared.files.lock();
                let mut others: Vec<Arc<MemFile>> = files
                    .values()
                    .filter(|f| f.path != self.file.path)
                    .cloned()
                    .collect();
                drop(files);
                if others.is_empty() {
                    return None;
                }
                others.sort_by(|a, b| a.path.cmp(&b.path));
                let i = self.rand_below(others.len());
                Some((others.swap_remove(i), page))
            }
        }
    }

    /// Damage at rest, applied to the stored page before the read.
    fn damage_at_rest(&self, fault: &Fault, page: u64) -> Option<Detail> {
        let mut data = self.file.data.write();
        let ps = to_usize(page * PS);
        if ps + PAGE_SIZE > data.len() {
            return None;
        }
        let bytes = &mut data[ps..ps + PAGE_SIZE];
        match fault {
            Fault::BitFlip(bit) => {
                let bit = bit.map_or_else(|| self.rand_below(PAGE_SIZE * 8), |b| b as usize);
                let (byte, bit) = ((bit / 8) % PAGE_SIZE, (bit % 8) as u8);
                bytes[byte] ^= 1 << bit;
                Some(Detail::Bit { byte, bit })
            }
            Fault::ZeroedSector(s) => {
                let live: Vec<usize> = (0..SECTORS_PER_PAGE)
                    .filter(|i| {
                        bytes[i * SECTOR_SIZE..(i + 1) * SECTOR_SIZE]
                            .iter()
                            .any(|&b| b != 0)
                    })
                    .collect();
                let s = match s {
                    Some(s) => live.contains(s).then_some(*s)?,
                    None if live.is_empty() => return None,
                    None => live[self.rand_below(live.len())],
                };
                bytes[s * SECTOR_SIZE..(s + 1) * SECTOR_SIZE].fill(0);
                Some(Detail::Sector(s))
            }
            _ => None,
        }
    }

    fn read_fault(
        &self,
        fault: Fault,
        page: u64,
        buf: &mut [u8],
        offset: u64,
    ) -> io::Result<usize> {
        let sp = span(page, offset, buf.len());
        let detail = match &fault {
            Fault::ReadEio => {
                self.log(fault, page, Access::Read, Detail::None);
                return Err(io::Error::from_raw_os_error(libc::EIO));
            }
            Fault::ShortRead { silent } => {
                let keep = self.rand_below(SECTORS_PER_PAGE) * SECTOR_SIZE;
                let n = self.copy_out(buf, offset, sp.ps + keep);
                self.log(fault.clone(), page, Access::Read, Detail::Transferred(keep));
                return Ok(if *silent { buf.len() } else { n });
            }
            Fault::StaleRead => None,
            other => self.damage_at_rest(other, page),
        };
        let n = self.copy_out(buf, offset, usize::MAX);
        let detail = match detail {
            Some(d) => Some(d),
            None if fault == Fault::StaleRead => self.stale(buf, sp, page),
            None => None,
        };
        match detail {
            Some(d) => self.log(fault, page, Access::Read, d),
            None => self.skip(fault, page),
        }
        Ok(n)
    }

    /// Puts the previous version of `page` into the read buffer, when there is one.
    fn stale(&self, buf: &mut [u8], sp: Span, page: u64) -> Option<Detail> {
        let prev = self.file.prev.lock();
        let old = &prev.get(&page)?[sp.skew..sp.skew + (sp.pe - sp.ps)];
        if buf[sp.ps..sp.pe] == *old {
            return None;
        }
        buf[sp.ps..sp.pe].copy_from_slice(old);
        Some(Detail::None)
    }
}

/// Where one page lies in a request: its range in the buffer, and the offset within the page
/// of the range's first byte (requests need not be page aligned, e.g. log writes).
#[derive(Debug, Clone, Copy)]
struct Span {
    ps: usize,
    pe: usize,
    skew: usize,
}

fn span(page: u64, offset: u64, len: usize) -> Span {
    let start = (page * PS).max(offset);
    let end = ((page + 1) * PS).min(offset + len as u64).max(start);
    Span {
        ps: to_usize(start - offset),
        pe: to_usize(end - offset),
        skew: to_usize(start - page * PS),
    }
}

impl FaultyStorage {
    /// EINVAL for a transfer a device of the enforced unit would refuse.
    fn check_aligned(&self, len: usize, offset: u64) -> io::Result<()> {
        let unit = u64::from(self.shared.dio_align.load(Ordering::Relaxed));
        if unit > 0 && (!offset.is_multiple_of(unit) || !(len as u64).is_multiple_of(unit)) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        Ok(())
    }
}

impl Storage for FaultyStorage {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.check_aligned(buf.len(), offset)?;
        match self.pick(Access::Read, offset, buf.len()) {
            Some((fault, page)) => self.read_fault(fault, page, buf, offset),
            None => Ok(self.copy_out(buf, offset, usize::MAX)),
        }
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.check_aligned(buf.len(), offset)?;
        let done = match self.pick(Access::Write, offset, buf.len()) {
            Some((fault, page)) => self.write_fault(fault, page, buf, offset),
            None => {
                self.land(&self.file, offset, buf);
                Ok(())
            }
        };
        self.shared.wrote();
        done
    }

    fn read_vectored_at(&self, bufs: &mut [&mut [u8]], offset: u64) -> io::Result<usize> {
        let mut all = vec![0u8; bufs.iter().map(|b| b.len()).sum()];
        // Keep what the caller had in the buffers (a bytes-not-read pattern) where nothing is read.
        let mut at = 0;
        for b in bufs.iter() {
            all[at..at + b.len()].copy_from_slice(b);
            at += b.len();
        }
        let n = self.read_at(&mut all, offset)?;
        let mut at = 0;
        for b in bufs.iter_mut() {
            let len = b.len();
            b.copy_from_slice(&all[at..at + len]);
            at += len;
        }
        Ok(n)
    }

    fn write_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        self.write_at(&bufs.concat(), offset)
    }

    fn post(&self, op: crate::io::PostOp, to: &Arc<crate::io::Completions>, token: u64) {
        super::post::post(Box::new(self.twin()), &self.shared.helpers, op, to, token);
    }

    fn posts_async(&self) -> bool {
        true
    }

    fn sync_data(&self) -> io::Result<()> {
        self.shared.sync(&self.file);
        Ok(())
    }

    fn allocate(&self, len: u64) -> io::Result<()> {
        let mut data = self.file.data.write();
        if (data.len() as u64) < len {
            data.resize(to_usize(len), 0);
            drop(data);
            self.shared.resized(&self.file, len);
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.data.write().resize(to_usize(len), 0);
        self.shared.resized(&self.file, len);
        // Pages cut off lose their history: after a regrow they were never written.
        self.file
            .prev
            .lock()
            .retain(|page, _| (page + 1) * PS <= len);
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.data.read().len() as u64)
    }

    fn path(&self) -> &Path {
        &self.file.path
    }

    fn dio_align(&self) -> u32 {
        match self.shared.dio_align.load(Ordering::Relaxed) {
            0 => crate::io::DEFAULT_DIO_ALIGN,
            unit => unit,
        }
    }
}
