//! Run-time controls that the driver (`sim::driver`) and the actors both hold: the stop signal and
//! its reason ([`stop`]), the per-file throttle and the MaxOutstandingIO gate ([`throttle`]),
//! the table of I/Os in flight the long-I/O monitor reads ([`io_ages`]), and the depth gauges
//! that count the requests in flight over time ([`depth`], read by `stats` for the summary).
//!
//! [`affinity`] applies the `Affinity`/`IOAffinity` masks to threads; [`stepping`] drives a
//! model run's stepped clock (`crate::clock`).
//!
//! They sit low in the layers so that `actors` and `driver` reach them without reaching each
//! other: the driver creates them, the actors obey them.

pub mod affinity;
pub mod depth;
pub mod io_ages;
pub mod stepping;
pub mod stop;
pub mod throttle;
