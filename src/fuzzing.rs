//! Every reader of outside input behind one entry point, for the coverage-guided fuzzer
//! (`fuzz/`, cargo-fuzz and libFuzzer) and for the test that replays what it found
//! (`tests/cli/fuzz_readers.rs`, over `fuzz/regressions/`). The first byte of the input
//! chooses the reader ([`READERS`]), the rest is what it reads. Each must return a result or
//! an error whatever it is given: no panic, no abort, no hang, no allocation the input cannot
//! account for.

use crate::config::Host;
use crate::sim::engine::journal::JournalState;

/// The readers, in the order of the first byte (modulo their number).
pub const READERS: [&str; 8] = [
    "INI configuration",
    "journal",
    "data or log file header",
    "XML log",
    "JSON summary",
    "backup stream block header",
    "witness frame",
    "log backup block header",
];

/// Feeds `data[1..]` to the reader `data[0]` chooses.
pub fn read(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match usize::from(which) % READERS.len() {
        0 => {
            let host = Host {
                cpus: 2,
                mem_available_mb: 4096,
                mem_total_mb: 8192,
            };
            let _ = crate::config::parse(&String::from_utf8_lossy(rest), "fuzz.cfg.ini", &host);
        }
        1 => {
            let st = JournalState::from_bytes(rest);
            for f in &st.files {
                let _ = st.durable_gen(f.file_id, 1 << 40);
            }
            let _ = st.snapshot_len();
        }
        2 => {
            let _ = crate::page::FileHeader::decode(rest);
            let _ = crate::page::generation_ceiling(rest);
        }
        3 => {
            if let Ok(text) = crate::config::encoding::decode_evidence(rest) {
                let _ = crate::report::readers::logparse::parse_log(&text);
            }
        }
        4 => {
            if let Ok(text) = std::str::from_utf8(rest) {
                let _ = crate::report::sinks::json::parse(text);
            }
        }
        5 => {
            let _ = crate::sim::engine::backup::read_head(rest);
        }
        6 => {
            let mut r = rest;
            let _ = crate::witness::proto::read_msg(&mut r, &crate::witness::Key::none());
        }
        _ => {
            let _ = crate::sim::engine::backup::logstream::read_head(rest);
        }
    }
}
