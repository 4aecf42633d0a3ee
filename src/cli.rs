//! Command-line definitions (clap). No I/O here.
