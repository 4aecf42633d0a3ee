//! What the witness's directory holds: the runs it has a record of, for a `List` request and
//! for `--list`.

use super::record::read_record;
use crate::exit::Outcome;
use crate::io::safefile::Dir;
use crate::witness::proto::RunInfo;

/// What the directory holds.
pub(super) fn list_runs(dir: &Dir) -> anyhow::Result<Vec<RunInfo>> {
    let mut runs = Vec::new();
    for name in dir.names()? {
        let Some(id) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".witness"))
            .filter(|n| n.len() == 16)
            .and_then(|n| u64::from_str_radix(n, 16).ok())
        else {
            continue;
        };
        let Ok(Some(p)) = read_record(dir, &name) else {
            continue;
        };
        let time_us = dir
            .stat(&name)?
            .map_or(0, |st| u64::try_from(st.st_mtime).unwrap_or(0) * 1_000_000);
        runs.push(RunInfo {
            run_id: id,
            host: p.host,
            last_seq: p.last_seq,
            bytes: p.data.len() as u64,
            gaps: p.gaps,
            time_us,
        });
    }
    runs.sort_by_key(|r| (r.host.clone(), r.time_us));
    Ok(runs)
}

/// `--list`: the runs, one line each.
pub(super) fn list(dir: &Dir) -> anyhow::Result<Outcome> {
    let runs = list_runs(dir)?;
    crate::exit::outln!(
        "{:<16}  {:<24}  {:>10}  {:>12}  {:>5}  last record",
        "run",
        "host",
        "last batch",
        "bytes",
        "gaps"
    )?;
    for r in &runs {
        let when = time::OffsetDateTime::from_unix_timestamp(
            i64::try_from(r.time_us / 1_000_000).unwrap_or(0),
        )
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default();
        crate::exit::outln!(
            "{:016x}  {:<24}  {:>10}  {:>12}  {:>5}  {when}",
            r.run_id,
            crate::report::views::printable::printable(&r.host),
            r.last_seq,
            r.bytes,
            r.gaps
        )?;
    }
    Ok(Outcome::Clean)
}
