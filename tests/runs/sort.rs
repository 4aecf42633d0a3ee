//! The Sort User on real files (issue #25 §3): tempdb is not durable, so the tempdb files a
//! killed run leaves are no evidence and no loss. A rerun recreates them; it does not keep them
//! aside under the killed run's id, where each crash of a long burn-in would leave another
//! TempFileSize of disk taken.

use crate::crash_support::{assert_success, run_cmd, small_config, start_run};

#[test]
fn a_resume_after_a_kill_recreates_the_tempdb_files_and_keeps_none_aside() {
    let cfg_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let path = small_config(cfg_dir.path(), 1, 60, true);
    let mut text = std::fs::read_to_string(&path).expect("config");
    text.push_str("[SortUser]\nUserCount=2\nRunPages=32\nTempFileSize=4\nSortDelay=5\n");
    std::fs::write(&path, text).expect("write config");
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let tempdb = data.path().join("sqliosim.mdx.sort0");
    let mut child = start_run(&path, data.path(), 31);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    // Past its header and allocation, with runs in it.
    let begun = || std::fs::metadata(&tempdb).is_ok_and(|m| m.len() >= 4 << 20);
    while !begun() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    assert!(begun(), "no Sort User began within 60 s");
    let resumed = run_cmd(&path, data.path())
        .args(["--resume", "--seed", "32", "--duration", "1"])
        .output()
        .expect("resume");
    assert_success(&resumed);
    let err = String::from_utf8_lossy(&resumed.stderr);
    assert!(!err.contains(".sort0") && !err.contains(".sort1"), "{err}");
    let left: Vec<_> = std::fs::read_dir(data.path())
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.contains(".sort"))
        .collect();
    assert!(
        left.is_empty(),
        "tempdb files left or kept aside: {left:?}\n{err}"
    );
}
