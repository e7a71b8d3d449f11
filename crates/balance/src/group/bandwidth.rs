//! CFS bandwidth control (`cpu.max`, `cpu.max.burst`), Linux 6.12.117's
//! `CONFIG_CFS_BANDWIDTH`: a group's pool (`struct cfs_bandwidth`) refilled with its quota
//! every period by the period timer, each group runqueue taking runtime from it a slice at
//! a time (`assign_cfs_rq_runtime`), throttling when the pool is dry
//! (`throttle_cfs_rq`: the runqueue's entity leaves its parent) and unthrottled by the
//! next refill or by runtime other runqueues hand back (the slack timer).
//!
//! The two hrtimers are the engine's: arming one appends a [`BwTimer`] to
//! [`super::TaskGroups`]' list, which the engine takes
//! ([`crate::Sched::take_bandwidth_timers`]) and turns into an event that calls
//! [`crate::Sched::bandwidth_timer`] at that time; an event whose timer was re-armed or
//! stopped since is ignored. Times here are the kernel clock (`rq_clock`, engine time plus
//! the boot offset). The `Sched` side of the timers is in `bandwidth_sched.rs`, and the
//! group runqueues' accounting in `runtime.rs`.

use crate::cfs_rq::CfsRqBandwidth;
use crate::rq::BOOT_CLOCK_OFFSET;
use crate::task::GroupId;

/// `RUNTIME_INF`: no quota (`cpu.max` "max").
pub const RUNTIME_INF: u64 = u64::MAX;
/// `default_cfs_period()`: 100 ms.
pub const DEFAULT_CFS_PERIOD: u64 = 100_000_000;
/// `min_cfs_quota_period`: 1 ms, the smallest quota and period.
pub(super) const MIN_CFS_QUOTA_PERIOD: u64 = 1_000_000;
/// `max_cfs_quota_period`: 1 s, the largest period.
pub(super) const MAX_CFS_QUOTA_PERIOD: u64 = 1_000_000_000;
/// `max_cfs_runtime`: `MAX_BW` us (`BW_SHIFT` 20), the largest quota.
pub(super) const MAX_CFS_RUNTIME: u64 = ((1u64 << (64 - 20)) - 1) * 1000;
/// `sysctl_sched_cfs_bandwidth_slice` default, 5000 us: what a runqueue takes at a time.
pub const CFS_BANDWIDTH_SLICE: u64 = 5_000_000;
/// `min_cfs_rq_runtime`: a runqueue keeps 1 ms when it hands runtime back.
pub(super) const MIN_CFS_RQ_RUNTIME: i64 = 1_000_000;
/// `min_bandwidth_expiration`: no slack distribution within 2 ms of a refill.
pub(super) const MIN_BANDWIDTH_EXPIRATION: u64 = 2_000_000;
/// `cfs_bandwidth_slack_period`: the slack timer waits 5 ms to gather returns.
const CFS_BANDWIDTH_SLACK_PERIOD: u64 = 5_000_000;

/// Which of a group's two bandwidth timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BwTimerKind {
    /// `period_timer`: refill and unthrottle (`sched_cfs_period_timer`).
    Period,
    /// `slack_timer`: distribute returned runtime (`sched_cfs_slack_timer`).
    Slack,
}

/// A bandwidth timer the engine must fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BwTimer {
    /// Engine time (ns) it expires at.
    pub at: u64,
    /// The group.
    pub group: GroupId,
    /// Which timer.
    pub kind: BwTimerKind,
}

/// `struct cfs_bandwidth`: a group's quota, pool, timers and `cpu.stat` counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CfsBandwidth {
    /// `period` (ns).
    pub period: u64,
    /// `quota` (ns per period; [`RUNTIME_INF`] for none).
    pub quota: u64,
    /// `burst` (ns): unused quota that may carry over, up to quota + burst.
    pub burst: u64,
    /// `sched_cfs_bandwidth_slice()` (ns): what a runqueue takes from the pool at a time,
    /// `kernel.sched_cfs_bandwidth_slice_us` as the run's sysctls left it at boot.
    pub slice: u64,
    /// `runtime`: the pool.
    pub runtime: u64,
    /// `runtime_snap`: the pool after the last refill.
    pub runtime_snap: u64,
    /// `idle`: nothing took runtime since the last period.
    pub idle: bool,
    /// `period_active`: the period timer is armed.
    pub period_active: bool,
    /// The period timer's expiry (kernel clock).
    pub period_expires: u64,
    /// The period timer's callback is running (`hrtimer_callback_running`).
    pub period_running: bool,
    /// The CPU the period timer fires on: `start_cfs_bandwidth` arms it
    /// `HRTIMER_MODE_ABS_PINNED` on the CPU that asked for runtime, and it re-arms
    /// itself there. Only the trace reads it (the refill's line goes to that CPU).
    pub period_cpu: usize,
    /// `slack_started`: the slack timer is armed.
    pub slack_started: bool,
    /// The slack timer's expiry (kernel clock).
    pub slack_expires: u64,
    /// `throttled_cfs_rq`: the throttled runqueues (indices into the per-CPU arrays), in
    /// the order they were throttled.
    pub throttled: Vec<usize>,
    /// `nr_periods`.
    pub nr_periods: u64,
    /// `nr_throttled`: periods that began with a runqueue throttled.
    pub nr_throttled: u64,
    /// `throttled_time` (ns): the runqueues' throttled time, summed.
    pub throttled_time: u64,
    /// `nr_burst`: refills that used burst runtime.
    pub nr_burst: u64,
    /// `burst_time` (ns).
    pub burst_time: u64,
}

impl Default for CfsBandwidth {
    /// `init_cfs_bandwidth` without the random expiry (set by the group's creation).
    fn default() -> Self {
        CfsBandwidth {
            period: DEFAULT_CFS_PERIOD,
            quota: RUNTIME_INF,
            burst: 0,
            slice: CFS_BANDWIDTH_SLICE,
            runtime: 0,
            runtime_snap: 0,
            idle: false,
            period_active: false,
            period_expires: 0,
            period_running: false,
            period_cpu: 0,
            slack_started: false,
            slack_expires: 0,
            throttled: Vec::new(),
            nr_periods: 0,
            nr_throttled: 0,
            throttled_time: 0,
            nr_burst: 0,
            burst_time: 0,
        }
    }
}

/// `hrtimer_forward(timer, now, interval)`: moves `expires` past `now` by whole
/// intervals; the number of intervals (0 if it was already in the future).
pub(crate) fn hrtimer_forward(expires: &mut u64, now: u64, interval: u64) -> u64 {
    if *expires > now {
        return 0;
    }
    let delta = now - *expires;
    let mut orun = delta / interval;
    *expires += interval * orun;
    if *expires <= now {
        *expires += interval;
        orun += 1;
    }
    orun
}

impl CfsBandwidth {
    /// `__refill_cfs_bandwidth_runtime`: the pool gets the quota, capped at quota +
    /// burst; runtime drawn beyond the last refill's pool counts as burst.
    pub(super) fn refill(&mut self) {
        if self.quota == RUNTIME_INF {
            return;
        }
        self.runtime = self.runtime.wrapping_add(self.quota);
        let used = self.runtime_snap.wrapping_sub(self.runtime) as i64;
        if used > 0 {
            self.burst_time += used as u64;
            self.nr_burst += 1;
        }
        self.runtime = self.runtime.min(self.quota.saturating_add(self.burst));
        self.runtime_snap = self.runtime;
    }

    /// `start_cfs_bandwidth`: arms the period timer on `cpu` unless it is armed.
    pub(super) fn start(&mut self, g: GroupId, cpu: usize, now: u64, arms: &mut Vec<BwTimer>) {
        if self.period_active {
            return;
        }
        self.period_active = true;
        self.period_cpu = cpu;
        hrtimer_forward(&mut self.period_expires, now, self.period);
        arms.push(BwTimer {
            at: self.period_expires - BOOT_CLOCK_OFFSET,
            group: g,
            kind: BwTimerKind::Period,
        });
    }

    /// `runtime_refresh_within(cfs_b, min_expire)`: a refill is running or due within
    /// `min_expire`.
    pub(super) fn refresh_within(&self, now: u64, min_expire: u64) -> bool {
        self.period_running || (self.period_expires as i64 - now as i64) < min_expire as i64
    }

    /// `start_cfs_slack_bandwidth`: arms the slack timer 5 ms out, unless a refill comes
    /// within 7 ms or it is armed.
    pub(super) fn start_slack(&mut self, g: GroupId, now: u64, arms: &mut Vec<BwTimer>) {
        if self.refresh_within(now, CFS_BANDWIDTH_SLACK_PERIOD + MIN_BANDWIDTH_EXPIRATION) {
            return;
        }
        if self.slack_started {
            return;
        }
        self.slack_started = true;
        self.slack_expires = now + CFS_BANDWIDTH_SLACK_PERIOD;
        arms.push(BwTimer {
            at: self.slack_expires - BOOT_CLOCK_OFFSET,
            group: g,
            kind: BwTimerKind::Slack,
        });
    }
}

/// `__assign_cfs_rq_runtime(cfs_b, cfs_rq, target)`: tops the runqueue of `cpu` up to
/// `target` from the pool (starting the period timer); whether it now has runtime left.
pub(crate) fn assign_runtime(
    b: &mut CfsBandwidth,
    g: GroupId,
    cpu: usize,
    bw: &mut CfsRqBandwidth,
    target: u64,
    now: u64,
    arms: &mut Vec<BwTimer>,
) -> bool {
    let min_amount = (target as i64).wrapping_sub(bw.runtime_remaining) as u64;
    let mut amount = 0;
    if b.quota == RUNTIME_INF {
        amount = min_amount;
    } else {
        b.start(g, cpu, now, arms);
        if b.runtime > 0 {
            amount = b.runtime.min(min_amount);
            b.runtime -= amount;
            b.idle = false;
        }
    }
    bw.runtime_remaining = bw.runtime_remaining.wrapping_add(amount as i64);
    bw.runtime_remaining > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrtimer_forward_moves_past_now_by_whole_periods() {
        let mut e = 100;
        assert_eq!(hrtimer_forward(&mut e, 50, 100), 0);
        assert_eq!(e, 100);
        assert_eq!(hrtimer_forward(&mut e, 100, 100), 1);
        assert_eq!(e, 200);
        assert_eq!(hrtimer_forward(&mut e, 450, 100), 3);
        assert_eq!(e, 500);
    }

    #[test]
    fn refill_caps_at_quota_plus_burst_and_counts_burst_use() {
        let mut b = CfsBandwidth {
            quota: 50,
            burst: 20,
            ..CfsBandwidth::default()
        };
        b.refill();
        assert_eq!((b.runtime, b.runtime_snap), (50, 50));
        // 10 unused carries over, up to quota + burst.
        b.runtime = 10;
        b.refill();
        assert_eq!(b.runtime, 60);
        b.refill();
        assert_eq!(b.runtime, 70);
        // 70 in the pool after the refill, 65 of it used: 15 came from the burst.
        b.runtime = 5;
        b.refill();
        assert_eq!((b.nr_burst, b.burst_time, b.runtime), (1, 15, 55));
    }

    #[test]
    fn assign_takes_a_slice_and_starts_the_period_timer() {
        let mut b = CfsBandwidth {
            quota: 12_000_000,
            runtime: 12_000_000,
            ..CfsBandwidth::default()
        };
        let mut bw = CfsRqBandwidth {
            runtime_remaining: -1000,
            ..CfsRqBandwidth::default()
        };
        let mut arms = Vec::new();
        assert!(assign_runtime(
            &mut b,
            1,
            0,
            &mut bw,
            5_000_000,
            BOOT_CLOCK_OFFSET + 7,
            &mut arms
        ));
        assert_eq!(bw.runtime_remaining, 5_000_000);
        assert_eq!(b.runtime, 12_000_000 - 5_001_000);
        assert_eq!(arms.len(), 1);
        assert!(b.period_active);
        // The pool runs dry: only what is left.
        bw.runtime_remaining = 0;
        b.runtime = 300;
        assert!(assign_runtime(
            &mut b,
            1,
            0,
            &mut bw,
            5_000_000,
            BOOT_CLOCK_OFFSET + 9,
            &mut arms
        ));
        assert_eq!((bw.runtime_remaining, b.runtime), (300, 0));
        assert_eq!(arms.len(), 1, "an armed timer is not armed again");
        bw.runtime_remaining = -5;
        assert!(!assign_runtime(
            &mut b,
            1,
            0,
            &mut bw,
            5_000_000,
            BOOT_CLOCK_OFFSET + 9,
            &mut arms
        ));
    }
}
