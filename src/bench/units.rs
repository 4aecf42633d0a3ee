//! Parsing of sizes (`64K`, `2G`), durations (`30`, `30s`, `2m`) and comma lists, shared by
//! the bench, SQLIO and DiskSpd front ends.

use thiserror::Error;

/// A value that does not parse, with the switch it came from.
#[derive(Debug, Error, PartialEq)]
#[error("{switch}: {value:?} is not valid; expected {expected}")]
pub struct BadArg {
    /// The switch or option name.
    pub switch: String,
    /// What was given.
    pub value: String,
    /// What is allowed (built at run time for a front end's list of switches).
    pub expected: std::borrow::Cow<'static, str>,
}

/// Builds a [`BadArg`].
pub fn bad(switch: &str, value: &str, expected: &'static str) -> BadArg {
    BadArg {
        switch: switch.to_string(),
        value: value.to_string(),
        expected: expected.into(),
    }
}

/// Parses a byte size: a number with an optional K, M, G or T suffix (powers of 1024), with
/// or without a trailing `B`/`iB` (the one parser, [`crate::config::units::size_bytes`]).
pub fn parse_size(switch: &str, s: &str) -> Result<u64, BadArg> {
    const EXPECTED: &str = "a size such as 8192, 64K, 100M or 2G";
    crate::config::units::size_bytes(s).ok_or_else(|| bad(switch, s, EXPECTED))
}

/// Parses a duration in seconds: `30`, `30s`, `500ms`, `2m`, `1h`.
pub fn parse_secs(switch: &str, s: &str) -> Result<f64, BadArg> {
    const EXPECTED: &str = "a duration such as 30, 30s, 500ms or 2m";
    let t = s.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num.parse().map_err(|_| bad(switch, s, EXPECTED))?;
    if !v.is_finite() || v < 0.0 {
        return Err(bad(switch, s, EXPECTED));
    }
    Ok(v * mult)
}

/// Parses a comma list with `item`; `1,2,4,...,128` expands a doubling series.
pub fn parse_list<T, F>(switch: &str, s: &str, item: F) -> Result<Vec<T>, BadArg>
where
    F: Fn(&str, &str) -> Result<T, BadArg>,
{
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let mut out = Vec::new();
    for p in parts.iter().filter(|p| !p.is_empty()) {
        out.push(item(switch, p)?);
    }
    if out.is_empty() {
        return Err(bad(switch, s, "a value or a comma-separated list"));
    }
    Ok(out)
}

/// Parses a comma list of counts; `1,2,4,...,128` means every power of two from 1 to 128.
pub fn parse_count_list(switch: &str, s: &str) -> Result<Vec<u32>, BadArg> {
    const EXPECTED: &str = "positive integers separated by commas, e.g. 1,2,4 or 1,2,4,...,128";
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let mut out: Vec<u32> = Vec::new();
    let mut expand_next = false;
    for p in parts {
        if p == "..." || p == ".." {
            expand_next = true;
            continue;
        }
        let n: u32 = p.parse().map_err(|_| bad(switch, s, EXPECTED))?;
        if n == 0 {
            return Err(bad(switch, s, EXPECTED));
        }
        if expand_next {
            let mut v = out
                .last()
                .copied()
                .ok_or_else(|| bad(switch, s, EXPECTED))?;
            while v.saturating_mul(2) < n {
                v *= 2;
                out.push(v);
            }
            expand_next = false;
        }
        out.push(n);
    }
    if out.is_empty() || expand_next {
        return Err(bad(switch, s, EXPECTED));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("-b", "8192"), Ok(8192));
        assert_eq!(parse_size("-b", "64K"), Ok(65536));
        assert_eq!(parse_size("-c", "2G"), Ok(2 << 30));
        assert_eq!(parse_size("-c", "100MB"), Ok(100 << 20));
        assert_eq!(parse_size("-c", "1GiB"), Ok(1 << 30));
        assert!(parse_size("-c", "12Q").is_err());
        assert!(parse_size("-c", "").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_secs("-d", "30"), Ok(30.0));
        assert_eq!(parse_secs("-d", "2m"), Ok(120.0));
        assert_eq!(parse_secs("-d", "500ms"), Ok(0.5));
        assert!(parse_secs("-d", "-1").is_err());
    }

    #[test]
    fn count_lists_expand_doubling_series() {
        assert_eq!(
            parse_count_list("--outstanding", "1,2,4,...,32"),
            Ok(vec![1, 2, 4, 8, 16, 32])
        );
        assert_eq!(parse_count_list("--threads", "3"), Ok(vec![3]));
        assert!(parse_count_list("--threads", "0").is_err());
        assert!(parse_count_list("--threads", "1,...").is_err());
    }
}
