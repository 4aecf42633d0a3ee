//! ShrinkUser: every MinShrinkInterval..MaxShrinkInterval seconds grows or shrinks a
//! shrinkable data file by MinExtends..MaxExtends × Increment, within InitialSize..MaxSize.
//! A growth the filesystem has no room for is a condition: a warning, and the file is not
//! grown again in this run.
//!
//! A shrink is DBCC SHRINKFILE's: before the truncate, the pages of the part cut off are
//! *moved* into the part kept, one page at a time from the end of the file backwards, as
//! SHRINKFILE moves them. Each is read from its old place and checked (8 KB), then written
//! (8 KB, logged first, as the move is) over the next page of the part kept; then the file is
//! truncated. Pages carry their own identity (file, page, generation), so a moved page is a new
//! generation of the page it lands on: the I/O is SHRINKFILE's (single-page reads at the end,
//! single-page writes near the start, then the truncate), and the page at its new place is
//! checked by its next reader.

use std::time::Duration;

use rand::rngs::SmallRng;

use super::failure::{handled, Failed};
use super::worker::{between, chance, Worker};
use crate::findings::Severity;
use crate::io::oserr::{self, ErrorClass};
use crate::io::OpenOptions;
use crate::page::{FileRole, PAGE_SIZE};
use crate::sim::engine::files::{extend, Prepare};
use crate::sim::plan::{FilePlan, ShrinkPlan};

/// What one shrink/grow step decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resize {
    /// File index.
    pub file: usize,
    /// Size before, in pages.
    pub from: u64,
    /// Size after, in pages.
    pub to: u64,
}

/// Decides the next size of a file: grow when at the minimum, shrink when at the maximum,
/// otherwise either; `steps` increments, clamped to the limits.
pub fn decide(current: u64, min: u64, max: u64, increment: u64, steps: u64, grow: bool) -> u64 {
    let delta = increment.saturating_mul(steps.max(1));
    let grow = if current <= min {
        true
    } else if current >= max {
        false
    } else {
        grow
    };
    if grow {
        current.saturating_add(delta).min(max)
    } else {
        current.saturating_sub(delta).max(min)
    }
}

/// The data files (of `data`, indexes into `files`) the shrink user resizes: shrinkable ones
/// with an increment and room to grow past their initial size.
pub fn candidates(files: &[FilePlan], data: &[usize]) -> Vec<usize> {
    data.iter()
        .copied()
        .filter(|&i| {
            let p = &files[i];
            p.shrinkable && p.increment_pages > 0 && p.max_pages > p.initial_pages
        })
        .collect()
}

/// The wait before the next resize: `MinShrinkInterval..=MaxShrinkInterval`, to the
/// millisecond.
pub fn pick_wait(rng: &mut SmallRng, plan: &ShrinkPlan) -> Duration {
    let (lo, hi) = (plan.min_interval.as_millis(), plan.max_interval.as_millis());
    Duration::from_millis(between(rng, lo as u64, hi as u64))
}

/// What the next resize does, before the file's size and limits have their say ([`decide`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The file, as a place in the list of candidates.
    pub candidate: usize,
    /// Increments: `MinExtends..=MaxExtends`.
    pub steps: u64,
    /// Grow (else shrink) when the file is between its limits: one time in two.
    pub grow: bool,
}

/// The next resize among `candidates` files (at least one).
pub fn pick_step(rng: &mut SmallRng, plan: &ShrinkPlan, candidates: usize) -> Step {
    let candidate = between(rng, 0, candidates as u64 - 1) as usize;
    let steps = between(rng, plan.min_extends, plan.max_extends);
    let grow = chance(rng, 0.5);
    Step {
        candidate,
        steps,
        grow,
    }
}

/// Runs the shrink user until the phase ends.
pub fn run(w: &mut Worker<'_>) {
    let candidates = candidates(&w.run.plan.files, &w.run.files.data);
    if candidates.is_empty() {
        return;
    }
    let plan = w.run.plan.shrink.clone();
    loop {
        let wait = pick_wait(&mut w.rng, &plan);
        if !w.pause(wait) {
            break;
        }
        let step = pick_step(&mut w.rng, &plan, candidates.len());
        resize(w, candidates[step.candidate], step.steps, step.grow);
    }
}

/// Log bytes of one moved page (SHRINKFILE logs its moves).
const MOVE_LOG_BYTES: u32 = 512;

/// Page moves logged together: SHRINKFILE moves pages in short transactions, so the log is
/// flushed once per batch of moves, not once per page.
const MOVES_PER_LOG_RECORD: u64 = 32;

/// Moves the pages `to..from` of data file `file` into its pages `1..to` one page at a time, as
/// DBCC SHRINKFILE moves them: from the end of the file backwards, each page read and checked
/// at its old place (8 KB), then written (8 KB, after the log record of its batch of moves is
/// durable) to the next page of the part kept, in ascending order from a place chosen at
/// random (the files have no free-space map: SQL Server takes the lowest free page). The page
/// at its new place is checked by the next reader of it (the audit at the latest). Returns the
/// pages moved, or `None` when the phase ended first (the file is then not truncated).
fn move_tail(w: &mut Worker<'_>, file: usize, from: u64, to: u64) -> Option<u64> {
    let Some(Moves { first_dest, fits }) = plan_moves(&mut w.rng, from, to) else {
        return Some(0);
    };
    let (mut moved, mut tried, mut lsn) = (0, 0, 0);
    for page in (to..from).rev() {
        if w.run.controls.stop.phase_over() {
            return None;
        }
        w.read_run(file, page, 1);
        if tried >= fits {
            continue;
        }
        if let Some(bytes) = move_log_bytes(fits, tried) {
            lsn = w.run.files.log_of(file).map_or(0, |l| l.wal.append(bytes));
        }
        moved += w.write_run(file, first_dest + tried, 1, lsn);
        tried += 1;
    }
    Some(moved)
}

/// Where a shrink's moves go: the `fits` pages of the part cut off that the part kept has
/// room for (the last ones, as the moves go backwards from the end) land on `first_dest..
/// first_dest + fits`, within pages `1..to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moves {
    /// The page the first move lands on.
    pub first_dest: u64,
    /// Pages moved.
    pub fits: u64,
}

/// The moves of a shrink from `from` to `to` pages, their place drawn at random in the part
/// kept; `None` (no draw) when the file does not shrink or keeps its header page alone.
pub fn plan_moves(rng: &mut SmallRng, from: u64, to: u64) -> Option<Moves> {
    let room = to.saturating_sub(1);
    if room == 0 || from <= to {
        return None;
    }
    let fits = (from - to).min(room);
    let first_dest = 1 + between(rng, 0, room - fits);
    Some(Moves { first_dest, fits })
}

/// The log record written before the move numbered `tried` of `fits` (0 first): one for each
/// batch of `MOVES_PER_LOG_RECORD` moves, of `MOVE_LOG_BYTES` a move in the batch; `None`
/// within a batch.
pub fn move_log_bytes(fits: u64, tried: u64) -> Option<u32> {
    if !tried.is_multiple_of(MOVES_PER_LOG_RECORD) || tried >= fits {
        return None;
    }
    let batch = MOVES_PER_LOG_RECORD.min(fits - tried);
    Some(MOVE_LOG_BYTES * u32::try_from(batch).unwrap_or(1))
}

fn resize(w: &mut Worker<'_>, file: usize, steps: u64, grow: bool) {
    let run = w.run;
    let fp = &run.plan.files[file];
    let f = &run.files[file];
    let from = *f.pages.read();
    let to = decide(
        from,
        fp.initial_pages,
        fp.max_pages.min(f.grow_cap()).max(fp.initial_pages),
        fp.increment_pages,
        steps,
        grow,
    );
    if to == from {
        return;
    }
    // The moves take the size shared, as every I/O does; the truncate then takes it alone.
    let moved = match to < from {
        true => match move_tail(w, file, from, to) {
            Some(m) => m,
            None => return,
        },
        false => 0,
    };
    let mut size = f.pages.write();
    if *size != from {
        // Resized meanwhile (only this user resizes, so not expected): decide again later.
        return;
    }
    if to < from && run.files.snapshots.holds(file) {
        // A DBCC snapshot holds the pages beyond the new end (its view reads the source where
        // it has no copy): the pages moved stay where they went, the truncate waits.
        drop(size);
        let text = format!(
            "{} not truncated to {} MB after moving {moved} pages: a DBCC snapshot is open on it",
            f.path.display(),
            to / 128
        );
        run.message(Severity::Info, "Shrink User", "ShrinkUser::Resize", text);
        return;
    }
    let res = if to > from {
        let prep = Prepare {
            run_id: run.files.run_id,
            file_id: file as u32,
            role: FileRole::Data,
            pages: to,
            stamp: run.plan.stamp_files,
            sparse: fp.sparse,
            force: false,
            open: OpenOptions::default(),
            force_4k_log: false,
        };
        super::journaling::resize(run, file, to, || {
            extend(f.storage.as_ref(), from, to, &prep).map(|_| f.oracle.resize(to))
        })
    } else {
        super::journaling::resize(run, file, to, || {
            run.files.pool.drop_from(file, to);
            f.oracle.resize(to);
            f.storage.set_len(to * PAGE_SIZE as u64)
        })
    };
    match res {
        Ok(()) => {
            *size = to;
            let text = match to > from {
                true => format!("{} grew from {} MB to {} MB", f.path.display(), from / 128, to / 128),
                false => format!(
                    "{} shrank from {} MB to {} MB after moving {moved} pages from its end into the part kept, one page at a time",
                    f.path.display(),
                    from / 128,
                    to / 128
                ),
            };
            run.message(Severity::Info, "Shrink User", "ShrinkUser::Resize", text);
        }
        Err(e) if to > from && growth_limit(&e) => {
            drop(size);
            stop_growing(w, file, from, to, &e);
        }
        Err(e) => {
            drop(size);
            let failed = Failed {
                file,
                what: if to > from { "grow" } else { "shrink" },
                offset: Some(from.min(to) * PAGE_SIZE as u64),
                len: from.abs_diff(to) * PAGE_SIZE as u64,
                error: &e,
            };
            if !handled(run, &failed) {
                super::evidence::report_write_error(w, file, 0, 0, &e);
            }
        }
    }
}

/// True when a growth failed because the filesystem has no room for it (no space, quota, or
/// a file larger than it allows): a limit of the environment, not corruption.
fn growth_limit(e: &std::io::Error) -> bool {
    oserr::classify(e) == ErrorClass::NoSpace
        || matches!(e.raw_os_error(), Some(libc::EFBIG) | Some(libc::EOVERFLOW))
}

/// After a growth from `from` to `to` pages failed for lack of room: gives back what the
/// attempt took, journals the size the file kept, warns, and never grows the file again.
fn stop_growing(w: &Worker<'_>, file: usize, from: u64, to: u64, e: &std::io::Error) {
    let run = w.run;
    let f = &run.files[file];
    f.cap_growth(from);
    let _ = super::journaling::resize(run, file, from, || {
        // Best effort: a partial growth (zeros written, blocks allocated) is released.
        f.storage.set_len(from * PAGE_SIZE as u64)
    });
    run.reporting.env.note_no_space(file, "grow");
    run.message(
        Severity::Warning,
        "Shrink User",
        "ShrinkUser::Resize",
        format!(
            "{}: cannot grow from {} MB to {} MB ({e}); the file stays at {} MB and is not grown again in this run. Out of space is a condition, not corruption",
            f.path.display(),
            from / 128,
            to / 128,
            from / 128
        ),
    );
}

#[cfg(test)]
mod tests;
