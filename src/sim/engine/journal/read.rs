//! Reading a journal whole: its records one after another (`record` decodes each) up to its
//! first flaw, and what the flaw is (`damage` tells a torn tail from damage). A torn or damaged
//! tail ends the reading; it is never an error.

use super::bounds::Bounds;
use super::damage::{self, Damage};
use super::record::{decode_one, Record};

/// A journal decoded: its whole records up to where it stops being readable, and what is
/// wrong there (a torn tail, or damage with whole records after it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Every whole, valid record before the first flaw.
    pub records: Vec<Record>,
    /// Where and how decoding stopped, if it did before the end.
    pub damage: Option<Damage>,
}

/// Decodes a journal up to its first flaw (bytes that are not a whole record, or a gap in the
/// batch numbers) and describes the flaw.
pub fn decode(bytes: &[u8]) -> Decoded {
    let mut records = Vec::new();
    let mut at = 0;
    let mut seq = BatchSeq::default();
    let mut bounds = Bounds::default();
    while at < bytes.len() {
        let Some((rec, n)) = decode_one(&bytes[at..]) else {
            let mut damage = damage::assess(bytes, at);
            if damage::within_last_batch(bytes, at, seq.last) {
                damage = damage.into_torn_tail(bytes.len());
            }
            return Decoded {
                records,
                damage: Some(damage),
            };
        };
        if let Err(why) = bounds.check(&rec) {
            let damage = damage::invalid(bytes, at, n, &rec, why);
            return Decoded {
                records,
                damage: Some(damage),
            };
        }
        if let Some((after, next)) = seq.gap(&rec) {
            records.truncate(seq.kept);
            let damage = damage::missing_batches(bytes, seq.trusted_to, after, next);
            return Decoded {
                records,
                damage: Some(damage),
            };
        }
        at += n;
        records.push(rec);
        seq.passed(&records, at);
    }
    Decoded {
        records,
        damage: None,
    }
}

/// The batch numbers read so far: the last one since the last Start, and where the records
/// after it begin (what is trusted if the next number jumps).
#[derive(Debug, Default)]
struct BatchSeq {
    last: Option<u64>,
    kept: usize,
    trusted_to: usize,
}

impl BatchSeq {
    /// `(last, found)` when `r` is a numbered mark that does not follow the last one.
    fn gap(&self, r: &Record) -> Option<(u64, u64)> {
        match (r, self.last) {
            (Record::Mark { batch, .. }, Some(last)) if *batch != 0 && *batch != last + 1 => {
                Some((last, *batch))
            }
            _ => None,
        }
    }

    /// The last of `records`, ending at byte `end`, was accepted.
    fn passed(&mut self, records: &[Record], end: usize) {
        match records.last() {
            // A new run or a snapshot: its first mark may carry any number.
            Some(Record::Start { .. }) => self.last = None,
            Some(Record::Mark { batch: 0, .. }) => self.last = None,
            Some(Record::Mark { batch, .. }) => self.last = Some(*batch),
            _ => return,
        }
        self.kept = records.len();
        self.trusted_to = end;
    }
}

/// Decodes every whole, valid record of a journal; returns them and whether a damaged or
/// torn tail was dropped.
pub fn decode_all(bytes: &[u8]) -> (Vec<Record>, bool) {
    let d = decode(bytes);
    (d.records, d.damage.is_some())
}
