//! Sector-level analysis of a page: zero sectors, which generation each sector belongs to,
//! and bit-level differences against an expected image.

use super::fill;
use super::layout::{
    page_checksum, sector_stamp, PageStamp, HEADER_LEN, PAGE_SIZE, SECTORS_PER_PAGE, SECTOR_SIZE,
    STAMP_OFFSET,
};
use super::verdict::BitDiff;
use crate::codec::Reader;

/// Bit i set: sector i is entirely zero.
pub fn zero_mask(page: &[u8]) -> u16 {
    let mut mask = 0u16;
    for (i, sector) in page[..PAGE_SIZE].chunks_exact(SECTOR_SIZE).enumerate() {
        if is_zero(sector) {
            mask |= 1 << i;
        }
    }
    mask
}

/// True when every byte is zero.
pub fn is_zero(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    // Whole words first (the common case: 8 KB pages), then any tail bytes.
    let words_zero = words.all(|c| c.iter().fold(0u8, |acc, b| acc | b) == 0);
    words_zero && words.remainder().iter().all(|&b| b == 0)
}

/// Low 32 bits of (page id, generation) from the stamp of sector `s`.
pub fn stamp_of(page: &[u8], s: usize) -> (u32, u32) {
    let mut r = Reader::at(page, s * SECTOR_SIZE + STAMP_OFFSET);
    let (page_low, generation_low) = (r.u32(), r.u32());
    page_low
        .zip(generation_low)
        .expect("stamp_of a sector beyond the bytes given")
}

/// Widens a 32-bit generation to the 64-bit one nearest to `reference`.
pub fn widen(low: u32, reference: u64) -> u64 {
    let candidate = (reference & !0xFFFF_FFFF) | u64::from(low);
    let half = 1u64 << 31;
    if candidate > reference.saturating_add(half) && candidate >= 1 << 32 {
        candidate - (1 << 32)
    } else if candidate.saturating_add(half) < reference {
        candidate + (1 << 32)
    } else {
        candidate
    }
}

/// True when sector `s` is exactly the sector of generation `generation` of this page
/// (for sector 0 only the part after the header is compared: the header holds fields such as
/// the LSN and write time that cannot be regenerated).
pub fn sector_matches(page: &[u8], s: usize, id: (u64, u32, u64), generation: u64) -> bool {
    let (run_id, file_id, page_id) = id;
    let base = s * SECTOR_SIZE;
    if page[base + STAMP_OFFSET..base + SECTOR_SIZE] != sector_stamp(page_id, generation) {
        return false;
    }
    let start = if s == 0 { HEADER_LEN } else { 0 };
    let key = fill::page_key(run_id, file_id, page_id, generation);
    fill::words_match(
        &page[base + start..base + STAMP_OFFSET],
        (base + start) / 8,
        key,
    )
}

/// The image a page of this identity and generation should have, taking the fields that
/// cannot be regenerated (LSN, writer, write time) from `like` when it has a valid header.
pub fn expected_image(id: (u64, u32, u64), generation: u64, like: Option<&PageStamp>) -> Vec<u8> {
    let bare = PageStamp::bare(id, generation, super::ActorKind::Verifier);
    let st = like.map_or(bare, |l| PageStamp {
        lsn: l.lsn,
        writer_kind: l.writer_kind,
        writer_id: l.writer_id,
        write_time_us: l.write_time_us,
        ..bare
    });
    st.image()
}

/// Bit-level difference between what was read and what was expected.
#[expect(
    clippy::cast_possible_truncation,
    reason = "i is a byte offset within one page (under PAGE_SIZE, 8192)"
)]
pub fn bit_diff(got: &[u8], want: &[u8]) -> BitDiff {
    let mut d = BitDiff::default();
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        let x = a ^ b;
        if x != 0 {
            d.bits_flipped += x.count_ones();
            d.bytes_differing += 1;
            d.first_bad_byte.get_or_insert(i as u32);
            d.last_bad_byte = Some(i as u32);
            d.sectors |= 1 << (i / SECTOR_SIZE);
        }
    }
    d
}

/// Checksum of the expected image (for the Expected/Received/Calculated triple).
pub fn image_checksum(image: &[u8]) -> u32 {
    page_checksum(image)
}

/// Number of sectors in a page, re-exported for the verifier's loops.
pub const SECTORS: usize = SECTORS_PER_PAGE;
