//! The verifier: a pure function from (bytes read, what was expected) to a [`Verdict`].
//!
//! Order of decisions: all zero → never written; a valid self-consistent page (magic and
//! checksum right) → identity and generation checks (foreign run, misdirected, stale, future);
//! otherwise the header is read leniently and each sector is classified (zero, an intact
//! sector of some generation, damaged): intact sectors of two generations are a torn write,
//! intact sectors plus zero sectors are zeroed sectors (or a torn first write), and after a
//! failed write any mix within the generations it may have left is accepted. Anything else is
//! a checksum mismatch diffed bit by bit against the regenerated image, or garbage when
//! nothing of the page is ours. docs/page-format.md lists every rule.

use super::image::image_like;
use super::layout::{
    has_data_magic, page_checksum, read_stamp, read_stamp_lenient, stored_checksum, PageStamp,
    PAGE_MAGIC, PAGE_SIZE,
};
use super::sectors::{
    bit_diff, image_checksum, is_zero, sector_matches, stamp_of, widen, zero_mask, SECTORS,
};
use super::torn::SectorContent;
use super::verdict::{Expect, ExpectedState, Verdict};

/// Verifies one page read against what was expected of it.
pub fn verify(page: &[u8], exp: &Expect) -> Verdict {
    if page.len() < PAGE_SIZE {
        return Verdict::ShortRead {
            // Shorter than a page here, so it fits.
            bytes: u32::try_from(page.len()).unwrap_or(u32::MAX),
        };
    }
    let page = &page[..PAGE_SIZE];
    if is_zero(page) {
        return verify_zero(exp);
    }
    match read_stamp(page) {
        Some(st) if stored_checksum(page) == page_checksum(page) => verify_valid(&st, exp),
        _ => verify_damaged(page, exp),
    }
}

fn verify_zero(exp: &Expect) -> Verdict {
    match exp.state.map(ExpectedState::min_acceptable) {
        None | Some(0) => Verdict::Ok { generation: 0 },
        Some(expected) => Verdict::NeverWritten { expected },
    }
}

/// A page whose checksum is right: is it the right page, of the right generation?
fn verify_valid(st: &PageStamp, exp: &Expect) -> Verdict {
    if let Some(run) = exp.run_id {
        if st.run_id != run {
            return Verdict::ForeignRun {
                found_run: st.run_id,
                expected_run: run,
            };
        }
    }
    if st.file_id != exp.file_id || st.page_id != exp.page_id {
        return Verdict::Misdirected { found: *st };
    }
    let Some(state) = exp.state else {
        return Verdict::Ok {
            generation: st.generation,
        };
    };
    let g = st.generation;
    if g > state.max_issued() {
        return Verdict::FutureGeneration {
            found: g,
            max_issued: state.max_issued(),
        };
    }
    let acceptable = match state {
        ExpectedState::NeverWritten => false,
        ExpectedState::Written { generation } => g == generation,
        ExpectedState::InFlight { old, new } => g == old || g == new,
        ExpectedState::Unknown { old, .. } => g >= old,
    };
    if acceptable {
        Verdict::Ok { generation: g }
    } else {
        Verdict::Stale {
            found: g,
            expected: state.min_acceptable(),
        }
    }
}

/// Generations to read the 32-bit sector stamps against, best first: the newest issued (when
/// an expectation is known), the header's, none (the stamp's 32 bits as they are), and last
/// the header's with one of its high 32 bits flipped: offline, those bits exist only in the
/// header, so a flip there is found by the sectors it makes recognisable again.
fn references(header: &PageStamp, exp: &Expect) -> Vec<u64> {
    let mut refs = Vec::with_capacity(35);
    refs.extend(exp.state.map(ExpectedState::max_issued).filter(|g| *g > 0));
    refs.push(header.generation);
    refs.push(0);
    refs.extend((32..64).map(|b| header.generation ^ (1 << b)));
    refs.dedup();
    refs
}

/// The sector map under the first reference generation that recognises any sector.
fn best_sector_map(
    page: &[u8],
    header: &PageStamp,
    exp: &Expect,
    run: u64,
) -> (Vec<SectorContent>, u64) {
    let refs = references(header, exp);
    let mut map = sector_map(page, header, exp, run, refs[0]);
    for &r in &refs[1..] {
        if map
            .iter()
            .any(|s| matches!(s, SectorContent::Generation(_)))
        {
            break;
        }
        map = sector_map(page, header, exp, run, r);
    }
    (map, refs[0])
}

/// Classifies each sector: zero, a valid sector of some generation, or damaged. Sector 0
/// belongs to a generation only if the (leniently read) header says the same generation.
fn sector_map(
    page: &[u8],
    header: &PageStamp,
    exp: &Expect,
    run: u64,
    reference: u64,
) -> Vec<SectorContent> {
    let id = (run, exp.file_id, exp.page_id);
    let zeros = zero_mask(page);
    (0..SECTORS)
        .map(|s| {
            if zeros & (1 << s) != 0 {
                return SectorContent::Zero;
            }
            let (pid_low, gen_low) = stamp_of(page, s);
            let g = widen(gen_low, reference);
            let header_ok = s != 0 || header.generation == g;
            if u64::from(pid_low) == exp.page_id & u64::from(u32::MAX)
                && g > 0
                && header_ok
                && sector_matches(page, s, id, g)
            {
                SectorContent::Generation(g)
            } else {
                SectorContent::Damaged
            }
        })
        .collect()
}

/// A page whose header or checksum is wrong.
fn verify_damaged(page: &[u8], exp: &Expect) -> Verdict {
    let header = read_stamp_lenient(page);
    let run = exp.run_id.unwrap_or(header.run_id);
    let (mut map, reference) = best_sector_map(page, &header, exp, run);
    if map.iter().any(|s| !matches!(s, SectorContent::Damaged)) {
        super::split::refine(page, &mut map, &header, exp, run);
    }
    let gens = distinct_generations(&map);
    let intact = !map.contains(&SectorContent::Damaged);
    let mixed = gens.len() >= 2 || map.contains(&SectorContent::Zero) || split_zero(&map).is_some();
    if intact && mixed && !gens.is_empty() {
        return verify_mix(map, &gens, exp);
    }
    if gens.is_empty() && !has_data_magic(page) {
        if damaged_blank(page, &map, exp) {
            return mismatch_with(page, &[0u8; PAGE_SIZE]);
        }
        let mut first_bytes = [0u8; 16];
        first_bytes.copy_from_slice(&page[..16]);
        return Verdict::Garbage { first_bytes };
    }
    // Compare with the generation the intact sectors agree on (the header may be the damage).
    let g = match gens.as_slice() {
        [g] => *g,
        _ => reference,
    };
    checksum_mismatch(page, (run, exp.file_id, exp.page_id), g)
}

/// Every sector is zero or an intact sector of this page: a tear, zeroed sectors, or (after a
/// failed write) an acceptable mix.
fn verify_mix(map: Vec<SectorContent>, gens: &[u64], exp: &Expect) -> Verdict {
    let zeros = zero_bits(&map);
    let split = split_zero(&map);
    if let Some(ExpectedState::Unknown { old, issued }) = exp.state {
        let in_range = gens.iter().all(|g| (old.max(1)..=issued).contains(g));
        if in_range && ((zeros == 0 && split != Some(true)) || old == 0) {
            return Verdict::Ok {
                generation: gens[gens.len() - 1],
            };
        }
    }
    // A sector torn inside is a tear whatever else the page holds.
    if gens.len() >= 2 || split.is_some() || (first_write(exp, gens[0]) && is_suffix(zeros)) {
        return Verdict::TornWrite { sectors: map };
    }
    Verdict::ZeroedSectors {
        generation: gens[0],
        sectors: zeros,
    }
}

/// `Some(true)` when a sector is torn inside with zeros on one side, `Some(false)` when torn
/// inside between two generations, `None` when no sector is torn inside.
fn split_zero(map: &[SectorContent]) -> Option<bool> {
    map.iter().find_map(|s| match *s {
        SectorContent::Split { first, rest, .. } => Some(first == 0 || rest == 0),
        _ => None,
    })
}

fn distinct_generations(map: &[SectorContent]) -> Vec<u64> {
    let mut gens: Vec<u64> = map
        .iter()
        .flat_map(|s| match *s {
            SectorContent::Generation(g) => vec![g],
            SectorContent::Split { first, rest, .. } => vec![first, rest],
            _ => Vec::new(),
        })
        .filter(|&g| g > 0)
        .collect();
    gens.sort_unstable();
    gens.dedup();
    gens
}

fn zero_bits(map: &[SectorContent]) -> u16 {
    map.iter()
        .enumerate()
        .filter(|(_, s)| **s == SectorContent::Zero)
        .fold(0, |m, (i, _)| m | (1 << i))
}

/// True when the zero sectors are the last ones of the page: what a write torn over a
/// never-written page leaves (devices persist a prefix of a write). Zero sectors elsewhere are
/// zeroed sectors, even on a page written once.
fn is_suffix(zeros: u16) -> bool {
    zeros != 0 && (zeros >> zeros.trailing_zeros()).count_ones() == 16 - zeros.trailing_zeros()
}

/// True when generation `g` was this page's first write, so zero sectors are its old content.
fn first_write(exp: &Expect, g: u64) -> bool {
    match exp.state {
        Some(ExpectedState::InFlight { old: 0, .. })
        | Some(ExpectedState::Unknown { old: 0, .. }) => true,
        Some(ExpectedState::Written { generation }) => generation == 1 && g == 1,
        _ => g == 1,
    }
}

/// A page that may be never written, mostly zero, and nothing of ours: damage to a blank
/// page (a flipped bit in an unwritten region), diffed against zeros rather than "garbage".
fn damaged_blank(page: &[u8], map: &[SectorContent], exp: &Expect) -> bool {
    let zero_ok = exp.state.is_none_or(|s| s.min_acceptable() == 0);
    let zeros = map.iter().filter(|s| **s == SectorContent::Zero).count();
    zero_ok && zeros * 2 >= SECTORS && page[..PAGE_MAGIC.len()] != PAGE_MAGIC
}

/// Damage that is neither a tear nor zeroed sectors: compare with the expected image.
fn checksum_mismatch(page: &[u8], id: (u64, u32, u64), g: u64) -> Verdict {
    mismatch_with(page, &image_like(id, g, page))
}

fn mismatch_with(page: &[u8], image: &[u8]) -> Verdict {
    Verdict::ChecksumMismatch {
        stored: stored_checksum(page),
        calculated: page_checksum(page),
        expected: image_checksum(image),
        diff: bit_diff(page, image),
    }
}

#[cfg(test)]
mod suffix_tests {
    use super::is_suffix;

    #[test]
    fn only_trailing_runs_of_zero_sectors_are_suffixes() {
        assert!(is_suffix(0xFF00));
        assert!(is_suffix(0x8000));
        assert!(is_suffix(0xFFFE));
        assert!(!is_suffix(0x0008), "sector 3 alone");
        assert!(!is_suffix(0x7F00), "does not reach the last sector");
        assert!(!is_suffix(0));
    }
}
