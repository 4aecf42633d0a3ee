//! The BackupUser on real files (issue #25 §1): a run with it on is clean and leaves a stream
//! beside the data, `verify` of the directory afterwards is clean with the stream in it, a
//! symlink planted at the stream's name stops the run before it starts (exit 2), its target
//! untouched, and a rerun keeps the stream of a run that found corruption.

use std::path::Path;

use crate::crash_support::{assert_success, run_cmd, small_config, verify};

/// The small crash config with a BackupUser backing up every 100 ms in 256 KB transfers.
fn backup_config(dir: &Path) -> std::path::PathBuf {
    let path = small_config(dir, 1, 3, true);
    let mut text = std::fs::read_to_string(&path).expect("config");
    text.push_str(
        "[BackupUser]\nUserCount=1\nMaxTransferSize=262144\nBufferCount=4\nBackupDelay=100\n",
    );
    std::fs::write(&path, text).expect("write config");
    path
}

fn log_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("sqliosim.log.xml")).expect("XML log")
}

/// `sqliosim verify FILE.bak`.
fn verify_stream(path: &Path) -> std::process::Output {
    crate::crash_support::bin()
        .arg("verify")
        .arg(path)
        .output()
        .expect("verify FILE.bak")
}

#[test]
fn a_run_with_a_backup_is_clean_and_its_stream_verifies_offline_too() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = backup_config(cfg_dir.path());
    let out = run_cmd(&config, data.path()).output().expect("run");
    let stdout = assert_success(&out);
    assert!(stdout.contains("Verdict: CLEAN"), "{stdout}");
    let stream = data.path().join("sqliosim.bak");
    assert!(stream.is_file(), "no stream beside the data file");
    let log = log_text(data.path());
    assert!(log.contains("User='Backup User'"), "{log}");
    assert!(log.contains("verify-only of"), "no verify-only pass: {log}");
    let v = verify(data.path());
    let vout = assert_success(&v);
    assert!(!vout.contains("CORRUPT"), "{vout}");
}

#[test]
fn a_symlink_planted_at_the_stream_is_refused_and_its_target_untouched() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let victim = cfg_dir.path().join("victim.txt");
    std::fs::write(&victim, b"not yours").expect("victim");
    std::os::unix::fs::symlink(&victim, data.path().join("sqliosim.bak")).expect("symlink");
    let config = backup_config(cfg_dir.path());
    let out = run_cmd(&config, data.path()).output().expect("run");
    crate::crash_support::assert_exit(&out, 2);
    assert_eq!(std::fs::read(&victim).expect("victim"), b"not yours");
    let err = String::from_utf8_lossy(&out.stderr);
    let stream = data.path().join("sqliosim.bak");
    // Refused before the run starts, with the name planted and what is there.
    assert!(
        err.contains(&format!("{}: is a symlink", stream.display())),
        "the refusal names the stream: {err}"
    );
    assert!(
        stream
            .symlink_metadata()
            .expect("planted")
            .file_type()
            .is_symlink(),
        "the planted link was left as it was"
    );
}

/// A rerun after a run that found corruption keeps that run's backup stream, as it keeps its
/// log and JSON: the stream holds the pages as the backup read them, which is evidence of the
/// device. Met the way a user meets it: a clean run with a backup, a data page damaged at
/// rest, a `--resume` that finds the damage (exit 1), then the same command again. It used to
/// write its own backup over the stream. CI then met the stream emptied by a backup that did
/// not finish (each backup emptied the stream before its first write): the stream now only
/// ever holds a finished backup.
#[test]
fn a_rerun_after_a_run_that_found_corruption_keeps_its_backup_stream() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = backup_config(cfg_dir.path());
    let first = run_cmd(&config, data.path())
        .args(["--seed", "51"])
        .output()
        .expect("run");
    assert_success(&first);
    let stream = data.path().join("sqliosim.bak");
    let check = verify_stream(&stream);
    let text = assert_success(&check);
    assert!(
        !text.contains("unfinished") && text.contains("0 problem(s)"),
        "the first run leaves a finished backup: {text}"
    );
    let mdx = data.path().join("sqliosim.mdx");
    crate::crash_support::write_page(&mdx, 40, &[0xA5; 8192]);
    let resumed = run_cmd(&config, data.path())
        .args(["--resume", "--seed", "52"])
        .output()
        .expect("resume");
    crate::crash_support::assert_exit(&resumed, 1);
    let evidence = std::fs::read(&stream).expect("the stream the corrupt run left");
    let json = std::fs::read(data.path().join("sqliosim.log.json")).expect("json");
    let doc: serde_json::Value = serde_json::from_slice(&json).expect("json");
    let id = format!("{:016X}", doc["run_id"].as_u64().expect("run_id"));
    let rerun = run_cmd(&config, data.path())
        .args(["--seed", "53"])
        .output()
        .expect("rerun");
    assert_success(&rerun);
    let err = String::from_utf8_lossy(&rerun.stderr);
    let kept = data.path().join(format!("sqliosim.{id}.bak"));
    assert!(
        err.contains("its evidence is kept") && err.contains(&kept.display().to_string()),
        "the note names the kept stream: {err}"
    );
    assert!(
        std::fs::read(&kept).expect("kept stream") == evidence,
        "the corrupt run's stream was not kept as it was"
    );
    assert!(stream.is_file(), "the rerun wrote its own stream");
}

/// A kill -9 during a backup leaves the last finished backup whole in the stream; `verify
/// --dir` checks it and the unfinished one beside it, and a run started afresh
/// (`--discard-previous-run`) keeps both under the killed run's id. Each backup used to empty the stream and write over it: about one kill in two
/// left a stream that `verify` called unfinished, the finished backup before it destroyed.
/// Backups run back to back (BackupDelay=0, VerifyOnly=FALSE), so a kill lands in one most of
/// the time; the test kills until one did (a `.partial` beside the stream).
#[test]
fn a_kill_during_a_backup_leaves_the_last_finished_backup_in_the_stream() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let path = crate::crash_support::small_config(cfg_dir.path(), 1, 60, true);
    let mut text = std::fs::read_to_string(&path).expect("config");
    text.push_str(
        "[BackupUser]\nUserCount=1\nMaxTransferSize=65536\nBufferCount=2\nBackupDelay=0\nVerifyOnly=FALSE\n",
    );
    std::fs::write(&path, text).expect("write config");
    // No verify-only pass between backups (it reads the renamed stream with no partial one
    // beside it, about half of each cycle: a kill there landed in no backup, and the suite
    // once missed all six tries).
    let mut killed_in_a_backup = false;
    for attempt in 0..10u64 {
        let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let mut child = crate::crash_support::start_run(&path, data.path(), 70 + attempt);
        let xml = data.path().join("sqliosim.log.xml");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(50);
        // Until the first backup finished, then a little more: into a later one.
        while !std::fs::read_to_string(&xml).is_ok_and(|t| t.contains(">backup 1: "))
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(150 + 70 * attempt));
        child.kill().expect("SIGKILL");
        child.wait().expect("wait");
        let stream = data.path().join("sqliosim.bak");
        let check = verify_stream(&stream);
        let text = assert_success(&check);
        assert!(
            text.contains(", finished, 0 problem(s)"),
            "the stream after a kill is not a finished backup: {text}"
        );
        let partial = data.path().join("sqliosim.bak.partial");
        if !partial.is_file() {
            continue;
        }
        killed_in_a_backup = true;
        let (was_stream, was_partial) = (
            crate::crash_support::settled_bytes(&stream),
            crate::crash_support::settled_bytes(&partial),
        );
        let v = crate::crash_support::verify(data.path());
        let vout = assert_success(&v);
        // The kill may land between the partial stream's END block and its rename into
        // place (CI met it): then the partial is a finished backup that never replaced the
        // stream, and verify says "finished". Either way it is checked and clean.
        let partial_line = vout
            .lines()
            .find(|l| l.contains("sqliosim.bak.partial: backup stream of run"))
            .unwrap_or_else(|| panic!("verify --dir checks the partial stream too: {vout}"));
        assert!(
            partial_line.contains("0 problem(s)")
                && (partial_line.contains("unfinished") || partial_line.contains(", finished,")),
            "the partial stream is checked and clean: {vout}"
        );
        // The same command refuses (the killed run's files are evidence); the operator
        // starts afresh, which keeps the killed run's evidence under its run id.
        let again = run_cmd(&path, data.path())
            .args(["--seed", "79", "--duration", "1"])
            .output()
            .expect("rerun");
        crate::crash_support::assert_exit(&again, 2);
        let rerun = run_cmd(&path, data.path())
            .args(["--seed", "79", "--duration", "1", "--discard-previous-run"])
            .output()
            .expect("rerun");
        let err = String::from_utf8_lossy(&rerun.stderr);
        let kept: Vec<_> = std::fs::read_dir(data.path())
            .expect("dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().contains(".bak") && *p != stream && *p != partial)
            .collect();
        assert_eq!(kept.len(), 2, "both streams kept: {kept:?}\n{err}");
        for k in &kept {
            assert!(err.contains(&k.display().to_string()), "{err}");
            let bytes = std::fs::read(k).expect("kept");
            assert!(bytes == was_stream || bytes == was_partial, "{k:?} changed");
        }
        break;
    }
    assert!(killed_in_a_backup, "no kill landed in a backup in 10 tries");
}

/// `RestoreAfterBackup=TRUE` on real files: every finished backup is restored into a copy
/// beside the data file, read back clean, and the copy removed; the run is clean (exit 0),
/// its log says what each restore wrote and read back, and no `.restored` file is left.
#[test]
fn a_restore_after_each_backup_on_real_files_reads_back_clean_and_is_removed() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = backup_config(cfg_dir.path());
    let mut text = std::fs::read_to_string(&config).expect("config");
    text.push_str("RestoreAfterBackup=TRUE\n");
    std::fs::write(&config, text).expect("write config");
    let out = run_cmd(&config, data.path())
        .args(["--seed", "64"])
        .output()
        .expect("run");
    assert_success(&out);
    let log = log_text(data.path());
    assert!(
        log.contains("restore of backup 1: ") && log.contains("clean; the copies are removed"),
        "{log}"
    );
    assert!(!log.contains("read back wrong"), "{log}");
    assert!(
        !data.path().join("sqliosim.mdx.restored").exists(),
        "the clean copy was left"
    );
}

/// A kill -9 while a restore writes its copy: the copy left beside the data file is evidence
/// of the killed run, so the same command refuses (exit 2) and a fresh start
/// (`--discard-previous-run`) keeps it, byte for byte, under the killed run's id.
#[test]
fn a_kill_during_a_restore_leaves_its_copy_kept_by_a_fresh_start() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let path = crate::crash_support::small_config(cfg_dir.path(), 1, 60, true);
    let mut text = std::fs::read_to_string(&path).expect("config");
    text.push_str(
        "[BackupUser]\nUserCount=1\nMaxTransferSize=65536\nBufferCount=2\nBackupDelay=0\nRestoreAfterBackup=TRUE\n",
    );
    std::fs::write(&path, text).expect("write config");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let copy = data.path().join("sqliosim.mdx.restored");
    let mut child = crate::crash_support::start_run(&path, data.path(), 91);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    // Past its header page (a copy killed before that holds nothing, and is not kept).
    let begun = || std::fs::metadata(&copy).is_ok_and(|m| m.len() > 8192);
    while !begun() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    assert!(begun(), "no restore began within 60 s");
    let was = crate::crash_support::settled_bytes(&copy);
    let again = run_cmd(&path, data.path())
        .args(["--seed", "92", "--duration", "1"])
        .output()
        .expect("rerun");
    crate::crash_support::assert_exit(&again, 2);
    assert_eq!(
        std::fs::read(&copy).expect("copy"),
        was,
        "the refusal touched the copy"
    );
    let fresh = run_cmd(&path, data.path())
        .args(["--seed", "92", "--duration", "1", "--discard-previous-run"])
        .output()
        .expect("fresh start");
    let err = String::from_utf8_lossy(&fresh.stderr);
    let kept: Vec<_> = std::fs::read_dir(data.path())
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with("sqliosim.mdx.") && name.ends_with(".restored") && *p != copy
        })
        .collect();
    assert_eq!(
        kept.len(),
        1,
        "the copy kept under the run id: {kept:?}\n{err}"
    );
    assert!(err.contains(&kept[0].display().to_string()), "{err}");
    assert_eq!(
        std::fs::read(&kept[0]).expect("kept"),
        was,
        "the kept copy changed"
    );
}

/// `sqliosim verify FILE.bak` checks a stream by itself, and `verify --dir` checks the stream
/// beside the data: clean as the run left it; with a byte of a carried page flipped on disk
/// (the device damaged the stream at rest), a `backup_corruption` finding on the stream, exit 1.
#[test]
fn verify_checks_a_backup_stream_given_by_name_or_in_the_directory() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = backup_config(cfg_dir.path());
    let out = run_cmd(&config, data.path())
        .args(["--seed", "61"])
        .output()
        .expect("run");
    assert_success(&out);
    let stream = data.path().join("sqliosim.bak");
    let clean = verify_stream(&stream);
    let text = assert_success(&clean);
    assert!(
        text.contains("backup stream of run") && text.contains("0 problem(s)"),
        "{text}"
    );
    // The first block's first carried page: 16 KB of header, then the page.
    let mut bytes = std::fs::read(&stream).expect("stream");
    bytes[16384 + 4000] ^= 0x10;
    std::fs::write(&stream, &bytes).expect("damage the stream");
    for out in [verify_stream(&stream), verify(data.path())] {
        crate::crash_support::assert_exit(&out, 1);
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            text.contains("backup_corruption") && text.contains("sqliosim.bak"),
            "the damage is a finding on the stream: {text}"
        );
    }
}

/// What a device sees of a backup (issue #25 "what must be shown"), under strace with
/// `--engine sync`: the data file read in order in MaxTransferSize requests (the last of a
/// file shorter), and the stream written sequentially, each block at the end of the one before,
/// made durable before the stream is renamed into place. The other users are off, so every
/// 256 KB read of the data file is the backup's.
#[test]
fn under_strace_a_backup_reads_the_data_file_in_order_and_writes_the_stream_sequentially() {
    if !crate::strace_support::available() {
        return;
    }
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = cfg_dir.path().join("backup-only.cfg.ini");
    std::fs::write(
        &config,
        "[CONFIG]\nTestCycles=1\nTestCycleDuration=2\nMaxMemoryMB=4\nWriteThrough=TRUE\n\
         [RandomUser]\nUserCount=0\n[AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n\
         [BulkUpdateUser]\nUserCount=0\n\
         [ShrinkUser]\nMinShrinkInterval=100000\nMaxShrinkInterval=100000\n\
         [BackupUser]\nUserCount=1\nMaxTransferSize=262144\nBufferCount=4\nBackupDelay=200\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=8\nMaxSize=8\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n",
    )
    .expect("config");
    let mut cmd = run_cmd(&config, data.path());
    cmd.args(["--engine", "sync", "--no-json", "--seed", "81"]);
    let (out, calls) = crate::strace_support::run(&cmd, &data.path().join("strace.txt"));
    assert_success(&out);
    const TRANSFER: u64 = 262_144;
    let on = |c: &crate::strace_support::Call, suffix: &str| {
        c.path.as_deref().is_some_and(|p| p.ends_with(suffix))
    };
    // The backup's reads: page 1 onwards, 256 KB each, each where the one before ended, and
    // a new pass starting at page 1 again.
    let reads: Vec<(u64, u64)> = calls
        .iter()
        .filter(|c| c.is_read() && on(c, "sqliosim.mdx") && c.len == Some(TRANSFER))
        .filter_map(|c| Some((c.offset?, c.len?)))
        .collect();
    let passes = reads.iter().filter(|&&(off, _)| off == 8192).count();
    assert!(passes >= 2, "at least two backups read the file: {reads:?}");
    for w in reads.windows(2) {
        let ((a, n), (b, _)) = (w[0], w[1]);
        assert!(
            b == a + n || b == 8192,
            "a backup read at {b} after one at {a}: not in order ({reads:?})"
        );
    }
    // The stream: written only under its .partial name, sequentially from offset 0, in
    // blocks of a 16 KB header and up to MaxTransferSize of pages, then fdatasync'ed.
    assert!(
        !calls.iter().any(|c| c.is_write() && on(c, "sqliosim.bak")),
        "a write went to the finished stream's name"
    );
    let mut next = 0;
    let mut blocks = 0;
    let mut synced = 0;
    for c in calls.iter().filter(|c| on(c, "sqliosim.bak.partial")) {
        if c.is_write() {
            let (off, len) = (c.offset.expect("offset"), c.len.expect("len"));
            if off == 0 {
                next = 0;
            }
            assert_eq!(off, next, "a stream write out of sequence: {c:?}");
            assert!(len <= 16384 + TRANSFER, "a block of {len} bytes");
            next = off + len;
            blocks += 1;
        } else if c.syscall == "fdatasync" {
            synced += 1;
        }
    }
    assert!(blocks > 4, "the stream had {blocks} writes");
    assert!(
        synced >= 2,
        "each finished backup is made durable: {synced} fdatasyncs"
    );
}

/// The stream is kept in file order (issue #25 §1): the backup's reads complete in any order
/// with BufferCount in flight, and their pages are held until the ones before them are in the
/// stream, as SQL Server's backup set holds each file in order. So a restore, which writes the
/// stream's pages back in stream order, writes each copy in order too, as SQL Server's
/// RESTORE does: under strace (`--engine psync`: the service's helpers make each request a
/// system call, and complete the backup's 8 reads in flight in any order), every restore
/// write of `sqliosim.mdx.restored` after its first begins where the one before it ended
/// (before the stream was kept in order: 41 of 288 did not). One restore write in flight
/// (`RestoreBufferCount=1`) and no zeroing, so the calls are the restore's page writes in the
/// order posted; `under_strace_a_restore_zeroes_its_copy_then_writes_64_kb_with_six_in_flight`
/// traces the defaults.
#[test]
fn under_strace_a_restore_writes_its_copy_in_file_order() {
    if !crate::strace_support::available() {
        return;
    }
    // A restore follows a finished backup of the whole file. Traced and beside six spinners and
    // a disk writer, the backup took the whole 3 s cycle in 4 runs of 6 and no restore wrote
    // anything ("restore writes traced: []"); without the spinners the first run restored, 2 of
    // 2. A run without a restore to judge goes again, longer (`traced_restore`).
    let restore =
        "RestoreMaxTransferSize=262144\nRestoreBufferCount=1\nInstantFileInitialization=TRUE\n";
    let past_header = |w: &[(u64, u64)]| w.iter().filter(|&&(off, _)| off > 0).count();
    // The copy's page writes (not its header page, not the allocation's): 256 KB each.
    let writes: Vec<(u64, u64)> = traced_restore(restore, "83", |w| past_header(w) >= 8)
        .into_iter()
        .filter(|&(off, _)| off > 0)
        .collect();
    // Eight writes of 256 KB (a quarter of the 8 MB copy) are enough to see an order.
    assert!(writes.len() >= 8, "restore writes traced: {writes:?}");
    let out_of_order: Vec<_> = writes
        .windows(2)
        .filter(|w| w[1].0 != w[0].0 + w[0].1 && w[1].0 != 8192)
        .collect();
    assert!(
        out_of_order.is_empty(),
        "{} of {} restore writes not where the one before ended: {out_of_order:?}",
        out_of_order.len(),
        writes.len()
    );
}

/// The restore's writes as SQL Server's RESTORE from disk makes them by default: the copy
/// zeroed first (no instant file initialization) in 1 MB sequential writes, then its pages in
/// 64 KB writes with 6 in flight. Traced under `--engine psync` (a helper thread per request, so
/// writes in flight reach the kernel in any order): in each restore (from the copy's header
/// write at offset 0), every zeroing write comes before every page write and the zeroing
/// covers the copy from page 1 in order; the page writes are at most 64 KB; and no write is
/// traced before enough others completed to free its buffer (`assert_window`), which holds
/// whatever order the helpers ran in. With
/// `InstantFileInitialization=TRUE` no zeroing write is traced.
#[test]
fn under_strace_a_restore_zeroes_its_copy_then_writes_64_kb_with_six_in_flight() {
    if !crate::strace_support::available() {
        return;
    }
    let enough = |w: &[(u64, u64)]| w.iter().filter(|&&(_, len)| len <= 65536).count() >= 9;
    let zeroed = traced_restore("InstantFileInitialization=FALSE\n", "89", enough);
    let mut judged = 0;
    for segment in zeroed.split(|&(off, _)| off == 0) {
        let first_page_write = segment.iter().position(|&(_, len)| len <= 65536);
        let (zeros, pages) = segment.split_at(first_page_write.unwrap_or(segment.len()));
        assert!(
            pages.iter().all(|&(_, len)| len <= 65536),
            "a zeroing write after a page write, or a page write over 64 KB: {segment:?}"
        );
        let mut end = 8192;
        for &(off, len) in zeros {
            assert_eq!(off, end, "zeroing not sequential from page 1: {zeros:?}");
            assert!(len <= 1 << 20, "a zeroing write over 1 MB: {zeros:?}");
            end += len;
        }
        assert_window(pages, 6);
        if !zeros.is_empty() && pages.len() >= 8 {
            judged += 1;
            assert_eq!(end, 8 << 20, "the zeroing stopped short: {zeros:?}");
            assert!(pages.iter().any(|&(_, len)| len == 65536), "{pages:?}");
        }
    }
    assert!(judged >= 1, "no whole restore to judge: {zeroed:?}");
    let instant = traced_restore("InstantFileInitialization=TRUE\n", "89", enough);
    assert!(
        instant.iter().all(|&(_, len)| len <= 65536),
        "a write over 64 KB (zeroing) with instant file initialization: {instant:?}"
    );
    assert!(instant.iter().filter(|&&(off, _)| off > 0).count() >= 8);
}

/// At most `buffers` page writes were in flight: the writes are posted in file order, so a
/// write's rank by offset is its place in the posting order, and the write posted as number j
/// was posted only once j + 1 - `buffers` writes had completed. A write's system call returns
/// (and strace prints it) before the helper that made it reports the completion, so those
/// completed writes are traced before write j is. Each write is therefore traced after at least
/// j + 1 - `buffers` others, whatever order the helpers ran in and however loaded the machine
/// (a slow write may be overtaken by any number of later ones; that is not a breach). A write
/// not traced only lowers the ranks, so it can hide a breach but not make one.
fn assert_window(pages: &[(u64, u64)], buffers: usize) {
    let mut offsets: Vec<u64> = pages.iter().map(|&(off, _)| off).collect();
    offsets.sort_unstable();
    for (traced_before, &(off, _)) in pages.iter().enumerate() {
        let posted = offsets.partition_point(|&o| o < off);
        assert!(
            posted < traced_before + buffers,
            "write {posted} (by offset) traced after only {traced_before} others: more than \
             {buffers} in flight: {pages:?}"
        );
    }
}

/// The writes of `sqliosim.mdx.restored` (offset, bytes) of a traced run (`--engine psync`,
/// `seed`) of a small backup plan with `RestoreAfterBackup` and the `[BackupUser]` keys
/// `restore`; runs again, longer (3, 10, then 30 s) on a fresh directory, until `enough` says
/// the writes traced judge a restore (a backup under strace may take a whole short cycle).
fn traced_restore(
    restore: &str,
    seed: &str,
    enough: impl Fn(&[(u64, u64)]) -> bool,
) -> Vec<(u64, u64)> {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = cfg_dir.path().join("restore.cfg.ini");
    std::fs::write(
        &config,
        format!(
            "[CONFIG]\nTestCycles=1\nTestCycleDuration=3\nMaxMemoryMB=4\nWriteThrough=TRUE\n\
             [RandomUser]\nUserCount=1\n[AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n\
             [BulkUpdateUser]\nUserCount=0\n\
             [ShrinkUser]\nMinShrinkInterval=100000\nMaxShrinkInterval=100000\n\
             [BackupUser]\nUserCount=1\nMaxTransferSize=262144\nBufferCount=8\nBackupDelay=100\n\
             RestoreAfterBackup=TRUE\n{restore}\
             [File1]\nFileName=sqliosim.mdx\nInitialSize=8\nMaxSize=8\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
             [File2]\nFileName=sqliosim.ldx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n"
        ),
    )
    .expect("config");
    let mut writes = Vec::new();
    for seconds in ["3", "10", "30"] {
        let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let mut cmd = run_cmd(&config, data.path());
        cmd.args(["--engine", "psync", "--no-json", "--seed", seed]);
        cmd.args(["--duration", seconds]);
        let (out, calls) = crate::strace_support::run(&cmd, &data.path().join("strace.txt"));
        assert_success(&out);
        writes = calls
            .iter()
            .filter(|c| c.is_write())
            .filter(|c| {
                c.path
                    .as_deref()
                    .is_some_and(|p| p.ends_with("sqliosim.mdx.restored"))
            })
            .filter_map(|c| Some((c.offset?, c.len?)))
            .collect::<Vec<(u64, u64)>>();
        if enough(&writes) {
            break;
        }
        eprintln!(
            "a {seconds} s cycle traced {} restore write(s): too few to judge, going again",
            writes.len()
        );
    }
    writes
}
