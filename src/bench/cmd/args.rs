//! The `sqliosim bench` command line (clap), as typed: lists stay strings until
//! [`super::plan`] turns them into a validated matrix of jobs.

use crate::config::offer::offer_str;
use crate::io::aio::RingKind;
use clap::{ArgAction, Parser};
use std::path::PathBuf;

/// Capacity run: IOPS, bandwidth and latency of a file, over a matrix of settings.
#[derive(Debug, Parser)]
#[command(
    about = "Capacity run: IOPS, MB/s and latency percentiles on a test file, optionally over a \
             matrix of threads × outstanding I/O × pattern × read/write",
    after_help = "Comma lists (threads, outstanding, pattern, rw, block-size) run every \
                  combination; `1,2,4,...,128` expands to the powers of two in between."
)]
pub struct BenchArgs {
    /// Test file (repeatable; each file gets --threads workers).
    #[arg(long = "file", value_name = "PATH", action = ArgAction::Append)]
    pub files: Vec<PathBuf>,
    /// Directory in which to create sqliosim-bench.dat.
    #[arg(long, value_name = "DIR", conflicts_with = "files")]
    pub dir: Option<PathBuf>,
    /// File size (K/M/G suffix); default: the existing bench file's size, else 1G.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Bytes per I/O (K/M suffix), or a comma list.
    #[arg(
        long = "block-size",
        short = 'b',
        value_name = "SIZE[,SIZE…]",
        default_value = "8K"
    )]
    pub block_size: String,
    /// read, write or mix (see --read-pct), or a comma list.
    #[arg(long, value_name = "read|write|mix[,…]", value_parser = offer_str(&["read", "write", "mix"]), default_value = "read")]
    pub rw: String,
    /// Share of reads for --rw mix.
    #[arg(long = "read-pct", value_name = "N", default_value_t = 70)]
    pub read_pct: u8,
    /// random or sequential, or a comma list.
    #[arg(long, value_name = "random|sequential[,…]", value_parser = offer_str(&["random", "sequential"]), default_value = "random")]
    pub pattern: String,
    /// Worker threads per file, or a comma list.
    #[arg(long, short = 't', value_name = "N[,N…]", default_value = "1")]
    pub threads: String,
    /// Outstanding I/O per thread, or a comma list.
    #[arg(long, short = 'o', value_name = "N[,N…]", default_value = "1")]
    pub outstanding: String,
    /// Measured time (30, 30s, 2m).
    #[arg(long, short = 'd', value_name = "TIME", default_value = "10")]
    pub duration: String,
    /// Warm-up before measuring (not counted).
    #[arg(long, value_name = "TIME", default_value = "1")]
    pub warmup: String,
    /// Cool-down after measuring (not counted).
    #[arg(long, value_name = "TIME", default_value = "0")]
    pub cooldown: String,
    /// O_DIRECT (the default).
    #[arg(long, overrides_with = "buffered")]
    pub direct: bool,
    /// Go through the page cache instead of O_DIRECT.
    #[arg(long, overrides_with = "direct")]
    pub buffered: bool,
    /// O_DSYNC: each write reaches stable storage before it completes.
    #[arg(long = "write-through")]
    pub write_through: bool,
    /// Write-buffer content: random (incompressible, stamped) or zeros.
    #[arg(long, value_name = "random|zeros", value_parser = offer_str(&["random", "zeros"]), default_value = "random")]
    pub data: String,
    /// Passes per combination; the spread between passes is reported.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: u32,
    /// Check the stamp (offset, seed, checksum) of every block read.
    #[arg(long)]
    pub verify: bool,
    /// Cap on total IOPS over all threads.
    #[arg(long = "rate-iops", value_name = "N")]
    pub rate_iops: Option<f64>,
    /// I/O engine: uring (falls back to psync when refused), psync, or libaio (kernel AIO,
    /// io_submit/io_getevents). Unnamed, uring, or psync when a short probe of 8 KiB reads
    /// at queue depth 1 finds io_uring adding latency on the device. [default: uring]
    #[arg(long, value_name = "uring|psync|libaio", value_parser = offer_str(&RingKind::NAMES))]
    pub engine: Option<String>,
    /// io_uring: operations sent to the kernel per system call while refilling the queue
    /// (1 keeps the device busiest; larger batches spend less CPU per I/O).
    #[arg(long = "submit-batch", value_name = "N", default_value_t = 1)]
    pub submit_batch: u32,
    /// Measured I/O starts at this file offset (K/M/G suffix; at least 1M, the header area).
    #[arg(long = "offset", value_name = "SIZE", default_value = "1M")]
    pub offset: String,
    /// Measured I/O stays below this file offset (K/M/G suffix; default: the end).
    #[arg(long = "max-offset", value_name = "SIZE")]
    pub max_offset: Option<String>,
    /// Overwrite a file that sqliosim bench did not create.
    #[arg(long)]
    pub force: bool,
    /// Seed of offsets and read/write choices.
    #[arg(long, value_name = "N", default_value_t = 0x5eed)]
    pub seed: u64,
    /// Write every result as JSON here (rewritten after each combination).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per combination here.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write a self-contained HTML page with IOPS and latency against queue depth.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also print each run's SQLIO-style block (for existing parsers).
    #[arg(long = "sqlio-output")]
    pub sqlio_output: bool,
}
