//! Root-only bytes and the run's verdict against another user of a shared directory (issue
//! #36 §5–8, §14), with the planting harness of `hostile_names.rs`: a crafted summary or a
//! swapped `dumps/` must not put a root-only byte into an evidence bundle, a planted data file
//! symlink must not have its pages dumped by `verify`, dumps are 0600 in 0700 directories, a
//! planted temporary never loses the JSON summary or the metrics, and names from files reach
//! the terminal escaped; `report DIR` stays in DIR; FIFOs given as a configuration, a sqlio
//! parameter file or a diskspd target are refused at once.
//!
//! Each victim holds [`SECRET`]; "no root-only byte" is checked by looking for it in every
//! member of an archive or every file the run left.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::hostile_names::{
    assert_none, bin, chown, entry_of, fixture, is_root, plant, prepare, run, run_cmd, shared_dir,
    Fixture, Plant, Prep, PLANTS, TIMEOUT,
};

const SECRET: &[u8] = b"SQLIOSIM-ROOT-ONLY-SECRET-36";

/// The run arguments of `hostile_names`' run cases.
const RUN: &[&str] = &[
    "run",
    "--config",
    "{P}/cfg.ini",
    "--dir",
    "{S}",
    "--duration",
    "1",
    "--seed",
    "7",
];

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    RUN.iter().chain(extra).copied().collect()
}

/// A root-only file holding [`SECRET`] and a root-only directory of such files, in the
/// fixture's private directory (made once per name).
fn secrets(f: &Fixture, tag: &str) -> (PathBuf, PathBuf) {
    let file = f.private.join(format!("secret-{tag}"));
    std::fs::write(&file, [SECRET, b"\n"].concat()).expect("secret");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let dir = f.private.join(format!("secretdir-{tag}"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    for n in ["a.received", "b.txt"] {
        std::fs::write(dir.join(n), SECRET).expect("secret");
    }
    (file, dir)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The members of a tar.gz: names and contents.
fn members(path: &Path) -> Vec<(String, Vec<u8>)> {
    let f = std::fs::File::open(path).expect("the bundle");
    let mut a = tar::Archive::new(flate2::read::GzDecoder::new(f));
    a.entries()
        .expect("entries")
        .map(|e| {
            let mut e = e.expect("entry");
            let name = e.path().expect("name").display().to_string();
            let mut data = Vec::new();
            e.read_to_end(&mut data).expect("member");
            (name, data)
        })
        .collect()
}

/// Members of the bundle at `out` holding [`SECRET`], and its mode when others can read it.
fn leaks(out: &Path) -> Vec<String> {
    let mut said: Vec<String> = members(out)
        .into_iter()
        .filter(|(_, data)| contains(data, SECRET))
        .map(|(n, _)| format!("the bundle holds the secret in {n}"))
        .collect();
    let mode = std::fs::metadata(out).expect("bundle").permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        said.push(format!("the bundle is mode {mode:o}"));
    }
    said
}

/// Every regular file below `dir` (symlinks not followed).
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let t = e.file_type().expect("type");
        if t.is_dir() {
            v.extend(files_below(&e.path()));
        } else if t.is_file() {
            v.push(e.path());
        }
    }
    v
}

fn said(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// §5: a summary written by the other user names `/etc/shadow`-like files as its log and
/// dump directory, and `dumps`, the stylesheet and the log beside it are symlinks to them.
#[test]
fn a_crafted_summary_puts_no_root_only_byte_into_the_bundle() {
    if !is_root() {
        return;
    }
    let f = fixture();
    let (secret, secret_dir) = secrets(f, "crafted");
    let s = f.base.join("ev-crafted");
    prepare(f, &s, Prep::Empty);
    let text = std::fs::read(f.reference.join("sqliosim.log.json")).expect("summary");
    let mut doc: serde_json::Value = serde_json::from_slice(&text).expect("json");
    doc["log"] = secret.display().to_string().into();
    doc["dump_dir"] = secret_dir.display().to_string().into();
    let json = s.join("in.json");
    std::fs::write(&json, serde_json::to_vec(&doc).expect("json")).expect("crafted");
    chown(&json);
    plant(&s.join("dumps"), Plant::Symlink, &secret_dir);
    plant(&s.join("ErrorLog.xslt"), Plant::Symlink, &secret);
    plant(&s.join("in.xml"), Plant::Symlink, &secret);
    let out = s.join("b.tar.gz");
    let o = run(&f.args(&["report", "{S}/in.json", "--bundle", "{S}/b.tar.gz"], &s))
        .expect("the report ends");
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    assert_none(leaks(&out));
}

/// §6: while the run goes on, the other user renames `dumps/` away and makes a `dumps/` of
/// theirs whose entry of the run's id is a symlink to a root-only directory. The bundle holds
/// the run's own dumps, and nothing of that directory.
#[test]
fn a_dumps_directory_swapped_mid_run_puts_no_root_only_byte_into_the_bundle() {
    if !is_root() {
        return;
    }
    let f = fixture();
    let (_, secret_dir) = secrets(f, "swap");
    for attempt in 0..5 {
        let s = f.base.join(format!("ev-swap{attempt}"));
        prepare(f, &s, Prep::Empty);
        let args = f.args(
            &with(&["--fault-injection", "flip@1", "--bundle", "{S}/b.tar.gz"]),
            &s,
        );
        let done = std::sync::atomic::AtomicBool::new(false);
        let (o, swapped) = std::thread::scope(|sc| {
            let attacker = sc.spawn(|| swap_dumps(&s, &secret_dir, &done));
            let mut cmd = Command::new(bin());
            cmd.args(&args);
            let o = run_cmd(cmd);
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            (o, attacker.join().expect("attacker"))
        });
        let o = o.expect("the run ends");
        if !swapped {
            let _ = std::fs::remove_dir_all(&s);
            continue;
        }
        assert_eq!(o.status.code(), Some(1), "the flip is found: {}", said(&o));
        let out = s.join("b.tar.gz");
        let mut failed = leaks(&out);
        if !members(&out).iter().any(|(n, _)| n.ends_with(".received")) {
            failed.push("the run's own dumps are not in the bundle".into());
        }
        assert_none(failed);
        return;
    }
    panic!("the dumps directory never appeared before the run ended, in 5 runs");
}

/// The attacker of the swap: as soon as `dumps/` holds the run's directory, renames `dumps/`
/// away and plants its own with a symlink of that name. True when it swapped.
fn swap_dumps(s: &Path, secret_dir: &Path, done: &std::sync::atomic::AtomicBool) -> bool {
    let dumps = s.join("dumps");
    while !done.load(std::sync::atomic::Ordering::Relaxed) {
        let first = std::fs::read_dir(&dumps)
            .ok()
            .and_then(|mut rd| rd.next())
            .and_then(|e| e.ok());
        if let Some(e) = first {
            std::fs::rename(&dumps, s.join("dumps.old")).expect("rename dumps");
            shared_dir(&dumps);
            plant(&dumps.join(e.file_name()), Plant::Symlink, secret_dir);
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    false
}

/// A copy of the reference run's data file with [`SECRET`] over page 1, root-only.
fn secret_data_file(f: &Fixture) -> PathBuf {
    use std::os::unix::fs::FileExt;
    let p = f.private.join("secret-set.mdx");
    std::fs::copy(f.reference.join("sqliosim.mdx"), &p).expect("copy");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .expect("open");
    file.write_all_at(SECRET, 8192 + 100).expect("secret page");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    p
}

/// §7: `sqliosim.mdx` in the checked directory is a symlink to a root-only copy of a data
/// file whose page 1 holds the secret: `verify --log` writes no byte of it anywhere.
#[test]
fn verify_dumps_no_byte_read_through_a_planted_symlink() {
    if !is_root() {
        return;
    }
    let f = fixture();
    let victim = secret_data_file(f);
    let s = f.base.join("ev-verify");
    prepare(f, &s, Prep::Set);
    std::fs::remove_file(s.join("sqliosim.mdx")).expect("rm");
    plant(&s.join("sqliosim.mdx"), Plant::Symlink, &victim);
    let o = run(&f.args(&["verify", "--dir", "{S}", "--log", "{S}/v.log.xml"], &s))
        .expect("verify ends");
    let leaked: Vec<String> = files_below(&s)
        .into_iter()
        .filter(|p| contains(&std::fs::read(p).unwrap_or_default(), SECRET))
        .map(|p| format!("{} holds the secret", p.display()))
        .collect();
    assert!(leaked.is_empty(), "{leaked:?}\n{}", said(&o));
}

/// The modes of the dump directory `d` and its files: 0700 and 0600, or what is wrong.
fn dump_modes(d: &Path) -> Vec<String> {
    let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    let mut wrong = Vec::new();
    if mode(d) != 0o700 {
        wrong.push(format!("{} is mode {:o}", d.display(), mode(d)));
    }
    let files = files_below(d);
    if files.is_empty() {
        wrong.push(format!("{} holds no dump", d.display()));
    }
    for p in files.iter().filter(|p| mode(p) != 0o600) {
        wrong.push(format!("{} is mode {:o}", p.display(), mode(p)));
    }
    wrong
}

/// §7: the dumps of a run and of a verify are 0600 files in 0700 directories.
#[test]
fn dumps_are_0600_in_a_0700_directory() {
    if !is_root() {
        return;
    }
    let f = fixture();
    let mut wrong = Vec::new();
    let s = f.base.join("ev-modes-run");
    prepare(f, &s, Prep::Empty);
    let o = run(&f.args(&with(&["--fault-injection", "flip@1"]), &s)).expect("ends");
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    let tag = super::hostile_names::run_tag(&s.join("sqliosim.log.json"));
    wrong.extend(dump_modes(&s.join("dumps").join(&tag)));
    let s = f.base.join("ev-modes-verify");
    prepare(f, &s, Prep::Corrupt);
    let o = run(&f.args(&["verify", "--dir", "{S}", "--log", "{S}/v.log.xml"], &s)).expect("ends");
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    let dirs: Vec<PathBuf> = std::fs::read_dir(s.join("dumps"))
        .expect("dumps")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    wrong.extend(dump_modes(&dirs[0]));
    assert_none(wrong);
}

/// §8: the temporaries' old fixed names planted (as every kind, and as the other user's
/// file): the JSON summary and the metrics file are still written, the planted names left as
/// they were, and no warning said.
#[test]
fn a_planted_temporary_never_loses_the_summary_or_the_metrics() {
    if !is_root() {
        return;
    }
    let f = fixture();
    let (secret, _) = secrets(f, "tmp");
    let mut failed = Vec::new();
    for kind in PLANTS.iter().map(Some).chain([None]) {
        let label = kind.map_or("TheirFile".to_string(), |k| format!("{k:?}"));
        let s = f.base.join(format!("ev-tmp-{label}"));
        prepare(f, &s, Prep::Empty);
        let names = [".sqliosim.log.json.tmp", ".m.prom.tmp"];
        for n in names {
            let at = s.join(n);
            match kind {
                Some(k) => plant(&at, *k, &secret),
                None => {
                    std::fs::write(&at, b"theirs").expect("plant");
                    chown(&at);
                }
            }
        }
        let planted: Vec<_> = names.iter().map(|n| entry_of(&s.join(n))).collect();
        let args = with(&["--metrics-textfile", "{S}/m.prom", "--status-interval", "1"]);
        let Some(o) = run(&f.args(&args, &s)) else {
            failed.push(format!("{label}: hung ({} s)", TIMEOUT.as_secs()));
            continue;
        };
        let summary = std::fs::read(s.join("sqliosim.log.json")).unwrap_or_default();
        let parsed = serde_json::from_slice::<serde_json::Value>(&summary);
        let metrics = std::fs::read_to_string(s.join("m.prom")).unwrap_or_default();
        let now: Vec<_> = names.iter().map(|n| entry_of(&s.join(n))).collect();
        let text = said(&o);
        if o.status.code() != Some(0) || text.contains("warning") {
            failed.push(format!("{label}: exit {:?}: {text}", o.status.code()));
        }
        if !parsed.is_ok_and(|d| d["complete"] == true) {
            failed.push(format!("{label}: no complete JSON summary"));
        }
        if !metrics.contains("sqliosim_") {
            failed.push(format!("{label}: no metrics file"));
        }
        if now != planted {
            failed.push(format!("{label}: a planted temporary was changed"));
        }
        let _ = std::fs::remove_dir_all(&s);
    }
    assert_eq!(
        std::fs::read(&secret).expect("secret"),
        [SECRET, b"\n"].concat()
    );
    assert_none(failed);
}

/// A copy of the reference run's summary with another host name and run id, at `at`.
fn summary_of_host(f: &Fixture, at: &Path, host: &str, run_id: u64) {
    let text = std::fs::read(f.reference.join("sqliosim.log.json")).expect("summary");
    let mut doc: serde_json::Value = serde_json::from_slice(&text).expect("json");
    doc["host"]["hostname"] = host.into();
    doc["run_id"] = run_id.into();
    std::fs::write(at, serde_json::to_vec(&doc).expect("json")).expect("write");
}

/// §14: a host name holding terminal escape sequences reaches the terminal escaped.
#[test]
fn the_fleet_report_escapes_host_names() {
    if !is_root() {
        return;
    }
    let f = fixture();
    let s = f.base.join("ev-escape");
    prepare(f, &s, Prep::Empty);
    summary_of_host(f, &s.join("a.json"), "evil\x1b]0;owned\x07\x1b[2J", 0xA1);
    summary_of_host(f, &s.join("b.json"), "good", 0xB2);
    let o = run(&f.args(&["report", "{S}"], &s)).expect("the report ends");
    let out = [o.stdout.as_slice(), &o.stderr].concat();
    let controls: Vec<u8> = out
        .iter()
        .copied()
        .filter(|b| b.is_ascii_control() && !matches!(b, b'\n' | b'\t'))
        .collect();
    assert!(
        controls.is_empty(),
        "control bytes {controls:?} reach the terminal: {}",
        said(&o)
    );
    assert!(
        said(&o).contains("evil"),
        "the host is still named: {}",
        said(&o)
    );
}

/// §14: `report DIR` where DIR holds a symlink (planted by the other user) to a directory of
/// root's results: that run is not read unless `--follow` is given.
#[test]
fn report_dir_does_not_follow_a_symlink_out_of_it_unless_asked() {
    if !is_root() {
        return;
    }
    let f = fixture();
    let other = f.private.join("other-results");
    std::fs::create_dir_all(&other).expect("mkdir");
    summary_of_host(f, &other.join("root.json"), "roothost", 0xC3);
    let s = f.base.join("ev-follow");
    prepare(f, &s, Prep::Results);
    plant(&s.join("link"), Plant::Symlink, &other);
    let o = run(&f.args(&["report", "{S}"], &s)).expect("the report ends");
    let text = said(&o);
    assert!(
        text.contains("1 run(s)") && !text.contains("roothost"),
        "{text}"
    );
    let o = run(&f.args(&["report", "{S}", "--follow"], &s)).expect("the report ends");
    let text = said(&o);
    assert!(
        text.contains("2 run(s)") && text.contains("roothost"),
        "{text}"
    );
}

/// §14: FIFOs given as the working directory's configuration, a sqlio parameter file or a
/// diskspd target: exit 2 naming them, within [`TIMEOUT`] (a hang is killed and fails).
#[test]
fn fifos_as_config_param_file_or_target_are_refused_at_once() {
    if !is_root() {
        return;
    }
    let f = fixture();
    let s = f.base.join("ev-fifos");
    prepare(f, &s, Prep::Empty);
    let mut failed = Vec::new();
    let cases: [(&str, &str, Vec<String>); 3] = [
        (
            "config in the working directory",
            "sqliosim.cfg.ini",
            vec![
                "run".into(),
                "--dir".into(),
                s.join("d").display().to_string(),
            ],
        ),
        (
            "sqlio -F",
            "param.txt",
            vec![
                "sqlio".into(),
                "-kR".into(),
                "-s1".into(),
                format!("-F{}", s.join("param.txt").display()),
            ],
        ),
        (
            "diskspd target",
            "target.dat",
            vec![
                "diskspd".into(),
                "-d1".into(),
                s.join("target.dat").display().to_string(),
            ],
        ),
    ];
    for (what, name, args) in cases {
        let at = s.join(name);
        plant(&at, Plant::Fifo, &at);
        let mut cmd = Command::new(bin());
        cmd.args(&args).current_dir(&s);
        match run_cmd(cmd) {
            None => failed.push(format!("{what}: hung ({} s, killed)", TIMEOUT.as_secs())),
            Some(o) => {
                let text = said(&o);
                if o.status.code() != Some(2) || !text.contains(&*at.to_string_lossy()) {
                    failed.push(format!("{what}: exit {:?}: {text}", o.status.code()));
                } else if text.contains("0-byte") {
                    failed.push(format!("{what}: a FIFO taken for an empty file: {text}"));
                }
            }
        }
    }
    assert_none(failed);
}
