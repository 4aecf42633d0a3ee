//! io_uring refused by the kernel, as Docker's default seccomp profile refuses it: the real
//! binary runs under a seccomp filter that fails `io_uring_setup` with EPERM, and both the
//! capacity run and the simulation fall back to a psync ring, say so, and stay correct.

// Unsafe code is denied crate-wide (Cargo.toml [lints]).
#![expect(
    unsafe_code,
    reason = "the test blocks io_uring with a seccomp filter installed through raw libc calls"
)]
#![cfg(target_arch = "x86_64")]

use std::os::unix::process::CommandExt;
use std::process::{Command, Output};

/// `io_uring_setup` on x86_64.
const SYS_IO_URING_SETUP: u32 = 425;
const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump_eq(k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

/// Installs, in the calling (child) process, a filter that allows every system call but
/// `io_uring_setup`, which fails with EPERM. Only async-signal-safe calls: it runs after fork.
fn refuse_io_uring() -> std::io::Result<()> {
    let ld = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    let ret = (libc::BPF_RET | libc::BPF_K) as u16;
    let filter = [
        stmt(ld, 4), // seccomp_data.arch
        jump_eq(AUDIT_ARCH_X86_64, 1, 0),
        stmt(ret, SECCOMP_RET_ALLOW), // another ABI: leave it alone
        stmt(ld, 0),                  // seccomp_data.nr
        jump_eq(SYS_IO_URING_SETUP, 0, 1),
        stmt(ret, SECCOMP_RET_ERRNO | libc::EPERM as u32),
        stmt(ret, SECCOMP_RET_ALLOW),
    ];
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr().cast_mut(),
    };
    // SAFETY: plain prctl calls on this process; `prog` and `filter` outlive them.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog,
            ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn sqliosim_without_io_uring(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sqliosim"));
    cmd.args(args);
    // SAFETY: the hook only calls prctl, which is async-signal-safe.
    unsafe { cmd.pre_exec(refuse_io_uring) };
    cmd.output().expect("run sqliosim under the seccomp filter")
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_capacity_run_falls_back_to_psync_and_says_so() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let file = dir.path().join("b.dat");
    let out = sqliosim_without_io_uring(&[
        "bench",
        "--file",
        file.to_str().expect("utf-8"),
        "--size",
        "4M",
        "--rw",
        "mix",
        "--outstanding",
        "4",
        "--duration",
        "0.3",
        "--warmup",
        "0",
        "--verify",
    ]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("engine psync"), "{t}");
    assert!(
        t.contains("io_uring was refused by the kernel; the psync engine ran instead"),
        "{t}"
    );
}

#[test]
fn the_simulation_falls_back_to_psync_and_says_so() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/quick.cfg.ini");
    let json = dir.path().join("s.json");
    let out = sqliosim_without_io_uring(&[
        "run",
        "--config",
        config,
        "--duration",
        "3",
        "--dir",
        dir.path().to_str().expect("utf-8"),
        "--json",
        json.to_str().expect("utf-8"),
    ]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("Verdict: CLEAN"), "{t}");
    assert!(t.contains("I/O engine = psync (uring refused)"), "{t}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json summary"))
            .expect("valid JSON");
    let io = &summary["io_engine"];
    assert_eq!(
        (io["requested"].as_str(), io["used"].as_str()),
        (Some("uring"), Some("psync")),
        "{summary}"
    );
}
