//! Which host a run belongs to, and the name its rows are shown by.
//!
//! A hostname alone does not tell hosts apart: freshly imaged racks often all say `localhost`.
//! A run's host is its `--host-label` (an inventory name) when it was given one, else its
//! hostname together with its /etc/machine-id, else its hostname alone (an old summary or a
//! SQLIOSim log, which cannot be told apart any better). A row is shown by its hostname, with
//! the label in brackets when the run had one that differs from it (`host3 [node3]`), or the
//! start of its machine id when another host of the fleet has the same hostname
//! (`localhost [machine 5f1c0e2a]`).

use super::record::RunRecord;
use super::row::Row;

/// How many hex digits of a machine id tell same-named hosts apart in a name.
const ID_DIGITS: usize = 8;

/// The key of the host that ran `run`: rows are one per key and device.
pub fn key(run: &RunRecord) -> String {
    match (&run.label, &run.machine_id) {
        (Some(label), _) => format!("label\0{label}"),
        (None, Some(id)) => format!("host\0{}\0{id}", run.host),
        (None, None) => format!("host\0{}", run.host),
    }
}

/// Fills each row's `name`: its hostname, qualified where it would be ambiguous or labelled.
pub fn name_rows(rows: &mut [Row]) {
    let names: Vec<String> = rows.iter().map(|r| name_of(r, rows)).collect();
    for (r, n) in rows.iter_mut().zip(names) {
        r.name = n;
    }
}

fn name_of(r: &Row, rows: &[Row]) -> String {
    if let Some(label) = r.label.as_ref().filter(|l| **l != r.host) {
        return format!("{} [{label}]", r.host);
    }
    let shared = rows
        .iter()
        .any(|o| o.host == r.host && o.key != r.key && o.label.is_none());
    match (&r.machine_id, shared) {
        (_, false) => r.host.clone(),
        (Some(id), true) => format!("{} [machine {}]", r.host, short_id(id, r, rows)),
        (None, true) => format!("{} [no machine id]", r.host),
    }
}

/// The first digits of `id`, or all of it when another same-named host's id starts the same.
fn short_id<'a>(id: &'a str, r: &Row, rows: &[Row]) -> &'a str {
    let short = id.get(..ID_DIGITS).unwrap_or(id);
    let clash = rows.iter().any(|o| {
        o.host == r.host
            && o.key != r.key
            && o.machine_id
                .as_deref()
                .is_some_and(|x| x.starts_with(short))
    });
    if clash {
        id
    } else {
        short
    }
}

/// Whether `name` (from an `--expect-hosts` list) names the host of `r`: its label, its
/// hostname or its machine id.
pub fn answers_to(r: &Row, name: &str) -> bool {
    r.label.as_deref() == Some(name) || r.host == name || r.machine_id.as_deref() == Some(name)
}
