//! Payload generation: the bytes of a page are a pure function of (run, file, page, generation).
//!
//! A fixed table of random words (made once from a constant seed) is XORed with a key mixed
//! from the page's identity. That keeps stamping at memory speed (no per-word PRNG), the data
//! incompressible, and every (page, generation) distinct in every word.

use std::sync::OnceLock;

use super::layout::PAGE_SIZE;

const WORDS: usize = PAGE_SIZE / 8;

/// SplitMix64 finaliser: a cheap, well-mixed 64-bit hash step.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn table() -> &'static [u64; WORDS] {
    static TABLE: OnceLock<Box<[u64; WORDS]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([0u64; WORDS]);
        let mut state = TABLE_SEED;
        for w in t.iter_mut() {
            state = splitmix64(state);
            *w = state;
        }
        t
    })
}

/// Seed of the payload table. Changing it changes the page format version.
const TABLE_SEED: u64 = 0x5EED_0F5A_1051_0000;

/// The key that makes one (run, file, page, generation) distinct from every other.
pub fn page_key(run_id: u64, file_id: u32, page_id: u64, generation: u64) -> u64 {
    let a = splitmix64(run_id ^ (u64::from(file_id) << 40));
    let b = splitmix64(a ^ page_id);
    splitmix64(b ^ generation.rotate_left(17))
}

/// Fills the whole page with the payload pattern (header and stamps are written over it later).
pub fn fill_payload(page: &mut [u8], run_id: u64, file_id: u32, page_id: u64, generation: u64) {
    let key = page_key(run_id, file_id, page_id, generation);
    let t = table();
    for (chunk, w) in page[..PAGE_SIZE].chunks_exact_mut(8).zip(t.iter()) {
        chunk.copy_from_slice(&(w ^ key).to_le_bytes());
    }
}

/// True when the 8-byte words `first_word..first_word + bytes.len() / 8` of a page carry the
/// payload pattern of `key` (used to recognise single sectors of a known generation).
pub fn words_match(bytes: &[u8], first_word: usize, key: u64) -> bool {
    let t = table();
    bytes
        .chunks_exact(8)
        .zip(&t[first_word..])
        .all(|(chunk, w)| chunk == (w ^ key).to_le_bytes())
}
