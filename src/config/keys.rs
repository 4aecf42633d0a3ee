//! The table of known sections and keys, and the "did you mean" lookup used for warnings about
//! unknown names.

/// Keys of `[CONFIG]`. Both spellings of the scatter/gather key are known (see docs).
pub const CONFIG_KEYS: &[&str] = &[
    "ErrorFile",
    "CPUCount",
    "Affinity",
    "IOAffinity",
    "MaxMemoryMB",
    "StopOnError",
    "TestCycles",
    "TestCycleDuration",
    "CacheHitRatio",
    "NoBuffering",
    "WriteThrough",
    "MaxOutstandingIO",
    "TargetIODuration",
    "AllowIOBursts",
    "UseScatterGather",
    "ScatterGather",
    "ForceReadAhead",
    "DeleteFilesAtStartup",
    "DeleteFilesAtShutdown",
    "StampFiles",
];

/// Keys of `[RandomUser]`.
pub const RANDOM_KEYS: &[&str] = &[
    "UserCount",
    "JumpToNewRegionPercentage",
    "MinIOChainLength",
    "MaxIOChainLength",
    "RandomUserReadWriteRatio",
    "MinLogPerBuffer",
    "MaxLogPerBuffer",
    "RollbackChance",
    "SleepAfter",
    "YieldPercentage",
    "CPUSimulation",
    "CPUCyclesMin",
    "CPUCyclesMax",
];

/// Keys of `[AuditUser]`.
pub const AUDIT_KEYS: &[&str] = &[
    "UserCount",
    "BuffersValidated",
    "DelayAfterCycles",
    "AuditDelay",
];

/// Keys of `[ReadAheadUser]`.
pub const READ_AHEAD_KEYS: &[&str] = &[
    "UserCount",
    "BuffersRAMin",
    "BuffersRAMax",
    "DelayAfterCycles",
    "RADelay",
];

/// Keys of `[BulkUpdateUser]`.
pub const BULK_UPDATE_KEYS: &[&str] = &[
    "UserCount",
    "BuffersBUMin",
    "BuffersBUMax",
    "DelayAfterCycles",
    "BUDelay",
];

/// Keys of `[ShrinkUser]` (it has no UserCount).
pub const SHRINK_KEYS: &[&str] = &[
    "MinShrinkInterval",
    "MaxShrinkInterval",
    "MinExtends",
    "MaxExtends",
];

/// Keys of every `[FileN]` section.
pub const FILE_KEYS: &[&str] = &[
    "FileName",
    "InitialSize",
    "MaxSize",
    "Increment",
    "Shrinkable",
    "LogFile",
    "Sparse",
];

/// The fixed section names, in the order SQLIOSim writes them.
pub const SECTIONS: &[&str] = &[
    "CONFIG",
    "RandomUser",
    "AuditUser",
    "ReadAheadUser",
    "BulkUpdateUser",
    "ShrinkUser",
];

/// The keys of section `name` (any case), or `None` for an unknown section.
pub fn keys_of(name: &str) -> Option<&'static [&'static str]> {
    if file_number(name).is_some() {
        return Some(FILE_KEYS);
    }
    let tables = [
        CONFIG_KEYS,
        RANDOM_KEYS,
        AUDIT_KEYS,
        READ_AHEAD_KEYS,
        BULK_UPDATE_KEYS,
        SHRINK_KEYS,
    ];
    SECTIONS
        .iter()
        .zip(tables)
        .find(|(s, _)| s.eq_ignore_ascii_case(name))
        .map(|(_, k)| k)
}

/// N of a `[FileN]` section name (N ≥ 1), any case.
pub fn file_number(name: &str) -> Option<u32> {
    let digits = name
        .get(..4)
        .filter(|p| p.eq_ignore_ascii_case("file"))
        .map(|_| &name[4..])?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&n| n >= 1)
}

/// The candidate closest to `name` by edit distance, compared without regard to case.
pub fn closest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    candidates
        .iter()
        .copied()
        .min_by_key(|c| edit_distance(&lower, &c.to_ascii_lowercase()))
}

/// Levenshtein distance between two strings, by characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut row = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            row[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1);
        }
        prev = row;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_file_sections_and_tables() {
        assert_eq!(file_number("File12"), Some(12));
        assert_eq!(file_number("file1"), Some(1));
        assert_eq!(file_number("File0"), None);
        assert_eq!(file_number("File"), None);
        assert_eq!(file_number("Filex"), None);
        assert_eq!(keys_of("shrinkuser"), Some(SHRINK_KEYS));
        assert_eq!(keys_of("Users"), None);
    }

    #[test]
    fn suggests_the_closest_key() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(closest("CacheHitRatoi", CONFIG_KEYS), Some("CacheHitRatio"));
        assert_eq!(closest("maxsise", FILE_KEYS), Some("MaxSize"));
    }
}
