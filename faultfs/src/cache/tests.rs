//! Unit tests of the cache's pure state: extents, lied ranges, write-back bookkeeping, power
//! cuts and the command parser.

use super::*;

fn file() -> Arc<File> {
    Arc::new(tempfile::tempfile().expect("temp file"))
}

fn read(m: &ExtentMap, off: u64, backing: &[u8], want: u64) -> Vec<u8> {
    let mut buf = backing.to_vec();
    m.overlay(off, &mut buf, want);
    buf
}

#[test]
fn newer_writes_replace_the_overlapped_part_of_older_ones() {
    let mut m = ExtentMap::default();
    m.insert(0, vec![1; 16], 1);
    m.insert(4, vec![2; 4], 2);
    m.insert(14, vec![3; 4], 3);
    assert_eq!(m.bytes(), 18, "no byte counted twice");
    assert_eq!(m.len(), 4, "[0,4) [4,8) [8,14) [14,18)");
    let got = read(&m, 0, &[0; 20], 20);
    let mut want = vec![1u8; 18];
    want[4..8].fill(2);
    want[14..18].fill(3);
    want.extend([0, 0]);
    assert_eq!(got, want);
}

#[test]
fn overlay_extends_a_short_backing_read_only_as_far_as_cached_bytes() {
    let mut m = ExtentMap::default();
    m.insert(100, vec![7; 10], 1);
    // Backing file ends at 96: the read of [90, 130) gets 6 backing bytes.
    let got = read(&m, 90, &[5; 6], 40);
    assert_eq!(
        got.len(),
        20,
        "zeros up to the cached write, then it, then EOF"
    );
    assert_eq!(&got[..6], &[5; 6]);
    assert_eq!(&got[6..10], &[0; 4]);
    assert_eq!(&got[10..], &[7; 10]);
    assert_eq!(m.end(), 110);
    assert_eq!(read(&m, 200, &[], 10), Vec::<u8>::new());
}

#[test]
fn written_back_pieces_leave_but_a_newer_write_over_them_stays() {
    let mut m = ExtentMap::default();
    m.insert(0, vec![1; 8], 1);
    let snap = m.snapshot(0, u64::MAX);
    m.insert(2, vec![2; 2], 2);
    for (off, data, seq) in &snap {
        m.remove_seq(*off, off + data.len() as u64, *seq);
    }
    assert_eq!(m.len(), 1);
    assert_eq!(m.bytes(), 2);
    assert_eq!(read(&m, 0, &[1; 8], 8), [1, 1, 2, 2, 1, 1, 1, 1]);
}

#[test]
fn remove_range_keeps_the_parts_outside() {
    let mut m = ExtentMap::default();
    m.insert(0, (0..10).collect(), 1);
    m.remove_range(3, 6);
    assert_eq!(m.bytes(), 7);
    assert_eq!(
        read(&m, 0, &[0xAA; 10], 10),
        [0, 1, 2, 0xAA, 0xAA, 0xAA, 6, 7, 8, 9]
    );
}

#[test]
fn range_set_merges_touching_ranges_and_splits_on_removal() {
    let mut r = RangeSet::default();
    r.insert(10, 20);
    r.insert(30, 40);
    r.insert(20, 30);
    assert_eq!(r.ranges().collect::<Vec<_>>(), [(10, 30)]);
    r.remove(15, 25);
    assert_eq!(r.ranges().collect::<Vec<_>>(), [(10, 5), (25, 15)]);
    r.remove(0, 100);
    assert!(r.is_empty());
}

#[test]
fn a_lie_marks_what_is_cached_and_a_later_write_back_heals_it() {
    let f = file();
    let mut c = Cache::new(true, 64);
    c.store(5, &f, 8192, &[1; 8192]);
    c.store(5, &f, 0, &[2; 8192]);
    assert_eq!(c.lie_about(5, 0, u64::MAX), 2);
    assert_eq!(
        c.lie_about(5, 0, u64::MAX),
        0,
        "each cached write counted once"
    );
    assert_eq!(c.lied_lines(|_| "a".into()), "a 0 16384 cached\n");
    let b = c.batch(5, 8192, 16384).expect("dirty");
    assert_eq!(b.pieces.len(), 1);
    c.written_back(&b, false);
    assert_eq!(c.lied_lines(|_| "a".into()), "a 0 8192 cached\n");
    assert_eq!(c.bytes(), 8192);
}

#[test]
fn an_o_dsync_lie_covers_only_its_own_range() {
    let f = file();
    let mut c = Cache::new(true, 64);
    c.store(1, &f, 0, &[1; 8192]);
    c.store(1, &f, 8192, &[1; 8192]);
    assert_eq!(c.lie_about(1, 8192, 16384), 1);
    assert_eq!(c.lied_lines(|_| "x".into()), "x 8192 8192 cached\n");
}

#[test]
fn power_cut_drops_everything_and_keeps_the_lied_ranges_as_lost() {
    let f = file();
    let mut c = Cache::new(true, 64);
    c.store(1, &f, 0, &[1; 4096]);
    c.store(2, &f, 8192, &[2; 8192]);
    c.lie.replace(LieScope::Files(vec!["b".into()]));
    assert!(c.lies_about("b") && !c.lies_about("a"));
    c.lie_about(2, 0, u64::MAX);
    let epoch = c.epoch();
    let cut = c.power_cut(false, |ino| if ino == 1 { "a" } else { "b" }.into());
    assert_eq!((cut.writes, cut.bytes, cut.lied), (2, 12288, 1));
    assert!(cut.torn.is_none());
    assert!(c.epoch() > epoch, "readers retry");
    assert_eq!(c.bytes(), 0);
    assert!(c.is_clean(1) && c.is_clean(2));
    assert_eq!(c.lied_lines(|_| "?".into()), "b 8192 8192 lost\n");
    assert!(c
        .status()
        .contains("power_cuts=1 dropped_writes=2 dropped_bytes=12288"));
}

#[test]
fn torn_power_cut_keeps_whole_sectors_of_the_newest_write() {
    let f = file();
    let mut c = Cache::new(true, 64);
    c.store(1, &f, 0, &[1; 8192]);
    c.store(1, &f, 16384, &[2; 8192]);
    c.store(1, &f, 40960, &[3; 512]);
    let cut = c.power_cut(true, |_| "a".into());
    let t = cut.torn.expect("a write longer than a sector");
    assert_eq!((t.ino, t.off, t.kept.len(), t.len), (1, 16384, 4096, 8192));
    assert!(t.kept.iter().all(|&b| b == 2));
}

#[test]
fn the_oldest_writes_are_chosen_for_eviction_across_files() {
    let f = file();
    let mut c = Cache::new(true, 1);
    c.store(1, &f, 0, &vec![1; 600 << 10]);
    c.store(2, &f, 0, &vec![2; 300 << 10]);
    c.store(1, &f, 1 << 20, &vec![3; 300 << 10]);
    assert!(c.over_budget());
    let batches = c.oldest(100);
    assert_eq!(batches.len(), 1);
    assert_eq!((batches[0].ino, batches[0].pieces[0].0), (1, 0));
    for b in &batches {
        c.written_back(b, true);
    }
    assert!(!c.over_budget());
    assert!(c.status().contains(&format!("evicted={}", 600 << 10)));
}

#[test]
fn cache_commands_parse() {
    use command::parse as p;
    assert_eq!(p("cache", "on"), Some(Ok(CacheCommand::Cache(true))));
    assert_eq!(p("cache", " off "), Some(Ok(CacheCommand::Cache(false))));
    assert_eq!(
        p("lie", "on"),
        Some(Ok(CacheCommand::Lie(Some(LieScope::All))))
    );
    let files = LieScope::Files(vec!["a.mdx".into(), "a.ldx".into()]);
    assert_eq!(
        p("lie", "on file=a.mdx,a.ldx"),
        Some(Ok(CacheCommand::Lie(Some(files))))
    );
    assert_eq!(p("lie", "off"), Some(Ok(CacheCommand::Lie(None))));
    assert_eq!(p("lied", ""), Some(Ok(CacheCommand::Lied)));
    assert_eq!(
        p("power-cut", "torn"),
        Some(Ok(CacheCommand::PowerCut { torn: true }))
    );
    assert!(matches!(p("lie", "maybe"), Some(Err(_))));
    assert!(matches!(p("lie", "on file="), Some(Err(_))));
    assert!(matches!(p("power-cut", "now"), Some(Err(_))));
    assert_eq!(p("inject", "lost"), None);
}
