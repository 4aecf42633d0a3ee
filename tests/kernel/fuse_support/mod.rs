//! Helpers for the end-to-end FUSE suite: build and find the faultfs binary, write a small
//! configuration, run the real `sqliosim` binary on a faultfs mount, and read back what it
//! reported — the stderr finding lines and, once it exists, the XML error log, which must agree.

pub mod report;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use faultfs::Mount;

pub use report::{findings, Reported};

/// Pages of the 8 MB data file (page 0 is the file header).
pub const DATA_PAGES: u64 = 1024;
/// Name of the data file at the mount root.
pub const DATA: &str = "sqliosim.mdx";
/// Name of the log file at the mount root.
pub const LOG: &str = "sqliosim.ldx";
/// A run that takes longer than this is hung: it is killed and the test fails.
const RUN_LIMIT: Duration = Duration::from_secs(180);
const POLL: Duration = Duration::from_millis(10);

#[path = "../../common/faultfs_bin.rs"]
mod faultfs_bin;
pub use faultfs_bin::faultfs_bin;

/// How a scenario's run is shaped.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// One request per run of pages (TRUE) or one request per page (FALSE).
    pub scatter_gather: bool,
    /// Test cycles; each ends with the audit pass that reads every page.
    pub cycles: u32,
}

impl Default for Shape {
    fn default() -> Shape {
        Shape {
            scatter_gather: false,
            cycles: 1,
        }
    }
}

/// The INI configuration: an 8 MB data file and a 2 MB log at the mount root, a read-only main
/// phase (no random writes, no bulk updates, no shrinking), so that damage done while the
/// initial update writes each page once stays on disk until the audit pass reads it.
pub fn config_text(shape: Shape) -> String {
    let sg = if shape.scatter_gather {
        "TRUE"
    } else {
        "FALSE"
    };
    format!(
        "[CONFIG]\nErrorFile=sqliosim.log.xml\nMaxMemoryMB=16\nStopOnError=FALSE\n\
         TestCycles={}\nTestCycleDuration=2\nCacheHitRatio=1000\nNoBuffering=TRUE\n\
         WriteThrough=TRUE\nMaxOutstandingIO=0\nTargetIODuration=100\nAllowIOBursts=TRUE\n\
         UseScatterGather={sg}\nForceReadAhead=TRUE\nDeleteFilesAtStartup=TRUE\n\
         DeleteFilesAtShutdown=FALSE\nStampFiles=FALSE\n\n\
         [RandomUser]\nUserCount=2\nJumpToNewRegionPercentage=500\nMinIOChainLength=8\n\
         MaxIOChainLength=64\nRandomUserReadWriteRatio=0\nMinLogPerBuffer=64\n\
         MaxLogPerBuffer=8192\nRollbackChance=100\nSleepAfter=1\n\n\
         [AuditUser]\nUserCount=1\nBuffersValidated=64\nDelayAfterCycles=2\nAuditDelay=20\n\n\
         [ReadAheadUser]\nUserCount=1\nBuffersRAMin=16\nBuffersRAMax=64\nDelayAfterCycles=2\n\
         RADelay=20\n\n\
         [BulkUpdateUser]\nUserCount=0\nBuffersBUMin=32\nBuffersBUMax=128\nDelayAfterCycles=2\n\
         BUDelay=5\n\n\
         [ShrinkUser]\nMinShrinkInterval=5\nMaxShrinkInterval=10\nMinExtends=1\nMaxExtends=4\n\n\
         [File1]\nFileName={DATA}\nInitialSize=8\nMaxSize=8\nIncrement=0\nShrinkable=FALSE\n\
         LogFile=FALSE\nSparse=FALSE\n\n\
         [File2]\nFileName={LOG}\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\n\
         LogFile=TRUE\nSparse=FALSE\n",
        shape.cycles
    )
}

/// One scenario's world: a temporary directory with the backing directory, the faultfs mount
/// over it and the configuration file (outside the mount: faultfs has no subdirectories).
pub struct Rig {
    /// The faultfs mount; dropped (unmounted) before the directory.
    pub mount: Mount,
    /// The directory faultfs passes I/O through to.
    pub backing: PathBuf,
    cfg: PathBuf,
    dir: tempfile::TempDir,
}

impl Rig {
    /// Mounts a fresh faultfs and writes the configuration for `shape`.
    pub fn new(name: &str, shape: Shape) -> Rig {
        Rig::with_daemon_args(name, shape, &[])
    }

    /// Like [`Rig::new`], with extra faultfs arguments such as `--refuse-direct`.
    pub fn with_daemon_args(name: &str, shape: Shape, args: &[&str]) -> Rig {
        let dir = tempfile::Builder::new()
            .prefix(&format!("fuse-{name}-"))
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("tempdir");
        let backing = dir.path().join("backing");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&backing).expect("mkdir backing");
        std::fs::create_dir(&mnt).expect("mkdir mnt");
        let cfg = dir.path().join("e2e.cfg.ini");
        std::fs::write(&cfg, config_text(shape)).expect("write config");
        let mount =
            Mount::start_with_args(&faultfs_bin(), &backing, &mnt, args).expect("mount faultfs");
        Rig {
            mount,
            backing,
            cfg,
            dir,
        }
    }

    /// Replaces the run's configuration file.
    pub fn set_config(&self, text: &str) {
        std::fs::write(&self.cfg, text).expect("write config");
    }

    /// The data directory of the run: the mount root.
    pub fn data_dir(&self) -> &Path {
        self.mount.mountpoint()
    }

    /// Where the XML error log (and the dumps directory beside it) go: outside the mount,
    /// since faultfs has no subdirectories.
    pub fn log_dir(&self) -> &Path {
        self.dir.path()
    }

    /// Arms a fault; panics when faultfs rejects it. Returns its id.
    pub fn inject(&self, spec: &str) -> u64 {
        self.mount
            .inject(spec)
            .unwrap_or_else(|e| panic!("inject {spec}: {e}"))
    }

    /// How many times fault `id` fired.
    pub fn fired(&self, id: u64) -> u64 {
        self.mount.fired(id).expect("faultfs status")
    }

    /// Starts `sqliosim run` with stdout and stderr going to files in the rig's directory.
    pub fn spawn(&self) -> Child {
        self.spawn_with_env(&[])
    }

    /// Like [`Rig::spawn`], with these environment variables set for the run.
    pub fn spawn_with_env(&self, env: &[(&str, &str)]) -> Child {
        self.spawn_for(2, env)
    }

    /// Like [`Rig::spawn_with_env`], the cycle `seconds` long (`-d`).
    fn spawn_for(&self, seconds: u32, env: &[(&str, &str)]) -> Child {
        let out = File::create(self.dir.path().join("stdout.txt")).expect("stdout file");
        let err = File::create(self.dir.path().join("stderr.txt")).expect("stderr file");
        Command::new(env!("CARGO_BIN_EXE_sqliosim"))
            .arg("-cfg")
            .arg(&self.cfg)
            .arg("-dir")
            .arg(self.data_dir())
            .arg("--log")
            .arg(self.log_dir().join("sqliosim.log.xml"))
            .arg("-d")
            .arg(seconds.to_string())
            .args(["--seed", "7"])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .spawn()
            .expect("start sqliosim")
    }

    /// Waits for a run started by [`Rig::spawn`]; kills it if it hangs.
    pub fn finish(&self, mut child: Child) -> Output {
        let deadline = Instant::now() + RUN_LIMIT;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for sqliosim") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("sqliosim hung on the faultfs mount; killed it");
            }
            std::thread::sleep(POLL);
        };
        Output {
            status,
            stdout: std::fs::read(self.dir.path().join("stdout.txt")).unwrap_or_default(),
            stderr: std::fs::read(self.dir.path().join("stderr.txt")).unwrap_or_default(),
        }
    }

    /// Runs `sqliosim run` to the end.
    pub fn run(&self) -> Output {
        let child = self.spawn();
        self.finish(child)
    }

    /// Runs `sqliosim run` to the end, its cycle `seconds` long.
    pub fn run_for(&self, seconds: u32) -> Output {
        let child = self.spawn_for(seconds, &[]);
        self.finish(child)
    }

    /// Runs `sqliosim run` with a long cycle until `done` holds, then stops it with SIGINT
    /// (exit 130 when it found nothing): for a test that needs something the run does at its
    /// own pace (a finished backup) however busy the machine is.
    pub fn run_until(&self, done: impl Fn(&Rig) -> bool) -> Output {
        let mut child = self.spawn_for(150, &[]);
        let deadline = Instant::now() + RUN_LIMIT;
        while !done(self) {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("sqliosim ended ({status}) before the awaited state");
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the awaited state never came; killed the run");
            }
            std::thread::sleep(POLL);
        }
        rustix::process::kill_process(
            rustix::process::Pid::from_child(&child),
            rustix::process::Signal::INT,
        )
        .expect("SIGINT the run");
        self.finish(child)
    }

    /// Waits until the (first) initial update has written the last data page, as seen in the
    /// backing file: every page has then been written once.
    pub fn wait_initial_update(&self, child: &mut Child) {
        let path = self.backing.join(DATA);
        let deadline = Instant::now() + RUN_LIMIT;
        while !page_written(&path, DATA_PAGES - 1) {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("sqliosim ended ({status}) before its initial update was seen");
            }
            assert!(Instant::now() < deadline, "the initial update never ended");
            std::thread::sleep(POLL);
        }
    }
}

/// True when `page` of the file at `path` holds something other than zeros.
pub fn page_written(path: &Path, page: u64) -> bool {
    let Ok(f) = File::open(path) else {
        return false;
    };
    let mut buf = vec![0u8; 8192];
    matches!(f.read_at(&mut buf, page * 8192), Ok(8192)) && buf.iter().any(|&b| b != 0)
}

/// The process output as text, for failure messages.
/// faultfs's `lied` listing, line by line after its heading: (file, offset, length, state),
/// the state `lost` (dropped by a power cut) or `cached` (lied about, not yet written back).
pub fn lied_ranges(reply: &str) -> Vec<(String, u64, u64, String)> {
    reply
        .lines()
        .skip(1)
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            Some((
                w.first()?.to_string(),
                w.get(1)?.parse().ok()?,
                w.get(2)?.parse().ok()?,
                w.get(3)?.to_string(),
            ))
        })
        .collect()
}

pub fn describe(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
