//! Each finding beside the kernel lines near its time (issue #23 §4), in `sqliosim report`'s
//! text and in the HTML report's findings table: a fault-injected run (a finding) while a
//! kernel line is written to /dev/kmsg. Writing to /dev/kmsg needs root: skipped without it,
//! or when /dev/kmsg cannot be read (as tests/runs/kernel_log.rs).

use crate::crash_support::{assert_exit, bin};

#[test]
fn a_finding_shows_the_kernel_line_near_it_in_the_report_and_the_html() {
    let Some(mut kmsg) = crate::kernel_log::kmsg_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let json = tmp.path().join("run.json");
    let child = bin()
        .arg("-cfg")
        .arg(crate::fault_injection::config(tmp.path()))
        .arg("-dir")
        .arg(tmp.path())
        .arg("--json")
        .arg(&json)
        .args(["-d", "1", "--seed", "3", "--fault-injection", "flip@220"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start run");
    let marker = crate::kernel_log::mark_once_started(&mut kmsg, &json, "beside");
    let out = child.wait_with_output().expect("wait run");
    assert_exit(&out, 1);

    let r = bin().arg("report").arg(&json).output().expect("report");
    assert_exit(&r, 1);
    let text = String::from_utf8_lossy(&r.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains(" page 220 "))
        .unwrap_or_else(|| panic!("no finding on page 220: {text}"));
    // The kernel line follows its finding, "kernel +0.123 s  text".
    let beside = lines[at + 1..]
        .iter()
        .take_while(|l| l.trim_start().starts_with("kernel "))
        .any(|l| l.contains(&marker) && l.contains(" s  "));
    assert!(beside, "the marker is not beside the finding: {text}");

    let html = tmp.path().join("report.html");
    let h = bin()
        .arg("report")
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .output()
        .expect("report --html");
    assert_exit(&h, 1);
    let page = std::fs::read_to_string(&html).expect("html");
    let row = page
        .find("<td>220</td>")
        .unwrap_or_else(|| panic!("no finding row for page 220: {page}"));
    let next = &page[row..];
    let end = next.find("</tr>").expect("row end");
    let kernel_row = &next[end..];
    assert!(
        kernel_row.starts_with("</tr>\n<tr class='kernel'>"),
        "no kernel row after the finding: {}",
        &kernel_row[..kernel_row.len().min(400)]
    );
    let kernel_end = kernel_row[5..].find("</tr>").expect("kernel row end") + 5;
    assert!(
        kernel_row[..kernel_end].contains(&marker)
            && kernel_row.contains("Kernel lines (within 60 s"),
        "{}",
        &kernel_row[..kernel_end]
    );
}
