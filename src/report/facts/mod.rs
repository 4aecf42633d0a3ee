//! The facts a run's evidence records about the machine: system information ([`sysinfo`]), the
//! block device under each file ([`blockdev`]), what carried the I/O ([`io_service`]), the
//! device LBA of a finding's page ([`lba`]), the kernel's messages of the run ([`kmsg`]), the
//! drives' health before and after ([`health`]) and the host as an RMA asks for it ([`host`]); the host tools they ask are
//! run bounded in time ([`tool`]).

pub mod blockdev;
pub mod health;
pub mod host;
pub mod io_service;
pub mod kmsg;
pub mod lba;
pub mod sysinfo;
pub mod tool;
