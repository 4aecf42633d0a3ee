//! Creating, recognising, extending and refusing test files.

use super::*;
use crate::bench::stamp;
use std::os::unix::fs::FileExt;

static GO: AtomicBool = AtomicBool::new(false);
const NEW: Access = Access {
    force: false,
    direct: true,
    write: true,
    verify: false,
    unstamped_writes: false,
    device: None,
};
const FORCED: Access = Access { force: true, ..NEW };

/// The seed in the header of a current bench file.
fn seed_of(f: &File) -> Option<u64> {
    match read_header(f) {
        Header::Ours { seed, .. } => Some(seed),
        Header::OursOld | Header::Foreign => None,
    }
}

#[test]
fn creates_fills_and_recognises_its_files() {
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let path = dir.path().join("b.dat");
    let p = prepare(&path, 3 << 20, NEW, &GO).expect("create");
    assert_eq!(p.size, 3 << 20);
    assert_eq!(p.filled, 2 << 20);
    let f = File::open(&path).expect("open");
    assert_eq!(seed_of(&f), Some(p.seed));
    let mut block = vec![0u8; 8192];
    f.read_exact_at(&mut block, DATA_OFFSET + 8192)
        .expect("read");
    assert_eq!(stamp::check(&block, DATA_OFFSET + 8192, p.seed), Ok(()));
    let again = prepare(&path, 3 << 20, NEW, &GO).expect("reuse");
    assert_eq!((again.seed, again.filled), (p.seed, 0));
    let grown = prepare(&path, 4 << 20, NEW, &GO).expect("extend");
    assert_eq!(
        (grown.seed, grown.filled, grown.size),
        (p.seed, 1 << 20, 4 << 20)
    );
}

#[test]
fn refuses_foreign_files_without_force() {
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let path = dir.path().join("precious.db");
    std::fs::write(&path, b"customer data").expect("write");
    let err = prepare(&path, 2 << 20, NEW, &GO).expect_err("must refuse");
    assert!(matches!(err, BenchError::NotOurs { .. }), "{err}");
    assert_eq!(std::fs::read(&path).expect("read"), b"customer data");
    let p = prepare(&path, 2 << 20, FORCED, &GO).expect("forced");
    assert_eq!(seed_of(&File::open(&path).expect("open")), Some(p.seed));
}

#[test]
fn an_interrupted_fill_leaves_a_file_the_next_run_continues() {
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let path = dir.path().join("i.dat");
    let stop = AtomicBool::new(true);
    let err = prepare(&path, 4 << 20, NEW, &stop).expect_err("stopped");
    assert!(matches!(err, BenchError::FillInterrupted { .. }), "{err}");
    let seed = seed_of(&File::open(&path).expect("open")).expect("header written first");
    let p = prepare(&path, 4 << 20, NEW, &GO).expect("continue");
    assert_eq!((p.seed, p.size, p.filled), (seed, 4 << 20, 3 << 20));
}

#[test]
fn a_version_1_file_is_ours_and_filled_again_with_current_stamps() {
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let path = dir.path().join("old.dat");
    let mut old = b"SQLIOSIM-BENCH v1\nseed=7\nsize=3145728\n".to_vec();
    old.resize(3 << 20, 0xAB);
    std::fs::write(&path, &old).expect("write");
    assert_eq!(
        read_header(&File::open(&path).expect("open")),
        Header::OursOld
    );
    let p = prepare(&path, 2 << 20, NEW, &GO).expect("no --force needed");
    assert_eq!((p.size, p.filled), (3 << 20, 2 << 20));
    let f = File::open(&path).expect("open");
    assert_eq!(
        read_header(&f),
        Header::Ours {
            seed: p.seed,
            size: 3 << 20,
            intact: true
        }
    );
    let mut block = vec![0u8; 8192];
    f.read_exact_at(&mut block, (3 << 20) - 8192).expect("read");
    assert_eq!(stamp::check(&block, (3 << 20) - 8192, p.seed), Ok(()));
}

#[test]
fn unstamped_writes_mark_the_header_and_verify_is_refused_until_refilled() {
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let path = dir.path().join("z.dat");
    let first = prepare(&path, 2 << 20, NEW, &GO).expect("create");
    let zeros = Access {
        unstamped_writes: true,
        ..NEW
    };
    prepare(&path, 2 << 20, zeros, &GO).expect("a zeros run may go on");
    let header = read_header(&File::open(&path).expect("open"));
    assert_eq!(
        header,
        Header::Ours {
            seed: first.seed,
            size: 2 << 20,
            intact: false
        }
    );
    let verify = Access {
        verify: true,
        write: false,
        ..NEW
    };
    let err = prepare(&path, 2 << 20, verify, &GO).expect_err("stamps are broken");
    assert!(matches!(err, BenchError::StampsBroken { .. }), "{err}");
    // A run that neither verifies nor writes unstamped data leaves the mark alone, even when
    // it extends the file: the blocks written without stamps are still there.
    prepare(&path, 2 << 20, NEW, &GO).expect("plain run");
    assert_eq!(read_header(&File::open(&path).expect("open")), header);
    prepare(&path, 3 << 20, NEW, &GO).expect("extending run");
    assert_eq!(
        read_header(&File::open(&path).expect("open")),
        Header::Ours {
            seed: first.seed,
            size: 3 << 20,
            intact: false
        }
    );
    let again = prepare(
        &path,
        2 << 20,
        Access {
            force: true,
            ..verify
        },
        &GO,
    )
    .expect("refill");
    assert_eq!(
        again.filled,
        2 << 20,
        "the whole 3 MiB file is filled again"
    );
    assert!(matches!(
        read_header(&File::open(&path).expect("open")),
        Header::Ours { intact: true, .. }
    ));
}

/// A name checked as a file and swapped for a symlink before the fill opens it: the fill never
/// follows it, whatever it points to (it used to follow a symlink to a block device, which
/// the in-use checks and the exclusive claim had never seen). An opened target must be the
/// device claimed, or, for a file, no device.
#[test]
fn a_name_swapped_for_a_symlink_after_the_checks_is_not_followed() {
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"not ours").expect("victim");
    let link = dir.path().join("bench.dat");
    std::os::unix::fs::symlink(&victim, &link).expect("symlink");
    let err = open_for_fill(&link, NEW).expect_err("a symlink is not followed");
    assert!(err.to_string().contains("bench.dat"), "{err}");
    assert_eq!(std::fs::read(&victim).expect("victim"), b"not ours");
    let file = File::open(&victim).expect("open");
    assert!(check_opened(&file, &victim, None).is_ok());
    let err = check_opened(&file, &victim, Some(7 << 8)).expect_err("not the device claimed");
    assert!(
        err.to_string().contains("not the block device 7:0 checked"),
        "{err}"
    );
    // As root, the symlink to a block device (a loop device over a file of zeros).
    if !rustix::process::geteuid().is_root() {
        return;
    }
    let image = dir.path().join("disk.img");
    std::fs::write(&image, vec![0u8; 4 << 20]).expect("image");
    let Ok(out) = std::process::Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&image)
        .output()
    else {
        return;
    };
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if dev.is_empty() {
        return;
    }
    let to_dev = dir.path().join("to-dev.dat");
    std::os::unix::fs::symlink(&dev, &to_dev).expect("symlink");
    let opened = open_for_fill(&to_dev, NEW);
    let _ = std::process::Command::new("losetup")
        .args(["-d", &dev])
        .status();
    assert!(
        opened.is_err(),
        "a symlink swapped in to {dev} was followed"
    );
    assert!(std::fs::read(&image)
        .expect("image")
        .iter()
        .all(|&b| b == 0));
}

/// The run's own open of a prepared file, after the fill: a symlink or a hard link swapped in
/// under the name since is refused, and the victim is untouched (the run's open used to follow
/// both: only the fill's open was checked).
#[test]
fn the_runs_open_refuses_a_link_swapped_in_after_the_fill() {
    let dir = tempfile::tempdir_in(".").expect("tempdir");
    let path = dir.path().join("bench.dat");
    prepare(&path, 2 << 20, NEW, &GO).expect("prepare");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"not ours").expect("victim");
    let mode = OpenMode {
        direct: false,
        dsync: false,
        write: true,
    };
    std::fs::remove_file(&path).expect("rm");
    std::os::unix::fs::symlink(&victim, &path).expect("symlink");
    assert!(open(&path, mode, None).is_err(), "a symlink was followed");
    std::fs::remove_file(&path).expect("rm");
    std::fs::hard_link(&victim, &path).expect("hard link");
    let err = open(&path, mode, None).expect_err("a hard link was taken");
    assert!(err.to_string().contains("hard link"), "{err}");
    assert_eq!(std::fs::read(&victim).expect("victim"), b"not ours");
}
