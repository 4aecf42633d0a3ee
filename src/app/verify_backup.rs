//! The finished backups the journal holds (issue #25 §1: "the backup stream is journaled and
//! verified like any other file"). A backup is journaled once its stream was made durable and
//! renamed into place (`Record::Backup`: its number, blocks, bytes and a fingerprint of its
//! blocks' CRCs), so from then on the device owes that stream whole, until a later finished
//! backup of its kind replaces it. `sqliosim verify` holds it to that: the stream at its name
//! (looked for by name in the directories given first, then at the path journaled while the
//! set stands where the journal recorded it: a copy or a moved set is judged alone) must be
//! that backup, finished and with the same fingerprint, or a later finished backup of the same
//! run (one that finished after the journal's record and before the cut). A stream gone is a
//! `lost_file` finding; one that is an earlier backup, another run's, unfinished, or the same
//! backup with other blocks is a `lost_write` finding on the stream. What the stream carries
//! is checked on its own by the stream scans (`verify.rs`).

use std::path::{Path, PathBuf};

use crate::findings::{Finding, FindingClass};
use crate::page::{ActorKind, Verdict};
use crate::sim::engine::backup::{logstream, scan};
use crate::sim::engine::journal::{BackupRecord, JournalState};

/// What a stream on disk says about itself, as far as the journal's record is concerned.
pub struct OnDisk {
    /// Where it is.
    pub path: PathBuf,
    /// A log backup's stream.
    pub log: bool,
    run_id: Option<u64>,
    backup_no: Option<u64>,
    complete: bool,
    crcs: Vec<u32>,
    bytes: u64,
}

impl OnDisk {
    /// What a scan of the full backup's stream at `path` found.
    pub fn full(path: &Path, s: &scan::StreamScan) -> OnDisk {
        OnDisk {
            path: path.to_path_buf(),
            log: false,
            run_id: s.run_id,
            backup_no: s.backup_no,
            complete: s.complete,
            crcs: s.crcs.clone(),
            bytes: s.bytes,
        }
    }

    /// What a scan of the log backup's stream at `path` found.
    pub fn log(path: &Path, s: &logstream::TrnScan) -> OnDisk {
        OnDisk {
            path: path.to_path_buf(),
            log: true,
            run_id: s.run_id,
            backup_no: s.backup_no,
            complete: s.complete,
            crcs: s.crcs.clone(),
            bytes: s.bytes,
        }
    }
}

/// Checks every backup `j` holds against the streams `scanned` already read (the directory's;
/// one the journal names that is not among them is read here); returns the findings (the
/// caller numbers and emits them) and prints a line for each.
/// `given`: only the streams given by name, each held to the record of its name (the others
/// are not asked about). `owner`: the journal's owner, whose files alone can be its streams
/// moved aside.
pub fn check_journaled(
    j: &JournalState,
    dirs: &[PathBuf],
    scanned: &[OnDisk],
    given: Option<&[OnDisk]>,
    owner: Option<u32>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let in_place = set_in_place(j, dirs);
    for rec in &j.backups {
        let path = match given {
            None => locate(rec, dirs, in_place),
            Some(given) => {
                let named = given
                    .iter()
                    .find(|s| s.log == rec.log && s.path.file_name() == rec.path.file_name());
                match named {
                    Some(s) => s.path.clone(),
                    None => continue,
                }
            }
        };
        let kind = if rec.log { "log backup" } else { "backup" };
        let seen = scanned
            .iter()
            .find(|s| s.log == rec.log && same_file(&s.path, &path));
        let owned;
        let on_disk = match seen {
            Some(s) => Ok(s),
            None => {
                owned = read(&path, rec.log);
                owned.as_ref()
            }
        };
        // Not at its name as the journal holds it (gone, or a new empty stream the resume's
        // run opened there): a resume may have moved it aside before it was cut.
        let as_held = matches!(&on_disk, Ok(d) if judge(j.run_id, rec, d).is_ok());
        let aside = if as_held {
            None
        } else {
            let mut places: Vec<PathBuf> = rec
                .path
                .file_name()
                .map(|n| dirs.iter().map(|d| d.join(n)).collect())
                .unwrap_or_default();
            places.push(path.clone());
            if in_place {
                places.push(rec.path.clone());
            }
            moved_aside(j.run_id, rec, &places, owner)
        };
        let said = match on_disk {
            _ if aside.is_some() => aside.unwrap_or_default(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                out.push(finding(
                    rec,
                    &path,
                    FindingClass::LostFile,
                    format!(
                        "the finished {kind} {} the journal holds ({} blocks, {} bytes, acknowledged durable and renamed into place) is gone: no file at {}",
                        rec.backup_no,
                        rec.blocks,
                        rec.bytes,
                        path.display()
                    ),
                ));
                String::from("LOST (no file)")
            }
            Err(e) => match not_a_stream(&path) {
                Some(what) => {
                    out.push(finding(
                        rec,
                        &path,
                        FindingClass::LostFile,
                        format!(
                            "the finished {kind} {} the journal holds ({} blocks, {} bytes, acknowledged durable and renamed into place) is gone: {} {what}",
                            rec.backup_no,
                            rec.blocks,
                            rec.bytes,
                            path.display()
                        ),
                    ));
                    format!("LOST ({what})")
                }
                None => format!("not checked against the journal: cannot read it ({e})"),
            },
            Ok(d) => match judge(j.run_id, rec, d) {
                Ok(how) => how,
                Err(why) => {
                    out.push(finding(
                        rec,
                        &path,
                        FindingClass::LostWrite,
                        format!(
                            "the finished {kind} {} the journal holds ({} blocks, {} bytes, fingerprint 0x{:08X}) is not what the stream holds: {why}",
                            rec.backup_no, rec.blocks, rec.bytes, rec.digest
                        ),
                    ));
                    format!("LOST ({why})")
                }
            },
        };
        crate::exit::outln!(
            "{}: the journal holds finished {kind} {}: {said}",
            path.display(),
            rec.backup_no
        )
        .ok();
    }
    out
}

/// Whether the stream on disk is what the journal holds (or a later finished backup): how, or
/// why not.
fn judge(run_id: u64, rec: &BackupRecord, d: &OnDisk) -> Result<String, String> {
    if d.run_id != Some(run_id) {
        return Err(match d.run_id {
            Some(r) => format!("it is a stream of run {r:016X}, not of the journal's run"),
            None => String::from("it holds no readable block"),
        });
    }
    let no = d.backup_no.unwrap_or(0);
    if !d.complete {
        return Err(format!(
            "it is backup {no} without its END block, where only finished backups are renamed"
        ));
    }
    if no > rec.backup_no {
        return Ok(format!(
            "replaced by the later finished backup {no}, as a run does"
        ));
    }
    if no < rec.backup_no {
        return Err(format!("it is the earlier backup {no}"));
    }
    let digest = BackupRecord::digest_of(&d.crcs);
    if d.crcs.len() as u64 != rec.blocks || d.bytes != rec.bytes || digest != rec.digest {
        return Err(format!(
            "backup {no} there has {} blocks, {} bytes, fingerprint 0x{digest:08X}",
            d.crcs.len(),
            d.bytes
        ));
    }
    Ok(String::from("as journaled"))
}

/// The journaled stream moved aside under its run's id (`NAME.RUNID.ext`, `-2`…), as a
/// resume moves a killed run's streams before its own journal replaces the one that holds
/// them: a resume cut between the two leaves this journal naming the stream where it was.
/// Looked for beside each of `places` (by its name in the directories given, then its path);
/// only a file of the journal's owner (`owner`), the very backup the journal holds, counts:
/// another user's copy left under that name vouches for nothing. Found, it is owed nothing
/// more: the line that says where.
fn moved_aside(
    run_id: u64,
    rec: &BackupRecord,
    places: &[PathBuf],
    owner: Option<u32>,
) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let tag = super::previous::id_text(run_id);
    for place in places {
        for kept in super::previous::names_for(place, &tag) {
            let Ok(m) = kept.symlink_metadata() else {
                break;
            };
            if owner.is_some_and(|uid| m.uid() != uid) {
                continue;
            }
            let judged = read(&kept, rec.log)
                .and_then(|d| judge(run_id, rec, &d).map_err(std::io::Error::other));
            if let Ok(how) = judged {
                return Some(format!(
                    "moved aside by a resume as {}, {how}",
                    kept.display()
                ));
            }
        }
    }
    None
}

/// What stands at `path` when it is not a regular file (a FIFO, a directory, a symlink…),
/// in words (`safefile`'s): the stream is gone as surely as a removed one.
fn not_a_stream(path: &Path) -> Option<String> {
    let st = rustix::fs::lstat(path).ok()?;
    let problem = crate::io::safefile::problem_of(&st, crate::io::safefile::Use::Input)?;
    Some(problem.to_string())
}

/// Whether `a` and `b` name the same file (as given, or once resolved).
fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// Where the journaled stream is: by its name in a directory given, else at its journaled
/// path when the set stands where the journal recorded it (`in_place`), else by its name in
/// the first directory given (where the copy lacks it).
fn locate(rec: &BackupRecord, dirs: &[PathBuf], in_place: bool) -> PathBuf {
    let Some(name) = rec.path.file_name() else {
        return rec.path.clone();
    };
    let mut places = dirs.iter().map(|d| d.join(name));
    if let Some(found) = places.clone().find(|p| p.symlink_metadata().is_ok()) {
        return found;
    }
    match places.next() {
        Some(first) if !in_place => first,
        _ => rec.path.clone(),
    }
}

/// Whether the set stands where the journal recorded it: a file the journal names is in one
/// of the directories given (the same directory, resolved; one is enough, as `verify --dir`
/// may be given one directory of a set spread over several). Only then is a stream's journaled
/// path outside them read: for a set copied or moved elsewhere, that path is the original
/// directory's file, which vouches for nothing in the copy (it may be the very stream the copy
/// lost, or a later run's).
fn set_in_place(j: &JournalState, dirs: &[PathBuf]) -> bool {
    let resolved: Vec<PathBuf> = dirs.iter().filter_map(|d| d.canonicalize().ok()).collect();
    j.files.iter().any(|f| {
        f.path
            .parent()
            .and_then(|p| p.canonicalize().ok())
            .is_some_and(|p| resolved.contains(&p))
    })
}

/// Reads the stream at `path` and what it says about itself. A symlink at the name is not
/// followed: it is not the stream the run wrote there, and following it would read whatever
/// file it names (a stream replaced by a symlink is lost, as a data file is).
fn read(path: &Path, log: bool) -> std::io::Result<OnDisk> {
    let opts = crate::io::OpenOptions {
        create: false,
        direct: false,
        write_through: false,
    };
    path.symlink_metadata()?;
    let storage = crate::io::direct::open_existing_file(path, opts, false, false)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    // Another sqliosim's stream is not judged against the journal (said, not a finding).
    crate::sim::engine::backup::refuse_foreign(&storage, path, log)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    // A file that is not such a stream scans as no readable block (no run id).
    Ok(if log {
        OnDisk::log(path, &logstream::scan(&storage, None)?)
    } else {
        OnDisk::full(path, &scan::scan(&storage, None)?)
    })
}

fn finding(rec: &BackupRecord, path: &Path, class: FindingClass, detail: String) -> Finding {
    let mut f = Finding::page(
        0,
        path.to_path_buf(),
        0,
        0,
        ActorKind::Verifier,
        0,
        Verdict::Garbage {
            first_bytes: [0; 16],
        },
    );
    f.class = class;
    f.page_count =
        u32::try_from(rec.bytes.div_ceil(crate::page::PAGE_SIZE as u64).max(1)).unwrap_or(u32::MAX);
    f.detail = Some(detail);
    f
}
