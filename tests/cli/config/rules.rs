//! One test per configuration rule, each asserting the exact error or warning text.

use super::*;

#[test]
fn ratios_are_percent_times_100() {
    let (s, _) = ok(&with_files("[CONFIG]\nCacheHitRatio=10000\n"));
    assert_eq!(s.config.general.cache_hit_ratio.fraction(), 1.0);
    assert_eq!(
        err(&with_files("[CONFIG]\nCacheHitRatio=10001\n")),
        "t.ini:12: [CONFIG] CacheHitRatio=10001: expected a whole number from 0 to 10000 (percent × 100: 1000 = 10 %)"
    );
}

#[test]
fn booleans_accept_any_case_and_nothing_else() {
    let (s, _) = ok(&with_files(
        "[CONFIG]\nStopOnError=fAlSe\nStampFiles=TRUE\n",
    ));
    assert!(!s.config.general.stop_on_error && s.config.general.stamp_files);
    assert_eq!(
        err(&with_files("[CONFIG]\nStopOnError=yes\n")),
        "t.ini:12: [CONFIG] StopOnError=yes: expected TRUE or FALSE (any letter case)"
    );
}

#[test]
fn both_scatter_gather_spellings_work() {
    let (s, _) = ok(&with_files("[CONFIG]\nScatterGather=FALSE\n"));
    assert!(!s.config.general.use_scatter_gather);
    let (s, _) = ok(&with_files(
        "[CONFIG]\nScatterGather=FALSE\nUseScatterGather=TRUE\n",
    ));
    assert!(s.config.general.use_scatter_gather, "the later line wins");
}

#[test]
fn scatter_gather_forces_no_buffering() {
    let (s, w) = ok(&with_files("[CONFIG]\nNoBuffering=FALSE\n"));
    assert!(s.config.general.no_buffering);
    assert!(w.contains(&"t.ini:12: NoBuffering=FALSE is overridden: UseScatterGather=TRUE forces NoBuffering=TRUE \
         (as in SQLIOSim); set UseScatterGather=FALSE to test buffered I/O"
        .to_string()));
}

#[test]
fn semicolon_lines_are_comments() {
    let (s, w) = ok(&with_files(
        "[CONFIG]\n;CacheHitRatio=abc\n  ; TestCycles=x\n",
    ));
    assert_eq!(s.config.general.cache_hit_ratio.raw(), 1000);
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn user_counts_follow_the_rule() {
    let (s, _) = ok(&with_files(
        "[AuditUser]\nUserCount=-1\n[ReadAheadUser]\nUserCount=0\n",
    ));
    assert_eq!(s.config.random.user_count, 4, "default -1 = min(2*2, 8)");
    assert_eq!(s.config.audit.user_count, 4);
    assert_eq!(s.config.read_ahead.user_count, 0);
    let (s, _) = ok(&with_files("[CONFIG]\nCPUCount=6\n"));
    assert_eq!(s.config.bulk_update.user_count, 8, "min(6*2, 8)");
    assert_eq!(
        err(&with_files("[RandomUser]\nUserCount=1947\n")),
        "t.ini:12: [RandomUser] UserCount=1947: expected -1 (automatic: min(CPUCount*2, 8) = 4), 0 (none) \
         or a count up to CPUCount*1023-100 = 1946"
    );
    assert_eq!(
        err(&with_files("[RandomUser]\nUserCount=1000\n[AuditUser]\nUserCount=1000\n")),
        "t.ini: the UserCount values add up to 2006 users, more than CPUCount*1023-100 = 1946 (CPUCount=2); \
         lower some UserCount"
    );
}

#[test]
fn min_must_not_exceed_max() {
    assert_eq!(
        err(&with_files(
            "[RandomUser]\nMinIOChainLength=200\nMaxIOChainLength=100\n"
        )),
        "t.ini:13: [RandomUser] MinIOChainLength=200 is greater than MaxIOChainLength=100: \
         the minimum must not exceed the maximum"
    );
    assert_eq!(
        err(&with_files("[ShrinkUser]\nMinExtends=30\n")),
        "t.ini:12: [ShrinkUser] MinExtends=30 is greater than MaxExtends=20: the minimum must not exceed the maximum"
    );
    assert_eq!(
        err("[File1]\nFileName=a\nInitialSize=10\nMaxSize=5\n"),
        "t.ini:4: [File1] InitialSize=10 is greater than MaxSize=5: the minimum must not exceed the maximum"
    );
}

#[test]
fn page_counts_must_fit_the_smallest_data_file() {
    let text = with_files("[BulkUpdateUser]\nBuffersBUMax=9000\n");
    let dir = Scratch::new(&text);
    let msg = dir.resolve(RunArgs::default()).expect_err("too many pages");
    let file = dir.path().join("d.mdx");
    assert_eq!(
        msg,
        format!(
            "t.ini:12: [BulkUpdateUser] BuffersBUMax=9000: expected at most 8192 pages: the smallest data file, \
             {}, has 8192 pages (64 MB) at its initial size",
            file.display()
        )
    );
    assert_eq!(
        err(&with_files("[CONFIG]\nMaxMemoryMB=2\n[ReadAheadUser]\nBuffersRAMax=300\n")),
        "t.ini:14: [ReadAheadUser] BuffersRAMax=300: expected at most 256 pages: MaxMemoryMB=2 holds 256 pages of 8 KB"
    );
}

#[test]
fn increment_is_lowered_to_fit_memory() {
    let text = "[CONFIG]\nMaxMemoryMB=100\n[File1]\nFileName=d.mdx\nInitialSize=64\nMaxSize=128\nIncrement=10\n\
                Shrinkable=TRUE\n[File2]\nFileName=l.ldx\nInitialSize=8\nLogFile=TRUE\n";
    let dir = Scratch::new(text);
    let (s, w) = dir.resolve(RunArgs::default()).expect("valid");
    assert_eq!(s.config.files[0].increment_mb, 4, "(100/1 - 1) / 20");
    assert!(s.config.files[0].shrinkable);
    let path = dir.path().join("d.mdx");
    assert_eq!(
        w,
        [format!(
            "t.ini:4: [File1] {}: Increment=10 lowered to 4 so that Increment × MaxExtends (20) stays below \
             MaxMemoryMB / data files (100 / 1 = 100)",
            path.display()
        )]
    );
}

#[test]
fn increment_lowered_to_zero_makes_the_file_non_shrinkable() {
    let (s, w) = ok(&with_files("[CONFIG]\nMaxMemoryMB=20\n"));
    assert_eq!(
        (s.config.files[0].increment_mb, s.config.files[0].shrinkable),
        (0, false)
    );
    assert!(
        w[0].ends_with(
            "Increment=1 lowered to 0 so that Increment × MaxExtends (20) stays below MaxMemoryMB \
         / data files (20 / 1 = 20); the file is not shrinkable"
        ),
        "{w:?}"
    );
}

#[test]
fn increment_of_a_non_shrinkable_file_is_lowered_silently() {
    let text = "[CONFIG]\nMaxMemoryMB=20\n[File1]\nFileName=d.mdx\nInitialSize=64\nIncrement=10\n\
                [File2]\nFileName=l.ldx\nInitialSize=8\nLogFile=TRUE\n";
    let (s, w) = ok(text);
    assert_eq!(s.config.files[0].increment_mb, 0);
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn shrinkable_and_increment_are_advice() {
    let text = "[File1]\nFileName=d.mdx\nInitialSize=10\nMaxSize=20\nShrinkable=TRUE\n\
                [File2]\nFileName=l.ldx\nInitialSize=10\nMaxSize=20\nIncrement=5\nLogFile=TRUE\n";
    let (s, w) = ok(text);
    assert!(
        s.config.files[0].shrinkable,
        "advice does not change the setting"
    );
    assert_eq!(
        w,
        [
            "t.ini:5: [File1] Shrinkable=TRUE with Increment=0: the file will neither grow nor shrink",
            "t.ini:10: [File2] Increment=5 with Shrinkable=FALSE: the file keeps its size; set Shrinkable=TRUE \
             to let it grow towards MaxSize",
        ]
    );
}

#[test]
fn needs_a_data_file_and_a_log_file() {
    assert_eq!(
        err("[File1]\nFileName=l.ldx\nInitialSize=10\nLogFile=TRUE\n"),
        "t.ini: no data file: add a [FileN] section with FileName=, InitialSize= and LogFile=FALSE, \
         or pass -dir DIR to create sqliosim.mdx and sqliosim.ldx in DIR"
    );
    assert_eq!(
        err("[File1]\nFileName=d.mdx\nInitialSize=10\n"),
        "t.ini: no log file: add a [FileN] section with FileName=, InitialSize= and LogFile=TRUE, \
         or pass -dir DIR to create sqliosim.mdx and sqliosim.ldx in DIR"
    );
    assert_eq!(
        err("[File1]\nInitialSize=10\n"),
        "t.ini:1: [File1] has no FileName: every [FileN] section needs FileName=PATH"
    );
    assert_eq!(
        err("[File1]\nFileName=a\n"),
        "t.ini:1: [File1] has no InitialSize: every [FileN] section needs InitialSize=MB"
    );
}

#[test]
fn ntfs_streams_become_sibling_files() {
    let (s, w) = ok(&with_files(
        "[File3]\nFileName=d.mdx:replica\nInitialSize=64\n",
    ));
    assert_eq!(
        s.config.files[2].path.file_name().and_then(|n| n.to_str()),
        Some("d.mdx.replica")
    );
    assert!(w.contains(&"t.ini:12: [File3] FileName=d.mdx:replica names an NTFS stream, which Linux does not have; \
         it becomes the separate file d.mdx.replica beside d.mdx"
        .to_string()), "{w:?}");
}

#[test]
fn bad_numbers_stop_instead_of_becoming_zero() {
    assert_eq!(
        err(&with_files("[CONFIG]\nTestCycleDuration=5min\n")),
        "t.ini:12: [CONFIG] TestCycleDuration=5min: expected a whole number from 1 to 31536000"
    );
    assert_eq!(
        err(&with_files("[CONFIG]\nMaxOutstandingIO=140001\n")),
        "t.ini:12: [CONFIG] MaxOutstandingIO=140001: expected a whole number from 0 to 140000"
    );
    assert_eq!(
        err(&with_files("[CONFIG]\nCPUCount=65\n")),
        "t.ini:12: [CONFIG] CPUCount=65: expected a whole number from 1 to 64"
    );
    assert_eq!(
        err(&with_files("[CONFIG]\nAffinity=0x10\n")),
        "t.ini:12: [CONFIG] Affinity=0x10: expected a CPU mask (decimal or 0x hex) naming only CPUs 0..=1; \
         0 means all CPUs"
    );
    assert_eq!(
        err(&with_files("[CONFIG]\nMaxMemoryMB=5000\n")),
        "t.ini:12: [CONFIG] MaxMemoryMB=5000: expected a whole number from 1 to 4096"
    );
    assert_eq!(
        err("[File1]\nFileName=\n"),
        "t.ini:2: [File1] FileName=: expected a file path"
    );
}

#[test]
fn unknown_names_warn_with_the_closest_known_one() {
    let (_, w) = ok(&with_files(
        "[CONFIG]\nCacheHitRatoi=5\n[RandomUsers]\nUserCount=1\n",
    ));
    assert_eq!(
        w,
        [
            "t.ini:12: unknown key CacheHitRatoi in [CONFIG] is ignored; did you mean CacheHitRatio?",
            "t.ini:13: unknown section [RandomUsers] is ignored; did you mean [RandomUser]?",
        ]
    );
}

#[test]
fn windows_paths_need_dir() {
    let text = "[File1]\nFileName=f:\\sqliosim.mdx\nInitialSize=100\n[File2]\nFileName=f:\\sqliosim.ldx\nInitialSize=50\nLogFile=TRUE\n";
    assert_eq!(
        err(text),
        "t.ini:2: [File1] FileName=f:\\sqliosim.mdx is a Windows path; pass -dir DIR (or --dir DIR) to create \
         sqliosim.mdx in DIR, or write a Linux path"
    );
    let dir = Scratch::new(text);
    let (s, _) = dir
        .resolve(RunArgs {
            dir: vec!["x".into()],
            ..RunArgs::default()
        })
        .expect("with -dir");
    assert_eq!(s.config.files[0].path, dir.path().join("x/sqliosim.mdx"));
}

#[test]
fn shrink_user_has_no_user_count() {
    let (_, w) = ok(&with_files("[ShrinkUser]\nUserCount=3\n"));
    assert_eq!(
        w,
        ["t.ini:12: [ShrinkUser] has no UserCount and it is ignored: the ShrinkUser acts on every file \
          with Shrinkable=TRUE"]
    );
}

#[test]
fn io_generation_sets_the_request_caps_and_warns_once_per_key_beyond_them() {
    let (s, w) = ok(&with_files(""));
    let plan = sqliosim::sim::plan::from_settings::plan_from(&s);
    assert_eq!(
        (plan.caps.gather_pages, plan.caps.read_ahead_pages),
        (128, 64)
    );
    assert!(w.is_empty(), "{w:?}");
    let (s, w) = ok(&with_files(
        "[CONFIG]\nIoGeneration=2014\n[ReadAheadUser]\nBuffersRAMax=64\n[BulkUpdateUser]\nBuffersBUMin=16\nBuffersBUMax=48\n",
    ));
    let plan = sqliosim::sim::plan::from_settings::plan_from(&s);
    assert_eq!(
        (plan.caps.gather_pages, plan.caps.read_ahead_pages),
        (32, 64)
    );
    assert_eq!(
        w,
        ["t.ini:17: BuffersBUMax=48 is more than IoGeneration=2014 issues in one gather write (32 pages, 256 KB): each is split into requests of at most 32 pages; set IoGeneration or lower BuffersBUMax to silence this"]
    );
    let (_, w) = ok(&with_files("[ReadAheadUser]\nBuffersRAMax=65\n"));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].starts_with("t.ini:12: BuffersRAMax=65 is more than IoGeneration=2016 issues in one read-ahead (64 pages, 512 KB)"), "{w:?}");
    assert_eq!(
        err(&with_files("[CONFIG]\nIoGeneration=2019\n")),
        "t.ini:12: [CONFIG] IoGeneration=2019: expected 2014 or 2016"
    );
}

/// A sort run is an eager write: `IoGeneration`'s gather unless `RunPages` says otherwise, and
/// the default tempdb file grows to hold the runs a merge takes.
#[test]
fn sort_runs_follow_the_generations_gather() {
    let sort = |text: &str| ok(&with_files(text)).0.config.sort.clone();
    let s = sort("[SortUser]\nUserCount=1\n");
    assert_eq!((s.run_pages, s.temp_file_mb), (128, 16));
    let s = sort("[CONFIG]\nIoGeneration=2014\n[SortUser]\nUserCount=1\n");
    assert_eq!((s.run_pages, s.temp_file_mb), (32, 16));
    let s = sort("[SortUser]\nUserCount=1\nRunPages=8\n");
    assert_eq!(s.run_pages, 8);
    // 16 runs of 128 pages and a header page: 17 MB, not the 16 that cannot hold them.
    let s = sort("[SortUser]\nUserCount=1\nRunsPerMerge=16\n");
    assert_eq!((s.run_pages, s.temp_file_mb), (128, 17));
    assert!(
        err(&with_files(
            "[SortUser]\nUserCount=1\nRunsPerMerge=16\nTempFileSize=16\n"
        ))
        .contains("TempFileSize=16"),
        "a size given that cannot hold the runs is refused"
    );
}

#[test]
fn edition_enterprise_reads_ahead_up_to_1024_pages_and_nothing_else_changes() {
    let (s, w) = ok(&with_files(
        "[CONFIG]\nEdition=Enterprise\n[ReadAheadUser]\nBuffersRAMin=512\nBuffersRAMax=1024\n",
    ));
    assert!(w.is_empty(), "{w:?}");
    let plan = sqliosim::sim::plan::from_settings::plan_from(&s);
    assert_eq!(
        (plan.caps.gather_pages, plan.caps.read_ahead_pages),
        (128, 1024)
    );
    assert_eq!(plan.read_ahead.max_pages, 1024);
    // Standard (the default) splits the same key, and says so.
    let (s, w) = ok(&with_files(
        "[CONFIG]\nEdition=standard\n[ReadAheadUser]\nBuffersRAMax=1024\n",
    ));
    let plan = sqliosim::sim::plan::from_settings::plan_from(&s);
    assert_eq!(plan.caps.read_ahead_pages, 64);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(
        err(&with_files("[CONFIG]\nEdition=Datacenter\n")),
        "t.ini:12: [CONFIG] Edition=Datacenter: expected Standard or Enterprise"
    );
}

#[test]
fn durability_mode_defaults_to_forced_flush_and_the_command_line_overrides_it() {
    use sqliosim::config::DurabilityMode;
    let plan_of = |s: &sqliosim::config::RunSettings| {
        let p = sqliosim::sim::plan::from_settings::plan_from(s);
        (
            p.durability,
            p.open_dsync(),
            p.forced_flush(),
            p.acks_each_write(),
        )
    };
    let (s, w) = ok(&with_files(""));
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(
        plan_of(&s),
        (DurabilityMode::ForcedFlush, false, true, true)
    );
    let (s, _) = ok(&with_files("[CONFIG]\nDurabilityMode=fua\n"));
    assert_eq!(plan_of(&s), (DurabilityMode::Fua, true, false, true));
    let (s, _) = ok(&with_files("[CONFIG]\nDurabilityMode=None\n"));
    assert_eq!(plan_of(&s), (DurabilityMode::None, false, false, false));
    // WriteThrough=FALSE: no write is write-through, whatever the mode.
    let (s, _) = ok(&with_files(
        "[CONFIG]\nWriteThrough=FALSE\nDurabilityMode=FUA\n",
    ));
    assert_eq!(plan_of(&s), (DurabilityMode::Fua, false, false, false));
    let o = RunArgs {
        durability: Some(DurabilityMode::None),
        ..RunArgs::default()
    };
    let (s, _) = Scratch::new(&with_files("[CONFIG]\nDurabilityMode=FUA\n"))
        .resolve(o)
        .expect("valid");
    assert_eq!(s.config.general.durability_mode, DurabilityMode::None);
    assert_eq!(
        err(&with_files("[CONFIG]\nDurabilityMode=dsync\n")),
        "t.ini:12: [CONFIG] DurabilityMode=dsync: expected ForcedFlush, FUA or None"
    );
}
