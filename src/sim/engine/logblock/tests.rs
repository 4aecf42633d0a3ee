//! Log block round trips, each failure, the version field, and the block arithmetic.

#[test]
fn a_block_holding_the_logs_stamp_or_zeros_was_never_written() {
    for byte in [LOG_STAMP, 0] {
        assert_eq!(
            peek(&[byte; 512]),
            Err(LogBlockError::NeverWritten),
            "a sector of {byte:#04x}"
        );
    }
    // Any other byte is not a block of ours.
    assert_eq!(peek(&[0xC1; 512]), Err(LogBlockError::BadMagic));
}

use super::*;

fn block(lsn: u64) -> LogBlock {
    LogBlock {
        run_id: 9,
        file_id: 2,
        len: 1024,
        lsn,
        prev_lsn: 512,
        wrap: 0,
        time_us: 1,
        records: 3,
    }
}

fn want(run_id: u64, lsn: u64) -> Want {
    Want {
        run_id,
        file_id: 2,
        lsn,
        unit: 512,
    }
}

#[test]
fn round_trip_and_each_failure() {
    let mut buf = vec![0u8; 1024];
    let w = want(9, 4096);
    assert_eq!(verify(&buf, &w), Err(LogBlockError::NeverWritten));
    encode(&mut buf, &block(4096));
    assert_eq!(verify(&buf, &w), Ok(block(4096)));
    assert!(matches!(
        verify(&buf, &want(9, 8192)),
        Err(LogBlockError::WrongLsn { found: 4096, .. })
    ));
    assert!(matches!(
        verify(&buf, &want(8, 4096)),
        Err(LogBlockError::Foreign { .. })
    ));
    let mut flipped = buf.clone();
    flipped[700] ^= 0x10;
    assert!(matches!(
        verify(&flipped, &w),
        Err(LogBlockError::Checksum { .. })
    ));
    let mut garbage = buf.clone();
    garbage[0] = b'X';
    assert_eq!(verify(&garbage, &w), Err(LogBlockError::BadMagic));
}

#[test]
fn a_block_shorter_than_the_unit_is_not_accepted() {
    let mut buf = vec![0u8; 1024];
    encode(&mut buf, &block(4096));
    let w4k = Want {
        unit: 4096,
        ..want(9, 4096)
    };
    assert!(matches!(
        verify(&buf, &w4k),
        Err(LogBlockError::Checksum { .. })
    ));
}

#[test]
fn a_block_of_the_old_format_reads_as_one_record() {
    // Before records were packed, bytes 48..56 of the header were zero.
    let mut buf = vec![0u8; 1024];
    encode(
        &mut buf,
        &LogBlock {
            records: 0,
            ..block(4096)
        },
    );
    assert_eq!(verify(&buf, &want(9, 4096)).map(|b| b.records), Ok(0));
    encode(&mut buf, &block(4096));
    assert_eq!(peek(&buf).map(|b| b.records), Ok(3));
}

#[test]
fn a_whole_block_of_another_version_is_said_as_such_a_flipped_one_is_damage() {
    let mut buf = vec![0u8; 1024];
    encode(&mut buf, &block(4096));
    assert_eq!(Reader::at(&buf, OFF_VERSION).u16(), Some(1));
    buf[OFF_VERSION] = 0;
    assert!(matches!(
        verify(&buf, &want(9, 4096)),
        Err(LogBlockError::Checksum { .. })
    ));
    let crc = checksum(&buf);
    buf[OFF_CRC..OFF_CRC + 4].copy_from_slice(&crc.to_le_bytes());
    let e = verify(&buf, &want(9, 4096)).expect_err("version 0");
    assert_eq!(e, LogBlockError::Version(0));
    assert!(
        e.to_string()
            .contains("log block format version 0; this build of sqliosim reads version 1"),
        "{e}"
    );
}

proptest::proptest! {
    #[test]
    fn a_header_reads_back_as_written(run_id: u64, file_id: u32, units in 1u32..8, lsn: u64, prev_lsn: u64, wrap: u32, time_us: u64, records: u32) {
        let b = LogBlock { run_id, file_id, len: units * 512, lsn, prev_lsn, wrap, time_us, records };
        let mut buf = vec![0u8; b.len as usize];
        encode(&mut buf, &b);
        proptest::prop_assert_eq!(peek(&buf), Ok(b));
        proptest::prop_assert_eq!(verify(&buf, &Want { run_id, file_id, lsn, unit: 512 }), Ok(b));
    }
}

#[test]
fn records_take_words_and_never_more_than_a_block() {
    assert_eq!(record_room(1, MAX_LOG_BLOCK), 8);
    assert_eq!(record_room(64, MAX_LOG_BLOCK), 64);
    assert_eq!(record_room(65, MAX_LOG_BLOCK), 72);
    assert_eq!(record_room(64_000, MAX_LOG_BLOCK), MAX_LOG_BLOCK - 64);
    assert_eq!(record_room(64_000, 4096), 4096 - 64);
}

#[test]
fn block_len_is_unit_multiple() {
    assert_eq!(block_len(64, 512), 512);
    assert_eq!(block_len(512, 512), 512);
    assert_eq!(block_len(513, 512), 1024);
    assert_eq!(block_len(8192, 512), 8192);
    assert_eq!(block_len(64, 4096), 4096);
    assert_eq!(block_len(4097, 4096), 8192);
    assert_eq!(block_len(100, 0), 512, "no unit means 512");
}
