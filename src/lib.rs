//! sqliosim: a storage integrity and stress simulator.
//!
//! One package: this library and the `sqliosim` binary (`src/main.rs`, which only hands the
//! command line to [`app::run`]). The `faultfs` FUSE test filesystem is a second crate of the
//! workspace. docs/layout.md records what moved where when the layers below were set.
//!
//! # Layers
//!
//! The top-level modules form one order, lowest first. A module uses (`crate::X`) only modules
//! listed before it; `tests/layers.rs` reads this list and fails on any `use` that points the
//! other way (run in CI with the other tests). A module added to the crate must be placed here.
//!
//! 1. [`exit`] — the outcome of a command and its exit status (0 clean, 1 findings, 2
//!    usage/config/environment, 3 internal failure).
//! 2. [`page`] — the 8 KB page format and its verifier: pure functions, no I/O.
//! 3. [`findings`] — integrity findings and log messages (the data; the stream they travel in
//!    is [`events`]).
//! 4. [`io`] — the only door to the disk: the `Backend`/`Storage` traits, the direct, buffered
//!    and faulty backends, the async I/O ring (`io::aio`) and the I/O service (`io::service`).
//! 5. [`control`] — run-time controls that the driver and the actors share: stop, throttle,
//!    outstanding-I/O gate, in-flight table, and the depth gauges the throttle counts
//!    requests in (`stats` reads them for the summary).
//! 6. [`config`] — SQLIOSim INI text and the command line → validated `RunSettings`.
//! 7. [`plan`] — validated settings → the run plan (`SimPlan`) the actors and the driver read.
//! 8. [`engine`] — the storage engine: expected-state oracle, read retries, buffer pool, data
//!    files, write-ahead log, journal, scans.
//! 9. [`stats`] — per-thread counters and histograms, merged into the run summary (with the
//!    depth gauges' readings).
//! 10. [`events`] — the typed event stream (`Event`, `EventSink`, `Fanout`): findings,
//!     messages, phases, ticks, facts, the stop and the summary, from the driver and the
//!     workers to every output.
//! 11. [`report`] — evidence: XML log, dumps, JSON summary, progress line text, `sqliosim
//!     report` (never uses `actors` or `sched`, which come after it).
//! 12. [`actors`] — the SQL Server-like actors, one file each.
//! 13. [`sched`] — the driver only: setup, test cycles, monitor, resume.
//! 14. [`bench`](mod@bench) — capacity runs: `sqliosim bench` and the SQLIO and DiskSpd
//!     front ends.
//! 15. [`cli`] — clap definitions of the command line; no I/O.
//! 16. [`app`] — the wiring of each subcommand: config → plan → storage, engine, actors →
//!     driver → reports.
//!
//! # Names
//!
//! One name per thing: [`engine`] is the storage engine (oracle, pool, WAL); the I/O that
//! `--engine` chooses is an [`io::aio::Ring`] (io_uring or psync) carried for the simulation
//! by the [`io::IoService`] in [`io::service`], chosen by [`config::IoServiceKind`] and
//! recorded as [`report::IoServiceInfo`]. The capacity runs' own types carry their mode in
//! their name ([`bench::latency::BenchStats`], [`bench::summary::BenchSummary`],
//! [`bench::worker::BenchWorker`], [`bench::units::BadArg`]) beside the simulation's
//! [`stats::ThreadStats`], [`stats::Summary`], [`actors::worker::Worker`] and
//! [`config::BadValue`].

// The library keeps these (the tests and benches, which unwrap freely, do not): every public
// item says what it is, and nothing unwraps (`expect` with the invariant it relies on, or `?`).
// clippy.toml lets `#[cfg(test)]` code unwrap.
#![warn(missing_docs)]
#![warn(clippy::unwrap_used)]
// stdout and stderr only through crate::exit (outln!, errln!): the std macros panic when
// the stream fails (a closed pipe), which would turn any exit status into 101.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod actors;
pub mod app;
pub mod bench;
pub mod cli;
pub mod config;
pub mod control;
pub mod engine;
pub mod events;
pub mod exit;
pub mod findings;
pub mod io;
pub mod page;
pub mod plan;
pub mod report;
pub mod sched;
pub mod stats;
