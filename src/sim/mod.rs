//! The simulator, in one tree: what a run is planned as ([`plan`]), the controls its threads
//! share ([`control`]), the storage engine it drives ([`engine`]), the SQL Server-like actors
//! ([`actors`]), the driver that runs the cycles ([`driver`]), and the checks of a file set at
//! rest that `verify` and `run --resume` share ([`check`]).
//!
//! The sub-modules are nodes of the crate's dependency graph of their own (see the crate docs'
//! "# Layers"): `stats`, `events` and `report` sit between [`engine`] and [`actors`], so the
//! simulator is one folder, not one layer.

pub mod actors;
pub mod check;
pub mod control;
pub mod driver;
pub mod engine;
pub mod plan;
