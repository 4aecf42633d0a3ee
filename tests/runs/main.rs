//! The `sqliosim` binary run the way a user runs it, over real files in temporary
//! directories, in one test binary (issue #22 §11): crashes and what verify finds after them,
//! reruns and resumes over what a run left, whole runs and their exit codes, signals, the JSON
//! summary, and verify of lost and read-only file sets. Each topic is a module; the support
//! modules they share are declared here once. The suites that need FUSE, network namespaces or
//! a device matrix stay binaries of their own.

#[path = "../crash_support/mod.rs"]
mod crash_support;
#[path = "../loop_support/mod.rs"]
mod loop_support;
#[path = "../strace_support/mod.rs"]
mod strace_support;

mod backup;
mod crash;
mod device_lba;
mod kernel_log;
mod log_io;
mod rerun;
mod resume_journal;
mod runs;
mod safety;
mod signal_stop;
mod summary_json;
mod verify_lost;
mod verify_readonly;
