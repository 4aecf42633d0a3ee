//! What a run writes as it goes, each output a sink of the event stream or a part of one: the
//! XML log ([`xml`], its entries [`entry`], [`log_entries`], `finding_xml`, HRESULTs
//! [`hresult`], times [`clock`]), the page dumps ([`dump`]), the JSON summary ([`json`]), the
//! error cap ([`error_cap`]), the status line ([`status`]), the progress line's text
//! ([`progress`]) and the metrics textfile ([`metrics`]); [`evidence`] is the sink that ties the
//! log, the dumps and the JSON together; [`bench_figures`] is what it keeps of `run --bench`,
//! [`judgement`] what an offline judgement held the files to and counted.

pub mod bench_figures;
pub mod clock;
pub mod dump;
pub(crate) mod dump_text;
pub mod entry;
pub mod error_cap;
pub mod evidence;
pub(crate) mod finding_xml;
pub mod hresult;
pub mod json;
pub mod judgement;
pub mod log_entries;
pub mod metrics;
pub mod progress;
pub mod status;
pub mod xml;
