//! Through the kernel, in one test binary (issue #22 §11): the real `sqliosim` binary on
//! faultfs mounts (fault classes end to end, power cuts, O_DSYNC on FUSE, late
//! acknowledgements, the journal on a faulty disk, the asynchronous actors' own rings, the
//! platform's refusals, the run lock across namespaces, the selftest's FUSE scenarios), on
//! loop devices (the device and filesystem matrix, device nodes never written, capacity runs on
//! block devices, verify on a read-only mount), killed at depth on them (the crash-at-depth
//! suite, and resumes cut where they move a killed run's backup streams), and the durability journal (one case on a tmpfs too small for it). Each topic is a
//! module; the support modules they share are declared here once.
//!
//! Every test makes its own mount, loop device or namespace and undoes it; loop devices are
//! attached one at a time within the process (`loop_support`), so the topics run in parallel
//! like the tests of one topic did. FUSE tests skip (SKIPPED line) without /dev/fuse and root
//! unless SQLIOSIM_REQUIRE_FUSE=1; loop-device tests skip without root unless
//! SQLIOSIM_REQUIRE_LOOP=1.

#[path = "../crash_support/mod.rs"]
mod crash_support;
mod cut_support;
mod fuse_support;
mod loop_support;

mod bench_device;
mod crash_depth;
mod device_lba;
mod device_links;
mod devices;
mod dsync_fuse;
mod env_errors;
mod fuse_e2e;
mod journal;
mod journal_faults;
mod late_ack;
mod matrix;
mod own_ring;
mod power_cut;
mod restore_fuse;
mod resume_streams;
mod run_lock;
mod selftest;
mod selftest_planted;
mod verify_readonly;
mod witness_cut;
