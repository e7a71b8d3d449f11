//! The event queue: one closed [`Event`] enum, ordered by (time, sequence number) so that
//! events scheduled for the same instant run in the order they were scheduled.
//!
//! Cancelled events are not removed from the queue: events that can be superseded carry
//! the generation of the object they belong to (a CPU's run segment, its tick, a timer),
//! and the world drops an event whose generation is stale when it pops ("lazy
//! invalidation"). Deletion would cost a search per cancel; a stale pop costs what any pop
//! does.

use crate::event_pack::{pack, unpack};
use crate::time::Time;
use crate::wheel::Wheel;

mod kind;

pub use kind::{Event, Tid};

/// A priority queue of events ordered by (time, scheduling order).
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Wheel,
    seq: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `event` at `time`.
    pub fn push(&mut self, time: Time, event: Event) {
        let seq = self.seq;
        self.seq += 1;
        // The (time, sequence) key packed into one integer, so that ordering is a single
        // comparison. The event itself rides in the heap's entry, packed to 16 bytes
        // (`event_pack`): a side table indexed by slot kept entries smaller, but cost a
        // dependent cache miss on every pop.
        let key = (u128::from(time.0) << 64) | u128::from(seq);
        self.heap.push(key, pack(event));
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let (key, event) = self.heap.pop()?;
        Some((Time((key >> 64) as u64), unpack(event)))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_scheduling_order() {
        let mut q = EventQueue::new();
        q.push(Time(20), Event::Resched { cpu: 2 });
        q.push(Time(10), Event::Resched { cpu: 0 });
        q.push(Time(20), Event::Resched { cpu: 1 });
        q.push(Time(10), Event::End);
        let order: Vec<(u64, Event)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| (t.0, e))
            .collect();
        assert_eq!(
            order,
            vec![
                (10, Event::Resched { cpu: 0 }),
                (10, Event::End),
                (20, Event::Resched { cpu: 2 }),
                (20, Event::Resched { cpu: 1 }),
            ]
        );
        assert!(q.is_empty());
        assert_eq!(q.scheduled(), 4);
    }

    #[test]
    fn many_same_time_events_keep_fifo_order() {
        let mut q = EventQueue::new();
        for cpu in 0..1000 {
            q.push(Time(5), Event::Resched { cpu });
        }
        for want in 0..1000 {
            assert_eq!(q.pop(), Some((Time(5), Event::Resched { cpu: want })));
        }
    }
}
