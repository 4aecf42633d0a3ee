//! What `run` refuses before it creates, deletes or locks anything: a data or log file that is
//! not a regular file (a block device, character device, FIFO, socket or directory), and any
//! file it would create among the device nodes of `/dev` (a data or log file, its `.lock`,
//! the journal, the XML log, the JSON summary); and an existing log or summary that is not
//! one of ours ([`ensure_ours`]), unless forced.
//!
//! A regular file that is an attached loop device's backing file is refused too: written in
//! place it destroyed the filesystem mounted from the device (and read back as a false lost
//! write); deleted, it took the image's name.
//!
//! A block device named as a data file used to be unlinked and replaced by a regular file in
//! devtmpfs (RAM), which the run then tested and called clean.

use std::path::{Path, PathBuf};

use crate::config::RunSettings;
use crate::io::nodes::{among_device_nodes, NodeKind};
use crate::sim::plan::SimPlan;

/// Refuses (exit 2) a plan whose files are not regular files; names the path and says what
/// to do. A resume asks after judging the set, so that a file the journal holds, replaced by
/// a FIFO or a directory, is the loss `verify` reports (exit 1), not only a refusal.
pub fn refuse_nodes(plan: &SimPlan) -> anyhow::Result<()> {
    for f in &plan.files {
        match NodeKind::of(&f.path) {
            NodeKind::Missing => {}
            NodeKind::Regular => {
                if let Some(lo) = crate::bench::inuse::loop_backed_by(&f.path) {
                    anyhow::bail!(
                        "{} is the backing file of /dev/{lo} (losetup -l): its bytes are that \
                         device's, so sqliosim run never writes, replaces or deletes it, even \
                         with --force. Detach it (losetup -d /dev/{lo}) first, or name another \
                         file",
                        f.path.display()
                    );
                }
            }
            NodeKind::BlockDevice => anyhow::bail!(
                "{} is a block device: sqliosim run tests files on a filesystem and never \
                 writes, replaces or deletes a device node. Put a filesystem on it, mount it and \
                 give the mount point with --dir, or use `sqliosim bench --file {}` for a \
                 raw-device capacity run",
                f.path.display(),
                f.path.display()
            ),
            other => anyhow::bail!(
                "{} is {}, not a regular file: sqliosim run creates and tests regular files only \
                 and never replaces anything else. Name a file on a mounted filesystem (FileName \
                 in the configuration, or --dir)",
                f.path.display(),
                other.describe()
            ),
        }
    }
    Ok(())
}

/// Refuses (exit 2) a plan that would create files among the device nodes of `/dev`, before
/// anything (a lock file) is created.
pub fn refuse_created_in_dev(plan: &SimPlan, settings: &RunSettings) -> anyhow::Result<()> {
    for path in created(plan, settings) {
        if NodeKind::of(&path) == NodeKind::Missing && among_device_nodes(&path) {
            anyhow::bail!(
                "{} would be created under /dev, among the device nodes: sqliosim never creates \
                 files there. Give a directory on a mounted filesystem (--dir, FileName, --log, \
                 --json, --journal-dir)",
                path.display()
            );
        }
    }
    Ok(())
}

/// Every file a run may create: data and log files and their locks, the journal, the logs.
fn created(plan: &SimPlan, settings: &RunSettings) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = Vec::new();
    for f in &plan.files {
        all.push(f.path.clone());
        all.push(super::lock::lock_path(&f.path));
    }
    all.extend(crate::sim::driver::setup::journal_path(plan));
    all.push(settings.error_log.clone());
    all.extend(settings.json.clone());
    all.extend(settings.error_log.parent().map(|d| d.join("dumps")));
    all
}

/// Refuses to overwrite an existing file that does not carry `marker` near its start (a log or
/// summary of ours), unless forced: the tool overwrites only what it created. The file is
/// opened as [`safefile`](crate::io::safefile) opens the tool's own names (a symlink, hard
/// link, FIFO, directory or another user's file under the name is refused here, before the
/// run starts); the log is checked again on the descriptor it is written through.
pub fn ensure_ours(path: &Path, marker: &str, force: bool) -> anyhow::Result<()> {
    use crate::io::safefile::{open_existing, Use};
    use std::io::Read;
    let Some(f) = open_existing(path, Use::Own)? else {
        return Ok(());
    };
    let mut head = Vec::new();
    let _ = f.take(4096).read_to_end(&mut head);
    if force || head.is_empty() || String::from_utf8_lossy(&head).contains(marker) {
        return Ok(());
    }
    Err(crate::report::ReportError::NotOurs { path: path.into() }.into())
}
