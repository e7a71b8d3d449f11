//! The world's progress guard: a run whose events keep coming at one virtual instant
//! is stopped with an error instead of running forever.
//!
//! Virtual time passes only through work that takes time: a run segment, a sleep, a cost
//! above 0. A task whose loop does none of these (nanosleep with `sleep=0` and `run=0`)
//! with the costs on its path set to 0 goes round through events (its timer, its wakeup,
//! the switch) that all fall at the same instant, for ever. The per-call budget of the
//! program interpreter (`MAX_INSTANT_OPS` in `exec.rs`) cannot see this: each round is a
//! new event and a new call with a fresh budget. So the world counts the events it
//! processes at the current instant and gives up beyond a bound.
//!
//! The bound. In a legitimate run, what happens at one instant is a finite cascade from
//! the events already queued for it: each CPU's tick, interrupts and IPIs, each task's
//! timer, wakeup, enqueue and switch, and the newidle steps those start, each a handful
//! of events. Measured on spr-2s56c2t (224 CPUs) the largest instants hold 445 events
//! (seed 000's nanosleep run, 225 tasks) and 2806 (448 tasks with every cost 0, the
//! timers of all tasks expiring together), about 4 per task and CPU. The bound,
//! [`EVENTS_PER_ENTITY`] per task and CPU and at least [`MIN_EVENTS`], is over 250 times
//! that, and a stuck world reaches it in well under a second: 1 million events at some
//! 10 million a second.
//!
//! Memory. Some stuck loops also push an event for a later instant on every round (a
//! CPU that goes idle and is woken again and again at one instant re-arms its poll
//! limit each time, and the stale entries stay queued until their time comes), so the
//! queue would grow with the event count; when time creeps on a nanosecond at a time the
//! event count per instant never trips, but the queue still grows. The guard therefore
//! also bounds the queue's length: [`QUEUE_PER_TASK`] events per task plus
//! [`QUEUE_PER_CPU`] per CPU, and at least [`MIN_QUEUE`]. A CPU enters idle at most once
//! per pair of context switches, so with the cost table's switch of 1.5 us its stale
//! poll limits within the longest poll window (a tick of 10 ms at HZ=100) stay under
//! 4096; live events are a few per task and CPU (seed 000's scenario queues about 470 for
//! 224 tasks on 224 CPUs). Above [`MIN_QUEUE`], the queue is also held to what the run's
//! memory budget leaves after its estimate, so a stuck world stops inside the budget.
//! What else grows in a stuck loop (the scheduler's list of CPUs to reschedule, drained
//! only by balancing) grows by at most one entry per event; [`guard_memory`] counts it and
//! the queue's floor for the run's memory estimate.

use super::progress_bounds::{
    EVENTS_PER_ENTITY, MIN_EVENTS, MIN_QUEUE, QUEUE_PER_CPU, QUEUE_PER_TASK,
};
use crate::cost::CostTable;
use crate::error::EngineError;
use fairsim_des::time::Time;

/// Bytes one queued event takes and one entry of the reschedule list, rounded up. A
/// queued event is a 48-byte entry of the timing wheel's pool, in a vector up to twice
/// its contents (96 bytes), or a 32-byte entry of the radix heap beyond the wheel, whose
/// bucket vectors may be twice their contents and whose sorting out holds a bucket's
/// entries twice for a moment (128 bytes); see `crate::wheel`. 192 keeps the margin the
/// bound had when every event went to the radix heap and a side table.
const QUEUED_EVENT_BYTES: u64 = 192;
const RESCHED_ENTRY_BYTES: u64 = 8;

/// Counts the events processed at the current virtual instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct InstantGuard {
    /// The instant being counted.
    at: Time,
    /// Events processed at it so far.
    events: u64,
    /// The most events allowed at one instant.
    limit: u64,
    /// The most events the queue may hold.
    queue_limit: u64,
}

/// The most events the queue of a world of `tasks` tasks on `cpus` CPUs may hold.
pub fn queue_limit(tasks: usize, cpus: usize) -> u64 {
    (tasks as u64)
        .saturating_mul(QUEUE_PER_TASK)
        .saturating_add((cpus as u64).saturating_mul(QUEUE_PER_CPU))
        .max(MIN_QUEUE)
}

/// Bytes the guard lets a stuck world take before it stops it, beyond the queue: one
/// reschedule-list entry per event, and the queue's floor of [`MIN_QUEUE`] events. The
/// run's memory estimate adds this. The queue above its floor is held to what the memory
/// budget leaves ([`InstantGuard::cap_queue_bytes`]), so that the per-CPU allowance
/// a stuck world may fill does not cost every legitimate run its share of the budget.
pub fn guard_memory(tasks: usize, cpus: usize) -> u64 {
    (MIN_QUEUE * QUEUED_EVENT_BYTES)
        .saturating_add(events_per_instant_limit(tasks, cpus).saturating_mul(RESCHED_ENTRY_BYTES))
}

/// The most events a world of `tasks` tasks on `cpus` CPUs may process at one instant.
pub fn events_per_instant_limit(tasks: usize, cpus: usize) -> u64 {
    let entities = (tasks as u64).saturating_add(cpus as u64);
    entities.saturating_mul(EVENTS_PER_ENTITY).max(MIN_EVENTS)
}

impl InstantGuard {
    /// A guard for a world of `tasks` tasks on `cpus` CPUs, at time 0.
    pub(super) fn new(tasks: usize, cpus: usize) -> InstantGuard {
        InstantGuard {
            at: Time::ZERO,
            events: 0,
            limit: events_per_instant_limit(tasks, cpus),
            queue_limit: queue_limit(tasks, cpus),
        }
    }

    /// Holds the queue to `bytes` of memory (never below [`MIN_QUEUE`] events): the run's
    /// budget minus its estimate, so that a stuck world stops before it exceeds the budget.
    pub(super) fn cap_queue_bytes(&mut self, bytes: u64) {
        let events = (bytes / QUEUED_EVENT_BYTES).max(MIN_QUEUE);
        self.queue_limit = self.queue_limit.min(events);
    }

    /// Counts one event processed at `t`, with `queued` events pending after it; past
    /// either limit, the error that stops the run. `cost` names the costs set to 0 in the
    /// error, as the likely reason.
    pub(super) fn observe(
        &mut self,
        t: Time,
        queued: usize,
        cost: &CostTable,
    ) -> Result<(), EngineError> {
        let queued = queued as u64;
        if t != self.at {
            self.at = t;
            self.events = 0;
        }
        self.events += 1;
        if self.events <= self.limit && queued <= self.queue_limit {
            return Ok(());
        }
        Err(EngineError::NoProgress {
            events: self.events,
            at: t,
            limit: self.limit,
            queued,
            queue_limit: self.queue_limit,
            hint: hint(cost),
        })
    }
}

/// Why time may have stopped: the costs the run set to 0 (those 0 by default are left
/// out, as they are 0 in every run).
fn hint(cost: &CostTable) -> String {
    let default = CostTable::default();
    let zero: Vec<&str> = CostTable::NAMES
        .iter()
        .copied()
        .filter(|n| cost.get(n) == Some(0) && default.get(n) != Some(0))
        .collect();
    if zero.is_empty() {
        "a task loop that neither runs nor sleeps (e.g. nanosleep with sleep=0 and run=0) \
         never lets time pass; give it a duration above 0"
            .to_string()
    } else {
        format!(
            "a cost of 0 for {} with a task loop that neither runs nor sleeps (e.g. \
             nanosleep with sleep=0 and run=0) never lets time pass; give those costs or \
             the loop a duration above 0",
            zero.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_scales_with_tasks_and_cpus_above_a_floor() {
        assert_eq!(events_per_instant_limit(1, 1), MIN_EVENTS);
        assert_eq!(
            events_per_instant_limit(2000, 2048),
            4048 * EVENTS_PER_ENTITY
        );
        assert_eq!(events_per_instant_limit(usize::MAX, usize::MAX), u64::MAX);
    }

    #[test]
    fn the_count_starts_again_when_time_advances() {
        let cost = CostTable::default();
        let mut g = InstantGuard::new(1, 1);
        for _ in 0..MIN_EVENTS {
            g.observe(Time(5), 0, &cost).unwrap();
        }
        // A new instant: the count starts from 1 again.
        g.observe(Time(6), 0, &cost).unwrap();
        for _ in 1..MIN_EVENTS {
            g.observe(Time(6), 0, &cost).unwrap();
        }
        let e = g.observe(Time(6), 0, &cost).unwrap_err();
        assert!(matches!(
            e,
            EngineError::NoProgress {
                events,
                at: Time(6),
                limit: MIN_EVENTS,
                ..
            } if events == MIN_EVENTS + 1
        ));
    }

    #[test]
    fn the_error_is_one_line_naming_the_zero_costs() {
        let mut cost = CostTable::default();
        cost.apply("wakeup=0ns").unwrap();
        cost.apply("context_switch=0ns").unwrap();
        let msg = EngineError::NoProgress {
            events: 7,
            at: Time(1_500),
            limit: 6,
            queued: 0,
            queue_limit: 9,
            hint: hint(&cost),
        }
        .to_string();
        assert!(!msg.contains('\n'), "{msg}");
        assert!(
            msg.starts_with("no progress: 7 events at t=0.000001500 without virtual time advancing, 0 events queued"),
            "{msg}"
        );
        assert!(msg.contains("allowed: at most 6 events"), "{msg}");
        assert!(
            msg.contains("a cost of 0 for context_switch, wakeup with"),
            "{msg}"
        );
        // tick_restart is 0 by default and says nothing about this run.
        assert!(!msg.contains("tick_restart"), "{msg}");
        assert!(!hint(&CostTable::default()).contains("cost of 0"));
    }

    #[test]
    fn a_queue_past_its_bound_stops_the_run_even_as_time_creeps_on() {
        let cost = CostTable::default();
        let mut g = InstantGuard::new(1, 1);
        let limit = queue_limit(1, 1);
        assert_eq!(limit, MIN_QUEUE);
        assert_eq!(
            queue_limit(10, 100),
            10 * QUEUE_PER_TASK + 100 * QUEUE_PER_CPU
        );
        g.observe(Time(9), limit as usize, &cost).unwrap();
        g.observe(Time(10), limit as usize, &cost).unwrap();
        let e = g.observe(Time(11), 1 + limit as usize, &cost).unwrap_err();
        assert!(matches!(e, EngineError::NoProgress { queued, .. } if queued == limit + 1));
    }

    #[test]
    fn the_budget_caps_the_queue_but_not_below_its_floor() {
        let mut g = InstantGuard::new(10, 100);
        g.cap_queue_bytes(u64::MAX);
        assert_eq!(g.queue_limit, queue_limit(10, 100));
        g.cap_queue_bytes(200_000 * QUEUED_EVENT_BYTES);
        assert_eq!(g.queue_limit, 200_000);
        g.cap_queue_bytes(0);
        assert_eq!(g.queue_limit, MIN_QUEUE);
    }
}
