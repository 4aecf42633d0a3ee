//! 4 KiB-logical-sector ("4Kn") devices without root: a run on the in-memory backend enforcing
//! a 4096-byte unit shows that no direct transfer of the simulation is smaller than a sector, a
//! unit over a page is refused, and tears are told in device sectors. The real devices (ext4,
//! XFS and btrfs on `losetup --sector-size 4096 --direct-io=on`) are cells of tests/kernel/matrix.rs.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sqliosim::events::MemorySink;
use sqliosim::io::FaultyBackend;

#[test]
fn every_transfer_of_a_run_is_whole_4096_byte_sectors() {
    let backend = FaultyBackend::stepped(7);
    backend.set_dio_align(4096);
    let plan = crate::sim_support::small_plan(Path::new("/4kn"), 2, Duration::from_secs(2));
    let log = plan.files[1].path.clone();
    let sink = Arc::new(MemorySink::default());
    let out = sqliosim::sim::driver::simulate(plan, &backend, sink.clone()).expect("simulate");
    assert!(!out.worker_panicked);
    assert_eq!(
        out.findings,
        0,
        "a misaligned transfer fails with EINVAL and is reported: {:#?}",
        sink.findings()
    );
    let bytes = backend.contents(&log).expect("the log exists");
    assert_eq!(
        u32::from_le_bytes(bytes[16..20].try_into().expect("4")),
        4096
    );
}

#[test]
fn a_device_needing_more_than_a_page_is_refused_before_anything_is_written() {
    let backend = FaultyBackend::stepped(7);
    backend.set_dio_align(16384);
    let plan = crate::sim_support::small_plan(Path::new("/16k"), 2, Duration::from_secs(1));
    let sink = Arc::new(MemorySink::default());
    let err = sqliosim::sim::driver::simulate(plan, &backend, sink).expect_err("refused");
    let text = err.to_string();
    assert!(text.contains("units of 16384 bytes"), "{text}");
    // An environment error (exit 2) of its own kind, not an internal one.
    assert!(
        matches!(
            err,
            sqliosim::sim::driver::SetupError::File(
                sqliosim::sim::engine::files::FileError::SectorTooLarge { unit: 16384, .. }
            )
        ),
        "{err:?}"
    );
}

/// Runs a read-only main phase on a 4096-unit backend with `fault` armed on data page 80
/// (hit by the initial update), and returns the findings.
fn findings_with(fault: sqliosim::io::faulty::Fault) -> Vec<sqliosim::findings::Finding> {
    let backend = FaultyBackend::stepped(7);
    backend.set_dio_align(4096);
    let mut plan =
        crate::sim_support::small_plan(Path::new("/torn"), 8, Duration::from_millis(500));
    plan.journal = false;
    plan.random.write_ratio = 0.0;
    plan.bulk.users = 0;
    plan.files[0].shrinkable = false;
    let target = sqliosim::io::faulty::Trigger::Page {
        path: plan.files[0].path.clone(),
        page: 80,
    };
    backend.inject(fault, target);
    let sink = Arc::new(MemorySink::default());
    let out = sqliosim::sim::driver::simulate(plan, &backend, sink.clone()).expect("simulate");
    assert!(!out.worker_panicked);
    assert_eq!(backend.armed(), 0, "the fault fired");
    sink.findings()
}

#[test]
fn a_torn_write_on_a_4kn_device_is_told_in_device_sectors() {
    use sqliosim::io::faulty::{Fault, Tear};
    let found = findings_with(Fault::TornWrite(Tear::At4096));
    let torn: Vec<_> = found
        .iter()
        .filter(|f| f.class == sqliosim::findings::FindingClass::TornWrite)
        .collect();
    assert_eq!(torn.len(), 1, "{found:#?}");
    assert_eq!(torn[0].page_id, 80);
    let detail = torn[0].detail.as_deref().unwrap_or_default();
    assert!(
        detail.starts_with(
            "torn write at device sector 1 of 2 (4096-byte sectors); 512-byte stamp map ["
        ),
        "{detail}"
    );
}

#[test]
fn a_tear_inside_a_512_byte_sector_is_a_torn_write_with_its_byte() {
    use sqliosim::io::faulty::{Fault, Tear};
    // The initial update is the page's first write: the old image is zeros.
    let found = findings_with(Fault::TornWrite(Tear::Bytes(3 * 512 + 200)));
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(
        f.class,
        sqliosim::findings::FindingClass::TornWrite,
        "{f:#?}"
    );
    let text = f.detail.clone().unwrap_or_else(|| f.verdict.describe());
    assert!(
        text.contains("inside device sector 0 of 2")
            && text.contains("torn inside 512-byte sector 3 at page byte 0x"),
        "{text}"
    );
}
