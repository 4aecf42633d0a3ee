//! `sqliosim completions SHELL` and `sqliosim man [--out DIR]`: shell completion scripts
//! (clap_complete) and man pages (clap_mangen), both generated from the one clap definition
//! in `crate::cli`, so they never drift from the options the binary accepts. Hidden options
//! (`--fault-injection`, for tests) are left out of the completions: clap_complete lists every
//! argument, hidden or not, so the scripts are generated from a copy of the definition
//! without them ([`visible_only`]).

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use clap::CommandFactory;

use crate::cli::Cli;
use crate::exit::Outcome;

/// Prints the completion script for `shell` to stdout.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<Outcome> {
    let mut full = Cli::command();
    full.build();
    let mut cmd = visible_only(&full);
    // clap_complete panics when its writer fails: generate into memory, print from there.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "sqliosim", &mut script);
    crate::exit::out!("{}", String::from_utf8_lossy(&script))?;
    Ok(Outcome::Clean)
}

/// A copy of the built command `cmd` and its subcommands with only what completions use
/// (names, aliases, descriptions, versions and the visible arguments). clap has no way to
/// remove an argument, so the copy is built up instead; the help and version arguments clap
/// generated for `cmd` are among those copied, hence the disabled regeneration.
fn visible_only(cmd: &clap::Command) -> clap::Command {
    let args = cmd.get_arguments().filter(|a| !a.is_hide_set()).cloned();
    let subs = cmd.get_subcommands().map(visible_only);
    let mut copy = clap::Command::new(cmd.get_name().to_string())
        .disable_help_flag(true)
        .disable_version_flag(true)
        .disable_help_subcommand(true)
        .hide(cmd.is_hide_set())
        .visible_aliases(
            cmd.get_visible_aliases()
                .map(str::to_string)
                .collect::<Vec<_>>(),
        )
        .args(args)
        .subcommands(subs);
    if let Some(v) = cmd.get_version() {
        copy = copy.version(v.to_string());
    }
    if let Some(v) = cmd.get_long_version() {
        copy = copy.long_version(v.to_string());
    }
    if let Some(about) = cmd.get_about() {
        copy = copy.about(about.clone());
    }
    if let Some(about) = cmd.get_long_about() {
        copy = copy.long_about(about.clone());
    }
    if let Some(bin) = cmd.get_bin_name() {
        copy = copy.bin_name(bin.to_string());
    }
    copy
}

/// Prints sqliosim.1 to stdout, or with `out` writes sqliosim.1 and one
/// sqliosim-SUBCOMMAND.1 per subcommand into that directory.
pub fn man(out: Option<&Path>) -> anyhow::Result<Outcome> {
    let cmd = Cli::command();
    let Some(dir) = out else {
        let mut stdout = crate::exit::Stdout;
        clap_mangen::Man::new(cmd)
            .render(&mut stdout)
            .context("writing the man page to stdout")?;
        stdout.flush().context("writing the man page to stdout")?;
        return Ok(Outcome::Clean);
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the man page directory {}", dir.display()))?;
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    write_pages(cmd, dir)
        .with_context(|| format!("cannot write the man pages into {}", dir.display()))?;
    crate::exit::outln!("Man pages written to {}", dir.display())?;
    Ok(Outcome::Clean)
}

/// What `clap_mangen::generate_to` does (a page per command and visible subcommand, named
/// sqliosim-bench.1 …), each page written through a temporary renamed over its name instead
/// of `File::create`, which would write through a symlink planted in `dir`.
fn write_pages(cmd: clap::Command, dir: &Path) -> anyhow::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
        write_pages(sub, dir)?;
    }
    let man = clap_mangen::Man::new(cmd);
    let mut page = Vec::new();
    man.render(&mut page)?;
    crate::io::safefile::replace(&dir.join(man.get_filename()), &page)?;
    Ok(())
}
