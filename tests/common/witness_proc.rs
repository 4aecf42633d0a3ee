//! A `sqliosim witness` process for the tests (included with `#[path]` by each test binary that
//! starts one): started on an address (port 0: the kernel's choice), its address read from its
//! first line, killed and reaped on drop.
// Each test binary that includes it uses a part.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running witness.
pub struct WitnessProc {
    /// The process.
    pub child: Child,
    /// The address it listens on, as it said (`IP:PORT`).
    pub addr: String,
}

impl WitnessProc {
    /// `sqliosim witness --listen LISTEN --dir DIR [--token-file TOKEN]`; stderr to `stderr`.
    pub fn start(listen: &str, dir: &Path, token: Option<&Path>, stderr: Stdio) -> WitnessProc {
        let mut c = Command::new(env!("CARGO_BIN_EXE_sqliosim"));
        c.args(["witness", "--listen", listen, "--dir"]).arg(dir);
        if let Some(t) = token {
            c.arg("--token-file").arg(t);
        }
        let mut child = c
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start the witness");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the witness's first line");
        // "sqliosim witness: listening on ADDR, records in DIR"
        let addr = line
            .split_once("listening on ")
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .map(|w| w.trim_end_matches(',').to_string())
            .unwrap_or_else(|| panic!("no address in the witness's first line: {line:?}"));
        WitnessProc { child, addr }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("port")
    }

    /// SIGKILL and reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for WitnessProc {
    fn drop(&mut self) {
        self.kill();
    }
}
