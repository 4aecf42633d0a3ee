//! The `sqliosim` binary: hands the command line to `app::run` and maps the outcome to an exit code.

// The allocator wrapper is the binary's only unsafe code: a `GlobalAlloc` cannot be written
// without it (see the module's doc).
#[allow(unsafe_code)]
mod memory;

#[global_allocator]
static ALLOCATOR: memory::Reserved = memory::Reserved;

fn main() -> std::process::ExitCode {
    memory::set_aside();
    sqliosim::exit::to_exit_code(sqliosim::app::run(std::env::args_os().collect()))
}
