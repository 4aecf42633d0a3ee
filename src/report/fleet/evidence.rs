//! Where a run's evidence lies, so that a fleet row's CORRUPTION line can name the page dumps
//! and the bundle of the run that found it, even when several runs of one host merged into the
//! row. Results are usually copied from their host (Ansible's fetch, scp), so a path the run
//! recorded is looked for beside the result first (`dumps/<RUNID>/` and the bundle's file name),
//! and given as recorded (a path on the host) when no copy lies there.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::report::sinks::json::JsonReport;

/// The evidence of one run, as far as its result tells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EvidencePaths {
    /// The directory of its page dumps.
    pub dumps: Option<PathBuf>,
    /// Its evidence bundle (`--bundle`).
    pub bundle: Option<PathBuf>,
}

impl EvidencePaths {
    /// The evidence of the run whose JSON summary `doc` was read from `json`.
    pub fn of_json(json: &Path, doc: &JsonReport) -> EvidencePaths {
        let dir = json.parent().unwrap_or(Path::new("."));
        let dumps = doc.dump_dir.as_ref().map(|p| {
            let copy = p.file_name().map(|n| dir.join("dumps").join(n));
            copy.filter(|c| c.is_dir()).unwrap_or_else(|| p.clone())
        });
        let bundle = bundle_option(&doc.command_line).map(|p| {
            let copy = p.file_name().map(|n| dir.join(n));
            copy.filter(|c| c.is_file()).unwrap_or(p)
        });
        EvidencePaths { dumps, bundle }
    }

    /// The evidence of the run whose XML log (with no JSON summary) is `log`: the `dumps/`
    /// directory beside it, when there is one.
    pub fn of_log(log: &Path) -> EvidencePaths {
        let dumps = log.parent().map(|d| d.join("dumps")).filter(|d| d.is_dir());
        EvidencePaths {
            dumps,
            bundle: None,
        }
    }
}

/// The value of `--bundle FILE` or `--bundle=FILE` on a recorded command line.
fn bundle_option(argv: &[String]) -> Option<PathBuf> {
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        if a == "--bundle" {
            return it.next().map(PathBuf::from);
        }
        if let Some(v) = a.strip_prefix("--bundle=") {
            return Some(PathBuf::from(v));
        }
    }
    None
}

/// "dumps DIR, bundle FILE", or "no dumps or bundle recorded".
impl fmt::Display for EvidencePaths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.dumps, &self.bundle) {
            (None, None) => write!(f, "no dumps or bundle recorded"),
            (Some(d), None) => write!(f, "dumps {}", d.display()),
            (None, Some(b)) => write!(f, "bundle {}", b.display()),
            (Some(d), Some(b)) => write!(f, "dumps {}, bundle {}", d.display(), b.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_is_read_off_the_command_line() {
        let argv = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let got = bundle_option(&argv(&["sqliosim", "run", "--bundle", "/r/b.tar.gz"]));
        assert_eq!(got, Some(PathBuf::from("/r/b.tar.gz")));
        let got = bundle_option(&argv(&["sqliosim", "run", "--bundle=x.tar.gz"]));
        assert_eq!(got, Some(PathBuf::from("x.tar.gz")));
        assert_eq!(bundle_option(&argv(&["sqliosim", "run", "--bundle"])), None);
        assert_eq!(bundle_option(&argv(&["sqliosim", "run"])), None);
    }

    #[test]
    fn a_copy_beside_the_summary_wins_over_the_recorded_host_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let json = dir.path().join("sqliosim.log.json");
        std::fs::create_dir_all(dir.path().join("dumps/0000002a")).expect("dumps");
        std::fs::write(dir.path().join("b.tar.gz"), b"x").expect("bundle");
        let doc = JsonReport {
            dump_dir: Some(PathBuf::from("/var/tmp/r/dumps/0000002a")),
            command_line: vec!["--bundle".into(), "/var/tmp/r/b.tar.gz".into()],
            ..JsonReport::default()
        };
        let e = EvidencePaths::of_json(&json, &doc);
        assert_eq!(e.dumps, Some(dir.path().join("dumps/0000002a")));
        assert_eq!(e.bundle, Some(dir.path().join("b.tar.gz")));
        let elsewhere = EvidencePaths::of_json(Path::new("/nonexistent/x.json"), &doc);
        assert_eq!(
            elsewhere.dumps,
            Some(PathBuf::from("/var/tmp/r/dumps/0000002a"))
        );
        assert_eq!(
            elsewhere.to_string(),
            "dumps /var/tmp/r/dumps/0000002a, bundle /var/tmp/r/b.tar.gz"
        );
    }
}
