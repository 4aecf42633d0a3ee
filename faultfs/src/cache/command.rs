//! Control commands of the volatile cache: `cache on|off`, `lie on [file=A,B]|off`, `lied`,
//! `power-cut [torn]`. Parsing is pure; `execute` carries them out on the filesystem.

use super::LieScope;
use crate::fs::{lock, FaultFs};
use crate::spec::SpecError;

/// A parsed cache command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheCommand {
    /// `cache on` / `cache off` (off writes everything back first).
    Cache(bool),
    /// `lie on [file=…]` (Some) / `lie off` (None).
    Lie(Option<LieScope>),
    /// `lied`: list the ranges lied about.
    Lied,
    /// `power-cut [torn]`: drop everything cached.
    PowerCut {
        /// Persist the first sectors of the newest cached write first.
        torn: bool,
    },
}

/// Parses a cache command whose first word is `word` and the rest `rest`; None if `word` is
/// not a cache command.
pub fn parse(word: &str, rest: &str) -> Option<Result<CacheCommand, SpecError>> {
    let args: Vec<&str> = rest.split_whitespace().collect();
    let bad = |w: &str| Err(SpecError::BadParam(w.to_string()));
    Some(match (word, args.as_slice()) {
        ("cache", ["on"]) => Ok(CacheCommand::Cache(true)),
        ("cache", ["off"]) => Ok(CacheCommand::Cache(false)),
        ("cache", _) => bad(rest.trim()),
        ("lie", ["off"]) => Ok(CacheCommand::Lie(None)),
        ("lie", ["on"]) => Ok(CacheCommand::Lie(Some(LieScope::All))),
        ("lie", ["on", files]) => match files.strip_prefix("file=") {
            Some("*") => Ok(CacheCommand::Lie(Some(LieScope::All))),
            Some(list) if !list.is_empty() => {
                let names = list.split(',').map(str::to_string).collect();
                Ok(CacheCommand::Lie(Some(LieScope::Files(names))))
            }
            _ => bad(files),
        },
        ("lie", _) => bad(rest.trim()),
        ("lied", []) => Ok(CacheCommand::Lied),
        ("power-cut", []) => Ok(CacheCommand::PowerCut { torn: false }),
        ("power-cut", ["torn"]) => Ok(CacheCommand::PowerCut { torn: true }),
        ("lied" | "power-cut", _) => bad(rest.trim()),
        _ => return None,
    })
}

/// Carries out a cache command; returns the reply or the reason it failed.
pub fn execute(fs: &FaultFs, cmd: CacheCommand) -> Result<String, String> {
    match cmd {
        CacheCommand::Cache(true) => {
            lock(&fs.cache).enabled = true;
            Ok("ok cache=on\n".into())
        }
        CacheCommand::Cache(false) => {
            if lock(&fs.cache).lie.is_some() {
                return Err("the device is lying about flushes; send `lie off` first".into());
            }
            let bytes = fs
                .cache_off()
                .map_err(|e| format!("writing the cache back: {e}"))?;
            Ok(format!("ok cache=off written_back={bytes}\n"))
        }
        CacheCommand::Lie(scope) => {
            let mut c = lock(&fs.cache);
            let reply = match &scope {
                Some(s) => format!("ok lie=on files={} cache=on\n", s.describe()),
                None => "ok lie=off\n".to_string(),
            };
            if scope.is_some() {
                c.enabled = true;
            }
            c.lie = scope;
            Ok(reply)
        }
        CacheCommand::Lied => {
            let c = lock(&fs.cache);
            let lines = c.lied_lines(|ino| fs.name_of(ino).unwrap_or_else(|| format!("#{ino}")));
            Ok(format!("ok lied={}\n{lines}", lines.lines().count()))
        }
        CacheCommand::PowerCut { torn } => fs.power_cut(torn).map_err(|e| e.to_string()),
    }
}
