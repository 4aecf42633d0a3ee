//! What a `sqliosim run` reported, read from its stderr finding lines and, when the run wrote
//! one, from the XML error log in the data directory; the two must agree.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use regex::Regex;

/// One finding as reported.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Reported {
    /// Class name (`lost_write`, …).
    pub class: String,
    /// File.
    pub path: PathBuf,
    /// First page named.
    pub page: u64,
    /// Pages of the request (1, or more for a failed multi-page request).
    pub pages: u64,
}

impl Reported {
    /// True when the finding is about `page` (itself, or a failed request covering it).
    pub fn covers(&self, page: u64) -> bool {
        page >= self.page && page < self.page + self.pages
    }
}

fn line_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^ERROR #\d+: (\w+) on (.+) page (\d+) \(offset 0x[0-9A-Fa-f]+\), found by (.*)$",
        )
        .expect("regex")
    })
}

fn span_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?:read|write) of (\d+) pages from page (\d+)").expect("regex"))
}

/// Every finding of a run: parsed from the stderr lines, and, when `dir/sqliosim.log.xml`
/// exists (`dir`: the data directory, or wherever `--log` put it), checked against its ERROR
/// entries (same pages, and same classes where the log names them).
pub fn findings(output: &Output, dir: &Path) -> Vec<Reported> {
    let found = stderr_findings(&String::from_utf8_lossy(&output.stderr));
    let total = verdict_count(output);
    if total <= CONSOLE_CAP {
        assert_eq!(
            total,
            found.len() as u64,
            "the verdict line counts the findings printed"
        );
    } else {
        assert_eq!(
            found.len() as u64,
            CONSOLE_CAP,
            "past the cap findings are not printed"
        );
    }
    let log = dir.join("sqliosim.log.xml");
    if log.exists() {
        let text = std::fs::read_to_string(&log).expect("read the XML log");
        let mut xml = xml_findings(&text);
        let mut ours: Vec<(Option<String>, u64)> = found
            .iter()
            .map(|f| (Some(f.class.clone()), f.page))
            .collect();
        if xml.iter().any(|(c, _)| c.is_none()) {
            ours.iter_mut().for_each(|e| e.0 = None);
            xml.iter_mut().for_each(|e| e.0 = None);
        }
        ours.sort();
        xml.sort();
        assert_eq!(ours, xml, "stderr and {} disagree", log.display());
    }
    found
}

/// Findings printed on stderr (and logged in full) before the rest are only counted.
pub const CONSOLE_CAP: u64 = 50;

/// The number of findings of the run, from the stdout verdict line (0 when clean).
pub fn verdict_count(output: &Output) -> u64 {
    let re = Regex::new(r"Verdict: (\d+) INTEGRITY ERROR").expect("regex");
    let text = String::from_utf8_lossy(&output.stdout);
    re.captures(&text)
        .map_or(0, |c| c[1].parse().expect("count"))
}

/// The `ERROR #n: CLASS on PATH page N (offset 0x…), found by …` lines.
pub fn stderr_findings(text: &str) -> Vec<Reported> {
    text.lines()
        .filter_map(|l| line_re().captures(l))
        .map(|c| {
            let page: u64 = c[3].parse().expect("page number");
            let pages = span_re()
                .captures(&c[4])
                .filter(|s| s[2].parse::<u64>().ok() == Some(page))
                .map_or(1, |s| s[1].parse().expect("page count"));
            Reported {
                class: c[1].to_string(),
                path: PathBuf::from(&c[2]),
                page,
                pages,
            }
        })
        .collect()
}

/// (class when the entry names one, page) of each ENTRY TYPE='ERROR' whose
/// EXTENDED_DESCRIPTION says `Page: N`. A log cut short of its closing root tag is closed first.
pub fn xml_findings(text: &str) -> Vec<(Option<String>, u64)> {
    let closed;
    let doc = match roxmltree::Document::parse(text) {
        Ok(d) => d,
        Err(_) => {
            closed = format!("{text}</{}>", root_name(text).expect("XML log has a root"));
            roxmltree::Document::parse(&closed).expect("XML log parses once closed")
        }
    };
    let page_re = Regex::new(r"Page: (\d+)").expect("regex");
    doc.descendants()
        .filter(|n| n.has_tag_name("ENTRY") && n.attribute("TYPE") == Some("ERROR"))
        .filter_map(|e| {
            let desc = e
                .descendants()
                .find(|n| n.has_tag_name("EXTENDED_DESCRIPTION"))?
                .text()?;
            let page = page_re.captures(desc)?[1].parse().ok()?;
            let class = e
                .descendants()
                .find(|n| n.has_tag_name("FINDING"))
                .and_then(|f| f.attribute("CLASS"))
                .map(str::to_string);
            Some((class, page))
        })
        .collect()
}

/// Name of the first element of an XML text (skipping the declaration, processing
/// instructions and comments).
fn root_name(text: &str) -> Option<String> {
    let mut rest = text;
    loop {
        let at = rest.find('<')?;
        rest = &rest[at + 1..];
        if rest.starts_with('?') || rest.starts_with('!') {
            continue;
        }
        let end = rest.find(|c: char| c.is_whitespace() || c == '>' || c == '/')?;
        return Some(rest[..end].to_string());
    }
}
