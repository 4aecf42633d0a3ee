//! Requests in a ring, by index (the index is the operation's `user_data`): the table both the
//! service thread ([`super::serve`]) and a poster's own ring ([`super::own`]) keep, and the
//! drain that must succeed before their requests' memory is given back.

use std::io::Write as _;

use super::request::Request;
use crate::io::aio::Ring;

/// Requests in flight, at most the depth the table was made for.
pub(super) struct RingSlots {
    slots: Vec<Option<Request>>,
    free: Vec<usize>,
}

impl RingSlots {
    pub(super) fn new(depth: usize) -> RingSlots {
        RingSlots {
            slots: (0..depth).map(|_| None).collect(),
            free: (0..depth).rev().collect(),
        }
    }

    /// Requests in flight.
    pub(super) fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// The most requests the table holds.
    pub(super) fn depth(&self) -> usize {
        self.slots.len()
    }

    /// True when no request more fits.
    pub(super) fn is_full(&self) -> bool {
        self.free.is_empty()
    }

    pub(super) fn insert(&mut self, r: Request) -> usize {
        let i = self
            .free
            .pop()
            .expect("a free flight slot (checked against the depth)");
        self.slots[i] = Some(r);
        i
    }

    /// The request at `i`, if it is still in flight (a failure may have answered it).
    pub(super) fn get(&mut self, i: usize) -> Option<&mut Request> {
        self.slots.get_mut(i).and_then(Option::as_mut)
    }

    pub(super) fn get_mut(&mut self, i: usize) -> &mut Request {
        self.get(i).expect("a completion for a request in flight")
    }

    pub(super) fn remove(&mut self, i: usize) -> Request {
        self.free.push(i);
        self.slots[i]
            .take()
            .expect("a completion for a request in flight")
    }

    /// Takes every request out (to answer them), leaving the table empty.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = Request> + '_ {
        self.free = (0..self.slots.len()).rev().collect();
        self.slots.iter_mut().filter_map(Option::take)
    }
}

/// Waits until the kernel holds none of the requests' memory; true when it could. If even
/// that fails, the memory may still be in the kernel's hands: every posted request in
/// `slots` is leaked ([`Request::leak`]: its frames never reused, its poster answered with
/// the error and no frames) and the table left empty, so nothing of it is given back while
/// the kernel may write into it. A blocked caller's request names memory the caller only
/// borrows, which cannot be leaked on its behalf: with one of those in flight, stopping the
/// process is the only safe way out. `who` names the ring in the messages.
pub(super) fn drain_or_leak(ring: &mut Ring, slots: &mut RingSlots, who: &str) -> bool {
    let mut sink = Vec::new();
    let Err(e) = ring.drain(&mut sink) else {
        return true;
    };
    let why = format!("{who} cannot wait for its requests in flight ({e})");
    let requests: Vec<Request> = slots.drain().collect();
    if requests.iter().any(Request::borrows) {
        // Best effort: stderr may be a closed pipe, and the abort must happen regardless.
        let _ = writeln!(
            std::io::stderr().lock(),
            "sqliosim: {why}, with a caller's memory among them; aborting"
        );
        std::process::abort();
    }
    for r in requests {
        r.leak(super::request::stopped(&why));
    }
    false
}
