//! What `sqliosim report` shows of a run: the terminal summary ([`terminal`]), the HTML page
//! ([`html`], its header [`html_header`], its charts [`charts`], where its dump links point
//! [`dump_links`]), the XML log as a table ([`log_view`]) and the evidence bundle ([`bundle`], with the kernel log, host facts and
//! drive health of [`forensics`]).

pub mod bundle;
pub mod bundle_sources;
pub mod charts;
pub mod dump_links;
pub mod forensics;
pub mod html;
pub mod html_header;
pub mod log_view;
pub mod printable;
pub mod terminal;
