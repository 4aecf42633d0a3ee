//! The facts a run's evidence records about the machine: system information ([`sysinfo`]), the
//! block device under each file ([`blockdev`]), and what carried the I/O ([`io_service`]).

pub mod blockdev;
pub mod io_service;
pub mod lba;
pub mod sysinfo;
