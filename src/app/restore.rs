//! `sqliosim restore STREAM`: an offline restore of a finished backup stream, as `RESTORE
//! DATABASE … WITH MOVE` then a check does it. The stream is checked first
//! (`engine::backup::scan`, as `sqliosim verify FILE.bak` checks it): a stream with problems is
//! reported as `backup_corruption` findings and nothing is restored; an unfinished one is
//! refused. Then one copy per data file the stream carries pages of is created
//! (`restore_copies`), the pages are written back in stream order, the copies made durable and
//! read back, and every page checked against the generation its block recorded
//! (`engine::backup::restore`, the engine of the live restore). Unlike the live restore, the
//! copies are kept: they are what an offline restore is for.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;

use super::console::ConsoleSink;
use super::restore_copies::{copies_dir, create, plan, Planned};
use crate::events::{Event, EventSink, Fanout};
use crate::exit::Outcome;
use crate::findings::{Finding, FindingClass};
use crate::io::oserr::{self, ErrorClass};
use crate::io::{AlignedBuf, OpenOptions, Storage};
use crate::page::{ActorKind, Verdict};
use crate::report::{Evidence, EvidenceOptions, RunInfo};
use crate::sim::engine::backup::restore::{check, write_back, Failed, Mismatch, Target, Transfer};
use crate::sim::engine::backup::scan::{scan, StreamScan};
use crate::sim::engine::backup::{BLOCK_HEADER, MAGIC, MAX_BLOCK_PAGES};

pub use crate::cli::RestoreArgs;

/// Pages read back per request (1 MB).
const CHECK_PAGES: usize = 128;

/// Runs `sqliosim restore` with parsed options.
pub fn run(mut a: RestoreArgs) -> anyhow::Result<Outcome> {
    let json_stdout = a.json.as_deref() == Some(Path::new("-"));
    if json_stdout {
        crate::exit::console_to_stderr();
        a.json = None;
    }
    let stream = open_stream(&a.stream)?;
    let copies = copies_dir(&a.stream, a.to.as_deref());
    if let Some(why) = crate::io::nodes::no_place_for_files(&copies) {
        anyhow::bail!(
            "{}: {why}: restore writes its copies only into a directory on a mounted filesystem; give another --to",
            copies.display()
        );
    }
    crate::sim::engine::backup::refuse_foreign(stream.as_ref(), &a.stream, false)?;
    let scanned = scan(stream.as_ref(), None)
        .with_context(|| format!("cannot read {}", a.stream.display()))?;
    if scanned.problems.is_empty() && !scanned.complete {
        anyhow::bail!(
            "{}: an unfinished backup stream (no END block: the backup did not finish, {} blocks, {} pages); nothing restored. Restore a finished one (NAME.bak, or a rerun's NAME.RUNID.bak)",
            a.stream.display(),
            scanned.blocks,
            scanned.pages
        );
    }
    // Every name is checked before anything is written, the JSON summary included.
    let planned = if scanned.problems.is_empty() {
        Some(plan(&a.stream, &copies, &scanned.last_pages, a.force)?)
    } else {
        None
    };
    let evidence = Arc::new(open_evidence(&a, scanned.run_id)?);
    let sink = Fanout::new(vec![
        Arc::new(ConsoleSink::without_seed()),
        evidence.clone(),
    ]);
    let mut found = Found { sink: &sink, n: 0 };
    for p in &scanned.problems {
        found.emit(p.finding(0, &a.stream, 0));
    }
    crate::exit::outln!("{}", stream_line(&a.stream, &scanned)).ok();
    match planned {
        Some(planned) => restore(&a, &scanned, &planned, stream.as_ref(), &mut found)?,
        None => {
            crate::exit::outln!("Nothing restored: the stream has problems.").ok();
        }
    }
    super::run_outputs::finish_offline(&evidence, json_stdout)?;
    verdict(found.n)
}

/// The last line, and the outcome: clean, or findings.
fn verdict(findings: u64) -> anyhow::Result<Outcome> {
    let (text, outcome) = match findings {
        0 => (
            "CLEAN - no integrity errors found.".to_string(),
            Outcome::Clean,
        ),
        n => (format!("{n} INTEGRITY ERROR(S) found."), Outcome::Findings),
    };
    // Earlier lines are best effort (`.ok()`): a broken stdout is met again here, and said.
    let printed = crate::exit::outln!("Verdict: {text}");
    crate::exit::after_printing(printed, Ok(outcome))
}

/// The findings so far, numbered as they are sent.
struct Found<'a> {
    sink: &'a dyn EventSink,
    n: u64,
}

impl Found<'_> {
    fn emit(&mut self, mut f: Finding) {
        self.n += 1;
        f.seq = self.n;
        self.sink.emit(Event::Finding(Box::new(f)));
    }
}

/// Opens the stream to read (direct I/O where the filesystem takes it; a symlink given is
/// followed, as for every file given to read), refusing what is not a regular file or a stream
/// of ours (exit 2, naming it).
fn open_stream(path: &Path) -> anyhow::Result<Arc<dyn Storage>> {
    let opts = |direct| OpenOptions {
        create: false,
        direct,
        write_through: false,
    };
    let open = |direct| crate::io::direct::open_existing_file(path, opts(direct), false, true);
    let storage = match open(true) {
        Err(crate::io::IoError::Os { source, .. })
            if source.raw_os_error() == Some(libc::EINVAL) =>
        {
            open(false)
        }
        other => other,
    }
    .with_context(|| format!("cannot open the backup stream {}", path.display()))?;
    // A stream is always a regular file (the BackupUser writes one through the safe-file
    // door): a device is refused, or the copies would be created beside it, under /dev.
    crate::io::safefile::check_fd(storage.file(), path, crate::io::safefile::Use::Input)?;
    let mut head = AlignedBuf::new(BLOCK_HEADER)?;
    let got = storage
        .read_at(&mut head, 0)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if got < MAGIC.len() || &head[..MAGIC.len()] != MAGIC {
        anyhow::bail!(
            "{}: not a backup stream of sqliosim (it does not begin with a block header); nothing restored",
            path.display()
        );
    }
    Ok(Arc::new(storage))
}

/// The stream's line, as `sqliosim verify FILE.bak` and `sqliosim restore` print it.
pub(super) fn stream_line(path: &Path, s: &StreamScan) -> String {
    format!(
        "{}: backup stream of run {}, backup {}: {} blocks, {} pages checked, {}, {} problem(s)",
        path.display(),
        s.run_id
            .map_or_else(|| "?".to_string(), super::previous::id_text),
        s.backup_no
            .map_or_else(|| "?".to_string(), |n| n.to_string()),
        s.blocks,
        s.pages,
        if s.complete {
            "finished"
        } else {
            "unfinished (no END block: the backup did not finish)"
        },
        s.problems.len()
    )
}

/// The copies created, written back, made durable, read back and checked; a line for each.
fn restore(
    a: &RestoreArgs,
    scanned: &StreamScan,
    planned: &[Planned],
    stream: &dyn Storage,
    found: &mut Found<'_>,
) -> anyhow::Result<()> {
    let run_id = scanned.run_id.unwrap_or(0);
    let backup_no = scanned.backup_no.unwrap_or(0);
    let (mut targets, buffered) = create(planned, run_id, a.force)?;
    if let Some(fs) = buffered {
        crate::exit::outln!("Note: {fs} refuses direct I/O in {}: the copies are written and read back through the page cache, so the read-back may not reach the device.", copies_dir(&a.stream, a.to.as_deref()).display()).ok();
    }
    // The offline restore writes each run of a block in one write, one at a time.
    let one_by_one = Transfer {
        pages: MAX_BLOCK_PAGES,
        buffers: 1,
    };
    let (pages, writes) = match write_back(stream, &mut targets, one_by_one, &|| false) {
        Ok(done) => (done.pages, done.writes),
        Err(f) => return device_failed(&a.stream, &targets, f, backup_no, found),
    };
    let (checked, bad) = match check(&targets, run_id, CHECK_PAGES) {
        Ok(c) => c,
        Err(f) => return device_failed(&a.stream, &targets, f, backup_no, found),
    };
    for m in &bad {
        found.emit(mismatch(&a.stream, &targets, m, backup_no));
    }
    for (i, t) in targets.iter().enumerate() {
        crate::exit::outln!(
            "{}",
            copy_line(t, bad.iter().filter(|m| m.target == i).count())
        )
        .ok();
    }
    crate::exit::outln!(
        "Restored backup {backup_no}: {pages} pages into {} copies in {writes} writes, {checked} read back and checked; the copies are kept (remove them when done).",
        targets.len()
    )
    .ok();
    Ok(())
}

fn copy_line(t: &Target, bad: usize) -> String {
    let pages = t.generations.iter().filter(|g| g.is_some()).count();
    format!(
        "{}: copy of file {}, {} pages restored in {} writes, {} checked, {}",
        t.path.display(),
        t.file_id,
        pages,
        t.writes,
        pages,
        match bad {
            0 => "clean".to_string(),
            n => format!("{n} bad page(s)"),
        }
    )
}

/// A page of a copy that read back otherwise than the stream carried it.
fn mismatch(stream: &Path, targets: &[Target], m: &Mismatch, backup_no: u64) -> Finding {
    let t = &targets[m.target];
    let mut f = Finding::page(
        0,
        t.path.clone(),
        t.file_id,
        m.page,
        ActorKind::Verifier,
        0,
        m.verdict.clone(),
    );
    f.detail = Some(format!(
        "offline restore of backup {backup_no} from {}: page {} restored as generation {} read back as {}",
        stream.display(),
        m.page,
        m.generation,
        m.verdict.describe()
    ));
    f
}

/// A request of the restore that failed. On a copy, a failure of the device (EIO and its kin)
/// is a `write_error` or `read_error` finding there, the copies kept; anything else (the
/// stream unreadable, a request refused for how it was made) is an error, exit 2.
fn device_failed(
    stream: &Path,
    targets: &[Target],
    f: Failed,
    backup_no: u64,
    found: &mut Found<'_>,
) -> anyhow::Result<()> {
    let errno = f.error.raw_os_error().unwrap_or(libc::EIO);
    let (Some(t), ErrorClass::Device) = (f.target, oserr::classify(&f.error)) else {
        let at = f.target.map_or(stream, |t| targets[t].path.as_path());
        anyhow::bail!("{}: the restore failed: {}", at.display(), f.error);
    };
    let what = if f.write { "write" } else { "read" };
    let t = &targets[t];
    let mut finding = Finding::page(
        0,
        t.path.clone(),
        t.file_id,
        f.page,
        ActorKind::Verifier,
        0,
        Verdict::IoError { errno },
    );
    if f.write {
        finding.class = FindingClass::WriteError;
    }
    finding.detail = Some(format!(
        "offline restore of backup {backup_no}: the device failed a {what} of the copy at page {}: {}",
        f.page, f.error
    ));
    found.emit(finding);
    crate::exit::outln!(
        "{}: the device failed a {what} at page {}: {}; the copies are kept as evidence",
        t.path.display(),
        f.page,
        f.error
    )
    .ok();
    Ok(())
}

/// The JSON summary when `--json` asks for one; no XML log, no dumps.
fn open_evidence(a: &RestoreArgs, run_id: Option<u64>) -> anyhow::Result<Evidence> {
    let opts = EvidenceOptions {
        log: None,
        dump_dir: None,
        json: a.json.clone(),
        ..EvidenceOptions::default()
    };
    let run = RunInfo::offline(run_id);
    Evidence::create(opts, run).map_err(|e| anyhow::anyhow!("cannot write the JSON summary: {e}"))
}
