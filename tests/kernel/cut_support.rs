//! Cuts of the real binary from outside, for the crash-at-depth suite: start `sqliosim run`
//! with its XML log outside the device, watch the log (written entry by entry, a whole
//! document after each) for the moment a phase begins, SIGKILL the run at a seeded delay
//! after it, and read back from the log which phase the run was really in at the cut. Then the
//! steps every cut is followed by: `verify`, a short `run --resume`, `verify`, each judged
//! clean only with exit 0 and no finding printed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A run that has not reached its trigger by then is hung: the cell fails.
const TRIGGER_LIMIT: Duration = Duration::from_secs(60);
/// How long a compaction cut waits for `sqliosim.journal.new` before it cuts anyway.
pub const COMPACTION_LIMIT: Duration = Duration::from_secs(30);
/// How often the log (or the journal directory) is looked at while waiting.
const POLL: Duration = Duration::from_millis(1);

/// What a cut waits for before its delay starts.
#[derive(Debug, Clone, Copy)]
pub enum Trigger {
    /// The `n`th (from 1) appearance of this text in the run's XML log.
    Log(&'static str, usize),
    /// `sqliosim.journal.new` in the data directory: a journal compaction is being written.
    /// A run that shows none within [`COMPACTION_LIMIT`] is cut then, and the cut says so.
    Compaction,
    /// The journal holds the run's End record (written at its clean shutdown; looked for once
    /// the log shows the audit done, for a one-cycle run).
    JournalEnd,
    /// A file of this name in the data directory (a finished backup stream renamed in).
    File(&'static str),
    /// A stream with this extension kept aside under a run id (`sqliosim.RUNID.EXT`): a resume
    /// has moved the killed run's stream.
    Kept(&'static str),
}

/// Where and when one run is killed.
#[derive(Debug, Clone, Copy)]
pub struct CutAt {
    /// The moment the delay counts from.
    pub trigger: Trigger,
    /// Time from the trigger to the SIGKILL.
    pub delay: Duration,
}

/// What a cut did: what it waited for, the phase the log says the run was in, whether the run
/// had already ended by itself.
#[derive(Debug, Clone)]
pub struct Cut {
    /// The delay from the trigger to the cut.
    pub delay: Duration,
    /// The trigger as it was met ("'Phase 'main' done' #1", "journal.new seen", …).
    pub met: String,
    /// The phase at the cut, read from the log afterwards.
    pub phase: String,
    /// The run exited before the SIGKILL reached it (its exit code).
    pub ended_by_itself: Option<i32>,
    /// The journal held its End record at the cut.
    pub end_record: bool,
    /// A compaction's `sqliosim.journal.new` was left by the cut.
    pub new_left: bool,
}

/// The phase a run is in after the log entries in `log`: the last phase begun and not done.
pub fn phase_at(log: &str) -> String {
    let mut phase = "start-up (before the first cycle)".to_string();
    for line in log.lines() {
        if line.contains("existing files verified") {
            phase = "resumed: files verified, before its first cycle".into();
        } else if line.contains("Starting test cycle") {
            phase = "initial update".into();
        } else if let Some(done) = line.split("Phase '").nth(1) {
            let name = done.split('\'').next().unwrap_or("");
            phase = match name {
                "initial update" => "initial checkpoint",
                "initial checkpoint" => "main",
                "main" => "final checkpoint",
                "final checkpoint" => "audit",
                _ => "after the audit (shutdown)",
            }
            .into();
        } else if line.contains("grew from") || line.contains("shrank from") {
            phase = "main, right after a resize".into();
        }
    }
    phase
}

/// The text of the XML log at `path` (empty before it exists).
pub fn log_text(path: &Path) -> String {
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// True when the journal at `path` holds an End record after its last Start (records: magic,
/// kind at byte 8, payload length at bytes 12..16, a 20-byte header; docs/durability.md). The
/// journal thread may append a last mark after it, so it need not be the last record.
pub fn journal_has_end(path: &Path) -> bool {
    let bytes = std::fs::read(path).unwrap_or_default();
    let (mut at, mut end) = (0usize, false);
    while let Some(head) = bytes.get(at..at + 20) {
        if head[..8] != *b"SQLSIMJR" {
            break;
        }
        match head[8] {
            1 => end = false,
            5 => end = true,
            _ => {}
        }
        let len = u32::from_le_bytes(head[12..16].try_into().expect("4 bytes")) as usize;
        at += 20 + len;
    }
    end
}

/// Waits for `at.trigger`, sleeps `at.delay`, SIGKILLs `child` and reaps it.
pub fn cut(child: &mut Child, log: &Path, data_dir: &Path, at: CutAt) -> Cut {
    let started = Instant::now();
    let met = loop {
        if let Some(status) = child.try_wait().expect("wait for sqliosim") {
            return ended(status.code(), log, data_dir, at, "its trigger never came");
        }
        if let Some(met) = trigger_met(at.trigger, log, data_dir, started.elapsed()) {
            break met;
        }
        assert!(
            started.elapsed() < TRIGGER_LIMIT,
            "the run never reached {:?}:\n{}",
            at.trigger,
            log_text(log)
        );
        std::thread::sleep(POLL);
    };
    std::thread::sleep(at.delay);
    if let Some(status) = child.try_wait().expect("wait for sqliosim") {
        return ended(status.code(), log, data_dir, at, &met);
    }
    child.kill().expect("SIGKILL the run");
    child.wait().expect("reap the run");
    Cut {
        delay: at.delay,
        met,
        phase: phase_at(&log_text(log)),
        ended_by_itself: None,
        end_record: journal_has_end(&data_dir.join("sqliosim.journal")),
        new_left: data_dir.join("sqliosim.journal.new").exists(),
    }
}

fn ended(code: Option<i32>, log: &Path, data_dir: &Path, at: CutAt, met: &str) -> Cut {
    Cut {
        delay: at.delay,
        met: met.to_string(),
        phase: phase_at(&log_text(log)),
        ended_by_itself: Some(code.unwrap_or(-1)),
        end_record: journal_has_end(&data_dir.join("sqliosim.journal")),
        new_left: data_dir.join("sqliosim.journal.new").exists(),
    }
}

/// `Some(how)` once the trigger is met.
fn trigger_met(t: Trigger, log: &Path, dir: &Path, elapsed: Duration) -> Option<String> {
    match t {
        Trigger::Log(text, n) => {
            (log_text(log).matches(text).count() >= n).then(|| format!("'{text}' #{n}"))
        }
        Trigger::Compaction if dir.join("sqliosim.journal.new").exists() => {
            Some(format!("journal.new seen {} ms in", elapsed.as_millis()))
        }
        // The journal is read whole: only once the last phase is over.
        Trigger::JournalEnd => (log_text(log).contains("Phase 'audit' done")
            && journal_has_end(&dir.join("sqliosim.journal")))
        .then(|| format!("End record seen {} ms in", elapsed.as_millis())),
        Trigger::Compaction => (elapsed >= COMPACTION_LIMIT)
            .then(|| format!("no journal.new seen: cut {} ms in", elapsed.as_millis())),
        Trigger::File(name) => dir
            .join(name)
            .exists()
            .then(|| format!("{name} seen {} ms in", elapsed.as_millis())),
        Trigger::Kept(ext) => {
            kept_stream(dir, ext).map(|n| format!("{n} seen {} ms in", elapsed.as_millis()))
        }
    }
}

/// The name of a stream with extension `ext` kept aside under a run id in `dir`.
pub fn kept_stream(dir: &Path, ext: &str) -> Option<String> {
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        let id = name
            .strip_prefix("sqliosim.")?
            .strip_suffix(&format!(".{ext}"))?;
        (id.len() == 16 && id.chars().all(|c| c.is_ascii_hexdigit())).then_some(name)
    })
}

/// The outcome of one step after a cut.
#[derive(Debug, Clone)]
pub struct Step {
    /// "verify", "resume", "verify after the resume".
    pub name: &'static str,
    /// Its exit code.
    pub code: Option<i32>,
    /// The finding lines it printed (empty when clean).
    pub findings: Vec<String>,
}

impl Step {
    /// Exit 0 and no finding.
    pub fn clean(&self) -> bool {
        self.code == Some(0) && self.findings.is_empty()
    }

    fn judge(name: &'static str, out: &Output) -> Step {
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // The findings themselves first, the verdict that counts them after.
        let (mut findings, verdicts): (Vec<String>, Vec<String>) = text
            .lines()
            .filter(|l| {
                l.contains("ERROR #")
                    || l.contains("INTEGRITY ERROR")
                    || l.contains("JOURNAL DAMAGED")
            })
            .map(str::to_string)
            .partition(|l| !l.contains("INTEGRITY ERROR"));
        findings.extend(verdicts);
        let mut step = Step {
            name,
            code: out.status.code(),
            findings,
        };
        if step.code != Some(0) && step.findings.is_empty() {
            // An exit without a finding line (a refusal, a panic): keep its last words.
            step.findings = text.lines().rev().take(3).map(str::to_string).collect();
        }
        step
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.clean(), self.findings.first()) {
            (true, _) => write!(f, "{} exit 0", self.name),
            (false, first) => write!(
                f,
                "{} exit {:?}, {} line(s), first: {}",
                self.name,
                self.code,
                self.findings.len(),
                first.map_or("", |l| l.get(..400).unwrap_or(l))
            ),
        }
    }
}

/// The binary, the configuration and the directories of one device's cells.
pub struct Rig {
    /// The configuration every run of the cell uses.
    pub config: PathBuf,
    /// The data directory: the mount of the device under test.
    pub data: PathBuf,
    /// Where the XML logs and JSON summaries go (not on the device under test).
    pub logs: PathBuf,
}

impl Rig {
    /// `sqliosim run` (with `extra` arguments), its log `logs/NAME.xml`, output discarded.
    pub fn spawn(&self, name: &str, seed: u64, extra: &[&str], env: &[(&str, &str)]) -> Child {
        self.cmd(&["run"], name)
            .args(["--seed", &seed.to_string()])
            .args(extra)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start sqliosim run")
    }

    /// The XML log of the run called `name`.
    pub fn log(&self, name: &str) -> PathBuf {
        self.logs.join(format!("{name}.xml"))
    }

    fn cmd(&self, sub: &[&str], name: &str) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sqliosim"));
        cmd.args(sub)
            .arg("--config")
            .arg(&self.config)
            .arg("--dir")
            .arg(&self.data)
            .arg("--log")
            .arg(self.log(name));
        cmd
    }

    /// `verify`, a short `run --resume` (one cycle of 1 s), `verify`: what follows every cut.
    pub fn follow_up(&self, name: &str, seed: u64) -> Vec<Step> {
        let mut steps = vec![self.verify("verify")];
        let out = self
            .cmd(&["run", "--resume"], &format!("{name}-followup"))
            .args(["--cycles", "1", "--duration", "1", "--seed"])
            .arg(seed.to_string())
            .output()
            .expect("run sqliosim run --resume");
        steps.push(Step::judge("resume", &out));
        steps.push(self.verify("verify after the resume"));
        steps
    }

    /// `sqliosim verify --dir DATA`.
    pub fn verify(&self, name: &'static str) -> Step {
        let out = Command::new(env!("CARGO_BIN_EXE_sqliosim"))
            .args(["verify", "--dir"])
            .arg(&self.data)
            .output()
            .expect("run sqliosim verify");
        Step::judge(name, &out)
    }

    /// Removes every file of the previous cell from the data directory (a plain `run` over a
    /// killed run's files is not what these cells test).
    pub fn clear(&self) {
        for entry in std::fs::read_dir(&self.data).expect("read the data directory") {
            let path = entry.expect("directory entry").path();
            if path.is_file() {
                std::fs::remove_file(&path).expect("remove a file of the last cell");
            }
        }
    }
}
