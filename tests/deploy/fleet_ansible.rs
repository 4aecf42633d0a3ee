//! The Ansible playbook of deploy/ansible, for real: three hosts, each a network namespace with
//! its own sshd, hostname, machine id and data directory, reached by ansible-playbook over real
//! SSH from the root namespace. One host runs with injected faults; the fleet report that the
//! playbook runs on the controller must name exactly that host, by the hostname the host itself
//! reported, and exit 1. A fourth host of the inventory cannot be reached: the report, given
//! the play's host list (--expect-hosts), names it MISSING and fails it in JUnit.
//!
//! tests/deploy/fleet_ansible/fleet_long.rs reruns the play over a run in progress (a dropped controller), and checks
//! pre-flight's refusals and the report-only tag.
//!
//! Skips (SKIPPED line) unless root with ansible-playbook, ssh and Debian's sshd; fails instead
//! when SQLIOSIM_REQUIRE_ANSIBLE=1, as in CI (.ci/run installs them).

mod fleet_long;

use crate::fleet_support::{missing_prerequisite, Fleet, Host};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The host that runs with faults, by index in the fleet.
const FAULTY: usize = 2;

/// The inventory name of a host that cannot be reached.
const UNREACHABLE: &str = "node4";

/// A small simulation (8 MB data, 2 MB log), so three hosts finish within seconds.
const CONFIG: &str = "[CONFIG]\nStopOnError=FALSE\nTestCycles=1\nMaxMemoryMB=8\n\
    [AuditUser]\nUserCount=1\n[RandomUser]\nUserCount=2\n[BulkUpdateUser]\nUserCount=1\n\
    [File1]\nFileName=sqliosim.mdx\nInitialSize=8\nMaxSize=8\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
    [File2]\nFileName=sqliosim.ldx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";

fn prerequisites_met() -> bool {
    let Some(why) = missing_prerequisite() else {
        return true;
    };
    assert!(
        std::env::var_os("SQLIOSIM_REQUIRE_ANSIBLE").is_none(),
        "SQLIOSIM_REQUIRE_ANSIBLE is set but the Ansible fleet test cannot run: {why}"
    );
    eprintln!("SKIPPED fleet_ansible: {why}");
    false
}

/// The inventory: one node per host, reached by address; the hostnames are the hosts' own.
fn inventory(fleet: &Fleet, remote: &Path) -> String {
    let mut text = String::from("[sqliosim]\n");
    for (i, host) in fleet.hosts.iter().enumerate() {
        text += &format!("node{} ansible_host={}", i + 1, host.addr);
        if i == FAULTY {
            text += r#" sqliosim_extra_args='["--fault-injection", "lost@10,torn4k@80"]'"#;
        }
        if i == 0 {
            // The optional capacity run beside the simulation, on one host.
            let bench = format!(
                "--file {}/data/bench.dat --size 16M --duration 2",
                remote.display()
            );
            text += &format!(" sqliosim_bench='{bench}'");
        }
        text += "\n";
    }
    // A host of the play that never answers (nothing listens on port 9): the fleet report must
    // name it MISSING from the play's host list (--expect-hosts), and fail it in JUnit.
    text += &format!("{UNREACHABLE} ansible_host=127.0.0.1 ansible_port=9\n");
    text += &format!(
        "[sqliosim:vars]\nansible_user=root\nansible_ssh_private_key_file={key}\n\
         ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\n\
         ansible_python_interpreter={python}\nsqliosim_remote_dir={remote}\n\
         sqliosim_data_dirs=['{remote}/data']\nsqliosim_allow_root_fs=true\nsqliosim_duration=5s\nsqliosim_poll=1\n\
         sqliosim_timeout=300\n",
        key = fleet.key.display(),
        remote = remote.display(),
        python = python_interpreter(),
    );
    text
}

/// Runs ansible-playbook on deploy/ansible/site.yml; kills it after 10 minutes (a hang guard,
/// not a timing assertion).
fn run_playbook(dir: &Path, inventory: &Path, out: &Path, config: &Path) -> Output {
    let child = spawn_playbook(dir, inventory, out, config, &[]);
    wait_bounded(child, Duration::from_secs(600))
}

/// Starts ansible-playbook on deploy/ansible/site.yml with `extra` arguments (tags, -e).
fn spawn_playbook(
    dir: &Path,
    inventory: &Path,
    out: &Path,
    config: &Path,
    extra: &[&str],
) -> std::process::Child {
    let playbook_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/ansible");
    let vars = serde_json::json!({
        "sqliosim_binary": env!("CARGO_BIN_EXE_sqliosim"),
        "sqliosim_config": config,
        "sqliosim_output_dir": out,
    });
    let vars_file = dir.join("vars.json");
    std::fs::write(&vars_file, vars.to_string()).expect("vars.json");
    Command::new("ansible-playbook")
        .current_dir(&playbook_dir)
        .arg("-i")
        .arg(inventory)
        .arg("-e")
        .arg(format!("@{}", vars_file.display()))
        .args(extra)
        .arg("site.yml")
        .env("LC_ALL", "C.UTF-8")
        .env("ANSIBLE_HOST_KEY_CHECKING", "False")
        .env("ANSIBLE_SSH_CONTROL_PATH_DIR", dir.join("cp"))
        .env("ANSIBLE_LOCAL_TEMP", dir.join("ansible-local"))
        .env("ANSIBLE_FORKS", "5")
        // One SSH round trip per task instead of several (no sudo here, so nothing against it).
        .env("ANSIBLE_PIPELINING", "True")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ansible-playbook")
}

pub(crate) fn wait_bounded(mut child: std::process::Child, limit: Duration) -> Output {
    let start = Instant::now();
    // Drain the pipes in threads so a chatty playbook never blocks on a full pipe.
    let mut so = child.stdout.take().expect("stdout");
    let mut se = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || read_all(&mut so));
    let t_err = std::thread::spawn(move || read_all(&mut se));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("ansible-playbook still running after {limit:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let stdout = t_out.join().expect("stdout reader");
    let stderr = t_err.join().expect("stderr reader");
    Output {
        status,
        stdout,
        stderr,
    }
}

fn read_all(r: &mut impl std::io::Read) -> Vec<u8> {
    let mut v = Vec::new();
    let _ = r.read_to_end(&mut v);
    v
}

/// The hostname and machine id a fetched JSON summary carries.
fn identity(summary: &Path) -> (String, String) {
    let text =
        std::fs::read_to_string(summary).unwrap_or_else(|e| panic!("{}: {e}", summary.display()));
    let json: serde_json::Value = serde_json::from_str(&text).expect("summary is JSON");
    let host = &json["host"];
    let field = |key: &str| {
        host[key]
            .as_str()
            .unwrap_or_else(|| panic!("no host.{key} in {}", summary.display()))
            .to_string()
    };
    (field("hostname"), field("machine_id"))
}

fn check_fetched(out: &Path, fleet: &Fleet) {
    for (i, host) in fleet.hosts.iter().enumerate() {
        let node = out.join(format!("hosts/node{}", i + 1));
        for file in [
            "sqliosim.log.xml",
            "sqliosim.log.json",
            "bundle.tar.gz",
            "run.txt",
        ] {
            assert!(
                node.join(file).is_file(),
                "{} not fetched",
                node.join(file).display()
            );
        }
        let (hostname, machine_id) = identity(&node.join("sqliosim.log.json"));
        assert_eq!(
            hostname,
            host.hostname,
            "node{} reported another hostname",
            i + 1
        );
        assert_eq!(
            machine_id,
            host.machine_id,
            "node{}: machine id not the host's own",
            i + 1
        );
        let dumps = std::fs::read_dir(node.join("dumps"))
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(dumps > 0, i == FAULTY, "node{}: {dumps} dump files", i + 1);
        // Each host wrote its simulation files into its own directory (the faulty one keeps
        // them in memory).
        let mdx = host.dir.join("root/sqliosim/data/sqliosim.mdx");
        assert_eq!(mdx.is_file(), i != FAULTY, "{}", mdx.display());
        // The optional bench job ran where it was asked for, and only there.
        let run = std::fs::read_to_string(node.join("run.txt")).expect("run.txt");
        let bench = run.contains("Capacity run beside the simulation");
        assert_eq!(bench, i == 0, "node{}: bench ran: {bench}\n{run}", i + 1);
    }
}

fn check_report(text: &str, fleet: &Fleet) {
    let corrupt: Vec<&Host> = fleet
        .hosts
        .iter()
        .filter(|h| text.contains(&format!("CORRUPTION on {} ", h.hostname)))
        .collect();
    assert_eq!(
        corrupt.len(),
        1,
        "want exactly one host named corrupt:\n{text}"
    );
    assert_eq!(corrupt[0].hostname, fleet.hosts[FAULTY].hostname, "{text}");
    for host in &fleet.hosts {
        assert!(
            text.contains(&host.hostname),
            "{} missing from the report:\n{text}",
            host.hostname
        );
    }
    // Each run carried its inventory name (--host-label), and the report shows it.
    let labelled = format!(
        "CORRUPTION on {} [node{}] ",
        fleet.hosts[FAULTY].hostname,
        FAULTY + 1
    );
    assert!(text.contains(&labelled), "{labelled}:\n{text}");
}

/// The playbook's report: also the host that never answered, named from the play's list.
fn check_missing(out: &Path, text: &str) {
    let list = std::fs::read_to_string(out.join("expected-hosts.txt")).expect("expected-hosts.txt");
    let names: Vec<&str> = list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(names, ["node1", "node2", "node3", UNREACHABLE], "{list}");
    assert!(
        text.contains(&format!("MISSING {UNREACHABLE}: expected")),
        "{text}"
    );
    assert!(text.contains("4 host(s) expected, 1 missing"), "{text}");
}

/// The JUnit file the playbook asked for: two failing test cases, the faulty host's and the
/// unreachable one's.
fn check_junit(path: &Path, fleet: &Fleet) {
    let xml = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = roxmltree::Document::parse(&xml).expect("JUnit is XML");
    let failed: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .filter(|n| n.children().any(|c| c.has_tag_name("failure")))
        .filter_map(|n| n.attribute("classname"))
        .collect();
    let want = format!("sqliosim.{}", fleet.hosts[FAULTY].hostname);
    assert_eq!(failed, [want.as_str(), "sqliosim.missing"], "{xml}");
}

#[test]
fn the_playbook_runs_three_ssh_hosts_and_the_fleet_report_names_the_faulty_one() {
    if !prerequisites_met() {
        return;
    }
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let dir = tmp.path();
    let fleet = Fleet::start(dir, 3);
    let remote: PathBuf = fleet.shared_path.join("sqliosim");
    let inv = dir.join("inventory.ini");
    std::fs::write(&inv, inventory(&fleet, &remote)).expect("inventory");
    let config = dir.join("small.cfg.ini");
    std::fs::write(&config, CONFIG).expect("config");
    let out = dir.join("out");

    let played = run_playbook(dir, &inv, &out, &config);
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&played.stdout),
        String::from_utf8_lossy(&played.stderr)
    );
    // The verdict task fails the play when the fleet is not clean: ansible's "a task failed"
    // (2), or "a host was unreachable" (4), which node4 also is.
    let code = played.status.code();
    assert!(
        matches!(code, Some(2 | 4)),
        "ansible-playbook exited {code:?}:\n{log}"
    );
    let rc = std::fs::read_to_string(out.join("fleet-report.rc")).expect("fleet-report.rc");
    assert_eq!(rc.trim(), "1", "the playbook's fleet report:\n{log}");
    let text = std::fs::read_to_string(out.join("fleet-report.txt")).expect("fleet-report.txt");
    eprintln!("{text}");
    check_report(&text, &fleet);
    check_missing(&out, &text);
    check_junit(&out.join("fleet-junit.xml"), &fleet);
    check_fetched(&out, &fleet);

    // The same report by hand over the fetched directory, as docs/fleet.md shows.
    let by_hand = Command::new(env!("CARGO_BIN_EXE_sqliosim"))
        .arg("report")
        .arg(out.join("hosts"))
        .output()
        .expect("sqliosim report");
    let text = String::from_utf8_lossy(&by_hand.stdout);
    assert_eq!(
        by_hand.status.code(),
        Some(1),
        "{text}\n{}",
        String::from_utf8_lossy(&by_hand.stderr)
    );
    check_report(&text, &fleet);
}

/// The hosts' `ansible_python_interpreter`: they share the machine's files, so Debian's Python
/// if it is there, else Ansible looks for one.
pub(crate) fn python_interpreter() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "auto_silent"
    }
}
