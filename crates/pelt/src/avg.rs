//! `struct sched_avg` and the two halves of every PELT update: `___update_load_sum`
//! (accumulate and decay the sums) and `___update_load_avg` (divide them into averages).

use crate::decay::{accumulate_pelt_segments, decay_load, LOAD_AVG_MAX};
use crate::SCHED_CAPACITY_SHIFT;

/// `PELT_MIN_DIVIDER` (`kernel/sched/pelt.h`): the smallest value `get_pelt_divider` can
/// return, `LOAD_AVG_MAX - 1024`, reached at the very start of a period.
pub const PELT_MIN_DIVIDER: u32 = LOAD_AVG_MAX - 1024;

/// `struct sched_avg` (`include/linux/sched.h`): the load-tracking state of one
/// sched_entity, cfs_rq, or rq-wide class signal.
///
/// Field widths are the kernel's on 64-bit: `util_sum` and `period_contrib` are 32-bit,
/// the other sums 64-bit.
///
/// `util_est` and `util_est_ewma` hold util_est in both supported forms (see
/// [`crate::util_est`]): in the 6.12 form `util_est` is the single `sched_avg.util_est`
/// field (the EWMA, with the `UTIL_AVG_UNCHANGED` flag in its top bit) and `util_est_ewma`
/// stays 0; in the legacy v4.17..v6.7 form `util_est` is `util_est.enqueued` (with the
/// flag) and `util_est_ewma` is `util_est.ewma`. For a cfs_rq, `util_est` is the sum of
/// its tasks' estimates in both forms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedAvg {
    /// PELT-clock time (ns) up to which the sums are accounted, a multiple of 1024 ns
    /// after the first update. Zero means "not attached" for a sched_entity.
    pub last_update_time: u64,
    /// Decayed sum of the time the entity had load (weighted by `load` for a cfs_rq).
    pub load_sum: u64,
    /// Decayed sum of runnable time, scaled by 1024.
    pub runnable_sum: u64,
    /// Decayed sum of running time, scaled by 1024.
    pub util_sum: u32,
    /// Time (in 1024-ns units) already accounted in the current, incomplete period.
    pub period_contrib: u32,
    /// `load_sum` divided into an average, times the entity's weight.
    pub load_avg: u64,
    /// `runnable_sum` divided into an average (0..=1024 per runnable task).
    pub runnable_avg: u64,
    /// `util_sum` divided into an average (0..=1024).
    pub util_avg: u64,
    /// util_est: the 6.12 single field, or the legacy `enqueued` (see the type's doc).
    pub util_est: u32,
    /// Legacy util_est `ewma` (v4.17..v6.7 form only).
    pub util_est_ewma: u32,
}

/// `get_pelt_divider(avg)` (`kernel/sched/pelt.h`): the maximum a `*_sum` can hold at the
/// current position in the period, `LOAD_AVG_MAX - 1024 + period_contrib`.
#[inline]
pub fn get_pelt_divider(sa: &SchedAvg) -> u32 {
    PELT_MIN_DIVIDER + sa.period_contrib
}

/// `accumulate_sum(delta, sa, load, runnable, running)` (`kernel/sched/pelt.c`).
///
/// `delta` is in 1024-ns units. If period boundaries were crossed the old sums are
/// decayed first and the new contribution is split into three segments; otherwise the
/// whole delta counts undecayed. Returns the number of periods crossed.
///
/// As in the kernel, the caller guarantees `runnable == 0 && !running` whenever
/// `load == 0` (see [`update_load_sum`]), which is why `contrib` may be left stale then.
#[inline]
pub fn accumulate_sum(
    delta: u64,
    sa: &mut SchedAvg,
    load: u64,
    runnable: u64,
    running: bool,
) -> u64 {
    // The kernel truncates to 32 bits here; when no period is crossed delta < 1024.
    let mut contrib = delta as u32;
    let mut delta = delta + sa.period_contrib as u64;
    let periods = delta / 1024;

    if periods != 0 {
        sa.load_sum = decay_load(sa.load_sum, periods);
        sa.runnable_sum = decay_load(sa.runnable_sum, periods);
        sa.util_sum = decay_load(sa.util_sum as u64, periods) as u32;

        delta %= 1024;
        if load != 0 {
            contrib = accumulate_pelt_segments(periods, 1024 - sa.period_contrib, delta as u32);
        }
    }
    sa.period_contrib = delta as u32;

    if load != 0 {
        sa.load_sum = sa.load_sum.wrapping_add(load.wrapping_mul(contrib as u64));
    }
    if runnable != 0 {
        sa.runnable_sum = sa
            .runnable_sum
            .wrapping_add(runnable.wrapping_mul(contrib as u64) << SCHED_CAPACITY_SHIFT);
    }
    if running {
        sa.util_sum = sa.util_sum.wrapping_add(contrib << SCHED_CAPACITY_SHIFT);
    }
    periods
}

/// `___update_load_sum(now, sa, load, runnable, running)` (`kernel/sched/pelt.c`).
///
/// `now` is a PELT clock in ns. Time is counted in 1024-ns units: the sub-unit remainder
/// stays in `now - last_update_time` for the next call. If time went backwards the
/// entity is resynchronised and nothing accrues. Returns true when at least one period
/// boundary was crossed, i.e. when the averages must be recomputed.
#[inline]
pub fn update_load_sum(
    now: u64,
    sa: &mut SchedAvg,
    load: u64,
    runnable: u64,
    running: bool,
) -> bool {
    let mut delta = now.wrapping_sub(sa.last_update_time);
    if (delta as i64) < 0 {
        sa.last_update_time = now;
        return false;
    }

    delta >>= 10;
    if delta == 0 {
        return false;
    }
    sa.last_update_time = sa.last_update_time.wrapping_add(delta << 10);

    // A dequeued entity can still be cfs_rq->curr; with no load it neither runs nor is
    // runnable as far as PELT is concerned.
    let (runnable, running) = if load == 0 {
        (0, false)
    } else {
        (runnable, running)
    };

    accumulate_sum(delta, sa, load, runnable, running) != 0
}

/// Whether [`update_load_sum`] at `now` would cross a period boundary and return true:
/// the condition under which 6.12's `__update_load_avg_se`, `__update_load_avg_blocked_se`
/// and `__update_load_avg_cfs_rq` recompute the averages and fire `pelt_se_tp` or
/// `pelt_cfs_tp`. It reads `sa` only, so a tracer can ask before the update.
#[inline]
pub fn update_crosses_period(now: u64, sa: &SchedAvg) -> bool {
    let delta = now.wrapping_sub(sa.last_update_time);
    if (delta as i64) < 0 {
        return false;
    }
    let delta = delta >> 10;
    delta != 0 && (delta + sa.period_contrib as u64) / 1024 != 0
}

/// `___update_load_avg(sa, load)` (`kernel/sched/pelt.c`): turn the sums into averages
/// with the divider for the current position in the period, so the averages do not
/// oscillate within a period. `load` multiplies `load_sum` (the se weight for an entity,
/// 1 for a cfs_rq whose `load_sum` is already weighted).
#[inline]
pub fn update_load_avg(sa: &mut SchedAvg, load: u64) {
    let divider = get_pelt_divider(sa) as u64;
    sa.load_avg = load.wrapping_mul(sa.load_sum) / divider;
    sa.runnable_avg = sa.runnable_sum / divider;
    sa.util_avg = sa.util_sum as u64 / divider;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_unit_deltas_do_not_accrue() {
        let mut sa = SchedAvg {
            last_update_time: 1 << 20,
            ..SchedAvg::default()
        };
        // 1023 ns is less than one 1024-ns unit: nothing moves.
        assert!(!update_load_sum((1 << 20) + 1023, &mut sa, 1, 1, true));
        assert_eq!(sa.last_update_time, 1 << 20);
        assert_eq!(sa.util_sum, 0);
        // 2047 ns is one unit: last_update_time moves by exactly 1024, the 1023 ns
        // remainder is carried, and one unit of running adds 1 << 10.
        assert!(!update_load_sum((1 << 20) + 2047, &mut sa, 1, 1, true));
        assert_eq!(sa.last_update_time, (1 << 20) + 1024);
        assert_eq!(sa.util_sum, 1024);
        assert_eq!(sa.runnable_sum, 1024);
        assert_eq!(sa.load_sum, 1);
        assert_eq!(sa.period_contrib, 1);
    }

    /// The tracer's question, asked before each update, answers what the update returns.
    #[test]
    fn crossing_a_period_is_known_before_the_update() {
        let mut sa = SchedAvg {
            last_update_time: 1 << 20,
            ..SchedAvg::default()
        };
        let mut now = 1 << 20;
        for step in [1023u64, 2047, 5_000, 700_000, 1_048_576, 3, 999_999, 0] {
            now += step;
            let predicted = update_crosses_period(now, &sa);
            assert_eq!(
                predicted,
                update_load_sum(now, &mut sa, 1, 1, true),
                "{step}"
            );
        }
        assert!(!update_crosses_period(5, &sa));
    }

    #[test]
    fn time_going_backwards_resyncs() {
        let mut sa = SchedAvg {
            last_update_time: 10_000,
            util_sum: 5,
            ..SchedAvg::default()
        };
        assert!(!update_load_sum(5_000, &mut sa, 1, 1, true));
        assert_eq!(sa.last_update_time, 5_000);
        assert_eq!(sa.util_sum, 5);
    }

    #[test]
    fn no_load_forces_no_running() {
        let mut sa = SchedAvg::default();
        // 3 periods of "running" with load 0: only decay, nothing accrues.
        assert!(update_load_sum(3 << 20, &mut sa, 0, 1, true));
        assert_eq!((sa.util_sum, sa.runnable_sum, sa.load_sum), (0, 0, 0));
    }

    #[test]
    fn divider_tracks_period_contrib() {
        let sa = SchedAvg {
            period_contrib: 100,
            ..SchedAvg::default()
        };
        assert_eq!(get_pelt_divider(&sa), 47742 - 1024 + 100);
        assert_eq!(PELT_MIN_DIVIDER, 46718);
    }
}
