//! The kernel's view and the drives' health around the run: the host facts before it, the
//! drives' health before and after, and the kernel's messages of its window.

use super::State;

/// The kernel's view and the drives' health, around the run.
impl State {
    /// The host facts and the drives' health before the run, for the disks under `sys`.
    pub(super) fn capture_before(&mut self, sys: &crate::events::facts::SystemInfo) {
        let disks = disks_of(sys, false);
        self.doc.host_facts = Some(crate::report::facts::host::capture(&disks));
        let before = crate::report::facts::health::capture("before", &disks);
        self.doc.drive_health.extend(before);
    }

    /// The drives' health after the run and the kernel's messages of its window.
    pub(super) fn capture_after(&mut self) {
        let Some(sys) = &self.doc.system else {
            return;
        };
        let (disks, devices) = (disks_of(sys, false), disks_of(sys, true));
        let after = crate::report::facts::health::capture("after", &disks);
        self.doc.drive_health.extend(after);
        let log = crate::report::facts::kmsg::capture(self.started, devices, self.kmsg.take());
        self.doc.kernel_log = Some(log);
    }
}

/// The disks under the run's files (with their partitions and devices when `all`), known
/// ones only, each once.
fn disks_of(sys: &crate::events::facts::SystemInfo, all: bool) -> Vec<String> {
    let mut v: Vec<String> = sys
        .files
        .iter()
        .flat_map(|f| {
            let d = &f.device;
            let mut names = vec![d.disk.clone()];
            if all {
                names.push(d.name.clone());
            }
            names
        })
        .filter(|n| !n.is_empty() && n != crate::report::facts::UNKNOWN)
        .collect();
    v.sort();
    v.dedup();
    v
}
