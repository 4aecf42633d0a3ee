//! The dependency check: every `crate::…` path in `src/` must point to a module that the
//! crate docs (`src/lib.rs`, "# Layers") say its own module uses.
//!
//! The graph is not repeated here: it is read from the list under "# Layers" in the crate
//! docs, one entry per module — ``//! - [`sim::engine`] (uses `io`, `page`): …`` — so the
//! documentation and the check cannot drift apart. The check fails on a path to a module its
//! entry does not name, on a named edge that no code uses any more (the docs would state a
//! dependency that is gone), on a cycle, and on a module declared in `src/lib.rs` or
//! `src/sim/mod.rs` that the list lacks. A file belongs to the longest listed module its path
//! starts with (`src/sim/engine/wal.rs` to `sim::engine`); a path points to the longest listed
//! module it starts with. Comments and string literals are skipped (a doc link is not a
//! dependency); `super::` paths stay inside their own module and are not followed.
//! `src/main.rs` is the binary, above everything, and is not checked.
//!
//! Inside a listed module, sibling files must not use each other in a cycle
//! (`no_sibling_files_use_each_other_in_a_cycle_but_the_listed_ones`; the few that stay are in
//! `ALLOWED_CYCLES`, each with its reason in its parent module's docs).
//!
//! One more check of the house lives here: every test binary is in exactly one tier of
//! scripts/test.sh (`every_test_binary_is_in_one_tier_of_scripts_test_sh`).
//!
//! Run it with `cargo test --release --test layers`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One `crate::…` use found in a file, between two listed modules.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    from: String,
    to: String,
    file: String,
    line: usize,
}

/// The graph of the crate docs: each listed module and the modules it uses, in list order.
#[derive(Debug, Default)]
struct Graph {
    order: Vec<String>,
    uses: BTreeMap<String, BTreeSet<String>>,
}

impl Graph {
    /// The module of a module path: the longest listed one it starts with.
    fn node_of(&self, path: &str) -> Option<String> {
        self.order
            .iter()
            .filter(|n| path == n.as_str() || path.starts_with(&format!("{n}::")))
            .max_by_key(|n| n.len())
            .cloned()
    }

    /// True when `path` is a folder of listed modules (`sim`), which may hold no paths.
    fn is_folder(&self, path: &str) -> bool {
        self.order
            .iter()
            .any(|n| n.starts_with(&format!("{path}::")))
    }
}

/// The "# Layers" list of the crate docs: entries such as
/// ``//! - [`sim::engine`] (uses `io`, `page`): the storage engine …``, which may wrap.
fn graph(lib_rs: &str) -> Graph {
    let mut in_layers = false;
    let mut entries: Vec<String> = Vec::new();
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
        if let Some(entry) = doc.strip_prefix("- [`") {
            entries.push(entry.to_string());
        } else if doc.is_empty() {
            entries.push(String::new());
        } else if let Some(last) = entries.last_mut().filter(|l| !l.is_empty()) {
            last.push(' ');
            last.push_str(doc);
        }
    }
    let mut g = Graph::default();
    for e in entries.iter().filter(|e| !e.is_empty()) {
        let name = e.split('`').next().unwrap_or_default().to_string();
        let uses = e
            .split_once("(uses ")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(list, _)| list)
            .unwrap_or_default();
        let set: BTreeSet<String> = uses
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect();
        g.order.push(name.clone());
        g.uses.insert(name, set);
    }
    g
}

/// The modules a `mod` list declares (`mod x;` / `pub mod x;`), prefixed.
fn declared_modules(mod_rs: &str, prefix: &str) -> BTreeSet<String> {
    mod_rs
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            l.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(|m| format!("{prefix}{m}"))
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

/// The module paths named by `crate::a::b` (and `crate::{a::b, c}`, `crate::a::{b, c::d}`) in
/// `code`, with lines: the path's module segments (the last segment may be an item; the
/// longest listed module wins, so it does no harm).
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
            refs.extend(paths(rest, "", 0).into_iter().map(|p| (p, n + 1)));
        }
    }
    refs.retain(|(m, _)| !m.is_empty() && m != "self");
    refs
}

/// The paths of one `a::b::{c, d::e}` tree at the start of `s`, under `prefix` (groups up to
/// three deep).
fn paths(s: &str, prefix: &str, depth: usize) -> Vec<String> {
    let mut path = prefix.to_string();
    let mut rest = s;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            if depth > 3 {
                return vec![path];
            }
            return group_items(group)
                .into_iter()
                .flat_map(|item| paths(item, &path, depth + 1))
                .collect();
        }
        let seg = ident(rest);
        if seg.is_empty() || seg == "self" {
            return vec![path];
        }
        if !path.is_empty() {
            path.push_str("::");
        }
        path.push_str(&seg);
        rest = &rest[seg.len()..];
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => return vec![path],
        }
    }
}

/// The items of a `{a::b, c, d::{e}}` group, each trimmed.
fn group_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0;
    let mut from = 0;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(group[from..i].trim());
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(group[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    items.push(group[from..].trim());
    items
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Every edge between two different listed modules in the files under `src`, and the paths
/// that point to no listed module or come from a file that belongs to none.
fn edges(g: &Graph, src: &Path) -> (Vec<Edge>, Vec<String>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut edges = Vec::new();
    let mut stray = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("under src");
        let module = module_path(rel);
        if module == "lib" || module == "main" {
            continue;
        }
        let text = fs::read_to_string(&file).expect("read a source file");
        let (e, s) = edges_in(g, &module, &rel.display().to_string(), &text);
        edges.extend(e);
        stray.extend(s);
    }
    edges.sort();
    (edges, stray)
}

/// The edges one file's text (of module path `module`) makes, and its stray paths.
fn edges_in(g: &Graph, module: &str, file: &str, text: &str) -> (Vec<Edge>, Vec<String>) {
    let refs = crate_refs(&code_only(text));
    let mut stray = Vec::new();
    let Some(from) = g.node_of(module) else {
        if !(g.is_folder(module) && refs.is_empty()) {
            stray.push(format!(
                "src/{file}: module `{module}` is missing from the \"# Layers\" list in src/lib.rs"
            ));
        }
        return (Vec::new(), stray);
    };
    let mut edges = Vec::new();
    for (path, line) in refs {
        match g.node_of(&path) {
            Some(to) if to == from => {}
            Some(to) => edges.push(Edge {
                from: from.clone(),
                to,
                file: file.to_string(),
                line,
            }),
            None => stray.push(format!(
                "src/{file}:{line}: `crate::{path}` names no module of the \"# Layers\" list"
            )),
        }
    }
    (edges, stray)
}

/// `sim/engine/wal.rs` → `sim::engine::wal`; `sim/engine/mod.rs` → `sim::engine`.
fn module_path(rel: &Path) -> String {
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let mut segs: Vec<String> = parts
        .iter()
        .map(|p| p.strip_suffix(".rs").unwrap_or(p).to_string())
        .collect();
    if segs.last().is_some_and(|l| l == "mod") {
        segs.pop();
    }
    segs.join("::")
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

/// The edges the graph does not allow, each with its file and line.
fn violations(g: &Graph, edges: &[Edge]) -> Vec<String> {
    edges
        .iter()
        .filter(|e| !g.uses.get(&e.from).is_some_and(|u| u.contains(&e.to)))
        .map(|e| {
            format!(
                "src/{}:{}: `{}` uses `crate::{}`, which its entry in src/lib.rs does not name",
                e.file, e.line, e.from, e.to
            )
        })
        .collect()
}

/// A cycle of the graph's edges, if there is one (as the modules on it).
fn cycle(g: &Graph) -> Option<Vec<String>> {
    fn visit(
        g: &Graph,
        n: &str,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(2) => return None,
            Some(1) => {
                let at = stack.iter().position(|s| s == n).unwrap_or(0);
                let mut c = stack[at..].to_vec();
                c.push(n.to_string());
                return Some(c);
            }
            _ => {}
        }
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.uses.get(n).into_iter().flatten() {
            if let Some(c) = visit(g, m, state, stack) {
                return Some(c);
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    g.order
        .iter()
        .find_map(|n| visit(g, n, &mut state, &mut Vec::new()))
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn lib_rs() -> String {
    fs::read_to_string(src_dir().join("lib.rs")).expect("read src/lib.rs")
}

#[test]
fn the_list_names_every_module_once() {
    let lib = lib_rs();
    let g = graph(&lib);
    let listed: BTreeSet<String> = g.order.iter().cloned().collect();
    assert_eq!(
        listed.len(),
        g.order.len(),
        "a module is listed twice: {:?}",
        g.order
    );
    let sim = fs::read_to_string(src_dir().join("sim/mod.rs")).expect("read src/sim/mod.rs");
    let mut declared = declared_modules(&lib, "");
    declared.remove("sim");
    declared.extend(declared_modules(&sim, "sim::"));
    assert_eq!(
        listed, declared,
        "the \"# Layers\" list in src/lib.rs and the `mod` lines of src/lib.rs and src/sim/mod.rs differ"
    );
    for (m, uses) in &g.uses {
        for u in uses {
            assert!(listed.contains(u), "{m} uses `{u}`, which is not listed");
        }
    }
}

#[test]
fn the_graph_has_no_cycle() {
    let g = graph(&lib_rs());
    assert_eq!(cycle(&g), None, "the \"# Layers\" graph has a cycle");
}

#[test]
fn every_use_is_an_edge_of_the_graph() {
    let g = graph(&lib_rs());
    let (edges, stray) = edges(&g, &src_dir());
    // The walk found the code: a parser that saw nothing would pass anything.
    assert!(edges.len() > 100, "only {} edges found", edges.len());
    let mut bad = violations(&g, &edges);
    bad.extend(stray);
    assert!(
        bad.is_empty(),
        "uses the crate docs do not allow:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_listed_edge_is_still_used() {
    let g = graph(&lib_rs());
    let (edges, _) = edges(&g, &src_dir());
    let used: BTreeSet<(String, String)> = edges.into_iter().map(|e| (e.from, e.to)).collect();
    let gone: Vec<String> = g
        .uses
        .iter()
        .flat_map(|(m, us)| us.iter().map(move |u| (m.clone(), u.clone())))
        .filter(|edge| !used.contains(edge))
        .map(|(m, u)| format!("{m} → {u}"))
        .collect();
    assert!(
        gone.is_empty(),
        "listed in src/lib.rs but used by no code (remove them from the entry):\n{}",
        gone.join("\n")
    );
}

#[test]
fn an_edge_the_graph_lacks_is_caught() {
    let g = graph(&lib_rs());
    let text = "use crate::io::Storage;\nfn f() { crate::sim::driver::simulate(); }\n";
    let (e, stray) = edges_in(&g, "page::x", "page/x.rs", text);
    assert!(stray.is_empty(), "{stray:?}");
    let bad = violations(&g, &e);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad[1].contains("src/page/x.rs:2: `page` uses `crate::sim::driver`"));
    // Grouped imports count too, nested ones resolve to the longest listed module; comments,
    // strings and char literals do not count.
    let text = "use crate::{page::PAGE_SIZE, sim::{actors::worker::Worker, engine}};\n\
                // crate::app\nlet s = \"crate::app\"; let q = '\"'; let t = crate::io::x;\n\
                /* crate::app */ let r = r#\"crate::app\"#;\n";
    let (e, _) = edges_in(&g, "stats::x", "stats/x.rs", text);
    let found: Vec<String> = e.iter().map(|e| format!("{}@{}", e.to, e.line)).collect();
    assert_eq!(found, ["page@1", "sim::actors@1", "sim::engine@1", "io@3"]);
    assert_eq!(
        violations(&g, &e).len(),
        2,
        "stats uses neither the actors nor io"
    );
    // A path to nothing listed, and a file of no listed module, are named.
    let (_, stray) = edges_in(&g, "stats::x", "stats/x.rs", "use crate::nowhere::X;\n");
    assert_eq!(stray.len(), 1, "{stray:?}");
    let (_, stray) = edges_in(&g, "sim", "sim/mod.rs", "pub mod engine;\n");
    assert!(
        stray.is_empty(),
        "a folder of modules with no paths is fine: {stray:?}"
    );
}

#[test]
fn the_graph_is_read_from_the_crate_docs() {
    let g = graph(&lib_rs());
    let uses = |a: &str, b: &str| g.uses.get(a).is_some_and(|u| u.contains(b));
    // Spot checks of what ARCHITECTURE.md and GUIDE.md say.
    assert!(uses("io", "page"));
    assert!(uses("sim::actors", "sim::engine"));
    assert!(uses("sim::driver", "sim::actors"));
    assert!(uses("app", "sim::driver"));
    assert!(
        !uses("report", "sim::actors"),
        "the report never uses the actors"
    );
    assert_eq!(g.order.last().map(String::as_str), Some("app"));
    assert_eq!(
        g.node_of("sim::engine::wal::Wal").as_deref(),
        Some("sim::engine")
    );
    assert_eq!(g.node_of("sim").as_deref(), None);
}

/// The names in `NAME=(a b c)` of scripts/test.sh.
fn tier(script: &str, name: &str) -> Vec<String> {
    let start = format!("{name}=(");
    let line = script
        .lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("scripts/test.sh has no line starting {start}"));
    line[start.len()..]
        .trim_end_matches(')')
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// The integration-test binaries of a package: Cargo's `tests/NAME.rs` and `tests/NAME/main.rs`.
fn test_binaries(package: &Path, out: &mut Vec<String>) {
    let entries = fs::read_dir(package.join("tests")).expect("tests/");
    for e in entries {
        let path = e.expect("tests/ entry").path();
        let name = path
            .file_stem()
            .expect("name")
            .to_string_lossy()
            .to_string();
        if path.extension().is_some_and(|x| x == "rs") || path.join("main.rs").is_file() {
            out.push(name);
        }
    }
}

#[test]
fn every_test_binary_is_in_one_tier_of_scripts_test_sh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = fs::read_to_string(root.join("scripts/test.sh")).expect("scripts/test.sh");
    let (fast, slow) = (tier(&script, "FAST"), tier(&script, "SLOW"));
    let mut binaries = Vec::new();
    test_binaries(root, &mut binaries);
    test_binaries(&root.join("faultfs"), &mut binaries);
    binaries.sort();
    let mut listed: Vec<String> = fast.iter().chain(&slow).cloned().collect();
    listed.sort();
    assert_eq!(
        listed, binaries,
        "scripts/test.sh's FAST and SLOW must name every test binary once (FAST {fast:?}, SLOW {slow:?})"
    );
    assert!(binaries.contains(&"layers".to_string()) && slow.contains(&"kernel".to_string()));
}

// ---------------------------------------------------------------------------------------------
// Cycles between sibling files.
//
// Inside one listed module, the files (and folders) that are siblings — children of the same
// parent module — must not use each other in a circle: `page::fill` using `page::layout` while
// `page::layout` uses `page::fill` means neither can be read, tested or moved without the
// other. An edge is any `crate::`, `super::` or `self::` path in a file's code (comments,
// strings and test code left out: a `tests` module, a `tests.rs` or a file under `tests/`, and
// an inline `#[cfg(test)] mod tests { … }`); it points to the longest module with a file that
// the path starts with, and counts between the two ancestors of its ends that are siblings.
// Between the listed modules themselves (the top level, `sim`'s parts) the "# Layers" graph
// rules, and `the_graph_has_no_cycle` checks it.
//
// The cycles that stay are in `ALLOWED_CYCLES`, each named with its reason in the docs of its
// parent module (a paragraph that says "cycle" and names every member in backticks).

/// The sibling cycles that stay: "PARENT: member member …", members in name order.
const ALLOWED_CYCLES: &[&str] = &[
    "config: echo files generation model pages parse reader run_args save sections settings",
    "report: facts readers sinks views",
    "sim::actors: checkdb evidence worker",
    "sim::actors: context failure journaling",
    "stats: board run thread",
];

/// The module path of every file under `src` (`lib.rs` and `main.rs` left out), with its file.
fn file_modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .map(|f| (module_path(f.strip_prefix(src).expect("under src")), f))
        .filter(|(m, _)| m != "lib" && m != "main")
        .collect()
}

/// True for test code: a module named `tests` or one inside it.
fn is_test_module(module: &str) -> bool {
    module.split("::").any(|s| s == "tests")
}

/// `code` up to its inline `#[cfg(test)] mod tests {` (which, here, ends a file).
fn without_inline_tests(code: &str) -> &str {
    let mut from = 0;
    while let Some(at) = code[from..].find("#[cfg(test)]") {
        let start = from + at;
        let rest = code[start + "#[cfg(test)]".len()..].trim_start();
        if let Some(r) = rest.strip_prefix("mod tests") {
            if r.trim_start().starts_with('{') {
                return &code[..start];
            }
        }
        from = start + 1;
    }
    code
}

/// The module paths `code` (of module `module`) names by `crate::`, `super::` or `self::`
/// paths, made absolute (`super::x` in `a::b` → `a::x`; items may trail).
fn relative_refs(code: &str, module: &str) -> Vec<String> {
    let here: Vec<&str> = module.split("::").collect();
    let mut refs = Vec::new();
    for line in code.lines() {
        let mut i = 0;
        while i < line.len() {
            let rest = &line[i..];
            let before = line[..i].chars().next_back();
            let starts = ["crate::", "super::", "self::"]
                .into_iter()
                .find(|p| rest.starts_with(p));
            let boundary = !before.is_some_and(|c| c.is_alphanumeric() || "_$:".contains(c));
            let (Some(prefix), true) = (starts, boundary) else {
                i += rest.chars().next().map_or(1, char::len_utf8);
                continue;
            };
            let mut base: Vec<&str> = match prefix {
                "crate::" => Vec::new(),
                "super::" => here[..here.len() - 1].to_vec(),
                _ => here.clone(),
            };
            let mut tail = &rest[prefix.len()..];
            while let Some(t) = tail.strip_prefix("super::") {
                base.pop();
                tail = t;
            }
            let base = base.join("::");
            for p in paths(tail, "", 0) {
                match (base.is_empty(), p.is_empty() || p == "self") {
                    (_, true) => refs.push(base.clone()),
                    (true, false) => refs.push(p),
                    (false, false) => refs.push(format!("{base}::{p}")),
                }
            }
            i += prefix.len();
        }
    }
    refs
}

/// The sibling edges of the files: for each use from file module `a` to file module `b`, the
/// children `(sa, sb)` of their nearest common ancestor that contain them, when that ancestor
/// lies inside a listed module.
fn sibling_edges(g: &Graph, files: &BTreeMap<String, PathBuf>) -> BTreeSet<(String, String)> {
    let mut edges = BTreeSet::new();
    for (module, file) in files.iter().filter(|(m, _)| !is_test_module(m)) {
        let text = fs::read_to_string(file).expect("read a source file");
        let code = code_only(&text);
        for r in relative_refs(without_inline_tests(&code), module) {
            let segs: Vec<&str> = r.split("::").collect();
            let Some(target) = (1..=segs.len())
                .rev()
                .map(|n| segs[..n].join("::"))
                .find(|t| files.contains_key(t))
            else {
                continue;
            };
            if let Some(e) = sibling_pair(g, module, &target) {
                edges.insert(e);
            }
        }
    }
    edges
}

/// The siblings that contain `a` and `b`, when neither is the other's ancestor and their
/// parent lies inside a listed module.
fn sibling_pair(g: &Graph, a: &str, b: &str) -> Option<(String, String)> {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.split("::").collect(), b.split("::").collect());
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common >= a.len() || common >= b.len() {
        return None;
    }
    g.node_of(&a[..common].join("::"))?;
    Some((a[..=common].join("::"), b[..=common].join("::")))
}

/// The cycles of `edges` (strongly connected sets of two or more), each as "PARENT: member …".
fn sibling_cycles(edges: &BTreeSet<(String, String)>) -> BTreeSet<String> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a).or_default().push(b);
        next.entry(b).or_default();
    }
    // Two nodes are on one cycle when each reaches the other (the graphs are small).
    let reach = |from: &str| -> BTreeSet<&str> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            for &m in &next[n] {
                if seen.insert(m) {
                    todo.push(m);
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&str, BTreeSet<&str>> = next.keys().map(|&n| (n, reach(n))).collect();
    let mut cycles = BTreeSet::new();
    for (&n, r) in &reached {
        let mut members: Vec<&str> = r
            .iter()
            .copied()
            .filter(|m| reached[m].contains(n))
            .collect();
        members.sort_unstable();
        if members.len() > 1 && members[0] == n {
            let (parent, _) = n.rsplit_once("::").expect("siblings have a parent");
            let names: Vec<&str> = members
                .iter()
                .map(|m| m.rsplit_once("::").map_or(*m, |(_, x)| x))
                .collect();
            cycles.insert(format!("{parent}: {}", names.join(" ")));
        }
    }
    cycles
}

/// The `//!` docs of module `module`'s own file, as one text of paragraphs.
fn module_docs(files: &BTreeMap<String, PathBuf>, module: &str) -> String {
    let text = fs::read_to_string(&files[module]).expect("read a source file");
    text.lines()
        .map_while(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_sibling_files_use_each_other_in_a_cycle_but_the_listed_ones() {
    let g = graph(&lib_rs());
    let files = file_modules(&src_dir());
    let edges = sibling_edges(&g, &files);
    // The walk found the code: a parser that saw nothing would pass anything.
    assert!(
        edges.len() > 300,
        "only {} sibling edges found",
        edges.len()
    );
    let found = sibling_cycles(&edges);
    let allowed: BTreeSet<String> = ALLOWED_CYCLES.iter().map(|s| s.to_string()).collect();
    let new: Vec<&String> = found.difference(&allowed).collect();
    let gone: Vec<&String> = allowed.difference(&found).collect();
    assert!(
        new.is_empty(),
        "sibling files that use each other in a cycle (move what they share to the module \
         that owns it, or to their parent; or list the cycle, with its reason, in \
         ALLOWED_CYCLES of tests/layers.rs and the parent's docs):\n{}",
        new.iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        gone.is_empty(),
        "ALLOWED_CYCLES lists cycles that are no more (remove them, and their line in the \
         parent's docs):\n{}",
        gone.iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    for c in &allowed {
        let (parent, members) = c.split_once(": ").expect("PARENT: members");
        let docs = module_docs(&files, parent);
        let named = docs.split("\n\n").any(|p| {
            p.to_lowercase().contains("cycle")
                && members.split(' ').all(|m| p.contains(&format!("`{m}`")))
        });
        assert!(
            named,
            "the docs of `{parent}` name no cycle of {members} (one paragraph saying \"cycle\" \
             with each in backticks, and why it stays)"
        );
    }
}

#[test]
fn a_sibling_cycle_is_found_and_test_code_is_not_counted() {
    let g = graph(&lib_rs());
    let refs = relative_refs(
        "use super::layout::PAGE_SIZE;\nuse super::{verdict::{Verdict}, fill};\n\
         fn f() { self::x::y(); super::super::io::z(); crate::io::faulty::post::post(); }\n",
        "page::torn",
    );
    assert_eq!(
        refs,
        [
            "page::layout::PAGE_SIZE",
            "page::verdict::Verdict",
            "page::fill",
            "page::torn::x::y",
            "io::z",
            "io::faulty::post::post"
        ]
    );
    let code = "use super::a::X;\n#[cfg(test)]\nmod tests {\n    use super::super::b::Y;\n}\n";
    assert_eq!(without_inline_tests(code), "use super::a::X;\n");
    assert!(is_test_module("sim::engine::journal::tests::format"));
    let pair = |a: &str, b: &str| sibling_pair(&g, a, b);
    assert_eq!(
        pair("io::faulty::post", "io::faulty::helper"),
        Some(("io::faulty::post".into(), "io::faulty::helper".into()))
    );
    assert_eq!(
        pair("report::views::html", "report::sinks::json"),
        Some(("report::views".into(), "report::sinks".into()))
    );
    assert_eq!(
        pair("io::faulty::post", "io::faulty"),
        None,
        "a parent is no sibling"
    );
    assert_eq!(
        pair("stats::board", "sim::engine::wal"),
        None,
        "the Layers graph's"
    );
    let edges: BTreeSet<(String, String)> = [
        ("p::a", "p::b"),
        ("p::b", "p::c"),
        ("p::c", "p::a"),
        ("p::c", "p::d"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    let cycles: Vec<String> = sibling_cycles(&edges).into_iter().collect();
    assert_eq!(cycles, ["p: a b c"]);
}
