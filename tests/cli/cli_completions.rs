//! The command line a Rust user expects: every subcommand's options in the top-level help,
//! shell completions for bash, zsh, fish and PowerShell, a man page that groff renders (with
//! examples on every page, and sqlio's and diskspd's switches from the tables their parsers
//! read), and an empty `--engine` refused with exit 2 by every subcommand that takes one.

use assert_cmd::Command;
use predicates::prelude::*;
use predicates::str::contains;
use sqliosim::bench::switches::Switch;
use std::path::Path;

/// Every subcommand a user can type.
const SUBCOMMANDS: &[&str] = &[
    "run",
    "bench",
    "sqlio",
    "diskspd",
    "report",
    "verify",
    "witness",
    "restore",
    "selftest",
    "completions",
    "man",
];

fn sqliosim(cwd: &Path) -> Command {
    let mut cmd = Command::cargo_bin("sqliosim").expect("binary");
    cmd.current_dir(cwd);
    cmd
}

fn stdout_of(cwd: &Path, args: &[&str]) -> String {
    let out = sqliosim(cwd).args(args).output().expect("run sqliosim");
    assert!(
        out.status.success(),
        "sqliosim {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

#[test]
fn help_bench_shows_the_bench_options() {
    let dir = tempfile::tempdir().expect("tempdir");
    for args in [&["help", "bench"][..], &["bench", "--help"][..]] {
        let text = stdout_of(dir.path(), args);
        for opt in [
            "--block-size",
            "--outstanding",
            "--sqlio-output",
            "--engine",
        ] {
            assert!(text.contains(opt), "{args:?} lacks {opt}:\n{text}");
        }
    }
    let verify = stdout_of(dir.path(), &["help", "verify"]);
    assert!(verify.contains("--journal-dir"), "{verify}");
    let restore = stdout_of(dir.path(), &["help", "restore"]);
    assert!(
        restore.contains("--to") && restore.contains("STREAM"),
        "{restore}"
    );
    let report = stdout_of(dir.path(), &["help", "report"]);
    assert!(report.contains("--bundle"), "{report}");
    let selftest = stdout_of(dir.path(), &["help", "selftest"]);
    assert!(selftest.contains("--fuse"), "{selftest}");
}

#[test]
fn completions_name_every_subcommand_and_some_options() {
    let dir = tempfile::tempdir().expect("tempdir");
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let script = stdout_of(dir.path(), &["completions", shell]);
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{shell} completion lacks {sub}");
        }
        for opt in ["block-size", "journal-dir", "sqlio-output"] {
            assert!(script.contains(opt), "{shell} completion lacks {opt}");
        }
    }
    sqliosim(dir.path())
        .args(["completions", "tcsh"])
        .assert()
        .code(2);
}

/// The words bash's completion offers after `option` in `sqliosim SUB`: the `compgen -W`
/// list of the first `option)` case in SUB's branch (`sqliosim__subcmd__SUB)`), if any.
fn bash_values(script: &str, sub: &str, option: &str) -> Option<String> {
    let body = script.split(&format!("sqliosim__subcmd__{sub})")).nth(1)?;
    let case = body.split(&format!("{option})")).nth(1)?;
    let line = case.lines().find(|l| l.contains("COMPREPLY="))?;
    Some(
        line.split("compgen -W \"")
            .nth(1)?
            .split('"')
            .next()?
            .to_string(),
    )
}

#[test]
fn completions_offer_enum_values_and_hide_hidden_options() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bash = stdout_of(dir.path(), &["completions", "bash"]);
    let cases = [
        ("run", "--engine", "uring psync libaio sync"),
        ("bench", "--engine", "uring psync libaio"),
        ("bench", "--rw", "read write mix"),
        ("bench", "--pattern", "random sequential"),
        ("bench", "--data", "random zeros"),
    ];
    for (sub, opt, want) in cases {
        assert_eq!(
            bash_values(&bash, sub, opt).as_deref(),
            Some(want),
            "bash completion of {sub} {opt}"
        );
    }
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let script = stdout_of(dir.path(), &["completions", shell]);
        assert!(
            !script.contains("fault-injection"),
            "{shell} completion offers the hidden --fault-injection"
        );
        assert!(
            script.contains("status-interval"),
            "{shell} lost run's options"
        );
    }
    // What is offered is what is accepted: an alias still works, a stranger is still refused.
    sqliosim(dir.path())
        .args(["run", "--dry-run", "--engine", "io_uring"])
        .assert()
        .success();
}

#[test]
fn bash_completion_is_valid_bash() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = stdout_of(dir.path(), &["completions", "bash"]);
    let path = dir.path().join("sqliosim.bash");
    std::fs::write(&path, script).expect("write the script");
    let status = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .status();
    match status {
        Ok(s) => assert!(s.success(), "bash -n rejected the completion script"),
        Err(e) => eprintln!("bash not available ({e}); syntax check skipped"),
    }
}

/// Renders roff with groff (through preconv, as man does) when it is installed; `None` when
/// it is not.
fn groff(page: &Path) -> Option<(bool, String, String)> {
    let out = std::process::Command::new("groff")
        .args(["-k", "-man", "-Tutf8", "-ww", "-P-cbou"])
        .arg(page)
        .output()
        .ok()?;
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[test]
fn man_page_is_roff_with_every_subcommand() {
    let dir = tempfile::tempdir().expect("tempdir");
    let page = stdout_of(dir.path(), &["man"]);
    assert!(page.contains(".TH sqliosim 1"), "no .TH header:\n{page}");
    assert!(page.contains(".SH SUBCOMMANDS"), "no SUBCOMMANDS section");
    for sub in SUBCOMMANDS {
        assert!(
            page.contains(&format!("sqliosim\\-{sub}(1)")),
            "man page lacks {sub}"
        );
    }
    let path = dir.path().join("sqliosim.1");
    std::fs::write(&path, &page).expect("write the page");
    match groff(&path) {
        Some((ok, text, warnings)) => {
            assert!(ok, "groff failed: {warnings}");
            assert!(warnings.trim().is_empty(), "groff warnings: {warnings}");
            assert!(text.contains("SUBCOMMANDS"), "{text}");
        }
        None => eprintln!("groff not available; rendering check skipped"),
    }
}

/// Runs `sqliosim man --out DIR/man1` and returns DIR/man1.
fn man_pages(dir: &Path) -> std::path::PathBuf {
    let out = dir.join("man1");
    sqliosim(dir)
        .args(["man", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("Man pages written to"));
    out
}

#[test]
fn man_out_writes_one_page_per_subcommand() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = man_pages(dir.path());
    for sub in SUBCOMMANDS {
        let page = out.join(format!("sqliosim-{sub}.1"));
        let text = std::fs::read_to_string(&page).expect("a page per subcommand");
        assert!(text.contains(".TH"), "{} is not roff", page.display());
        if let Some((ok, rendered, warnings)) = groff(&page) {
            assert!(ok && warnings.trim().is_empty(), "{sub}: {warnings}");
            assert!(rendered.contains(sub), "{sub}: {rendered}");
        }
    }
    let bench = std::fs::read_to_string(out.join("sqliosim-bench.1")).expect("bench page");
    assert!(
        bench.contains("block\\-size"),
        "bench page lacks its options"
    );
}

/// The front ends that parse their own switches, and their tables.
fn front_ends() -> [(&'static str, &'static [Switch]); 2] {
    [
        ("sqlio", sqliosim::bench::sqlio::args::SWITCHES),
        ("diskspd", sqliosim::bench::diskspd::args::SWITCHES),
    ]
}

#[test]
fn every_man_page_has_examples_and_the_front_ends_list_every_switch() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = man_pages(dir.path());
    let pages: Vec<_> = std::fs::read_dir(&out)
        .expect("the pages")
        .map(|e| e.expect("an entry").path())
        .collect();
    assert_eq!(pages.len(), SUBCOMMANDS.len() + 1, "{pages:?}");
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("a page");
        assert!(
            text.contains(".SH EXAMPLES"),
            "{} has no EXAMPLES",
            page.display()
        );
    }
    let main = stdout_of(dir.path(), &["man"]);
    assert!(
        main.contains(".SH EXAMPLES"),
        "sqliosim.1 on stdout has no EXAMPLES"
    );
    for (sub, table) in front_ends() {
        let page = out.join(format!("sqliosim-{sub}.1"));
        let text = std::fs::read_to_string(&page).expect("the front end's page");
        assert!(text.contains(".SH SWITCHES"), "{sub}: no SWITCHES section");
        for s in table {
            // roff writes every hyphen as \-.
            let typed = s.synopsis().replace('-', "\\-");
            assert!(text.contains(&typed), "{sub}'s page lacks {}", s.synopsis());
        }
        if let Some((ok, rendered, warnings)) = groff(&page) {
            assert!(ok && warnings.trim().is_empty(), "{sub}: {warnings}");
            assert!(
                rendered.contains("SWITCHES") && rendered.contains("EXAMPLES"),
                "{rendered}"
            );
        }
    }
}

/// The words of the bash completion's `opts` list for `sqliosim SUB`.
fn bash_opts(script: &str, sub: &str) -> Vec<String> {
    let body = script
        .split(&format!("sqliosim__subcmd__{sub})"))
        .nth(1)
        .expect("the subcommand's branch");
    let line = body
        .lines()
        .find(|l| l.contains("opts="))
        .expect("its opts");
    let list = line.split('"').nth(1).expect("a quoted list");
    list.split_whitespace().map(str::to_string).collect()
}

#[test]
fn completions_offer_the_front_ends_switches_but_not_the_refused_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bash = stdout_of(dir.path(), &["completions", "bash"]);
    for (sub, table) in front_ends() {
        let opts = bash_opts(&bash, sub);
        for s in table {
            // A single-dash switch of one letter or one of our long options; SQLIO's -64 (no
            // effect) has no clap form.
            let completable = s.flag.starts_with("--") || s.flag.chars().count() == 2;
            let offered = opts.iter().any(|o| o == s.flag);
            assert_eq!(
                offered,
                s.accepted() && completable,
                "{sub} {}: {opts:?}",
                s.flag
            );
        }
    }
    assert_eq!(
        bash_values(&bash, "diskspd", "--engine").as_deref(),
        Some("uring psync libaio")
    );
}

#[test]
fn an_empty_engine_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("b.dat");
    let file = file.to_str().expect("utf-8 path");
    let cases: [&[&str]; 4] = [
        &["run", "--dry-run", "--engine", ""],
        &["bench", "--file", file, "--size", "4M", "--engine", ""],
        &["sqlio", "--engine", "", "-s1", file],
        &["diskspd", "--engine", "", "-d1", "-c4M", file],
    ];
    for args in cases {
        sqliosim(dir.path())
            .args(args)
            .assert()
            .code(2)
            .stderr(contains("engine").and(contains("sqliosim: error")));
    }
    assert!(
        !Path::new(file).exists(),
        "a refused command line must not create the test file"
    );
}

#[test]
fn legacy_switches_still_mean_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    // -? is SQLIOSim's help switch; -cfg with a missing file is SQLIOSim's run, refused
    // with exit 2 naming the file, as before subcommands were real clap subcommands.
    sqliosim(dir.path())
        .arg("-?")
        .assert()
        .success()
        .stdout(contains("Usage: sqliosim <COMMAND>"));
    sqliosim(dir.path())
        .args(["-cfg", "missing.ini", "--dry-run"])
        .assert()
        .code(2)
        .stderr(contains("missing.ini"));
}
