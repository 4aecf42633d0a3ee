//! Repairing a JSON document cut short: keep the complete values, close what is open.

/// Candidate repairs of `text`, best first: for each nesting depth, the document cut after the
/// last complete value at that depth, with the open arrays and objects closed. The caller
/// tries them in order: a cut inside a record that lacks required fields will not parse, a
/// shallower one will.
pub fn candidates(text: &str) -> Vec<String> {
    let mut stack: Vec<u8> = Vec::new();
    // For each depth, the latest cut position and the containers open there.
    let mut cuts: Vec<Option<(usize, Vec<u8>)>> = Vec::new();
    let (mut in_str, mut esc) = (false, false);
    for (i, &c) in text.as_bytes().iter().enumerate() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        let cut = match c {
            b'"' => {
                in_str = true;
                None
            }
            b'{' | b'[' => {
                stack.push(c);
                Some(i + 1)
            }
            b'}' | b']' => {
                stack.pop();
                Some(i + 1)
            }
            // Before a comma, the previous member is complete.
            b',' => Some(i),
            _ => None,
        };
        if let Some(pos) = cut {
            let d = stack.len();
            if cuts.len() <= d {
                cuts.resize(d + 1, None);
            }
            cuts[d] = Some((pos, stack.clone()));
        }
    }
    let mut found: Vec<(usize, Vec<u8>)> = cuts.into_iter().flatten().collect();
    found.sort_by_key(|c| std::cmp::Reverse(c.0));
    found
        .into_iter()
        .map(|(pos, open)| close(&text[..pos], &open))
        .collect()
}

fn close(prefix: &str, open: &[u8]) -> String {
    let mut out = prefix.trim_end().to_string();
    for c in open.iter().rev() {
        out.push(if *c == b'{' { '}' } else { ']' });
    }
    out
}
