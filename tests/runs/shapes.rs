//! I/O shapes of SQL Server's actors seen from outside, under strace with `--engine sync` (each
//! request one system call): a DBCC snapshot's copy-on-write is one 8 KB write per page, and
//! Enterprise edition reads ahead up to 1,024 pages (8 MB) in one request.

use crate::crash_support::{assert_success, run_cmd, small_config};
use crate::strace_support::Call;

fn on(c: &Call, suffix: &str) -> bool {
    c.path.as_deref().is_some_and(|p| p.ends_with(suffix))
}

/// SQL Server copies each page into the snapshot's sparse file before the page's first change
/// (8 KB each), never a gathered run: every write of the snapshot file is one page at a page
/// boundary.
#[test]
fn under_strace_every_write_into_a_dbcc_snapshot_is_one_8_kb_page() {
    if !crate::strace_support::available() {
        return;
    }
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(cfg_dir.path(), 1, 4, true);
    let mut text = std::fs::read_to_string(&config).expect("config");
    text.push_str("[CheckDbUser]\nUserCount=1\nReadAheadPages=8\nReadDelay=20\nCheckDelay=50\n");
    std::fs::write(&config, text).expect("write config");
    let mut cmd = run_cmd(&config, data.path());
    cmd.args(["--engine", "sync", "--no-json", "--seed", "7"]);
    let (out, calls) = crate::strace_support::run(&cmd, &data.path().join("strace.txt"));
    assert_success(&out);
    let copies: Vec<&Call> = calls
        .iter()
        .filter(|c| c.is_write() && on(c, "sqliosim.mdx_MSSQL_DBCC0"))
        .collect();
    assert!(
        copies.len() > 1,
        "no page was copied into the snapshot: {} calls traced",
        calls.len()
    );
    for c in &copies {
        assert_eq!(c.len, Some(8192), "a snapshot write of another size: {c:?}");
        assert_eq!(c.offset.map(|o| o % 8192), Some(0), "{c:?}");
    }
    // The data file itself still gets gathered writes (the checkpoint's, the bulk user's):
    // the single pages are the snapshot's shape, not the run's.
    assert!(
        calls
            .iter()
            .any(|c| c.is_write() && on(c, "sqliosim.mdx") && c.len > Some(8192)),
        "no gathered write of the data file"
    );
}

/// `Edition=Enterprise` lifts the read-ahead cap to 1,024 pages: a Read Ahead User asking for
/// 1,024 pages reads 8 MB in one request, and never more.
#[test]
fn under_strace_enterprise_read_ahead_reads_8_mb_in_one_request() {
    if !crate::strace_support::available() {
        return;
    }
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = cfg_dir.path().join("ent.cfg.ini");
    std::fs::write(
        &config,
        "[CONFIG]\nTestCycles=1\nTestCycleDuration=2\nMaxMemoryMB=64\nEdition=Enterprise\n\
         [RandomUser]\nUserCount=0\n[AuditUser]\nUserCount=0\n[BulkUpdateUser]\nUserCount=0\n\
         [ReadAheadUser]\nUserCount=1\nBuffersRAMin=1024\nBuffersRAMax=1024\nRADelay=10\n\
         [ShrinkUser]\nMinShrinkInterval=100000\nMaxShrinkInterval=100000\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=24\nMaxSize=24\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n",
    )
    .expect("config");
    let mut cmd = run_cmd(&config, data.path());
    cmd.args(["--engine", "sync", "--no-json", "--seed", "5"]);
    let (out, calls) = crate::strace_support::run(&cmd, &data.path().join("strace.txt"));
    assert_success(&out);
    let reads: Vec<u64> = calls
        .iter()
        .filter(|c| c.is_read() && on(c, "sqliosim.mdx"))
        .filter_map(|c| c.len)
        .collect();
    const EIGHT_MB: u64 = 8 << 20;
    assert!(
        reads.contains(&EIGHT_MB),
        "no 8 MB read-ahead: {:?}",
        reads.iter().max()
    );
    assert!(reads.iter().all(|&n| n <= EIGHT_MB), "{reads:?}");
}
