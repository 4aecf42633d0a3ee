//! End-to-end tests of faultfs through the kernel: one binary, topic modules under it/.
//!
//! Each test mounts its own faultfs in a temporary directory under the package
//! directory (ext4, not tmpfs), writes stamped 8 KB pages with O_DIRECT through
//! the mount and checks the backing file and the read-back show exactly the fault.
//! Without /dev/fuse or root they print `SKIPPED: …` and return; with
//! SQLIOSIM_REQUIRE_FUSE=1 they fail instead.

#[path = "it/support.rs"]
mod support;

#[path = "it/passthrough.rs"]
mod passthrough;

#[path = "it/write_faults.rs"]
mod write_faults;

#[path = "it/read_faults.rs"]
mod read_faults;

#[path = "it/control.rs"]
mod control;

#[path = "it/lifecycle.rs"]
mod lifecycle;

#[path = "it/power_cut.rs"]
mod power_cut;
