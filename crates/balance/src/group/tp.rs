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

use crate::sched::Sched;
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

impl Sched {
    /// Starts keeping [`BandwidthTracepoint`]s (the engine's tracer drains them).
    pub fn enable_bandwidth_tracepoints(&mut self) {
        self.groups.tp.get_or_insert_with(Vec::new);
    }

    /// The tracepoints logged since the last call, oldest first.
    pub fn take_bandwidth_tracepoints(&mut self) -> Vec<BandwidthTracepoint> {
        self.groups
            .tp
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Whether tracepoints are waiting to be taken (cheap enough for every event).
    pub fn has_bandwidth_tracepoints(&self) -> bool {
        self.groups.tp.as_ref().is_some_and(|v| !v.is_empty())
    }

    /// Logs the throttle of group runqueue `i` when a tracer listens.
    pub(crate) fn trace_throttle(&mut self, i: usize) {
        if self.groups.tp.is_none() {
            return;
        }
        let (group, cpu) = self.groups.group_cpu_of(i);
        let cfs = &self.groups.cfs[i];
        let ev = BandwidthTracepoint::Throttle {
            group,
            cpu,
            runtime_remaining: cfs.bw.runtime_remaining,
            h_nr_queued: cfs.h_nr_queued,
            pool: self.groups.tgs[group].bw.runtime,
        };
        self.groups.tp.get_or_insert_with(Vec::new).push(ev);
    }

    /// Logs the unthrottle of group runqueue `i`, which added `throttled_ns` to its
    /// group's throttled time, when a tracer listens.
    pub(crate) fn trace_unthrottle(&mut self, i: usize, throttled_ns: u64) {
        if self.groups.tp.is_none() {
            return;
        }
        let (group, cpu) = self.groups.group_cpu_of(i);
        let ev = BandwidthTracepoint::Unthrottle {
            group,
            cpu,
            throttled_ns,
            h_nr_queued: self.groups.cfs[i].h_nr_queued,
            pool: self.groups.tgs[group].bw.runtime,
        };
        self.groups.tp.get_or_insert_with(Vec::new).push(ev);
    }

    /// Logs a refill of group `g`'s pool that counted `periods` periods, when a tracer
    /// listens.
    pub(crate) fn trace_refill(&mut self, g: GroupId, periods: u64) {
        if self.groups.tp.is_none() {
            return;
        }
        let b = &self.groups.tgs[g].bw;
        let ev = BandwidthTracepoint::Refill {
            group: g,
            cpu: b.period_cpu,
            runtime: b.runtime,
            periods,
            throttled: b.throttled.len() as u32,
        };
        self.groups.tp.get_or_insert_with(Vec::new).push(ev);
    }
}
