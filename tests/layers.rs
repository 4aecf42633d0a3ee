//! The layer check: every `crate::X` path in `src/` must point to a top-level module that comes
//! earlier in the layer order than the module the file belongs to.
//!
//! The order is not repeated here: it is read from the numbered list under "# Layers" in the
//! crate docs (`src/lib.rs`), so the documentation and the check cannot drift apart. Every
//! `mod` declared in `src/lib.rs` must be in that list. Comments and string literals are skipped
//! (a doc link is not a dependency); `super::` paths stay inside their own top-level module and
//! are not followed. `src/main.rs` is the binary, above everything, and is not checked.
//!
//! Run it with `cargo test --release --test layers`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Edges that go against the order today, each with the reason it is allowed: (from, to,
/// why). Empty: every backward edge found so far has been removed. Add one here only with a
/// reason a reviewer can judge, never to make the check pass quietly.
/// (The last one, `control` → `stats` for the depth gauge, went when the gauge's counting moved
/// into `control::depth`; see docs/layout.md.)
const ALLOWED_BACKWARD: &[(&str, &str, &str)] = &[];

/// One `crate::X` use found in a file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    from: String,
    to: String,
    file: String,
    line: usize,
}

/// The layer order, lowest first, from the "# Layers" list of the crate docs: lines such as
/// ``//! 3. [`findings`] — …``.
fn layer_order(lib_rs: &str) -> Vec<String> {
    let mut in_layers = false;
    let mut order = Vec::new();
    for line in lib_rs.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            continue;
        };
        let doc = doc.trim();
        if doc.starts_with('#') {
            in_layers = doc == "# Layers";
            continue;
        }
        if !in_layers {
            continue;
        }
        let Some((num, rest)) = doc.split_once(". ") else {
            continue;
        };
        if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let name = rest
            .trim_start_matches("[`")
            .split('`')
            .next()
            .unwrap_or_default();
        order.push(name.to_string());
    }
    order
}

/// The modules `src/lib.rs` declares (`mod x;` / `pub mod x;`).
fn declared_modules(lib_rs: &str) -> BTreeSet<String> {
    lib_rs
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            l.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_string)
        })
        .collect()
}

/// The code of `text` with comments and the contents of string and char literals blanked
/// (replaced by spaces, newlines kept), so only real paths remain and line numbers still hold.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(rest) {
            // r"…", r#"…"#, br"…": ends at a quote followed by the same number of hashes.
            let open = rest.iter().position(|&c| c == b'"').unwrap_or(0) + 1;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let mut j = i + open;
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            let end = (j + close.len()).min(b.len());
            for &c in &b[i..end] {
                blank(&mut out, c);
            }
            i = end;
        } else if b[i] == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                let step = if b[i] == b'\\' { 2 } else { 1 };
                for &c in &b[i..(i + step).min(b.len())] {
                    blank(&mut out, c);
                }
                i += step;
            }
            out.push(b' ');
            i += 1;
        } else if let Some(len) = char_literal_len(rest) {
            out.extend(std::iter::repeat_n(b' ', len));
            i += len;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out.truncate(b.len());
    String::from_utf8_lossy(&out).into_owned()
}

/// Hashes of a raw string literal starting here (`r"`, `r#"`, `br"`…), if one does.
fn raw_string_start(s: &[u8]) -> Option<usize> {
    let s = s.strip_prefix(b"b").unwrap_or(s);
    let s = s.strip_prefix(b"r")?;
    let hashes = s.iter().take_while(|&&c| c == b'#').count();
    (s.get(hashes) == Some(&b'"')).then_some(hashes)
}

/// Length of a char literal starting here (`'x'`, `'\n'`, `'"'`), or `None` for a lifetime.
fn char_literal_len(s: &[u8]) -> Option<usize> {
    if s.first() != Some(&b'\'') {
        return None;
    }
    if s.get(1) == Some(&b'\\') {
        return s[2..].iter().position(|&c| c == b'\'').map(|p| p + 3);
    }
    // One UTF-8 character between the quotes.
    let width = match s.get(1)? {
        c if *c < 0x80 => 1,
        c if *c >= 0xF0 => 4,
        c if *c >= 0xE0 => 3,
        _ => 2,
    };
    (s.get(1 + width) == Some(&b'\'')).then_some(width + 2)
}

/// The top-level modules named by `crate::X` (and `crate::{X, Y::…}`) in `code`, with lines.
fn crate_refs(code: &str) -> Vec<(String, usize)> {
    let mut refs = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + "crate::".len()..];
            // `$crate::` and `my_crate::` are not this crate's root.
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                refs.extend(group_heads(group).into_iter().map(|m| (m, n + 1)));
            } else {
                refs.push((ident(rest), n + 1));
            }
        }
    }
    refs.retain(|(m, _)| !m.is_empty() && m != "self");
    refs
}

/// The first path segment of each item of a `{a::b, c, d::{e}}` group (depth 1 only).
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = vec![ident(group.trim_start())];
    let mut depth = 0;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => heads.push(ident(group[i + 1..].trim_start())),
            _ => {}
        }
    }
    heads
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Every edge between two different top-level modules in the files under `src`.
fn edges(src: &Path) -> Vec<Edge> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut edges = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("under src");
        let from = top_module(rel);
        if from == "lib" || from == "main" {
            continue;
        }
        let text = fs::read_to_string(&file).expect("read a source file");
        edges.extend(edges_in(&from, &rel.display().to_string(), &text));
    }
    edges.sort();
    edges
}

/// The edges one file's text makes from its top-level module `from`.
fn edges_in(from: &str, file: &str, text: &str) -> Vec<Edge> {
    crate_refs(&code_only(text))
        .into_iter()
        .filter(|(to, _)| to != from)
        .map(|(to, line)| Edge {
            from: from.to_string(),
            to,
            file: file.to_string(),
            line,
        })
        .collect()
}

fn top_module(rel: &Path) -> String {
    let first = rel.components().next().expect("non-empty path");
    let name = first.as_os_str().to_string_lossy();
    name.strip_suffix(".rs").unwrap_or(&name).to_string()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("read a source directory") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The edges that point to a module not below their own, other than the allowed exceptions;
/// an edge to a name that is no top-level module is reported too.
fn violations(order: &[String], edges: &[Edge]) -> Vec<String> {
    let rank = |m: &str| order.iter().position(|o| o == m);
    let allowed = |e: &Edge| {
        ALLOWED_BACKWARD
            .iter()
            .any(|(f, t, _)| *f == e.from && *t == e.to)
    };
    edges
        .iter()
        .filter_map(|e| match (rank(&e.from), rank(&e.to)) {
            (Some(f), Some(t)) if t < f || allowed(e) => None,
            (Some(_), Some(_)) => Some(format!(
                "src/{}:{}: `{}` uses `crate::{}`, which is not below it in the layer order",
                e.file, e.line, e.from, e.to
            )),
            _ => Some(format!(
                "src/{}:{}: `{}` → `{}`: a module missing from the \"# Layers\" list in src/lib.rs",
                e.file, e.line, e.from, e.to
            )),
        })
        .collect()
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn lib_rs() -> String {
    fs::read_to_string(src_dir().join("lib.rs")).expect("read src/lib.rs")
}

#[test]
fn the_layer_list_names_every_module_once() {
    let lib = lib_rs();
    let order = layer_order(&lib);
    let listed: BTreeSet<String> = order.iter().cloned().collect();
    assert_eq!(
        listed.len(),
        order.len(),
        "a module is listed twice: {order:?}"
    );
    assert_eq!(
        listed,
        declared_modules(&lib),
        "the \"# Layers\" list in src/lib.rs and its `mod` lines differ"
    );
}

#[test]
fn no_use_points_up_the_layers() {
    let order = layer_order(&lib_rs());
    let edges = edges(&src_dir());
    // The walk found the code: a parser that saw nothing would pass anything.
    assert!(edges.len() > 100, "only {} edges found", edges.len());
    let bad = violations(&order, &edges);
    assert!(
        bad.is_empty(),
        "uses against the layer order (lowest first: {}):\n{}",
        order.join(" → "),
        bad.join("\n")
    );
}

#[test]
fn every_allowed_exception_is_still_needed() {
    let edges = edges(&src_dir());
    for (from, to, why) in ALLOWED_BACKWARD {
        assert!(
            !why.is_empty(),
            "{from} → {to}: an exception needs a reason"
        );
        assert!(
            edges.iter().any(|e| e.from == *from && e.to == *to),
            "{from} → {to} is allowed but no longer used: remove the exception"
        );
    }
}

#[test]
fn a_backward_edge_is_caught() {
    let order = layer_order(&lib_rs());
    let text = "use crate::io::Storage;\nfn f() { crate::sched::simulate(); }\n";
    let bad = violations(&order, &edges_in("page", "page/x.rs", text));
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad[1].contains("src/page/x.rs:2: `page` uses `crate::sched`"));
    // Grouped imports count too; comments, strings and char literals do not.
    let text = "use crate::{page::PAGE_SIZE, actors::worker::Worker};\n\
                // crate::app\nlet s = \"crate::app\"; let q = '\"'; let t = crate::io::x;\n\
                /* crate::app */ let r = r#\"crate::app\"#;\n";
    let found: Vec<String> = edges_in("stats", "stats/x.rs", text)
        .into_iter()
        .map(|e| format!("{}@{}", e.to, e.line))
        .collect();
    assert_eq!(found, ["page@1", "actors@1", "io@3"]);
    assert_eq!(
        violations(&order, &edges_in("stats", "s.rs", text)).len(),
        1
    );
}

#[test]
fn the_order_is_read_from_the_crate_docs() {
    let order = layer_order(&lib_rs());
    let pos = |m: &str| order.iter().position(|o| o == m).expect(m);
    // The arrows of docs/layout.md and GUIDE.md, spot-checked.
    assert!(pos("page") < pos("io"));
    assert!(pos("control") < pos("actors"));
    assert!(pos("plan") < pos("actors"));
    assert!(pos("actors") < pos("sched"));
    assert!(pos("sched") < pos("app"));
    assert_eq!(order.last().map(String::as_str), Some("app"));
}
