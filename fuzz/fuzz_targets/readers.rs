//! One target for every reader of outside input: the first byte chooses the reader, the rest
//! is its input (one build and one coverage map for all, so a bounded CI run covers them
//! all). Each must return a result or an error: a panic, an abort, a hang or an allocation
//! past libFuzzer's `-rss_limit_mb` is a crash, kept in fuzz/artifacts/ by libFuzzer and, once
//! fixed, in fuzz/regressions/ (replayed by tests/cli/fuzz_readers.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sqliosim::fuzzing::read(data);
});
