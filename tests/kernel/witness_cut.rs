//! The off-host witness against a host that loses power with its journal (issue #37): the
//! run's data, log *and* local journal on one faultfs mount with a volatile write cache, a
//! `sqliosim witness` on loopback with its records on a truthful disk. The device lies about
//! every flush for a moment after a checkpoint's journal batch, then SIGKILL and a power cut
//! drop everything unpersisted, the lied journal batches included.
//!
//! - The local journal alone misses what was lied about (it lost those batches too): its
//!   verify finds less — usually nothing.
//! - `verify --witness` holds the files to the witness's record, which got those batches, and
//!   names the lost acknowledged writes, each at a page or log block the device lied about.
//! - With an honest cache, both are clean at every cut.
//!
//! Skipped, with a SKIPPED line, where FUSE is unavailable (failing instead when
//! SQLIOSIM_REQUIRE_FUSE=1, as in CI).

use std::process::Stdio;
use std::time::Duration;

use crate::power_cut::{has_durable_log_lost, lied_pages, only_lied_damage, Scene, Verified};

const JOURNAL: &str = "sqliosim.journal";
/// How long every flush is lied about before the cut.
const LIE_WINDOW: Duration = Duration::from_millis(1500);
/// Cuts with a lying device, and with an honest one.
const LYING_CUTS: usize = 10;
const HONEST_CUTS: usize = 3;

#[path = "../common/witness_proc.rs"]
mod witness_proc;

/// A `sqliosim witness` on 127.0.0.1 (a port the kernel chooses), its records in a
/// temporary directory off the mount.
struct Witness {
    _proc: witness_proc::WitnessProc,
    addr: String,
    _dir: tempfile::TempDir,
}

impl Witness {
    fn start() -> Witness {
        let dir = tempfile::Builder::new()
            .prefix("witness-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("tempdir");
        let proc_ =
            witness_proc::WitnessProc::start("127.0.0.1:0", dir.path(), None, Stdio::inherit());
        Witness {
            addr: proc_.addr.clone(),
            _proc: proc_,
            _dir: dir,
        }
    }

    /// Bytes of every record the witness keeps (they grow with each batch it gets).
    fn record_bytes(&self) -> u64 {
        fn walk(p: &std::path::Path) -> u64 {
            std::fs::read_dir(p).map_or(0, |d| {
                d.flatten()
                    .map(|e| match e.file_type() {
                        Ok(t) if t.is_dir() => walk(&e.path()),
                        _ => e.metadata().map_or(0, |m| m.len()),
                    })
                    .sum()
            })
        }
        walk(self._dir.path())
    }
}

/// Runs on the mount with `--witness`, waits for a checkpoint's journal batch, lies (or not)
/// for [`LIE_WINDOW`], cuts; returns the scene, the lied ranges and both verdicts.
fn cut(
    name: &str,
    w: &Witness,
    lie: bool,
    forced: bool,
) -> (Scene, Vec<(String, u64, u64)>, Verified, Verified) {
    // Half the cuts with each data write flushed before it is acknowledged (so the lie covers
    // data pages the journal holds), half with the log's group commits alone.
    let text = match forced {
        true => crate::power_cut::config_in("ForcedFlush"),
        false => crate::power_cut::config(),
    };
    let mut s = Scene::start_args(name, &text, &["--witness".to_string(), w.addr.clone()]);
    s.wait_first_checkpoint();
    s.wait_change("a journal batch", Scene::journal_size);
    if lie {
        // Every file of the mount: the data, the log and the local journal.
        s.command("lie on");
    }
    std::thread::sleep(LIE_WINDOW);
    if lie {
        // The lie must cover a journal batch the witness then got. On a loaded machine a
        // batch can take longer than the window (none in 1.5 s was seen), so the lie goes on
        // until the local journal was lied about and, after that, the witness's record grew:
        // it holds a batch written during the lie.
        s.wait_until("a journal batch lied about", |s| {
            !crate::power_cut::lied_pages(&s.lied(), JOURNAL).is_empty()
        });
        let before = w.record_bytes();
        s.wait_until("a batch at the witness", |_| w.record_bytes() != before);
    }
    s.kill_and_cut();
    let lied = s.lied();
    let local = s.verify_with("verify-local", &[]);
    let witnessed = s.verify_with("verify-witness", &["--witness", &w.addr]);
    (s, lied, local, witnessed)
}

/// Integrity errors a verify counted (lost writes past the console's cap included).
fn errors(v: &Verified) -> u64 {
    let others = v.listed.iter().filter(|f| f.0 != "lost_write").count() as u64;
    v.total_lost_writes + others + u64::from(has_durable_log_lost(v) && v.listed.is_empty())
}

#[test]
fn the_witness_names_the_lied_writes_the_hosts_own_journal_lost() {
    if !faultfs::fuse_or_skip("witness_cut") {
        return;
    }
    let w = Witness::start();
    let mut rows = Vec::new();
    for i in 0..LYING_CUTS {
        let (s, lied, local, witnessed) = cut(&format!("witness-lie-{i}"), &w, true, i % 2 == 1);
        let ctx = || {
            format!(
                "cut {i}: lied {lied:?}\n--- local\n{}\n--- witness\n{}",
                s.context(&local),
                s.context(&witnessed)
            )
        };
        assert!(
            !lied_pages(&lied, JOURNAL).is_empty(),
            "the local journal was not lied about: {}",
            ctx()
        );
        assert_eq!(
            witnessed.code(),
            Some(1),
            "verify --witness did not name the lost acknowledged writes: {}",
            ctx()
        );
        if let Err(e) = only_lied_damage(&witnessed, &lied) {
            panic!("verify --witness: {e}\n{}", ctx());
        }
        if let Err(e) = only_lied_damage(&local, &lied) {
            panic!("verify (local journal): {e}\n{}", ctx());
        }
        // The summary says which record held the files and what only the witness held.
        let j = &witnessed.judgement;
        assert_eq!(j["journal"]["source"], "witness", "{j}\n{}", ctx());
        assert_eq!(j["witness"]["held_to"], "witness", "{j}");
        assert!(
            j["witness"]["record_batch"].as_u64() > j["witness"]["local_batch"].as_u64(),
            "{j}"
        );
        // Every lost write the witness named that the local journal did not was owed by the
        // witness's record alone.
        let only_witness = j["witness"]["owed_only_witness"].as_u64().unwrap_or(0);
        assert!(
            only_witness
                >= witnessed
                    .total_lost_writes
                    .saturating_sub(local.total_lost_writes),
            "{j}"
        );
        assert_eq!(local.judgement["journal"]["source"], "local");
        assert!(local.judgement["witness"].is_null());
        let (l, wt) = (errors(&local), errors(&witnessed));
        assert!(
            wt > l,
            "the witness found no more than the local journal ({wt} vs {l}): {}",
            ctx()
        );
        let data = lied_pages(&lied, crate::fuse_support::DATA).len();
        rows.push((i % 2 == 1, data, l, wt, local.code()));
    }
    eprintln!("cuts (forced flush, data pages lied, local-journal errors, witness errors, local exit): {rows:?}");
    assert!(
        rows.iter().any(|r| r.0 && r.3 > 1),
        "no cut with data writes lied about had lost data writes named"
    );
}

#[test]
fn with_an_honest_cache_both_verdicts_are_clean() {
    if !faultfs::fuse_or_skip("witness_cut") {
        return;
    }
    let w = Witness::start();
    for i in 0..HONEST_CUTS {
        let (s, _, local, witnessed) = cut(&format!("witness-honest-{i}"), &w, false, i % 2 == 1);
        assert_eq!(local.code(), Some(0), "cut {i}: {}", s.context(&local));
        assert!(
            witnessed.judgement["witness"]["record_batch"].is_u64(),
            "cut {i}: {}",
            witnessed.judgement
        );
        assert_eq!(
            witnessed.code(),
            Some(0),
            "cut {i}: {}",
            s.context(&witnessed)
        );
    }
}
