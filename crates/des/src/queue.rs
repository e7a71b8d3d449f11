//! The event queue of a discrete-event simulation: events ordered by (time, sequence
//! number), so that events scheduled for the same instant run in the order they were
//! scheduled.
//!
//! Cancelled events are not removed from the queue: a simulation whose events can be
//! superseded gives them the generation of the object they belong to and drops an event
//! whose generation is stale when it pops ("lazy invalidation"). Deletion would cost a
//! search per cancel; a stale pop costs what any pop does.
//!
//! The queue is generic over the event type through [`Packed`]: an event rides in the
//! priority queue's entry packed into one `u128`, beside its (time, sequence) key.

use crate::time::Time;
use crate::wheel::Wheel;

/// An event that packs into 16 bytes and back without loss, so that the queue's entries
/// stay two integers.
pub trait Packed: Sized {
    /// The packed form.
    fn pack(self) -> u128;
    /// The event `pack` gave `p` for.
    fn unpack(p: u128) -> Self;
}

/// A priority queue of events ordered by (time, scheduling order).
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: Wheel,
    seq: u64,
    _event: std::marker::PhantomData<E>,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: Wheel::default(),
            seq: 0,
            _event: std::marker::PhantomData,
        }
    }
}

impl<E: Packed> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: Time, event: E) {
        let seq = self.seq;
        self.seq += 1;
        // The (time, sequence) key packed into one integer, so that ordering is a single
        // comparison. The event itself rides in the heap's entry, packed to 16 bytes: a
        // side table indexed by slot kept entries smaller, but cost a dependent cache
        // miss on every pop.
        let key = (u128::from(time.0) << 64) | u128::from(seq);
        self.heap.push(key, event.pack());
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let (key, event) = self.heap.pop()?;
        Some((Time((key >> 64) as u64), E::unpack(event)))
    }

    /// Number of pending events (stale ones included).
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.len() == 0
    }

    /// Events scheduled so far (the next sequence number).
    pub fn scheduled(&self) -> u64 {
        self.seq
    }
}
