//! What the sectors of a torn page hold ([`SectorContent`]) and how a torn write is told: in
//! the device's sectors (a 4 KiB-sector device tears at 4 KiB at most), with the 512-byte
//! stamp map ([`torn_map`]) that every check is still made on.
//!
//! On a 512-byte device the message stays the stamp map alone; a tear inside a 512-byte sector
//! adds where (page byte) and between which generations.

use serde::{Deserialize, Serialize};

use super::layout::SECTOR_SIZE;

/// What one 512-byte sector of a torn page holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SectorContent {
    /// All zero: the never-written state.
    Zero,
    /// A valid sector of this generation.
    Generation(u64),
    /// Neither zero nor a valid sector of a known generation.
    Damaged,
    /// A tear inside the sector: bytes `..at` are generation `first`'s, the rest generation
    /// `rest`'s (0: zero, never written).
    Split {
        /// Generation of the bytes before the boundary (0: zero).
        first: u64,
        /// Generation of the bytes from the boundary on (0: zero).
        rest: u64,
        /// Byte within the sector where `rest` starts.
        at: u16,
    },
}

/// The description of a torn write whose 512-byte cells are `cells`, on a device of
/// `sector_size`-byte sectors.
pub fn describe(cells: &[SectorContent], sector_size: u32) -> String {
    let per = (sector_size as usize / SECTOR_SIZE).clamp(1, cells.len().max(1));
    let mut text = if per == 1 {
        format!("torn write: sector map {}", torn_map(cells))
    } else {
        format!(
            "torn write {}; 512-byte stamp map {}",
            device_boundary(cells, per, sector_size),
            torn_map(cells)
        )
    };
    if let Some(inside) = inside_sector(cells) {
        text.push_str(&inside);
    }
    text
}

/// "at device sector 1 of 2 (4096-byte sectors)", or where the device tore inside a sector.
fn device_boundary(cells: &[SectorContent], per: usize, sector_size: u32) -> String {
    let groups: Vec<&[SectorContent]> = cells.chunks(per).collect();
    let n = groups.len();
    let uniform = |g: &[SectorContent]| g.iter().all(|c| *c == g[0]);
    if let Some(i) = groups.iter().position(|g| !uniform(g)) {
        return format!(
            "inside device sector {i} of {n} ({sector_size}-byte sectors, which a device should write whole)"
        );
    }
    match (1..n).find(|&i| groups[i][0] != groups[i - 1][0]) {
        Some(i) => format!("at device sector {i} of {n} ({sector_size}-byte sectors)"),
        None => format!("({n} device sectors of {sector_size} bytes)"),
    }
}

/// "; torn inside 512-byte sector 3 at page byte 0x6C8: generation 5 before, 4 from there".
fn inside_sector(cells: &[SectorContent]) -> Option<String> {
    cells.iter().enumerate().find_map(|(s, c)| match *c {
        SectorContent::Split { first, rest, at } => Some(format!(
            "; torn inside 512-byte sector {s} at page byte 0x{:X}: {} before, {} from there",
            s * SECTOR_SIZE + usize::from(at),
            side(first),
            side(rest)
        )),
        _ => None,
    })
}

fn side(g: u64) -> String {
    if g == 0 {
        "zeros (never written)".to_string()
    } else {
        format!("generation {g}")
    }
}

/// Compact sector map of a torn page, e.g. "[g5 g5 g4 g4 … 0]"; a sector torn inside shows
/// both sides and the byte, e.g. "g5|g4@200".
pub fn torn_map(sectors: &[SectorContent]) -> String {
    let cells: Vec<String> = sectors
        .iter()
        .map(|s| match s {
            SectorContent::Zero => "0".to_string(),
            SectorContent::Generation(g) => format!("g{g}"),
            SectorContent::Damaged => "X".to_string(),
            SectorContent::Split { first, rest, at } => {
                format!("{}|{}@{at}", cell(*first), cell(*rest))
            }
        })
        .collect();
    format!("[{}]", cells.join(" "))
}

fn cell(g: u64) -> String {
    if g == 0 {
        "0".to_string()
    } else {
        format!("g{g}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use SectorContent::{Generation, Split, Zero};

    fn half_and_half() -> Vec<SectorContent> {
        (0..16)
            .map(|s| Generation(if s < 8 { 5 } else { 4 }))
            .collect()
    }

    #[test]
    fn a_4kn_tear_is_told_in_device_sectors_with_the_stamp_map() {
        let text = describe(&half_and_half(), 4096);
        assert!(
            text.starts_with(
                "torn write at device sector 1 of 2 (4096-byte sectors); 512-byte stamp map [g5 g5"
            ),
            "{text}"
        );
    }

    #[test]
    fn on_512_byte_devices_the_message_is_the_stamp_map() {
        assert_eq!(
            describe(&half_and_half(), 512),
            format!("torn write: sector map {}", torn_map(&half_and_half()))
        );
    }

    #[test]
    fn a_tear_below_the_device_sector_is_named_as_such() {
        let mut cells = half_and_half();
        cells[4] = Split {
            first: 5,
            rest: 4,
            at: 200,
        };
        for c in &mut cells[5..8] {
            *c = Generation(4);
        }
        let text = describe(&cells, 4096);
        assert!(text.contains("inside device sector 0 of 2"), "{text}");
        assert!(text.contains("g5|g4@200"), "{text}");
        assert!(
            text.ends_with("torn inside 512-byte sector 4 at page byte 0x8C8: generation 5 before, generation 4 from there"),
            "{text}"
        );
        let first = [
            Generation(1),
            Split {
                first: 1,
                rest: 0,
                at: 8,
            },
            Zero,
        ];
        assert!(describe(&first, 512).contains("zeros (never written) from there"));
    }
}
