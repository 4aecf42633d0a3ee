//! Journal round trips and replay rules.

use super::*;
use crate::page::FileRole;

fn files() -> Vec<JournalFile> {
    vec![
        JournalFile {
            file_id: 0,
            role: FileRole::Data,
            path: "/d/a.mdx".into(),
        },
        JournalFile {
            file_id: 1,
            role: FileRole::Log,
            path: "/d/a.ldx".into(),
        },
    ]
}

#[test]
fn replay_keeps_the_highest_durable_generation_and_honours_resizes() {
    let recs = vec![
        Record::Start {
            run_id: 5,
            files: files(),
        },
        Record::Durable {
            file_id: 0,
            pages: vec![(3, 2), (9, 1)],
        },
        Record::Durable {
            file_id: 0,
            pages: vec![(3, 4)],
        },
        Record::Log {
            file_id: 1,
            last_block: 512,
            durable_end: 1024,
        },
        Record::Resize {
            file_id: 0,
            pages: 5,
        },
    ];
    let mut bytes: Vec<u8> = recs.iter().flat_map(Record::encode).collect();
    let (decoded, torn) = decode_all(&bytes);
    assert_eq!((decoded.clone(), torn), (recs, false));
    let st = JournalState::replay(&decoded, false);
    assert_eq!(st.run_id, 5);
    assert_eq!(st.durable_gen(0, 3), 4);
    assert_eq!(st.durable_gen(0, 9), 0, "page 9 went with the shrink");
    assert_eq!(st.log[1], Some((512, 1024)));
    assert!(!st.clean);
    // A torn tail is dropped, not fatal.
    bytes.extend_from_slice(&Record::End.encode()[..10]);
    let (again, torn) = decode_all(&bytes);
    assert!(torn);
    assert_eq!(again.len(), 5);
}

#[test]
fn a_damaged_record_ends_the_replay() {
    let mut bytes = Record::Start {
        run_id: 1,
        files: files(),
    }
    .encode();
    let mut d = Record::Durable {
        file_id: 0,
        pages: vec![(1, 1)],
    }
    .encode();
    let last = d.len() - 1;
    d[last] ^= 1;
    bytes.extend_from_slice(&d);
    let (recs, torn) = decode_all(&bytes);
    assert_eq!(recs.len(), 1);
    assert!(torn);
}
