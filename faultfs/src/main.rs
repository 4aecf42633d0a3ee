//! The `faultfs` binary: parse the arguments, serve the mount, map the outcome to an exit code.
//!
//! Exit codes: 0 after a clean unmount, 2 for usage or mount errors.

use std::process::ExitCode;

use faultfs::cli::{parse_args, Parsed, USAGE};

fn main() -> ExitCode {
    let opts = match parse_args(std::env::args().skip(1)) {
        Ok(Parsed::Run(opts)) => opts,
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("faultfs: {msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match faultfs::daemon::serve(opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("faultfs: {e:#}");
            ExitCode::from(2)
        }
    }
}
