//! sqliosim: a storage integrity and stress simulator.
//!
//! The crate is layered; each layer depends only on the ones listed before it:
//! `page` (pure page format and verifier) → `io` (the storage trait and its backends) →
//! `engine` (expected-state oracle, retries, buffer pool, data and log files) →
//! `actors` / `sched` (the SQL Server-like workload) → `stats` / `report` (evidence) →
//! `app` (wiring). `config` turns INI text and the command line into a run plan, and `bench`
//! holds the capacity-run modes (SQLIO, DiskSpd, sweeps).

pub mod actors;
pub mod app;
pub mod bench;
pub mod cli;
pub mod config;
pub mod control;
pub mod engine;
pub mod exit;
pub mod findings;
pub mod io;
pub mod page;
pub mod plan;
pub mod report;
pub mod sched;
pub mod stats;
