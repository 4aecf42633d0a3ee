//! Payload generation: the bytes of a page are a pure function of (run, file, page, generation).
//!
//! A fixed table of random words (made once from a constant seed) is XORed with a key mixed
//! from the page's identity. That keeps stamping at memory speed (no per-word PRNG), the data
//! incompressible, and every (page, generation) distinct in every word.

use std::sync::OnceLock;

use super::PAGE_SIZE;

/// SplitMix64 finaliser: a cheap, well-mixed 64-bit hash step.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The payload table as bytes (little-endian words), so fill and compare run over plain
/// byte arrays that the compiler vectorises.
fn table() -> &'static [u8; PAGE_SIZE] {
    static TABLE: OnceLock<Box<[u8; PAGE_SIZE]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([0u8; PAGE_SIZE]);
        let mut state = TABLE_SEED;
        for w in t.chunks_exact_mut(8) {
            state = splitmix64(state);
            w.copy_from_slice(&state.to_le_bytes());
        }
        t
    })
}

/// The key's 8 little-endian bytes repeated over one 64-byte block.
fn key_block(key: u64) -> [u8; BLOCK] {
    let mut k = [0u8; BLOCK];
    for w in k.chunks_exact_mut(8) {
        w.copy_from_slice(&key.to_le_bytes());
    }
    k
}

const BLOCK: usize = 64;

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
    let k = key_block(page_key(run_id, file_id, page_id, generation));
    let (dst, _) = page[..PAGE_SIZE].as_chunks_mut::<BLOCK>();
    let (src, _) = table().as_chunks::<BLOCK>();
    for (d, t) in dst.iter_mut().zip(src) {
        for i in 0..BLOCK {
            d[i] = t[i] ^ k[i];
        }
    }
}

/// True when the 8-byte words `first_word..first_word + bytes.len() / 8` of a page carry the
/// payload pattern of `key` (used to recognise single sectors of a known generation).
pub fn words_match(bytes: &[u8], first_word: usize, key: u64) -> bool {
    let k = key_block(key);
    let len = bytes.len() / 8 * 8;
    let want = &table()[first_word * 8..first_word * 8 + len];
    let (got_blocks, got_tail) = bytes[..len].as_chunks::<BLOCK>();
    let (want_blocks, want_tail) = want.as_chunks::<BLOCK>();
    let blocks_ok = got_blocks.iter().zip(want_blocks).all(|(g, t)| {
        let mut acc = 0u8;
        for i in 0..BLOCK {
            acc |= g[i] ^ t[i] ^ k[i];
        }
        acc == 0
    });
    // The key pattern repeats every 8 bytes, so the tail starts in phase.
    blocks_ok
        && got_tail
            .iter()
            .zip(want_tail)
            .zip(k.iter())
            .all(|((g, t), k)| g ^ t ^ k == 0)
}
