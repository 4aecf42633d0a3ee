//! `--expect-hosts FILE`: the hosts the fleet should have, so that one that never reported
//! (unreachable, failed before its run, results lost on the way) cannot leave a green fleet.
//! The file holds one name per line (an inventory name given to `run --host-label`, a hostname
//! or a machine id); blank lines and `#` comments are ignored. A name that no row answers to is
//! missing: the verdict is at best INCOMPLETE (exit 2), and every output names it.

use std::path::Path;

use super::identity::answers_to;
use super::merge::Fleet;
use crate::io::safefile::{Kind, Use};
use crate::report::ReportError;

/// Why a missing host is named, in every output.
pub const MISSING_WHY: &str =
    "expected (--expect-hosts) but no result answers to it (by --host-label, hostname or machine id)";

/// The names of `text`: one a line, blank lines and `#` comments left out, each name once.
pub fn parse(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for line in text.lines() {
        let name = line.split('#').next().unwrap_or("").trim();
        if !name.is_empty() && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// Reads the list at `path` (never waiting on a FIFO); a list naming no host is refused, since
/// it would expect nothing and catch nothing (an inventory written empty by mistake).
pub fn read(path: &Path) -> Result<Vec<String>, ReportError> {
    let bad = |why: String| {
        ReportError::io(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidData, why),
        )
    };
    let bytes = crate::io::safefile::read_bounded(path, Use::Input, Kind::HostList)?;
    let text =
        String::from_utf8(bytes).map_err(|_| bad("--expect-hosts: not UTF-8 text".into()))?;
    let names = parse(&text);
    if names.is_empty() {
        return Err(bad(
            "--expect-hosts names no host (one name a line; blank lines and # comments are ignored)"
                .into(),
        ));
    }
    Ok(names)
}

/// Marks in `fleet` the expected hosts no row answers to, and notes the rows not expected.
pub fn check(fleet: &mut Fleet, expected: &[String]) {
    fleet.expected = Some(expected.len());
    fleet.missing = expected
        .iter()
        .filter(|n| !fleet.rows.iter().any(|r| answers_to(r, n)))
        .cloned()
        .collect();
    let mut extra: Vec<&str> = fleet
        .rows
        .iter()
        .filter(|r| !expected.iter().any(|n| answers_to(r, n)))
        .map(|r| r.name.as_str())
        .collect();
    extra.dedup();
    if !extra.is_empty() {
        let note = format!(
            "not in the --expect-hosts list (reported anyway): {}",
            extra.join(", ")
        );
        fleet.notes.push(note);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_one_a_line_without_blanks_comments_or_repeats() {
        let text = "# the rack\nnode1\n\n  node2  # spare\nnode1\n#node9\n";
        assert_eq!(parse(text), ["node1", "node2"]);
        assert!(parse("\n# nothing\n").is_empty());
    }
}
