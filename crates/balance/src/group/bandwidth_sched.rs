//! The scheduler's side of CFS bandwidth control ([`super::bandwidth`]): `cpu.max`'s
//! write (`tg_set_cfs_bandwidth`), the engine's bandwidth timers (`sched_cfs_period_timer`,
//! `sched_cfs_slack_timer`) with `do_sched_cfs_period_timer` and
//! `distribute_cfs_runtime`. They are `Sched` methods, so they sit apart from the pool's
//! data and pure accounting, which the entity store and the groups' data use without
//! importing the scheduler.

use super::bandwidth::{
    hrtimer_forward, MAX_CFS_QUOTA_PERIOD, MAX_CFS_RUNTIME, MIN_BANDWIDTH_EXPIRATION,
    MIN_CFS_QUOTA_PERIOD,
};
use super::{BwTimer, BwTimerKind, GroupError, ROOT_GROUP, RUNTIME_INF};
use crate::rq::BOOT_CLOCK_OFFSET;
use crate::task::GroupId;
use crate::Sched;

impl Sched {
    /// `tg_set_cfs_bandwidth(tg, period, quota, burst)` (`cpu.max` and `cpu.max.burst`
    /// writes), all in ns, `quota` [`RUNTIME_INF`] for "max": refused with `EINVAL` for
    /// the root group, a quota or period under 1 ms, a period over 1 s, a quota over
    /// `max_cfs_runtime`, or a burst over the quota. The pool is refilled, the period
    /// timer started, and every runqueue of the group starts from no runtime (a throttled
    /// one is unthrottled).
    pub fn set_group_bandwidth(
        &mut self,
        g: GroupId,
        period: u64,
        quota: u64,
        burst: u64,
        now: u64,
    ) -> Result<(), GroupError> {
        if g >= self.groups.tgs.len() {
            return Err(GroupError::NoGroup(g));
        }
        if g == ROOT_GROUP {
            return Err(GroupError::Root);
        }
        if quota < MIN_CFS_QUOTA_PERIOD || period < MIN_CFS_QUOTA_PERIOD {
            return Err(GroupError::Bandwidth(
                "quota and period must be at least 1000 us",
            ));
        }
        if period > MAX_CFS_QUOTA_PERIOD {
            return Err(GroupError::Bandwidth("period must be at most 1000000 us"));
        }
        if quota != RUNTIME_INF && quota > MAX_CFS_RUNTIME {
            return Err(GroupError::Bandwidth("quota exceeds max_cfs_runtime"));
        }
        if quota != RUNTIME_INF && (burst > quota || burst + quota > MAX_CFS_RUNTIME) {
            return Err(GroupError::Bandwidth(
                "cpu.max.burst must not exceed the cpu.max quota",
            ));
        }
        let enabled = quota != RUNTIME_INF;
        let k_now = Sched::kclock(now);
        {
            let groups = &mut self.groups;
            let b = &mut groups.tgs[g].bw;
            b.period = period;
            b.quota = quota;
            b.burst = burst;
            b.refill();
            // The write happens before the first task, on no CPU in particular: the
            // timer goes to CPU 0, where the launcher starts by default.
            if enabled {
                b.start(g, 0, k_now, &mut groups.timer_arms);
            }
        }
        for cpu in 0..self.nr_cpus() {
            self.update_rq_clock(cpu, now);
            let i = self.groups.idx(g, cpu);
            let bw = &mut self.groups.cfs[i].bw;
            bw.runtime_enabled = enabled;
            bw.runtime_remaining = 0;
            if bw.throttled {
                self.unthrottle_cfs_rq(i);
            }
        }
        Ok(())
    }

    /// Starts the groups' `cpu.stat` bandwidth counters again from zero (a measurement
    /// window opens), as [`Sched::reset_schedstat`] does the runqueues'.
    pub fn reset_group_bandwidth_stats(&mut self) {
        for tg in &mut self.groups.tgs {
            let b = &mut tg.bw;
            b.nr_periods = 0;
            b.nr_throttled = 0;
            b.throttled_time = 0;
            b.nr_burst = 0;
            b.burst_time = 0;
        }
        for cfs in &mut self.groups.cfs {
            cfs.bw.throttled_clock_self_time = 0;
        }
    }

    /// The bandwidth timers armed since the engine last looked.
    pub fn take_bandwidth_timers(&mut self) -> Vec<BwTimer> {
        std::mem::take(&mut self.groups.timer_arms)
    }

    /// Fires a bandwidth timer at engine time `now` (its expiry): the period timer
    /// refills the pool and unthrottles (`sched_cfs_period_timer`), the slack timer hands
    /// out returned runtime (`sched_cfs_slack_timer`). A timer re-armed or stopped since
    /// it was handed to the engine does nothing.
    pub fn bandwidth_timer(&mut self, t: BwTimer, now: u64) {
        self.set_now(now);
        let k_now = Sched::kclock(now);
        let expires = t.at + BOOT_CLOCK_OFFSET;
        let g = t.group;
        match t.kind {
            BwTimerKind::Period => {
                let b = &self.groups.tgs[g].bw;
                if !b.period_active || b.period_expires != expires {
                    return;
                }
                for cpu in 0..self.nr_cpus() {
                    self.update_rq_clock(cpu, now);
                }
                self.groups.tgs[g].bw.period_running = true;
                let mut idle = false;
                loop {
                    let b = &mut self.groups.tgs[g].bw;
                    let period = b.period;
                    let overrun = hrtimer_forward(&mut b.period_expires, k_now, period);
                    if overrun == 0 {
                        break;
                    }
                    idle = self.do_sched_cfs_period_timer(g, overrun);
                }
                let b = &mut self.groups.tgs[g].bw;
                b.period_running = false;
                if idle {
                    b.period_active = false;
                } else {
                    let at = b.period_expires - BOOT_CLOCK_OFFSET;
                    self.groups.timer_arms.push(BwTimer { at, ..t });
                }
            }
            BwTimerKind::Slack => {
                let b = &mut self.groups.tgs[g].bw;
                if !b.slack_started || b.slack_expires != expires {
                    return;
                }
                b.slack_started = false;
                if b.refresh_within(k_now, MIN_BANDWIDTH_EXPIRATION) {
                    return;
                }
                if b.quota == RUNTIME_INF || b.runtime <= b.slice {
                    return;
                }
                for cpu in 0..self.nr_cpus() {
                    self.update_rq_clock(cpu, now);
                }
                self.distribute_cfs_runtime(g);
            }
        }
    }

    /// `do_sched_cfs_period_timer(cfs_b, overrun)`: counts the periods, refills, and
    /// hands runtime to the throttled runqueues; true when the timer may stop (no quota,
    /// or a whole period with nothing throttled and no runtime taken).
    fn do_sched_cfs_period_timer(&mut self, g: GroupId, overrun: u64) -> bool {
        let b = &mut self.groups.tgs[g].bw;
        if b.quota == RUNTIME_INF {
            return true;
        }
        let mut throttled = !b.throttled.is_empty();
        b.nr_periods += overrun;
        b.refill();
        self.trace_refill(g, overrun);
        let b = &mut self.groups.tgs[g].bw;
        if b.idle && !throttled {
            return true;
        }
        if !throttled {
            b.idle = true;
            return false;
        }
        b.nr_throttled += overrun;
        while throttled && self.groups.tgs[g].bw.runtime > 0 {
            throttled = self.distribute_cfs_runtime(g);
        }
        self.groups.tgs[g].bw.idle = false;
        false
    }

    /// `distribute_cfs_runtime(cfs_b)`: each throttled runqueue in turn gets what it owes
    /// plus 1 ns, while the pool lasts, and is unthrottled. Returns whether some stay
    /// throttled. The kernel unthrottles other CPUs' runqueues through an IPI
    /// (`unthrottle_cfs_rq_async`) and its own after the walk; fairsim unthrottles each
    /// at once, in list order.
    fn distribute_cfs_runtime(&mut self, g: GroupId) -> bool {
        let mut remaining = 1u64;
        let mut throttled = false;
        let list = self.groups.tgs[g].bw.throttled.clone();
        for i in list {
            if remaining == 0 {
                throttled = true;
                break;
            }
            if !self.groups.cfs[i].bw.throttled {
                continue;
            }
            let owed = (1i64 - self.groups.cfs[i].bw.runtime_remaining) as u64;
            let b = &mut self.groups.tgs[g].bw;
            let runtime = owed.min(b.runtime);
            b.runtime -= runtime;
            remaining = b.runtime;
            let bw = &mut self.groups.cfs[i].bw;
            bw.runtime_remaining += runtime as i64;
            if bw.runtime_remaining > 0 {
                self.unthrottle_cfs_rq(i);
            } else {
                throttled = true;
            }
        }
        throttled
    }
}
