//! `sqliosim report LOG_OR_JSON [--html FILE] [--bundle FILE.tar.gz]`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;

use crate::exit::Outcome;

/// Reads the XML log or JSON summary of a run (also one cut short by a killed run) and prints
/// a summary; exits 1 when it holds integrity errors, 0 when clean, 2 when unreadable.
#[derive(Debug, Parser)]
#[command(about)]
pub struct Args {
    /// The XML log (sqliosim.log.xml, also SQLIOSim's) or the JSON summary of a run.
    pub input: PathBuf,
    /// Also write a self-contained HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also pack the evidence (log, JSON, dumps, report, system information) into FILE.tar.gz.
    #[arg(long, value_name = "FILE")]
    pub bundle: Option<PathBuf>,
}

/// Runs the command.
pub fn main(args: Vec<OsString>) -> anyhow::Result<Outcome> {
    let args = match Args::try_parse_from(args) {
        Ok(a) => a,
        Err(e) if !e.use_stderr() => {
            // --help and --version: print and succeed.
            print!("{e}");
            return Ok(Outcome::Clean);
        }
        Err(e) => return Err(e.into()),
    };
    run(args)
}

/// Runs the command with parsed options.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let loaded = super::reader::load(&args.input)?;
    print!("{}", super::console::render(&loaded));
    let mut html_path = None;
    if let Some(p) = &args.html {
        let page = super::html::render_loaded(&loaded);
        std::fs::write(p, page).map_err(|e| super::ReportError::io(p, e))?;
        println!("HTML report written to {}", p.display());
        html_path = Some(p.clone());
    }
    if let Some(p) = &args.bundle {
        let files = super::bundle::evidence_files(&loaded, html_path.as_deref());
        super::bundle::write(p, &files)?;
        println!("Evidence bundle written to {}", p.display());
    }
    Ok(if loaded.integrity_errors() > 0 {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}
