//! `Affinity` and `IOAffinity` applied: a CPU mask (bit n is CPU n; 0 means every CPU the
//! process may use) turned into `sched_setaffinity` for a thread (the workers pin themselves,
//! the driver pins the I/O service thread by its id).
//!
//! The configuration already refuses bits beyond the machine's CPUs. A mask whose CPUs are all
//! outside what this process may use (a `taskset`, a container's cpuset) is a warning, not an
//! error: pinning shapes the load, not what is verified, and a burn-in started under a
//! narrower cpuset should still run. [`usable`] says so before the run; [`pin`] then leaves
//! such threads unpinned.

use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet, Pid};

/// The CPUs (ascending) of `mask` that the calling thread may run on; empty when none is.
pub fn usable(mask: u64) -> std::io::Result<Vec<usize>> {
    let allowed = sched_getaffinity(None)?;
    Ok((0..64)
        .filter(|&c| mask & (1u64 << c) != 0 && c < CpuSet::MAX_CPU && allowed.is_set(c))
        .collect())
}

/// The CPUs a thread (`None`: the calling one) may run on, ascending.
pub fn cpus_of(tid: Option<Pid>) -> std::io::Result<Vec<usize>> {
    let set = sched_getaffinity(tid)?;
    Ok((0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect())
}

/// Pins thread `tid` (`None`: the calling one) to the usable CPUs of `mask`. Returns the CPUs
/// it is pinned to; empty when `mask` is 0 or names no usable CPU (left as it was).
pub fn pin(tid: Option<Pid>, mask: u64) -> std::io::Result<Vec<usize>> {
    if mask == 0 {
        return Ok(Vec::new());
    }
    let cpus = usable(mask)?;
    if cpus.is_empty() {
        return Ok(cpus);
    }
    let mut set = CpuSet::new();
    for &c in &cpus {
        set.set(c);
    }
    sched_setaffinity(tid, &set)?;
    Ok(cpus)
}

/// The warning for `key=mask` when it names no CPU this process may use, else `None`.
pub fn unusable_warning(key: &str, mask: u64) -> Option<String> {
    if mask == 0 || usable(mask).is_ok_and(|c| !c.is_empty()) {
        return None;
    }
    let allowed = cpus_of(None).unwrap_or_default();
    Some(format!(
        "{key}=0x{mask:X} names no CPU this process may use (it may use {allowed:?}): the \
         threads it would pin run unpinned; widen the cpuset (taskset) or change {key}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pins a fresh thread to the last CPU it may use and reads the set back, from the thread
    /// itself and by its id from another thread (as the driver pins the I/O service).
    #[test]
    fn a_mask_is_applied_and_read_back_with_sched_getaffinity() {
        let all = cpus_of(None).expect("getaffinity");
        let last = *all.last().expect("some CPU");
        let mask = 1u64 << last;
        let own = std::thread::spawn(move || {
            let pinned = pin(None, mask).expect("pin");
            (pinned, cpus_of(None).expect("read back"))
        })
        .join()
        .expect("thread");
        assert_eq!(own, (vec![last], vec![last]));
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || {
            let _ = tx.send(rustix::thread::gettid());
            let _ = stop_rx.recv();
        });
        let tid = rx.recv().expect("tid");
        assert_eq!(pin(Some(tid), mask).expect("pin by id"), vec![last]);
        assert_eq!(cpus_of(Some(tid)).expect("read back"), vec![last]);
        let _ = stop_tx.send(());
        other.join().expect("thread");
    }

    #[test]
    fn zero_pins_nothing_and_an_unusable_mask_warns() {
        assert_eq!(pin(None, 0).expect("no-op"), Vec::<usize>::new());
        assert_eq!(unusable_warning("Affinity", 0), None);
        let all = cpus_of(None).expect("getaffinity");
        let outside = (0..64)
            .find(|c| !all.contains(c))
            .expect("a CPU bit not allowed");
        let w = unusable_warning("IOAffinity", 1u64 << outside).expect("warning");
        assert!(w.starts_with("IOAffinity=0x"), "{w}");
        assert!(usable(1u64 << outside).expect("usable").is_empty());
    }
}
