//! A block device is written only when named by its own node (issue #36 §2): another user
//! plants `S/bench.dat -> /dev/loopN` in a shared mode-0777 directory, and root runs a
//! capacity run with `--force` on `S/bench.dat`. Through each of the five entry points —
//! `bench --file`, `bench --dir`, `run --bench`, `sqlio -kW` and `diskspd -w100` — the run is
//! refused with exit 2 naming the link and the device it leads to, and the device's bytes are
//! unchanged. The device named by its own node is still written with `--force` (the refusal
//! is the link's, not the device's).
//!
//! Needs root (losetup, and planting as `nobody`); skipped otherwise unless
//! SQLIOSIM_REQUIRE_LOOP=1.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::crash_support::{bin, small_config};
use crate::loop_support::{is_root, skip, LoopDev};

const NOBODY: u32 = 65534;
const SIZE: usize = 32 << 20;

/// A pattern no run writes: the device's content before each attempt.
fn pattern() -> Vec<u8> {
    (0..SIZE).map(|i| (i % 251) as u8 ^ 0xA5).collect()
}

/// A directory as another user made it: theirs, mode 0777, no sticky bit.
fn shared_dir(p: &Path) {
    std::fs::create_dir_all(p).expect("mkdir");
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    std::os::unix::fs::lchown(p, Some(NOBODY), Some(NOBODY)).expect("chown");
}

/// `name` in `dir`, planted by `nobody` as a symlink to `dev`.
fn plant(dir: &Path, name: &str, dev: &Path) -> PathBuf {
    let link = dir.join(name);
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(dev, &link).expect("symlink");
    std::os::unix::fs::lchown(&link, Some(NOBODY), Some(NOBODY)).expect("lchown");
    link
}

/// The five ways a capacity run writes `link` with --force.
fn entry_points(s: &Path, link: &Path, run_dir: &Path, config: &Path) -> Vec<Vec<String>> {
    let l = link.to_string_lossy().into_owned();
    let short = ["--duration", "0.3", "--warmup", "0", "--size", "8M"];
    let mut bench_file = vec!["bench", "--file", &l, "--rw", "write", "--force"];
    bench_file.extend(short);
    let s = s.to_string_lossy().into_owned();
    let mut bench_dir = vec!["bench", "--dir", &s, "--rw", "write", "--force"];
    bench_dir.extend(short);
    let bench_opts = format!("--file {l} --rw write --force --duration 0.3 --size 8M");
    let (r, c) = (run_dir.to_string_lossy(), config.to_string_lossy());
    let run = vec![
        "run",
        "--config",
        &c,
        "--dir",
        &r,
        "--duration",
        "1",
        "--bench",
        &bench_opts,
    ];
    let sqlio = vec!["sqlio", "-kW", "-s1", "-b64", "--force", &l];
    let diskspd = vec!["diskspd", "-w100", "-d1", "-W0", "--force", &l];
    [bench_file, bench_dir, run, sqlio, diskspd]
        .iter()
        .map(|v| v.iter().map(|a| a.to_string()).collect())
        .collect()
}

fn sqliosim(args: &[String]) -> Output {
    bin().args(args).output().expect("run sqliosim")
}

#[test]
fn force_never_writes_a_device_through_a_planted_symlink() {
    if !is_root() {
        skip("planting as nobody and loop devices need root");
        return;
    }
    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let img = base.path().join("victim.img");
    std::fs::write(&img, pattern()).expect("image");
    let Some(lo) = LoopDev::attach(&img, true, 512) else {
        return;
    };
    let dev = lo.path().to_path_buf();
    let s = base.path().join("shared");
    shared_dir(&s);
    let run_dir = base.path().join("run");
    std::fs::create_dir(&run_dir).expect("mkdir");
    let config = small_config(base.path(), 1, 1, false);
    let before = std::fs::read(&dev).expect("read the device");
    let mut wrong = Vec::new();
    for (i, args) in entry_points(&s, &s.join("bench.dat"), &run_dir, &config)
        .iter()
        .enumerate()
    {
        let name = if i == 1 {
            "sqliosim-bench.dat"
        } else {
            "bench.dat"
        };
        let link = plant(&s, name, &dev);
        let out = sqliosim(args);
        let err = String::from_utf8_lossy(&out.stderr);
        if std::fs::read(&dev).expect("read the device") != before {
            wrong.push(format!("{} wrote the device through the link", args[0]));
            std::fs::write(&dev, &before).expect("restore the device");
        }
        if out.status.code() != Some(2) {
            wrong.push(format!("{args:?}: exit {:?}: {err}", out.status.code()));
        } else if !err.contains(&*link.to_string_lossy()) || !err.contains(&*dev.to_string_lossy())
        {
            wrong.push(format!(
                "{args:?} does not name the link and the device: {err}"
            ));
        }
        std::fs::remove_file(&link).expect("unplant");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let out = sqliosim(&[
        "bench".into(),
        "--file".into(),
        dev.to_string_lossy().into_owned(),
        "--rw".into(),
        "write".into(),
        "--force".into(),
        "--duration".into(),
        "0.3".into(),
        "--warmup".into(),
        "0".into(),
        "--size".into(),
        "8M".into(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let now = std::fs::read(&dev).expect("read the device");
    assert!(
        now.starts_with(b"SQLIOSIM-BENCH v2\n"),
        "the device named by its own node is written with --force"
    );
}
