//! Round trips through both back ends on a real file in the build's temporary directory.

use super::*;

fn files(dir: &tempfile::TempDir) -> Arc<[File]> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(dir.path().join("engine.dat"))
        .expect("create test file");
    f.set_len(1 << 20).expect("size test file");
    Arc::from(vec![f])
}

fn round_trip(kind: EngineKind, depth: u32) {
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let cfg = EngineConfig {
        kind,
        depth,
        slot_len: 8192,
        submit_batch: 1,
    };
    let mut engine = Engine::new(&cfg, files(&dir)).expect("engine");
    for slot in 0..depth {
        engine.buffer_mut(slot).fill(slot as u8 + 1);
        let op = Op {
            kind: OpKind::Write,
            file: 0,
            offset: slot as u64 * 8192,
            slot,
            len: 8192,
            user_data: 100 + slot as u64,
        };
        engine.submit(op).expect("submit write");
    }
    let mut out = Vec::new();
    engine.drain(&mut out).expect("drain writes");
    assert_eq!(out.len(), depth as usize);
    assert!(out.iter().all(|c| c.result == Ok(8192)), "{out:?}");
    for slot in 0..depth {
        engine.buffer_mut(slot).fill(0);
        let other = (slot + 1) % depth;
        let op = Op {
            kind: OpKind::Read,
            file: 0,
            offset: other as u64 * 8192,
            slot,
            len: 8192,
            user_data: slot as u64,
        };
        engine.submit(op).expect("submit read");
    }
    out.clear();
    engine.drain(&mut out).expect("drain reads");
    for slot in 0..depth {
        let other = (slot + 1) % depth;
        assert!(
            engine.buffer(slot).iter().all(|&b| b == other as u8 + 1),
            "slot {slot}"
        );
    }
}

#[test]
fn uring_round_trip_depth_4() {
    round_trip(EngineKind::Uring, 4);
}

#[test]
fn psync_round_trip_inline() {
    round_trip(EngineKind::Psync, 1);
}

#[test]
fn psync_round_trip_pool() {
    round_trip(EngineKind::Psync, 3);
}

#[test]
fn errors_come_back_as_errno() {
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let path = dir.path().join("ro.dat");
    std::fs::write(&path, vec![0u8; 8192]).expect("write");
    let ro = File::open(&path).expect("open");
    for kind in [EngineKind::Uring, EngineKind::Psync] {
        let cfg = EngineConfig {
            kind,
            depth: 1,
            slot_len: 4096,
            submit_batch: 1,
        };
        let mut engine =
            Engine::new(&cfg, Arc::from(vec![ro.try_clone().expect("dup")])).expect("engine");
        let op = Op {
            kind: OpKind::Write,
            file: 0,
            offset: 0,
            slot: 0,
            len: 4096,
            user_data: 7,
        };
        engine.submit(op).expect("submit");
        let mut out = Vec::new();
        engine.drain(&mut out).expect("drain");
        assert_eq!(
            out,
            vec![Completion {
                user_data: 7,
                result: Err(libc::EBADF)
            }]
        );
    }
}
