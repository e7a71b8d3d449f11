//! The PELT clock of a runqueue: `clock_task` scaled by CPU capacity and frequency while
//! something runs, synchronised back to `clock_task` when the CPU is idle
//! (`kernel/sched/pelt.h`).
//!
//! Running at lower compute capacity takes longer for the same work, so the PELT clock
//! advances slower while busy. The idle time this "steals" is handed back when the CPU
//! goes idle and the clock jumps to `clock_task` -- unless the CPU was fully busy, in
//! which case the gap is booked as `lost_idle_time` and `rq_clock_pelt` stays behind.

use crate::avg::PELT_MIN_DIVIDER;
use crate::decay::LOAD_AVG_MAX;
use crate::SCHED_CAPACITY_SHIFT;

/// `cap_scale(v, s)` (`kernel/sched/sched.h`): `v * s >> 10`.
#[inline]
pub fn cap_scale(v: u64, s: u64) -> u64 {
    v.wrapping_mul(s) >> SCHED_CAPACITY_SHIFT
}

/// The clock fields of `struct rq` that PELT uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeltClock {
    /// `rq->clock_task`: rq time minus irq and steal time, in ns.
    pub clock_task: u64,
    /// `rq->clock_pelt`: the capacity- and frequency-scaled clock, in ns.
    pub clock_pelt: u64,
    /// `rq->lost_idle_time`: idle time lost because the rq was fully busy, in ns.
    pub lost_idle_time: u64,
}

/// `(LOAD_AVG_MAX - 1024) << SCHED_CAPACITY_SHIFT) - LOAD_AVG_MAX`, the summed
/// `util_sum` at or above which `update_idle_rq_clock_pelt` considers the rq fully busy.
pub const IDLE_UTIL_SUM_THRESHOLD: u32 = (PELT_MIN_DIVIDER << SCHED_CAPACITY_SHIFT) - LOAD_AVG_MAX;

impl PeltClock {
    /// A clock whose task and PELT clocks both read `now`.
    pub fn new(now: u64) -> Self {
        PeltClock {
            clock_task: now,
            clock_pelt: now,
            lost_idle_time: 0,
        }
    }

    /// `rq_clock_pelt(rq)` (`kernel/sched/pelt.h`): `clock_pelt - lost_idle_time`, the
    /// `now` of every PELT update on this rq (without CFS bandwidth throttling, also
    /// `cfs_rq_clock_pelt`).
    #[inline]
    pub fn rq_clock_pelt(&self) -> u64 {
        self.clock_pelt.wrapping_sub(self.lost_idle_time)
    }

    /// `_update_idle_rq_clock_pelt(rq)` (`kernel/sched/pelt.h`): the rq is idle, so the
    /// PELT clock catches up with `clock_task`.
    #[inline]
    pub fn sync_idle(&mut self) {
        self.clock_pelt = self.clock_task;
    }

    /// `update_rq_clock_pelt(rq, delta)` (`kernel/sched/pelt.h`). With the idle task
    /// current the clock is synced; otherwise `delta` ns of task time become
    /// `cap_scale(cap_scale(delta, cpu_capacity), freq_capacity)` ns of PELT time. The two
    /// truncations are the kernel's, so splitting a delta into several updates can lose a
    /// few ns, exactly as on a real rq.
    pub fn update_rq_clock_pelt(
        &mut self,
        delta: u64,
        curr_is_idle: bool,
        cpu_capacity: u64,
        freq_capacity: u64,
    ) {
        if curr_is_idle {
            self.sync_idle();
            return;
        }
        let delta = cap_scale(delta, cpu_capacity);
        let delta = cap_scale(delta, freq_capacity);
        self.clock_pelt = self.clock_pelt.wrapping_add(delta);
    }

    /// The clock part of `update_rq_clock_task(rq, delta)` (`kernel/sched/core.c`) with no
    /// irq or steal time: `clock_task` advances by `delta`, then
    /// [`Self::update_rq_clock_pelt`].
    pub fn update_rq_clock_task(
        &mut self,
        delta: u64,
        curr_is_idle: bool,
        cpu_capacity: u64,
        freq_capacity: u64,
    ) {
        self.clock_task = self.clock_task.wrapping_add(delta);
        self.update_rq_clock_pelt(delta, curr_is_idle, cpu_capacity, freq_capacity);
    }

    /// `update_idle_rq_clock_pelt(rq)` (`kernel/sched/pelt.h`), called as the rq goes idle
    /// (`set_next_task_idle`). `util_sum_total` is the cfs, rt and dl `util_sum`s added in
    /// 32-bit arithmetic as the kernel does. If it reaches
    /// [`IDLE_UTIL_SUM_THRESHOLD`] the rq was always running and the gap between
    /// `clock_task` and `clock_pelt` is lost idle time; in every case the clock syncs.
    pub fn update_idle_rq_clock_pelt(&mut self, util_sum_total: u32) {
        if util_sum_total >= IDLE_UTIL_SUM_THRESHOLD {
            self.lost_idle_time = self
                .lost_idle_time
                .wrapping_add(self.clock_task.wrapping_sub(self.clock_pelt));
        }
        self.sync_idle();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_value() {
        // (47742 - 1024) << 10 = 47839232; minus 47742 = 47791490.
        assert_eq!(IDLE_UTIL_SUM_THRESHOLD, 47_791_490);
    }

    #[test]
    fn scaling_truncates_twice() {
        // 1_000_000 ns at capacity 446: 446_000_000 >> 10 = 435_546 (.875 dropped);
        // then freq 614: 435_546 * 614 = 267_425_244 >> 10 = 261_157 (.46 dropped).
        let mut c = PeltClock::new(0);
        c.update_rq_clock_task(1_000_000, false, 446, 614);
        assert_eq!(c.clock_task, 1_000_000);
        assert_eq!(c.clock_pelt, 261_157);
        // Going idle with a small util_sum syncs without losing time.
        c.update_idle_rq_clock_pelt(1000);
        assert_eq!(c.clock_pelt, 1_000_000);
        assert_eq!(c.lost_idle_time, 0);
        assert_eq!(c.rq_clock_pelt(), 1_000_000);
    }

    #[test]
    fn fully_busy_rq_loses_idle_time() {
        let mut c = PeltClock::new(0);
        c.update_rq_clock_task(1_000_000, false, 512, 1024);
        assert_eq!(c.clock_pelt, 500_000);
        c.update_idle_rq_clock_pelt(IDLE_UTIL_SUM_THRESHOLD);
        assert_eq!(c.lost_idle_time, 500_000);
        assert_eq!(c.clock_pelt, 1_000_000);
        assert_eq!(c.rq_clock_pelt(), 500_000);
        // While idle, a clock update only syncs.
        c.update_rq_clock_task(7, true, 512, 1024);
        assert_eq!(c.clock_pelt, 1_000_007);
    }
}
