//! The SQL Server-like actors. Each actor decides its next operation from its plan and its
//! random generator, and performs it through a [`worker::Worker`], which verifies every read;
//! the checkpoint, lazy writer, read-ahead, bulk update and initial update post theirs through a
//! [`flight::Flight`] without waiting for each.

mod acks;
pub mod batch;
mod carrier;
pub mod evidence;
pub mod failure;
pub mod flight;
mod landed;
pub mod random;
pub mod shared;
pub mod shrink;
pub mod sync;
pub mod system;
pub mod worker;
