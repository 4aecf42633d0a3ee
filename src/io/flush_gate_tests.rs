//! The flush gate's rule: a flush covers only the writes completed before it started, a failed
//! flush covers nobody, and waiters share one flush.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crossbeam::channel::{unbounded, Receiver, Sender};

use super::{FlushGate, Ticket};
use crate::io::Storage;

/// A file whose `fdatasync` says when it starts and then waits to be told how it ends.
#[derive(Debug)]
struct Fake {
    entered: Sender<()>,
    release: Receiver<bool>,
}

impl Storage for Fake {
    fn read_at(&self, _: &mut [u8], _: u64) -> io::Result<usize> {
        Ok(0)
    }
    fn write_at(&self, _: &[u8], _: u64) -> io::Result<()> {
        Ok(())
    }
    fn read_vectored_at(&self, _: &mut [&mut [u8]], _: u64) -> io::Result<usize> {
        Ok(0)
    }
    fn write_vectored_at(&self, _: &[&[u8]], _: u64) -> io::Result<()> {
        Ok(())
    }
    fn sync_data(&self) -> io::Result<()> {
        self.entered.send(()).expect("the test listens");
        match self.release.recv() {
            Ok(true) => Ok(()),
            _ => Err(io::Error::other("the device refused the flush")),
        }
    }
    fn allocate(&self, _: u64) -> io::Result<()> {
        Ok(())
    }
    fn set_len(&self, _: u64) -> io::Result<()> {
        Ok(())
    }
    fn len(&self) -> io::Result<u64> {
        Ok(0)
    }
    fn path(&self) -> &Path {
        Path::new("fake")
    }
}

/// A gate over a fake file, the receiver of its flushes' starts and the sender of their ends.
fn gate(per_write: bool) -> (Arc<FlushGate>, Receiver<()>, Sender<bool>) {
    let (entered, started) = unbounded();
    let (end, release) = unbounded();
    let fake = Arc::new(Fake { entered, release });
    (Arc::new(FlushGate::new(fake, per_write)), started, end)
}

fn started(rx: &Receiver<()>) {
    rx.recv_timeout(Duration::from_secs(30))
        .expect("a flush started");
}

fn cover_in_thread(g: &Arc<FlushGate>, t: Ticket) -> thread::JoinHandle<io::Result<()>> {
    let g = Arc::clone(g);
    thread::spawn(move || g.cover(t))
}

#[test]
fn a_flush_that_started_before_a_completion_does_not_cover_it() {
    let (g, flushes_started, end) = gate(false);
    let a = cover_in_thread(&g, Ticket::now());
    started(&flushes_started);
    // A write completes while the first flush runs: that flush may not carry it.
    let b = cover_in_thread(&g, Ticket::now());
    end.send(true).expect("release");
    assert!(a.join().expect("a").is_ok());
    // B is still waiting: it needs a flush of its own, started after its completion.
    started(&flushes_started);
    assert!(
        !b.is_finished(),
        "covered by a flush that began before it completed"
    );
    end.send(true).expect("release");
    assert!(b.join().expect("b").is_ok());
    assert_eq!(g.flushes(), 2);
}

#[test]
fn waiters_share_one_flush_started_after_they_completed() {
    let (g, flushes_started, end) = gate(false);
    let t = Ticket::now();
    let waiters: Vec<_> = (0..4).map(|_| cover_in_thread(&g, t)).collect();
    started(&flushes_started);
    // Let the others reach the gate and find the flush running.
    thread::sleep(Duration::from_millis(50));
    // As many releases as waiters, so that a gate that flushed for each would not hang here
    // but be caught by the count below.
    for _ in 0..4 {
        end.send(true).expect("release");
    }
    for w in waiters {
        assert!(w.join().expect("waiter").is_ok());
    }
    assert_eq!(g.flushes(), 1, "four completed writes, one flush");
    // Covered already: a later call with the same ticket flushes nothing.
    assert!(g.cover(t).is_ok());
    assert_eq!(g.flushes(), 1);
}

#[test]
fn a_failed_flush_acknowledges_nobody_it_was_to_cover() {
    let (g, flushes_started, end) = gate(false);
    let t = Ticket::now();
    let waiters: Vec<_> = (0..3).map(|_| cover_in_thread(&g, t)).collect();
    started(&flushes_started);
    thread::sleep(Duration::from_millis(50));
    end.send(false).expect("fail it");
    for w in waiters {
        assert!(
            w.join().expect("waiter").is_err(),
            "acknowledged on a failed flush"
        );
    }
    assert_eq!(g.flushes(), 1);
    // A later write, flushed by a flush that succeeds, is covered; one completed before the
    // failure is not, even once a later flush succeeded.
    let later = Ticket::now();
    end.send(true).expect("release");
    assert!(g.cover(later).is_ok());
    assert!(
        g.cover(t).is_err(),
        "a success after a failure covered an older write"
    );
    assert_eq!(g.flushes(), 2);
}

#[test]
fn per_write_mode_flushes_once_per_call() {
    let (g, _flushes_started, end) = gate(true);
    let t = Ticket::now();
    for _ in 0..3 {
        end.send(true).expect("release");
        assert!(g.cover(t).is_ok());
    }
    assert_eq!(g.flushes(), 3);
    assert!(g.per_write());
}
