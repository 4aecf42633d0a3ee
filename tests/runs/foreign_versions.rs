//! Files of a format version this build does not read are refused by name (issue #40): the
//! journal on `verify` and `run --resume`, a data file's header page on `verify`, a `.bak` on
//! `verify` and `restore`, a `.trn` on `verify`. Each exits 2 with a message naming the file,
//! the version found and the versions this build reads; none is judged as the device's doing.

use std::path::{Path, PathBuf};
use std::process::Output;

use sqliosim::page::layout::{page_checksum, OFF_CHECKSUM, OFF_VERSION};
use sqliosim::sim::engine::backup;

use crate::crash_support::{assert_exit, assert_success, bin, run_cmd, small_config, verify};

/// Asserts `out` refused `path` (exit 2) as `format` of version `found`, read: version 1.
fn assert_refused(out: &Output, path: &Path, format: &str, found: u32) {
    assert_exit(out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "{}: {format} format version {found}; this build of sqliosim reads version 1",
        path.display()
    );
    assert!(err.contains(&want), "want {want:?} in: {err}");
}

/// The library's forged stream of one END block (a `.trn` when `log`) stating `version`,
/// written in `dir`.
fn stream(dir: &Path, log: bool, version: u32) -> PathBuf {
    let path = dir.join(if log { "x.trn" } else { "x.bak" });
    std::fs::write(&path, backup::stream_of_version(log, version)).expect("write the stream");
    path
}

#[test]
fn a_backup_stream_of_another_version_is_refused_by_verify_and_restore() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let bak = stream(dir.path(), false, 9);
    let out = bin().arg("verify").arg(&bak).output().expect("verify");
    assert_refused(&out, &bak, "backup stream", 9);
    let out = bin().arg("restore").arg(&bak).output().expect("restore");
    assert_refused(&out, &bak, "backup stream", 9);
    let trn = stream(dir.path(), true, 0);
    let out = bin().arg("verify").arg(&trn).output().expect("verify");
    assert_refused(&out, &trn, "log backup stream", 0);
}

#[test]
fn a_journal_or_a_data_file_of_another_version_is_refused_by_verify_and_resume() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 1, true);
    assert_success(&run_cmd(&config, dir.path()).output().expect("run"));
    assert_success(&verify(dir.path()));

    let journal = dir.path().join("sqliosim.journal");
    let good = std::fs::read(&journal).expect("journal");
    let mut other = good.clone();
    other[9..11].copy_from_slice(&3u16.to_le_bytes());
    std::fs::write(&journal, &other).expect("write");
    assert_refused(&verify(dir.path()), &journal, "journal", 3);
    let out = run_cmd(&config, dir.path())
        .arg("--resume")
        .output()
        .expect("resume");
    assert_refused(&out, &journal, "journal", 3);
    assert_eq!(
        std::fs::read(&journal).expect("journal"),
        other,
        "refused, not rewritten"
    );
    std::fs::write(&journal, &good).expect("write");

    let data = dir.path().join("sqliosim.mdx");
    let mut header = std::fs::read(&data).expect("data file")[..8192].to_vec();
    header[OFF_VERSION..OFF_VERSION + 2].copy_from_slice(&5u16.to_le_bytes());
    let crc = page_checksum(&header);
    header[OFF_CHECKSUM..OFF_CHECKSUM + 4].copy_from_slice(&crc.to_le_bytes());
    crate::crash_support::write_page(&data, 0, &header);
    assert_refused(&verify(dir.path()), &data, "page", 5);
}

/// A log whose blocks all state another version (a set written by another sqliosim, verified
/// without its journal) is refused by name, not reported as "0 log blocks found" nor judged.
#[test]
fn a_log_of_another_version_is_refused_by_verify_without_the_journal() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 1, true);
    assert_success(&run_cmd(&config, dir.path()).output().expect("run"));
    let log = dir.path().join("sqliosim.ldx");
    let mut bytes = std::fs::read(&log).expect("log");
    // Every whole block (magic, a length, a good checksum) restated as version 0 and resealed
    // (CRC32 of the block with its checksum field left out: bytes 44..48).
    let (mut off, mut blocks) = (8192usize, 0);
    while off + 512 <= bytes.len() {
        let at = &bytes[off..];
        let len = u32::from_le_bytes(at[12..16].try_into().expect("4 bytes")) as usize;
        if at[..8] != *b"SQLSIMLG"
            || len < 512
            || !len.is_multiple_of(512)
            || off + len > bytes.len()
        {
            off += 512;
            continue;
        }
        let block = &mut bytes[off..off + len];
        block[52..54].copy_from_slice(&0u16.to_le_bytes());
        let mut h = crc32fast::Hasher::new();
        h.update(&block[..44]);
        h.update(&block[48..]);
        let crc = h.finalize();
        block[44..48].copy_from_slice(&crc.to_le_bytes());
        blocks += 1;
        off += len;
    }
    assert!(blocks > 0, "the run wrote log blocks");
    std::fs::write(&log, &bytes).expect("write the log");
    let out = bin()
        .arg("verify")
        .arg("--dir")
        .arg(dir.path())
        .arg("--no-journal")
        .output()
        .expect("verify");
    assert_refused(&out, &log, "log block", 0);
    // With the journal, which holds a durable log position: refused too, not "durable log
    // lost"; and `run --resume` refuses it before it judges anything.
    assert_refused(&verify(dir.path()), &log, "log block", 0);
    let out = run_cmd(&config, dir.path())
        .arg("--resume")
        .output()
        .expect("resume");
    assert_refused(&out, &log, "log block", 0);
}

/// A run's own stream, named by its journal as a finished backup, restated as another
/// version: `verify` of the set refuses it by name (exit 2) rather than judging it lost.
#[test]
fn a_journaled_backup_stream_of_another_version_is_refused_when_the_set_is_verified() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 3, true);
    let mut text = std::fs::read_to_string(&config).expect("config");
    text.push_str(
        "[BackupUser]\nUserCount=1\nMaxTransferSize=262144\nBufferCount=4\nBackupDelay=100\n",
    );
    std::fs::write(&config, text).expect("write config");
    assert_success(&run_cmd(&config, dir.path()).output().expect("run"));
    let bak = dir.path().join("sqliosim.bak");
    let mut bytes = std::fs::read(&bak).expect("the run left its stream");
    assert_eq!(bytes[8..12], 1u32.to_le_bytes(), "version 1 at 8..12");
    assert_success(&verify(dir.path()));
    bytes[8..12].copy_from_slice(&7u32.to_le_bytes());
    std::fs::write(&bak, &bytes).expect("write the stream");
    assert_refused(&verify(dir.path()), &bak, "backup stream", 7);
}
