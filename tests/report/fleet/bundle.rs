//! The bundle of a real run (`sqliosim run --bundle`, as the Ansible role and the Kubernetes
//! job run it) extracts to a directory named by its host and run id, so the bundles of a fleet
//! unpacked side by side do not overwrite one another; the bundle file keeps the name given,
//! which is what the fleet report and the collect steps look for.

use std::io::Read;

use super::support::{runs, summary};

/// The member names of a `.tar.gz`.
fn names(path: &std::path::Path) -> Vec<String> {
    let f = std::fs::File::open(path).expect("the bundle exists");
    let mut a = tar::Archive::new(flate2::read::GzDecoder::new(f));
    let mut out = Vec::new();
    for e in a.entries().expect("a tar archive") {
        let mut e = e.expect("an entry");
        out.push(e.path().expect("a path").display().to_string());
        let mut sink = Vec::new();
        e.read_to_end(&mut sink).expect("readable");
    }
    out
}

#[test]
fn a_real_runs_bundle_extracts_to_a_directory_named_by_host_and_run_id() {
    let doc = summary(&runs().faulty);
    let host = doc["host"]["hostname"].as_str().expect("hostname");
    let host: String = host
        .chars()
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '_',
        })
        .collect();
    let id = doc["run_id"].as_u64().expect("run id");
    let top = format!("sqliosim-evidence-{host}-{id:016X}");
    let all = names(&runs().faulty.join("bundle.tar.gz"));
    assert!(!all.is_empty());
    for n in &all {
        assert!(n.starts_with(&format!("{top}/")), "{n} is not under {top}/");
    }
    for want in ["summary.json", "sqliosim.log.xml", "system-info.json"] {
        assert!(all.contains(&format!("{top}/{want}")), "{want}: {all:?}");
    }
    assert!(
        all.iter()
            .any(|n| n.starts_with(&format!("{top}/dumps/")) && n.ends_with(".received")),
        "the dumps are in the bundle: {all:?}"
    );
}
