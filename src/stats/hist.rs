//! A latency histogram (hdrhistogram) with fixed bounds, and its percentile summary.
//!
//! Histograms travel in the JSON summary as HdrHistogram's V2 serialization (uncompressed),
//! base64-encoded: the form every HdrHistogram implementation reads, so results of many runs
//! can be merged exactly (percentiles of the merged histogram, never averaged percentiles).

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;

use super::summary::Latency;

/// Highest latency tracked precisely: one hour, in nanoseconds; longer ones are clamped.
const MAX_NS: u64 = 3_600_000_000_000;
/// Two significant figures (1 % error) keep one histogram near 40 KB.
const SIGFIG: u8 = 2;

/// Latencies in nanoseconds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram from 1 ns to one hour.
    pub fn new() -> LatencyHistogram {
        let h = Histogram::new_with_bounds(1, MAX_NS, SIGFIG)
            .expect("constant histogram bounds are valid");
        LatencyHistogram { h }
    }

    /// Records one latency (clamped to the tracked range).
    pub fn record(&mut self, latency_ns: u64) {
        self.h.saturating_record(latency_ns.max(1));
    }

    /// Adds every value of `other`.
    pub fn add(&mut self, other: &LatencyHistogram) {
        // Both histograms have the same bounds, so adding cannot fail.
        let _ = self.h.add(&other.h);
    }

    /// Forgets every value (the bounds stay).
    pub fn reset(&mut self) {
        self.h.reset();
    }

    /// Number of values recorded at or below `ns` (to the histogram's precision, two
    /// significant digits): a Prometheus `le` bucket.
    pub fn count_up_to(&self, ns: u64) -> u64 {
        if self.h.is_empty() {
            return 0;
        }
        self.h.count_between(0, ns.min(MAX_NS))
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// The latency (ns) at quantile `q` (0 to 1): for drawing whole distributions; 0 when
    /// nothing was recorded.
    pub fn value_at_quantile(&self, q: f64) -> u64 {
        if self.h.is_empty() {
            return 0;
        }
        self.h.value_at_quantile(q.clamp(0.0, 1.0))
    }

    /// Percentile summary, in microseconds.
    pub fn latency(&self) -> Latency {
        if self.h.is_empty() {
            return Latency::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Latency {
            count: self.h.len(),
            min_us: us(self.h.min()),
            mean_us: self.h.mean() / 1000.0,
            p50_us: us(self.h.value_at_quantile(0.50)),
            p90_us: us(self.h.value_at_quantile(0.90)),
            p99_us: us(self.h.value_at_quantile(0.99)),
            p999_us: us(self.h.value_at_quantile(0.999)),
            max_us: us(self.h.max()),
        }
    }
}

/// A serialized histogram could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum HistCodecError {
    /// Not base64.
    #[error("latency histogram: not base64: {0}")]
    Base64(#[from] base64::DecodeError),
    /// Not an HdrHistogram V2 (or V2-deflate) serialization.
    #[error("latency histogram: not an HdrHistogram serialization: {0:?}")]
    Hdr(hdrhistogram::serialization::DeserializeError),
}

/// HdrHistogram's V2 serialization of any histogram of nanoseconds, base64 (standard
/// alphabet, padded): the one codec behind every `latency_hdr` (the simulation's
/// [`LatencyHistogram`]s and `sqliosim bench`'s own histograms).
pub fn histogram_to_v2_base64(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    // Serializing into a Vec cannot fail: V2 only fails on I/O errors or on counts past
    // i64::MAX, which no run reaches.
    let _ = V2Serializer::new().serialize(h, &mut bytes);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl LatencyHistogram {
    /// HdrHistogram's V2 serialization of the histogram (nanoseconds), base64 (standard
    /// alphabet, padded): the `latency_hdr` field of the JSON summary.
    pub fn to_v2_base64(&self) -> String {
        histogram_to_v2_base64(&self.h)
    }

    /// Reads a histogram written by [`LatencyHistogram::to_v2_base64`] (or by any
    /// HdrHistogram implementation's V2 or V2-deflate encoder, in nanoseconds). Values outside
    /// this histogram's bounds are clamped into them.
    pub fn from_v2_base64(text: &str) -> Result<LatencyHistogram, HistCodecError> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
        let read: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(HistCodecError::Hdr)?;
        let mut out = LatencyHistogram::new();
        for v in read.iter_recorded() {
            let value = v.value_iterated_to().clamp(1, MAX_NS);
            let _ = out.h.record_n(value, v.count_at_value());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod codec_tests {
    use super::*;

    #[test]
    fn v2_base64_round_trips_every_percentile() {
        let mut h = LatencyHistogram::new();
        for i in 1..=10_000u64 {
            h.record(i * 1_337);
        }
        h.record(MAX_NS);
        let back = LatencyHistogram::from_v2_base64(&h.to_v2_base64()).expect("decodes");
        assert_eq!(back.latency(), h.latency());
        assert_eq!(back.count(), 10_001);
    }

    #[test]
    fn junk_is_an_error_not_a_panic() {
        assert!(LatencyHistogram::from_v2_base64("not base64 at all!").is_err());
        assert!(LatencyHistogram::from_v2_base64("AAAA").is_err());
    }
}
