//! The direct and buffered backends on a real file on disk (the target directory, on ext4
//! here; never /dev/shm, where O_DIRECT is not enforced).

use std::path::{Path, PathBuf};

use sqliosim::io::{
    AlignedBuf, Backend, BufPool, BufferedBackend, DirectBackend, OpenOptions, Storage,
};
use sqliosim::page::{
    stamp_page, verify, ActorKind, Expect, ExpectedState, PageStamp, Verdict, PAGE_SIZE,
};

fn dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir in the target directory")
}

fn open(path: &Path) -> std::sync::Arc<dyn Storage> {
    DirectBackend::new()
        .open(path, OpenOptions::default())
        .expect("open O_DIRECT")
}

fn stamped(page_id: u64, generation: u64) -> AlignedBuf {
    let mut buf = AlignedBuf::new(PAGE_SIZE).expect("mmap");
    let st = PageStamp {
        run_id: 77,
        file_id: 1,
        page_id,
        generation,
        lsn: 1,
        writer_kind: ActorKind::Bench,
        writer_id: 0,
        write_time_us: 2,
    };
    stamp_page(&mut buf, &st);
    buf
}

fn written(page_id: u64, generation: u64) -> Expect {
    Expect::known(77, 1, page_id, ExpectedState::Written { generation })
}

#[test]
fn aligned_round_trip_through_o_direct() {
    let d = dir();
    let path = d.path().join("rt.mdx");
    let st = open(&path);
    st.write_at(&stamped(3, 5), 3 * 8192).expect("write");
    st.sync_data().expect("fdatasync");
    let mut back = AlignedBuf::new(PAGE_SIZE).expect("mmap");
    assert_eq!(st.read_at(&mut back, 3 * 8192).expect("read"), PAGE_SIZE);
    assert_eq!(verify(&back, &written(3, 5)), Verdict::Ok { generation: 5 });
    assert_eq!(st.len().expect("len"), 4 * 8192);
    assert_eq!(st.path(), path.as_path());
}

#[test]
fn vectored_io_from_a_buffer_pool() {
    let d = dir();
    let st = open(&d.path().join("vec.mdx"));
    let pool = BufPool::new(8, PAGE_SIZE).expect("pool");
    let mut frames = pool.take_many(4).expect("frames");
    for (i, f) in frames.iter_mut().enumerate() {
        f.copy_from_slice(&stamped(10 + i as u64, 1));
    }
    let bufs: Vec<&[u8]> = frames.iter().map(|f| &f[..]).collect();
    st.write_vectored_at(&bufs, 10 * 8192).expect("pwritev");
    let mut back = pool.take_many(4).expect("frames");
    let mut slices: Vec<&mut [u8]> = back.iter_mut().map(|f| &mut f[..]).collect();
    assert_eq!(
        st.read_vectored_at(&mut slices, 10 * 8192).expect("preadv"),
        4 * PAGE_SIZE
    );
    for (i, f) in back.iter().enumerate() {
        let page = 10 + i as u64;
        assert_eq!(
            verify(f, &written(page, 1)),
            Verdict::Ok { generation: 1 },
            "page {page}"
        );
    }
}

#[test]
fn allocate_set_len_and_read_past_the_end() {
    let d = dir();
    let st = open(&d.path().join("len.mdx"));
    assert!(st.is_empty().expect("len"));
    st.allocate(16 * 8192).expect("fallocate");
    assert_eq!(st.len().expect("len"), 16 * 8192);
    let mut buf = AlignedBuf::new(PAGE_SIZE).expect("mmap");
    buf.fill(0xEE);
    assert_eq!(st.read_at(&mut buf, 5 * 8192).expect("read"), PAGE_SIZE);
    let never = Expect::known(77, 1, 5, ExpectedState::NeverWritten);
    assert_eq!(
        verify(&buf, &never),
        Verdict::Ok { generation: 0 },
        "allocated reads as zeros"
    );
    st.set_len(2 * 8192).expect("truncate");
    assert_eq!(st.len().expect("len"), 2 * 8192);
    assert_eq!(st.read_at(&mut buf, 2 * 8192).expect("read at end"), 0);
}

#[test]
fn misaligned_buffer_is_an_einval_error_not_a_panic() {
    let d = dir();
    let st = open(&d.path().join("mis.mdx"));
    let mut big = AlignedBuf::new(2 * PAGE_SIZE).expect("mmap");
    let err = st
        .write_at(&big[100..100 + PAGE_SIZE], 0)
        .expect_err("misaligned write");
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    // A read of an allocated but unwritten extent is served without a transfer (and without
    // an alignment check), so write real data first.
    st.write_at(&stamped(0, 1), 0).expect("aligned write");
    let err = st
        .read_at(&mut big[1..1 + PAGE_SIZE], 0)
        .expect_err("misaligned read");
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    let err = st
        .write_at(&big[..PAGE_SIZE], 100)
        .expect_err("misaligned offset");
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn direct_io_info_on_the_target_directory() {
    let d = dir();
    let info = DirectBackend::new().direct_io_info(&d.path().join("not-yet-created.mdx"));
    let fs = std::process::Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(d.path())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if fs == "ext2/ext3" || info.filesystem == "ext4" {
        assert_eq!(info.filesystem, "ext4");
        assert!(info.honoured, "{info:?}");
        assert!(
            info.mem_align
                .is_some_and(|a| a.is_power_of_two() && a <= 4096),
            "{info:?}"
        );
        assert!(info.offset_align.is_some(), "{info:?}");
        let file = d.path().join("exists.mdx");
        drop(open(&file));
        let on_file = DirectBackend::new().direct_io_info(&file);
        assert_eq!(on_file, info, "a file and its directory agree");
    }
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir() {
        let info = DirectBackend::new().direct_io_info(&shm);
        assert_eq!(info.filesystem, "tmpfs");
        assert!(
            !info.honoured,
            "tmpfs accepts O_DIRECT without honouring it: {info:?}"
        );
    }
}

#[test]
fn open_errors_name_the_path() {
    let d = dir();
    let missing = d.path().join("no/such/dir/x.mdx");
    let err = DirectBackend::new()
        .open(&missing, OpenOptions::default())
        .expect_err("missing directory");
    assert!(err.to_string().contains("no/such/dir/x.mdx"), "{err}");
    let backend = DirectBackend::new();
    let path = d.path().join("rm.mdx");
    drop(open(&path));
    assert!(backend.exists(&path));
    backend.remove(&path).expect("remove");
    backend
        .remove(&path)
        .expect("removing a missing file is fine");
    assert!(!backend.exists(&path));
}

#[test]
fn buffered_backend_round_trip_accepts_unaligned_buffers() {
    let d = dir();
    let opts = OpenOptions {
        write_through: true,
        ..OpenOptions::default()
    };
    let st = BufferedBackend::new()
        .open(&d.path().join("buf.mdx"), opts)
        .expect("open");
    let mut v = vec![0u8; PAGE_SIZE + 1];
    v[1..].copy_from_slice(&stamped(0, 9));
    st.write_at(&v[1..], 0).expect("buffered write");
    let mut back = vec![0u8; PAGE_SIZE + 3];
    assert_eq!(st.read_at(&mut back[3..], 0).expect("read"), PAGE_SIZE);
    assert_eq!(
        verify(&back[3..], &written(0, 9)),
        Verdict::Ok { generation: 9 }
    );
}

#[test]
fn direct_read_across_an_unaligned_end_of_file_returns_what_exists() {
    let d = dir();
    let path = d.path().join("eof.mdx");
    std::fs::write(&path, vec![7u8; 8192 + 100]).expect("buffered write");
    let st = open(&path);
    let mut buf = AlignedBuf::new(PAGE_SIZE).expect("mmap");
    let n = st.read_at(&mut buf, 8192).expect("read at the tail");
    assert_eq!(n, 100, "the bytes up to the end of file");
    assert!(buf[..100].iter().all(|&b| b == 7));
    assert_eq!(st.read_at(&mut buf, 0).expect("read"), PAGE_SIZE);
}
