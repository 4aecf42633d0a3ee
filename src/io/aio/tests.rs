//! Round trips through every back end on a real file in the build's temporary directory.

use super::*;

use std::fs::File;

fn files(dir: &tempfile::TempDir) -> Arc<[FileStorage]> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(dir.path().join("ring.dat"))
        .expect("create test file");
    f.set_len(1 << 20).expect("size test file");
    Arc::from(vec![FileStorage::new(f, dir.path().join("ring.dat"))])
}

fn round_trip(kind: RingKind, depth: u32) {
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let cfg = RingConfig {
        kind,
        depth,
        slot_len: 8192,
        submit_batch: 1,
    };
    let mut ring = Ring::new(&cfg, files(&dir)).expect("ring");
    if kind == RingKind::Kaio {
        assert_eq!(ring.kind(), kind, "kernel AIO fell back");
    }
    for slot in 0..depth {
        ring.buffer_mut(slot).fill(slot as u8 + 1);
        let op = Op {
            kind: Direction::Write,
            file: 0,
            offset: slot as u64 * 8192,
            slot,
            len: 8192,
            user_data: 100 + slot as u64,
        };
        ring.submit(op).expect("submit write");
    }
    let mut out = Vec::new();
    ring.drain(&mut out).expect("drain writes");
    assert_eq!(out.len(), depth as usize);
    assert!(out.iter().all(|c| c.result == Ok(8192)), "{out:?}");
    for slot in 0..depth {
        ring.buffer_mut(slot).fill(0);
        let other = (slot + 1) % depth;
        let op = Op {
            kind: Direction::Read,
            file: 0,
            offset: other as u64 * 8192,
            slot,
            len: 8192,
            user_data: slot as u64,
        };
        ring.submit(op).expect("submit read");
    }
    out.clear();
    ring.drain(&mut out).expect("drain reads");
    for slot in 0..depth {
        let other = (slot + 1) % depth;
        assert!(
            ring.buffer(slot).iter().all(|&b| b == other as u8 + 1),
            "slot {slot}"
        );
    }
}

#[test]
fn uring_round_trip_depth_4() {
    round_trip(RingKind::Uring, 4);
}

#[test]
fn psync_round_trip_inline() {
    round_trip(RingKind::Psync, 1);
}

#[test]
fn psync_round_trip_pool() {
    round_trip(RingKind::Psync, 3);
}

#[test]
fn kaio_round_trip_inline() {
    round_trip(RingKind::Kaio, 1);
}

#[test]
fn kaio_round_trip_depth_4() {
    round_trip(RingKind::Kaio, 4);
}

#[test]
fn errors_come_back_as_errno() {
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let path = dir.path().join("ro.dat");
    std::fs::write(&path, vec![0u8; 8192]).expect("write");
    let ro = File::open(&path).expect("open");
    for kind in [RingKind::Uring, RingKind::Psync, RingKind::Kaio] {
        let cfg = RingConfig {
            kind,
            depth: 1,
            slot_len: 4096,
            submit_batch: 1,
        };
        let mut ring = Ring::new(
            &cfg,
            Arc::from(vec![FileStorage::new(
                ro.try_clone().expect("dup"),
                path.clone(),
            )]),
        )
        .expect("ring");
        let op = Op {
            kind: Direction::Write,
            file: 0,
            offset: 0,
            slot: 0,
            len: 4096,
            user_data: 7,
        };
        ring.submit(op).expect("submit");
        let mut out = Vec::new();
        ring.drain(&mut out).expect("drain");
        assert_eq!(
            out,
            vec![RingCompletion {
                user_data: 7,
                result: Err(libc::EBADF)
            }]
        );
    }
}

/// Writes two pages from caller memory (one buffer, then a two-iovec list) and reads them
/// back the same two ways, then reads an eventfd without an offset.
fn external_round_trip(kind: RingKind) {
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let cfg = RingConfig {
        kind,
        depth: 2,
        slot_len: 0,
        submit_batch: 1,
    };
    let files = files(&dir);
    let fd = std::os::fd::AsRawFd::as_raw_fd(&files[0]);
    let mut ring = Ring::new(&cfg, Arc::from(Vec::new())).expect("ring");
    let mut one = vec![7u8; 4096];
    let (mut a, mut b) = (vec![8u8; 4096], vec![9u8; 4096]);
    let iov = |a: &mut [u8], b: &mut [u8]| {
        [a, b].map(|s| libc::iovec {
            iov_base: s.as_mut_ptr().cast(),
            iov_len: s.len(),
        })
    };
    let mut out = Vec::new();
    let mut run = |ring: &mut Ring, op: ExtOp| {
        // SAFETY: the memory and the file outlive the drain below.
        unsafe { ring.submit_external(op) }.expect("submit");
        out.clear();
        ring.drain(&mut out).expect("drain");
        out[0].result
    };
    let buf = |v: &mut Vec<u8>| ExtMem::Buf {
        ptr: v.as_mut_ptr(),
        len: v.len() as u32,
    };
    let op = |kind, offset, mem| ExtOp {
        kind,
        fd,
        offset,
        mem,
        user_data: 1,
    };
    assert_eq!(
        run(&mut ring, op(Direction::Write, 0, buf(&mut one))),
        Ok(4096)
    );
    let list = iov(&mut a, &mut b);
    let mem = ExtMem::Iov {
        iov: list.as_ptr(),
        count: 2,
    };
    assert_eq!(run(&mut ring, op(Direction::Write, 4096, mem)), Ok(8192));
    let disk = std::fs::read(dir.path().join("ring.dat")).expect("read back");
    assert!(disk[..4096].iter().all(|&x| x == 7));
    assert!(disk[4096..8192].iter().all(|&x| x == 8));
    assert!(disk[8192..12288].iter().all(|&x| x == 9));
    let (mut a, mut b) = (vec![0u8; 4096], vec![0u8; 4096]);
    let list = iov(&mut a, &mut b);
    let mem = ExtMem::Iov {
        iov: list.as_ptr(),
        count: 2,
    };
    assert_eq!(run(&mut ring, op(Direction::Read, 0, mem)), Ok(8192));
    assert!(a.iter().all(|&x| x == 7) && b.iter().all(|&x| x == 8));
    let mut one = vec![0u8; 4096];
    assert_eq!(
        run(&mut ring, op(Direction::Read, 8192, buf(&mut one))),
        Ok(4096)
    );
    assert!(one.iter().all(|&x| x == 9));
    let efd = rustix::event::eventfd(3, rustix::event::EventfdFlags::CLOEXEC).expect("eventfd");
    let mut count = vec![0u8; 8];
    let mem = buf(&mut count);
    let read = ExtOp {
        fd: std::os::fd::AsRawFd::as_raw_fd(&efd),
        ..op(Direction::Read, NO_OFFSET, mem)
    };
    assert_eq!(run(&mut ring, read), Ok(8));
    assert_eq!(
        u64::from_ne_bytes(count[..].try_into().expect("8 bytes")),
        3
    );
}

#[test]
fn uring_carries_caller_memory() {
    external_round_trip(RingKind::Uring);
}

#[test]
fn psync_carries_caller_memory() {
    external_round_trip(RingKind::Psync);
}

#[test]
fn kaio_carries_caller_memory() {
    external_round_trip(RingKind::Kaio);
}

/// Kernel AIO on an O_DIRECT file (where it is asynchronous): a misaligned read comes back
/// as EINVAL in its completion, beside an aligned vectored write and read that go through;
/// and the ring really is kernel AIO (no fallback here).
#[test]
fn kaio_direct_io_completes_and_reports_einval() {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let path = dir.path().join("direct.dat");
    std::fs::write(&path, vec![0u8; 1 << 16]).expect("write");
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path)
    else {
        // The build directory's filesystem refuses O_DIRECT: nothing to test here.
        return;
    };
    let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
    let cfg = RingConfig {
        kind: RingKind::Kaio,
        depth: 3,
        slot_len: 0,
        submit_batch: 4,
    };
    let mut ring = Ring::new(&cfg, Arc::from(Vec::new())).expect("ring");
    assert_eq!(ring.kind(), RingKind::Kaio);
    let mut page = AlignedBuffers::new(3, 4096).expect("buffers");
    page.slot_mut(0).fill(5);
    page.slot_mut(1).fill(6);
    let iov = [0, 1].map(|s| libc::iovec {
        iov_base: page.slot_ptr(s).cast(),
        iov_len: 4096,
    });
    let op = |kind, offset, mem, user_data| ExtOp {
        kind,
        fd,
        offset,
        mem,
        user_data,
    };
    let list = ExtMem::Iov {
        iov: iov.as_ptr(),
        count: 2,
    };
    let odd = ExtMem::Buf {
        ptr: page.slot_ptr(2),
        len: 100,
    };
    let mut out = Vec::new();
    // SAFETY: the buffers, the iovec array and the file outlive the drains below.
    unsafe {
        ring.submit_external(op(Direction::Write, 8192, list, 1))
            .expect("submit");
        ring.submit_external(op(Direction::Read, 0, odd, 2))
            .expect("submit");
    }
    ring.drain(&mut out).expect("drain");
    out.sort_by_key(|c| c.user_data);
    assert_eq!(out[0].result, Ok(8192));
    assert_eq!(out[1].result, Err(libc::EINVAL));
    page.slot_mut(0).fill(0);
    page.slot_mut(1).fill(0);
    out.clear();
    // SAFETY: as above.
    unsafe { ring.submit_external(op(Direction::Read, 8192, list, 3)) }.expect("submit");
    ring.drain(&mut out).expect("drain");
    assert_eq!(out[0].result, Ok(8192));
    assert!(page.slot(0).iter().all(|&b| b == 5) && page.slot(1).iter().all(|&b| b == 6));
}
