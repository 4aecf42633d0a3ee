//! Fuzzing the readers of outside input with proptest: the INI reader, the journal reader, the
//! data-file header reader, and the XML-log and JSON-summary readers `sqliosim report` uses.
//! Each is fed arbitrary bytes, mutations of real files (tests/fuzz_corpus, written by a short
//! run of the binary, and configs/*.ini) and, for the journal, records with valid checksums and
//! arbitrary fields (which random bytes never reach). Each must return a result or an error:
//! no panic, no abort, and no allocation larger than the input can account for — the largest
//! single allocation is measured by a counting allocator and bounded by a small multiple of
//! the input's size plus 2 MiB, so a length field or a page number cannot decide it.
//!
//! Cases per property: `PROPTEST_CASES`, 192 by default (the file runs in seconds).

#![expect(
    unsafe_code,
    reason = "a global allocator is an `unsafe impl`: the counting one below only passes calls through"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use sqliosim::config::{parse, Host};
use sqliosim::page::{generation_ceiling, FileHeader, FileRole};
use sqliosim::report::readers::load;
use sqliosim::sim::engine::journal::{JournalFile, JournalState, Record};

/// Counts the largest single allocation of each thread (each test runs on its own).
struct Counting;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

// SAFETY: every call is passed through to the system allocator unchanged; only sizes are noted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: as for `alloc`; `ptr` and `layout` come from it.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` on an input of `len` bytes and asserts its largest allocation was bounded.
fn bounded<T>(len: usize, what: &str, f: impl FnOnce() -> T) -> T {
    LARGEST.with(|l| l.set(0));
    let out = f();
    let largest = LARGEST.with(Cell::get);
    let limit = 8 * len + (2 << 20);
    assert!(
        largest <= limit,
        "{what}: an allocation of {largest} bytes for a {len}-byte input"
    );
    out
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(192)
}

fn corpus(names: &[&str]) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    names
        .iter()
        .map(|n| std::fs::read(dir.join(n)).unwrap_or_else(|e| panic!("{n}: {e}")))
        .collect()
}

fn configs() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("configs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".ini"))
        .collect();
    v.sort();
    v.iter().map(|p| std::fs::read(p).expect("read")).collect()
}

/// One edit of a file: what, where (a fraction of the length), and bytes.
#[derive(Debug, Clone)]
enum Edit {
    Set(u16, u8),
    Insert(u16, Vec<u8>),
    Remove(u16, u16),
    Repeat(u16, u16),
    Cut(u16),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<u16>(), any::<u8>()).prop_map(|(a, b)| Edit::Set(a, b)),
        2 => (any::<u16>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(a, b)| Edit::Insert(a, b)),
        2 => (any::<u16>(), 1..512u16).prop_map(|(a, n)| Edit::Remove(a, n)),
        1 => (any::<u16>(), 1..2048u16).prop_map(|(a, n)| Edit::Repeat(a, n)),
        1 => any::<u16>().prop_map(Edit::Cut),
    ]
}

fn at(len: usize, frac: u16) -> usize {
    len * usize::from(frac) / 65536
}

fn mutate(mut b: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let len = b.len();
        match e {
            Edit::Set(a, x) if len > 0 => b[at(len, *a)] = *x,
            Edit::Insert(a, x) => {
                let i = at(len, *a);
                b.splice(i..i, x.iter().copied());
            }
            Edit::Remove(a, n) => {
                let i = at(len, *a);
                b.drain(i..(i + usize::from(*n)).min(len));
            }
            Edit::Repeat(a, n) => {
                let i = at(len, *a);
                let piece = b[i..(i + usize::from(*n)).min(len)].to_vec();
                b.splice(i..i, piece);
            }
            Edit::Cut(a) => b.truncate(at(len, *a)),
            Edit::Set(..) => {}
        }
    }
    b
}

/// Arbitrary bytes, or a corpus file with up to 8 edits.
fn input(files: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let n = files.len();
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..4096),
        3 => (0..n, prop::collection::vec(edit(), 0..8))
            .prop_map(move |(i, e)| mutate(files[i].clone(), &e)),
    ]
}

fn host() -> Host {
    Host {
        cpus: 2,
        mem_available_mb: 4096,
        mem_total_mb: 8192,
    }
}

fn ini(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let _ = bounded(bytes.len(), "INI", || parse(&text, "fuzz.cfg.ini", &host()));
}

fn journal(bytes: &[u8]) {
    let st = bounded(bytes.len(), "journal", || JournalState::from_bytes(bytes));
    for f in &st.files {
        let _ = st.durable_gen(f.file_id, 1 << 40);
    }
}

fn header(bytes: &[u8]) {
    let _ = bounded(bytes.len(), "header", || {
        (FileHeader::decode(bytes), generation_ceiling(bytes))
    });
}

/// `sqliosim report`'s reader over the bytes written as `name` in a fresh directory.
fn report(bytes: &[u8], name: &str) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write");
    let _ = bounded(bytes.len(), name, || load::load(&path));
}

/// Whole journal records with valid checksums and any fields: past the checksum, what the
/// records say is all the reader has to go on.
fn records() -> impl Strategy<Value = Vec<u8>> {
    let file = (0..4u32, any::<bool>(), prop::option::of(any::<u64>())).prop_map(
        |(file_id, log, max_pages)| JournalFile {
            file_id,
            role: if log { FileRole::Log } else { FileRole::Data },
            path: format!("/d/f{file_id}").into(),
            max_pages,
        },
    );
    let big = prop_oneof![0..600u64, any::<u64>(), Just(1 << 28), Just(1 << 40)];
    let record = prop_oneof![
        1 => (any::<u64>(), prop::collection::vec(file, 0..4))
            .prop_map(|(run_id, files)| Record::Start { run_id, files }),
        4 => (0..5u32, prop::collection::vec((big.clone(), any::<u64>()), 0..6))
            .prop_map(|(file_id, pages)| Record::Durable { file_id, pages }),
        1 => (0..5u32, big.clone()).prop_map(|(file_id, pages)| Record::Resize { file_id, pages }),
        1 => (0..5u32, any::<u64>(), any::<u64>()).prop_map(|(file_id, last_block, durable_end)| {
            Record::Log { file_id, last_block, durable_end }
        }),
        1 => (any::<u64>(), any::<u32>(), 0..6u64).prop_map(|(time_us, interval_ms, batch)| {
            Record::Mark { time_us, interval_ms, batch }
        }),
        1 => Just(Record::End),
    ];
    let start = Record::Start {
        run_id: 1,
        files: vec![JournalFile {
            file_id: 0,
            role: FileRole::Data,
            path: "/d/f0".into(),
            max_pages: Some(256),
        }],
    };
    prop::collection::vec(record, 0..24).prop_map(move |rs| {
        let mut b = start.encode();
        rs.iter().for_each(|r| b.extend(r.encode()));
        b
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn the_ini_reader_returns_a_result_or_an_error(b in input(configs())) {
        ini(&b);
    }

    #[test]
    fn the_journal_reader_returns_a_state(b in input(corpus(&["tests/fuzz_corpus/sqliosim.journal"]))) {
        journal(&b);
    }

    #[test]
    fn whole_journal_records_saying_anything_replay_within_bounds(b in records()) {
        journal(&b);
    }

    #[test]
    fn the_header_reader_returns_a_header_or_an_error(
        b in input(corpus(&["tests/fuzz_corpus/data.header", "tests/fuzz_corpus/log.header"]))
    ) {
        header(&b);
    }

    #[test]
    fn the_xml_log_reader_returns_a_result_or_an_error(
        b in input(corpus(&["tests/fuzz_corpus/run.log.xml"]))
    ) {
        report(&b, "run.log.xml");
    }

    #[test]
    fn the_json_summary_reader_returns_a_result_or_an_error(
        b in input(corpus(&["tests/fuzz_corpus/run.log.json"]))
    ) {
        report(&b, "run.log.json");
    }
}

#[test]
fn the_corpus_is_read_as_what_it_is() {
    let [j, h, l, x, s] = [
        "sqliosim.journal",
        "data.header",
        "log.header",
        "run.log.xml",
        "run.log.json",
    ]
    .map(|n| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fuzz_corpus")
            .join(n)
    });
    let st = JournalState::load(&sqliosim::io::BufferedBackend::new(), &j).expect("journal");
    assert!(
        st.clean && st.damage.is_none() && st.files.len() == 2,
        "{st:?}"
    );
    assert!(st.files.iter().all(|f| f.max_pages.is_some()));
    let read = |p: &Path| std::fs::read(p).expect("read");
    assert_eq!(
        FileHeader::decode(&read(&h)).map(|h| h.role),
        Ok(FileRole::Data)
    );
    assert_eq!(
        FileHeader::decode(&read(&l)).map(|h| h.role),
        Ok(FileRole::Log)
    );
    for p in [x, s] {
        let r = load::load(&p).expect("report reads it");
        assert!(r.complete && r.integrity_errors() == 0, "{}", p.display());
    }
    for c in configs() {
        assert!(parse(&String::from_utf8_lossy(&c), "c.ini", &host()).is_ok());
    }
}

/// What the coverage-guided fuzzer (`fuzz/`, cargo-fuzz) found, kept in fuzz/regressions/, and
/// its seed corpus, replayed through the same entry point (`sqliosim::fuzzing::read`): each
/// returns, within the allocation bound. fuzz/regressions/backup-block-head-shorter-than-a-header
/// panicked before `read_head` checked the length it was given ("range end index 516 out of
/// range for slice of length 512").
#[test]
fn what_the_fuzzer_found_and_its_seeds_are_read_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut regressions = 0;
    for dir in ["fuzz/regressions", "fuzz/corpus/readers"] {
        let mut names: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|e| e.expect("an entry").path())
            .collect();
        names.sort();
        for path in names {
            let bytes = std::fs::read(&path).expect("read");
            let name = path.display().to_string();
            bounded(bytes.len(), &name, || sqliosim::fuzzing::read(&bytes));
            regressions += usize::from(dir == "fuzz/regressions");
        }
    }
    assert!(regressions >= 1, "fuzz/regressions/ is empty");
}
