//! The engine's events: one closed [`Event`] enum, in the discrete-event core's queue
//! ordered by (time, sequence number), so that events scheduled for the same instant run
//! in the order they were scheduled.
//!
//! Events that can be superseded carry the generation of the object they belong to (a
//! CPU's run segment, its tick, a timer), and the world drops an event whose generation is
//! stale when it pops (the queue's lazy invalidation).

mod kind;

pub use kind::{Event, Tid};

/// The engine's event queue: the discrete-event core's queue ([`fairsim_des::queue`]) of
/// [`Event`]s, each packed to 16 bytes (`event_pack.rs`).
pub type EventQueue = fairsim_des::queue::EventQueue<Event>;

#[cfg(test)]
mod tests {
    use super::*;
    use fairsim_des::time::Time;

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
