//! The tool never destroys what is not its own: existing data files, logs and summaries that it
//! did not write are refused (exit 2, bytes untouched) unless --force.

use crate::crash_support::*;

#[test]
fn files_that_are_not_ours_are_refused_and_left_intact() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 1, false);
    let data = dir.path().join("sqliosim.mdx");
    let precious = vec![0x42u8; 64 * 1024];
    std::fs::write(&data, &precious).expect("write");
    let out = run_cmd(&config, dir.path()).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sqliosim.mdx")
            && err.contains("was not created by sqliosim")
            && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&data).expect("read"),
        precious,
        "the file is untouched"
    );

    let log = dir.path().join("notes.txt");
    std::fs::write(&log, "my notes").expect("write");
    std::fs::remove_file(&data).expect("remove");
    let out = run_cmd(&config, dir.path())
        .arg("--log")
        .arg(&log)
        .output()
        .expect("run");
    assert_exit(&out, 2);
    assert_eq!(std::fs::read_to_string(&log).expect("read"), "my notes");
}

#[test]
fn force_overwrites_and_the_run_proceeds() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    let config = small_config(dir.path(), 1, 1, false);
    let data = dir.path().join("sqliosim.mdx");
    std::fs::write(&data, vec![0x42u8; 8192]).expect("write");
    let out = run_cmd(&config, dir.path())
        .arg("--force")
        .output()
        .expect("run");
    assert_exit(&out, 0);
    let header = sqliosim::page::FileHeader::decode(&read_page(&data, 0));
    assert!(header.is_ok(), "the file is now a sqliosim file");
}
