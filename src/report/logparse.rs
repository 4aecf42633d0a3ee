//! Reading an XML log back, ENTRY by ENTRY, tolerating a file cut at any byte.
//!
//! Reads both our logs and SQLIOSim's own: only ENTRY attributes, EXTENDED_DESCRIPTION and
//! (ours) the JSON copy of each finding in FINDING/DATA are used.

use std::collections::BTreeMap;

use quick_xml::escape::unescape;
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use crate::findings::Finding;

/// One ENTRY as read back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogEntry {
    /// Attributes by name (TYPE, TIME, DATE, TID, User, File, Func, HRESULT, SYSTEXT, …).
    pub attrs: BTreeMap<String, String>,
    /// EXTENDED_DESCRIPTION text.
    pub text: String,
    /// The finding carried in FINDING/DATA, if any.
    pub finding: Option<Finding>,
}

impl LogEntry {
    /// An attribute, or "".
    pub fn attr(&self, name: &str) -> &str {
        self.attrs.get(name).map_or("", String::as_str)
    }
}

/// The entries of a log, and whether the file was cut short.
#[derive(Debug, Clone, Default)]
pub struct ParsedLog {
    /// Complete entries, in order.
    pub entries: Vec<LogEntry>,
    /// True when the root element was not closed or the end was damaged.
    pub truncated: bool,
}

fn attrs_of(e: &BytesStart) -> BTreeMap<String, String> {
    e.attributes()
        .flatten()
        .map(|a| {
            let k = String::from_utf8_lossy(a.key.as_ref()).into_owned();
            let v = a
                .unescape_value()
                .map(|v| v.into_owned())
                .unwrap_or_default();
            (k, v)
        })
        .collect()
}

fn text_of(raw: &str) -> String {
    unescape(raw).map_or_else(|_| raw.to_string(), |t| t.into_owned())
}

/// Parses the log text. Only a malformed start (not XML at all) is an error.
pub fn parse_log(text: &str) -> Result<ParsedLog, String> {
    let mut r = Reader::from_str(text);
    let mut out = ParsedLog::default();
    let mut cur: Option<LogEntry> = None;
    let mut depth = 0usize;
    let mut seen_root = false;
    let mut root: Option<String> = None;
    loop {
        let ev = match r.read_event() {
            Ok(ev) => ev,
            // Cut inside the prolog: an XML log with nothing in it yet.
            Err(_) if !seen_root && (text.starts_with("<?xml") || "<?xml".starts_with(text)) => {
                out.truncated = true;
                return Ok(out);
            }
            Err(e) if !seen_root => return Err(e.to_string()),
            Err(_) => {
                out.truncated = true;
                break;
            }
        };
        match ev {
            Event::Start(e) => {
                depth += 1;
                if !seen_root {
                    root = Some(String::from_utf8_lossy(e.name().as_ref()).into_owned());
                }
                seen_root = true;
                let name = e.name();
                match (name.as_ref(), cur.as_mut()) {
                    (b"ENTRY", _) => {
                        cur = Some(LogEntry {
                            attrs: attrs_of(&e),
                            ..LogEntry::default()
                        })
                    }
                    (b"EXTENDED_DESCRIPTION", Some(c)) => {
                        let Ok(t) = r.read_text(name) else { break };
                        c.text = text_of(&t);
                        depth -= 1;
                    }
                    (b"DATA", Some(c)) => {
                        let Ok(t) = r.read_text(name) else { break };
                        c.finding = serde_json::from_str(&text_of(&t)).ok();
                        depth -= 1;
                    }
                    _ => {}
                }
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                if e.name().as_ref() == b"ENTRY" {
                    out.entries.extend(cur.take());
                }
            }
            Event::Empty(e) if e.name().as_ref() == b"ENTRY" => {
                out.entries.push(LogEntry {
                    attrs: attrs_of(&e),
                    ..LogEntry::default()
                });
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !seen_root {
        if text.starts_with("<?xml") {
            out.truncated = true;
            return Ok(out);
        }
        return Err("no XML element found".into());
    }
    if out.entries.is_empty() && root.as_deref() != Some(super::xml::ROOT) {
        return Err("no ENTRY elements".into());
    }
    // Still inside the root (or an entry) at the end: the file was cut short.
    out.truncated |= depth > 0 || cur.is_some();
    Ok(out)
}
