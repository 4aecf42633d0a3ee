//! The hidden `sqliosim run --fault-injection SPEC` option: a run on files held in memory by the
//! faulty backend, with faults armed from SPEC, so the whole command line (reporting, exit
//! code) can be tested without a faulty disk.
//!
//! SPEC is a comma-separated list of items, all aimed at the first data file:
//!
//! - `KIND@PAGE` arms one fault that fires on the first request of its kind covering PAGE.
//!   KIND is a word of the table of fault classes (`io::faulty::classes`, docs/faults.md): `lost`, `torn512` (a random number of 512-byte sectors kept), `torn4k` (the first
//!   4 KB kept), `misdirect` (to a random other page; `misdirect@P>D` to page D), `flip` (one
//!   bit flipped at rest), `zero` (one sector zeroed at rest), `stale` (the previous version
//!   read once), `eio-read`, `eio-write`, `short` (a read that transfers part of a page but
//!   claims the full length), `delay` (100 ms added); or, aimed at another file than the data
//!   file (`classes::Aim`), `backup-flip` (one bit flipped at rest in page PAGE of the backup
//!   stream, the `[BackupUser]`'s `.bak`), `hole-flip` (one bit flipped at rest in page PAGE of
//!   DBCC User 0's snapshot file, `NAME_MSSQL_DBCC0`: a hole that reads as non-zero) or
//!   `tempdb-stale` (page PAGE of Sort User 0's tempdb file read once as its earlier version).
//! - `random=P:KIND+KIND…` draws, for each request, one of those kinds that applies to it with
//!   probability P (0..=1).

use crate::io::faulty::classes::{self, Aim};
use crate::io::faulty::{Fault, Misdirect, Trigger};
use crate::io::FaultyBackend;
use crate::sim::plan::SimPlan;
use std::path::PathBuf;

/// What is wrong with a SPEC.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SpecError {
    /// The SPEC has no item.
    #[error("--fault-injection: the specification is empty; e.g. lost@10,flip@220")]
    Empty,
    /// An item is not `KIND@PAGE` or `random=P:KINDS`.
    #[error("--fault-injection: {0:?} is not KIND@PAGE or random=P:KIND+KIND (e.g. lost@10, random=0.001:lost+flip)")]
    Item(String),
    /// Unknown fault kind.
    #[error("--fault-injection: unknown fault kind {0:?}; known: {known}", known = crate::io::faulty::classes::words())]
    Kind(String),
    /// A page or probability that does not parse or is out of range.
    #[error("--fault-injection: bad number in {item:?}: {why}")]
    Number {
        /// The item.
        item: String,
        /// What is wrong.
        why: String,
    },
}

/// A parsed SPEC.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FaultSpec {
    /// Faults armed at a page of the first data file.
    pub armed: Vec<(Fault, u64)>,
    /// Faults armed at a page of another file than the data file (the backup stream, a DBCC
    /// snapshot, a tempdb file).
    pub aimed: Vec<(Aim, Fault, u64)>,
    /// Probability per request and the kinds drawn from.
    pub random: Option<(f64, Vec<Fault>)>,
}

impl FaultSpec {
    /// Parses SPEC.
    pub fn parse(spec: &str) -> Result<FaultSpec, SpecError> {
        let mut out = FaultSpec::default();
        for item in spec.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            if let Some(rest) = item.strip_prefix("random=") {
                out.random = Some(parse_random(item, rest)?);
            } else if let Some(aim) = aim_of(item) {
                let (fault, page) = parse_armed(item)?;
                out.aimed.push((aim, fault, page));
            } else {
                out.armed.push(parse_armed(item)?);
            }
        }
        if out.armed.is_empty() && out.aimed.is_empty() && out.random.is_none() {
            return Err(SpecError::Empty);
        }
        Ok(out)
    }

    /// Arms the faults on `backend`, each at the file its class aims at in `plan`.
    pub fn arm(&self, backend: &FaultyBackend, plan: &SimPlan) {
        let data = self.armed.iter().map(|(f, p)| (Aim::DataFile, f, p));
        let others = self.aimed.iter().map(|(a, f, p)| (*a, f, p));
        for (aim, fault, page) in data.chain(others) {
            let Some(path) = target(plan, aim) else {
                continue;
            };
            backend.inject(fault.clone(), Trigger::Page { path, page: *page });
        }
        if let Some((p, kinds)) = &self.random {
            backend.set_random(*p, kinds.clone());
        }
    }
}

fn number<T: std::str::FromStr>(item: &str, text: &str, what: &str) -> Result<T, SpecError> {
    text.trim().parse().map_err(|_| SpecError::Number {
        item: item.to_string(),
        why: format!("{text:?} is not a valid {what}"),
    })
}

/// The file a class aims at in `plan` (`None` without a data file).
pub fn target(plan: &SimPlan, aim: Aim) -> Option<PathBuf> {
    let first = *plan.data_files().first()?;
    Some(match aim {
        Aim::DataFile => plan.files[first].path.clone(),
        Aim::BackupStream => plan.backup.partial(),
        Aim::Snapshot => plan.snapshot_path(first, 0),
        Aim::Tempdb => plan.tempdb_path(0)?,
    })
}

/// The aim of the item's KIND when it is not the data file.
fn aim_of(item: &str) -> Option<Aim> {
    let kind = item.split_once('@').map(|(kind, _)| kind)?;
    classes::by_word(kind)
        .map(|c| c.aim)
        .filter(|&a| a != Aim::DataFile)
}

/// `KIND@PAGE` or `misdirect@PAGE>DEST`.
fn parse_armed(item: &str) -> Result<(Fault, u64), SpecError> {
    let (kind, at) = item
        .split_once('@')
        .ok_or_else(|| SpecError::Item(item.to_string()))?;
    let (page, dest) = match at.split_once('>') {
        Some((p, d)) if kind == "misdirect" => (p, Some(number::<u64>(item, d, "page")?)),
        Some(_) => return Err(SpecError::Item(item.to_string())),
        None => (at, None),
    };
    let page: u64 = number(item, page, "page")?;
    if page == 0 {
        return Err(SpecError::Number {
            item: item.to_string(),
            why: "page 0 is the file header, which the workload never rereads".into(),
        });
    }
    let fault = match (kind_of(kind)?, dest) {
        (Fault::MisdirectedWrite(_), Some(d)) => Fault::MisdirectedWrite(Misdirect::Page(d)),
        (f, _) => f,
    };
    Ok((fault, page))
}

/// `P:KIND+KIND…` after `random=`.
fn parse_random(item: &str, rest: &str) -> Result<(f64, Vec<Fault>), SpecError> {
    let (p, kinds) = rest
        .split_once(':')
        .ok_or_else(|| SpecError::Item(item.to_string()))?;
    let p: f64 = number(item, p, "probability")?;
    if !(0.0..=1.0).contains(&p) {
        return Err(SpecError::Number {
            item: item.to_string(),
            why: format!("probability {p} is not within 0..=1"),
        });
    }
    let kinds = kinds
        .split('+')
        .map(|k| kind_of(k.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((p, kinds))
}

/// The fault a kind name stands for: the word of a class of the one table of fault classes
/// (`io::faulty::classes`).
pub fn kind_of(name: &str) -> Result<Fault, SpecError> {
    crate::io::faulty::classes::by_word(name)
        .and_then(|c| c.fault.clone())
        .ok_or_else(|| SpecError::Kind(name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::faulty::Tear;

    #[test]
    fn items_parse_to_faults_at_pages() {
        let s = FaultSpec::parse("lost@10, torn4k@80,misdirect@150>5,random=0.5:flip+eio-read")
            .expect("valid");
        assert_eq!(
            s.armed,
            vec![
                (Fault::LostWrite, 10),
                (Fault::TornWrite(Tear::At4096), 80),
                (Fault::MisdirectedWrite(Misdirect::Page(5)), 150),
            ]
        );
        assert_eq!(
            s.random,
            Some((0.5, vec![Fault::BitFlip(None), Fault::ReadEio]))
        );
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        assert_eq!(FaultSpec::parse(" , "), Err(SpecError::Empty));
        assert_eq!(
            FaultSpec::parse("lost10"),
            Err(SpecError::Item("lost10".into()))
        );
        assert_eq!(
            FaultSpec::parse("melt@3"),
            Err(SpecError::Kind("melt".into()))
        );
        assert!(matches!(
            FaultSpec::parse("lost@x"),
            Err(SpecError::Number { .. })
        ));
        assert!(matches!(
            FaultSpec::parse("lost@0"),
            Err(SpecError::Number { .. })
        ));
        assert!(matches!(
            FaultSpec::parse("random=2:lost"),
            Err(SpecError::Number { .. })
        ));
        assert_eq!(
            FaultSpec::parse("flip@3>4"),
            Err(SpecError::Item("flip@3>4".into()))
        );
    }
}
