//! Helpers for the in-memory power-cut tests: a simulation on the faulty backend with its
//! volatile write cache, cut at seeded points of every phase (a sink that hears the driver's
//! phase messages arms the cuts), and each cut judged as `sqliosim verify` judges a file set
//! (the same engine scans, through the cut's backend). Shared by the `model` binary and
//! tests/crash_model_compact.rs; what only `model` uses is in tests/model/model_cut_support.rs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sqliosim::events::{Event, EventSink};
use sqliosim::findings::FindingClass;
use sqliosim::io::faulty::{Keep, PowerCut};
use sqliosim::io::{Backend, FaultyBackend, OpenOptions};
use sqliosim::page::{FileHeader, FileRole, PAGE_SIZE};
use sqliosim::sim::check::scan::{scan_data, scan_log};
use sqliosim::sim::engine::journal::{JournalState, JOURNAL_NAME};
use sqliosim::sim::plan::SimPlan;

/// Where the in-memory files live.
pub const DIR: &str = "/cut";
const PS: u64 = PAGE_SIZE as u64;

/// A 1 MB data file (grown and shrunk by the shrink user) and a 2 MB log, a main phase of
/// `main`, seeded.
pub fn plan(seed: u64, main: Duration) -> SimPlan {
    let mut plan = crate::sim_support::small_plan(Path::new(DIR), 1, main);
    plan.seed = seed;
    plan
}

/// The journal's path.
pub fn journal() -> PathBuf {
    Path::new(DIR).join(JOURNAL_NAME)
}

/// What comes after the phase whose end the driver announces as `Phase 'NAME' done`.
fn next_phase(done: &str) -> Option<&'static str> {
    Some(match done {
        "initial update" => "initial checkpoint",
        "initial checkpoint" => "main",
        "main" => "final checkpoint",
        "final checkpoint" => "audit",
        "audit" => "end",
        _ => return None,
    })
}

/// The sink of a cut run: at every phase start (and shrink or grow) it arms `per_phase`
/// cuts a seeded number of writes (up to `spread`) later; it keeps the run's findings.
pub struct Cutter {
    backend: FaultyBackend,
    rng: Mutex<SmallRng>,
    keep: Keep,
    per_phase: usize,
    spread: u64,
    /// From the start of this phase on, the data and log flushes lie.
    pub lie_from: Option<(&'static str, Vec<PathBuf>)>,
    /// Findings of the run itself (not of a cut).
    pub findings: Mutex<Vec<String>>,
    /// Phases that began, in order, with the writes completed then.
    pub phases: Mutex<Vec<(String, u64)>>,
}

impl Cutter {
    /// A sink arming cuts on `backend`.
    pub fn new(
        backend: &FaultyBackend,
        seed: u64,
        keep: Keep,
        per_phase: usize,
        spread: u64,
    ) -> Cutter {
        Cutter {
            backend: backend.clone(),
            rng: Mutex::new(SmallRng::seed_from_u64(seed)),
            keep,
            per_phase,
            spread,
            lie_from: None,
            findings: Mutex::default(),
            phases: Mutex::default(),
        }
    }

    fn begin(&self, phase: &str) {
        let now = self.backend.writes();
        self.phases.lock().push((phase.to_string(), now));
        if let Some((from, paths)) = &self.lie_from {
            if *from == phase {
                self.backend.set_flush_lies(paths.clone());
            }
        }
        let mut rng = self.rng.lock();
        // The first cut right at the phase's start, the others spread over it.
        let seed = rng.random::<u64>();
        self.backend
            .cut_now(self.keep, seed, format!("{phase} +0 writes"));
        for _ in 1..self.per_phase {
            let after = rng.random_range(1..=self.spread);
            let seed = rng.random::<u64>();
            let label = format!("{phase} +{after} writes");
            self.backend
                .cut_after_writes(now + after, self.keep, seed, label);
        }
    }
}

impl EventSink for Cutter {
    fn emit(&self, event: Event) {
        match event {
            Event::Finding(f) => self.findings.lock().push(format!(
                "{} page {} {:?}: {}",
                f.path.display(),
                f.page_id,
                f.class,
                f.detail.clone().unwrap_or_else(|| f.verdict.describe())
            )),
            Event::Message(m) => {
                let phase = match m.func.as_str() {
                    "Cycle::Start" => Some("initial update"),
                    "Cycle::Phase" => m
                        .text
                        .strip_prefix("Phase '")
                        .and_then(|t| t.split('\'').next())
                        .and_then(next_phase),
                    "ShrinkUser::Resize" => Some("shrink/grow"),
                    "Resume" if m.text.starts_with("Resumed run") => Some("resume start"),
                    _ => None,
                };
                if let Some(p) = phase {
                    self.begin(p);
                }
            }
            _ => {}
        }
    }
}

/// A page or log problem a judged cut found.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Found {
    /// File.
    pub path: PathBuf,
    /// Page (of a log problem: the page of its offset).
    pub page: u64,
    /// Class.
    pub class: FindingClass,
    /// What verify would print.
    pub text: String,
}

/// What verify concludes of a cut.
#[derive(Debug, Default)]
pub struct Judged {
    /// Findings, as verify would report them.
    pub found: Vec<Found>,
    /// Torn writes the device was allowed to leave.
    pub allowed_tears: u64,
    /// The journal's damage, if it is damaged.
    pub journal_damage: Option<String>,
    /// The journal as read (None: none).
    pub journal: Option<JournalState>,
    /// A file was judged without the journal (none, or not of its run: an empty one).
    pub offline: bool,
}

/// Judges the file set of `plan` on `backend` as `sqliosim verify --dir` would: the journal
/// first, then every page and log block against it.
pub fn judge(backend: &FaultyBackend, plan: &SimPlan) -> Judged {
    let mut out = Judged::default();
    let journal = backend
        .exists(&journal())
        .then(|| JournalState::load(backend, &journal()).expect("journal read"));
    out.journal_damage = journal
        .as_ref()
        .and_then(|j| j.damage.as_ref())
        .map(|d| d.to_string());
    for fp in &plan.files {
        let Some((st, h)) = open(backend, &fp.path) else {
            continue; // Not created yet, or its header not durable: not a file of ours.
        };
        let j = journal.as_ref().filter(|j| j.run_id == h.run_id);
        out.offline |= j.is_none();
        match h.role {
            FileRole::Data => {
                let scan = scan_data(st.as_ref(), &h, j, |b| {
                    if b.is_finding() {
                        let f = b.clone().into_finding(0, &fp.path, h.file_id);
                        let text = f.detail.clone().unwrap_or_else(|| f.verdict.describe());
                        out.found.push(Found {
                            path: fp.path.clone(),
                            page: b.page,
                            class: f.class,
                            text,
                        });
                    }
                })
                .expect("scan");
                out.allowed_tears += scan.allowed_tears;
            }
            FileRole::Log => {
                let bytes = sqliosim::io::file::read_all(st.as_ref()).expect("read log");
                let durable = j.and_then(|j| j.log.get(h.file_id as usize).copied().flatten());
                for issue in scan_log(&bytes, &h, durable).issues {
                    out.found.push(Found {
                        path: fp.path.clone(),
                        page: issue.offset / PS,
                        class: FindingClass::LogCorruption,
                        text: issue.what,
                    });
                }
            }
        }
    }
    out.journal = journal;
    out
}

fn open(
    backend: &FaultyBackend,
    path: &Path,
) -> Option<(Arc<dyn sqliosim::io::Storage>, FileHeader)> {
    let opts = OpenOptions {
        create: false,
        direct: false,
        write_through: false,
    };
    let st = backend.open(path, opts).ok()?;
    let mut page = vec![0u8; PAGE_SIZE];
    let n = st.read_at(&mut page, 0).ok()?;
    let h = FileHeader::decode(&page[..n]).ok()?;
    Some((st, h))
}

/// Runs `plan` on `backend` with `sink`, judging every cut as it is taken (so they need
/// not all be held at once) with `each`; returns the run's outcome.
pub fn run_and_judge(
    plan: SimPlan,
    backend: &FaultyBackend,
    sink: Arc<Cutter>,
    mut each: impl FnMut(PowerCut),
) -> sqliosim::sim::driver::SimOutcome {
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let run = s.spawn(|| {
            let out = sqliosim::sim::driver::simulate(plan, backend, sink.clone());
            done.store(true, std::sync::atomic::Ordering::Release);
            out
        });
        loop {
            let finished = done.load(std::sync::atomic::Ordering::Acquire);
            let cuts = backend.take_cuts();
            let none = cuts.is_empty();
            cuts.into_iter().for_each(&mut each);
            if finished && none {
                break;
            }
            if none {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let out = run.join().expect("the simulation thread panicked");
        let out = out.expect("simulate");
        assert!(!out.worker_panicked, "a worker thread panicked");
        out
    })
}
