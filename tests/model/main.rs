//! The simulation in process, one test binary (issue #22 §11: one binary links the library
//! once, where each of these files was a binary of its own): the page format and its
//! verifier (properties, verdicts, offline and concurrent checks), the storage door (direct,
//! faulty, the I/O service), the statistics, and the simulator driven over the in-memory and
//! faulty backends (sim, depth, progress, 4 KiB sectors, the crash models). Each topic is a
//! module; the support modules they share are declared here once.

#[path = "../common/mod.rs"]
mod common;
mod model_cut_support;
mod page_support;
#[path = "../sim_support/mod.rs"]
mod sim_support;

mod allowed_tear;
mod backup;
mod checkdb;
mod crash_model;
mod depth_bursts;
mod depth_throttle;
mod io_direct;
mod io_faulty;
mod io_service;
mod journal_memory;
mod log_backup;
mod log_read_error;
mod page_concurrency;
mod page_concurrency_async;
mod page_offline;
mod page_oracle_props;
mod page_props;
mod page_verdicts;
mod page_verify_props;
mod progress;
mod recovery_writer;
mod sector4k;
mod sequential_cursors;
mod shrink_moves;
mod sim;
mod sort;
mod stats;
mod stepped;
