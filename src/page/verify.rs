//! The verifier: a pure function from (bytes read, what was expected) to a [`Verdict`].
//!
//! Order of decisions: all zero → never written; a valid self-consistent page → identity and
//! generation checks (foreign run, misdirected, stale, future); otherwise sector analysis
//! tells torn writes and zeroed sectors from bit-level damage and garbage.

use super::image::image_like;
use super::layout::{
    has_data_magic, page_checksum, read_stamp, read_stamp_lenient, stored_checksum, PageStamp,
    PAGE_SIZE,
};
use super::sectors::{
    bit_diff, image_checksum, is_zero, sector_matches, stamp_of, widen, zero_mask, SECTORS,
};
use super::verdict::{Expect, ExpectedState, SectorContent, Verdict};

/// Verifies one page read against what was expected of it.
pub fn verify(page: &[u8], exp: &Expect) -> Verdict {
    if page.len() < PAGE_SIZE {
        return Verdict::ShortRead {
            bytes: page.len() as u32,
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

/// The generation to compare sectors against: the header's when it names this page, else the
/// expected one.
fn reference_generation(header: &PageStamp, exp: &Expect) -> u64 {
    if header.page_id == exp.page_id && header.file_id == exp.file_id {
        header.generation
    } else {
        exp.state.map_or(0, ExpectedState::max_issued)
    }
}

/// Classifies each sector: zero, a valid sector of some generation, or damaged. Sector 0
/// belongs to a generation only if the (leniently read) header says the same generation.
fn sector_map(page: &[u8], header: &PageStamp, exp: &Expect, run: u64) -> Vec<SectorContent> {
    let reference = reference_generation(header, exp);
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
            if pid_low == exp.page_id as u32 && g > 0 && header_ok && sector_matches(page, s, id, g)
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
    let map = sector_map(page, &header, exp, run);
    let gens = distinct_generations(&map);
    if !map.contains(&SectorContent::Damaged) && !gens.is_empty() {
        return verify_mix(map, &gens, exp);
    }
    if gens.is_empty() && !has_data_magic(page) {
        let mut first_bytes = [0u8; 16];
        first_bytes.copy_from_slice(&page[..16]);
        return Verdict::Garbage { first_bytes };
    }
    // Compare with the generation the intact sectors agree on (the header may be the damage).
    let g = match gens.as_slice() {
        [g] => *g,
        _ => reference_generation(&header, exp),
    };
    checksum_mismatch(page, (run, exp.file_id, exp.page_id), g)
}

/// Every sector is zero or an intact sector of this page: a tear, zeroed sectors, or (after a
/// failed write) an acceptable mix.
fn verify_mix(map: Vec<SectorContent>, gens: &[u64], exp: &Expect) -> Verdict {
    let zeros = zero_bits(&map);
    if let Some(ExpectedState::Unknown { old, issued }) = exp.state {
        let in_range = gens.iter().all(|g| (old.max(1)..=issued).contains(g));
        if in_range && (zeros == 0 || old == 0) {
            return Verdict::Ok {
                generation: gens[gens.len() - 1],
            };
        }
    }
    if gens.len() >= 2 || first_write(exp, gens[0]) {
        return Verdict::TornWrite { sectors: map };
    }
    Verdict::ZeroedSectors {
        generation: gens[0],
        sectors: zeros,
    }
}

fn distinct_generations(map: &[SectorContent]) -> Vec<u64> {
    let mut gens: Vec<u64> = map
        .iter()
        .filter_map(|s| match s {
            SectorContent::Generation(g) => Some(*g),
            _ => None,
        })
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

/// True when generation `g` was this page's first write, so zero sectors are its old content.
fn first_write(exp: &Expect, g: u64) -> bool {
    match exp.state {
        Some(ExpectedState::InFlight { old: 0, .. })
        | Some(ExpectedState::Unknown { old: 0, .. }) => true,
        Some(ExpectedState::Written { generation }) => generation == 1 && g == 1,
        _ => g == 1,
    }
}

/// Damage that is neither a tear nor zeroed sectors: compare with the expected image.
fn checksum_mismatch(page: &[u8], id: (u64, u32, u64), g: u64) -> Verdict {
    let image = image_like(id, g, page);
    Verdict::ChecksumMismatch {
        stored: stored_checksum(page),
        calculated: page_checksum(page),
        expected: image_checksum(&image),
        diff: bit_diff(page, &image),
    }
}
