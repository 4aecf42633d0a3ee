//! The typed event stream: everything the driver and the workers tell the outputs.
//!
//! A run's outputs — the console, the progress line, the XML log with its dumps, the JSON
//! summary, and whatever comes next (a status line, a metrics file) — are each an
//! [`EventSink`], fanned out by [`Fanout`] (the model is raft-engine's `EventListener` and
//! hyperfine's exporters). An output learns everything from the events: findings and log
//! messages as they happen, a [`Phase`](Event::Phase) as each begins, a [`Tick`] about once a
//! second, the running statistics ([`Stats`](Event::Stats)) every couple of seconds, the
//! [`Facts`] of the machine and the I/O before the run, how the run stopped ([`Stopped`]) and
//! the final [`Summary`].
//!
//! This module sits above `stats` (the tick carries live snapshots, the summary is
//! `stats::Summary`) and below `report` (whose sinks implement [`EventSink`]). The payloads the
//! report used to own and that an event carries (system information, the I/O service, the
//! stop) are defined in [`facts`] and re-exported by `report` under their old paths.

pub mod facts;
pub mod tick;

use std::sync::Arc;

use crate::findings::{Finding, Message};
use crate::stats::Summary;

pub use facts::{Facts, FileUnit, Stopped};
pub use tick::{human_duration, Phase, PhaseBegan, Tick};

/// Everything that flows from the driver and the workers to the outputs. Cheap to emit: the
/// large payloads are boxed, so an event is two words.
#[derive(Debug, Clone)]
pub enum Event {
    /// A log message.
    Message(Message),
    /// An integrity finding.
    Finding(Box<Finding>),
    /// A phase of a test cycle began.
    Phase(PhaseBegan),
    /// The live snapshot of the phase running, about once a second (and once as it ends).
    Tick(Box<Tick>),
    /// What the run found out about the machine and its I/O before it started.
    Facts(Box<Facts>),
    /// The run's statistics so far (the same figures as the final summary, as of the workers'
    /// last flush, about a second old), every couple of seconds and as each phase ends: the
    /// JSON heartbeat and the metrics file read them. Shared, so the fan-out copies a pointer.
    Stats(Arc<Summary>),
    /// How the run stopped.
    Stop(Box<Stopped>),
    /// The final statistics of the run (or of the run so far, for a run cut short).
    Summary(Box<Summary>),
}

/// Where events go. Implementations must be cheap to call from any thread; an event a sink
/// has no use for is ignored.
pub trait EventSink: Send + Sync {
    /// Delivers one event.
    fn emit(&self, event: Event);

    /// The first failure to write this sink's output, if any, said once at the end of the
    /// run: a sink that cannot write never stops the run (most sinks keep none).
    fn take_error(&self) -> Option<String> {
        None
    }
}

/// A sink that keeps every event in memory (tests, self-test).
#[derive(Debug, Default)]
pub struct MemorySink {
    events: crate::sync::Mutex<Vec<Event>>,
}

impl MemorySink {
    /// All findings received so far.
    pub fn findings(&self) -> Vec<Finding> {
        self.select(|e| match e {
            Event::Finding(f) => Some((**f).clone()),
            _ => None,
        })
    }

    /// All messages received so far.
    pub fn messages(&self) -> Vec<Message> {
        self.select(|e| match e {
            Event::Message(m) => Some(m.clone()),
            _ => None,
        })
    }

    /// All ticks received so far.
    pub fn ticks(&self) -> Vec<Tick> {
        self.select(|e| match e {
            Event::Tick(t) => Some((**t).clone()),
            _ => None,
        })
    }

    /// Every event received so far, in order.
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().clone()
    }

    fn select<T>(&self, pick: impl Fn(&Event) -> Option<T>) -> Vec<T> {
        self.events.lock().iter().filter_map(pick).collect()
    }
}

impl EventSink for MemorySink {
    fn emit(&self, event: Event) {
        self.events.lock().push(event);
    }
}

/// Sends every event to several sinks, in order.
pub struct Fanout {
    sinks: Vec<Arc<dyn EventSink>>,
}

impl Fanout {
    /// A fan-out over `sinks`.
    pub fn new(sinks: Vec<Arc<dyn EventSink>>) -> Fanout {
        Fanout { sinks }
    }
}

impl EventSink for Fanout {
    fn emit(&self, event: Event) {
        if let Some((last, rest)) = self.sinks.split_last() {
            for s in rest {
                s.emit(event.clone());
            }
            last.emit(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_stays_small_enough_for_the_hot_path() {
        // The workers emit findings and messages from their I/O loops: every payload larger
        // than a message is boxed, so moving an event stays a copy of a few words.
        assert!(std::mem::size_of::<Event>() <= std::mem::size_of::<Message>() + 8);
    }

    #[test]
    fn a_fanout_hands_every_event_to_every_sink_in_order() {
        let a = Arc::new(MemorySink::default());
        let b = Arc::new(MemorySink::default());
        let fan = Fanout::new(vec![a.clone(), b.clone()]);
        let began = PhaseBegan {
            phase: Phase::InitialCheckpoint,
            cycle: 2,
        };
        fan.emit(Event::Phase(began));
        let m = Message::new(crate::findings::Severity::Info, "System", "Test", "hello");
        fan.emit(Event::Message(m.clone()));
        for sink in [&a, &b] {
            assert!(matches!(sink.events()[0], Event::Phase(p) if p == began));
            assert_eq!(sink.messages(), vec![m.clone()]);
        }
    }
}
