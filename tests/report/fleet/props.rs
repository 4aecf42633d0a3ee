//! The merge property: the fleet percentiles of N runs, each carrying its latency histogram as
//! base64 HdrHistogram V2, equal those of one histogram fed every sample of every run — the
//! merge loses nothing and never averages percentiles.

use proptest::prelude::*;
use sqliosim::report::JsonReport;
use sqliosim::stats::{LatencyHistogram, OpTotals, Summary};

/// A minimal finished /2 summary of host `host` with these latencies (ns).
fn summary_of(host: &str, samples: &[u64]) -> String {
    let mut h = LatencyHistogram::new();
    samples.iter().for_each(|s| h.record(*s));
    let mut doc = JsonReport::new();
    doc.schema = "sqliosim-summary/2".into();
    doc.complete = true;
    doc.outcome = "clean".into();
    doc.host = Some(sqliosim::report::sinks::json::HostInfo {
        hostname: host.into(),
        machine_id: None,
        label: None,
    });
    doc.stats = Some(Summary {
        elapsed_s: 1.0,
        total: OpTotals {
            reads: samples.len() as u64,
            iops: samples.len() as f64,
            latency: h.latency(),
            latency_hdr: Some(h.to_v2_base64()),
            ..OpTotals::default()
        },
        ..Summary::default()
    });
    serde_json::to_string(&doc).unwrap()
}

fn latencies() -> impl Strategy<Value = Vec<u64>> {
    // From 1 µs to 10 s, with a long tail: what a disk's latencies look like.
    prop::collection::vec(
        prop_oneof![1_000u64..2_000_000, 2_000_000u64..10_000_000_000],
        1..300,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn merged_histograms_give_the_percentiles_of_all_samples(runs in prop::collection::vec(latencies(), 1..8)) {
        let dir = tempfile::tempdir().unwrap();
        let mut all = LatencyHistogram::new();
        for (i, samples) in runs.iter().enumerate() {
            std::fs::write(dir.path().join(format!("r{i}.json")), summary_of(&format!("h{i}"), samples)).unwrap();
            samples.iter().for_each(|s| all.record(*s));
        }
        let fleet = sqliosim::report::fleet::build(&[dir.path().to_path_buf()], None);
        prop_assert_eq!(fleet.rows.len(), runs.len());
        prop_assert_eq!(fleet.totals.runs_merged, runs.len());
        let merged = fleet.totals.hist.expect("merged histogram");
        prop_assert_eq!(merged.count(), all.count());
        prop_assert_eq!(merged.latency(), all.latency());
        for q in [0.5, 0.9, 0.99, 0.999] {
            prop_assert_eq!(merged.value_at_quantile(q), all.value_at_quantile(q));
        }
    }

    #[test]
    fn runs_of_one_host_merge_into_one_row_with_exact_percentiles(runs in prop::collection::vec(latencies(), 2..5)) {
        let dir = tempfile::tempdir().unwrap();
        let mut all = LatencyHistogram::new();
        for (i, samples) in runs.iter().enumerate() {
            std::fs::write(dir.path().join(format!("r{i}.json")), summary_of("same", samples)).unwrap();
            samples.iter().for_each(|s| all.record(*s));
        }
        let fleet = sqliosim::report::fleet::build(&[dir.path().to_path_buf()], None);
        prop_assert_eq!(fleet.rows.len(), 1);
        prop_assert_eq!(fleet.rows[0].latency, all.latency());
    }
}
