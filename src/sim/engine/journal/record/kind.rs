//! A journal record's kind: the byte of its frame that says which record it is, one enum for
//! the encoder and the decoder. A new kind is a new variant here with the next number, its
//! arm in `encode` and in `decode` (the compiler finds both), and a version bump of the
//! journal ([`JournalVersion`](super::super::JournalVersion)) if older builds must refuse it.

use super::Record;

/// Which record a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordKind {
    /// [`Record::Start`].
    Start = 1,
    /// [`Record::Durable`].
    Durable = 2,
    /// [`Record::Resize`].
    Resize = 3,
    /// [`Record::Log`].
    Log = 4,
    /// [`Record::End`].
    End = 5,
    /// [`Record::Mark`].
    Mark = 6,
    /// [`Record::Void`].
    Void = 7,
    /// [`Record::Backup`].
    Backup = 8,
}

impl RecordKind {
    /// Every kind, in the order of their numbers.
    pub const ALL: [RecordKind; 8] = [
        RecordKind::Start,
        RecordKind::Durable,
        RecordKind::Resize,
        RecordKind::Log,
        RecordKind::End,
        RecordKind::Mark,
        RecordKind::Void,
        RecordKind::Backup,
    ];

    /// The kind of `r`.
    pub fn of(r: &Record) -> RecordKind {
        match r {
            Record::Start { .. } => RecordKind::Start,
            Record::Durable { .. } => RecordKind::Durable,
            Record::Resize { .. } => RecordKind::Resize,
            Record::Log { .. } => RecordKind::Log,
            Record::End => RecordKind::End,
            Record::Mark { .. } => RecordKind::Mark,
            Record::Void { .. } => RecordKind::Void,
            Record::Backup(_) => RecordKind::Backup,
        }
    }
}

impl From<RecordKind> for u8 {
    fn from(k: RecordKind) -> u8 {
        k as u8
    }
}

impl TryFrom<u8> for RecordKind {
    /// The byte, when it names no kind.
    type Error = u8;

    fn try_from(b: u8) -> Result<RecordKind, u8> {
        RecordKind::ALL
            .into_iter()
            .find(|k| u8::from(*k) == b)
            .ok_or(b)
    }
}
