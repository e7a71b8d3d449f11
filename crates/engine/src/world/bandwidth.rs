//! The engine side of CFS bandwidth control: each task group's period and slack timers
//! as events, and the reschedules their unthrottling asks for.
//!
//! The kernel runs the period timer as a pinned hrtimer in hard-interrupt context on the
//! CPU that started it; fairsim fires it at its expiry without charging a CPU for the
//! callback (a few microseconds per period for a handful of runqueues), and delivers the
//! reschedules it causes as `resched_curr` would: an idle CPU wakes at once, a busy one
//! gets an IPI.

use fairsim_balance::group::{BwTimer, BwTimerKind};

use super::World;
use crate::event::Event;
use crate::time::Time;

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
}
