//! Whether another user could change what a directory the tool works in holds: the run header
//! says so (docs/security.md). The names the tool opens there are safe whatever it says (see
//! the module above); what such a user can still do is swap the directory itself, or remove
//! and rename the tool's files in it, so the user running the tool ought to know.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

const STICKY: u32 = 0o1000;
const GROUP_OTHER_WRITE: u32 = 0o022;

/// One sentence per reason another user than the one running the tool can change `dir` or
/// one of its ancestors: `dir` is a symlink; a directory on the way is writable by group or
/// others without the sticky bit, or owned by another user (other than root). Empty when
/// none, or when `dir` does not exist yet.
pub fn exposure(dir: &Path) -> Vec<String> {
    let mut said = Vec::new();
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        let to = std::fs::read_link(dir).map_or_else(|_| "?".into(), |t| t.display().to_string());
        said.push(format!(
            "{} is a symlink (to {to}): whoever can change it chooses where the files go",
            dir.display()
        ));
    }
    let Ok(real) = std::fs::canonicalize(dir) else {
        return said;
    };
    let me = rustix::process::geteuid().as_raw();
    for d in real.ancestors() {
        let Ok(m) = std::fs::metadata(d) else {
            continue;
        };
        let mode = m.mode();
        if mode & GROUP_OTHER_WRITE != 0 && mode & STICKY == 0 {
            said.push(format!(
                "{} is writable by {} (mode {:o}) without the sticky bit",
                d.display(),
                if mode & 0o002 != 0 {
                    "every user"
                } else {
                    "its group"
                },
                mode & 0o7777
            ));
        }
        if m.uid() != me && m.uid() != 0 {
            said.push(format!("{} is owned by uid {}", d.display(), m.uid()));
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_world_writable_directory_and_a_symlink_to_it_are_said() {
        let base = tempfile::tempdir().expect("tempdir");
        let open = base.path().join("open");
        std::fs::create_dir(&open).expect("mkdir");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let said = exposure(&open);
        assert!(
            said.iter()
                .any(|s| s.contains("writable by every user (mode 777)")),
            "{said:?}"
        );
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&open, &link).expect("symlink");
        assert!(
            exposure(&link)[0].contains("is a symlink"),
            "{:?}",
            exposure(&link)
        );
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
        assert!(
            !exposure(&open)
                .iter()
                .any(|s| s.contains("open is writable")),
            "sticky is fine"
        );
    }
}
