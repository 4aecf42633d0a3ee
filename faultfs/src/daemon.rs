//! Running the daemon: mount, serve until unmounted or signalled, unmount.

use anyhow::{bail, Context, Result};
use fuser::{Config, MountOption, Session, SessionUnmounter};

use crate::cache::Cache;
use crate::cli::Options;
use crate::faults::FaultTable;
use crate::fs::FaultFs;
use crate::sys;

/// Mounts `opts.backing` at `opts.mountpoint` and serves requests until unmounted.
///
/// SIGINT, SIGTERM and SIGHUP unmount cleanly, so a stopped daemon does not leave
/// a dead mount behind (an unclean kill does: every access then fails ENOTCONN).
pub fn serve(opts: Options) -> Result<()> {
    if !opts.backing.is_dir() {
        bail!(
            "backing directory {} is not a directory",
            opts.backing.display()
        );
    }
    let backing = opts
        .backing
        .canonicalize()
        .context("resolving the backing directory")?;
    let mut table = FaultTable::new(opts.seed);
    for spec in opts.faults {
        let (id, now) = table.arm(spec).context("arming a --fault")?;
        if now.is_some() {
            bail!("--fault {id}: `flip` acts at once; send it to the control file after mounting");
        }
    }
    let mut fs = FaultFs::new(backing, table, opts.verbose);
    fs.refuse_direct = opts.refuse_direct;
    fs.ignore_dsync = opts.ignore_dsync;
    fs.cache = std::sync::Mutex::new(Cache::new(opts.volatile_cache, opts.cache_max_mib));
    // Block the stop signals before fuser starts its threads, so they inherit the mask.
    sys::block_stop_signals().context("blocking signals")?;
    let mut session = Session::new(fs, &opts.mountpoint, &config(opts.threads))
        .with_context(|| format!("mounting at {}", opts.mountpoint.display()))?;
    spawn_signal_thread(session.unmount_callable())?;
    session.run().context("serving FUSE requests")
}

/// Mount options: named `faultfs` in the mount table, no devices, no set-uid.
fn config(threads: usize) -> Config {
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("faultfs".into()),
        MountOption::Subtype("faultfs".into()),
        MountOption::NoDev,
        MountOption::NoSuid,
    ];
    config.n_threads = Some(threads);
    config
}

/// Unmounts when a stop signal arrives; `run` then returns and the daemon exits.
fn spawn_signal_thread(mut unmounter: SessionUnmounter) -> Result<()> {
    std::thread::Builder::new()
        .name("faultfs-signals".into())
        .spawn(move || {
            if let Ok(sig) = sys::wait_stop_signal() {
                eprintln!("faultfs: signal {sig}, unmounting");
                if let Err(e) = unmounter.unmount() {
                    eprintln!("faultfs: unmount failed: {e}");
                }
            }
        })
        .context("starting the signal thread")?;
    Ok(())
}
