//! The service-backed storage on real files in the target directory (ext4 here, so O_DIRECT is
//! enforced), for both ring kinds: bytes written through the I/O service read back the same
//! through a plain file, the depth caps what is in flight, reads stop at end of file as
//! `FileStorage`'s do, errors come back as the same `io::Error`s, and the thread ends with its
//! last handle.

use std::fs::File;
use std::io::Read;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sqliosim::io::aio::RingKind;
use sqliosim::io::{
    AlignedBuf, Backend, DirectBackend, IoService, OpenOptions, ServiceBackend, Storage,
};

const KINDS: [RingKind; 2] = [RingKind::Uring, RingKind::Psync];

fn dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir in the target directory")
}

fn backend(kind: RingKind, depth: usize) -> ServiceBackend {
    let b = ServiceBackend::start(kind, depth, false).expect("start the I/O service");
    assert_eq!(b.service().kind(), kind, "{kind:?} is available here");
    b
}

fn filled(len: usize, seed: u8) -> AlignedBuf {
    let mut buf = AlignedBuf::new(len).expect("aligned buffer");
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(31).wrapping_add(seed);
    }
    buf
}

/// A file of `len` bytes of `byte` in `d`.
fn file_of(d: &tempfile::TempDir, name: &str, len: usize, byte: u8) -> PathBuf {
    let path = d.path().join(name);
    std::fs::write(&path, vec![byte; len]).expect("write the test file");
    path
}

fn on_disk(path: &Path) -> Vec<u8> {
    let mut v = Vec::new();
    File::open(path)
        .expect("open plainly")
        .read_to_end(&mut v)
        .expect("read plainly");
    v
}

#[test]
fn single_and_vectored_transfers_round_trip_for_both_kinds() {
    for kind in KINDS {
        let d = dir();
        let path = d.path().join("rt.mdx");
        let b = backend(kind, 4);
        let st = b.open(&path, OpenOptions::default()).expect("open");
        let one = filled(8192, 1);
        let (p1, p2, p3) = (filled(8192, 2), filled(8192, 3), filled(8192, 4));
        st.write_at(&one, 0).expect("write");
        st.write_vectored_at(&[&p1, &p2, &p3], 8192)
            .expect("gather write");
        let disk = on_disk(&path);
        assert_eq!(disk.len(), 4 * 8192, "{kind:?}");
        assert_eq!(&disk[..8192], &one[..], "{kind:?}");
        assert_eq!(&disk[8192..16384], &p1[..], "{kind:?}");
        assert_eq!(&disk[24576..], &p3[..], "{kind:?}");
        let mut back = AlignedBuf::new(8192).expect("buffer");
        assert_eq!(st.read_at(&mut back, 16384).expect("read"), 8192);
        assert_eq!(&back[..], &p2[..], "{kind:?}");
        let (mut a, mut c) = (
            AlignedBuf::new(8192).expect("a"),
            AlignedBuf::new(16384).expect("c"),
        );
        let n = st
            .read_vectored_at(&mut [&mut a, &mut c], 0)
            .expect("scatter read");
        assert_eq!(n, 24576);
        assert_eq!(&a[..], &one[..], "{kind:?}");
        assert_eq!(&c[..8192], &p1[..], "{kind:?}");
        assert_eq!(&c[8192..], &p2[..], "{kind:?}");
    }
}

/// Each caller thread writes its own pages, reads them back and checks them, many times.
fn hammer(st: &Arc<dyn Storage>, caller: u8, rounds: usize) {
    for r in 0..rounds {
        let seed = caller.wrapping_mul(17).wrapping_add(r as u8);
        let page = u64::from(caller) * 2;
        let (a, b) = (filled(8192, seed), filled(8192, seed ^ 0x55));
        st.write_vectored_at(&[&a, &b], page * 8192)
            .expect("gather write");
        let mut back = AlignedBuf::new(16384).expect("buffer");
        assert_eq!(st.read_at(&mut back, page * 8192).expect("read"), 16384);
        assert_eq!(&back[..8192], &a[..], "caller {caller} round {r}");
        assert_eq!(&back[8192..], &b[..], "caller {caller} round {r}");
    }
}

#[test]
fn many_callers_never_put_more_than_the_depth_in_flight() {
    const CALLERS: u8 = 8;
    const DEPTH: usize = 2;
    for kind in KINDS {
        let d = dir();
        let path = d.path().join("many.mdx");
        let b = backend(kind, DEPTH);
        let st = b.open(&path, OpenOptions::default()).expect("open");
        std::thread::scope(|s| {
            for caller in 0..CALLERS {
                let st = Arc::clone(&st);
                s.spawn(move || hammer(&st, caller, 200));
            }
        });
        let hw = b.service().high_water();
        assert!(
            hw <= DEPTH,
            "{kind:?}: {hw} requests in flight, depth {DEPTH}"
        );
        assert_eq!(hw, DEPTH, "{kind:?}: 8 busy callers fill a depth of 2");
        let disk = on_disk(&path);
        assert_eq!(disk.len(), usize::from(CALLERS) * 16384);
        for caller in 0..CALLERS {
            let seed = caller.wrapping_mul(17).wrapping_add(199);
            let at = usize::from(caller) * 16384;
            assert_eq!(&disk[at..at + 8192], &filled(8192, seed)[..], "{kind:?}");
        }
    }
}

#[test]
fn reads_past_the_end_return_what_is_there_like_file_storage() {
    for kind in KINDS {
        let d = dir();
        let aligned = file_of(&d, "aligned.mdx", 12288, 5);
        let unaligned = file_of(&d, "unaligned.mdx", 10000, 6);
        let b = backend(kind, 4);
        for (path, len) in [(&aligned, 12288), (&unaligned, 10000)] {
            let ours = b.open(path, OpenOptions::default()).expect("open");
            let theirs = DirectBackend
                .open(path, OpenOptions::default())
                .expect("open");
            let mut buf = AlignedBuf::new(16384).expect("buffer");
            let n = ours.read_at(&mut buf, 0).expect("read to the end");
            assert_eq!(n, len, "{kind:?} {}", path.display());
            assert_eq!(theirs.read_at(&mut buf, 0).expect("read"), n);
            let mut bufs = [
                AlignedBuf::new(8192).expect("a"),
                AlignedBuf::new(8192).expect("b"),
            ];
            let [x, y] = &mut bufs;
            let n = ours.read_vectored_at(&mut [x, y], 0).expect("scatter read");
            assert_eq!(n, len, "{kind:?} vectored {}", path.display());
            assert_eq!(ours.read_at(&mut buf, 16384).expect("read past the end"), 0);
        }
    }
}

#[test]
fn errors_come_back_as_the_same_io_errors() {
    for kind in KINDS {
        let d = dir();
        let path = file_of(&d, "err.mdx", 16384, 0);
        let b = backend(kind, 2);
        // A write to a file opened read-only: EBADF, as pwrite reports it.
        let ro = File::open(&path).expect("open read-only");
        let page = filled(8192, 9);
        let e = b
            .service()
            .write(ro.as_fd(), &page, 0)
            .expect_err("read-only");
        assert_eq!(e.raw_os_error(), Some(libc::EBADF), "{kind:?}: {e}");
        // A misaligned O_DIRECT request: EINVAL from both storages, the same error.
        let ours = b.open(&path, OpenOptions::default()).expect("open");
        let theirs = DirectBackend
            .open(&path, OpenOptions::default())
            .expect("open");
        let e = ours.write_at(&page[..4096], 100).expect_err("misaligned");
        let f = theirs.write_at(&page[..4096], 100).expect_err("misaligned");
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{kind:?}: {e}");
        assert_eq!(e.kind(), f.kind());
        let mut buf = AlignedBuf::new(8192).expect("buffer");
        let e = ours
            .read_at(&mut buf[1..4097], 0)
            .expect_err("misaligned memory");
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{kind:?}: {e}");
        // The service still works after errors.
        ours.write_at(&page, 8192).expect("aligned write");
        assert_eq!(&on_disk(&path)[8192..], &page[..]);
    }
}

#[test]
fn dropping_the_last_handle_ends_the_service_thread() {
    for kind in KINDS {
        let service = IoService::start(kind, 4).expect("start");
        let watch = service.watch();
        assert!(!watch.ended());
        drop(service);
        assert!(watch.ended(), "{kind:?}: the thread was joined");
        // Through a backend and a storage: the thread lives until the last of them drops.
        let d = dir();
        let b = backend(kind, 4);
        let watch = b.service().watch();
        let st = b
            .open(&d.path().join("drop.mdx"), OpenOptions::default())
            .expect("open");
        st.write_at(&filled(8192, 1), 0).expect("write");
        drop(b);
        assert!(
            !watch.ended(),
            "{kind:?}: the storage still holds the service"
        );
        st.write_at(&filled(8192, 2), 8192)
            .expect("write after the backend dropped");
        drop(st);
        assert!(watch.ended(), "{kind:?}: the last handle joined the thread");
    }
}

/// With [`ServiceBackend::with_own_sync`], a synchronous read or write is made on the caller's
/// thread: the service never sees it (its high-water mark stays 0), and the bytes are the same;
/// a posted request still goes through the service.
#[test]
fn synchronous_requests_on_their_own_threads_bypass_the_service_and_posted_ones_do_not() {
    use sqliosim::io::{BufPool, Completions, PostOp};
    for kind in KINDS {
        let d = dir();
        let path = d.path().join("own.mdx");
        let b = backend(kind, 4).with_own_sync(true);
        let st = b.open(&path, OpenOptions::default()).expect("open");
        let one = filled(8192, 9);
        st.write_at(&one, 8192).expect("write");
        let (p1, p2) = (filled(8192, 10), filled(8192, 11));
        st.write_vectored_at(&[&p1, &p2], 16384)
            .expect("gather write");
        let mut back = AlignedBuf::new(8192).expect("buffer");
        assert_eq!(st.read_at(&mut back, 8192).expect("read"), 8192);
        assert_eq!(&back[..], &one[..], "{kind:?}");
        let (mut a, mut c) = (
            AlignedBuf::new(8192).expect("a"),
            AlignedBuf::new(8192).expect("c"),
        );
        let n = st
            .read_vectored_at(&mut [&mut a, &mut c], 16384)
            .expect("scatter read");
        assert_eq!(n, 16384, "{kind:?}");
        assert_eq!((&a[..], &c[..]), (&p1[..], &p2[..]), "{kind:?}");
        assert_eq!(
            b.service().high_water(),
            0,
            "{kind:?}: a synchronous request went through the service"
        );
        let pool = BufPool::new(1, 8192).expect("pool");
        let done = Arc::new(Completions::default());
        let frames = pool.take_many(1).expect("a frame");
        st.post(PostOp::read(8192, frames, 8192), &done, 1);
        let got = done.wait();
        assert_eq!(got.result.expect("posted read"), 8192, "{kind:?}");
        assert_eq!(&got.frames[0][..], &one[..], "{kind:?}");
        assert_eq!(
            b.service().high_water(),
            1,
            "{kind:?}: the posted read went through the service"
        );
    }
}
