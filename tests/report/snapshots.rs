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

/// A path longer than the File column keeps the numbers in their columns (they shifted), and
/// the I/O to files outside the set has its own row, so the rows add up to the run's totals.
#[test]
fn terminal_files_table_stays_aligned_with_long_paths_and_lists_other_files() {
    let dir = tempfile::tempdir().unwrap();
    fixtures::run(dir.path(), &[], 50);
    let mut l =
        sqliosim::report::readers::load::load(&dir.path().join("sqliosim.log.xml")).unwrap();
    let sum = l.summary.as_mut().expect("summary");
    sum.files[0].path = "/mnt/burnin/a-rather-long-mount-point/of-a-host/sqliosim.mdx".into();
    sum.other = Some(sqliosim::stats::OpTotals {
        reads: 7,
        writes: 40,
        ..Default::default()
    });
    let text = sqliosim::report::views::terminal::render(&l);
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("File "))
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(table.len(), 4, "header, two files, other files:\n{text}");
    assert!(table[3].starts_with("other files"), "{text}");
    let ends: Vec<usize> = table
        .iter()
        .map(|l| l.find("Reads").map_or_else(|| l.len(), |i| i + 5))
        .collect();
    // Each row's Reads number ends where the header's "Reads" ends.
    let reads_end = ends[0];
    for row in &table[1..] {
        let before = &row[..reads_end];
        assert!(
            before.ends_with(|c: char| c.is_ascii_digit()) && row[reads_end..].starts_with(' '),
            "misaligned row {row:?}\n{text}"
        );
    }
}
