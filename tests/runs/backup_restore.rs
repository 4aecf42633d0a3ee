//! `sqliosim restore STREAM` (issue #25 §1), the offline restore, on the stream of one real
//! run shared by every test: a clean restore writes one copy per file the stream carries, each
//! carried page byte for byte where the stream holds it (read by this test's own parser of the
//! format, not the tool's); a flipped byte of a carried page is a `backup_corruption` and no
//! copy is written; an unfinished stream, a file that is not a stream, a missing one and a bad
//! `--to` are refused (exit 2, naming the path); a rerun writes over the copies an earlier
//! restore left, and a foreign file at a copy's name is refused unless `--force`. The planted
//! links and FIFOs are rows of tests/runs/hostile_names.rs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use crate::crash_support::{assert_exit, assert_success, bin, run_cmd, small_config};

const HEADER: usize = 16 << 10;
const PAGE: usize = 8192;

/// The stream of one short run with a BackupUser (no restore of its own), kept for the tests.
fn stream() -> &'static [u8] {
    static STREAM: OnceLock<Vec<u8>> = OnceLock::new();
    STREAM.get_or_init(|| {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let config = small_config(dir.path(), 1, 2, true);
        let mut text = std::fs::read_to_string(&config).expect("config");
        text.push_str("[BackupUser]\nUserCount=1\nMaxTransferSize=262144\nBackupDelay=100\n");
        std::fs::write(&config, text).expect("config");
        let out = run_cmd(&config, dir.path())
            .args(["--seed", "61"])
            .output()
            .expect("run");
        assert_success(&out);
        std::fs::read(dir.path().join("sqliosim.bak")).expect("a finished stream")
    })
}

/// The carried pages of a stream, by this test's reading of the format (docs/backup.md):
/// (file, page) → (generation, the page's bytes).
fn carried(s: &[u8]) -> BTreeMap<(u32, u64), (u64, &[u8])> {
    let u32_at = |at: usize| u32::from_le_bytes(s[at..at + 4].try_into().expect("u32"));
    let u64_at = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("u64"));
    let mut out = BTreeMap::new();
    let mut at = 0;
    while at < s.len() {
        assert_eq!(&s[at..at + 8], b"SQLIOBAK", "a block at {at}");
        let n = u32_at(at + 48) as usize;
        for i in 0..n {
            let e = at + 64 + i * 20;
            let body = at + HEADER + i * PAGE;
            out.insert(
                (u32_at(e), u64_at(e + 4)),
                (u64_at(e + 12), &s[body..body + PAGE]),
            );
        }
        at += HEADER + n * PAGE;
    }
    out
}

/// A directory holding the stream as `sqliosim.bak`.
fn with_stream(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let path = dir.path().join("sqliosim.bak");
    std::fs::write(&path, bytes).expect("stream");
    (dir, path)
}

fn restore(args: &[&std::ffi::OsStr]) -> Output {
    bin().arg("restore").args(args).output().expect("restore")
}

fn copies(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".restored"))
        .collect();
    v.sort();
    v
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_restore_writes_every_carried_page_into_its_copy_and_keeps_the_copies() {
    let (dir, path) = with_stream(stream());
    let out = restore(&[path.as_os_str()]);
    let text = assert_success(&out);
    assert!(
        text.contains("clean") && text.contains("the copies are kept"),
        "{text}"
    );
    let pages = carried(stream());
    let files: std::collections::BTreeSet<u32> = pages.keys().map(|(f, _)| *f).collect();
    let made = copies(dir.path());
    assert_eq!(made.len(), files.len(), "one copy per file: {made:?}");
    for f in files {
        let copy = dir.path().join(format!("sqliosim.bak.file{f}.restored"));
        let bytes = std::fs::read(&copy).expect("the copy is kept");
        let last = pages
            .range((f, 0)..=(f, u64::MAX))
            .last()
            .expect("pages")
            .0
             .1;
        assert_eq!(
            bytes.len(),
            (last as usize + 1) * PAGE,
            "{}",
            copy.display()
        );
        assert!(text.contains(&*copy.to_string_lossy()), "{text}");
        let mut written = 0;
        for (&(_, p), &(generation, page)) in pages.range((f, 0)..=(f, u64::MAX)) {
            let got = &bytes[p as usize * PAGE..(p as usize + 1) * PAGE];
            assert!(
                got == page,
                "page {p} of {} is not the bytes the stream carried",
                copy.display()
            );
            // The page's own stamp (docs/page-format.md: file id at 12, page id at 16,
            // generation at 24) is the generation its block recorded; 0 is a page never written.
            let stamp = |at: usize, n: usize| {
                got[at..at + n]
                    .iter()
                    .rev()
                    .fold(0u64, |v, b| v << 8 | *b as u64)
            };
            if generation == 0 {
                assert!(
                    got.iter().all(|b| *b == 0),
                    "page {p}: generation 0 but not zeros"
                );
            } else {
                assert_eq!(
                    (stamp(12, 4), stamp(16, 8), stamp(24, 8)),
                    (f as u64, p, generation),
                    "page {p}"
                );
                written += 1;
            }
        }
        assert!(
            written > 100,
            "only {written} written pages carried of file {f}"
        );
        let header = sqliosim::page::FileHeader::decode(&bytes[..PAGE]).expect("a header page");
        assert_eq!(
            (header.run_id, header.file_id),
            (
                u64::from_le_bytes(stream()[16..24].try_into().expect("run id")),
                f
            ),
            "the copy's header names the stream's run and the file"
        );
    }
}

#[test]
fn a_flipped_byte_of_a_carried_page_is_a_backup_corruption_and_nothing_is_restored() {
    let mut bytes = stream().to_vec();
    bytes[HEADER + 3 * PAGE + 200] ^= 0x10;
    let (dir, path) = with_stream(&bytes);
    let out = restore(&[path.as_os_str()]);
    assert_exit(&out, 1);
    let err = stderr(&out);
    assert!(
        err.contains("backup_corruption") && err.contains(&*path.to_string_lossy()),
        "{err}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Nothing restored"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(copies(dir.path()).is_empty(), "a copy was written");
    // Cut inside a block, as a crash during a backup can leave a `.partial`: the torn block
    // is a problem of the stream, as `sqliosim verify` says, and nothing is restored.
    let (dir, path) = with_stream(&stream()[..HEADER + 5 * PAGE + 100]);
    let out = restore(&[path.as_os_str()]);
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("backup_corruption"),
        "{}",
        stderr(&out)
    );
    assert!(copies(dir.path()).is_empty(), "a copy was written");
}

#[test]
fn an_unfinished_stream_a_foreign_file_a_missing_one_and_a_bad_to_are_refused() {
    let s = stream();
    let (dir, path) = with_stream(&s[..s.len() - HEADER]);
    let out = restore(&[path.as_os_str()]);
    assert_exit(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("unfinished") && err.contains(&*path.to_string_lossy()),
        "{err}"
    );
    let text = dir.path().join("notes.bak");
    std::fs::write(&text, b"a file that is no stream\n").expect("write");
    let missing = dir.path().join("gone.bak");
    let device = PathBuf::from("/dev/null");
    for (p, says) in [
        (&text, "not a backup stream"),
        (&missing, "No such file"),
        (&device, "refusing"),
    ] {
        let out = restore(&[p.as_os_str()]);
        assert_exit(&out, 2);
        let err = stderr(&out);
        assert!(
            err.contains(says) && err.contains(&*p.to_string_lossy()),
            "{err}"
        );
    }
    let (_good, good) = with_stream(s);
    let nowhere = dir.path().join("no-such-dir");
    let out = restore(&[good.as_os_str(), "--to".as_ref(), nowhere.as_os_str()]);
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains(&*nowhere.to_string_lossy()),
        "{}",
        stderr(&out)
    );
    assert!(copies(dir.path()).is_empty(), "a copy was written");
}

#[test]
fn a_rerun_writes_over_its_own_copies_and_a_foreign_file_needs_force() {
    let (dir, path) = with_stream(stream());
    let to = dir.path().join("copies");
    std::fs::create_dir(&to).expect("mkdir");
    let args = [path.as_os_str(), "--to".as_ref(), to.as_os_str()];
    assert_success(&restore(&args));
    let first = copies(&to);
    assert!(!first.is_empty(), "no copy in --to");
    assert!(copies(dir.path()).is_empty(), "a copy beside the stream");
    assert_success(&restore(&args));
    assert_eq!(copies(&to), first);
    std::fs::write(&first[0], b"someone's notes\n").expect("foreign");
    let json = dir.path().join("r.json");
    let out = restore(&[
        path.as_os_str(),
        "--to".as_ref(),
        to.as_os_str(),
        "--json".as_ref(),
        json.as_os_str(),
    ]);
    assert_exit(&out, 2);
    assert!(!json.exists(), "a refused restore wrote its JSON summary");
    let err = stderr(&out);
    assert!(
        err.contains(&*first[0].to_string_lossy()) && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&first[0]).expect("kept"),
        b"someone's notes\n"
    );
    let forced = [
        path.as_os_str(),
        "--to".as_ref(),
        to.as_os_str(),
        "--force".as_ref(),
    ];
    assert_success(&restore(&forced));
    if rustix::process::geteuid().is_root() {
        // Another user's file is theirs, even with a header of ours and with --force.
        std::os::unix::fs::chown(&first[0], Some(65534), Some(65534)).expect("chown");
        let out = restore(&forced);
        assert_exit(&out, 2);
        assert!(
            stderr(&out).contains("owned by uid 65534"),
            "{}",
            stderr(&out)
        );
    }
}

/// A copy carries the run's id and its file's id, and `sqliosim verify COPY` found the run's
/// journal beside it: it held the copy to the journal's later generations and reported every
/// page written since the backup as a lost write (936 of 1,023 once), a false alarm the
/// operator met by following `verify --dir`'s own hint. A restore's copy (`*.restored`) is
/// judged by what its pages say about themselves, and said so; any other copy of the data file
/// is still held to the journal (`kernel::journal::a_copy_of_the_data_file_is_named_…`).
#[test]
fn verify_of_a_copy_beside_the_runs_journal_judges_it_by_itself() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let cfg = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(cfg.path(), 1, 2, true);
    let mut text = std::fs::read_to_string(&config).expect("config");
    text.push_str("[BackupUser]\nUserCount=1\nMaxTransferSize=262144\nBackupDelay=100000\n");
    std::fs::write(&config, text).expect("config");
    let out = run_cmd(&config, dir.path())
        .args(["--seed", "62"])
        .output()
        .expect("run");
    assert_success(&out);
    let bak = dir.path().join("sqliosim.bak");
    assert_success(&restore(&[bak.as_os_str()]));
    let copy = copies(dir.path()).pop().expect("a copy");
    let v = bin()
        .arg("verify")
        .arg(&copy)
        .output()
        .expect("verify COPY");
    let said = assert_success(&v);
    assert!(said.contains("a restore's copy of file 0"), "{said}");
    // The journal's own file is still held to it.
    let own = bin()
        .arg("verify")
        .arg(dir.path().join("sqliosim.mdx"))
        .output()
        .expect("verify the data file");
    let said = assert_success(&own);
    assert!(!said.contains("a restore's copy"), "{said}");
}
