//! `sqliosim report` through the binary: exit codes 0 (clean), 1 (integrity errors),
//! 2 (unreadable input).

use assert_cmd::Command;
use predicates::str::contains;

use super::fixtures;

fn report() -> Command {
    let mut c = Command::cargo_bin("sqliosim").unwrap();
    c.arg("report");
    c
}

#[test]
fn exit_codes_follow_the_evidence() {
    let clean = tempfile::tempdir().unwrap();
    fixtures::run(clean.path(), &[], 50);
    report()
        .arg(clean.path().join("sqliosim.log.xml"))
        .assert()
        .code(0)
        .stdout(contains("Verdict: CLEAN: no integrity errors"));
    let bad = tempfile::tempdir().unwrap();
    fixtures::run(bad.path(), &fixtures::every_class(), 50);
    report()
        .arg(bad.path().join("summary.json"))
        .assert()
        .code(1)
        .stdout(contains("Verdict: FAILED: 14 integrity error(s)"));
    let junk = bad.path().join("junk.bin");
    std::fs::write(&junk, [0u8, 1, 2, 3]).unwrap();
    report()
        .arg(&junk)
        .assert()
        .code(2)
        .stderr(contains("not a sqliosim/SQLIOSim XML log or JSON summary"));
    report()
        .arg(bad.path().join("missing.xml"))
        .assert()
        .code(2);
}

#[test]
fn reads_a_sqliosim_log() {
    // SQLIOSim's own entries, verbatim from its documentation, in a root of its own.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sqliosim.log.xml");
    let text = r"<LOG>
<ENTRY TYPE='ERROR' TIME='17:21:48' DATE='03/04/08' TID='5080' User='CPU Idle User' File='e:\yukon\buffer.cpp' Line='791' Func='CBUF::ValidateBuffer' HRESULT='0x80070467' SYSTEXT='While accessing the hard disk, a disk operation failed even after retries.'>
<EXTENDED_DESCRIPTION>Buffer validation failed on F:\sqliosim.mdx Page: 87366, offset 0x8</EXTENDED_DESCRIPTION>
</ENTRY>
<ENTRY TYPE='INFO' TIME='02:57:30' DATE='11/08/25' TID='9080' User='Display Monitor' File='FileIO.cpp' Func='CLogicalFile::OutputSummary' HRESULT='' SYSTEXT=''>
<EXTENDED_DESCRIPTION>********** Final Summary for file E:\sqliosim.mdx **********</EXTENDED_DESCRIPTION>
</ENTRY>
<ENTRY TYPE='INFO' TIME='02:57:30' DATE='11/08/25' TID='9080' User='Display Monitor' File='FileIO.cpp' Func='CLogicalFile::OutputSummary' HRESULT='' SYSTEXT=''>
<EXTENDED_DESCRIPTION>Reads = 75414, Scatter Reads = 88286, Writes = 3295, Gather Writes = 54845, Total IO Time (ms) = 44936446</EXTENDED_DESCRIPTION>
</ENTRY>
</LOG>
";
    std::fs::write(&log, text).unwrap();
    let l = sqliosim::report::readers::load::load(&log).unwrap();
    assert_eq!(l.by_class.get("validation_failed"), Some(&1));
    let s = l.summary.unwrap();
    assert_eq!(
        (s.files[0].path.as_str(), s.files[0].io.scatter_reads),
        (r"E:\sqliosim.mdx", 88286)
    );
    report().arg(&log).assert().code(1);
}

/// A JSON summary of a run that says it is running, written on another machine (so the
/// heartbeat decides, not the process), last rewritten `ago_s` seconds ago.
fn running_elsewhere(path: &std::path::Path, ago_s: u64) {
    let mut doc = sqliosim::report::JsonReport::new();
    doc.host = Some(sqliosim::report::sinks::json::HostInfo {
        hostname: "burnin-07".into(),
        machine_id: Some("0123456789abcdef0123456789abcdef".into()),
        label: None,
    });
    doc.pid = Some(1);
    let now = sqliosim::report::sinks::clock::now_us();
    doc.started_us = now - 3_600_000_000;
    doc.updated_us = now - ago_s * 1_000_000;
    doc.status = Some(sqliosim::report::sinks::status::RunStatus {
        phase: "main".into(),
        progress: "00:12/01:00".into(),
        cycle: 2,
        cycles: 3,
        ..Default::default()
    });
    std::fs::write(path, serde_json::to_vec(&doc).unwrap()).unwrap();
}

#[test]
fn a_run_still_going_or_gone_silent_is_never_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.json");
    running_elsewhere(&live, 2);
    report()
        .arg(&live)
        .assert()
        .code(2)
        .stdout(contains("Verdict: RUNNING: no integrity errors so far"))
        .stdout(contains("Last status: main 00:12/01:00, cycle 2/3"))
        .stderr(contains("the run is still going"));
    // Silent for longer than three heartbeats, on a machine this one cannot look into.
    let silent = dir.path().join("silent.json");
    running_elsewhere(&silent, 600);
    let out = report().arg(&silent).assert().code(2);
    let said = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        said.contains("Verdict: UNFINISHED: no integrity errors found before it ended"),
        "{said}"
    );
    assert!(
        said.contains("last heartbeat 600 s ago") && said.contains("Last status: "),
        "{said}"
    );
    assert!(
        !said.contains("PASSED") && !said.contains("CLEAN"),
        "{said}"
    );
    // The error line says why once (it read "the run did not finish (the run did not finish:
    // …)").
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("no final verdict: the run did not finish: ")
            && err.matches("did not finish").count() == 1,
        "{err}"
    );
}
