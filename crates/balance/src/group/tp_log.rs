//! The scheduler's side of the bandwidth tracepoint log ([`super::tp`]): turning it on,
//! draining it, and the calls that log each throttle, unthrottle and refill. They read
//! `Sched`, so they sit apart from the record type, which `TaskGroups` holds without
//! importing the scheduler.

use super::tp::BandwidthTracepoint;
use crate::task::GroupId;
use crate::Sched;

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
