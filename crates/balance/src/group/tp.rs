//! What CFS bandwidth control shows a tracer: each throttle and unthrottle of a group
//! runqueue, and each refill of a group's pool by its period timer.
//!
//! Linux 6.12.117 has no tracepoint for any of them: include/trace/events/sched.h
//! declares none for bandwidth control (its bare tracepoints are the PELT, capacity,
//! overutilized, util_est, nr_running and compute_energy ones), and fair.c's
//! `throttle_cfs_rq`, `unthrottle_cfs_rq` and `do_sched_cfs_period_timer` fire none
//! (`sub_nr_running`'s `sched_update_nr_running_tp` is the nearest, and says nothing of
//! the group). The records here are fairsim's own, with the fields a reader of
//! `cpu.stat` asks about: which group's runqueue on which CPU, how far in debt it was,
//! how many tasks it took off the CPU, how long it stayed throttled as `throttled_usec`
//! counts it, and what was left in the pool.
//!
//! A runqueue counts as throttled here only when it is throttled itself
//! (`cfs_rq->throttled`); its descendants, held by `throttle_count`, log nothing.
//!
//! The log is off unless the engine asks for it (a run with a trace), so a run without a
//! trace keeps nothing; it only observes and never changes a decision.

use crate::task::GroupId;

/// One bandwidth event; the engine stamps it with the time of the event that made it,
/// as it stamps `sched_migrate_task`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandwidthTracepoint {
    /// `throttle_cfs_rq` throttled group `group`'s runqueue on `cpu`.
    Throttle {
        /// The group.
        group: GroupId,
        /// The runqueue's CPU.
        cpu: usize,
        /// `cfs_rq->runtime_remaining` (at most 0: what it overran its runtime by).
        runtime_remaining: i64,
        /// `cfs_rq->h_nr_queued`: the tasks the throttle took off the CPU.
        h_nr_queued: u32,
        /// `cfs_b->runtime` after the runqueue's last request: the pool, dry.
        pool: u64,
    },
    /// `unthrottle_cfs_rq` gave group `group`'s runqueue on `cpu` back its entity.
    Unthrottle {
        /// The group.
        group: GroupId,
        /// The runqueue's CPU.
        cpu: usize,
        /// What this unthrottle added to `cfs_b->throttled_time` (0 when the runqueue
        /// had nothing queued all along, which the kernel does not count).
        throttled_ns: u64,
        /// `cfs_rq->h_nr_queued`: the tasks that come back.
        h_nr_queued: u32,
        /// `cfs_b->runtime` once this runqueue was paid.
        pool: u64,
    },
    /// `do_sched_cfs_period_timer` refilled group `group`'s pool.
    Refill {
        /// The group.
        group: GroupId,
        /// The CPU the period timer fires on.
        cpu: usize,
        /// `cfs_b->runtime` after `__refill_cfs_bandwidth_runtime`.
        runtime: u64,
        /// The periods this refill counts (`overrun`, added to `nr_periods`).
        periods: u64,
        /// Runqueues on the throttled list when it ran (when not 0, `periods` is
        /// added to `nr_throttled` too).
        throttled: u32,
    },
}
