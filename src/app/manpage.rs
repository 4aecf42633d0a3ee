//! `sqliosim completions SHELL` and `sqliosim man [--out DIR]`: shell completion scripts
//! (clap_complete) and man pages (clap_mangen), both generated from the one clap definition
//! in `crate::cli`, so they never drift from the options the binary accepts. Hidden options
//! (`--fault-injection`, for tests) are left out of the completions: clap_complete lists every
//! argument, hidden or not, so the scripts are generated from a copy of the definition
//! without them ([`visible_only`]).
//!
//! `sqlio` and `diskspd` parse their own switches, so clap knows only their pass-through
//! arguments. Their switch tables (`crate::bench::switches`) fill the gap: the completions get
//! them as clap arguments ([`with_front_end_switches`]), their man pages a SWITCHES section
//! ([`switches_section`]). Every page ends with EXAMPLES from [`super::man_examples`].

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use clap::CommandFactory;

use roff::{bold, roman, Roff};

use crate::bench::switches::{Effect, Switch};
use crate::cli::Cli;
use crate::exit::Outcome;

/// Prints the completion script for `shell` to stdout.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<Outcome> {
    let mut full = with_front_end_switches(Cli::command());
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

/// `cmd` with the switches `sqlio` and `diskspd` accept as arguments of those subcommands, for
/// the completions only (the binary parses them itself).
fn with_front_end_switches(cmd: clap::Command) -> clap::Command {
    use crate::bench::{diskspd, sqlio};
    cmd.mut_subcommand("sqlio", |s| s.args(switch_args(sqlio::args::SWITCHES)))
        .mut_subcommand("diskspd", |s| s.args(switch_args(diskspd::args::SWITCHES)))
}

/// A table's accepted switches as clap arguments. A single-dash switch carries its value in
/// the same word (`-kW`), so it is completed as a flag; a long option of ours takes its value
/// as the next word, with its choices when the table lists them (`uring|psync`). The one
/// multi-letter single-dash switch (SQLIO's `-64`, without effect) has no clap form.
fn switch_args(table: &[Switch]) -> Vec<clap::Arg> {
    let mut args = Vec::new();
    for s in table.iter().filter(|s| s.accepted()) {
        let arg = clap::Arg::new(s.flag).help(s.help);
        let arg = match (s.letter(), s.flag.strip_prefix("--")) {
            (Some(c), _) if s.flag.chars().count() == 2 => {
                arg.short(c).action(clap::ArgAction::SetTrue)
            }
            (_, Some(long)) if s.value.is_empty() => {
                arg.long(long).action(clap::ArgAction::SetTrue)
            }
            (_, Some(long)) if s.value.contains(['<', '=']) => arg.long(long).value_name(s.value),
            (_, Some(long)) => arg
                .long(long)
                .value_parser(s.value.split('|').collect::<Vec<_>>()),
            _ => continue,
        };
        args.push(arg);
    }
    args
}

/// Prints sqliosim.1 to stdout, or with `out` writes sqliosim.1 and one
/// sqliosim-SUBCOMMAND.1 per subcommand into that directory.
pub fn man(out: Option<&Path>) -> anyhow::Result<Outcome> {
    let cmd = Cli::command();
    let Some(dir) = out else {
        let mut stdout = crate::exit::Stdout;
        let (_, text) = page(cmd).context("rendering the man page")?;
        stdout
            .write_all(&text)
            .and_then(|()| stdout.flush())
            .context("writing the man page to stdout")?;
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
    let (file, text) = page(cmd)?;
    crate::io::safefile::replace(&dir.join(file), &text)?;
    Ok(())
}

/// One page and its file name: clap_mangen's sections as `Man::render` orders them, with
/// SWITCHES (sqlio, diskspd) and EXAMPLES before VERSION.
fn page(cmd: clap::Command) -> std::io::Result<(String, Vec<u8>)> {
    let man = clap_mangen::Man::new(cmd.clone());
    let file = man.get_filename();
    let mut w = Vec::new();
    man.render_title(&mut w)?;
    man.render_name_section(&mut w)?;
    man.render_synopsis_section(&mut w)?;
    man.render_description_section(&mut w)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut w)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut w)?;
    }
    if cmd.get_after_long_help().is_some() || cmd.get_after_help().is_some() {
        man.render_extra_section(&mut w)?;
    }
    let name = file.strip_suffix(".1").unwrap_or(&file);
    w.extend(own_sections(name).to_roff().as_bytes());
    if cmd.get_version().is_some() || cmd.get_long_version().is_some() {
        man.render_version_section(&mut w)?;
    }
    Ok((file, w))
}

/// The SWITCHES section of the page `name` (sqlio's and diskspd's) and its EXAMPLES.
fn own_sections(name: &str) -> Roff {
    let mut roff = Roff::new();
    let table = match name {
        "sqliosim-sqlio" => Some(crate::bench::sqlio::args::SWITCHES),
        "sqliosim-diskspd" => Some(crate::bench::diskspd::args::SWITCHES),
        _ => None,
    };
    if let Some(table) = table {
        switches_section(&mut roff, table);
    }
    if let Some(examples) = super::man_examples::of(name) {
        roff.control("SH", ["EXAMPLES"]);
        for (what, line) in examples {
            roff.control("PP", []).text([roman(*what)]);
            roff.control("RS", ["4"]).control("nf", []);
            roff.text([bold(*line)]).control("fi", []).control("RE", []);
        }
    }
    roff
}

/// A front end's switches from its table, as typed (`-kR|W`), grouped by what they do here.
fn switches_section(roff: &mut Roff, table: &[Switch]) {
    roff.control("SH", ["SWITCHES"]);
    let groups = [
        (Effect::Used, None),
        (
            Effect::Ignored,
            Some("Accepted for compatibility, without effect here"),
        ),
        (
            Effect::Refused,
            Some("Refused (with a message saying what to do instead)"),
        ),
        (Effect::Ours, Some("Options of sqliosim")),
    ];
    for (effect, heading) in groups {
        if let Some(h) = heading {
            roff.control("SS", [h]);
        }
        for s in table.iter().filter(|s| s.effect == effect) {
            roff.control("TP", [])
                .text([bold(s.synopsis())])
                .text([roman(s.help)]);
        }
    }
}
