//! Each kind of planted name refused, by the descriptor, with the victim left as it was.

use super::*;
use std::ffi::OsStr;

struct Rig {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    victim: PathBuf,
}

const VICTIM: &[u8] = b"precious\n";

fn rig() -> Rig {
    let t = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).expect("tempdir");
    let dir = t.path().to_path_buf();
    let victim = dir.join("victim");
    std::fs::write(&victim, VICTIM).expect("victim");
    Rig {
        _dir: t,
        dir,
        victim,
    }
}

/// Plants `kind` at `name`; returns the path.
fn plant(r: &Rig, name: &str, kind: NameProblem) -> PathBuf {
    let at = r.dir.join(name);
    match kind {
        NameProblem::Symlink => std::os::unix::fs::symlink(&r.victim, &at).expect("symlink"),
        NameProblem::HardLinks(_) => std::fs::hard_link(&r.victim, &at).expect("link"),
        NameProblem::Fifo => {
            rfs::mknodat(rfs::CWD, &at, FileType::Fifo, Mode::from_raw_mode(0o666), 0)
                .expect("mkfifo")
        }
        NameProblem::Directory => std::fs::create_dir(&at).expect("mkdir"),
        _ => unreachable!("not planted"),
    }
    at
}

const KINDS: [NameProblem; 4] = [
    NameProblem::Symlink,
    NameProblem::HardLinks(2),
    NameProblem::Fifo,
    NameProblem::Directory,
];

fn assert_refused(r: Result<impl std::fmt::Debug, SafeFileError>, at: &Path, kind: NameProblem) {
    match r {
        Err(SafeFileError::Refused { path, problem }) => {
            assert_eq!(path, at);
            assert_eq!(
                std::mem::discriminant(&problem),
                std::mem::discriminant(&kind),
                "{}: {problem}",
                at.display()
            );
        }
        other => panic!("{}: expected {kind}, got {other:?}", at.display()),
    }
}

#[test]
fn every_planted_kind_is_refused_for_open_replace_and_read() {
    let r = rig();
    for (i, kind) in KINDS.into_iter().enumerate() {
        let at = plant(&r, &format!("own{i}"), kind);
        assert_refused(open_own(&at, Create::Either), &at, kind);
        assert_refused(open_named(&at, Create::Either), &at, kind);
        assert_refused(replace(&at, b"new"), &at, kind);
        // The temporary's old fixed name, planted: passed over, the name still written.
        let tmp = plant(&r, &format!(".t{i}.tmp"), kind);
        let before = std::fs::symlink_metadata(&tmp).expect("planted");
        let target = r.dir.join(format!("t{i}"));
        replace(&target, b"new").expect("a fresh temporary name");
        assert_eq!(std::fs::read(&target).expect("read"), b"new");
        let after = std::fs::symlink_metadata(&tmp).expect("still planted");
        assert_eq!(before.file_type(), after.file_type(), "{kind}: untouched");
        assert_eq!(std::fs::read(&r.victim).expect("read"), VICTIM);
    }
}

#[test]
fn a_fifo_given_to_read_is_refused_at_once_a_symlink_followed() {
    let r = rig();
    let fifo = plant(&r, "in.json", NameProblem::Fifo);
    assert_refused(
        read_bounded(&fifo, Use::Input, Kind::Config),
        &fifo,
        NameProblem::Fifo,
    );
    let link = plant(&r, "link.json", NameProblem::Symlink);
    assert_eq!(
        read_bounded(&link, Use::Input, Kind::Config).expect("followed"),
        VICTIM
    );
    assert_refused(
        open_existing(&link, Use::Named),
        &link,
        NameProblem::Symlink,
    );
    assert!(open_existing(&r.dir.join("none"), Use::Named)
        .expect("absent")
        .is_none());
}

#[test]
fn own_files_are_opened_and_replaced_whatever_temporaries_lie_beside() {
    let r = rig();
    let path = r.dir.join("out.json");
    replace(&path, b"one").expect("new");
    replace(&path, b"two").expect("over our own");
    assert_eq!(std::fs::read(&path).expect("read"), b"two");
    std::fs::write(r.dir.join(".out.json.tmp"), b"left by an old version").expect("stale");
    replace(&path, b"three").expect("replaced through a fresh name");
    assert_eq!(std::fs::read(&path).expect("read"), b"three");
    let left: Vec<_> = std::fs::read_dir(&r.dir)
        .expect("list")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(".out.json.") && n != ".out.json.tmp")
        .collect();
    assert!(
        left.is_empty(),
        "no temporary of ours left behind: {left:?}"
    );
    let f = open_own(&path, Create::Either).expect("our own file");
    assert_eq!(f.metadata().expect("stat").len(), 5, "never truncated");
    assert_refused(open_own(&path, Create::New), &path, NameProblem::Exists);
}

#[test]
fn an_own_subdirectory_must_not_be_a_symlink() {
    let r = rig();
    let d = Dir::open(&r.dir).expect("dir");
    let sub = d.own_subdir(OsStr::new("dumps")).expect("created");
    sub.open_file(OsStr::new("a.txt"), Create::New, Use::Own)
        .expect("file in it");
    std::os::unix::fs::symlink(&r.dir, r.dir.join("elsewhere")).expect("symlink");
    assert_refused(
        d.own_subdir(OsStr::new("elsewhere")),
        &r.dir.join("elsewhere"),
        NameProblem::Symlink,
    );
}

#[test]
fn a_tree_below_a_directory_is_read_without_following_a_symlink() {
    let r = rig();
    let top = Dir::open(&r.dir).expect("open");
    std::fs::create_dir(r.dir.join("sub")).expect("mkdir");
    std::fs::write(r.dir.join("sub/rec"), b"1\n").expect("write");
    std::os::unix::fs::symlink(r.dir.join("sub"), r.dir.join("linked")).expect("symlink");
    std::os::unix::fs::symlink(&r.victim, r.dir.join("sub/planted")).expect("symlink");
    let sub = top
        .open_subdir("sub".as_ref())
        .expect("opened")
        .expect("there");
    let rec = read_bounded_in(&sub, "rec".as_ref(), Use::Input, Kind::CycleRecord);
    assert_eq!(rec.expect("read").as_deref(), Some(&b"1\n"[..]));
    let planted = read_bounded_in(&sub, "planted".as_ref(), Use::Input, Kind::CycleRecord);
    assert_refused(planted, &r.dir.join("sub/planted"), NameProblem::Symlink);
    let none = read_bounded_in(&sub, "none".as_ref(), Use::Input, Kind::CycleRecord);
    assert!(none.expect("absent").is_none());
    let linked = top.open_subdir("linked".as_ref());
    assert_refused(linked, &r.dir.join("linked"), NameProblem::Symlink);
    let file = top.open_subdir("victim".as_ref());
    assert_refused(file, &r.victim, NameProblem::NotDirectory);
    assert!(top.open_subdir("none".as_ref()).expect("absent").is_none());
}
