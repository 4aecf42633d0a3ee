//! One page's state in one word (issue #39, "a terabyte in a gigabyte").
//!
//! A page's state is three generations and a few flags ([`Wide`]): the last completed write
//! (`done`), the highest issued (`issued`, above `done` only while a write is in flight or after
//! one failed) and the highest the journal was told is durable (`durable`, at most `done`).
//! Packed, `done` takes 35 bits and the other two are differences from it of 11 bits each,
//! which is what a page's state needs in all but rare moments: a write in flight is one
//! generation ahead, a page is journaled at every sync point. A state that does not fit (a
//! first write after a restart or a shrink raised the floor, a page written 2,048 times between
//! two sync points, a durable generation above the page's own after a lost write) goes whole
//! into the oracle's spill map, and its word says only [`SPILLED`]; it comes back into its word
//! once it fits again. So the table costs 8 bytes a page and the map a few entries, and no
//! generation is ever rounded.
//!
//! Why not a crate: the layout is the oracle's own (bit fields over an `AtomicU64` updated by
//! compare-and-swap); `bitfield`-style crates give accessors, not the fit test and the spill.

/// A write of the page is in flight.
pub const IN_FLIGHT: u64 = 1 << 63;
/// A write of the page failed: any self-consistent content from `done` to `issued` is right.
pub const UNKNOWN: u64 = 1 << 62;
/// The page's completed generation changed since a sync point last took it.
pub const CHANGED: u64 = 1 << 61;
/// Taken by a sync point's first pass (before its fdatasync), not yet journaled.
pub const SNAPPED: u64 = 1 << 60;
/// The page's state is in the spill map, not in its word.
pub const SPILLED: u64 = 1 << 59;
/// No durable generation (0) for a page that has completed writes.
const NO_DURABLE: u64 = 1 << 58;
/// No completed write (0), and a durable generation in the `done` field: a restarted run's
/// pages as its journal is carried over, before their content is read back and set.
const CLAIM_ONLY: u64 = 1 << 57;

/// The flags a [`Wide`] state carries.
pub const FLAGS: u64 = IN_FLIGHT | UNKNOWN | CHANGED | SNAPPED;

const DONE_BITS: u32 = 35;
const DELTA_BITS: u32 = 11;
const DONE_MASK: u64 = (1 << DONE_BITS) - 1;
const DELTA_MASK: u64 = (1 << DELTA_BITS) - 1;
const ISSUED_SHIFT: u32 = DONE_BITS;
const DURABLE_SHIFT: u32 = DONE_BITS + DELTA_BITS;

/// A page's state, unpacked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wide {
    /// Generation of the last write that completed successfully (0: none).
    pub done: u64,
    /// Highest generation issued (0: none).
    pub issued: u64,
    /// Highest generation the journal holds durable (0: none).
    pub durable: u64,
    /// [`IN_FLIGHT`], [`UNKNOWN`], [`CHANGED`], [`SNAPPED`].
    pub flags: u64,
}

impl Wide {
    /// The state in one word, or `None` when it does not fit (it then spills).
    pub fn pack(&self) -> Option<u64> {
        if self.done == 0 && self.durable > 0 {
            return (self.durable <= DONE_MASK && self.issued <= DELTA_MASK).then_some(
                self.durable | (self.issued << ISSUED_SHIFT) | CLAIM_ONLY | (self.flags & FLAGS),
            );
        }
        if self.done > DONE_MASK || self.issued < self.done {
            return None;
        }
        let ahead = self.issued - self.done;
        if ahead > DELTA_MASK {
            return None;
        }
        let (behind, no_durable) = match self.durable {
            0 if self.done > 0 => (0, NO_DURABLE),
            d if d <= self.done && self.done - d <= DELTA_MASK => (self.done - d, 0),
            _ => return None,
        };
        Some(
            self.done
                | (ahead << ISSUED_SHIFT)
                | (behind << DURABLE_SHIFT)
                | no_durable
                | (self.flags & FLAGS),
        )
    }

    /// The state a word (not [`SPILLED`]) holds.
    pub fn unpack(word: u64) -> Wide {
        if word & CLAIM_ONLY != 0 {
            return Wide {
                done: 0,
                issued: (word >> ISSUED_SHIFT) & DELTA_MASK,
                durable: word & DONE_MASK,
                flags: word & FLAGS,
            };
        }
        let done = word & DONE_MASK;
        let durable = if word & NO_DURABLE != 0 {
            0
        } else {
            done - ((word >> DURABLE_SHIFT) & DELTA_MASK)
        };
        Wide {
            done,
            issued: done + ((word >> ISSUED_SHIFT) & DELTA_MASK),
            durable,
            flags: word & FLAGS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_that_fit_round_trip_and_those_that_do_not_spill() {
        let fits = [
            Wide::default(),
            Wide {
                done: 5,
                issued: 6,
                durable: 4,
                flags: IN_FLIGHT | CHANGED,
            },
            Wide {
                done: DONE_MASK,
                issued: DONE_MASK + DELTA_MASK,
                durable: DONE_MASK - DELTA_MASK,
                flags: UNKNOWN | SNAPPED,
            },
            Wide {
                done: 1 << 30,
                issued: 1 << 30,
                durable: 0,
                flags: 0,
            },
            // A carried-over journal's claim on a page not yet set (a restart), and on a page
            // found lost: no completed write, a durable generation.
            Wide {
                done: 0,
                issued: 0,
                durable: 1 << 33,
                flags: 0,
            },
            Wide {
                done: 0,
                issued: 1,
                durable: 9,
                flags: IN_FLIGHT | CHANGED,
            },
        ];
        for w in fits {
            let word = w.pack().expect("fits");
            assert_eq!(word & SPILLED, 0);
            assert_eq!(Wide::unpack(word), w);
        }
        assert_eq!(
            Wide::default().pack(),
            Some(0),
            "a fresh page is a zero word"
        );
        let spills = [
            Wide {
                done: DONE_MASK + 1,
                issued: DONE_MASK + 1,
                ..Wide::default()
            },
            Wide {
                done: 3,
                issued: 3 + DELTA_MASK + 1,
                ..Wide::default()
            },
            Wide {
                done: 5000,
                issued: 5000,
                durable: 5000 - DELTA_MASK - 1,
                flags: 0,
            },
            Wide {
                done: 0,
                issued: DELTA_MASK + 1,
                durable: 9,
                flags: IN_FLIGHT,
            },
            Wide {
                done: 7,
                issued: 6,
                ..Wide::default()
            },
        ];
        for w in spills {
            assert_eq!(w.pack(), None, "{w:?}");
        }
    }
}
