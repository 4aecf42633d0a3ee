//! The XML log as an HTML table that needs no stylesheet: the same columns as SQLIOSim's
//! `ErrorLog.xslt` view (Date | Time | TID | User | Description, error rows "Error: HRESULT
//! Error Text: SYSTEXT Description: …").
//!
//! Why: a browser opening `sqliosim.log.xml` from disk applies `ErrorLog.xslt` only when
//! allowed to read a second `file://` resource, which Chromium refuses without a command-line
//! flag, so a double-click shows raw XML. The run writes this page beside its log at the end
//! ([`beside_log`]), and `report LOG.xml --html` adds the same table to its page ([`section`]).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::report::readers::logparse::LogEntry;
use crate::report::views::charts::html_escape as esc;
use crate::report::views::dump_links::DumpLinks;

/// Where the view of the log at `log` is written: `NAME.html` for `NAME.xml`, else the log's
/// name with `.html` added (never the log itself).
pub fn beside_log(log: &Path) -> PathBuf {
    if log
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("xml"))
    {
        log.with_extension("html")
    } else {
        let mut name = log.as_os_str().to_os_string();
        name.push(".html");
        PathBuf::from(name)
    }
}

const STYLE: &str = "body{font-family:sans-serif;font-size:13px;margin:1em;color:#222}\
table{border-collapse:collapse;width:100%}\
th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}\
th{background:#333;color:#fff;position:sticky;top:0}td.n{white-space:nowrap}\
tr.ERROR td{background:#fde2e2;color:#8b0000;font-weight:bold}tr.WARNING td{background:#fff4cc}\
td.desc{white-space:pre-wrap;overflow-wrap:anywhere}.detail{font-weight:normal;color:#333;font-size:12px}";

/// The whole page for the log `title` (its path as given); `truncated` when the file was cut
/// short (a killed run), said above the table.
pub fn page(title: &str, entries: &[LogEntry], truncated: bool, links: &DumpLinks) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>sqliosim error log: {t}</title><style>{STYLE}</style></head><body>\n<h1>sqliosim error log</h1><p>{t}</p>\n",
        t = esc(title)
    );
    if truncated {
        s.push_str("<p><b>The log ends early: the run was stopped before it closed it.</b></p>\n");
    }
    table(&mut s, entries, links);
    s.push_str("</body></html>\n");
    s
}

/// The table with its heading, for the run report's page (its own `<style>` scoped by id).
pub fn section(entries: &[LogEntry], links: &DumpLinks) -> String {
    let mut s = String::from(
        "<h2>Error log</h2><style>#log tr.ERROR td{background:#fde2e2;color:#8b0000}#log tr.WARNING td{background:#fff4cc}#log td{text-align:left;vertical-align:top}#log td.desc{white-space:pre-wrap;overflow-wrap:anywhere}</style>\n",
    );
    table(&mut s, entries, links);
    s
}

fn table(s: &mut String, entries: &[LogEntry], links: &DumpLinks) {
    let count = |t: &str| entries.iter().filter(|e| e.attr("TYPE") == t).count();
    let _ = writeln!(
        s,
        "<p>{} error(s), {} warning(s), {} entries.</p>",
        count("ERROR"),
        count("WARNING"),
        entries.len()
    );
    s.push_str("<table id='log'><tr><th>Date</th><th>Time</th><th>TID</th><th>User</th><th>Description</th></tr>\n");
    for e in entries {
        let kind = e.attr("TYPE");
        let class = if kind.chars().all(|c| c.is_ascii_alphabetic()) {
            kind
        } else {
            ""
        };
        let _ = write!(
            s,
            "<tr class='{class}'><td class='n'>{}</td><td class='n'>{}</td><td class='n'>{}</td><td class='n'>{}</td><td class='desc'>",
            esc(e.attr("DATE")),
            esc(e.attr("TIME")),
            esc(e.attr("TID")),
            esc(e.attr("User")),
        );
        if kind == "ERROR" {
            let _ = write!(
                s,
                "Error: {} Error Text: {} Description: {}",
                esc(e.attr("HRESULT")),
                esc(e.attr("SYSTEXT")),
                esc(&e.text)
            );
        } else {
            s.push_str(&esc(&e.text));
        }
        if let Some(d) = e.finding.as_ref().and_then(|f| f.dump.as_ref()) {
            let _ = write!(
                s,
                "<div class='detail'>Dump: <a href='{}'>{}</a></div>",
                esc(&links.href(d)),
                esc(&d.display().to_string())
            );
        }
        s.push_str("</td></tr>\n");
    }
    s.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: &str, text: &str) -> LogEntry {
        let mut e = LogEntry {
            text: text.into(),
            ..LogEntry::default()
        };
        for (k, v) in [
            ("TYPE", kind),
            ("DATE", "12/05/26"),
            ("TIME", "17:00:00"),
            ("TID", "7"),
            ("User", "Random User"),
            ("HRESULT", "0x8007045D"),
            ("SYSTEXT", "I/O <device> error"),
        ] {
            e.attrs.insert(k.into(), v.into());
        }
        e
    }

    #[test]
    fn rows_carry_the_xslt_columns_escaped() {
        let p = page(
            "a<b>.xml",
            &[entry("ERROR", "Read failed & more"), entry("INFO", "x")],
            true,
            &DumpLinks::Recorded,
        );
        assert!(p.contains("1 error(s), 0 warning(s), 2 entries."));
        assert!(p.contains("<tr class='ERROR'><td class='n'>12/05/26</td><td class='n'>17:00:00</td><td class='n'>7</td><td class='n'>Random User</td><td class='desc'>Error: 0x8007045D Error Text: I/O &lt;device&gt; error Description: Read failed &amp; more</td></tr>"), "{p}");
        assert!(p.contains("<td class='desc'>x</td>"));
        assert!(p.contains("a&lt;b&gt;.xml") && p.contains("ends early"));
        assert!(!p.contains("<script"));
    }

    #[test]
    fn a_type_that_is_not_a_word_is_no_class() {
        let p = page(
            "l",
            &[entry("x' onclick='y", "t")],
            false,
            &DumpLinks::Recorded,
        );
        assert!(p.contains("<tr class=''>") && !p.contains("onclick"), "{p}");
    }

    #[test]
    fn the_view_never_takes_the_logs_own_name() {
        assert_eq!(
            beside_log(Path::new("/r/sqliosim.log.xml")),
            Path::new("/r/sqliosim.log.html")
        );
        assert_eq!(
            beside_log(Path::new("/r/log.HTML")),
            Path::new("/r/log.HTML.html")
        );
        assert_eq!(beside_log(Path::new("/r/log")), Path::new("/r/log.html"));
    }
}
