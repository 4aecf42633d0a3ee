//! Ctrl-C handling for capacity runs: the first SIGINT (or SIGTERM) raises a stop flag so the
//! run drains its I/O and reports what it measured; a second one ends the process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// The process-wide stop flag, lowered, with the signal handlers installed on first use.
pub fn stop_flag() -> Arc<AtomicBool> {
    let flag = STOP
        .get_or_init(|| {
            let flag = Arc::new(AtomicBool::new(false));
            for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
                // Order matters: the conditional shutdown sees the flag already raised only on
                // the second signal. Failing to install leaves Ctrl-C at its default (exit).
                let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, flag.clone());
                let _ = signal_hook::flag::register(sig, flag.clone());
            }
            flag
        })
        .clone();
    flag.store(false, Ordering::SeqCst);
    flag
}
