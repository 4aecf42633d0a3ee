//! `sqliosim selftest`: proves on the user's own machine that every fault class is caught.
//!
//! Each fault class is injected in a small simulation on the in-memory faulty backend (and,
//! with `--fuse` where FUSE works, through a faultfs mount and the kernel), and a table shows
//! the fault injected, what was reported, and whether it was detected with the right class
//! at the right page. Exit 0 when every fault was, 1 otherwise.

mod faultfs;
mod fuse;
mod memory;
mod plan;

use std::ffi::OsString;

use clap::Parser;

use crate::exit::Outcome;
use crate::findings::{Finding, FindingClass};

pub use crate::cli::SelftestArgs;

/// One line of the table.
#[derive(Debug, Clone)]
pub struct Row {
    /// Where the fault was injected: "memory" or "faultfs".
    pub via: &'static str,
    /// The fault.
    pub fault: String,
    /// The page it was aimed at (0: none).
    pub page: u64,
    /// What had to be reported, as text.
    pub expected: String,
    /// What was reported, as text.
    pub reported: String,
    /// Detected with the right class at the right page, and nothing else reported.
    pub ok: bool,
}

impl Row {
    /// Compares the findings of a run with the (class, page) pairs it had to report. A finding
    /// about a failed multi-page request counts for every page it covers.
    pub fn judge(
        via: &'static str,
        fault: &str,
        page: u64,
        expect: &[(FindingClass, u64)],
        findings: &[Finding],
        fired: bool,
    ) -> Row {
        let covers = |f: &Finding, (c, p): &(FindingClass, u64)| {
            f.class == *c && *p >= f.page_id && *p < f.page_id + u64::from(f.page_count.max(1))
        };
        let all_found = expect.iter().all(|e| findings.iter().any(|f| covers(f, e)));
        let unexplained = findings
            .iter()
            .any(|f| !expect.iter().any(|e| covers(f, e)));
        let mut reported: Vec<String> = findings
            .iter()
            .map(|f| match f.page_count {
                0 | 1 => format!("{}@{}", f.class.as_str(), f.page_id),
                n => format!(
                    "{}@{}..{}",
                    f.class.as_str(),
                    f.page_id,
                    f.page_id + u64::from(n) - 1
                ),
            })
            .collect();
        reported.dedup();
        if reported.len() > 4 {
            let n = reported.len();
            reported.truncate(3);
            reported.push(format!("... ({n} in all)"));
        }
        Row {
            via,
            fault: fault.to_string(),
            page,
            expected: pairs_text(expect),
            reported: match (fired, reported.is_empty()) {
                (false, _) => "fault never fired".to_string(),
                (true, true) => "nothing".to_string(),
                (true, false) => reported.join(" "),
            },
            ok: fired && all_found && !unexplained,
        }
    }
}

/// Runs a case once for each of `runs` in turn until its fault fired (`run` returns the row and
/// whether it did): a fault never reached says nothing of detection, so the case goes again,
/// afresh and longer. The row of the last run; `None` when `runs` is empty.
fn until_fired<T, E>(
    runs: impl IntoIterator<Item = T>,
    mut run: impl FnMut(T) -> Result<(Row, bool), E>,
) -> Result<Option<Row>, E> {
    let mut row = None;
    for r in runs {
        let (got, fired) = run(r)?;
        row = Some(got);
        if fired {
            break;
        }
    }
    Ok(row)
}

fn pairs_text(pairs: &[(FindingClass, u64)]) -> String {
    if pairs.is_empty() {
        return "nothing".to_string();
    }
    let v: Vec<String> = pairs
        .iter()
        .map(|(c, p)| format!("{}@{p}", c.as_str()))
        .collect();
    v.join(" ")
}

/// Runs the self-test; `args[0]` is the display name.
pub fn main(args: Vec<OsString>) -> anyhow::Result<Outcome> {
    let args = match SelftestArgs::try_parse_from(args) {
        Ok(a) => a,
        Err(e) if !e.use_stderr() => {
            crate::exit::out!("{}", e.render())?;
            return Ok(Outcome::Clean);
        }
        Err(e) => anyhow::bail!("{}", e.render().to_string().trim_start_matches("error: ")),
    };
    run(&args)
}

/// Runs the self-test with parsed options.
pub fn run(args: &SelftestArgs) -> anyhow::Result<Outcome> {
    let seed = args.seed.unwrap_or_else(rand::random);
    crate::exit::outln!(
        "sqliosim selftest, seed {seed}: each fault injected into a small run of its own\n"
    )?;
    let mut rows = memory::run(seed)?;
    if args.fuse {
        match fuse::run(seed) {
            Ok(more) => rows.extend(more),
            Err(skip) => crate::exit::outln!("FUSE scenarios not run: {skip}\n")?,
        }
    }
    // The verdict line reports a broken stdout; the table is best effort (`.ok()`).
    crate::exit::out!("{}", table(&rows)).ok();
    let detected = rows.iter().filter(|r| r.ok).count();
    let verdict = if detected == rows.len() {
        "PASS: every fault was detected with the right verdict, and the clean run stayed clean"
    } else {
        "FAIL: some faults were missed or misclassified (see the rows marked no)"
    };
    let printed = crate::exit::outln!(
        "\n{detected} of {} scenarios as expected. {verdict}.",
        rows.len()
    );
    let outcome = if detected == rows.len() {
        Outcome::Clean
    } else {
        Outcome::Findings
    };
    crate::exit::after_printing(printed, Ok(outcome))
}

/// The table, one row per scenario, columns padded to their widest cell.
fn table(rows: &[Row]) -> String {
    let head = [
        "via",
        "fault injected",
        "page",
        "expected",
        "reported",
        "detected",
    ];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            [
                r.via.to_string(),
                r.fault.clone(),
                if r.page == 0 {
                    "-".into()
                } else {
                    r.page.to_string()
                },
                r.expected.clone(),
                r.reported.clone(),
                if r.ok { "yes".into() } else { "no".into() },
            ]
        })
        .collect();
    let mut width = head.map(str::len);
    for c in &cells {
        for (w, cell) in width.iter_mut().zip(c) {
            *w = (*w).max(cell.chars().count()).min(60);
        }
    }
    let line = |c: &[String]| {
        let v: Vec<String> = c
            .iter()
            .zip(width)
            .map(|(s, w)| format!("{s:<w$}"))
            .collect();
        format!("{}\n", v.join("  ").trim_end())
    };
    let mut out = line(&head.map(String::from));
    for c in &cells {
        out.push_str(&line(c));
    }
    out
}
