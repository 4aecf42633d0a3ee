//! Text for a terminal made harmless: names that came from files (host names in a summary,
//! file names in a results tree, messages in a log) may hold escape sequences, and printed
//! raw they would reach the terminal of whoever runs the report — root, on a shared host —
//! which could retitle it, clear it, or on some terminals answer with input. Every control
//! character but newline and tab is shown as `\xNN` instead.

use std::borrow::Cow;

/// `text` with every control character (C0, DEL, C1) but `\n` and `\t` written as `\xNN`.
pub fn printable(text: &str) -> Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(bad) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if bad(c) {
            out.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn escape_sequences_are_shown_not_sent() {
        assert_eq!(printable("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(
            printable("evil\x1b]0;t\x07\u{9b}2J\x7f"),
            "evil\\x1b]0;t\\x07\\x9b2J\\x7f"
        );
    }
}
