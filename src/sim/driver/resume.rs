//! `sqliosim run --resume`: open an existing file set instead of creating one, verify every
//! page first (against the journal when there is one), take what was found as the expected
//! state, and carry on — so a burn-in can span a reboot or a deliberate power pull.

use crate::findings::Severity;
use crate::io::{Backend, OpenOptions};
use crate::page::{ExpectedState, Verdict, PAGE_SIZE};
use crate::sim::actors::context::Run;
use crate::sim::check::scan::{allowed_tears, scan_data_all, scan_log};
use crate::sim::engine::ceiling::STEP;
use crate::sim::engine::files::{check_ownership, SimFile};
use crate::sim::engine::journal::JournalState;
use crate::sim::engine::setup::{NotResumable, SetupError};
use crate::sim::plan::SimPlan;

/// Opens the files of the plan, which must all exist and belong to one earlier run.
pub fn open_files(
    plan: &SimPlan,
    backend: &dyn Backend,
) -> Result<(u64, Vec<SimFile>), SetupError> {
    let open = OpenOptions {
        create: false,
        direct: plan.direct,
        write_through: plan.open_dsync(),
    };
    let headers = check_set(plan, backend)?;
    let run_id = headers.first().map(|h| h.run_id);
    let mut files = Vec::new();
    for ((i, fp), header) in plan.files.iter().enumerate().zip(headers) {
        let open = OpenOptions {
            write_through: plan.opens_dsync(fp.role),
            ..open
        };
        let storage = backend.open(&fp.path, open)?;
        crate::sim::engine::files::check_unit(storage.as_ref(), open.direct)?;
        let len = storage
            .len()
            .map_err(|source| SetupError::os(fp.path.clone(), "stat", source))?;
        // A log keeps the area its blocks were written in, even when the device left the
        // file short of its last page (the resume's verdict names the bytes lost).
        let pages = match fp.role {
            crate::page::FileRole::Log => len.div_ceil(PAGE_SIZE as u64),
            crate::page::FileRole::Data => len / PAGE_SIZE as u64,
        };
        let mut f = SimFile::new(i, fp.path.clone(), fp.role, storage, header.run_id, pages)
            .with_recorded_sector(header.sector_size)
            .with_max_pages(fp.max_pages);
        super::attach_ceiling(&mut f)?;
        files.push(f);
    }
    Ok((run_id.unwrap_or(1), files))
}

/// The headers of the plan's files, which must all exist, be the files the configuration
/// makes them and belong to one earlier run: checked read-only, so that a resume refused here
/// (exit 2) has changed nothing.
pub fn check_set(
    plan: &SimPlan,
    backend: &dyn Backend,
) -> Result<Vec<crate::page::FileHeader>, SetupError> {
    let mut run_id = None;
    let mut headers = Vec::new();
    for (i, fp) in plan.files.iter().enumerate() {
        let refuse = |why| SetupError::NotResumable {
            path: fp.path.clone(),
            why,
        };
        let header =
            check_ownership(backend, &fp.path, false)?.ok_or(refuse(NotResumable::Missing))?;
        if header.file_id != i as u32 || header.role != fp.role {
            return Err(refuse(NotResumable::OtherPlace {
                found: header.file_id,
                found_role: header.role,
                want: i as u32,
                want_role: fp.role,
            }));
        }
        if *run_id.get_or_insert(header.run_id) != header.run_id {
            return Err(refuse(NotResumable::OtherRun));
        }
        headers.push(header);
    }
    Ok(headers)
}

/// Verifies the existing pages and log, reports what is wrong, and makes what was found the
/// expected state; then journals it. Where the app judged the set first (`plan.judged`, the
/// judgement `verify` makes), those findings are this resume's, and its own scan only sets
/// the expected state: one verdict, never two counts of one loss.
pub fn restore(run: &Run<'_>, journal: Option<&JournalState>) -> Result<(), SetupError> {
    run.controls
        .stop
        .enter_stage("verification of the existing files");
    let judged = run.plan.judged.as_ref();
    let report = judged.is_none();
    let mut bad = 0u64;
    for f in judged.into_iter().flatten() {
        bad += 1;
        // Judged offline (no seed); found by this run, whose seed replays it.
        let mut f = f.clone();
        f.seed = run.plan.seed;
        run.report(f);
    }
    for &i in &run.files.data {
        bad += restore_data(run, i, journal, report)?;
    }
    for log in &run.files.logs {
        let f = &run.files[log.file];
        let bytes = crate::io::file::read_all(f.storage.as_ref())
            .map_err(|source| SetupError::os(f.path.clone(), "cannot read", source))?;
        let header = crate::page::FileHeader::decode(&bytes)
            .map_err(|e| SetupError::at(f.path.clone(), e))?;
        let durable = journal
            .as_ref()
            .and_then(|j| j.log.get(log.file).copied().flatten());
        let scan = scan_log(&bytes, &header, durable);
        if let Some(foreign) = scan.foreign(&f.path) {
            return Err(SetupError::Foreign(foreign));
        }
        for issue in scan.issues.into_iter().filter(|_| report) {
            bad += 1;
            run.report(issue.into_finding(run.plan.seed, &f.path, log.file as u32));
        }
        log.wal.continue_after(scan.newest_end);
    }
    run.message(
        Severity::Info,
        "System",
        "Resume",
        format!(
            "Resumed run {:016x}: existing files verified, {bad} problem(s) found",
            run.files.run_id
        ),
    );
    crate::sim::actors::journaling::sync_point(run);
    Ok(())
}

fn restore_data(
    run: &Run<'_>,
    file: usize,
    journal: Option<&JournalState>,
    report: bool,
) -> Result<u64, SetupError> {
    let f = &run.files[file];
    let header = crate::page::FileHeader {
        run_id: run.files.run_id,
        file_id: file as u32,
        page_size: PAGE_SIZE as u32,
        role: f.role,
        tool_version: String::new(),
        created_us: 0,
        sector_size: f.sector_size,
    };
    let mut bad = 0;
    let ceiling = f.ceiling.as_ref().map_or(0, |c| c.reserved());
    // The most any page is known to have held: durable (journal) or intact on disk.
    let seen = std::cell::Cell::new(0u64);
    // Every whole page now must hold what was found, so that the resumed run holds the device
    // to it from the start (in its reads and at its first sync point).
    let found = |page: u64, v: &Verdict| {
        let state = match *v {
            Verdict::Ok { generation: 0 } => ExpectedState::NeverWritten,
            Verdict::Ok { generation }
            | Verdict::FutureGeneration {
                found: generation, ..
            } => ExpectedState::Written { generation },
            _ => return,
        };
        seen.set(seen.get().max(state.max_issued()));
        f.oracle.set(page, state);
    };
    // A bad page is reported and stays unknown until its next write; the journal (carried
    // over) still holds it to its durable generation meanwhile.
    let scan = scan_data_all(f.storage.as_ref(), &header, journal, found, |b| {
        let durable = journal.map_or(0, |j| j.durable_gen(file as u32, b.page));
        let state = ExpectedState::Unknown {
            old: 0,
            issued: durable.max(plausible(found_generation(&b.received), ceiling)),
        };
        seen.set(seen.get().max(durable).max(state.max_issued()));
        f.oracle.set(b.page, state);
        if report && b.is_finding() {
            bad += 1;
            run.report(b.into_finding(run.plan.seed, &f.path, file as u32));
        }
    })
    .map_err(|source| SetupError::os(f.path.clone(), "cannot read", source))?;
    let seen = seen.get();
    if scan.allowed_tears > 0 {
        let text = allowed_tears(scan.allowed_tears, f.sector_size);
        let text = format!("{}{text}", f.path.display());
        run.message(Severity::Info, "System", "Resume", text);
    }
    f.oracle.raise_floor(restart_floor(run, f, ceiling, seen));
    Ok(bad)
}

/// The generation every page of a restarted file must start above: the header's ceiling
/// covers every generation ever issued, including writes the device lost. What the pages and
/// the journal show is taken too, in case the device lost the header's last rewrite (said in
/// a warning); a file from before ceilings were kept gets a margin of a ceiling step.
fn restart_floor(
    run: &Run<'_>,
    f: &crate::sim::engine::files::SimFile,
    ceiling: u64,
    seen: u64,
) -> u64 {
    if ceiling == 0 {
        run.message(
            Severity::Warning,
            "System",
            "Resume",
            format!(
                "{}: the header records no generation ceiling (made by an older sqliosim): generations restart {} above the newest found, which covers writes lost since only if fewer were issued to a page",
                f.path.display(),
                STEP
            ),
        );
        return seen + STEP;
    }
    if seen > ceiling {
        run.message(
            Severity::Warning,
            "System",
            "Resume",
            format!(
                "{}: generation {seen} found, above the ceiling {ceiling} the header page records: the device lost a durable rewrite of the header (offset 0, 8192 bytes)",
                f.path.display()
            ),
        );
    }
    ceiling.max(seen)
}

/// A generation read from a damaged page, if it can be one (a flipped bit can make it huge).
fn plausible(found: u64, ceiling: u64) -> u64 {
    if ceiling > 0 && found > ceiling {
        0
    } else {
        found
    }
}

fn found_generation(bytes: &[u8]) -> u64 {
    crate::page::layout::read_stamp(bytes).map_or(0, |s| s.generation)
}
