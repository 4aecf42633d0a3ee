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

/// The attributes of `e`. quick-xml's duplicate check compares each attribute with every one
/// before it, which made an element with 100,000 attributes take half a minute; a duplicate
/// name simply keeps its last value here.
fn attrs_of(e: &BytesStart) -> BTreeMap<String, String> {
    e.attributes()
        .with_checks(false)
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

/// The parser's state while walking the events.
#[derive(Default)]
struct Walker {
    out: ParsedLog,
    cur: Option<LogEntry>,
    depth: usize,
    root: Option<String>,
}

/// Whether to go on reading after an event.
enum Step {
    Go,
    Stop,
}

impl Walker {
    fn start(&mut self, r: &mut Reader<&[u8]>, e: &BytesStart) -> Step {
        self.depth += 1;
        let name = e.name();
        if self.root.is_none() {
            self.root = Some(String::from_utf8_lossy(name.as_ref()).into_owned());
        }
        match (name.as_ref(), self.cur.as_mut()) {
            (b"ENTRY", _) => {
                self.cur = Some(LogEntry {
                    attrs: attrs_of(e),
                    ..LogEntry::default()
                })
            }
            (b"EXTENDED_DESCRIPTION" | b"DATA", Some(c)) => {
                // A text cut short ends the walk; the entry stays incomplete.
                let Ok(t) = r.read_text(name) else {
                    return Step::Stop;
                };
                if name.as_ref() == b"DATA" {
                    c.finding = serde_json::from_str(&text_of(&t)).ok();
                } else {
                    c.text = text_of(&t);
                }
                self.depth -= 1;
            }
            _ => {}
        }
        Step::Go
    }

    fn end(&mut self, name: &[u8]) {
        self.depth = self.depth.saturating_sub(1);
        if name == b"ENTRY" {
            self.out.entries.extend(self.cur.take());
        }
    }

    fn finish(mut self, text: &str) -> Result<ParsedLog, String> {
        if self.root.is_none() {
            // Cut inside the prolog: an XML log with nothing in it yet.
            if text.starts_with("<?xml") || "<?xml".starts_with(text) {
                self.out.truncated = true;
                return Ok(self.out);
            }
            return Err("no XML element found".into());
        }
        if self.out.entries.is_empty()
            && self.root.as_deref() != Some(crate::report::sinks::xml::ROOT)
        {
            return Err("no ENTRY elements".into());
        }
        // Still inside the root (or an entry) at the end: the file was cut short.
        self.out.truncated |= self.depth > 0 || self.cur.is_some();
        Ok(self.out)
    }
}

/// Parses the log text. Only input that is not an XML log at all is an error.
pub fn parse_log(text: &str) -> Result<ParsedLog, String> {
    let mut r = Reader::from_str(text);
    let mut w = Walker::default();
    loop {
        let step = match r.read_event() {
            Err(_) if w.root.is_none() => break,
            Err(_) => {
                w.out.truncated = true;
                break;
            }
            Ok(Event::Start(e)) => w.start(&mut r, &e),
            Ok(Event::End(e)) => {
                w.end(e.name().as_ref());
                Step::Go
            }
            Ok(Event::Empty(e)) if e.name().as_ref() == b"ENTRY" => {
                w.out.entries.push(LogEntry {
                    attrs: attrs_of(&e),
                    ..LogEntry::default()
                });
                Step::Go
            }
            Ok(Event::Eof) => break,
            Ok(_) => Step::Go,
        };
        if let Step::Stop = step {
            break;
        }
    }
    w.finish(text)
}
