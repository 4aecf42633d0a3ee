//! The `sqliosim` binary: hands the command line to `app::run` and maps the outcome to an exit code.

fn main() -> std::process::ExitCode {
    sqliosim::exit::to_exit_code(sqliosim::app::run(std::env::args_os().collect()))
}
