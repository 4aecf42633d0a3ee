//! The one vocabulary of fault classes: for each, its name, its `--fault-injection` word, the
//! in-memory backend's [`Fault`], the finding classes that must catch it, and the faultfs kinds
//! that inject it through the kernel.
//!
//! The in-memory backend, `--fault-injection`, faultfs and the self-test each had their own
//! list, kept in step by hand. Now `--fault-injection` reads its words here
//! (`app::faults::kind_of`), the self-test takes each case's name and expected classes from here
//! (and a test fails when a class has no self-test case), docs/faults.md is checked against this
//! table by a test, and a test ties faultfs's kinds (`faultfs::spec::KIND_NAMES`) to it.

use std::time::Duration;

use super::plan::{Fault, Misdirect, Tear};
use crate::findings::FindingClass as C;

/// One class of fault and what must catch it.
#[derive(Debug)]
pub struct FaultClass {
    /// What the self-test, the docs and the notes call it.
    pub name: &'static str,
    /// Its `--fault-injection` word (`None`: only faultfs has it).
    pub word: Option<&'static str>,
    /// The in-memory backend's fault (`None`: only faultfs has it).
    pub fault: Option<Fault>,
    /// The finding classes that must report it: the first at the faulted page (a misdirected
    /// write's second is the page it landed on). Empty: no finding (a delay is not one).
    pub caught_as: &'static [C],
    /// The faultfs kinds that inject it through the kernel (empty: faultfs has none).
    pub faultfs: &'static [&'static str],
    /// The file its fault is aimed at.
    pub aim: Aim,
}

/// The file a class's fault is aimed at: its PAGE is a page of that file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aim {
    /// The first data file.
    DataFile,
    /// The `[BackupUser]`'s stream, as a backup in progress writes it (`NAME.bak.partial`).
    BackupStream,
    /// DBCC User 0's snapshot file of the first data file (`NAME_MSSQL_DBCC0`).
    Snapshot,
    /// Sort User 0's tempdb file (`NAME.sort0`).
    Tempdb,
}

/// The class whose fault is aimed at the backup stream (the `[BackupUser]`'s `.bak`), not at
/// the first data file: its PAGE is a page of the stream.
pub const BACKUP_STREAM: &str = "backup stream block damaged";

/// Every fault class, in the order the self-test and the docs show them.
pub static CLASSES: &[FaultClass] = &[
    FaultClass {
        name: "lost write",
        word: Some("lost"),
        fault: Some(Fault::LostWrite),
        caught_as: &[C::LostWrite],
        faultfs: &["lost"],
        aim: Aim::DataFile,
    },
    FaultClass {
        name: "torn write (512 B sectors)",
        word: Some("torn512"),
        fault: Some(Fault::TornWrite(Tear::Sectors512)),
        caught_as: &[C::TornWrite],
        faultfs: &["torn"],
        aim: Aim::DataFile,
    },
    FaultClass {
        name: "torn write (4 KB)",
        word: Some("torn4k"),
        fault: Some(Fault::TornWrite(Tear::At4096)),
        caught_as: &[C::TornWrite],
        faultfs: &["torn"],
        aim: Aim::DataFile,
    },
    FaultClass {
        name: "misdirected write",
        word: Some("misdirect"),
        fault: Some(Fault::MisdirectedWrite(Misdirect::OtherPage)),
        caught_as: &[C::LostWrite, C::MisdirectedWrite],
        faultfs: &["misdirect"],
        aim: Aim::DataFile,
    },
    FaultClass {
        name: "bit flip at rest",
        word: Some("flip"),
        fault: Some(Fault::BitFlip(None)),
        caught_as: &[C::BitRot],
        faultfs: &["flip"],
        aim: Aim::DataFile,
    },
    FaultClass {
        name: "bit flip on every read",
        word: None,
        fault: None,
        caught_as: &[C::BitRot],
        faultfs: &["flip-read"],
        aim: Aim::DataFile,
    },
    FaultClass {
        name: "zeroed sector",
        word: Some("zero"),
        fault: Some(Fault::ZeroedSector(None)),
        caught_as: &[C::ZeroedSectors],
        faultfs: &[],
        aim: Aim::DataFile,
    },
    FaultClass {
        name: "stale read",
        word: Some("stale"),
        fault: Some(Fault::StaleRead),
        caught_as: &[C::StaleRead],
        faultfs: &["stale"],
        aim: Aim::DataFile,
    },
    FaultClass {
        name: "EIO on read",
        word: Some("eio-read"),
        fault: Some(Fault::ReadEio),
        caught_as: &[C::ReadError],
        faultfs: &["eio-read"],
        aim: Aim::DataFile,
    },
    FaultClass {
        name: "EIO on write",
        word: Some("eio-write"),
        fault: Some(Fault::WriteEio),
        caught_as: &[C::WriteError],
        faultfs: &["eio-write"],
        aim: Aim::DataFile,
    },
    FaultClass {
        name: "short read (claims full length)",
        word: Some("short"),
        fault: Some(Fault::ShortRead { silent: true }),
        caught_as: &[C::ShortRead],
        faultfs: &[],
        aim: Aim::DataFile,
    },
    FaultClass {
        name: "backup stream block damaged",
        word: Some("backup-flip"),
        fault: Some(Fault::BitFlip(None)),
        caught_as: &[C::BackupCorruption],
        faultfs: &["flip-read"],
        aim: Aim::BackupStream,
    },
    FaultClass {
        name: "snapshot hole not zeros",
        word: Some("hole-flip"),
        fault: Some(Fault::BitFlip(None)),
        caught_as: &[C::HoleNotZeros],
        faultfs: &["flip-read"],
        aim: Aim::Snapshot,
    },
    FaultClass {
        name: "stale reused extent",
        word: Some("tempdb-stale"),
        fault: Some(Fault::StaleRead),
        caught_as: &[C::StaleRead],
        faultfs: &["stale"],
        aim: Aim::Tempdb,
    },
    FaultClass {
        name: "delay (100 ms)",
        word: Some("delay"),
        fault: Some(Fault::Latency(Duration::from_millis(100))),
        caught_as: &[],
        faultfs: &["delay-read", "delay-write"],
        aim: Aim::DataFile,
    },
];

/// The class whose `--fault-injection` word is `word` (`torn` is `torn512`).
pub fn by_word(word: &str) -> Option<&'static FaultClass> {
    let word = if word == "torn" { "torn512" } else { word };
    CLASSES.iter().find(|c| c.word == Some(word))
}

/// The class called `name`.
pub fn by_name(name: &str) -> Option<&'static FaultClass> {
    CLASSES.iter().find(|c| c.name == name)
}

/// The `--fault-injection` words, comma-separated, as an error message lists them.
pub fn words() -> String {
    CLASSES
        .iter()
        .filter_map(|c| c.word)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_words_are_unique() {
        for (i, a) in CLASSES.iter().enumerate() {
            for b in &CLASSES[i + 1..] {
                assert_ne!(a.name, b.name);
                assert!(a.word.is_none() || a.word != b.word, "{}", a.name);
            }
            assert_eq!(a.word.is_some(), a.fault.is_some(), "{}", a.name);
        }
    }

    /// Every faultfs kind is a class of the table, and every kind the table names is one
    /// faultfs parses.
    #[test]
    fn faultfs_kinds_are_the_tables() {
        let ours: Vec<&str> = CLASSES
            .iter()
            .flat_map(|c| c.faultfs.iter().copied())
            .collect();
        for kind in faultfs::spec::KIND_NAMES {
            assert!(
                ours.contains(kind),
                "faultfs kind {kind} is in no fault class"
            );
        }
        for kind in &ours {
            assert!(
                faultfs::spec::KIND_NAMES.contains(kind),
                "the table names faultfs kind {kind}, which faultfs does not have"
            );
        }
    }

    /// docs/faults.md has one table row per class, with its name, word and finding classes.
    #[test]
    fn the_docs_list_every_class() {
        let doc = include_str!("../../../docs/faults.md");
        for c in CLASSES {
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("| {} |", c.name)))
                .unwrap_or_else(|| panic!("docs/faults.md has no row for {}", c.name));
            if let Some(w) = c.word {
                assert!(row.contains(&format!("`{w}`")), "{row}");
            }
            for class in c.caught_as {
                assert!(row.contains(&format!("`{}`", class.as_str())), "{row}");
            }
            for k in c.faultfs {
                assert!(row.contains(&format!("`{k}`")), "{row}");
            }
        }
    }
}
