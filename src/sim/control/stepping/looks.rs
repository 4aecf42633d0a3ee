//! What the quiet stepping driver asks the kernel: whether threads of this process are asleep
//! (`/proc/self/task/TID/stat` and `schedstat`).

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// The quiet driver's looks at the threads of its run (see the module doc): each thread's
/// `stat` and `schedstat` in `/proc/self/task/TID/`, opened once and read again from their
/// start at each look (procfs makes them afresh for every read).
#[derive(Default)]
pub(super) struct Looks {
    files: HashMap<i32, Option<(File, File)>>,
}

impl Looks {
    /// Whether every thread in `tids` (of this process) waits: asleep (state `S`) at two looks,
    /// and scheduled no time between them (its count of turns on a CPU, the third figure of
    /// `schedstat`, unchanged). A thread that woke between the looks is running, waiting for a
    /// CPU, or ran and slept again, so each thread slept from its first look to its second,
    /// and all of them at once between the two rounds. A thread gone waits for nothing; a
    /// thread whose files cannot be read otherwise counts as not asleep, and the driver looks
    /// again.
    pub(super) fn all_asleep(&mut self, tids: &[i32]) -> bool {
        self.files.retain(|t, _| tids.contains(t));
        let mut first = Vec::with_capacity(tids.len());
        for &t in tids {
            match self.asleep_runs(t) {
                Some(runs) => first.push(runs),
                None => return false,
            }
        }
        tids.iter()
            .zip(first)
            .all(|(&t, runs)| self.asleep_runs(t) == Some(runs))
    }

    /// Thread `tid`'s count of turns if it is asleep now (`u64::MAX` if it is gone).
    fn asleep_runs(&mut self, tid: i32) -> Option<u64> {
        let mut buf = [0u8; 2048];
        for fresh in [false, true] {
            if fresh || !self.files.contains_key(&tid) {
                // A file that cannot be opened for another reason than the thread's absence
                // tells nothing: not asleep, look again.
                let files = open_thread(tid).ok()?;
                self.files.insert(tid, files);
            }
            let Some((stat, sched)) = self.files.get(&tid)? else {
                // Its files are gone: so is the thread.
                return Some(u64::MAX);
            };
            let Ok(n) = stat.read_at(&mut buf, 0) else {
                // A file kept open outlives its thread: open the id's files again.
                continue;
            };
            let text = std::str::from_utf8(buf.get(..n)?).ok()?;
            // "TID (COMM) STATE ...": the name may hold spaces and parentheses, so the state
            // follows the last ')'.
            let state = text.rsplit_once(')')?.1.trim_start().chars().next()?;
            if state != 'S' {
                return None;
            }
            let Ok(n) = sched.read_at(&mut buf, 0) else {
                continue;
            };
            let text = std::str::from_utf8(buf.get(..n)?).ok()?;
            return turns(text);
        }
        None
    }
}

/// Thread `tid`'s `stat` and `schedstat` (`status` on a kernel without scheduler statistics),
/// `None` if the thread is gone.
fn open_thread(tid: i32) -> std::io::Result<Option<(File, File)>> {
    let dir = format!("/proc/self/task/{tid}");
    let open = |name: &str| match File::open(format!("{dir}/{name}")) {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    };
    let Some(stat) = open("stat")? else {
        return Ok(None);
    };
    let Some(sched) = open("schedstat")?.map_or_else(|| open("status"), |f| Ok(Some(f)))? else {
        return Ok(None);
    };
    Ok(Some((stat, sched)))
}

/// The count of turns on a CPU in `schedstat` (its third figure), or in `status` the voluntary
/// and involuntary context switches together, which count the same turns.
fn turns(text: &str) -> Option<u64> {
    if !text.contains(':') {
        return text.split_whitespace().nth(2)?.parse().ok();
    }
    let count = |key: &str| -> Option<u64> {
        let line = text.lines().find_map(|l| l.strip_prefix(key))?;
        line.trim().parse().ok()
    };
    Some(count("voluntary_ctxt_switches:")? + count("nonvoluntary_ctxt_switches:")?)
}
