//! The power-pull campaign of deploy/ansible/campaign.yml, for real (issue #37): four namespace
//! hosts reached over SSH, each with its data directory on its own faultfs mount with a
//! volatile write cache (what a power cut takes), and one `sqliosim witness` in the root
//! namespace (the controller) with a token. The cut command is a controller-side script: it
//! SIGKILLs every process of the host's network namespace (its sshd and the run), cuts its
//! faultfs (everything not flushed is gone), and boots the host's sshd again a second later.
//!
//! - node1, node2: honest caches. CLEAN in every cycle, each cycle after the first a resume of
//!   the same run, with the witness holding the run's record.
//! - node3: its cache lies about every flush for 1.5 s before each cut (the journal's too): it
//!   loses acknowledged writes, and `verify --witness` names them in every cycle.
//! - node4: does not come back after its second cut: CLEAN in cycle 1, MISSING in 2 and 3.
//!
//! The campaign report's exit code is 1, its JUnit fails exactly the lying host's three cycles
//! and the missing host's two.
//!
//! Skips (SKIPPED line) unless root with ansible-playbook, ssh, sshd and FUSE; fails instead
//! when SQLIOSIM_REQUIRE_ANSIBLE=1, as in CI.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::fleet_ansible::{python_interpreter, wait_bounded};
use crate::fleet_support::{missing_prerequisite, Fleet, Host};

#[path = "../common/faultfs_bin.rs"]
mod faultfs_bin;
#[path = "../common/witness_proc.rs"]
mod witness_proc;

const CYCLES: u32 = 3;
const LYING: &str = "node3";
const GONE: &str = "node4";
/// The cut after which node4 stays down.
const GONE_AT: u32 = 2;

/// A small simulation (8 MB data, 2 MB log) with log writes all the time (so every lie window
/// holds acknowledged flushes).
const CONFIG: &str = "[CONFIG]\nStopOnError=FALSE\nTestCycles=1\nMaxMemoryMB=8\n\
    [AuditUser]\nUserCount=1\n[RandomUser]\nUserCount=2\n[BulkUpdateUser]\nUserCount=1\n\
    [File1]\nFileName=sqliosim.mdx\nInitialSize=8\nMaxSize=8\nIncrement=0\nShrinkable=FALSE\nLogFile=FALSE\n\
    [File2]\nFileName=sqliosim.ldx\nInitialSize=2\nMaxSize=2\nIncrement=0\nShrinkable=FALSE\nLogFile=TRUE\n";

fn prerequisites_met() -> bool {
    let why = missing_prerequisite().or_else(|| faultfs::fuse_available().err());
    let Some(why) = why else {
        return true;
    };
    assert!(
        std::env::var_os("SQLIOSIM_REQUIRE_ANSIBLE").is_none(),
        "SQLIOSIM_REQUIRE_ANSIBLE is set but the campaign test cannot run: {why}"
    );
    eprintln!("SKIPPED fleet_campaign: {why}");
    false
}

fn node(i: usize) -> String {
    format!("node{}", i + 1)
}

/// The cut command: one script for every host, its table written by the test.
fn cut_script(base: &Path, fleet: &Fleet) -> PathBuf {
    let mut table = String::new();
    for (i, h) in fleet.hosts.iter().enumerate() {
        let boot = h.dir.join("boot.sh");
        std::fs::write(&boot, h.boot_script(&fleet.shared_path)).expect("boot.sh");
        let name = node(i);
        table += &format!(
            "  {name}) NS={ns}; DIR={dir}; LIES={lies}; STAYS_DOWN_AT={down};;\n",
            ns = h.netns(),
            dir = h.dir.display(),
            lies = u8::from(name == LYING),
            down = if name == GONE { GONE_AT } else { 0 },
        );
    }
    let script = format!(
        "# The campaign test's cut command (tests/deploy/fleet_campaign.rs): power off the\n\
         # namespace host $SQLIOSIM_CUT_HOST and boot it again.\n\
         set -u\n\
         case \"$SQLIOSIM_CUT_HOST\" in\n{table}  *) echo \"no such host: $SQLIOSIM_CUT_HOST\"; exit 2;;\n\
         esac\n\
         CTL=$DIR/root/data/.faultfs-control\n\
         n=$(( $(cat \"$DIR/cuts\" 2>/dev/null || echo 0) + 1 )); echo $n > \"$DIR/cuts\"\n\
         # A drive whose cache lies about flushes under load, for a moment before the cut.\n\
         if [ $LIES = 1 ]; then echo 'lie on' > \"$CTL\"; sleep 1.5; fi\n\
         for p in $(ip netns pids \"$NS\"); do kill -9 \"$p\"; done\n\
         i=0; while [ -n \"$(ip netns pids \"$NS\")\" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done\n\
         echo power-cut > \"$CTL\" || exit 3\n\
         if [ $LIES = 1 ]; then echo 'lie off' > \"$CTL\"; fi\n\
         if [ $STAYS_DOWN_AT = $n ]; then echo \"$SQLIOSIM_CUT_HOST stays down\"; exit 0; fi\n\
         setsid sh -c \"sleep 1; exec ip netns exec $NS unshare --uts --mount -- sh $DIR/boot.sh\" \
         < /dev/null > /dev/null 2>&1 &\n\
         echo \"$SQLIOSIM_CUT_HOST cut ($n)\"\n"
    );
    let path = base.join("cut.sh");
    std::fs::write(&path, script).expect("cut.sh");
    path
}

fn inventory(fleet: &Fleet, witness_port: u16) -> String {
    let mut text = String::from("[sqliosim]\n");
    for (i, h) in fleet.hosts.iter().enumerate() {
        text += &format!(
            "{} ansible_host={} sqliosim_witness={}:{witness_port}\n",
            node(i),
            h.addr,
            h.root_ip()
        );
    }
    text += &format!(
        "[sqliosim:vars]\nansible_user=root\nansible_ssh_private_key_file={key}\n\
         ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=3'\n\
         ansible_python_interpreter={python}\nsqliosim_remote_dir={remote}\n\
         sqliosim_data_dirs=['{remote}/data']\nsqliosim_allow_root_fs=true\nsqliosim_poll=1\n",
        key = fleet.key.display(),
        remote = fleet.shared_path.display(),
        python = python_interpreter(),
    );
    text
}

/// What the campaign report's JUnit says: (suite, test case) → failure type, for failing ones.
fn junit_failures(path: &Path) -> BTreeMap<(String, String), String> {
    use quick_xml::events::Event;
    let text = std::fs::read_to_string(path).expect("campaign JUnit");
    let mut reader = quick_xml::Reader::from_str(&text);
    let (mut suite, mut case) = (String::new(), String::new());
    let mut failed = BTreeMap::new();
    loop {
        match reader.read_event().expect("JUnit parses") {
            Event::Start(e) | Event::Empty(e) => {
                let attr = |k: &[u8]| {
                    e.attributes()
                        .flatten()
                        .find(|a| a.key.as_ref() == k)
                        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
                        .unwrap_or_default()
                };
                match e.name().as_ref() {
                    b"testsuite" => suite = attr(b"name"),
                    b"testcase" => case = attr(b"name"),
                    b"failure" | b"error" => {
                        failed.insert((suite.clone(), case.clone()), attr(b"type"));
                    }
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    failed
}

fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn a_campaign_names_the_lying_host_in_every_cycle_and_the_host_that_stays_down_missing() {
    if !prerequisites_met() {
        return;
    }
    let mut guard = Some(
        tempfile::Builder::new()
            .prefix("campaign-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("tempdir"),
    );
    let base = guard.as_ref().expect("just made").path().to_path_buf();
    // SQLIOSIM_KEEP_CAMPAIGN=1 keeps the directory (evidence, playbook files) to look at.
    if std::env::var_os("SQLIOSIM_KEEP_CAMPAIGN").is_some() {
        eprintln!(
            "keeping {}",
            guard
                .take()
                .map(tempfile::TempDir::keep)
                .unwrap_or_default()
                .display()
        );
    }
    let base = base.as_path();
    // Each host's data directory on its own faultfs with a volatile cache, mounted before the
    // host boots (its mount namespace takes it along). Declared before the fleet, so that the
    // fleet (its processes) goes first and the mounts after.
    let mut mounts: Vec<faultfs::Mount> = Vec::new();
    let fleet = Fleet::start_with(base, 4, &mut |h: &Host| {
        let (backing, mnt) = (h.dir.join("backing"), h.dir.join("root/data"));
        std::fs::create_dir_all(&backing).expect("backing");
        std::fs::create_dir_all(&mnt).expect("mount point");
        let m = faultfs::Mount::start_with_args(
            &faultfs_bin::faultfs_bin(),
            &backing,
            &mnt,
            &["--volatile-cache"],
        )
        .expect("mount faultfs");
        mounts.push(m);
    });
    let token = base.join("witness.token");
    std::fs::write(&token, "campaign-test-token-0123456789abcdef\n").expect("token");
    let records = base.join("witness");
    std::fs::create_dir_all(&records).expect("witness dir");
    let witness =
        witness_proc::WitnessProc::start("0.0.0.0:0", &records, Some(&token), Stdio::inherit());

    let cut = cut_script(base, &fleet);
    let inv = base.join("inventory.ini");
    std::fs::write(&inv, inventory(&fleet, witness.port())).expect("inventory");
    let config = base.join("campaign.cfg.ini");
    std::fs::write(&config, CONFIG).expect("config");
    let out = base.join("campaign");
    let vars = serde_json::json!({
        "sqliosim_binary": env!("CARGO_BIN_EXE_sqliosim"),
        "sqliosim_config": config,
        "sqliosim_campaign_dir": out,
        "sqliosim_campaign_cycles": CYCLES,
        "sqliosim_cut_after_min": 4,
        "sqliosim_cut_after_max": 7,
        "sqliosim_cut_command": format!("sh {}", cut.display()),
        "sqliosim_boot_delay": 1,
        "sqliosim_back_timeout": 25,
        "sqliosim_campaign_duration": "10m",
        "sqliosim_witness_token_file": token,
    });
    let vars_file = base.join("vars.json");
    std::fs::write(&vars_file, vars.to_string()).expect("vars.json");
    let playbook_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/ansible");
    let child = Command::new("ansible-playbook")
        .current_dir(&playbook_dir)
        .arg("-i")
        .arg(&inv)
        .arg("-e")
        .arg(format!("@{}", vars_file.display()))
        .arg("campaign.yml")
        .env("LC_ALL", "C.UTF-8")
        .env("ANSIBLE_HOST_KEY_CHECKING", "False")
        .env("ANSIBLE_SSH_CONTROL_PATH_DIR", base.join("cp"))
        .env("ANSIBLE_LOCAL_TEMP", base.join("ansible-local"))
        .env("ANSIBLE_FORKS", "5")
        .env("ANSIBLE_PIPELINING", "True")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ansible-playbook");
    // A hang guard, not a timing assertion.
    let played = wait_bounded(child, Duration::from_secs(900));
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&played.stdout),
        String::from_utf8_lossy(&played.stderr)
    );
    let report = std::fs::read_to_string(out.join("campaign-report.txt")).unwrap_or_default();
    let ctx = || format!("--- campaign report\n{report}\n--- playbook\n{log}");
    assert!(
        !played.status.success(),
        "the playbook passed a campaign with a lying and a missing host\n{}",
        ctx()
    );
    let rc = std::fs::read_to_string(out.join("campaign-report.rc")).unwrap_or_default();
    assert_eq!(rc.trim(), "1", "campaign report exit code\n{}", ctx());

    // The JUnit fails exactly the lying host's cycles and the missing host's.
    let failed = junit_failures(&out.join("campaign-junit.xml"));
    let mut expected = BTreeMap::new();
    for c in 1..=CYCLES {
        expected.insert(
            (LYING.to_string(), format!("cycle {c}")),
            "corrupt".to_string(),
        );
        if c >= GONE_AT {
            expected.insert(
                (GONE.to_string(), format!("cycle {c}")),
                "missing".to_string(),
            );
        }
    }
    assert_eq!(failed, expected, "JUnit failures\n{}", ctx());

    // Each cycle's own evidence: the cut, and verify's judgement against the witness.
    for i in 0..4 {
        let name = node(i);
        let mut run_ids = Vec::new();
        for c in 1..=CYCLES {
            let dir = out.join(format!("hosts/{name}/cycle-{c}"));
            if name == GONE && c > GONE_AT {
                assert!(
                    !dir.join("cut.json").exists(),
                    "{name} cycle {c}: cut after it left"
                );
                continue;
            }
            let cut = read_json(&dir.join("cut.json"));
            assert_eq!(cut["cut_rc"], 0, "{name} cycle {c}: {cut}\n{}", ctx());
            let back = !(name == GONE && c == GONE_AT);
            assert_eq!(cut["came_back"], back, "{name} cycle {c}: {cut}");
            if !back {
                continue;
            }
            let v = read_json(&dir.join("verify.json"));
            let j = &v["judgement"];
            let ctx_v = || format!("{name} cycle {c}: {j}\n{}", ctx());
            assert!(j["witness"]["record_batch"].is_u64(), "{}", ctx_v());
            let findings = v["findings_total"].as_u64().unwrap_or(0);
            if name == LYING {
                assert!(findings > 0, "the lying host was not named: {}", ctx_v());
                let lost = v["findings"].as_array().into_iter().flatten().any(|f| {
                    let class = f["class"].as_str().unwrap_or("");
                    class.starts_with("lost") || class.contains("log")
                });
                assert!(lost, "no lost write among its findings: {}", ctx_v());
            } else {
                assert_eq!(findings, 0, "an honest host with findings: {}", ctx_v());
                assert_eq!(cut["resumed"], c > 1, "{}", ctx_v());
                run_ids.push(v["run_id"].as_u64());
            }
        }
        if name != LYING {
            run_ids.dedup();
            assert_eq!(
                run_ids.len(),
                1,
                "{name}: the resumes did not go on in one run"
            );
        }
    }
    drop(witness);
}
