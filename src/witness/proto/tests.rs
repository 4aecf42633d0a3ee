//! The wire protocol's round trips and refusals: every message through unchanged, a wrong key
//! or a changed byte, a frame over the limit, a host name with an escape, a payload cut short.

use super::*;

fn round(key: &Key, m: &Msg) -> Result<Msg, ProtoError> {
    let mut buf = Vec::new();
    write_msg(&mut buf, key, m).expect("write");
    read_msg(&mut buf.as_slice(), key)
}

/// A listing of one run, every field set.
fn listed() -> Msg {
    Msg::Listed {
        runs: vec![RunInfo {
            run_id: 1,
            host: "h".into(),
            last_seq: 2,
            bytes: 3,
            gaps: 4,
            time_us: 5,
        }],
    }
}

#[test]
fn every_message_goes_through_unchanged() {
    let key = Key::from_bytes(b"secret\n");
    for m in [
        Msg::Hello {
            run_id: 7,
            host: "db01".into(),
        },
        Msg::Batch {
            run_id: 7,
            seq: 9,
            flags: BASE | GAP,
            data: vec![1, 2, 3],
        },
        Msg::Fetch { run_id: 7 },
        Msg::List,
        Msg::Ack { seq: 9 },
        Msg::Data { data: vec![0; 100] },
        listed(),
        Msg::Error { text: "no".into() },
    ] {
        assert_eq!(round(&key, &m).expect("read"), m);
    }
}

#[test]
fn a_wrong_key_or_a_changed_byte_is_refused() {
    let m = Msg::Ack { seq: 1 };
    let mut buf = Vec::new();
    write_msg(&mut buf, &Key::from_bytes(b"a"), &m).expect("write");
    assert!(matches!(
        read_msg(&mut buf.as_slice(), &Key::from_bytes(b"b")),
        Err(ProtoError::BadMac)
    ));
    let last = buf.len() - 1;
    buf[last] ^= 1;
    assert!(matches!(
        read_msg(&mut buf.as_slice(), &Key::from_bytes(b"a")),
        Err(ProtoError::BadMac)
    ));
}

#[test]
fn a_frame_over_the_limit_is_refused_before_it_is_read() {
    let mut buf = ((MAX_FRAME + 1) as u32).to_le_bytes().to_vec();
    buf.extend_from_slice(&[0; 16]);
    assert!(matches!(
        read_msg(&mut buf.as_slice(), &Key::none()),
        Err(ProtoError::TooBig(_))
    ));
}

#[test]
fn a_host_name_with_an_escape_is_malformed() {
    let m = Msg::Hello {
        run_id: 1,
        host: "a\x1b[2J".into(),
    };
    assert!(matches!(
        round(&Key::none(), &m),
        Err(ProtoError::Malformed(_))
    ));
}

#[test]
fn a_payload_cut_short_is_malformed_never_a_panic() {
    for m in [
        Msg::Hello {
            run_id: 7,
            host: "db01".into(),
        },
        Msg::Fetch { run_id: 7 },
        Msg::Ack { seq: 9 },
        listed(),
        Msg::Error { text: "no".into() },
    ] {
        let whole = encode(&m);
        for cut in 0..whole.len() {
            assert!(
                matches!(
                    decode(&whole[..cut]),
                    Err(ProtoError::Malformed("cut short"))
                ),
                "{m:?} cut at {cut}"
            );
        }
    }
}
