//! The figures of `run --bench` (a capacity run beside the simulation) as the run's evidence
//! keeps them: the JSON summary's `bench` object, the HTML report's capacity section and the
//! fleet report's bench columns.
//!
//! The bench's own JSON document (what `sqliosim bench --json` writes) travels whole in
//! `document`, as a JSON value: the report layer sits below the bench and never names its
//! types. The headline (`iops`, `mb_per_s`, `p99_us`, `max_us`) is read from it: of the one
//! combination a plain `--bench` measures, or of a sweep's combination with the highest IOPS
//! (`combination` says which).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A capacity run's figures in the run's JSON summary (`bench`, an addition to schema /2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BenchFigures {
    /// The `--bench` options, as given.
    pub args: String,
    /// "clean", "findings" (I/O errors or failed verification) or "error" (it did not run).
    pub outcome: String,
    /// Why it did not run or stopped, when `outcome` is "error".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The combinations measured.
    pub combinations: u64,
    /// The headline's combination: "8192 B random 70 % read, 4 thread(s) × 8".
    pub combination: String,
    /// I/O per second of the headline combination.
    pub iops: f64,
    /// Megabytes (10^6) per second of the headline combination.
    pub mb_per_s: f64,
    /// Its 99th-percentile latency, µs (null without latencies).
    pub p99_us: Option<f64>,
    /// Its highest latency, µs (null without latencies).
    pub max_us: Option<f64>,
    /// I/O errors and failed verifications over every combination.
    pub errors: u64,
    /// The bench's own JSON document (`sqliosim bench --json`: tool, results, saturation).
    pub document: Value,
}

impl BenchFigures {
    /// The figures of a bench that finished with `outcome` ("clean" or "findings"), read from
    /// its JSON `document`.
    pub fn of(args: &str, outcome: &str, document: Value) -> BenchFigures {
        let results = document["results"].as_array().cloned().unwrap_or_default();
        let best = results
            .iter()
            .max_by(|a, b| f(&a["iops"]).total_cmp(&f(&b["iops"])));
        let errors = results
            .iter()
            .map(|c| c["errors"].as_u64().unwrap_or(0) + c["verify_failures"].as_u64().unwrap_or(0))
            .sum();
        let lat = best.map(|c| &c["latency"]);
        BenchFigures {
            args: args.into(),
            outcome: outcome.into(),
            error: None,
            combinations: results.len() as u64,
            combination: best.map(combination).unwrap_or_default(),
            iops: best.map_or(0.0, |c| f(&c["iops"])),
            mb_per_s: best.map_or(0.0, |c| f(&c["mb_per_s"])),
            p99_us: lat.and_then(|l| percentile(l, 99.0)),
            max_us: lat.and_then(|l| l["max_us"].as_f64()),
            errors,
            document,
        }
    }

    /// A bench that did not run or failed: `error` says why.
    pub fn failed(args: &str, error: String) -> BenchFigures {
        BenchFigures {
            args: args.into(),
            outcome: "error".into(),
            error: Some(error),
            document: Value::Null,
            ..BenchFigures::default()
        }
    }

    /// "12345 IOPS, 96.4 MB/s, p99 1.02 ms (8192 B random 70 % read, 4 thread(s) × 8)", or
    /// why there are no figures.
    pub fn describe(&self) -> String {
        if let Some(e) = &self.error {
            return format!("did not complete: {e}");
        }
        let p99 = self
            .p99_us
            .map_or_else(String::new, |p| format!(", p99 {:.2} ms", p / 1000.0));
        let of = match self.combinations {
            0 | 1 => String::new(),
            n => format!(", the best of {n} combinations"),
        };
        format!(
            "{:.0} IOPS, {:.1} MB/s{p99} ({}{of}), {} error(s)",
            self.iops, self.mb_per_s, self.combination, self.errors
        )
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// The latency at percentile `p` of a bench latency summary (`percentiles`: `[p, µs]` pairs).
fn percentile(latency: &Value, p: f64) -> Option<f64> {
    latency["percentiles"].as_array()?.iter().find_map(|pair| {
        let pair = pair.as_array()?;
        ((pair.first()?.as_f64()? - p).abs() < 1e-9).then_some(pair.get(1)?.as_f64()?)
    })
}

/// "8192 B random 70 % read, 4 thread(s) × 8" from a combination's `cell`.
fn combination(c: &Value) -> String {
    let cell = &c["cell"];
    format!(
        "{} B {} {} % read, {} thread(s) × {}",
        cell["block_size"].as_u64().unwrap_or(0),
        cell["pattern"].as_str().unwrap_or("?"),
        cell["read_pct"].as_u64().unwrap_or(0),
        cell["threads"].as_u64().unwrap_or(0),
        cell["outstanding"].as_u64().unwrap_or(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_is_the_combination_with_the_most_iops() {
        let doc = serde_json::json!({
            "tool": "sqliosim bench",
            "results": [
                {"cell": {"block_size": 8192, "pattern": "random", "read_pct": 100, "threads": 1, "outstanding": 1},
                 "iops": 100.0, "mb_per_s": 0.8, "errors": 0, "verify_failures": 1,
                 "latency": {"percentiles": [[50.0, 9.0], [99.0, 90.0]], "max_us": 100.0}},
                {"cell": {"block_size": 8192, "pattern": "random", "read_pct": 100, "threads": 1, "outstanding": 8},
                 "iops": 700.0, "mb_per_s": 5.7, "errors": 2, "verify_failures": 0,
                 "latency": {"percentiles": [[50.0, 11.0], [99.0, 1500.0]], "max_us": 2000.0}}
            ]
        });
        let b = BenchFigures::of("-d 1", "findings", doc);
        assert_eq!(
            (b.iops, b.p99_us, b.max_us),
            (700.0, Some(1500.0), Some(2000.0))
        );
        assert_eq!((b.combinations, b.errors), (2, 3));
        assert_eq!(
            b.describe(),
            "700 IOPS, 5.7 MB/s, p99 1.50 ms (8192 B random 100 % read, 1 thread(s) × 8, the best of 2 combinations), 3 error(s)"
        );
        let bad = BenchFigures::failed("-d 1", "no such file".into());
        assert_eq!(bad.describe(), "did not complete: no such file");
    }
}
