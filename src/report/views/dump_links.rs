//! Where the HTML report's dump links point. A run records its dumps by the path it wrote them
//! at, usually absolute on the host; a link of that form breaks as soon as the report is read
//! elsewhere (a copy fetched by Ansible, a bundle opened on the vendor's side). So links are
//! made relative: to the directory of the HTML file written, or, for the page inside a bundle,
//! to the bundle's own layout (`dumps/<file>` beside the page).

use std::path::{Component, Path, PathBuf};

/// How the report links to the dumps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum DumpLinks {
    /// The paths as the run recorded them (the page is not written to a file).
    #[default]
    Recorded,
    /// Relative to this directory: where the HTML file is written. Recorded paths that are
    /// relative are taken from `evidence`, the directory of the log or summary read.
    From {
        /// The HTML file's directory.
        html_dir: PathBuf,
        /// The directory of the evidence file read.
        evidence: PathBuf,
    },
    /// The page inside an evidence bundle: `dumps/<file name>` ([`crate::report::views::bundle`]).
    Bundle,
}

impl DumpLinks {
    /// The link to the dump recorded as `dump`, percent-encoded where a URL needs it.
    pub fn href(&self, dump: &Path) -> String {
        let rel = match self {
            DumpLinks::Recorded => dump.to_path_buf(),
            DumpLinks::From { html_dir, evidence } => {
                let at = if dump.is_absolute() || dump.exists() {
                    dump.to_path_buf()
                } else {
                    evidence.join(dump)
                };
                relative(&absolute(&at), &absolute(html_dir))
            }
            DumpLinks::Bundle => {
                let name = dump
                    .file_name()
                    .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
                Path::new("dumps").join(name)
            }
        };
        encode(&rel.to_string_lossy())
    }
}

/// `p` made absolute and without `.` or `..` components (lexically: a dump path holds no
/// symlinks we follow).
fn absolute(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// `target` as seen from the directory `base` (both absolute and normalised).
pub fn relative(target: &Path, base: &Path) -> PathBuf {
    let t: Vec<Component> = target.components().collect();
    let b: Vec<Component> = base.components().collect();
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    out
}

/// Percent-encodes what a relative URL path cannot carry as is (`%`, `#`, `?`, spaces and
/// control or non-ASCII bytes); `/` stays the separator.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"/._-~+,=@:!$&()*;".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_relative_to_the_html_directory() {
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(
            relative(&p("/r/dumps/A/x.txt"), &p("/r")),
            p("dumps/A/x.txt")
        );
        assert_eq!(
            relative(&p("/r/dumps/x.txt"), &p("/r/html")),
            p("../dumps/x.txt")
        );
        let l = DumpLinks::From {
            html_dir: p("/r/out/../html"),
            evidence: p("/r"),
        };
        assert_eq!(l.href(&p("dumps/a b#1.txt")), "../dumps/a%20b%231.txt");
        assert_eq!(
            DumpLinks::Bundle.href(&p("/r/dumps/A/x.txt")),
            "dumps/x.txt"
        );
    }
}
