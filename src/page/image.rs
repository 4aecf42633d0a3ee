//! The image a page should have had, for bit-level diffs and dumps.
//!
//! Everything of a page is regenerated from (run, file, page, generation) except three header
//! fields: the LSN, the writer and the write time. Those are copied from the bytes received,
//! read leniently (a damaged magic does not stop it). When the damage hit one of those fields,
//! the copy carries the damage too; a single flipped bit there is then found from the stored
//! checksum (CRC32 is linear, so flipping each of the 160 candidate bits and recomputing
//! finds it), so the diff still shows the one bit and not zero or hundreds.

use super::layout::{
    page_checksum, put, read_stamp_lenient, stored_checksum, ActorKind, PageStamp, OFF_CHECKSUM,
    OFF_LSN, OFF_WRITER_ID, OFF_WRITE_TIME, PAGE_SIZE,
};
use super::verdict::{Expect, ExpectedState};

/// Header byte ranges that cannot be regenerated: LSN + writer (40..52) and write time (56..64).
const UNREGENERABLE: [(usize, usize); 2] = [
    (OFF_LSN, OFF_WRITER_ID + 2),
    (OFF_WRITE_TIME, OFF_WRITE_TIME + 8),
];

/// The image of page (run, file, page) at `generation`, with the unregenerable header fields
/// taken from `received` (and a single damaged bit in them repaired from its checksum).
pub fn image_like(id: (u64, u32, u64), generation: u64, received: &[u8]) -> Vec<u8> {
    let mut page = PageStamp::bare(id, generation, ActorKind::Init).image();
    if received.len() >= PAGE_SIZE {
        for (a, b) in UNREGENERABLE {
            page[a..b].copy_from_slice(&received[a..b]);
        }
        let crc = page_checksum(&page);
        put(&mut page, OFF_CHECKSUM, &crc.to_le_bytes());
        repair_single_bit(&mut page, stored_checksum(received));
    }
    page
}

/// When `image` does not match the checksum `stored` but flipping one bit of its
/// unregenerable fields makes it match, flips that bit (it was the damage).
fn repair_single_bit(image: &mut [u8], stored: u32) {
    if page_checksum(image) == stored {
        return;
    }
    for (a, b) in UNREGENERABLE {
        for byte in a..b {
            for bit in 0..8 {
                image[byte] ^= 1 << bit;
                if page_checksum(image) == stored {
                    put(image, OFF_CHECKSUM, &stored.to_le_bytes());
                    return;
                }
                image[byte] ^= 1 << bit;
            }
        }
    }
}

/// The image a read of this page should have returned, for dumps: zeros when the page must be
/// never written; otherwise the newest acceptable generation (offline: the one the header
/// names), with the unregenerable fields of `received` when it holds that same generation.
pub fn expected_image(received: &[u8], exp: &Expect) -> Vec<u8> {
    let found = (received.len() >= PAGE_SIZE).then(|| read_stamp_lenient(received));
    let run = exp.run_id.or(found.map(|f| f.run_id)).unwrap_or(0);
    let generation = match exp.state {
        None => found
            .filter(|f| f.file_id == exp.file_id && f.page_id == exp.page_id)
            .map_or(0, |f| f.generation),
        Some(ExpectedState::Unknown { old, issued }) => found
            .map(|f| f.generation)
            .filter(|g| (old.max(1)..=issued).contains(g))
            .unwrap_or(issued),
        Some(state) => state.max_issued(),
    };
    if generation == 0 {
        return vec![0u8; PAGE_SIZE];
    }
    let id = (run, exp.file_id, exp.page_id);
    let same_write = found.is_some_and(|f| f.generation == generation);
    if same_write {
        image_like(id, generation, received)
    } else {
        image_like(id, generation, &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_flipped_bit_in_the_lsn_is_found_from_the_checksum() {
        let id = (9, 1, 5);
        let mut page = image_like(id, 3, &[]);
        put(&mut page, OFF_LSN, &0x1234_5678u64.to_le_bytes());
        let crc = page_checksum(&page);
        put(&mut page, OFF_CHECKSUM, &crc.to_le_bytes());
        let good = page.clone();
        page[OFF_LSN + 2] ^= 0x10;
        let image = image_like(id, 3, &page);
        assert_eq!(image, good, "the repaired image is the page as written");
    }
}
