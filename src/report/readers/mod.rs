//! Reading a run's evidence back, cut short or not: [`load`] (an XML log, ours or SQLIOSim's,
//! or a JSON summary), [`logparse`] (ENTRY by ENTRY), the summary lines of a log
//! (`summary_lines`), a JSON document cut short (`json_repair`), and whether the run finished
//! ([`runstate`]).

pub(crate) mod json_repair;
pub mod load;
pub mod logparse;
pub mod runstate;
pub(crate) mod summary_lines;
