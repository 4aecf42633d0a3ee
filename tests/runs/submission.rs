//! The submission path seen from outside (issue #24 §3): under strace, a run with `--engine
//! libaio` on O_DIRECT files submits through kernel AIO (`io_submit`, `io_getevents`), reads
//! and writes the data file that way, never enters io_uring, and ends clean; its scatter/gather
//! requests carry one 8 KiB iovec entry per page, or two 4 KiB ones with `IoVec4K=TRUE`.

use crate::crash_support::{assert_success, run_cmd};
use crate::strace_support;

/// Two random users and a log over one 16 MB data file, for 2 seconds.
const CONFIG: &str = "[CONFIG]\nStopOnError=TRUE\nTestCycles=1\nTestCycleDuration=2\nMaxMemoryMB=8\n\
    [RandomUser]\nUserCount=2\n[AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n\
    [BulkUpdateUser]\nUserCount=0\n\
    [File1]\nFileName=sqliosim.mdx\nInitialSize=16\nMaxSize=16\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
    [File2]\nFileName=sqliosim.ldx\nInitialSize=4\nMaxSize=4\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";

/// The `iov_len` of every iovec entry of the vectored control blocks (PREADV, PWRITEV) on the
/// data file in a strace text.
fn data_file_iov_lens(trace: &str) -> Vec<u64> {
    trace
        .split("aio_lio_opcode=")
        .skip(1)
        .filter(|iocb| iocb.starts_with("IOCB_CMD_PREADV") || iocb.starts_with("IOCB_CMD_PWRITEV"))
        .filter(|iocb| {
            iocb.split(',')
                .nth(1)
                .is_some_and(|fd| fd.ends_with("sqliosim.mdx>"))
        })
        .flat_map(|iocb| {
            let list = iocb.split("aio_offset=").next().unwrap_or_default();
            list.split("iov_len=")
                .skip(1)
                .filter_map(|n| n.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
                .collect::<Vec<u64>>()
        })
        .collect()
}

/// Runs `--engine libaio` with `extra` [CONFIG] lines under strace: the trace text and the
/// calls, or `None` without strace.
fn traced_libaio_run(
    dir: &std::path::Path,
    extra: &str,
) -> Option<(String, Vec<strace_support::Call>)> {
    if !strace_support::available() {
        return None;
    }
    let config = dir.join("aio.cfg.ini");
    let text = CONFIG.replace("[CONFIG]\n", &format!("[CONFIG]\n{extra}"));
    std::fs::write(&config, text).expect("write config");
    let mut cmd = run_cmd(&config, dir);
    cmd.args(["--engine", "libaio", "--no-json"]);
    let trace = dir.join("strace.txt");
    let (out, calls) = strace_support::run_tracing(
        &cmd,
        &trace,
        "trace=io_submit,io_getevents,io_uring_enter,io_uring_setup",
    );
    let stdout = assert_success(&out);
    assert!(stdout.contains("Verdict: CLEAN"), "{stdout}");
    assert!(stdout.contains("I/O engine = libaio"), "{stdout}");
    let text = std::fs::read_to_string(&trace).expect("read the trace");
    Some((text, calls))
}

#[test]
fn a_libaio_run_submits_through_kernel_aio_and_ends_clean() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let Some((text, calls)) = traced_libaio_run(dir.path(), "") else {
        return;
    };
    let count = |name: &str| calls.iter().filter(|c| c.syscall == name).count();
    assert!(
        count("io_submit") > 10,
        "io_submit calls: {}",
        count("io_submit")
    );
    assert!(
        count("io_getevents") > 10,
        "io_getevents calls: {}",
        count("io_getevents")
    );
    assert_eq!(count("io_uring_setup") + count("io_uring_enter"), 0);
    // The data file's pages travel in the control blocks, as single buffers and as
    // scatter/gather lists (strace -y names the file behind aio_fildes).
    for opcode in ["IOCB_CMD_PREADV", "IOCB_CMD_PWRITEV", "IOCB_CMD_PREAD"] {
        let on_data = format!("aio_lio_opcode={opcode}, aio_fildes=");
        assert!(
            text.split(&on_data).skip(1).any(|rest| rest
                .split(',')
                .next()
                .is_some_and(|fd| fd.ends_with("sqliosim.mdx>"))),
            "no {opcode} on the data file in the trace"
        );
    }
    // One 8 KiB entry per page.
    let lens = data_file_iov_lens(&text);
    assert!(
        !lens.is_empty() && lens.iter().all(|&l| l == 8192),
        "{lens:?}"
    );
}

#[test]
fn iovec_4k_builds_scatter_gather_requests_from_4_kib_entries() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let Some((text, _)) = traced_libaio_run(dir.path(), "IoVec4K=TRUE\n") else {
        return;
    };
    let lens = data_file_iov_lens(&text);
    assert!(lens.len() > 10, "{lens:?}");
    assert!(lens.iter().all(|&l| l == 4096), "{lens:?}");
}
