//! Outliers: a row (host and device) whose IOPS or p99 latency lies far from the fleet's.
//!
//! The rule: more than [`K`] median absolute deviations (MAD) from the fleet median, either
//! way (a disk far faster than its peers may be acknowledging writes it has not stored).
//! Two choices make it usable on real fleets:
//! - the MAD is floored at [`FLOOR`] of the median: identical machines give a MAD near zero,
//!   and without a floor a 1 % wobble would count as "20 deviations";
//! - with fewer than [`MIN_ROWS`] rows nothing is flagged: with two, the median is their
//!   midpoint and both sit at the same distance from it, so neither can be called the odd one.

use serde::Serialize;

use super::row::Row;

/// How many (floored) median absolute deviations make an outlier.
pub const K: f64 = 3.0;
/// The MAD is at least this fraction of the median.
pub const FLOOR: f64 = 0.05;
/// Fewest rows with data for the analysis to run.
pub const MIN_ROWS: usize = 3;

/// One flagged row.
#[derive(Debug, Clone, Serialize)]
pub struct Flagged {
    /// Host.
    pub host: String,
    /// Device.
    pub device: String,
    /// Its value.
    pub value: f64,
    /// Signed distance from the median, in (floored) MADs.
    pub deviations: f64,
}

/// The analysis of one measure.
#[derive(Debug, Clone, Serialize)]
pub struct Measure {
    /// "iops" or "p99_ms".
    pub name: &'static str,
    /// Rows with a value.
    pub rows: usize,
    /// Fleet median.
    pub median: f64,
    /// Median absolute deviation.
    pub mad: f64,
    /// The deviation unit used: max(MAD, FLOOR × |median|).
    pub scale: f64,
    /// Rows beyond K × scale from the median.
    pub flagged: Vec<Flagged>,
}

/// The outlier analysis of a fleet.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Outliers {
    /// The rule, in words (printed with the table).
    pub rule: String,
    /// One entry per measure analysed.
    pub measures: Vec<Measure>,
    /// Why a measure was not analysed ("p99_ms: 2 rows with data, at least 3 needed").
    pub not_analysed: Vec<String>,
}

/// The rule, as printed.
pub fn rule() -> String {
    format!(
        "a host/device is an outlier when its IOPS or p99 lies more than {K} median absolute \
         deviations (MAD) from the fleet median, either way; the MAD counts as at least {:.0} % \
         of the median (identical hosts would otherwise flag noise); needs at least {MIN_ROWS} \
         hosts/devices with data",
        FLOOR * 100.0
    )
}

/// The median of `v` (sorted in place); 0 when empty.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Analyses one measure over `(row index, value)`; `None` with a reason when too few rows.
fn measure(name: &'static str, vals: &[(usize, f64)], rows: &[Row]) -> Result<Measure, String> {
    if vals.len() < MIN_ROWS {
        return Err(format!(
            "{name}: {} host/device(s) with data, at least {MIN_ROWS} needed",
            vals.len()
        ));
    }
    let mut xs: Vec<f64> = vals.iter().map(|(_, v)| *v).collect();
    let med = median(&mut xs);
    let mut dev: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&mut dev);
    let scale = mad.max(FLOOR * med.abs());
    let flagged = vals
        .iter()
        .filter(|(_, v)| (v - med).abs() > K * scale && *v != med)
        .map(|&(i, v)| Flagged {
            host: rows[i].name.clone(),
            device: rows[i].device.name.clone(),
            value: v,
            deviations: if scale > 0.0 {
                (v - med) / scale
            } else {
                f64::INFINITY.copysign(v - med)
            },
        })
        .collect();
    Ok(Measure {
        name,
        rows: vals.len(),
        median: med,
        mad,
        scale,
        flagged,
    })
}

/// Analyses IOPS (rows that did I/O) and p99 (rows with latency) and marks the outlier rows.
pub fn analyse(rows: &mut [Row]) -> Outliers {
    let iops: Vec<(usize, f64)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.ops > 0)
        .map(|(i, r)| (i, r.iops))
        .collect();
    let p99: Vec<(usize, f64)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.latency.count > 0)
        .map(|(i, r)| (i, r.latency.p99_us / 1000.0))
        .collect();
    let mut out = Outliers {
        rule: rule(),
        ..Outliers::default()
    };
    for (name, vals, tag) in [("iops", iops, "iops"), ("p99_ms", p99, "p99")] {
        match measure(name, &vals, rows) {
            Ok(m) => {
                for f in &m.flagged {
                    if let Some(r) = rows
                        .iter_mut()
                        .find(|r| r.name == f.host && r.device.name == f.device)
                    {
                        r.outlier.push(tag);
                    }
                }
                out.measures.push(m);
            }
            Err(why) => out.not_analysed.push(why),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(v: &[f64]) -> Vec<(usize, f64)> {
        v.iter().copied().enumerate().collect()
    }

    fn rows(n: usize) -> Vec<Row> {
        let dev = super::super::device::DeviceKey::unknown();
        (0..n)
            .map(|i| Row::new(&format!("h{i}"), dev.clone()))
            .collect()
    }

    #[test]
    fn a_slow_host_is_flagged_and_its_peers_are_not() {
        let v = vals(&[1000.0, 1010.0, 990.0, 1005.0, 400.0]);
        let m = measure("iops", &v, &rows(5)).unwrap();
        assert_eq!(m.median, 1000.0);
        assert_eq!(m.flagged.len(), 1);
        assert_eq!(m.flagged[0].value, 400.0);
        assert!(m.flagged[0].deviations < -3.0);
    }

    #[test]
    fn identical_hosts_use_the_floor_instead_of_a_zero_mad() {
        // MAD 0: without the floor, 1003 would be infinitely far; with it, 3 × 50 = 150.
        let v = vals(&[1000.0, 1000.0, 1000.0, 1003.0, 1200.0]);
        let m = measure("iops", &v, &rows(5)).unwrap();
        assert_eq!(m.mad, 0.0);
        assert_eq!(m.scale, 50.0);
        let flagged: Vec<f64> = m.flagged.iter().map(|f| f.value).collect();
        assert_eq!(flagged, vec![1200.0]);
    }

    #[test]
    fn fewer_than_three_rows_are_not_analysed() {
        let err = measure("iops", &vals(&[1.0, 100.0]), &rows(2)).unwrap_err();
        assert!(err.contains("at least 3"), "{err}");
    }

    #[test]
    fn median_of_even_and_odd_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }
}
