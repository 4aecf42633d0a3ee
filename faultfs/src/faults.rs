//! The table of armed faults and the pure decisions made from it.
//!
//! The filesystem asks `plan_write` / `plan_read` what to do with one request and
//! then carries the plan out; nothing here touches a file, so every rule about
//! matching, counting and seeded chance is unit-tested without a mount.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;

use crate::spec::{FaultSpec, Kind, SpecError};

/// At most this many firings are listed per fault in `status`; the counter goes on.
const MAX_HITS: usize = 32;

/// What to do with one write request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WritePlan {
    /// Milliseconds to sleep first.
    pub delay_ms: u64,
    /// What happens to the data.
    pub action: WriteAction,
    /// Stale-read faults that want the range's old bytes kept: (fault id, offset, length).
    pub save_old: Vec<(u64, u64, u64)>,
}

/// What happens to the data of a write.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WriteAction {
    /// Store it where asked.
    #[default]
    Pass,
    /// Acknowledge, store nothing.
    Lost,
    /// Store only the first `keep` bytes.
    Torn {
        /// Bytes stored.
        keep: u64,
    },
    /// Store it at `offset` in `file` (a file of the mount), nothing at the intended place.
    Misdirect {
        /// File that receives the data.
        file: String,
        /// Where it lands.
        offset: u64,
    },
    /// Fail with this errno (EIO by default), store nothing.
    Eio {
        /// The error returned.
        errno: i32,
    },
}

/// What to do with one read request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReadPlan {
    /// Milliseconds to sleep first.
    pub delay_ms: u64,
    /// Fail with this errno (EIO by default).
    pub eio: Option<i32>,
    /// Old bytes to lay over the data read: (absolute offset, bytes).
    pub stale: Vec<(u64, Vec<u8>)>,
    /// Bits to flip in the data read: (absolute byte offset, bit).
    pub flips: Vec<(u64, u8)>,
}

/// A bit flip to apply to a backing file now: (file, byte offset, bit).
pub type FlipNow = (String, u64, u8);

/// One armed fault with its counters.
struct Fault {
    id: u64,
    spec: FaultSpec,
    rng: SmallRng,
    remaining: Option<u64>,
    skip: u64,
    matched: u64,
    fired: u64,
    hits: Vec<String>,
    /// Stale reads: the bytes the range held before its last write.
    saved: Option<(u64, Vec<u8>)>,
    /// Bit flips: the byte and bit chosen when armed.
    flip_at: Option<(u64, u8)>,
}

impl Fault {
    fn matches_file(&self, file: &str) -> bool {
        self.spec.file.as_deref().is_none_or(|f| f == file)
    }

    /// Whether the request `[off, off+len)` overlaps the targeted range.
    fn overlaps(&self, off: u64, len: u64) -> bool {
        let end = self
            .spec
            .len
            .map_or(u64::MAX, |l| self.spec.off.saturating_add(l));
        off < end && self.spec.off < off.saturating_add(len)
    }

    /// Counts a matching request and decides, with the fault's own seeded RNG, whether it fires.
    fn trigger(&mut self, file: &str, off: u64, len: u64) -> bool {
        self.matched += 1;
        if self.skip > 0 {
            self.skip -= 1;
            return false;
        }
        if self.remaining == Some(0) {
            return false;
        }
        if self.spec.prob < 1.0 && self.rng.random::<f64>() >= self.spec.prob {
            return false;
        }
        self.remaining = self.remaining.map(|r| r - 1);
        self.record(format!("{file}@{off}+{len}"));
        true
    }

    fn record(&mut self, hit: String) {
        self.fired += 1;
        if self.hits.len() < MAX_HITS {
            self.hits.push(hit);
        }
    }

    fn exhausted(&self) -> bool {
        self.remaining == Some(0)
    }
}

/// Every armed fault, in the order armed; the first matching fault decides a write.
pub struct FaultTable {
    seed: u64,
    next_id: u64,
    faults: Vec<Fault>,
}

impl FaultTable {
    /// An empty table whose faults draw their chances from `seed`.
    pub fn new(seed: u64) -> Self {
        FaultTable {
            seed,
            next_id: 1,
            faults: Vec::new(),
        }
    }

    /// Sets the seed used by faults armed from now on.
    pub fn set_seed(&mut self, seed: u64) {
        self.seed = seed;
    }

    /// Arms a fault and returns its id, plus a bit flip to apply now for `flip`.
    pub fn arm(&mut self, spec: FaultSpec) -> Result<(u64, Option<FlipNow>), SpecError> {
        let id = self.next_id;
        // Each fault gets its own stream so one fault's draws never shift another's.
        let mut rng = SmallRng::seed_from_u64(self.seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let flip_at = match &spec.kind {
            Kind::FlipNow { byte, bit } | Kind::FlipRead { byte, bit } => {
                Some(choose_flip(&spec, *byte, *bit, &mut rng)?)
            }
            _ => None,
        };
        let now = flip_now(&spec, flip_at)?;
        self.next_id += 1;
        let mut fault = Fault {
            id,
            remaining: spec.count,
            skip: spec.skip,
            spec,
            rng,
            matched: 0,
            fired: 0,
            hits: Vec::new(),
            saved: None,
            flip_at,
        };
        if let Some((file, byte, bit)) = &now {
            fault.matched = 1;
            fault.remaining = Some(0);
            fault.record(format!("{file}@{byte}.{bit}"));
        }
        self.faults.push(fault);
        Ok((id, now))
    }

    /// Removes fault `id`, or every fault; returns how many went.
    pub fn clear(&mut self, id: Option<u64>) -> usize {
        let before = self.faults.len();
        self.faults.retain(|f| id.is_some_and(|id| f.id != id));
        before - self.faults.len()
    }

    /// Decides what happens to a write of `len` bytes at `off` in `file`.
    pub fn plan_write(&mut self, file: &str, off: u64, len: u64) -> WritePlan {
        let mut plan = WritePlan::default();
        for f in &mut self.faults {
            if !f.matches_file(file) || !f.overlaps(off, len) {
                continue;
            }
            match f.spec.kind.clone() {
                Kind::DelayWrite { ms } if f.trigger(file, off, len) => plan.delay_ms += ms,
                Kind::Stale if !f.exhausted() => {
                    let start = off.max(f.spec.off);
                    let end = f
                        .spec
                        .len
                        .map_or(off + len, |l| (f.spec.off + l).min(off + len));
                    plan.save_old.push((f.id, start, end - start));
                }
                kind if plan.action == WriteAction::Pass => {
                    if let Some(action) = write_action(&kind, file, off, len) {
                        if f.trigger(file, off, len) {
                            plan.action = action;
                        }
                    }
                }
                _ => {}
            }
        }
        plan
    }

    /// Decides what happens to a read of `len` bytes at `off` in `file`.
    pub fn plan_read(&mut self, file: &str, off: u64, len: u64) -> ReadPlan {
        let mut plan = ReadPlan::default();
        for f in &mut self.faults {
            if !f.matches_file(file) || !f.overlaps(off, len) {
                continue;
            }
            match f.spec.kind.clone() {
                Kind::DelayRead { ms } if f.trigger(file, off, len) => plan.delay_ms += ms,
                Kind::EioRead { errno } if f.trigger(file, off, len) => plan.eio = Some(errno),
                Kind::Stale if f.saved.is_some() && f.trigger(file, off, len) => {
                    plan.stale.extend(f.saved.take());
                }
                Kind::FlipRead { .. } => {
                    let covered = f
                        .flip_at
                        .filter(|&(byte, _)| byte >= off && byte < off + len);
                    if let Some(flip) = covered.filter(|_| f.trigger(file, off, len)) {
                        plan.flips.push(flip);
                    }
                }
                _ => {}
            }
        }
        plan
    }

    /// Keeps the bytes a range held before a write, for stale-read fault `id`.
    pub fn save_stale(&mut self, id: u64, off: u64, bytes: Vec<u8>) {
        if let Some(f) = self.faults.iter_mut().find(|f| f.id == id) {
            f.saved = Some((off, bytes));
        }
    }

    /// One line per fault with its parameters and counters (see README for the format).
    pub fn status(&self) -> String {
        let mut out = format!("seed={} faults={}\n", self.seed, self.faults.len());
        for f in &self.faults {
            let _ = writeln!(out, "{}", describe(f));
        }
        out
    }
}

/// The write action a kind stands for, if it acts on writes of this size.
fn write_action(kind: &Kind, file: &str, off: u64, len: u64) -> Option<WriteAction> {
    match kind {
        Kind::Lost => Some(WriteAction::Lost),
        Kind::EioWrite { errno } => Some(WriteAction::Eio { errno: *errno }),
        // A write no longer than what is kept cannot tear.
        Kind::Torn { keep } if len > *keep => Some(WriteAction::Torn { keep: *keep }),
        Kind::Misdirect { shift, to } => {
            let offset = off.checked_add_signed(*shift)?;
            let file = to.clone().unwrap_or_else(|| file.to_string());
            Some(WriteAction::Misdirect { file, offset })
        }
        _ => None,
    }
}

/// For `flip`, the flip to apply at once; it needs a named file.
fn flip_now(spec: &FaultSpec, flip_at: Option<(u64, u8)>) -> Result<Option<FlipNow>, SpecError> {
    match (&spec.kind, flip_at) {
        (Kind::FlipNow { .. }, Some((byte, bit))) => {
            let file = spec.file.clone().ok_or(SpecError::Missing {
                kind: "flip",
                param: "file=NAME",
            })?;
            Ok(Some((file, byte, bit)))
        }
        _ => Ok(None),
    }
}

/// The byte and bit a flip fault acts on: given, or drawn from the range with the seed.
fn choose_flip(
    spec: &FaultSpec,
    byte: Option<u64>,
    bit: Option<u8>,
    rng: &mut SmallRng,
) -> Result<(u64, u8), SpecError> {
    let byte = match (byte, spec.len) {
        (Some(b), _) => b,
        (None, Some(len)) if len > 0 => spec.off + rng.random_range(0..len),
        _ => {
            return Err(SpecError::Missing {
                kind: "flip",
                param: "byte=N, or a range (page=P or off=N len=N)",
            })
        }
    };
    Ok((byte, bit.unwrap_or_else(|| rng.random_range(0..8))))
}

fn describe(f: &Fault) -> String {
    let s = &f.spec;
    let mut line = format!("id={} kind={}", f.id, s.kind.name());
    let _ = write!(line, " file={}", s.file.as_deref().unwrap_or("*"));
    let _ = write!(line, " off={}", s.off);
    match s.len {
        Some(len) => {
            let _ = write!(line, " len={len}");
        }
        None => line.push_str(" len=eof"),
    }
    match &s.kind {
        Kind::Torn { keep } => {
            let _ = write!(line, " keep={keep}");
        }
        Kind::Misdirect { shift, to } => {
            let _ = write!(
                line,
                " shift={shift} to={}",
                to.as_deref().unwrap_or("same")
            );
        }
        Kind::DelayRead { ms } | Kind::DelayWrite { ms } => {
            let _ = write!(line, " ms={ms}");
        }
        Kind::EioRead { errno } | Kind::EioWrite { errno } if *errno != libc::EIO => {
            let _ = write!(line, " errno={errno}");
        }
        _ => {}
    }
    if let Some((byte, bit)) = f.flip_at {
        let _ = write!(line, " byte={byte} bit={bit}");
    }
    let count = s.count.map_or("always".to_string(), |c| c.to_string());
    let _ = write!(line, " count={count} skip={} prob={}", s.skip, s.prob);
    let _ = write!(line, " matched={} fired={}", f.matched, f.fired);
    let _ = write!(line, " hits={}", f.hits.join(","));
    line
}

#[cfg(test)]
#[path = "faults_tests.rs"]
mod tests;
