//! faultfs: a FUSE pass-through filesystem that injects storage faults on command.
//!
//! The binary mounts it; end-to-end tests drive it through [`mount::Mount`].
//! Layers: `spec` (command text) → `faults` (pure decisions) → `io`/`control`
//! (carry them out) → `ops` (kernel requests) → `daemon` (mount and serve). `cache` is the
//! volatile write cache (power cuts, lying flushes) under `io`.

#![warn(missing_docs)]

pub mod cache;
pub mod cli;
pub mod control;
pub mod daemon;
pub mod faults;
pub mod fs;
mod handlers;
pub mod io;
pub mod mount;
mod ops;
pub mod spec;
mod sys;

pub use mount::{fuse_available, fuse_or_skip, Mount, MountError};
