//! Writes a [`Config`] back as SQLIOSim INI text with every key (`-save`): each section's keys
//! come from the section itself (`sections/`), in the registry's order, then the files. The
//! text parses back to the same configuration; booleans are written `TRUE`/`FALSE` as
//! Microsoft's samples do.

use super::sections::{self, Config};
use std::fmt::Write;

/// The configuration as INI text, every section and key present.
pub fn to_ini(c: &Config) -> String {
    let mut out = String::from(
        "; sqliosim configuration written by -save: the resolved values of a run,\n\
         ; every key present. Ratios are percent x 100 (1000 = 10 %).\n",
    );
    for (name, s) in c.sections() {
        section(&mut out, name, &s.save());
    }
    for (name, keys) in sections::save_files(&c.files) {
        section(&mut out, &name, &keys);
    }
    out
}

/// Appends `[name]` and its keys, preceded by a blank line.
fn section(out: &mut String, name: &str, keys: &[(&str, String)]) {
    let _ = write!(out, "\n[{name}]\n");
    for (k, v) in keys {
        let _ = writeln!(out, "{k}={v}");
    }
}

/// A boolean as the samples write it: `TRUE` or `FALSE`.
pub(super) fn flag(v: bool) -> String {
    if v { "TRUE" } else { "FALSE" }.to_string()
}
