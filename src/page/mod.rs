//! The page format and its verifier: pure functions over byte slices, no I/O.
//!
//! Every 8 KB page says what it is (run, file, page, write generation, LSN, writer, time), carries
//! a stamp in each 512-byte sector, and has a CRC32 over the whole page. Its payload is
//! regenerated from (run id, file id, page id, generation), so nothing but a generation per page
//! has to be remembered to know what a read must return. See docs/page-format.md.

// A narrowing cast in an on-disk codec either is checked (`try_from`) or says why its range
// holds (issue #22 §12).
#![warn(clippy::cast_possible_truncation)]

pub mod fill;
pub mod header;
pub mod image;
pub mod layout;
pub mod sectors;
pub mod split;
pub mod torn;
pub mod verdict;
pub mod verify;

pub use header::{generation_ceiling, set_generation_ceiling, FileHeader, FileRole, HeaderError};
pub use image::expected_image;
pub use layout::{stamp_page, ActorKind, PageStamp, SECTORS_PER_PAGE, SECTOR_SIZE};
pub use torn::SectorContent;
pub use verdict::{BitDiff, Expect, ExpectedState, Verdict, VerdictKind};
pub use verify::verify;

/// Size of every page, data or header, in bytes.
pub const PAGE_SIZE: usize = 8192;
