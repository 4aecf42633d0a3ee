//! Power cuts of the faulty backend: the switches of its volatile write cache (on, honest or
//! lying flushes), and the cuts themselves, taken on the spot, at seeded points of a running
//! simulation (after the N-th write, at the journal's syncs), or in place once it has stopped.
//!
//! A cut taken while a simulation runs does not disturb it: [`FaultyBackend::cut_image`]
//! copies, in one instant (no write, sync or resize of any file is half done), the image the
//! device would leave into a new backend, which `verify` and `--resume` then read as a
//! rebooted machine would. So one run yields many cuts, each judged on its own.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::cache::{cut_rng, Keep, Lost, Volatile};
use super::memfile::MemFile;
use super::{FaultyBackend, FaultyState};

/// Which files' flushes lie.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Lies {
    /// Every flush is honest.
    #[default]
    None,
    /// Flushes and O_DSYNC writes of these files are acknowledged and not made durable.
    On(Vec<PathBuf>),
}

/// Cuts armed on a running backend and the cuts taken.
#[derive(Debug, Default)]
pub(crate) struct Cuts {
    /// (write count, keep, seed, label), soonest first.
    after_writes: Vec<(u64, Keep, u64, String)>,
    /// Cut at every sync or replacement of this file, keeping the last `ring` cuts.
    on_syncs: Option<(PathBuf, usize, Keep)>,
    pub(crate) taken: Vec<PowerCut>,
    ring: std::collections::VecDeque<PowerCut>,
}

/// The device after a power cut: a backend holding what survived, and what the cut lost of
/// writes acknowledged as durable (by a lying device; nothing for an honest one).
#[derive(Debug, Clone)]
pub struct PowerCut {
    /// The files as the device left them (volatile cache on, honest).
    pub backend: FaultyBackend,
    /// Acknowledged writes (parts) the cut lost.
    pub lost: Vec<Lost>,
    /// Writes (every file, appends included) completed before the cut.
    pub writes: u64,
    /// What the cut was armed as, for messages.
    pub label: String,
}

impl FaultyState {
    /// True when `path`'s flushes lie.
    fn lies_on(&self, path: &Path) -> bool {
        match &*self.lies.lock() {
            Lies::None => false,
            Lies::On(paths) => paths.iter().any(|p| p == path),
        }
    }

    /// Bytes of a write land at `offset` of `file` (`through`: an O_DSYNC write). A request
    /// may land in several pieces (a torn or misdirected write); [`FaultyState::wrote`] counts it.
    pub(crate) fn land(&self, file: &MemFile, offset: u64, bytes: &[u8], through: bool) {
        let _instant = self.power.read();
        file.store(offset, bytes);
        if self.cache_on.load(Ordering::Relaxed) {
            let lie = through && self.lies_on(&file.path);
            file.cache.lock().write(offset, bytes, through && !lie, lie);
        }
    }

    /// A write request completed: counted, and a cut armed at this count is taken.
    pub(crate) fn wrote(&self) {
        let n = self.writes.fetch_add(1, Ordering::Relaxed) + 1;
        self.cut_after(n);
    }

    /// `fdatasync` of `file`: honest, or a lie.
    pub(crate) fn sync(&self, file: &MemFile) {
        if !self.cache_on.load(Ordering::Relaxed) {
            return;
        }
        {
            let _instant = self.power.read();
            let mut c = file.cache.lock();
            if self.lies_on(&file.path) {
                c.lie();
            } else {
                c.flush();
            }
        }
        self.cut_on_sync(&file.path, "sync");
    }

    /// `file` was cut or extended to `len` bytes (durable at once).
    pub(crate) fn resized(&self, file: &MemFile, len: u64) {
        if self.cache_on.load(Ordering::Relaxed) {
            let _instant = self.power.read();
            file.cache.lock().set_len(len);
        }
    }

    /// `file` was given a durable cache over its present bytes (a replacement, a new file).
    pub(crate) fn settled(&self, file: &MemFile) {
        if self.cache_on.load(Ordering::Relaxed) {
            let _instant = self.power.read();
            file.cache.lock().replace(&file.data.read());
        }
        self.cut_on_sync(&file.path, "replacement");
    }

    /// Takes every cut armed at `n` writes or fewer (several at one moment tear differently).
    fn cut_after(&self, n: u64) {
        loop {
            let due = {
                let mut cuts = self.cuts.lock();
                match cuts.after_writes.first() {
                    Some((at, ..)) if *at <= n => Some(cuts.after_writes.remove(0)),
                    _ => None,
                }
            };
            let Some((_, keep, seed, label)) = due else {
                return;
            };
            let cut = self.cut_image(keep, seed, label);
            self.cuts.lock().taken.push(cut);
        }
    }

    fn cut_on_sync(&self, path: &Path, what: &str) {
        let armed = self.cuts.lock().on_syncs.clone();
        let Some((p, ring, keep)) = armed.filter(|(p, ..)| p == path) else {
            return;
        };
        let n = self.writes.load(Ordering::Relaxed);
        let label = format!("at a {what} of {}", p.display());
        let cut = self.cut_image(keep, n, label);
        let mut cuts = self.cuts.lock();
        cuts.ring.push_back(cut);
        while cuts.ring.len() > ring {
            cuts.ring.pop_front();
        }
    }

    /// Every file as a cut leaves it, in one instant.
    fn cut_files(&self, keep: Keep, seed: u64) -> Vec<(Arc<MemFile>, Vec<u8>, Vec<Lost>)> {
        let _instant = self.power.write();
        let mut rng = cut_rng(seed);
        let files = self.files.lock();
        let mut paths: Vec<&PathBuf> = files.keys().collect();
        paths.sort();
        paths
            .into_iter()
            .map(|path| {
                let file = &files[path];
                let cache = file.cache.lock();
                let in_order = self.appends_in_order.load(Ordering::Relaxed)
                    && file.appended.load(Ordering::Relaxed);
                let (image, lost) = cache.cut(keep, in_order, &mut rng);
                let lost = lost
                    .into_iter()
                    .map(|(i, start, end)| {
                        let (write_offset, bytes) = cache.pending_at(i);
                        Lost {
                            path: path.clone(),
                            write_offset,
                            bytes,
                            ranges: vec![(start, end)],
                        }
                    })
                    .collect();
                (Arc::clone(file), image, lost)
            })
            .collect()
    }

    /// A new backend holding the image a cut leaves (the files go on unchanged here).
    fn cut_image(&self, keep: Keep, seed: u64, label: String) -> PowerCut {
        let writes = self.writes.load(Ordering::Relaxed);
        let after = FaultyBackend::new(seed ^ 0x5eed_c0de);
        after.enable_volatile_cache();
        let align = self.dio_align.load(Ordering::Relaxed);
        after.shared.dio_align.store(align, Ordering::Relaxed);
        let in_order = self.appends_in_order.load(Ordering::Relaxed);
        after
            .shared
            .appends_in_order
            .store(in_order, Ordering::Relaxed);
        let mut lost = Vec::new();
        let mut files = after.shared.files.lock();
        for (file, image, l) in self.cut_files(keep, seed) {
            let copy = MemFile::new(&file.path);
            let appended = file.appended.load(Ordering::Relaxed);
            copy.appended.store(appended, Ordering::Relaxed);
            *copy.data.write() = image.clone();
            *copy.cache.lock() = Volatile::over(&image);
            files.insert(file.path.clone(), Arc::new(copy));
            lost.extend(l);
        }
        drop(files);
        PowerCut {
            backend: after,
            lost,
            writes,
            label,
        }
    }
}

impl FaultyBackend {
    /// From now on every file has a volatile write cache: a write is durable only once its
    /// file is `sync_data`ed (or, opened write-through, when it completes), and a power cut
    /// may lose what is not. What the files hold now is taken as durable.
    pub fn enable_volatile_cache(&self) {
        let _instant = self.shared.power.write();
        for file in self.shared.files.lock().values() {
            *file.cache.lock() = Volatile::over(&file.data.read());
        }
        self.shared.cache_on.store(true, Ordering::Relaxed);
    }

    /// From now on the flushes and O_DSYNC writes of `paths` lie: acknowledged, not made
    /// durable (an empty list: every flush honest again; what was lied about stays volatile).
    pub fn set_flush_lies(&self, paths: Vec<PathBuf>) {
        *self.shared.lies.lock() = if paths.is_empty() {
            Lies::None
        } else {
            Lies::On(paths)
        };
    }

    /// Whether a cut keeps the unsynced appends of an append file (the journal) as a prefix
    /// (`true`, the default: a filesystem writing an appended file back in order) or tears
    /// them unit by unit like any write (`false`: writeback in any order, which can leave
    /// zeros before a later block of the same unsynced append).
    pub fn set_appends_in_order(&self, in_order: bool) {
        self.shared
            .appends_in_order
            .store(in_order, Ordering::Relaxed);
    }

    /// Takes a cut now ([`FaultyBackend::cut_image`]) and queues it for
    /// [`FaultyBackend::take_cuts`].
    pub fn cut_now(&self, keep: Keep, seed: u64, label: impl Into<String>) {
        let cut = self.shared.cut_image(keep, seed, label.into());
        self.shared.cuts.lock().taken.push(cut);
    }

    /// Writes completed so far (every file, journal appends included).
    pub fn writes(&self) -> u64 {
        self.shared.writes.load(Ordering::Relaxed)
    }

    /// Writes held in `path`'s volatile cache, not durable yet.
    pub fn pending_writes(&self, path: &Path) -> usize {
        let files = self.shared.files.lock();
        files.get(path).map_or(0, |f| f.cache.lock().pending())
    }

    /// The image a power cut would leave now, in a new backend; this one goes on unchanged.
    /// `seed` drives which units a tear keeps.
    pub fn cut_image(&self, keep: Keep, seed: u64, label: impl Into<String>) -> PowerCut {
        self.shared.cut_image(keep, seed, label.into())
    }

    /// Arms a cut ([`FaultyBackend::cut_image`]) right after the `writes`-th write; taken
    /// cuts are collected by [`FaultyBackend::take_cuts`].
    pub fn cut_after_writes(&self, writes: u64, keep: Keep, seed: u64, label: impl Into<String>) {
        let mut cuts = self.shared.cuts.lock();
        cuts.after_writes.push((writes, keep, seed, label.into()));
        cuts.after_writes.sort_by_key(|c| c.0);
    }

    /// Arms a cut at every sync (and replacement) of `path`, keeping only the last `ring`:
    /// after a run, they are the cuts around its last journal records (the End record).
    pub fn cut_at_syncs(&self, path: impl Into<PathBuf>, ring: usize, keep: Keep) {
        self.shared.cuts.lock().on_syncs = Some((path.into(), ring.max(1), keep));
    }

    /// The cuts taken so far (after writes, then the ring of sync cuts), oldest first.
    pub fn take_cuts(&self) -> Vec<PowerCut> {
        let mut cuts = self.shared.cuts.lock();
        let mut out = std::mem::take(&mut cuts.taken);
        out.extend(cuts.ring.drain(..));
        out
    }

    /// Cuts the power in place: every file keeps only what [`Keep`] leaves of its unsynced
    /// writes, and the cache is empty. Call it with nothing running (a run's requests still in
    /// flight would land after the cut). Returns what was lost of acknowledged writes.
    pub fn power_cut(&self, keep: Keep, seed: u64) -> Vec<Lost> {
        let cut = self.shared.cut_files(keep, seed);
        let _instant = self.shared.power.write();
        let mut lost = Vec::new();
        for (file, image, l) in cut {
            *file.cache.lock() = Volatile::over(&image);
            file.forget_history();
            *file.data.write() = image;
            lost.extend(l);
        }
        lost
    }
}
