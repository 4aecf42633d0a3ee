//! A small line-oriented INI reader that keeps the line number of every section and key.
//!
//! rust-ini parses the same syntax but throws line numbers away, and every error
//! and warning we give has to name the line, so we read the lines ourselves. The syntax is the
//! one Windows' profile API accepts for SQLIOSim: `[Section]` headers, `Key=Value` lines,
//! whole-line `;` comments (we also allow `#`), names compared without regard to letter case,
//! no inline comments and no quoting. Nothing here fails: odd lines become warnings.
//!
//! Sections and keys are found through an index by lower-cased name, so reading a file takes
//! time in proportion to its length (20,000 `[FileN]` sections took 21 s when every header
//! and every lookup scanned the sections before it).

use std::collections::HashMap;

use super::error::Warning;

/// One `Key=Value` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The key as written (trimmed).
    pub key: String,
    /// The value as written (trimmed).
    pub value: String,
    /// 1-based line number.
    pub line: usize,
}

/// A section and its entries, in file order. Repeated headers are merged into the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The name as first written, without brackets.
    pub name: String,
    /// 1-based line of the first header.
    pub line: usize,
    /// The entries of every header with this name, in file order.
    pub entries: Vec<Entry>,
    /// Lower-cased key → index of its last entry.
    index: HashMap<String, usize>,
}

impl Section {
    /// The last entry whose key equals `key` (any case): later lines win, as in SQLIOSim.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        let i = *self.index.get(&key.to_ascii_lowercase())?;
        self.entries.get(i)
    }

    fn push(&mut self, entry: Entry) {
        self.index
            .insert(entry.key.to_ascii_lowercase(), self.entries.len());
        self.entries.push(entry);
    }
}

/// The whole file: sections in order of first appearance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ini {
    /// Every section found.
    pub sections: Vec<Section>,
    /// Lower-cased name → index of the section.
    index: HashMap<String, usize>,
}

impl Ini {
    /// The section named `name` (any case).
    pub fn section(&self, name: &str) -> Option<&Section> {
        let i = *self.index.get(&name.to_ascii_lowercase())?;
        self.sections.get(i)
    }
}

/// Reads INI `text`; `file` is the name used in warnings.
pub fn read(text: &str, file: &str) -> (Ini, Vec<Warning>) {
    let mut ini = Ini::default();
    let mut warnings = Vec::new();
    let mut current: Option<usize> = None;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with(';') || trimmed.starts_with('#') {
            continue;
        }
        if let Some(name) = header_name(trimmed) {
            current = Some(open_section(&mut ini, name, line, file, &mut warnings));
        } else if let Some((key, value)) = trimmed.split_once('=') {
            let entry = Entry {
                key: key.trim().to_string(),
                value: value.trim().to_string(),
                line,
            };
            match current {
                Some(i) => push_entry(&mut ini.sections[i], entry, file, &mut warnings),
                None => warnings.push(Warning::at(
                    file,
                    line,
                    format!(
                        "{}={} is outside any [section]; ignored",
                        entry.key, entry.value
                    ),
                )),
            }
        } else {
            warnings.push(Warning::at(
                file,
                line,
                format!("\"{trimmed}\" is neither a [section] header nor Key=Value; ignored"),
            ));
        }
    }
    (ini, warnings)
}

/// The name inside `[name]`, if the line is a section header.
fn header_name(line: &str) -> Option<&str> {
    line.strip_prefix('[')?.strip_suffix(']').map(str::trim)
}

/// Returns the index of section `name`, creating it or warning about a repeated header.
fn open_section(ini: &mut Ini, name: &str, line: usize, file: &str, w: &mut Vec<Warning>) -> usize {
    if let Some(&i) = ini.index.get(&name.to_ascii_lowercase()) {
        let first = ini.sections[i].line;
        w.push(Warning::at(
            file,
            line,
            format!("[{name}] appears again (first at line {first}); its keys are merged, later lines win"),
        ));
        return i;
    }
    ini.index
        .insert(name.to_ascii_lowercase(), ini.sections.len());
    ini.sections.push(Section {
        name: name.to_string(),
        line,
        entries: Vec::new(),
        index: HashMap::new(),
    });
    ini.sections.len() - 1
}

/// Adds `entry`, warning when the key was already given in this section.
fn push_entry(section: &mut Section, entry: Entry, file: &str, w: &mut Vec<Warning>) {
    if let Some(prev) = section.get(&entry.key) {
        w.push(Warning::at(
            file,
            entry.line,
            format!(
                "[{}] {} is given again (first at line {}); the value on this line wins",
                section.name, entry.key, prev.line
            ),
        ));
    }
    section.push(entry);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_line_numbers_and_skips_comments() {
        let (ini, w) = read("; c\n[CONFIG]\nA = 1\n;B=2\n\n[x]\nC=\n", "t.ini");
        assert!(w.is_empty());
        let config = ini.section("config").expect("section");
        assert_eq!(config.line, 2);
        assert_eq!(
            config.get("a").map(|e| (e.value.as_str(), e.line)),
            Some(("1", 3))
        );
        assert!(config.get("B").is_none());
        assert_eq!(
            ini.section("X")
                .and_then(|s| s.get("c"))
                .map(|e| e.value.as_str()),
            Some("")
        );
    }

    #[test]
    fn accepts_crlf_and_a_byte_order_mark() {
        let (ini, w) = read("\u{feff}[CONFIG]\r\nTestCycles = 3\r\n", "t.ini");
        assert!(w.is_empty());
        let entry = ini.section("CONFIG").and_then(|s| s.get("TestCycles"));
        assert_eq!(entry.map(|e| (e.value.as_str(), e.line)), Some(("3", 2)));
    }

    #[test]
    fn warns_about_odd_lines() {
        let (_, w) = read("A=1\n[S]\njunk\nK=1\nk=2\n[s]\n", "t.ini");
        let text: Vec<String> = w.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "t.ini:1: A=1 is outside any [section]; ignored",
                "t.ini:3: \"junk\" is neither a [section] header nor Key=Value; ignored",
                "t.ini:5: [S] k is given again (first at line 4); the value on this line wins",
                "t.ini:6: [s] appears again (first at line 2); its keys are merged, later lines win",
            ]
        );
    }
}
