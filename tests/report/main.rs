//! Evidence tests: the XML log, dumps, error cap, JSON summary, reader, HTML report, bundle and
//! system information.

mod bundle;
mod campaign;
mod cap;
mod chromium_support;
mod cli;
mod encodings;
mod fixtures;
mod fleet;
mod hresult;
mod html;
mod html_header;
mod json;
mod killed;
mod snapshots;
mod sysinfo;
mod truncation;
mod xml_log;
