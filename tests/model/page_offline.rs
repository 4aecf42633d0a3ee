//! Verdicts without an expected state (offline scans), on blank pages, the expected image
//! kept for dumps, and the file header page.

use crate::common::*;
use sqliosim::page::{
    expected_image, verify, Expect, ExpectedState, FileHeader, FileRole, Verdict, VerdictKind,
    PAGE_SIZE,
};

fn mismatch(v: Verdict) -> sqliosim::page::BitDiff {
    match v {
        Verdict::ChecksumMismatch { diff, .. } => diff,
        other => panic!("expected a checksum mismatch, got {other:?}"),
    }
}

#[test]
fn offline_checks_what_the_page_says_about_itself() {
    let any_run = Expect::offline(None, 1, 7);
    let this_run = Expect::offline(Some(RUN), 1, 7);
    assert_eq!(
        verify(&page(1, 7, 42), &any_run),
        Verdict::Ok { generation: 42 }
    );
    assert_eq!(
        verify(&page_of_run(9, 1, 7, 2), &any_run),
        Verdict::Ok { generation: 2 }
    );
    assert_eq!(
        verify(&page_of_run(9, 1, 7, 2), &this_run).kind(),
        VerdictKind::ForeignRun
    );
    assert_eq!(
        verify(&page(1, 8, 2), &this_run).kind(),
        VerdictKind::Misdirected
    );
    let torn = tear(&page(1, 7, 5), &page(1, 7, 4), 8);
    assert_eq!(verify(&torn, &this_run).kind(), VerdictKind::TornWrite);
    let mut p = page(1, 7, 5);
    p[3000] ^= 0x10;
    assert!(mismatch(verify(&p, &this_run)).single_bit());
}

#[test]
fn file_header_round_trip_and_damage() {
    let h = FileHeader {
        run_id: RUN,
        file_id: 3,
        page_size: 8192,
        role: FileRole::Log,
        tool_version: "sqliosim 0.1.0".into(),
        created_us: 123,
        sector_size: 512,
    };
    let mut bytes = h.encode();
    assert_eq!(FileHeader::decode(&bytes), Ok(h));
    bytes[200] ^= 1;
    assert!(FileHeader::decode(&bytes).is_err());
    assert!(
        FileHeader::decode(&page(1, 0, 1)).is_err(),
        "a data page is not a file header"
    );
}

#[test]
fn a_flipped_bit_in_a_blank_page_is_diffed_against_zeros() {
    let mut p = vec![0u8; PAGE_SIZE];
    p[4100] = 0x08;
    let d = mismatch(verify(&p, &at(ExpectedState::NeverWritten)));
    assert!(d.single_bit());
    assert_eq!(d.first_bad_byte, Some(4100));
    assert!(mismatch(verify(&p, &Expect::offline(None, 1, 7))).single_bit());
    // Where a write is expected, the same bytes are not a page of ours.
    assert_eq!(verify(&p, &written(2)).kind(), VerdictKind::Garbage);
}

#[test]
fn expected_image_for_dumps() {
    let img = expected_image(&page(1, 7, 2), &written(5));
    assert_eq!(
        verify(&img, &written(5)),
        Verdict::Ok { generation: 5 },
        "stale: the image is generation 5"
    );
    let good = page(1, 7, 5);
    let mut bad = good.clone();
    bad[300] ^= 1;
    assert_eq!(
        expected_image(&bad, &written(5)),
        good,
        "same write: header fields kept"
    );
    let blank = expected_image(&good, &at(ExpectedState::NeverWritten));
    assert!(blank.iter().all(|&b| b == 0));
    let offline = expected_image(&bad, &Expect::offline(Some(RUN), 1, 7));
    assert_eq!(offline, good);
}
