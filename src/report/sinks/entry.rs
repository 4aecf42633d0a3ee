//! One ENTRY of the XML log, rendered exactly as SQLIOSim writes it.
//!
//! quick-xml always quotes attributes with double quotes, and SQLIOSim uses single quotes, so
//! start tags are assembled here from values escaped by quick-xml and handed to its writer
//! as raw tag content.

use std::borrow::Cow;

use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;

use crate::findings::{Message, Severity};

use crate::report::sinks::clock::LogClock;
use crate::report::sinks::hresult::Status;

/// Everything an ENTRY element carries, plus an optional structured child.
#[derive(Debug, Clone)]
pub struct Entry {
    /// TYPE: ERROR, WARNING or INFO.
    pub severity: Severity,
    /// When it happened, microseconds since the Unix epoch (TIME and DATE).
    pub time_us: u64,
    /// TID: the OS thread id that logged it.
    pub tid: i64,
    /// User: the simulated user or thread name.
    pub user: String,
    /// File: the source file that logged it.
    pub file: String,
    /// Func: the function that logged it.
    pub func: String,
    /// What HRESULT and SYSTEXT say (see [`crate::report::sinks::hresult`]).
    pub status: Status,
    /// EXTENDED_DESCRIPTION.
    pub text: String,
}

impl Entry {
    /// The entry for a message, stamped now by the calling thread.
    pub fn from_message(m: &Message) -> Entry {
        Entry {
            severity: m.severity,
            time_us: crate::report::sinks::clock::now_us(),
            tid: current_tid(),
            user: m.user.clone(),
            file: "sqliosim".to_string(),
            func: m.func.clone(),
            status: Status::from_errno(m.errno),
            text: m.text.clone(),
        }
    }
}

/// The OS id of the calling thread (SQLIOSim's TID).
pub fn current_tid() -> i64 {
    i64::from(rustix::thread::gettid().as_raw_nonzero().get())
}

/// SQLIOSim's TYPE attribute value.
pub fn type_name(s: Severity) -> &'static str {
    match s {
        Severity::Info => "INFO",
        Severity::Warning => "WARNING",
        Severity::Error => "ERROR",
    }
}

/// Replaces characters XML 1.0 cannot carry (control characters) with U+FFFD.
pub fn xml_safe(s: &str) -> Cow<'_, str> {
    let bad = |c: char| matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}');
    if s.chars().any(bad) {
        Cow::Owned(
            s.chars()
                .map(|c| if bad(c) { '\u{FFFD}' } else { c })
                .collect(),
        )
    } else {
        Cow::Borrowed(s)
    }
}

/// A start tag with single-quoted, escaped attributes.
pub fn start_tag(name: &str, attrs: &[(&str, &str)]) -> BytesStart<'static> {
    let mut content = String::from(name);
    for (k, v) in attrs {
        content.push(' ');
        content.push_str(k);
        content.push_str("='");
        content.push_str(&quick_xml::escape::escape(xml_safe(v)));
        content.push('\'');
    }
    BytesStart::from_content(content, name.len())
}

/// Output buffer for one entry.
pub type Out = Writer<Vec<u8>>;

/// `<name attrs>text</name>` followed by a newline.
pub fn text_elem(w: &mut Out, name: &str, attrs: &[(&str, &str)], text: &str) {
    // Writing into a Vec cannot fail.
    let _ = w.write_event(Event::Start(start_tag(name, attrs)));
    let escaped = quick_xml::escape::partial_escape(xml_safe(text));
    let _ = w.write_event(Event::Text(BytesText::from_escaped(escaped)));
    let _ = w.write_event(Event::End(BytesEnd::new(name)));
    newline(w);
}

/// `<name attrs/>` followed by a newline.
pub fn empty_elem(w: &mut Out, name: &str, attrs: &[(&str, &str)]) {
    let _ = w.write_event(Event::Empty(start_tag(name, attrs)));
    newline(w);
}

/// Opens `<name attrs>` followed by a newline.
pub fn open(w: &mut Out, name: &str, attrs: &[(&str, &str)]) {
    let _ = w.write_event(Event::Start(start_tag(name, attrs)));
    newline(w);
}

/// Closes `</name>` followed by a newline.
pub fn close(w: &mut Out, name: &str) {
    let _ = w.write_event(Event::End(BytesEnd::new(name)));
    newline(w);
}

fn newline(w: &mut Out) {
    let _ = w.write_event(Event::Text(BytesText::from_escaped("\n")));
}

/// Renders an entry; `detail` may add structured children after EXTENDED_DESCRIPTION.
pub fn render(e: &Entry, clock: &LogClock, detail: Option<&dyn Fn(&mut Out)>) -> Vec<u8> {
    let (time, date) = clock.time_date(e.time_us);
    let tid = e.tid.to_string();
    let (hr, sys) = (e.status.hresult(), e.status.systext());
    let attrs = [
        ("TYPE", type_name(e.severity)),
        ("TIME", time.as_str()),
        ("DATE", date.as_str()),
        ("TID", tid.as_str()),
        ("User", e.user.as_str()),
        ("File", e.file.as_str()),
        ("Func", e.func.as_str()),
        ("HRESULT", hr.as_str()),
        ("SYSTEXT", sys),
    ];
    let mut w = Writer::new(Vec::new());
    open(&mut w, "ENTRY", &attrs);
    text_elem(&mut w, "EXTENDED_DESCRIPTION", &[], &e.text);
    if let Some(d) = detail {
        d(&mut w);
    }
    close(&mut w, "ENTRY");
    w.into_inner()
}
