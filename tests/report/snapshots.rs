//! Snapshots of the XML entries, the dump text and the summary text, with times masked.

use super::fixtures;

fn mask(text: &str, dir: &std::path::Path) -> String {
    let tid = regex::Regex::new(r"TID='\d+'").unwrap();
    let t = tid.replace_all(text, "TID='[tid]'");
    let time = regex::Regex::new(r"TIME='\d\d:\d\d:\d\d' DATE='\d\d/\d\d/\d\d'").unwrap();
    let t = time.replace_all(&t, "TIME='[time]' DATE='[date]'");
    t.replace(&dir.display().to_string(), "[dir]")
}

#[test]
fn xml_entries() {
    let dir = tempfile::tempdir().unwrap();
    let findings = fixtures::every_class();
    // One finding of each shape keeps the snapshot readable.
    let pick: Vec<_> = [0usize, 2, 4, 10]
        .iter()
        .map(|i| findings[*i].clone())
        .collect();
    fixtures::run(dir.path(), &pick, 50);
    let raw = std::fs::read_to_string(dir.path().join("sqliosim.log.xml")).unwrap();
    // Live times of dump notices and summaries are masked above; finding times are fixed.
    insta::assert_snapshot!("xml_log", mask(&raw, dir.path()));
}

#[test]
fn dump_text() {
    let f = &fixtures::every_class()[4];
    let dir = tempfile::tempdir().unwrap();
    let mut w = sqliosim::report::DumpWriter::new(dir.path());
    let files = w.write(f).unwrap();
    insta::assert_snapshot!("dump_bit_rot", std::fs::read_to_string(files.text).unwrap());
}

#[test]
fn summary_text() {
    let s = fixtures::summary();
    let lines: Vec<String> = s
        .files
        .iter()
        .flat_map(sqliosim::stats::file_summary_lines)
        .collect();
    insta::assert_snapshot!("summary_lines", lines.join("\n"));
}

#[test]
fn terminal_report() {
    let dir = tempfile::tempdir().unwrap();
    fixtures::run(dir.path(), &fixtures::every_class(), 50);
    let l = sqliosim::report::readers::load::load(&dir.path().join("sqliosim.log.xml")).unwrap();
    insta::assert_snapshot!(
        "terminal_report",
        mask(&sqliosim::report::views::terminal::render(&l), dir.path())
    );
}
