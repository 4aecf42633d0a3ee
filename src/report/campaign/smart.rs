//! The drives' unsafe-shutdown counters around a cut: `smart-before.txt` and
//! `smart-after.txt` hold `DEVICE unsafe_shutdowns N` lines (empty or absent where the host
//! has no SMART tool). A power cut that reached the drive raises its count by exactly one; any
//! other change is a note on the row (the cut may not have reached the drive, or it counts
//! another way), never a failure.

use std::collections::BTreeMap;

use serde::Serialize;

use super::files::{CycleFiles, Got};
use super::record;

/// One device's unsafe-shutdown count before and after the cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shutdowns {
    /// The device, as the SMART file names it.
    pub device: String,
    /// Before the cut.
    pub before: u64,
    /// After the host came back.
    pub after: u64,
}

impl Shutdowns {
    /// "17→18".
    pub fn text(&self) -> String {
        format!("{}→{}", self.before, self.after)
    }

    /// What is wrong with the change, if anything.
    pub fn problem(&self) -> Option<String> {
        let (b, a) = (self.before, self.after);
        let what = match a.checked_sub(b) {
            Some(1) => return None,
            Some(0) => "did not rise".to_string(),
            Some(n) => format!("rose by {n}, not 1"),
            None => "fell".to_string(),
        };
        Some(format!(
            "{} unsafe_shutdowns {}: {what}",
            self.device,
            self.text()
        ))
    }
}

/// The counts of one SMART file; `None` when absent. An unreadable file is an error, a line
/// not understood a note.
fn counts(
    files: &CycleFiles,
    got: &Got,
    name: &str,
    errors: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Option<BTreeMap<String, u64>> {
    match got {
        Got::Absent => None,
        Got::Unreadable(why) => {
            errors.push(why.clone());
            None
        }
        Got::Bytes(b) => {
            let (counts, odd) = record::smart(b);
            if !odd.is_empty() {
                let lines: Vec<String> = odd.iter().take(5).map(|n| n.to_string()).collect();
                notes.push(format!(
                    "{}: line(s) {} not of the form \"DEVICE unsafe_shutdowns N\"",
                    files.dir.join(name).display(),
                    lines.join(", ")
                ));
            }
            Some(counts)
        }
    }
}

/// Each device found in both files, with a note for each whose count did not rise by one
/// and for each found in one file only.
pub fn compare(
    files: &CycleFiles,
    errors: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Vec<Shutdowns> {
    let before = counts(
        files,
        &files.smart_before,
        "smart-before.txt",
        errors,
        notes,
    );
    let after = counts(files, &files.smart_after, "smart-after.txt", errors, notes);
    let (Some(before), Some(after)) = (before, after) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (device, &b) in &before {
        match after.get(device) {
            Some(&a) => out.push(Shutdowns {
                device: device.clone(),
                before: b,
                after: a,
            }),
            None if !after.is_empty() => {
                notes.push(format!("{device}: in smart-before.txt only"));
            }
            None => {}
        }
    }
    for device in after.keys().filter(|d| !before.contains_key(*d)) {
        if !before.is_empty() {
            notes.push(format!("{device}: in smart-after.txt only"));
        }
    }
    notes.extend(out.iter().filter_map(Shutdowns::problem));
    out
}

#[cfg(test)]
mod tests {
    use super::Shutdowns;

    fn s(before: u64, after: u64) -> Shutdowns {
        Shutdowns {
            device: "/dev/nvme0n1".into(),
            before,
            after,
        }
    }

    #[test]
    fn only_a_rise_by_one_is_quiet() {
        assert_eq!(s(17, 18).problem(), None);
        assert_eq!(
            s(17, 17).problem().as_deref(),
            Some("/dev/nvme0n1 unsafe_shutdowns 17→17: did not rise")
        );
        assert!(s(17, 19).problem().unwrap().ends_with("rose by 2, not 1"));
        assert!(s(17, 3).problem().unwrap().ends_with("fell"));
    }
}
