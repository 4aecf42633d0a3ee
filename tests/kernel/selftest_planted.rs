//! `selftest --fuse` in a shared temporary directory another user plants (issue #36 §1). The
//! self-test used to work in `$TMPDIR/sqliosim-selftest-<pid>` as it found it: `nobody`, who
//! can see the pid, planted that name with `s00/backing` leading to another run's files and
//! `s01/mnt` to a root-owned directory, and root overwrote the other run's data file and
//! mounted faultfs over the root directory. Now the working directory has a random name, is
//! created by the self-test with mode 0700, and is gone afterwards; the planted names and what
//! they lead to are untouched and nothing else is mounted or unmounted. A temporary directory
//! another user can change (theirs, or writable without the sticky bit) is not used at all.
//!
//! The process is started stopped (`kill -STOP $$` in a shell that then execs sqliosim), so
//! its pid is known before it can use the name: the plant is deterministic.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

const NOBODY: u32 = 65534;
const OTHER_RUN: &[u8] = b"root's own file\n";

fn nobody_owns(p: &Path) {
    std::os::unix::fs::lchown(p, Some(NOBODY), Some(NOBODY)).expect("lchown");
}

fn mode(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).expect("chmod");
}

/// The mount points of this mount namespace under `under`, sorted: the test's own directory,
/// where the self-test and everything planted lives (other tests mount and unmount elsewhere
/// meanwhile, so the whole table is no one test's to compare).
fn mount_points(under: &Path) -> Vec<String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let under = under.to_string_lossy();
    let mut v: Vec<String> = info
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(String::from))
        .filter(|m| m.starts_with(under.as_ref()))
        .collect();
    v.sort();
    v
}

/// The names in `dir` (none when it is gone), sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// `sqliosim selftest --fuse` with `TMPDIR=tmp`, started stopped.
fn start_stopped(tmp: &Path) -> Child {
    let child = Command::new("sh")
        .args(["-c", "kill -STOP $$; exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_sqliosim"))
        .args(["selftest", "--fuse", "--seed", "5"])
        .env("TMPDIR", tmp)
        .env("FAULTFS_BIN", crate::fuse_support::faultfs_bin())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stat = format!("/proc/{}/stat", child.id());
    while !std::fs::read_to_string(&stat).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('T'))
    }) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

fn resume(child: &Child) {
    let ok = Command::new("kill")
        .args(["-CONT", &child.id().to_string()])
        .status()
        .expect("kill -CONT");
    assert!(ok.success());
}

/// What the test saw of the run while it went on.
#[derive(Default)]
struct Seen {
    /// (name, mode, uid) of each self-test directory other than the planted one.
    dirs: Vec<(String, u32, u32)>,
    /// A mount over the root-owned victim directory appeared.
    mounted_over_victim: bool,
}

/// Waits for `child`, watching `tmp` for the self-test's directory and the mount table for a
/// mount at `victim`.
fn watch(mut child: Child, tmp: &Path, planted: &str, victim: &Path) -> (Output, Seen) {
    let mut seen = Seen::default();
    let victim = victim.to_string_lossy().into_owned();
    while child.try_wait().expect("try_wait").is_none() {
        for e in std::fs::read_dir(tmp).expect("list").flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name != planted && !seen.dirs.iter().any(|d| d.0 == name) {
                if let Ok(m) = e.metadata() {
                    seen.dirs.push((name, m.mode() & 0o7777, m.uid()));
                }
            }
        }
        seen.mounted_over_victim |= mount_points(Path::new(&victim)).contains(&victim);
        std::thread::sleep(Duration::from_millis(10));
    }
    (child.wait_with_output().expect("output"), seen)
}

/// Plants `tmp/sqliosim-selftest-PID` as `nobody` would: `s00/backing` a symlink to another
/// run's directory (`s00/mnt` a directory of theirs), `s01/mnt` a symlink to `victim`.
fn plant(tmp: &Path, pid: u32, other_run: &Path, victim: &Path) -> (String, PathBuf) {
    let name = format!("sqliosim-selftest-{pid}");
    let top = tmp.join(&name);
    for d in [
        &top,
        &top.join("s00"),
        &top.join("s00/mnt"),
        &top.join("s01"),
    ] {
        std::fs::create_dir(d).expect("mkdir");
        mode(d, 0o777);
        nobody_owns(d);
    }
    for (link, to) in [("s00/backing", other_run), ("s01/mnt", victim)] {
        std::os::unix::fs::symlink(to, top.join(link)).expect("symlink");
        nobody_owns(&top.join(link));
    }
    std::fs::create_dir(top.join("s01/backing")).expect("mkdir");
    nobody_owns(&top.join("s01/backing"));
    (name, top)
}

/// The directory of a genuine earlier run (its data and log files, journal and logs).
fn other_run(base: &Path) -> PathBuf {
    let dir = base.join("other-run");
    std::fs::create_dir(&dir).expect("mkdir");
    let config = crate::crash_support::small_config(base, 1, 1, false);
    let out = crate::crash_support::run_cmd(&config, &dir)
        .args(["--seed", "3"])
        .output()
        .expect("run");
    crate::crash_support::assert_success(&out);
    dir
}

/// Every file of `dir` with its bytes.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    listing(dir)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap_or_default();
            (n, bytes)
        })
        .collect()
}

fn tree(top: &Path) -> Vec<String> {
    let mut all = Vec::new();
    for d in ["", "s00", "s01", "s00/mnt", "s01/backing"] {
        all.extend(
            listing(&top.join(d))
                .into_iter()
                .map(|n| format!("{d}/{n}")),
        );
    }
    all
}

#[test]
fn a_planted_selftest_directory_is_not_used_and_its_victims_are_untouched() {
    if !faultfs::fuse_or_skip("selftest --fuse with a planted directory") {
        return;
    }
    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    mode(base.path(), 0o755);
    let tmp = base.path().join("tmp");
    std::fs::create_dir(&tmp).expect("mkdir");
    mode(&tmp, 0o1777);
    let other_run = other_run(base.path());
    let other_files = contents(&other_run);
    let victim = base.path().join("root-only");
    std::fs::create_dir(&victim).expect("mkdir");
    mode(&victim, 0o700);
    std::fs::write(victim.join("inside"), OTHER_RUN).expect("write");
    let mounts = mount_points(base.path());

    let child = start_stopped(&tmp);
    let (planted, top) = plant(&tmp, child.id(), &other_run, &victim);
    let planted_tree = tree(&top);
    resume(&child);
    let (out, seen) = watch(child, &tmp, &planted, &victim);
    let stdout = String::from_utf8_lossy(&out.stdout);

    let mut wrong = Vec::new();
    if contents(&other_run) != other_files {
        wrong.push(format!(
            "the other run's files were written: {:?}",
            listing(&other_run)
        ));
    }
    if seen.mounted_over_victim {
        wrong.push("faultfs was mounted over the root-only directory".into());
    }
    if listing(&victim) != ["inside"] {
        wrong.push(format!(
            "the root-only directory changed: {:?}",
            listing(&victim)
        ));
    }
    if mount_points(base.path()) != mounts {
        wrong.push("the mount table is not what it was".into());
    }
    if tree(&top) != planted_tree {
        wrong.push(format!("the planted tree changed: {:?}", tree(&top)));
    }
    if listing(&tmp) != [planted.clone()] {
        wrong.push(format!("left in TMPDIR: {:?}", listing(&tmp)));
    }
    match seen.dirs.as_slice() {
        [(name, 0o700, 0)] if name.starts_with("sqliosim-selftest-") => {}
        other => wrong.push(format!("the self-test's own directory: {other:?}")),
    }
    if out.status.code() != Some(0) || !stdout.contains("PASS") || stdout.contains("not run") {
        wrong.push(format!("not a passing run with its FUSE rows: {stdout}"));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_temporary_directory_another_user_can_change_is_not_used() {
    if !faultfs::fuse_or_skip("selftest --fuse in another user's TMPDIR") {
        return;
    }
    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    mode(base.path(), 0o755);
    let tmp = base.path().join("theirs");
    std::fs::create_dir(&tmp).expect("mkdir");
    mode(&tmp, 0o777);
    nobody_owns(&tmp);
    let child = start_stopped(&tmp);
    resume(&child);
    let (out, seen) = watch(child, &tmp, "", Path::new("/nonexistent"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("FUSE scenarios not run") && stdout.contains(&*tmp.to_string_lossy()),
        "{stdout}"
    );
    assert!(!stdout.contains("\nfaultfs "), "{stdout}");
    assert!(
        seen.dirs.is_empty(),
        "created in {}: {:?}",
        tmp.display(),
        seen.dirs
    );
    assert!(listing(&tmp).is_empty());
}
