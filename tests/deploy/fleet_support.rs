//! Test hosts for the fleet tests: each a network namespace reached from the root namespace
//! over a veth pair on a private /30 that exists only between the two, running its own sshd
//! (Debian's openssh-server) with its own configuration, host key and authorized_keys in a
//! temporary directory. The sshd runs under `unshare --uts --mount`, so the host has its own
//! hostname, its own /etc/machine-id (a per-host file bind-mounted over it) and its own
//! directory mounted at one shared path, so that every host sees the same paths and owns its
//! data, as the hosts of a real fleet do. [`Fleet`] takes everything down on drop, test
//! failure included: the processes in each namespace, the veth pairs and the namespaces.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The tools the fleet test needs, and whether we are root; None when all is there, else why not.
pub fn missing_prerequisite() -> Option<String> {
    let uid = match Command::new("id").arg("-u").output() {
        Ok(out) => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        Err(e) => return Some(format!("`id -u`: {e}")),
    };
    if uid != "0" {
        return Some("not root (network namespaces and sshd need it)".into());
    }
    for tool in [
        "ansible-playbook",
        "ssh",
        "ssh-keygen",
        "ip",
        "unshare",
        "tar",
    ] {
        if !on_path(tool) {
            return Some(format!("`{tool}` is not on PATH"));
        }
    }
    if !Path::new(SSHD).exists() {
        return Some(format!("{SSHD} is missing (Debian package openssh-server)"));
    }
    None
}

/// Fleets started so far by this test process.
static FLEETS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Debian's sshd; it wants its absolute path (it re-executes itself).
pub const SSHD: &str = "/usr/sbin/sshd";

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

/// Runs a command that must succeed; panics with its output otherwise.
pub fn sh(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One namespace host.
pub struct Host {
    /// Its hostname inside its UTS namespace, e.g. "host2".
    pub hostname: String,
    /// Its address, reachable from the root namespace only.
    pub addr: String,
    /// The root namespace's end of the veth pair, with prefix length.
    root_addr: String,
    /// The per-host directory: keys, sshd files, machine-id, and `root/` mounted at the fleet path.
    pub dir: PathBuf,
    /// The machine id this host reports.
    pub machine_id: String,
    netns: String,
    veth: String,
    sshd: Option<Child>,
}

/// All the hosts; dropping it takes them down.
pub struct Fleet {
    pub hosts: Vec<Host>,
    /// The client's private key, for ansible.
    pub key: PathBuf,
    /// Mounted in each host onto its own `root/` directory.
    pub shared_path: PathBuf,
}

impl Fleet {
    /// Starts `n` hosts named host1..hostN under `base`.
    pub fn start(base: &Path, n: usize) -> Fleet {
        Fleet::start_with(base, n, &mut |_| {})
    }

    /// Starts `n` hosts, calling `prepare` with each once its directory `root/` exists and
    /// before its sshd starts (a mount made there is the host's: its mount namespace takes
    /// `root/` with everything mounted under it).
    pub fn start_with(base: &Path, n: usize, prepare: &mut dyn FnMut(&Host)) -> Fleet {
        let key = base.join("client_key");
        keygen(&key);
        let shared_path = base.join("fleet");
        std::fs::create_dir_all(&shared_path).expect("shared mount point");
        // Privilege separation directory of Debian's sshd (systemd creates it at boot).
        std::fs::create_dir_all("/run/sshd").expect("/run/sshd");
        let mut fleet = Fleet {
            hosts: Vec::new(),
            key,
            shared_path,
        };
        let pid = std::process::id();
        // Fleets of one test binary (tests running in parallel) each get their own slots.
        let first = FLEETS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) * 4;
        for i in 1..=n {
            // Guard first, then build: a failure half-way still tears down what exists.
            fleet.hosts.push(Host::named(base, pid, i, first + i));
            let host = fleet.hosts.last_mut().expect("just pushed");
            host.build(&fleet.key, &fleet.shared_path, prepare);
        }
        fleet
    }
}

impl Host {
    /// Host `i` of its fleet, in slot `slot` of the test process (unique across its fleets).
    fn named(base: &Path, pid: u32, i: usize, slot: usize) -> Host {
        // A /30 per host in 10.231.0.0/16, spread by PID so two test runs rarely meet.
        let net = (pid as usize % 40) * 6 + slot % 12;
        Host {
            hostname: format!("host{i}"),
            addr: format!("10.231.{net}.2"),
            root_addr: format!("10.231.{net}.1/30"),
            dir: base.join(format!("host{i}")),
            machine_id: format!("{:032x}", (u128::from(pid) << 64) | slot as u128),
            netns: format!("sqliosim-fleet-{pid}-{slot}"),
            veth: format!("sqf{}h{slot}", pid % 1_000_000),
            sshd: None,
        }
    }

    fn build(&mut self, client_key: &Path, shared: &Path, prepare: &mut dyn FnMut(&Host)) {
        std::fs::create_dir_all(self.dir.join("root")).expect("host dir");
        prepare(self);
        self.network();
        self.write_sshd_files(client_key);
        self.start_sshd(shared);
        self.wait_for_ssh();
    }

    fn network(&self) {
        let (ns, veth) = (self.netns.as_str(), self.veth.as_str());
        sh("ip", &["netns", "add", ns]);
        sh(
            "ip",
            &[
                "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns,
            ],
        );
        sh("ip", &["addr", "add", &self.root_addr, "dev", veth]);
        sh("ip", &["link", "set", veth, "up"]);
        let addr = format!("{}/30", self.addr);
        sh("ip", &["-n", ns, "addr", "add", &addr, "dev", "eth0"]);
        sh("ip", &["-n", ns, "link", "set", "eth0", "up"]);
        sh("ip", &["-n", ns, "link", "set", "lo", "up"]);
    }

    fn write_sshd_files(&self, client_key: &Path) {
        let d = &self.dir;
        keygen(&d.join("host_key"));
        let public = std::fs::read(client_key.with_extension("pub")).expect("client public key");
        std::fs::write(d.join("authorized_keys"), public).expect("authorized_keys");
        std::fs::write(d.join("machine-id"), format!("{}\n", self.machine_id)).expect("machine-id");
        let config = format!(
            "ListenAddress {addr}\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\nUsePAM no\nPermitRootLogin prohibit-password\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             # The temporary directory's parents are not root's own: skip the ownership check.\n\
             StrictModes no\nSubsystem sftp /usr/lib/openssh/sftp-server\n",
            addr = self.addr,
            d = d.display()
        );
        std::fs::write(d.join("sshd_config"), config).expect("sshd_config");
    }

    /// The host's network namespace.
    pub fn netns(&self) -> &str {
        &self.netns
    }

    /// The root namespace's address on this host's link: how the host reaches the machine the
    /// tests run on (the controller).
    pub fn root_ip(&self) -> &str {
        self.root_addr.split('/').next().unwrap_or(&self.root_addr)
    }

    /// The shell script that boots the host's sshd inside a new mount namespace of its own:
    /// its hostname, machine id and directory (`root/` and the mounts under it, at `shared`).
    /// Run it with `ip netns exec NETNS unshare --uts --mount -- sh -c SCRIPT`.
    pub fn boot_script(&self, shared: &Path) -> String {
        let d = self.dir.display();
        format!(
            "hostname {h} && mount --bind {d}/machine-id /etc/machine-id && \
             mount --rbind {d}/root {shared} && exec {SSHD} -D -f {d}/sshd_config -E {d}/sshd.log",
            h = self.hostname,
            shared = shared.display()
        )
    }

    fn start_sshd(&mut self, shared: &Path) {
        let script = self.boot_script(shared);
        let child = Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.netns,
                "unshare",
                "--uts",
                "--mount",
                "--",
            ])
            .args(["sh", "-c", &script])
            .stdin(Stdio::null())
            .spawn()
            .expect("start sshd");
        self.sshd = Some(child);
    }

    fn wait_for_ssh(&mut self) {
        let addr: SocketAddr = format!("{}:22", self.addr).parse().expect("address");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            let exited = self.sshd.as_mut().and_then(|c| c.try_wait().ok().flatten());
            let log = std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default();
            assert!(
                exited.is_none(),
                "sshd of {} exited ({exited:?}):\n{log}",
                self.hostname
            );
            assert!(
                Instant::now() < deadline,
                "sshd of {} never listened:\n{log}",
                self.hostname
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn tear_down(&mut self) {
        if let Some(mut sshd) = self.sshd.take() {
            let _ = sshd.kill();
            let _ = sshd.wait();
        }
        // Sessions, ansible's module runs and sqliosim itself: everything left in the namespace.
        let pids = Command::new("ip")
            .args(["netns", "pids", &self.netns])
            .output();
        if let Ok(out) = pids {
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let _ = Command::new("kill").args(["-KILL", pid]).status();
            }
        }
        let _ = Command::new("ip")
            .args(["link", "del", &self.veth])
            .status();
        let _ = Command::new("ip")
            .args(["netns", "del", &self.netns])
            .status();
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for host in &mut self.hosts {
            host.tear_down();
        }
    }
}

fn keygen(path: &Path) {
    let p = path.to_str().expect("utf-8 temporary path");
    sh(
        "ssh-keygen",
        &[
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "sqliosim-fleet-test",
            "-f",
            p,
        ],
    );
}
