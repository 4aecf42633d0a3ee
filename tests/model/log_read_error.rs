//! A read of the log that the device fails (EIO) is a `read_error` finding on the log file,
//! found by the log's reader: it used to be filed as a `write_error` ("log write or flush").

use std::sync::Arc;
use std::time::Duration;

use crate::sim_support::small_plan;
use sqliosim::events::MemorySink;
use sqliosim::findings::FindingClass;
use sqliosim::io::faulty::{Fault, Trigger};
use sqliosim::io::FaultyBackend;
use sqliosim::sim::driver::simulate;

#[test]
fn a_failed_log_read_is_a_read_error_on_the_log() {
    let mut plan = small_plan("/lr".as_ref(), 4, Duration::from_millis(600));
    plan.journal = false;
    plan.stop_on_error = false;
    let log = plan.files[plan.log_files()[0]].path.clone();
    let backend = FaultyBackend::stepped(5);
    // Page 1 holds the log's first blocks: the first read of it is the log's own reader
    // (the chain check or the forward read after the first checkpoint).
    backend.inject(
        Fault::ReadEio,
        Trigger::Page {
            path: log.clone(),
            page: 1,
        },
    );
    let sink = Arc::new(MemorySink::default());
    simulate(plan, &backend, sink.clone()).expect("simulate");
    assert_eq!(backend.fired().len(), 1, "the EIO fired");
    let on_log: Vec<_> = sink
        .findings()
        .into_iter()
        .filter(|f| f.path == log)
        .collect();
    assert!(!on_log.is_empty(), "the failed log read went unreported");
    for f in &on_log {
        assert_eq!(f.class, FindingClass::ReadError, "{f:?}");
    }
}
