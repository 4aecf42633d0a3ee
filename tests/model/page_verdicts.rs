//! One test per verdict of the verifier, each built from real stamped page bytes, live (with
//! an expected state) and offline (the page judged on what it says about itself).

use crate::common::*;
use sqliosim::page::layout::{OFF_CHECKSUM, OFF_GENERATION, OFF_LSN, OFF_MAGIC};
use sqliosim::page::{
    verify, Expect, ExpectedState, FileHeader, FileRole, SectorContent, Verdict, VerdictKind,
    PAGE_SIZE, SECTOR_SIZE,
};

fn gens(map: &[(u64, usize)]) -> Vec<SectorContent> {
    map.iter()
        .flat_map(|&(g, n)| {
            let c = if g == 0 {
                SectorContent::Zero
            } else {
                SectorContent::Generation(g)
            };
            std::iter::repeat_n(c, n)
        })
        .collect()
}

#[test]
fn ok_and_never_written() {
    assert_eq!(
        verify(&page(1, 7, 3), &written(3)),
        Verdict::Ok { generation: 3 }
    );
    let zero = vec![0u8; PAGE_SIZE];
    assert_eq!(
        verify(&zero, &at(ExpectedState::NeverWritten)),
        Verdict::Ok { generation: 0 }
    );
    assert_eq!(
        verify(&zero, &written(3)),
        Verdict::NeverWritten { expected: 3 }
    );
    assert_eq!(
        verify(&zero, &Expect::offline(Some(RUN), 1, 7)),
        Verdict::Ok { generation: 0 }
    );
}

#[test]
fn zeroed_sectors_inside_a_written_page() {
    let mut p = page(1, 7, 3);
    p[4 * SECTOR_SIZE..6 * SECTOR_SIZE].fill(0);
    let v = verify(&p, &written(3));
    assert_eq!(
        v,
        Verdict::ZeroedSectors {
            generation: 3,
            sectors: 0b11_0000
        }
    );
    assert!(v.describe().contains("4,5"), "{}", v.describe());
    let mut p = page(1, 7, 3);
    p[..SECTOR_SIZE].fill(0);
    assert_eq!(
        verify(&p, &written(3)),
        Verdict::ZeroedSectors {
            generation: 3,
            sectors: 1
        }
    );
}

#[test]
fn garbage_and_a_file_header_are_not_data_pages() {
    let junk: Vec<u8> = (0..PAGE_SIZE).map(|i| (i * 7 + 3) as u8).collect();
    let v = verify(&junk, &written(3));
    assert_eq!(v.kind(), VerdictKind::Garbage);
    let Verdict::Garbage { first_bytes } = v else {
        unreachable!()
    };
    assert_eq!(first_bytes[..], junk[..16]);
    let header = FileHeader {
        run_id: RUN,
        file_id: 1,
        page_size: 8192,
        role: FileRole::Data,
        tool_version: "test".into(),
        created_us: 1,
        sector_size: 512,
    };
    assert_eq!(
        verify(&header.encode(), &written(3)).kind(),
        VerdictKind::Garbage
    );
}

fn mismatch(v: Verdict) -> sqliosim::page::BitDiff {
    match v {
        Verdict::ChecksumMismatch {
            diff,
            stored,
            calculated,
            ..
        } => {
            assert_ne!(stored, calculated, "a mismatch has differing checksums");
            diff
        }
        other => panic!("expected a checksum mismatch, got {other:?}"),
    }
}

#[test]
fn single_bit_flip_in_payload_first_and_last_byte() {
    for byte in [0usize, 5000, PAGE_SIZE - 1] {
        let mut p = page(1, 7, 3);
        p[byte] ^= 0x04;
        let d = mismatch(verify(&p, &written(3)));
        assert!(d.single_bit(), "byte {byte}: {d:?}");
        assert_eq!(
            (d.first_bad_byte, d.last_bad_byte),
            (Some(byte as u32), Some(byte as u32))
        );
        assert_eq!(d.sectors, 1 << (byte / SECTOR_SIZE));
    }
}

#[test]
fn larger_damage_reports_extent_and_sectors() {
    let mut p = page(1, 7, 3);
    for b in &mut p[100..110] {
        *b ^= 0xFF;
    }
    p[7000] ^= 0x81;
    let d = mismatch(verify(&p, &written(3)));
    assert_eq!(d.bits_flipped, 10 * 8 + 2);
    assert_eq!(d.bytes_differing, 11);
    assert_eq!((d.first_bad_byte, d.last_bad_byte), (Some(100), Some(7000)));
    assert_eq!(d.sectors, 1 | (1 << 13));
    assert!(!d.single_bit());
}

#[test]
fn header_damage_is_diffed_bit_for_bit() {
    // Magic, generation, LSN (not regenerable: found through the checksum) and the checksum.
    for off in [OFF_MAGIC, OFF_GENERATION, OFF_LSN + 3, OFF_CHECKSUM + 1] {
        let mut p = page(1, 7, 3);
        p[off] ^= 0x20;
        let d = mismatch(verify(&p, &written(3)));
        assert!(d.single_bit(), "offset {off}: {d:?}");
        assert_eq!(d.first_bad_byte, Some(off as u32));
    }
    // Only the stored checksum damaged: the content is exactly the expected image.
    let mut p = page(1, 7, 3);
    p[OFF_CHECKSUM] ^= 1;
    let Verdict::ChecksumMismatch {
        expected,
        calculated,
        ..
    } = verify(&p, &written(3))
    else {
        panic!("not a mismatch");
    };
    assert_eq!(expected, calculated);
}

#[test]
fn torn_writes_at_512_and_4096() {
    let (old, new) = (page(1, 7, 4), page(1, 7, 5));
    let v = verify(&tear(&new, &old, 8), &written(5));
    assert_eq!(
        v,
        Verdict::TornWrite {
            sectors: gens(&[(5, 8), (4, 8)])
        }
    );
    let v = verify(&tear(&new, &old, 3), &written(5));
    assert_eq!(
        v,
        Verdict::TornWrite {
            sectors: gens(&[(5, 3), (4, 13)])
        }
    );
    assert!(v.describe().contains("g5 g5 g5 g4"), "{}", v.describe());
    // The old write first: the header sector is old, the tail new.
    let v = verify(&tear(&old, &new, 1), &written(5));
    assert_eq!(
        v,
        Verdict::TornWrite {
            sectors: gens(&[(4, 1), (5, 15)])
        }
    );
}

#[test]
fn torn_first_write_leaves_zeros() {
    let zero = vec![0u8; PAGE_SIZE];
    let p = tear(&page(1, 7, 1), &zero, 8);
    let want = Verdict::TornWrite {
        sectors: gens(&[(1, 8), (0, 8)]),
    };
    assert_eq!(verify(&p, &written(1)), want);
    assert_eq!(
        verify(&p, &at(ExpectedState::InFlight { old: 0, new: 1 })),
        want
    );
}

#[test]
fn misdirected_from_another_page_and_another_file() {
    let v = verify(&page(1, 9, 2), &written(3));
    let Verdict::Misdirected { found } = v else {
        panic!("{v:?}")
    };
    assert_eq!((found.file_id, found.page_id, found.generation), (1, 9, 2));
    let v = verify(&page(2, 7, 3), &written(3));
    let Verdict::Misdirected { found } = v else {
        panic!("{v:?}")
    };
    assert_eq!((found.file_id, found.page_id), (2, 7));
}

#[test]
fn stale_foreign_and_future() {
    let v = verify(&page(1, 7, 2), &written(5));
    assert_eq!(
        v,
        Verdict::Stale {
            found: 2,
            expected: 5
        }
    );
    assert!(v.describe().contains("3 behind"), "{}", v.describe());
    let v = verify(&page_of_run(0xDEAD, 1, 7, 5), &written(5));
    assert_eq!(
        v,
        Verdict::ForeignRun {
            found_run: 0xDEAD,
            expected_run: RUN
        }
    );
    let v = verify(&page(1, 7, 9), &written(5));
    assert_eq!(
        v,
        Verdict::FutureGeneration {
            found: 9,
            max_issued: 5
        }
    );
    let v = verify(&page(1, 7, 1), &at(ExpectedState::NeverWritten));
    assert_eq!(
        v,
        Verdict::FutureGeneration {
            found: 1,
            max_issued: 0
        }
    );
}

#[test]
fn in_flight_accepts_old_or_new_but_not_a_mix() {
    let s = ExpectedState::InFlight { old: 4, new: 5 };
    assert_eq!(
        verify(&page(1, 7, 4), &at(s)),
        Verdict::Ok { generation: 4 }
    );
    assert_eq!(
        verify(&page(1, 7, 5), &at(s)),
        Verdict::Ok { generation: 5 }
    );
    assert_eq!(
        verify(&page(1, 7, 3), &at(s)),
        Verdict::Stale {
            found: 3,
            expected: 4
        }
    );
    let mixed = tear(&page(1, 7, 5), &page(1, 7, 4), 6);
    assert_eq!(verify(&mixed, &at(s)).kind(), VerdictKind::TornWrite);
}

#[test]
fn unknown_after_a_failed_write_accepts_any_self_consistent_content() {
    let s = ExpectedState::Unknown { old: 4, issued: 6 };
    for g in 4..=6 {
        assert_eq!(
            verify(&page(1, 7, g), &at(s)),
            Verdict::Ok { generation: g }
        );
    }
    let mixed = tear(&page(1, 7, 6), &page(1, 7, 4), 6);
    assert_eq!(verify(&mixed, &at(s)), Verdict::Ok { generation: 6 });
    assert_eq!(verify(&page(1, 7, 3), &at(s)).kind(), VerdictKind::Stale);
    assert_eq!(
        verify(&page(1, 7, 7), &at(s)).kind(),
        VerdictKind::FutureGeneration
    );
    let mut p = page(1, 7, 6);
    p[100] ^= 1;
    assert_eq!(
        verify(&p, &at(s)).kind(),
        VerdictKind::ChecksumMismatch,
        "damage is still damage"
    );
    let first = ExpectedState::Unknown { old: 0, issued: 1 };
    let zero = vec![0u8; PAGE_SIZE];
    assert!(verify(&zero, &at(first)).is_ok());
    assert!(verify(&tear(&page(1, 7, 1), &zero, 5), &at(first)).is_ok());
}

#[test]
fn short_buffer_is_a_short_read() {
    let p = page(1, 7, 3);
    assert_eq!(
        verify(&p[..4096], &written(3)),
        Verdict::ShortRead { bytes: 4096 }
    );
}
