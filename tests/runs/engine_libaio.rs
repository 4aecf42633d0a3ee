//! `--engine libaio` seen from outside (issue #24 §3): under strace, a run on O_DIRECT files
//! submits through kernel AIO (`io_submit`, `io_getevents`), reads and writes the data file
//! that way, never enters io_uring, and ends clean.

use crate::crash_support::{assert_success, run_cmd};
use crate::strace_support;

/// Two random users and a log over one 16 MB data file, for 2 seconds.
const CONFIG: &str = "[CONFIG]\nStopOnError=TRUE\nTestCycles=1\nTestCycleDuration=2\nMaxMemoryMB=8\n\
    [RandomUser]\nUserCount=2\n[AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n\
    [BulkUpdateUser]\nUserCount=0\n\
    [File1]\nFileName=sqliosim.mdx\nInitialSize=16\nMaxSize=16\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
    [File2]\nFileName=sqliosim.ldx\nInitialSize=4\nMaxSize=4\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";

#[test]
fn a_libaio_run_submits_through_kernel_aio_and_ends_clean() {
    if !strace_support::available() {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = dir.path().join("aio.cfg.ini");
    std::fs::write(&config, CONFIG).expect("write config");
    let mut cmd = run_cmd(&config, dir.path());
    cmd.args(["--engine", "libaio", "--no-json"]);
    let trace = dir.path().join("strace.txt");
    let (out, calls) = strace_support::run_tracing(
        &cmd,
        &trace,
        "trace=io_submit,io_getevents,io_uring_enter,io_uring_setup",
    );
    let stdout = assert_success(&out);
    assert!(stdout.contains("Verdict: CLEAN"), "{stdout}");
    assert!(stdout.contains("I/O engine = libaio"), "{stdout}");
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
    let text = std::fs::read_to_string(&trace).expect("read the trace");
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
}
