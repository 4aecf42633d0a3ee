//! The campaign report as JSON, schema "sqliosim-campaign-report/1" (docs/fleet.md,
//! "Campaign report"): the campaign's fields, the verdict and exit code, totals, and every
//! row with the files' figures it was judged from.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::report::sinks::json::ToolInfo;
use crate::report::ReportError;

use super::row::{self, CutVerdict, Row};
use super::spec::Campaign;
use super::verdict::CampaignVerdict;
use super::Report;

/// Value of the `schema` field of the campaign report JSON.
pub const CAMPAIGN_REPORT_SCHEMA: &str = "sqliosim-campaign-report/1";

/// Rows by verdict, and findings by class over the campaign.
#[derive(Debug, Serialize)]
struct Totals {
    rows: usize,
    clean: usize,
    corrupt: usize,
    missing: usize,
    error: usize,
    findings: u64,
    by_class: BTreeMap<String, u64>,
}

/// The document.
#[derive(Debug, Serialize)]
struct Doc<'a> {
    schema: &'static str,
    tool: ToolInfo,
    generated_us: u64,
    campaign: &'a Campaign,
    verdict: &'a str,
    exit_code: u8,
    problems: &'a str,
    totals: Totals,
    rows: &'a [Row],
}

fn totals(rows: &[Row]) -> Totals {
    let count = |v: CutVerdict| rows.iter().filter(|r| r.verdict == v).count();
    Totals {
        rows: rows.len(),
        clean: count(CutVerdict::Clean),
        corrupt: count(CutVerdict::Corrupt),
        missing: count(CutVerdict::Missing),
        error: count(CutVerdict::Error),
        findings: rows.iter().map(Row::findings).sum(),
        by_class: row::by_class(rows),
    }
}

/// The campaign report JSON, pretty-printed.
pub fn render(rep: &Report, v: &CampaignVerdict) -> Result<Vec<u8>, ReportError> {
    let doc = Doc {
        schema: CAMPAIGN_REPORT_SCHEMA,
        tool: ToolInfo::default(),
        generated_us: crate::report::sinks::clock::now_us(),
        campaign: &rep.campaign,
        verdict: &v.line,
        exit_code: v.code,
        problems: &v.problems,
        totals: totals(&rep.rows),
        rows: &rep.rows,
    };
    Ok(serde_json::to_vec_pretty(&doc)?)
}
