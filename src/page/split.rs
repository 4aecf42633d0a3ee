//! Tears inside one 512-byte sector (issue 12): a sector whose bytes are one write's image up
//! to some byte and another's (or zeros) from there on. A device that tears below its sector
//! size leaves exactly this, and without this check it would read as damage (bit rot).
//!
//! The images compared are regenerated (docs/page-format.md §1.3): of the generations the
//! intact sectors hold, their neighbours (the previous write is the usual "old"), what the
//! oracle expects, the header's, and zero (a never-written page). Each side of the boundary
//! must carry at least [`MIN_EVIDENCE`] bytes in which the two images differ, so a flipped bit
//! that happens to match another image in a byte or two stays a checksum mismatch.

use super::image::image_like;
use super::layout::{PageStamp, PAGE_SIZE, SECTOR_SIZE};
use super::torn::SectorContent;
use super::verdict::{Expect, ExpectedState};

/// Bytes in which the two images must differ on each side of the boundary.
pub const MIN_EVIDENCE: usize = 8;

/// Replaces the one damaged sector of `map` by a [`SectorContent::Split`] when it is a tear
/// inside the sector. Pages with several damaged sectors are left alone: one tear has one
/// boundary, and this keeps the search off pages that are not ours at all.
pub fn refine(page: &[u8], map: &mut [SectorContent], header: &PageStamp, exp: &Expect, run: u64) {
    let damaged: Vec<usize> = (0..map.len())
        .filter(|&s| map[s] == SectorContent::Damaged)
        .collect();
    let [s] = damaged[..] else {
        return;
    };
    let id = (run, exp.file_id, exp.page_id);
    let images: Vec<(u64, Vec<u8>)> = candidates(map, header, exp)
        .into_iter()
        .map(|g| (g, image_of(id, g, page)))
        .collect();
    if let Some(split) = split_of(page, s, &images) {
        map[s] = split;
    }
}

/// The image of generation `g` (zeros for 0), with the received header's unregenerable fields.
fn image_of(id: (u64, u32, u64), g: u64, page: &[u8]) -> Vec<u8> {
    if g == 0 {
        vec![0u8; PAGE_SIZE]
    } else {
        image_like(id, g, page)
    }
}

/// Generations a torn sector may be made of, zero included, without repeats.
fn candidates(map: &[SectorContent], header: &PageStamp, exp: &Expect) -> Vec<u64> {
    let mut gens = vec![0, header.generation];
    for s in map {
        if let SectorContent::Generation(g) = *s {
            gens.extend([g, g.saturating_sub(1), g.saturating_add(1)]);
        }
    }
    match exp.state {
        Some(ExpectedState::InFlight { old, new }) => gens.extend([old, new]),
        Some(ExpectedState::Unknown { old, issued }) => gens.extend([old, issued]),
        Some(ExpectedState::Written { generation }) => {
            gens.extend([generation, generation.saturating_sub(1)])
        }
        Some(ExpectedState::NeverWritten) | None => {}
    }
    gens.push(header.generation.saturating_sub(1));
    gens.sort_unstable();
    gens.dedup();
    gens
}

/// The split of sector `s` between two of `images`, if its bytes are exactly one image's up to
/// some byte and another's from there on.
#[expect(
    clippy::cast_possible_truncation,
    reason = "`at` is a byte offset within one sector (under SECTOR_SIZE, 512)"
)]
pub fn split_of(page: &[u8], s: usize, images: &[(u64, Vec<u8>)]) -> Option<SectorContent> {
    let range = s * SECTOR_SIZE..(s + 1) * SECTOR_SIZE;
    let got = &page[range.clone()];
    for (first, a) in images {
        let a = &a[range.clone()];
        let Some(at) = got.iter().zip(a).position(|(x, y)| x != y) else {
            continue;
        };
        for (rest, b) in images.iter().filter(|(g, _)| g != first) {
            let b = &b[range.clone()];
            if got[at..] == b[at..]
                && differing(&a[..at], &b[..at]) >= MIN_EVIDENCE
                && differing(&a[at..], &b[at..]) >= MIN_EVIDENCE
            {
                return Some(SectorContent::Split {
                    first: *first,
                    rest: *rest,
                    at: at as u16,
                });
            }
        }
    }
    None
}

fn differing(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::ActorKind;

    fn image(g: u64) -> Vec<u8> {
        PageStamp {
            run_id: 9,
            file_id: 1,
            page_id: 7,
            generation: g,
            lsn: 100 + g,
            writer_kind: ActorKind::Checkpoint,
            writer_id: 1,
            write_time_us: 5,
        }
        .image()
    }

    fn images(gens: &[u64]) -> Vec<(u64, Vec<u8>)> {
        gens.iter()
            .map(|&g| (g, if g == 0 { vec![0; PAGE_SIZE] } else { image(g) }))
            .collect()
    }

    #[test]
    #[expect(
        clippy::cast_possible_truncation,
        reason = "`at` is a byte offset within one sector"
    )]
    fn new_then_old_inside_a_sector_is_found_with_its_byte() {
        let (new, old) = (image(5), image(4));
        let mut p = old.clone();
        let cut = 3 * SECTOR_SIZE + 200;
        p[..cut].copy_from_slice(&new[..cut]);
        let at = (200..SECTOR_SIZE)
            .find(|&i| new[3 * SECTOR_SIZE + i] != old[3 * SECTOR_SIZE + i])
            .expect("images differ");
        assert_eq!(
            split_of(&p, 3, &images(&[0, 4, 5])),
            Some(SectorContent::Split {
                first: 5,
                rest: 4,
                at: at as u16
            })
        );
    }

    #[test]
    fn old_then_new_and_new_then_zero_are_found_too() {
        let (new, old) = (image(5), image(4));
        let mut p = new.clone();
        p[..SECTOR_SIZE + 64].copy_from_slice(&old[..SECTOR_SIZE + 64]);
        assert!(matches!(
            split_of(&p, 1, &images(&[4, 5])),
            Some(SectorContent::Split {
                first: 4,
                rest: 5,
                ..
            })
        ));
        let mut first_write = vec![0u8; PAGE_SIZE];
        first_write[..2 * SECTOR_SIZE + 300].copy_from_slice(&new[..2 * SECTOR_SIZE + 300]);
        assert!(matches!(
            split_of(&first_write, 2, &images(&[0, 5])),
            Some(SectorContent::Split {
                first: 5,
                rest: 0,
                ..
            })
        ));
    }

    #[test]
    fn a_flipped_bit_or_a_stamp_only_change_is_not_a_split() {
        let mut p = image(5);
        p[3 * SECTOR_SIZE + 100] ^= 4;
        assert_eq!(split_of(&p, 3, &images(&[0, 4, 5, 6])), None);
        // Only the stamp's generation bytes from the previous write: too little evidence.
        let (new, old) = (image(5), image(4));
        let mut q = new.clone();
        let stamp = 3 * SECTOR_SIZE + 508;
        q[stamp..stamp + 4].copy_from_slice(&old[stamp..stamp + 4]);
        assert_eq!(split_of(&q, 3, &images(&[4, 5])), None);
    }
}
