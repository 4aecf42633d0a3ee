//! The allowed-tear rule (issue #21 §3, docs/durability.md "The allowed-tear rule"): which
//! torn pages a device was allowed to leave after a power cut, and what the scans say of them.
//!
//! A device may tear a write it has not acknowledged as durable at a boundary of its atomic
//! unit; it may not tear inside a device sector, nor tear a write the journal holds.

use crate::page::{SectorContent, Verdict, SECTORS_PER_PAGE, SECTOR_SIZE};

/// The allowed-tear rule (docs/durability.md): a device may tear a write it has not
/// acknowledged as durable, at a boundary of its atomic unit (`unit`, the logical sector
/// size; NVMe's AWUPF). So a torn page (or one whose zero sectors are a first write torn) is
/// allowed loss when every `unit`-byte sector of it is whole, of one write, and every one holds
/// at least the generation the journal held durable (`durable`; zeros count as generation 0):
/// the newer part is a write never acknowledged. A tear inside a device sector, or a part older
/// than the journal's generation (an acknowledged write torn), is not allowed.
pub fn allowed_tear(v: &Verdict, durable: u64, unit: u32) -> bool {
    let cells: Vec<Option<u64>> = match v {
        Verdict::TornWrite { sectors } => sectors
            .iter()
            .map(|c| match *c {
                SectorContent::Zero => Some(0),
                SectorContent::Generation(g) => Some(g),
                _ => None,
            })
            .collect(),
        Verdict::ZeroedSectors {
            generation,
            sectors,
        } => (0..SECTORS_PER_PAGE)
            .map(|i| {
                Some(if sectors >> i & 1 == 1 {
                    0
                } else {
                    *generation
                })
            })
            .collect(),
        _ => return false,
    };
    let per = (unit.max(SECTOR_SIZE as u32) as usize / SECTOR_SIZE).min(SECTORS_PER_PAGE);
    let whole = cells
        .chunks(per)
        .all(|s| s.iter().all(|c| c.is_some() && *c == s[0]));
    whole && cells.iter().all(|c| c.is_some_and(|g| g >= durable))
}

/// What a scan says of its allowed tears (nothing when none), after its page counts.
pub fn allowed_tears(count: u64, sector_size: u32) -> String {
    if count == 0 {
        return String::new();
    }
    format!(
        "; {count} torn write(s) allowed: writes never acknowledged as durable, torn at {}-byte device sector boundaries (the atomic unit assumed: the logical sector size), which a device may do; allowed loss, not a finding",
        sector_size.max(SECTOR_SIZE as u32)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use SectorContent::{Generation as G, Zero};

    fn torn(cells: [SectorContent; 16]) -> Verdict {
        Verdict::TornWrite {
            sectors: cells.to_vec(),
        }
    }

    fn halves(first: SectorContent, second: SectorContent) -> Verdict {
        torn(std::array::from_fn(|i| if i < 8 { first } else { second }))
    }

    #[test]
    fn a_tear_at_the_sector_of_a_write_the_journal_does_not_hold_is_allowed() {
        assert!(allowed_tear(&halves(G(3), G(2)), 2, 4096));
        assert!(
            allowed_tear(&halves(G(1), Zero), 0, 4096),
            "a first write torn"
        );
        let zeros_first = Verdict::ZeroedSectors {
            generation: 1,
            sectors: 0x00FF,
        };
        assert!(allowed_tear(&zeros_first, 0, 4096), "the second half kept");
    }

    #[test]
    fn a_tear_of_an_acknowledged_write_or_inside_a_sector_is_not() {
        assert!(
            !allowed_tear(&halves(G(3), G(2)), 3, 4096),
            "g3 was acknowledged"
        );
        assert!(
            !allowed_tear(&halves(G(1), Zero), 1, 4096),
            "g1 was acknowledged"
        );
        let mut cells = [G(2); 16];
        cells[3] = G(3);
        assert!(
            !allowed_tear(&torn(cells), 2, 4096),
            "inside a 4096-byte sector"
        );
        assert!(allowed_tear(&torn(cells), 2, 512), "at a 512-byte sector");
        let mut split = cells;
        split[5] = SectorContent::Split {
            first: 3,
            rest: 2,
            at: 100,
        };
        assert!(
            !allowed_tear(&torn(split), 2, 512),
            "inside a 512-byte sector"
        );
        assert!(!allowed_tear(&Verdict::Ok { generation: 3 }, 2, 512));
    }
}
