//! The `sqliosim` binary run the way a user runs it, over real files in temporary
//! directories, in one test binary (issue #22 §11): crashes and what verify finds after them,
//! reruns and resumes over what a run left, whole runs and their exit codes, signals, the JSON
//! summary, verify of lost file sets, queue depth, the hidden
//! `--fault-injection`, generations across restarts, hostile
//! environments and planted names, and io_uring refused by seccomp. Each topic is a module;
//! the support modules they share are declared here once. The suites that need FUSE, loop devices
//! or mounts are in `tests/kernel/`.

#[path = "../common/mod.rs"]
mod common;
mod crash_support;
mod strace_support;

mod backup;
mod backup_restore;
mod bench_evidence;
mod checkdb;
mod confined_outputs;
mod crash;
mod depth;
mod durability_modes;
mod env_limits;
mod fault_injection;
mod flush_economy;
mod foreign_versions;
mod generations;
mod host_tools;
mod hostile_env;
mod hostile_evidence;
mod hostile_names;
mod joints;
mod kernel_beside;
mod kernel_log;
mod log_backup;
mod log_io;
mod rerun;
mod resume_journal;
mod runs;
mod safety;
mod shapes;
mod signal_stop;
mod sort;
mod status_p99;
mod submission;
mod summary_json;
mod uring_refused;
mod verify_lost;
mod witness;
