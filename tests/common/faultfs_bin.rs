//! The faultfs daemon's binary for the tests (included with `#[path]` by each test binary that
//! mounts faultfs).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The faultfs daemon: `FAULTFS_BIN` (scripts/test.sh sets it to the binary its workspace build
/// made), else built now with the test's own profile into the same target directory as
/// `sqliosim` (a no-op when `cargo test --workspace` already built it).
///
/// The build uses the compiler beside the cargo that built this test (`RUSTC`, unless set): a
/// test binary started directly, not by `cargo test`, has no `RUSTUP_TOOLCHAIN`, and rustup's
/// `rustc` proxy would then obey the `rust-toolchain` file that a dependency's source directory
/// carries (fuser's names 1.85), failing on a machine with one toolchain.
pub fn faultfs_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("FAULTFS_BIN") {
            return PathBuf::from(bin);
        }
        let profile_dir = Path::new(env!("CARGO_BIN_EXE_sqliosim"))
            .parent()
            .expect("sqliosim binary has a directory");
        let target_dir = profile_dir.parent().expect("profile dir has a parent");
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "--quiet", "-p", "faultfs", "--bin", "faultfs"])
            .arg("--target-dir")
            .arg(target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        let rustc = Path::new(env!("CARGO")).with_file_name("rustc");
        if std::env::var_os("RUSTC").is_none() && rustc.is_file() {
            cmd.env("RUSTC", rustc);
        }
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo build -p faultfs");
        assert!(status.success(), "cargo build -p faultfs failed: {status}");
        let bin = profile_dir.join("faultfs");
        assert!(bin.is_file(), "no faultfs binary at {}", bin.display());
        bin
    })
    .clone()
}
