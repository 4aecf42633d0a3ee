//! Sizes and durations as people write them, for every option that takes one: `10G`, `512M`,
//! `64K` (powers of 1024, an optional `B` or `iB`), and `90s`, `1h30m`, `2d` (units d, h, m, s
//! in any combination, largest first, or plain seconds). One parser here, used by `run` and by
//! the capacity runs' sizes (`bench::units` wraps it in its own error type). Pure.

/// Bytes of `text`: a whole number with an optional K, M, G or T suffix (and `B`/`iB`);
/// `None` when it is not one or overflows. A plain number is bytes.
pub fn size_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix("ib"))
        .unwrap_or(t);
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits_end);
    let n: u64 = num.parse().ok()?;
    let shift = match suffix.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" => 10,
        "M" | "MB" => 20,
        "G" | "GB" => 30,
        "T" | "TB" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

/// Whole megabytes of a `run --size`: a plain number is MB (SQLIOSim's -size), a suffixed size
/// must come to a whole number of MB.
pub fn size_mb(text: &str) -> Result<u64, String> {
    const ALLOWED: &str = "expected a size in MB such as 500, or with a suffix: 512M, 10G, 1T";
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().map_err(|_| format!("{text:?}: too large"));
    }
    let bytes = size_bytes(t).ok_or_else(|| format!("{text:?}: {ALLOWED}"))?;
    match bytes % (1 << 20) {
        0 => Ok(bytes >> 20),
        _ => Err(format!("{text:?}: not a whole number of MB; {ALLOWED}")),
    }
}

/// Seconds of a duration: plain seconds (`90`), or numbers with units d, h, m, s, largest
/// first (`90s`, `5m`, `1h30m`, `2d`, `1d12h`), at least 1 second.
pub fn duration_secs(text: &str) -> Result<u64, String> {
    const ALLOWED: &str =
        "expected seconds, or numbers with units d, h, m, s such as 90s, 5m, 1h30m, 2d";
    let t = text.trim().to_ascii_lowercase();
    let bad = || format!("{text:?}: {ALLOWED}");
    if t.is_empty() {
        return Err(bad());
    }
    let (mut total, mut rest, mut last_unit) = (0u64, t.as_str(), u64::MAX);
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (num, tail) = rest.split_at(end);
        let n: u64 = num.parse().map_err(|_| bad())?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        let factor = match unit {
            "" if total == 0 && next.is_empty() => 1,
            "s" => 1,
            "m" => 60,
            "h" => 3600,
            "d" => 86_400,
            _ => return Err(bad()),
        };
        // Each unit once, largest first: "30m1h" is more likely a typo than a sum.
        if factor >= last_unit {
            return Err(bad());
        }
        last_unit = factor;
        total = n
            .checked_mul(factor)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| format!("{text:?}: too long"))?;
        rest = next;
    }
    match total {
        0 => Err(format!("{text:?}: the duration must be at least 1 second")),
        s => Ok(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_as_people_write_them() {
        for (t, s) in [("60", 60), ("90s", 90), ("5m", 300), ("2H", 7200)] {
            assert_eq!(duration_secs(t), Ok(s), "{t}");
        }
        for (t, s) in [
            ("1h30m", 5400),
            ("2d", 172_800),
            ("1d12h", 129_600),
            ("1m30s", 90),
        ] {
            assert_eq!(duration_secs(t), Ok(s), "{t}");
        }
        for t in ["", "5x", "30m1h", "1h1h", "h", "1.5h", "-5", "0"] {
            assert!(duration_secs(t).is_err(), "{t}");
        }
        assert!(duration_secs("5x").unwrap_err().contains("1h30m"));
    }

    #[test]
    fn sizes_as_people_write_them() {
        assert_eq!(size_mb("500"), Ok(500));
        assert_eq!(size_mb("10G"), Ok(10_240));
        assert_eq!(size_mb("512M"), Ok(512));
        assert_eq!(size_mb("1T"), Ok(1 << 20));
        assert_eq!(size_mb("2048K"), Ok(2));
        assert!(size_mb("100K").unwrap_err().contains("whole number of MB"));
        assert!(size_mb("10X").unwrap_err().contains("10G"));
        assert_eq!(size_bytes("64KiB"), Some(65_536));
        assert_eq!(size_bytes("20000000T"), None);
    }
}
