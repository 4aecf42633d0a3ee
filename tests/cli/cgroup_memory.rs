//! The `MaxMemoryMB` default inside a container's memory limit (issue #23 §3): the tool run in
//! a real memory cgroup limited to 300 MiB (v1's `memory` controller or v2's `memory.max`,
//! whichever this kernel mounts) sizes its buffer pool within the limit, not from the host's
//! /proc/meminfo. Needs root and a writable cgroup filesystem: skipped without them unless
//! SQLIOSIM_REQUIRE_CGROUP=1 (CI sets it).

use std::path::{Path, PathBuf};
use std::process::Command;

const LIMIT: u64 = 300 << 20;

/// A new memory cgroup limited to LIMIT, or why there is none.
fn limited_cgroup() -> Result<PathBuf, String> {
    let name = format!("sqliosim-test-{}", std::process::id());
    let v1 = Path::new("/sys/fs/cgroup/memory");
    let (dir, file) = if v1.join("memory.limit_in_bytes").exists() {
        (v1.join(&name), "memory.limit_in_bytes")
    } else {
        let root = Path::new("/sys/fs/cgroup");
        let controllers = std::fs::read_to_string(root.join("cgroup.controllers"))
            .map_err(|e| format!("no cgroup v2 at /sys/fs/cgroup: {e}"))?;
        if !controllers.split_whitespace().any(|c| c == "memory") {
            return Err("cgroup v2 without the memory controller".into());
        }
        let _ = std::fs::write(root.join("cgroup.subtree_control"), "+memory");
        (root.join(&name), "memory.max")
    };
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    std::fs::write(dir.join(file), LIMIT.to_string())
        .map_err(|e| format!("cannot limit {}: {e}", dir.display()))?;
    Ok(dir)
}

#[test]
fn the_buffer_pool_default_fits_the_cgroup_memory_limit() {
    let cg = match limited_cgroup() {
        Ok(d) => d,
        Err(why) if std::env::var_os("SQLIOSIM_REQUIRE_CGROUP").is_some() => {
            panic!("SQLIOSIM_REQUIRE_CGROUP is set but {why}")
        }
        Err(why) => {
            eprintln!("SKIPPED the_buffer_pool_default_fits_the_cgroup_memory_limit: {why}");
            return;
        }
    };
    let scratch = tempfile::tempdir().expect("tempdir");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {}/cgroup.procs && exec \"$0\" run --dry-run --dir \"$1\"",
            cg.display()
        ))
        .arg(env!("CARGO_BIN_EXE_sqliosim"))
        .arg(scratch.path())
        .output()
        .expect("run in the cgroup");
    let _ = std::fs::remove_dir(&cg);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mb: u64 = text
        .split("MaxMemory = ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no MaxMemory in the echo:\n{text}"));
    assert!(
        (1..=300).contains(&mb),
        "MaxMemory = {mb} MB under a 300 MiB limit:\n{text}"
    );
}
