//! The switches of the SQLIO and DiskSpd front ends as one table each
//! ([`crate::bench::sqlio::args::SWITCHES`], [`crate::bench::diskspd::args::SWITCHES`]): the
//! parsers take from it which switches are accepted without effect and the list an unknown
//! switch's error names, `-?` prints it, and the man pages and shell completions
//! (`crate::app::manpage`) are generated from it, so none of them can drift from the others.
//! A unit test of each parser checks, letter by letter, that the parser accepts exactly the
//! switches its table lists.

use crate::bench::units::BadArg;

/// What a switch does here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It changes the run.
    Used,
    /// Accepted for compatibility and noted on stderr; it changes nothing here.
    Ignored,
    /// Refused with a message saying what to do instead (never run as something else).
    Refused,
    /// One of ours (a long option), not the original tool's.
    Ours,
}

/// One switch as a front end's users type it.
#[derive(Debug, Clone, Copy)]
pub struct Switch {
    /// The switch without its value: `-k`, `-64`, `--drive-map`.
    pub flag: &'static str,
    /// Its value as the help shows it (`R|W`, `<threads>`), "" when it takes none. A single-dash
    /// switch's value follows it directly (`-kW`), a long option's after a space.
    pub value: &'static str,
    /// What it does, one sentence.
    pub help: &'static str,
    /// Whether it changes the run.
    pub effect: Effect,
}

/// One row of a table.
pub const fn sw(
    flag: &'static str,
    value: &'static str,
    help: &'static str,
    effect: Effect,
) -> Switch {
    Switch {
        flag,
        value,
        help,
        effect,
    }
}

/// `--engine`, of both front ends.
pub const ENGINE: Switch = sw(
    "--engine",
    "uring|psync|libaio",
    "what carries the I/O (default uring)",
    Effect::Ours,
);

/// `--force`, of both front ends.
pub const FORCE: Switch = sw(
    "--force",
    "",
    "write a device or a file without a sqliosim header",
    Effect::Ours,
);

impl Switch {
    /// The letter after the `-` of a single-dash switch (`k` of `-kW`); `None` for ours.
    pub fn letter(&self) -> Option<char> {
        let rest = self.flag.strip_prefix('-')?;
        if rest.starts_with('-') {
            return None;
        }
        rest.chars().next()
    }

    /// The switch as typed, with its value placeholder: `-kR|-kW`, `-S[b|h|r|u|w]`,
    /// `--engine uring|psync|libaio`.
    pub fn synopsis(&self) -> String {
        match (self.value, self.effect) {
            ("", _) => self.flag.to_string(),
            (v, Effect::Ours) => format!("{} {v}", self.flag),
            (v, _) if !v.contains('[') => v
                .split('|')
                .map(|alt| format!("{}{alt}", self.flag))
                .collect::<Vec<_>>()
                .join("|"),
            (v, _) => format!("{}{v}", self.flag),
        }
    }

    /// Whether it is offered to users (man page OPTIONS, completions): refused ones are not.
    pub fn accepted(&self) -> bool {
        self.effect != Effect::Refused
    }
}

/// Whether `letter` starts a switch of `table` that is accepted without effect.
pub fn is_ignored(table: &[Switch], letter: char) -> bool {
    table
        .iter()
        .any(|s| s.effect == Effect::Ignored && s.letter() == Some(letter))
}

/// `arg` (a switch without its leading `-` or `/`) split into its first character and the
/// value after it, at a character boundary (`é…` is one letter, not a panic).
pub fn split_letter(arg: &str) -> (char, &str) {
    let mut chars = arg.chars();
    let letter = chars.next().unwrap_or('-');
    (letter, chars.as_str())
}

/// Whether `c` starts any single-dash switch of `table`, accepted or refused.
pub fn is_letter(table: &[Switch], c: char) -> bool {
    table.iter().any(|s| s.letter() == Some(c))
}

/// The error for a switch `typed` that `table` does not know: it names every switch the front
/// end accepts, and those it refuses.
pub fn unknown(table: &[Switch], typed: &str) -> BadArg {
    let list = |e: Effect| {
        table
            .iter()
            .filter(|s| s.effect == e)
            .map(|s| s.flag)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let expected = format!(
        "one of {} {} (accepted without effect: {}; refused: {})",
        list(Effect::Used),
        list(Effect::Ours),
        list(Effect::Ignored),
        list(Effect::Refused)
    );
    BadArg {
        switch: typed.to_string(),
        value: typed.to_string(),
        expected: expected.into(),
    }
}

/// The table as `-?` prints it: one line per switch, by effect.
pub fn usage_lines(table: &[Switch]) -> String {
    let groups = [
        (Effect::Used, "Switches:"),
        (
            Effect::Ignored,
            "Accepted for compatibility, without effect here:",
        ),
        (Effect::Refused, "Refused:"),
        (Effect::Ours, "Ours:"),
    ];
    let mut out = String::new();
    for (effect, title) in groups {
        out.push_str(title);
        out.push('\n');
        for s in table.iter().filter(|s| s.effect == effect) {
            out.push_str(&format!("  {:<28} {}\n", s.synopsis(), s.help));
        }
    }
    out
}

/// For the parsers' tests: checks, letter by letter, that `parse` (one switch typed alone →
/// the switches it noted as without effect, or its error message) accepts exactly the
/// single-dash switches of `table`: a letter not listed gets the [`unknown`] error, a listed
/// one never does, an ignored one is noted, a refused one is an error.
#[cfg(test)]
pub(crate) fn assert_parser_reads(
    table: &[Switch],
    parse: impl Fn(&str) -> Result<Vec<String>, String>,
) {
    for c in ('0'..='z').filter(char::is_ascii_alphanumeric) {
        let typed = format!("-{c}");
        let err = parse(&typed).err();
        let unknown_err = unknown(table, &typed).to_string();
        match table
            .iter()
            .find(|s| s.letter() == Some(c))
            .map(|s| s.effect)
        {
            None => assert_eq!(err.as_deref(), Some(unknown_err.as_str()), "{typed}"),
            Some(Effect::Refused) => assert!(err.is_some(), "{typed} is listed as refused"),
            Some(_) => assert_ne!(err, Some(unknown_err), "{typed} is listed, refused unknown"),
        }
    }
    for s in table.iter().filter(|s| s.effect == Effect::Ignored) {
        assert_eq!(
            parse(s.flag).as_deref(),
            Ok(&[s.flag.to_string()][..]),
            "{}",
            s.flag
        );
    }
    for s in table.iter().filter(|s| s.effect == Effect::Refused) {
        assert!(parse(s.flag).is_err(), "{} accepted", s.flag);
    }
}
