//! The engine side of CFS bandwidth control: each task group's period and slack timers
//! as events, the reschedules their unthrottling asks for, and the throttles,
//! unthrottles and refills the scheduler logged for the tracer.
//!
//! The kernel runs the period timer as a pinned hrtimer in hard-interrupt context on the
//! CPU that started it; fairsim fires it at its expiry without charging a CPU for the
//! callback (a few microseconds per period for a handful of runqueues), and delivers the
//! reschedules it causes as `resched_curr` would: an idle CPU wakes at once, a busy one
//! gets an IPI.

use fairsim_balance::group::tp::BandwidthTracepoint;
use fairsim_balance::group::{BwTimer, BwTimerKind};
use fairsim_trace::TraceEvent;

use super::World;
use crate::event::Event;
use fairsim_des::time::Time;

impl World {
    /// Queues the bandwidth timers the scheduler armed since the last event.
    pub(super) fn arm_bandwidth_timers(&mut self) {
        for t in self.sched.take_bandwidth_timers() {
            self.queue.push(
                Time(t.at),
                Event::BandwidthTimer {
                    group: t.group,
                    slack: t.kind == BwTimerKind::Slack,
                    at: t.at,
                },
            );
        }
    }

    /// A group's bandwidth timer expires at `now`.
    pub(super) fn bandwidth_timer(&mut self, group: usize, slack: bool, at: u64, now: u64) {
        let kind = if slack {
            BwTimerKind::Slack
        } else {
            BwTimerKind::Period
        };
        self.sched.bandwidth_timer(BwTimer { at, group, kind }, now);
        for c in self.sched.take_resched() {
            if self.sched.rqs[c].need_resched {
                self.kick(c, usize::MAX, now);
            }
        }
    }

    /// The bandwidth tracepoints the scheduler logged since the last call
    /// ([`fairsim_balance::group::tp`]), at `ts` (the event that made them) on the CPU
    /// each names.
    pub(super) fn trace_bandwidth(&mut self, ts: u64) {
        if !self.sched.has_bandwidth_tracepoints() {
            return;
        }
        let tps = self.sched.take_bandwidth_tracepoints();
        let Some(tr) = self.tracer.as_deref_mut() else {
            return;
        };
        for tp in tps {
            let (cpu, event) = match tp {
                BandwidthTracepoint::Throttle {
                    group,
                    cpu,
                    runtime_remaining,
                    h_nr_queued,
                    pool,
                } => (
                    cpu,
                    TraceEvent::CfsThrottle {
                        group: group as u32,
                        h_nr_queued,
                        runtime_remaining,
                        pool,
                    },
                ),
                BandwidthTracepoint::Unthrottle {
                    group,
                    cpu,
                    throttled_ns,
                    h_nr_queued,
                    pool,
                } => (
                    cpu,
                    TraceEvent::CfsUnthrottle {
                        group: group as u32,
                        h_nr_queued,
                        throttled_ns,
                        pool,
                    },
                ),
                BandwidthTracepoint::Refill {
                    group,
                    cpu,
                    runtime,
                    periods,
                    throttled,
                } => (
                    cpu,
                    TraceEvent::CfsRefill {
                        group: group as u32,
                        throttled,
                        runtime,
                        periods,
                    },
                ),
            };
            tr.push(ts, cpu, event);
        }
    }
}
