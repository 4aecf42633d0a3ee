//! The "did you mean" lookup used for warnings about unknown names (the known sections and
//! keys are the sections' own: `sections::SECTIONS`).

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
    use crate::config::sections::{General, IniSection, FILE_KEYS};

    #[test]
    fn suggests_the_closest_key() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            closest("CacheHitRatoi", General::KEYS),
            Some("CacheHitRatio")
        );
        assert_eq!(closest("maxsise", FILE_KEYS), Some("MaxSize"));
    }
}
