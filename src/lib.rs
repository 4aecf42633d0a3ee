//! sqliosim: a storage integrity and stress simulator.
//!
//! One package: this library and the `sqliosim` binary (`src/main.rs`, which only hands the
//! command line to [`app::run`]). The `faultfs` FUSE test filesystem is a second crate of the
//! workspace. ARCHITECTURE.md describes the layers below, a run's data flow and where new
//! parts go; docs/layout.md the tree.
//!
//! # Layers
//!
//! The modules form a directed acyclic graph. Each entry below names, after "uses", every
//! module whose items its code reaches by a `crate::` path; `tests/layers.rs` reads this list
//! and fails on a path to a module its entry does not name, on a named edge no code uses any
//! more, on a cycle, and on a module of `src/lib.rs` or `src/sim/mod.rs` missing here (run in
//! CI with the other tests). The simulator is one folder, [`sim`], whose parts are entries of
//! their own: `stats`, `events` and `report` sit between its engine and its actors.
//!
//! - [`exit`] (uses nothing): the outcome of a command and its exit status (0 clean, 1
//!   findings, 2 usage/config/environment, 3 internal failure).
//! - [`sync`] (uses nothing): the locks and condition variable of every thread (parking_lot's,
//!   unlocked in turn on a stepped run's threads).
//! - [`clock`] (uses `sync`): the simulator's time: the real clock, or a stepped one that
//!   moves only when every thread of a model run waits, so the run is the same for a seed.
//! - [`codec`] (uses nothing): the one codec of every on-disk format (and of the witness's
//!   messages): a little-endian writer and reader, the CRC32, and each format's versions with
//!   the refusal of an unknown one.
//! - [`page`] (uses `clock`, `codec`): the 8 KB page format and its verifier: pure functions, no I/O.
//! - [`findings`] (uses `page`): integrity findings and log messages (the data; the stream
//!   they travel in is [`events`]).
//! - [`io`] (uses `clock`, `findings`, `page`, `sync`): the only door to the disk: the `Backend`/`Storage`
//!   traits, the direct, buffered and faulty backends, the async I/O ring (`io::aio`) and the
//!   I/O service (`io::service`).
//! - [`config`] (uses `io`): SQLIOSim INI text and the command line → validated `RunSettings`.
//! - [`sim::control`] (uses `clock`, `sync`): run-time controls that the driver and the actors share:
//!   stop, throttle, outstanding-I/O gate, in-flight table, and the depth gauges the throttle
//!   counts requests in (`stats` reads them for the summary).
//! - [`sim::plan`] (uses `config`, `findings`, `page`, `sim::control`): validated settings → the run plan
//!   (`SimPlan`) the actors and the driver read.
//! - [`witness`] (uses `codec`, `io`, `sync`): the off-host witness's wire protocol (frames with an HMAC)
//!   and its client: the sender a run's journal thread feeds, and the requests of `verify`.
//! - [`sim::engine`] (uses `clock`, `codec`, `findings`, `io`, `page`, `sim::control`, `sim::plan`, `sync`, `witness`):
//!   the storage engine: expected-state oracle, read retries, buffer pool, data files,
//!   write-ahead log (its requests through the throttle and the in-flight table), journal.
//! - [`sim::check`] (uses `codec`, `findings`, `io`, `page`, `sim::engine`): a file set at
//!   rest, checked: the scans `verify` and `run --resume` share, the scope of a verify, what
//!   the journal holds the device to.
//! - [`stats`] (uses `clock`, `page`, `sim::control`, `sim::engine`, `sync`): per-thread counters and
//!   histograms, merged into the run summary (with the depth gauges' readings).
//! - [`events`] (uses `findings`, `io`, `page`, `stats`, `sync`): the typed event stream (`Event`,
//!   `EventSink`, `Fanout`): findings, messages, phases, ticks, facts, the stop and the
//!   summary, from the driver and the workers to every output.
//! - [`report`] (uses `codec`, `config`, `events`, `exit`, `findings`, `io`, `page`, `stats`, `sync`):
//!   evidence: its sinks (XML log, dumps, JSON summary, status line, metrics), its readers,
//!   its views (`sqliosim report`: terminal, HTML, bundle), the fleet report and the campaign
//!   report. It never uses the simulator's actors or driver.
//! - [`sim::actors`] (uses //!   `sim::plan`, `clock`, `events`, `findings`, `io`, `page`, `sim::control`, `sim::engine`, `stats`, `sync`, `witness`): the SQL Server-like actors, their table, the run context
//!   and the journal's lifecycle.
//! - [`sim::driver`] (uses //!   `sim::control`, `clock`, `events`, `findings`, `io`, `page`, `sim::actors`, `sim::check`, `sim::engine`, `sim::plan`, `stats`, `sync`): the driver only: setup, test
//!   cycles, monitor, resume.
//! - [`bench`](mod@bench) (uses `codec`, `config`, `exit`, `io`, `report`, `stats`): capacity
//!   runs: `sqliosim bench` and the SQLIO and DiskSpd front ends.
//! - [`cli`] (uses `bench`, `config`, `report`): clap definitions of the command line; no I/O.
//! - [`fuzzing`] (uses `config`, `page`, `report`, `sim::engine`, `witness`): every reader of
//!   outside input behind one entry point, for the fuzzer (`fuzz/`) and its regression test.
//! - [`app`] (uses //!   `report`, //!   `stats`, `bench`, `cli`, `codec`, `config`, `events`, `exit`, `findings`, `io`, `page`, `sim::check`, `sim::control`, `sim::driver`, `sim::engine`, `sim::plan`, `sync`, `witness`): the wiring of each subcommand: config → plan → storage, engine, actors →
//!   driver → reports.
//!
//! # Names
//!
//! One name per thing: [`sim::engine`] is the storage engine (oracle, pool, WAL); the I/O that
//! `--engine` chooses is an [`io::aio::Ring`] (io_uring, kernel AIO or psync) carried for the simulation
//! by the [`io::IoService`] in [`io::service`], chosen by [`config::IoServiceKind`] and
//! recorded as [`report::IoServiceInfo`]. The capacity runs' own types carry their mode in
//! their name ([`bench::latency::BenchStats`], [`bench::summary::BenchSummary`],
//! [`bench::worker::BenchWorker`], [`bench::units::BadArg`]) beside the simulation's
//! [`stats::ThreadStats`], [`stats::Summary`], [`sim::actors::worker::Worker`] and
//! [`config::BadValue`].

// The library keeps these (the tests and benches, which unwrap freely, do not): every public
// item says what it is, and nothing unwraps (`expect` with the invariant it relies on, or `?`).
// clippy.toml lets `#[cfg(test)]` code unwrap.
#![warn(missing_docs)]
#![warn(clippy::unwrap_used)]
// stdout and stderr only through crate::exit (outln!, errln!): the std macros panic when
// the stream fails (a closed pipe), which would turn any exit status into 101.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod app;
pub mod bench;
pub mod cli;
pub mod clock;
pub mod codec;
pub mod config;
pub mod events;
pub mod exit;
pub mod findings;
pub mod fuzzing;
pub mod io;
pub mod page;
pub mod report;
pub mod sim;
pub mod stats;
pub mod sync;
pub mod witness;
