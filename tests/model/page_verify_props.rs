//! Properties of the verifier alone, over random pages and random damage.

use proptest::prelude::*;
use sqliosim::page::{
    verify, ActorKind, Expect, ExpectedState, PageStamp, SectorContent, Verdict, VerdictKind,
    PAGE_SIZE, SECTORS_PER_PAGE, SECTOR_SIZE,
};

fn stamp(run_id: u64, file_id: u32, page_id: u64, generation: u64, lsn: u64) -> Vec<u8> {
    PageStamp {
        run_id,
        file_id,
        page_id,
        generation,
        lsn,
        writer_kind: ActorKind::LazyWriter,
        writer_id: 1,
        write_time_us: lsn.wrapping_mul(3),
    }
    .image()
}

prop_compose! {
    fn ids()(run in any::<u64>(), file in 0..64u32, page in 0..1u64 << 40, generation in 2..1u64 << 40, lsn in any::<u64>())
        -> (u64, u32, u64, u64, u64) {
        (run, file, page, generation, lsn)
    }
}

proptest! {
    #[test]
    fn a_stamped_page_verifies(id in ids()) {
        let (run, file, page, g, lsn) = id;
        let exp = Expect::known(run, file, page, ExpectedState::Written { generation: g });
        prop_assert_eq!(verify(&stamp(run, file, page, g, lsn), &exp), Verdict::Ok { generation: g });
    }

    /// Any single flipped bit, header included, is a single-bit checksum mismatch at its byte.
    #[test]
    fn any_single_bit_flip_is_found_exactly(id in ids(), bit in 0..PAGE_SIZE * 8) {
        let (run, file, page, g, lsn) = id;
        let mut p = stamp(run, file, page, g, lsn);
        p[bit / 8] ^= 1 << (bit % 8);
        let exp = Expect::known(run, file, page, ExpectedState::Written { generation: g });
        match verify(&p, &exp) {
            Verdict::ChecksumMismatch { diff, .. } => {
                prop_assert!(diff.single_bit(), "{:?}", diff);
                prop_assert_eq!(diff.first_bad_byte, Some((bit / 8) as u32));
                prop_assert_eq!(diff.sectors, 1 << (bit / 8 / SECTOR_SIZE));
            }
            other => prop_assert!(false, "bit {}: {:?}", bit, other),
        }
    }

    /// The same for the 64 header bytes alone, hit more often (offline too).
    #[test]
    fn any_single_bit_flip_in_the_header_is_found_exactly(id in ids(), bit in 0..64 * 8usize) {
        let (run, file, page, g, lsn) = id;
        let mut p = stamp(run, file, page, g, lsn);
        p[bit / 8] ^= 1 << (bit % 8);
        let live = Expect::known(run, file, page, ExpectedState::Written { generation: g });
        for exp in [live, Expect::offline(Some(run), file, page)] {
            match verify(&p, &exp) {
                Verdict::ChecksumMismatch { diff, .. } => {
                    prop_assert!(diff.single_bit(), "bit {}: {:?}", bit, diff);
                    prop_assert_eq!(diff.first_bad_byte, Some((bit / 8) as u32));
                }
                other => prop_assert!(false, "bit {}: {:?}", bit, other),
            }
        }
    }

    /// A write torn after any number of sectors shows the two generations in order.
    #[test]
    fn any_prefix_tear_is_a_torn_write(id in ids(), k in 1..SECTORS_PER_PAGE, behind in 1..5u64) {
        let (run, file, page, g, lsn) = id;
        let new = stamp(run, file, page, g, lsn);
        let old = stamp(run, file, page, g.saturating_sub(behind).max(1), lsn / 2);
        let mut p = old.clone();
        p[..k * SECTOR_SIZE].copy_from_slice(&new[..k * SECTOR_SIZE]);
        let exp = Expect::known(run, file, page, ExpectedState::Written { generation: g });
        let want: Vec<SectorContent> = (0..SECTORS_PER_PAGE)
            .map(|s| SectorContent::Generation(if s < k { g } else { g.saturating_sub(behind).max(1) }))
            .collect();
        prop_assert_eq!(verify(&p, &exp), Verdict::TornWrite { sectors: want });
    }

    /// A write torn at any byte inside a sector (the new image before it, the previous one or
    /// zeros after) is a torn write naming that sector and byte, never bit rot. The byte named
    /// is the first from the boundary where the two images differ.
    #[test]
    fn any_tear_inside_a_sector_is_a_torn_write_at_its_byte(
        id in ids(), s in 0..SECTORS_PER_PAGE, j in 16..488usize, behind in 0..4u64, new_first in any::<bool>()
    ) {
        let (run, file, page, g, lsn) = id;
        // behind 0: the old image is zeros (a torn first write).
        let old_gen = if behind == 0 { 0 } else { g - behind };
        prop_assume!(behind <= 1 || s < SECTORS_PER_PAGE - 1 || !new_first);
        prop_assume!(s > 0 || j >= 80);
        let new = stamp(run, file, page, g, lsn);
        let old = if old_gen == 0 { vec![0u8; PAGE_SIZE] } else { stamp(run, file, page, old_gen, lsn / 2) };
        let (head, tail, head_gen, tail_gen) = if new_first {
            (&new, &old, g, old_gen)
        } else {
            (&old, &new, old_gen, g)
        };
        prop_assume!(new_first || s > 0 || old_gen > 0);
        let cut = s * SECTOR_SIZE + j;
        let mut p = tail.clone();
        p[..cut].copy_from_slice(&head[..cut]);
        let state = if old_gen == 0 {
            ExpectedState::InFlight { old: 0, new: g }
        } else {
            ExpectedState::Written { generation: g }
        };
        let exp = Expect::known(run, file, page, state);
        let at = (j..SECTOR_SIZE)
            .find(|&i| head[s * SECTOR_SIZE + i] != tail[s * SECTOR_SIZE + i])
            .expect("images differ");
        let cell = |gen: u64| if gen == 0 { SectorContent::Zero } else { SectorContent::Generation(gen) };
        let want: Vec<SectorContent> = (0..SECTORS_PER_PAGE)
            .map(|i| match i.cmp(&s) {
                std::cmp::Ordering::Less => cell(head_gen),
                std::cmp::Ordering::Equal => SectorContent::Split { first: head_gen, rest: tail_gen, at: at as u16 },
                std::cmp::Ordering::Greater => cell(tail_gen),
            })
            .collect();
        prop_assert_eq!(verify(&p, &exp), Verdict::TornWrite { sectors: want });
    }

    /// Zeroing any proper, non-empty set of sectors is reported with exactly that set.
    #[test]
    fn any_zeroed_sector_set_is_named(id in ids(), mask in 1..u16::MAX) {
        let (run, file, page, g, lsn) = id;
        let mut p = stamp(run, file, page, g, lsn);
        for s in (0..SECTORS_PER_PAGE).filter(|s| mask & (1 << s) != 0) {
            p[s * SECTOR_SIZE..(s + 1) * SECTOR_SIZE].fill(0);
        }
        let exp = Expect::known(run, file, page, ExpectedState::Written { generation: g });
        prop_assert_eq!(verify(&p, &exp), Verdict::ZeroedSectors { generation: g, sectors: mask });
    }

    /// Older generations are stale by exactly the distance; newer ones are from the future.
    #[test]
    fn generations_are_ordered(id in ids(), found in 1..1u64 << 41) {
        let (run, file, page, g, lsn) = id;
        let exp = Expect::known(run, file, page, ExpectedState::Written { generation: g });
        let kind = verify(&stamp(run, file, page, found, lsn), &exp).kind();
        let want = match found.cmp(&g) {
            std::cmp::Ordering::Less => VerdictKind::Stale,
            std::cmp::Ordering::Equal => VerdictKind::Ok,
            std::cmp::Ordering::Greater => VerdictKind::FutureGeneration,
        };
        prop_assert_eq!(kind, want);
    }

    /// Random bytes are never mistaken for a page of ours.
    #[test]
    fn noise_is_never_ok(bytes in prop::collection::vec(1..=255u8, PAGE_SIZE), id in ids()) {
        let (run, file, page, g, _) = id;
        let exp = Expect::known(run, file, page, ExpectedState::Written { generation: g });
        prop_assert_eq!(verify(&bytes, &exp).kind(), VerdictKind::Garbage);
    }
}
