//! `sqliosim report INPUT... [--html FILE] [--bundle FILE.tar.gz] [--json FILE] [--junit FILE]
//! [--expect-hosts FILE]`:
//! one file is the single-run report; one directory holding `campaign.json` is the power-cycle
//! campaign report ([`super::campaign`]); several inputs or another directory are the fleet
//! report ([`super::fleet`]).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;

use super::ReportError;
use crate::exit::Outcome;
use crate::report::views::printable::printable;

/// Reads the XML log or JSON summary of a run (also one cut short by a killed run) and prints
/// a summary; exits 1 when it holds integrity errors, 0 when clean, 2 when unreadable or when
/// the run is still going or did not finish (RUNNING, UNFINISHED: never a pass).
/// Several inputs, or a directory (searched recursively), give the fleet report: one row per
/// host and device; exits 1 when any host found corruption, else 2 when a result is unreadable
/// or a run did not finish, else 0.
/// One directory holding campaign.json gives the power-cycle campaign report: one row per
/// host per power cut; exits 1 when any cycle found corruption, else 2 when a host was not
/// cut, did not come back or left no verdict, else 0.
#[derive(Debug, Parser)]
#[command(about)]
pub struct Args {
    /// The XML log (sqliosim.log.xml, also SQLIOSim's) or the JSON summary of a run; several
    /// of them, or directories of them, for the fleet report; or one campaign directory (it
    /// holds campaign.json) for the campaign report.
    #[arg(required = true, num_args = 1..)]
    pub input: Vec<PathBuf>,
    /// Also write a self-contained HTML report (the fleet page for a fleet, the campaign page
    /// for a campaign) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also pack the evidence (log, JSON, dumps, report, system information) into FILE.tar.gz
    /// (one run only; not for a fleet or a campaign).
    #[arg(long, value_name = "FILE")]
    pub bundle: Option<PathBuf>,
    /// Also write the merged result as JSON (schema "sqliosim-fleet/1"; for a campaign
    /// "sqliosim-campaign-report/1") to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write JUnit XML (one test case per host and device; for a campaign one test suite
    /// per host, one test case per cycle) to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// The hosts that must have reported, one name a line (a run's --host-label, its hostname
    /// or its machine id; blank lines and # comments ignored). An expected host without a
    /// result is named in every output, is a failing JUnit test case, and makes a fleet
    /// without corruption exit 2. Always the fleet report, even over one input (not for a
    /// campaign, whose campaign.json names its hosts).
    #[arg(long, value_name = "FILE")]
    pub expect_hosts: Option<PathBuf>,
    /// Follow symlinks met while searching a directory. Without it a symlink inside the
    /// directory is passed over (and listed as skipped): anyone who can write the directory
    /// could otherwise point the report at results that are not theirs to show (the inputs
    /// named on the command line are followed either way). Not for a campaign, whose tree is
    /// never read through a symlink.
    #[arg(long)]
    pub follow: bool,
}

/// Why `sqliosim report` gave no verdict (exit code 2; `app` keeps a closed stdout quiet).
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The command line does not parse.
    #[error(transparent)]
    Usage(#[from] clap::Error),
    /// Options that do not go together, or not with these inputs.
    #[error("{0}")]
    Refused(String),
    /// An input could not be read or an output written.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// A campaign directory that cannot be used.
    #[error(transparent)]
    Campaign(#[from] super::campaign::CampaignError),
    /// Standard output could not be written.
    #[error(transparent)]
    Stdout(#[from] crate::exit::StdoutError),
    /// The single run read has no final verdict.
    #[error(transparent)]
    NotFinished(#[from] NotFinished),
    /// The fleet report is incomplete.
    #[error(transparent)]
    FleetIncomplete(#[from] FleetIncomplete),
    /// The campaign report is incomplete.
    #[error(transparent)]
    CampaignIncomplete(#[from] CampaignIncomplete),
}

/// The fleet report found no corruption, but a result is unreadable or a run did not finish
/// (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("fleet report incomplete: {0}")]
pub struct FleetIncomplete(pub String);

/// The campaign report found no corruption, but a host was not cut, did not come back, or left
/// no verdict to read (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("campaign report incomplete: {0}")]
pub struct CampaignIncomplete(pub String);

/// The single run read found no corruption but has no final verdict: it is still going or
/// did not finish (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("no final verdict: the run {0}")]
pub struct NotFinished(pub String);

/// Runs the command.
pub fn main(args: Vec<OsString>) -> Result<Outcome, CommandError> {
    let args = match Args::try_parse_from(args) {
        Ok(a) => a,
        Err(e) if !e.use_stderr() => {
            // --help and --version: print and succeed.
            crate::exit::out!("{e}")?;
            return Ok(Outcome::Clean);
        }
        Err(e) => return Err(e.into()),
    };
    run(args)
}

/// Runs the command with parsed options: one file is the single-run report, several inputs or
/// a directory the fleet report.
pub fn run(args: Args) -> Result<Outcome, CommandError> {
    match args.input.as_slice() {
        [one] if super::campaign::is_campaign(one) => campaign(&args, one),
        [one] if !one.is_dir() && args.expect_hosts.is_none() => single(&args, one),
        _ => fleet(&args),
    }
}

fn fleet_outputs(args: &Args) -> super::fleet::Outputs {
    super::fleet::Outputs {
        html: args.html.clone(),
        json: args.json.clone(),
        junit: args.junit.clone(),
    }
}

/// The fleet report: exit 1 on corruption, 2 (an error naming what) when incomplete.
fn fleet(args: &Args) -> Result<Outcome, CommandError> {
    if args.bundle.is_some() {
        return Err(CommandError::Refused(
            "--bundle packs the evidence of one run: give a single input file, not several or a directory".into(),
        ));
    }
    let expected = match &args.expect_hosts {
        Some(p) => Some(super::fleet::expect::read(p)?),
        None => None,
    };
    let (v, text, written) = super::fleet::run(
        &args.input,
        expected.as_deref(),
        args.follow,
        &fleet_outputs(args),
    );
    print_verdict(v.code, written, &text, || {
        FleetIncomplete(printable(&v.problems).into_owned()).into()
    })
}

/// Prints a many-run report's `text` and turns its code into the outcome: 0 clean, 1
/// findings (an output that could not be written is then said, not allowed to hide them),
/// else the report's own "incomplete" error (exit 2).
fn print_verdict<E: Into<CommandError>>(
    code: u8,
    written: Result<(), E>,
    text: &str,
    incomplete: impl FnOnce() -> CommandError,
) -> Result<Outcome, CommandError> {
    let verdict = match (code, written) {
        (1, Err(e)) => {
            let e = e.into();
            crate::exit::errln!("sqliosim: error: {e}");
            Ok(Outcome::Findings)
        }
        (_, Err(e)) => Err(e.into()),
        (0, Ok(())) => Ok(Outcome::Clean),
        (1, Ok(())) => Ok(Outcome::Findings),
        (_, Ok(())) => Err(incomplete()),
    };
    crate::exit::after_printing(crate::exit::out!("{}", printable(text)), verdict)
}

/// The campaign report: exit 1 on corruption, 2 (an error naming what) when a cycle is
/// MISSING or in ERROR, or when campaign.json cannot be used.
fn campaign(args: &Args, dir: &std::path::Path) -> Result<Outcome, CommandError> {
    let refused = |opt: &str, why: &str| {
        CommandError::Refused(format!(
            "{opt} does not apply to a campaign directory ({}): {why}",
            dir.display()
        ))
    };
    if args.bundle.is_some() {
        return Err(refused("--bundle", "it packs the evidence of one run"));
    }
    if args.expect_hosts.is_some() {
        return Err(refused("--expect-hosts", "campaign.json names the hosts"));
    }
    if args.follow {
        return Err(refused(
            "--follow",
            "a campaign's tree is never read through a symlink",
        ));
    }
    let (v, text, written) = super::campaign::run(dir, &fleet_outputs(args))?;
    print_verdict(v.code, written, &text, || {
        CampaignIncomplete(printable(&v.problems).into_owned()).into()
    })
}

/// The directory a file is in (`.` for a bare name).
fn parent_dir(p: &std::path::Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// One run: today's report, plus the fleet JSON and JUnit of that one run when asked for.
fn single(args: &Args, input: &std::path::Path) -> Result<Outcome, CommandError> {
    let loaded = crate::report::readers::load::load(input)?;
    // The lines after the report are best effort (`.ok()`): a broken stdout stays broken, and
    // the report's own line reports it without hiding the verdict.
    let printed = crate::exit::out!(
        "{}",
        printable(&crate::report::views::terminal::render(&loaded))
    );
    let mut html_path = None;
    if let Some(p) = &args.html {
        let links = crate::report::views::dump_links::DumpLinks::From {
            html_dir: parent_dir(p),
            evidence: parent_dir(input),
        };
        let page = crate::report::views::html::render_loaded(&loaded, links);
        crate::io::safefile::replace(p, page.as_bytes()).map_err(super::ReportError::from)?;
        crate::exit::outln!("HTML report written to {}", p.display()).ok();
        html_path = Some(p.clone());
    }
    if let Some(p) = &args.bundle {
        let run_id = loaded.json.as_ref().and_then(|j| j.run_id);
        let src = crate::report::views::bundle::Sources::beside(input, run_id)?;
        let files =
            crate::report::views::bundle::evidence_files(&loaded, html_path.as_deref(), &src);
        crate::report::views::bundle::write(
            p,
            &crate::report::views::bundle::top_dir_of(&loaded),
            &files,
        )?;
        crate::exit::outln!("Evidence bundle written to {}", p.display()).ok();
    }
    if args.json.is_some() || args.junit.is_some() {
        let out = super::fleet::Outputs {
            html: None,
            ..fleet_outputs(args)
        };
        let fleet = super::fleet::build_walk(&args.input, None, args.follow);
        let v = super::fleet::verdict::judge(&fleet);
        for line in super::fleet::write_outputs(&fleet, &v, &args.input, &out)? {
            crate::exit::outln!("{line}").ok();
        }
    }
    use crate::report::readers::runstate::RunState;
    let verdict = match crate::report::readers::runstate::of(
        &loaded,
        crate::report::sinks::clock::now_us(),
    ) {
        _ if loaded.integrity_errors() > 0 => Ok(Outcome::Findings),
        RunState::Finished => Ok(Outcome::Clean),
        RunState::Running { .. } => Err(NotFinished("is still going".into()).into()),
        // `why` says "the run did not finish: …" already: said once.
        RunState::Unfinished(why) => Err(NotFinished(match why.strip_prefix("the run ") {
            Some(rest) => rest.to_string(),
            None => format!("did not finish ({why})"),
        })
        .into()),
    };
    crate::exit::after_printing(printed, verdict)
}
