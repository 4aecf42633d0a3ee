//! Names the tool creates, planted by someone else (issue #20 §2, docs/security.md): for every
//! name `run`, `verify`, `restore`, `report`, `bench` and `man` create or write, in a mode-0777
//! non-sticky directory owned by `nobody`, a symlink to a root-owned victim, a hard link to
//! it, a FIFO and a directory are planted in turn; the tool, run as root, must leave the victim
//! byte for byte as it was, exit 2 within a bounded time (a FIFO must not hang it) and name the
//! planted path. Also: FIFOs given to read, the report's walk over FIFOs and symlink loops,
//! the XML log swapped for a symlink between a check and a write, and the run header's word
//! about an exposed `--dir`.
//!
//! Needs root (to own the victims and run as the burn-in host does); skipped otherwise, unless
//! SQLIOSIM_REQUIRE_LOOP=1 (as in CI), which makes it fail instead. HOSTILE_BIN runs another
//! sqliosim binary through the same table (how the before/after list in docs/security.md was
//! made).

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub(super) const NOBODY: u32 = 65534;
/// A run that hangs this long on a planted name has failed.
pub(super) const TIMEOUT: Duration = Duration::from_secs(20);
const PLAIN: &[u8] = b"a root-owned file: <SQLIOSIM_LOG> sqliosim-summary/1\n";

pub(super) fn bin() -> PathBuf {
    std::env::var_os("HOSTILE_BIN")
        .map_or_else(|| env!("CARGO_BIN_EXE_sqliosim").into(), PathBuf::from)
}

pub(super) fn is_root() -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    assert!(
        std::env::var_os("SQLIOSIM_REQUIRE_LOOP").is_none(),
        "SQLIOSIM_REQUIRE_LOOP is set: the hostile-name tests need root"
    );
    eprintln!("skipped: the hostile-name tests need root");
    false
}

/// Runs `args`; kills the process after [`TIMEOUT`] (`None`: it hung).
pub(super) fn run(args: &[OsString]) -> Option<Output> {
    let mut cmd = Command::new(bin());
    cmd.args(args);
    run_cmd(cmd)
}

/// Runs `cmd` as [`run`] does.
pub(super) fn run_cmd(mut cmd: Command) -> Option<Output> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sqliosim");
    let t = Instant::now();
    while child.try_wait().expect("try_wait").is_none() {
        if t.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(child.wait_with_output().expect("output"))
}

pub(super) fn chown(p: &Path) {
    std::os::unix::fs::lchown(p, Some(NOBODY), Some(NOBODY)).expect("lchown");
}

/// A directory as the attacker made it: theirs, mode 0777, no sticky bit.
pub(super) fn shared_dir(p: &Path) {
    std::fs::create_dir_all(p).expect("mkdir");
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    chown(p);
}

const CONFIG: &str = "[CONFIG]\nStopOnError=TRUE\nTestCycles=1\nTestCycleDuration=1\nMaxMemoryMB=4\nDeleteFilesAtStartup={DEL}\n\
    [RandomUser]\nUserCount=1\nMinIOChainLength=4\nMaxIOChainLength=8\nSleepAfter=1\n\
    [AuditUser]\nUserCount=1\nAuditDelay=10\n[ReadAheadUser]\nUserCount=0\n[BulkUpdateUser]\nUserCount=0\n\
    [BackupUser]\nUserCount=1\nMaxTransferSize=65536\nBackupDelay=100\nRestoreAfterBackup=TRUE\nLogBackupInterval=100\n\
    [SortUser]\nUserCount=1\nRunPages=8\nTempFileSize=1\nSortDelay=10\n\
    [CheckDbUser]\nUserCount=1\nCheckDelay=100\n\
    [File1]\nFileName=sqliosim.mdx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
    [File2]\nFileName=sqliosim.ldx\nInitialSize=1\nMaxSize=1\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";

/// What every case shares: the configurations, and the victims in a root-only directory — a
/// plain file, a directory, and the whole evidence of a genuine earlier run (`REF`).
pub(super) struct Fixture {
    _base: tempfile::TempDir,
    pub(super) base: PathBuf,
    pub(super) private: PathBuf,
    pub(super) reference: PathBuf,
}

pub(super) fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let t = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let base = t.path().to_path_buf();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let private = base.join("private");
        std::fs::create_dir(&private).expect("mkdir");
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        std::fs::write(private.join("plain"), PLAIN).expect("victim");
        std::fs::create_dir(private.join("victimdir")).expect("mkdir");
        std::fs::write(private.join("victimdir/inside"), PLAIN).expect("victim");
        for (name, del) in [("cfg.ini", "TRUE"), ("keep.ini", "FALSE")] {
            std::fs::write(private.join(name), CONFIG.replace("{DEL}", del)).expect("config");
        }
        let reference = private.join("ref");
        let f = Fixture {
            _base: t,
            base,
            private,
            reference,
        };
        let out = run(&f.args(
            &[
                "run",
                "--config",
                "{P}/cfg.ini",
                "--dir",
                "{R}",
                "--duration",
                "1",
                "--seed",
                "1",
            ],
            &f.reference,
        ))
        .expect("the reference run ends");
        assert_eq!(
            out.status.code(),
            Some(0),
            "reference run: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bench = f.args(
            &[
                "bench",
                "--file",
                "{P}/bench.dat",
                "--size",
                "2M",
                "--duration",
                "1",
            ],
            &f.reference,
        );
        assert_eq!(
            run(&bench).expect("bench ends").status.code(),
            Some(0),
            "reference bench"
        );
        f
    })
}

impl Fixture {
    /// `args` with {S} (the case's directory), {P} (the private one) and {R} (the reference
    /// run's) filled in.
    pub(super) fn args(&self, args: &[&str], s: &Path) -> Vec<OsString> {
        args.iter()
            .map(|a| {
                a.replace("{S}", &s.to_string_lossy())
                    .replace("{P}", &self.private.to_string_lossy())
                    .replace("{R}", &self.reference.to_string_lossy())
                    .into()
            })
            .collect()
    }

    fn victim(&self, v: Victim) -> PathBuf {
        match v {
            Victim::Plain => self.private.join("plain"),
            Victim::Ref(name) => self.reference.join(name),
            Victim::Dir => self.private.join("victimdir"),
        }
    }
}

/// What a planted symlink or hard link points at.
#[derive(Debug, Clone, Copy)]
enum Victim {
    /// A root-owned file that is nothing of sqliosim's.
    Plain,
    /// A file of another (genuine) run.
    Ref(&'static str),
    /// A root-owned directory (for names the tool makes directories of).
    Dir,
}

/// What the case directory holds before the name is planted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Prep {
    Empty,
    /// A copy of the reference run's file set and its finished streams (for `verify`).
    Set,
    /// The same, page 1 of the data file corrupted, and dumps/ ours (root, mode 0777).
    Corrupt,
    /// The reference run's JSON summary as `in.json` (a `report` input).
    Results,
    /// The reference run's backup stream as `sqliosim.bak` (a `restore` input).
    Stream,
    /// A subdirectory the attacker made (`--journal-dir`, `man --out`).
    Sub(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Plant {
    Symlink,
    HardLink,
    Fifo,
    Dir,
}

pub(super) const PLANTS: [Plant; 4] = [Plant::Symlink, Plant::HardLink, Plant::Fifo, Plant::Dir];

struct Case {
    what: &'static str,
    name: &'static str,
    victim: Victim,
    prep: Prep,
    args: &'static [&'static str],
    /// The exit status expected (2: refused; 0: the name is not the tool's to touch).
    code: i32,
}

const fn case(
    what: &'static str,
    name: &'static str,
    victim: Victim,
    prep: Prep,
    args: &'static [&'static str],
) -> Case {
    Case {
        what,
        name,
        victim,
        prep,
        args,
        code: 2,
    }
}

macro_rules! run_args {
    ($($x:literal),*) => { &["run", "--config", "{P}/cfg.ini", "--dir", "{S}", "--duration", "1", "--seed", "7" $(, $x)*] };
}
macro_rules! verify_args {
    ($($x:literal),*) => { &["verify", "--dir", "{S}" $(, $x)*] };
}
const KEEP_RUN: &[&str] = &[
    "run",
    "--config",
    "{P}/keep.ini",
    "--dir",
    "{S}",
    "--duration",
    "1",
    "--seed",
    "7",
];
macro_rules! bench_args {
    ($($x:literal),*) => { &["bench", "--file", "{P}/bench.dat", "--size", "2M", "--duration", "1" $(, $x)*] };
}

const RUN_CASES: &[Case] = &[
    case(
        "run: lock file",
        "sqliosim.mdx.lock",
        Victim::Plain,
        Prep::Empty,
        run_args!(),
    ),
    case(
        "run: journal",
        "sqliosim.journal",
        Victim::Ref("sqliosim.journal"),
        Prep::Empty,
        run_args!(),
    ),
    case(
        "run --journal-dir: journal",
        "j/sqliosim.journal",
        Victim::Ref("sqliosim.journal"),
        Prep::Sub("j"),
        run_args!("--journal-dir", "{S}/j"),
    ),
    case(
        "run: backup stream",
        "sqliosim.bak",
        Victim::Ref("sqliosim.bak"),
        Prep::Empty,
        run_args!(),
    ),
    case(
        "run: backup in progress",
        "sqliosim.bak.partial",
        Victim::Ref("sqliosim.bak"),
        Prep::Empty,
        run_args!(),
    ),
    case(
        "run: log backup stream",
        "sqliosim.trn",
        Victim::Ref("sqliosim.trn"),
        Prep::Empty,
        run_args!(),
    ),
    case(
        "run: log backup in progress",
        "sqliosim.trn.partial",
        Victim::Ref("sqliosim.trn"),
        Prep::Empty,
        run_args!(),
    ),
    case(
        "run: restored copy",
        "sqliosim.mdx.restored",
        Victim::Ref("sqliosim.mdx"),
        Prep::Empty,
        run_args!(),
    ),
    case(
        "run: Sort User's tempdb file",
        "sqliosim.mdx.sort0",
        Victim::Ref("sqliosim.mdx"),
        Prep::Empty,
        run_args!(),
    ),
    case(
        "run: DBCC User's snapshot file",
        "sqliosim.mdx_MSSQL_DBCC0",
        Victim::Ref("sqliosim.mdx"),
        Prep::Empty,
        run_args!(),
    ),
    case(
        "run: stylesheet",
        "ErrorLog.xslt",
        Victim::Plain,
        Prep::Empty,
        run_args!(),
    ),
    case(
        "run: the XML log's HTML view",
        "sqliosim.log.html",
        Victim::Plain,
        Prep::Empty,
        run_args!(),
    ),
    case(
        "run: XML log",
        "sqliosim.log.xml",
        Victim::Ref("sqliosim.log.xml"),
        Prep::Empty,
        run_args!(),
    ),
    case(
        "run: JSON summary",
        "sqliosim.log.json",
        Victim::Ref("sqliosim.log.json"),
        Prep::Empty,
        run_args!(),
    ),
    // A random temporary name now: the old fixed one, planted, is passed over.
    Case {
        code: 0,
        ..case(
            "run: JSON temporary",
            ".sqliosim.log.json.tmp",
            Victim::Plain,
            Prep::Empty,
            run_args!(),
        )
    },
    case(
        "run --json",
        "out.json",
        Victim::Ref("sqliosim.log.json"),
        Prep::Empty,
        run_args!("--json", "{S}/out.json"),
    ),
    // A random temporary name now: the old fixed one, planted, is passed over.
    Case {
        code: 0,
        ..case(
            "run --json: temporary",
            ".out.json.tmp",
            Victim::Plain,
            Prep::Empty,
            run_args!("--json", "{S}/out.json"),
        )
    },
    case(
        "run --bundle",
        "b.tar.gz",
        Victim::Plain,
        Prep::Empty,
        run_args!("--bundle", "{S}/b.tar.gz"),
    ),
    case(
        "run --metrics-textfile",
        "m.prom",
        Victim::Plain,
        Prep::Empty,
        run_args!("--metrics-textfile", "{S}/m.prom"),
    ),
    case(
        "run --save",
        "saved.ini",
        Victim::Plain,
        Prep::Empty,
        run_args!("--save", "{S}/saved.ini"),
    ),
    case(
        "run: dumps/",
        "dumps",
        Victim::Dir,
        Prep::Empty,
        run_args!("--fault-injection", "flip@1"),
    ),
    case(
        "run, DeleteFilesAtStartup=FALSE: data file",
        "sqliosim.mdx",
        Victim::Ref("sqliosim.mdx"),
        Prep::Empty,
        KEEP_RUN,
    ),
    case(
        "run, DeleteFilesAtStartup=FALSE: log file",
        "sqliosim.ldx",
        Victim::Ref("sqliosim.ldx"),
        Prep::Empty,
        KEEP_RUN,
    ),
];

const VERIFY_CASES: &[Case] = &[
    case(
        "verify: lock file",
        "sqliosim.mdx.lock",
        Victim::Plain,
        Prep::Set,
        verify_args!(),
    ),
    Case {
        code: 0,
        ..case(
            "verify: default log (not written)",
            "sqliosim.verify.log.xml",
            Victim::Plain,
            Prep::Set,
            verify_args!(),
        )
    },
    case(
        "verify --log",
        "v.log.xml",
        Victim::Ref("sqliosim.log.xml"),
        Prep::Set,
        verify_args!("--log", "{S}/v.log.xml"),
    ),
    case(
        "verify --log: stylesheet",
        "ErrorLog.xslt",
        Victim::Plain,
        Prep::Set,
        verify_args!("--log", "{S}/v.log.xml"),
    ),
    case(
        "verify --log: its HTML view",
        "v.log.html",
        Victim::Plain,
        Prep::Set,
        verify_args!("--log", "{S}/v.log.xml"),
    ),
    case(
        "verify --json",
        "v.json",
        Victim::Ref("sqliosim.log.json"),
        Prep::Set,
        verify_args!("--json", "{S}/v.json"),
    ),
    // A random temporary name now: the old fixed one, planted, is passed over.
    Case {
        code: 0,
        ..case(
            "verify --json: temporary",
            ".v.json.tmp",
            Victim::Plain,
            Prep::Set,
            verify_args!("--json", "{S}/v.json"),
        )
    },
    case(
        "verify --log: dumps/",
        "dumps",
        Victim::Dir,
        Prep::Set,
        verify_args!("--log", "{S}/v.log.xml"),
    ),
    // No row for a dump file: dumps go into a per-process directory (dumps/verify-RUNID/,
    // dumps/RUNID/) that the tool makes itself and refuses unless it is its own, so no name
    // in it can be planted beforehand; the dumps/ rows cover planting the directory.
];

const OUTPUT_CASES: &[Case] = &[
    case(
        "report --html",
        "r.html",
        Victim::Plain,
        Prep::Results,
        &["report", "{S}/in.json", "--html", "{S}/r.html"],
    ),
    case(
        "report --json",
        "r.json",
        Victim::Plain,
        Prep::Results,
        &["report", "{S}/in.json", "--json", "{S}/r.json"],
    ),
    case(
        "report --junit",
        "r.xml",
        Victim::Plain,
        Prep::Results,
        &["report", "{S}/in.json", "--junit", "{S}/r.xml"],
    ),
    case(
        "report --bundle",
        "r.tar.gz",
        Victim::Plain,
        Prep::Results,
        &["report", "{S}/in.json", "--bundle", "{S}/r.tar.gz"],
    ),
    case(
        "report DIR --html",
        "r.html",
        Victim::Plain,
        Prep::Results,
        &["report", "{S}", "--html", "{S}/r.html"],
    ),
    case(
        "bench --file --rw write --force",
        "bench.dat",
        Victim::Plain,
        Prep::Empty,
        &[
            "bench",
            "--file",
            "{S}/bench.dat",
            "--size",
            "2M",
            "--duration",
            "1",
            "--rw",
            "write",
            "--force",
        ],
    ),
    case(
        "bench --json",
        "b.json",
        Victim::Plain,
        Prep::Empty,
        bench_args!("--json", "{S}/b.json"),
    ),
    case(
        "bench --csv",
        "b.csv",
        Victim::Plain,
        Prep::Empty,
        bench_args!("--csv", "{S}/b.csv"),
    ),
    case(
        "bench --html",
        "b.html",
        Victim::Plain,
        Prep::Empty,
        bench_args!("--html", "{S}/b.html"),
    ),
    case(
        "restore: copy",
        "sqliosim.bak.file0.restored",
        Victim::Ref("sqliosim.mdx"),
        Prep::Empty,
        &["restore", "{R}/sqliosim.bak", "--to", "{S}"],
    ),
    case(
        "restore: copy beside the stream",
        "sqliosim.bak.file0.restored",
        Victim::Plain,
        Prep::Stream,
        &["restore", "{S}/sqliosim.bak"],
    ),
    case(
        "restore --json",
        "r.json",
        Victim::Ref("sqliosim.log.json"),
        Prep::Empty,
        &[
            "restore",
            "{R}/sqliosim.bak",
            "--to",
            "{S}",
            "--json",
            "{S}/r.json",
        ],
    ),
    case(
        "man --out",
        "man/sqliosim.1",
        Victim::Plain,
        Prep::Sub("man"),
        &["man", "--out", "{S}/man"],
    ),
];

/// The content of a victim: a file's bytes, or a directory's names and files' bytes.
pub(super) fn snapshot(p: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    if p.is_dir() {
        let mut v: Vec<_> = std::fs::read_dir(p)
            .expect("list victim")
            .map(|e| {
                let p = e.expect("entry").path();
                let bytes = std::fs::read(&p).unwrap_or_default();
                (p, bytes)
            })
            .collect();
        v.sort();
        v
    } else {
        vec![(p.to_path_buf(), std::fs::read(p).expect("read victim"))]
    }
}

pub(super) fn prepare(f: &Fixture, s: &Path, prep: Prep) {
    shared_dir(s);
    let copy = |name: &str, to: &str| {
        std::fs::copy(f.reference.join(name), s.join(to)).expect("copy");
    };
    match prep {
        Prep::Empty => {}
        Prep::Set | Prep::Corrupt => {
            for n in ["sqliosim.mdx", "sqliosim.ldx", "sqliosim.journal"] {
                copy(n, n);
            }
            // The finished streams the journal holds are owed in the copy too (a copy is
            // judged alone, never by the reference directory's streams).
            for n in ["sqliosim.bak", "sqliosim.trn"] {
                if f.reference.join(n).exists() {
                    copy(n, n);
                }
            }
        }
        Prep::Results => copy("sqliosim.log.json", "in.json"),
        Prep::Stream => copy("sqliosim.bak", "sqliosim.bak"),
        Prep::Sub(d) => shared_dir(&s.join(d)),
    }
    if prep == Prep::Corrupt {
        use std::os::unix::fs::FileExt;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(s.join("sqliosim.mdx"))
            .expect("open");
        file.write_all_at(&[0x5a; 64], 8192 + 100)
            .expect("corrupt page 1");
        let dumps = s.join("dumps");
        std::fs::create_dir(&dumps).expect("mkdir");
        std::fs::set_permissions(&dumps, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    }
}

/// Plants `kind` at `at`, pointing at `victim`.
pub(super) fn plant(at: &Path, kind: Plant, victim: &Path) {
    match kind {
        Plant::Symlink => std::os::unix::fs::symlink(victim, at).expect("symlink"),
        // A directory cannot be hard-linked: a hard link to a plain file stands in its place.
        Plant::HardLink if victim.is_dir() => {
            std::fs::hard_link(victim.join("inside"), at).expect("link")
        }
        Plant::HardLink => std::fs::hard_link(victim, at).expect("link"),
        Plant::Fifo => rustix::fs::mknodat(
            rustix::fs::CWD,
            at,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o666),
            0,
        )
        .expect("mkfifo"),
        Plant::Dir => std::fs::create_dir(at).expect("mkdir"),
    }
    if kind != Plant::HardLink {
        chown(at);
    }
}

/// Runs every case with every plant; returns one line per failure.
fn check(cases: &[Case], tag: &str) -> Vec<String> {
    let f = fixture();
    let mut failed = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        for kind in PLANTS {
            let s = f.base.join(format!("{tag}{i}-{kind:?}"));
            prepare(f, &s, c.prep);
            let at = s.join(c.name);
            let victim = f.victim(c.victim);
            let before = snapshot(&victim);
            plant(&at, kind, &victim);
            let out = run(&f.args(c.args, &s));
            let mut wrong = Vec::new();
            if snapshot(&victim) != before {
                wrong.push("the victim was changed".to_string());
            }
            match &out {
                None => wrong.push(format!("hung ({} s, killed)", TIMEOUT.as_secs())),
                Some(o) => {
                    let err = String::from_utf8_lossy(&o.stderr);
                    if o.status.code() != Some(c.code) {
                        wrong.push(format!("exit {:?}, not {}", o.status.code(), c.code));
                    }
                    if c.code == 2 && !err.contains(&*at.to_string_lossy()) {
                        wrong.push(format!(
                            "stderr does not name {}: {}",
                            at.display(),
                            err.trim()
                        ));
                    }
                }
            }
            if !wrong.is_empty() {
                failed.push(format!(
                    "{} ({}, {kind:?}): {}",
                    c.what,
                    c.name,
                    wrong.join("; ")
                ));
            }
            let _ = std::fs::remove_dir_all(&s);
        }
    }
    failed
}

pub(super) fn assert_none(failed: Vec<String>) {
    assert!(
        failed.is_empty(),
        "{} case(s) failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn run_names_planted() {
    if is_root() {
        assert_none(check(RUN_CASES, "run"));
    }
}

#[test]
fn verify_names_planted() {
    if is_root() {
        assert_none(check(VERIFY_CASES, "verify"));
    }
}

#[test]
fn report_bench_and_man_outputs_planted() {
    if is_root() {
        assert_none(check(OUTPUT_CASES, "out"));
    }
}

/// FIFOs under names the tool reads: refused at once, not waited on.
#[test]
fn fifos_given_to_read_are_refused_not_waited_on() {
    if !is_root() {
        return;
    }
    let f = fixture();
    let cases: &[(&str, &str, Prep, &[&str])] = &[
        (
            "verify: journal",
            "sqliosim.journal",
            Prep::Set,
            verify_args!(),
        ),
        (
            "report: input",
            "in.json",
            Prep::Empty,
            &["report", "{S}/in.json"],
        ),
        (
            "run --config",
            "c.ini",
            Prep::Empty,
            &["run", "--config", "{S}/c.ini", "--dir", "{S}"],
        ),
        (
            "restore: stream",
            "s.bak",
            Prep::Empty,
            &["restore", "{S}/s.bak"],
        ),
        (
            "bench --file, read",
            "b.dat",
            Prep::Empty,
            &[
                "bench",
                "--file",
                "{S}/b.dat",
                "--size",
                "2M",
                "--duration",
                "1",
            ],
        ),
    ];
    let mut failed = Vec::new();
    for (i, (what, name, prep, args)) in cases.iter().enumerate() {
        let s = f.base.join(format!("fifo{i}"));
        prepare(f, &s, *prep);
        let at = s.join(name);
        let _ = std::fs::remove_file(&at);
        plant(&at, Plant::Fifo, &at);
        match run(&f.args(args, &s)) {
            None => failed.push(format!("{what}: hung")),
            Some(o) => {
                let err = String::from_utf8_lossy(&o.stderr);
                if o.status.code() != Some(2) || !err.contains(&*at.to_string_lossy()) {
                    failed.push(format!(
                        "{what}: exit {:?}: {}",
                        o.status.code(),
                        err.trim()
                    ));
                }
            }
        }
    }
    assert_none(failed);
}

/// A results directory with a FIFO `*.json` and two symlinks back to itself: the fleet report
/// reads the one real result and ends.
#[test]
fn the_report_walk_skips_fifos_and_symlink_loops() {
    if !is_root() {
        return;
    }
    let f = fixture();
    let s = f.base.join("walk");
    prepare(f, &s, Prep::Results);
    plant(&s.join("stalls.json"), Plant::Fifo, &s);
    std::os::unix::fs::symlink(&s, s.join("loop1")).expect("symlink");
    std::os::unix::fs::symlink(&s, s.join("loop2")).expect("symlink");
    let out = run(&f.args(&["report", "{S}"], &s)).expect("the report ends");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("1 run"), "one run read: {text}");
}

/// The XML log of an earlier run (root's, sqliosim's) swapped for a symlink to a victim that
/// is not a log, over and over, while runs start: no attempt writes the victim.
#[test]
fn the_xml_log_swapped_for_a_symlink_never_writes_the_victim() {
    use std::sync::atomic::{AtomicBool, Ordering};
    if !is_root() {
        return;
    }
    let f = fixture();
    let s = f.base.join("swap");
    prepare(f, &s, Prep::Empty);
    let victim = f.private.join("race-victim");
    std::fs::write(&victim, b"not a log\n").expect("victim");
    let log = s.join("sqliosim.log.xml");
    std::fs::copy(f.reference.join("sqliosim.log.xml"), &log).expect("copy");
    // The run stops right after its log: a directory where its stylesheet goes.
    plant(&s.join("ErrorLog.xslt"), Plant::Dir, &s);
    let stop = AtomicBool::new(false);
    /// Stops the attacker also when an attempt fails (a panic inside the scope).
    struct Stop<'a>(&'a AtomicBool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    std::thread::scope(|sc| {
        let _stop = Stop(&stop);
        sc.spawn(|| {
            let real = s.join("real.xml");
            // Busy waits, not sleeps: the window between a check and a write is microseconds.
            let spin = |us: u64| {
                let t = Instant::now();
                while t.elapsed() < Duration::from_micros(us) {
                    std::hint::spin_loop();
                }
            };
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                if std::fs::rename(&log, &real).is_ok() {
                    let _ = std::os::unix::fs::symlink(&victim, &log);
                    spin(20 + n % 7 * 15);
                    let _ = std::fs::remove_file(&log);
                    let _ = std::fs::rename(&real, &log);
                }
                spin(20 + n % 5 * 20);
            }
        });
        for attempt in 0..40 {
            let out = run(&f.args(run_args!(), &s));
            assert!(out.is_some(), "attempt {attempt} hung");
            assert_eq!(
                std::fs::read(&victim).expect("victim"),
                b"not a log\n",
                "attempt {attempt}"
            );
        }
        stop.store(true, Ordering::Relaxed);
    });
}

/// `--dir` given as a symlink to a directory every user can write: the run header says both.
#[test]
fn the_header_says_when_the_directory_is_exposed() {
    if !is_root() {
        return;
    }
    let f = fixture();
    let s = f.base.join("exposed");
    prepare(f, &s, Prep::Empty);
    let link = f.private.join("link-to-exposed");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&s, &link).expect("symlink");
    let out = run(&f.args(
        &[
            "run",
            "--config",
            "{P}/cfg.ini",
            "--dir",
            "{P}/link-to-exposed",
            "--duration",
            "1",
        ],
        &s,
    ))
    .expect("the run ends");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("{} is a symlink", link.display())),
        "{text}"
    );
    assert!(
        text.contains(&format!("{} is writable by every user", s.display())),
        "{text}"
    );
    assert!(
        text.contains(&format!("{} is owned by uid {NOBODY}", s.display())),
        "{text}"
    );
}

/// A directory entry as `lstat` sees it (a symlink not followed): inode, type and, for a
/// symlink, where it points. A rename over the entry changes all of them.
pub(super) fn entry_of(p: &Path) -> (u64, std::fs::FileType, Option<PathBuf>) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(p).expect("the planted entry is still there");
    (m.ino(), m.file_type(), std::fs::read_link(p).ok())
}

/// The run id of a run's JSON summary, as the names of its kept evidence carry it.
pub(super) fn run_tag(json: &Path) -> String {
    let text = std::fs::read_to_string(json).expect("the run's JSON summary");
    let at = text.find("\"run_id\":").expect("a run_id") + "\"run_id\":".len();
    let id: u64 = text[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .expect("a numeric run_id");
    format!("{id:016X}")
}

/// The evidence a rerun keeps is moved or copied aside under names of the old run's id: the
/// log and summary of a run that found corruption (`sqliosim.log.RUNID.xml`, `.json`), and a
/// damaged journal before a resume replaces it (`sqliosim.RUNID.journal`). Planted under those
/// names, a symlink (to the victim, or to nothing), a hard link, a FIFO or a directory must
/// stay exactly as planted — a rename must never replace another user's entry — and the
/// evidence go to the next free name, which the note names.
#[test]
fn evidence_kept_aside_never_replaces_a_planted_name() {
    if !is_root() {
        return;
    }
    let f = fixture();
    let victim = f.victim(Victim::Plain);
    let nowhere = f.private.join("nowhere");
    let mut failed = Vec::new();
    for kind in PLANTS.iter().map(Some).chain([None]) {
        let label = kind.map_or("DanglingSymlink".to_string(), |k| format!("{k:?}"));
        let plant_at = |at: &Path| match kind {
            Some(k) => plant(at, *k, &victim),
            None => {
                std::os::unix::fs::symlink(&nowhere, at).expect("symlink");
                chown(at);
            }
        };
        let before = snapshot(&victim);

        // A run that found corruption, then the same command again.
        let s = f.base.join(format!("aside-{label}"));
        prepare(f, &s, Prep::Empty);
        let first = run(&f.args(run_args!("--fault-injection", "flip@1"), &s)).expect("ends");
        assert_eq!(first.status.code(), Some(1), "the first run finds the flip");
        let tag = run_tag(&s.join("sqliosim.log.json"));
        let log = std::fs::read(s.join("sqliosim.log.xml")).expect("the first run's log");
        let names = [
            format!("sqliosim.log.{tag}.xml"),
            format!("sqliosim.log.{tag}.json"),
        ];
        for n in &names {
            plant_at(&s.join(n));
        }
        let planted: Vec<_> = names.iter().map(|n| entry_of(&s.join(n))).collect();
        let second = run(&f.args(run_args!(), &s)).expect("the rerun ends");
        let said = String::from_utf8_lossy(&second.stderr).into_owned();
        let now: Vec<_> = names.iter().map(|n| entry_of(&s.join(n))).collect();
        let kept = s.join(format!("sqliosim.log.{tag}-2.xml"));
        if now != planted {
            failed.push(format!(
                "{label}: the rerun replaced a planted name: {said}"
            ));
        } else if second.status.code() != Some(0) || std::fs::read(&kept).ok() != Some(log) {
            failed.push(format!(
                "{label}: the first run's log is not kept as {} (exit {:?}): {said}",
                kept.display(),
                second.status.code()
            ));
        } else if !said.contains(&*kept.to_string_lossy()) {
            failed.push(format!(
                "{label}: the note does not name {}: {said}",
                kept.display()
            ));
        }
        let _ = std::fs::remove_dir_all(&s);

        // A clean run, its journal damaged after its Start, then a resume.
        let s = f.base.join(format!("aside-journal-{label}"));
        prepare(f, &s, Prep::Empty);
        let first = run(&f.args(run_args!(), &s)).expect("ends");
        assert_eq!(first.status.code(), Some(0), "the first run is clean");
        let tag = run_tag(&s.join("sqliosim.log.json"));
        let journal = s.join("sqliosim.journal");
        let mut bytes = std::fs::read(&journal).expect("journal");
        let start = 20 + u32::from_le_bytes(bytes[12..16].try_into().expect("len")) as usize;
        assert!(bytes.len() > start + 64, "records after the Start");
        bytes[start..start + 16].fill(0xA5);
        std::fs::write(&journal, &bytes).expect("damage the journal");
        let name = format!("sqliosim.{tag}.journal");
        plant_at(&s.join(&name));
        let planted = entry_of(&s.join(&name));
        let resume = run(&f.args(run_args!("--resume"), &s)).expect("the resume ends");
        let said = String::from_utf8_lossy(&resume.stderr).into_owned();
        let kept = s.join(format!("sqliosim.{tag}-2.journal"));
        if entry_of(&s.join(&name)) != planted {
            failed.push(format!(
                "{label}: the resume replaced a planted name: {said}"
            ));
        } else if std::fs::read(&kept).ok() != Some(bytes) {
            failed.push(format!(
                "{label}: the damaged journal is not kept as {} (exit {:?}): {said}",
                kept.display(),
                resume.status.code()
            ));
        }
        let _ = std::fs::remove_dir_all(&s);
        if snapshot(&victim) != before {
            failed.push(format!("{label}: the victim was changed"));
        }
    }
    assert_none(failed);
}

/// The engine probe (issue #24 §3) reads a file of its own when no data file exists yet. It
/// was written at `.sqliosim-engine-probe.PID` in the directory and that name removed
/// afterwards, whatever held it: a name planted there (its PID is the process's, so the
/// attacker plants it for the coming PIDs; here the shell plants it for its own, then execs)
/// was unlinked by root, and a planted regular file was opened for writing. The probe file has
/// no name now (`O_TMPFILE`): the planted entries stay exactly as they were, the victim too,
/// and the run goes on.
#[test]
fn the_engine_probe_never_removes_nor_writes_a_planted_name() {
    if !is_root() {
        return;
    }
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, PLAIN).expect("victim");
    let config = tmp.path().join("probe.cfg.ini");
    std::fs::write(
        &config,
        "[CONFIG]\nTestCycles=1\nTestCycleDuration=1\nMaxMemoryMB=4\n\
         [RandomUser]\nUserCount=1\n[AuditUser]\nUserCount=0\n[ReadAheadUser]\nUserCount=0\n[BulkUpdateUser]\nUserCount=0\n\
         [File1]\nFileName=sqliosim.mdx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
         [File2]\nFileName=sqliosim.ldx\nInitialSize=1\nMaxSize=1\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n",
    )
    .expect("config");
    for (tag, kind) in [
        ("symlink", "ln -s {VICTIM} {P}"),
        ("file", "printf theirs > {P}"),
    ] {
        let dir = tmp.path().join(tag);
        shared_dir(&dir);
        let p = format!("{}/.sqliosim-engine-probe.$$", dir.display());
        let plant = kind
            .replace("{VICTIM}", &victim.display().to_string())
            .replace("{P}", &p);
        let script = format!(
            "{plant} && chown -h {NOBODY}:{NOBODY} {p} && exec {} run --config {} --dir {} --no-json --seed 5",
            bin().display(),
            config.display(),
            dir.display()
        );
        let child = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let planted = dir.join(format!(".sqliosim-engine-probe.{}", child.id()));
        let out = child.wait_with_output().expect("wait");
        let console = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{tag}: {console}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let meta = std::fs::symlink_metadata(&planted)
            .unwrap_or_else(|_| panic!("{tag}: the planted {} was removed", planted.display()));
        match tag {
            "symlink" => {
                assert!(meta.file_type().is_symlink(), "{tag}: {meta:?}");
                assert_eq!(std::fs::read_link(&planted).expect("link"), victim);
            }
            _ => assert_eq!(std::fs::read(&planted).expect("read"), b"theirs", "{tag}"),
        }
        assert_eq!(
            std::fs::read(&victim).expect("victim"),
            PLAIN,
            "{tag}: the victim changed"
        );
    }
}
