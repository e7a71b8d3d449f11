//! util_est: the utilization a task is expected to have when it next runs, sampled from
//! `util_avg` each time the task goes to sleep (`kernel/sched/fair.c`, `pelt.h`).
//!
//! Two forms are supported:
//! - **6.12** (v6.8 and later): one field, the EWMA itself, which follows increases at
//!   once and smooths decreases with weight 1/4; bit 31 is `UTIL_AVG_UNCHANGED`.
//! - **Legacy** (v4.17..v6.7, as last written in v6.7): `{enqueued, ewma}`; `enqueued` is
//!   the last sample (with the flag in bit 31), the EWMA moves by 1/4 of the difference,
//!   and `UTIL_EST_FASTUP` (v5.9..v6.7, on by default) makes it follow increases at once.
//!
//! Both live in [`SchedAvg`]'s `util_est` / `util_est_ewma` fields (see its doc).

use crate::avg::SchedAvg;
use crate::SCHED_CAPACITY_SCALE;

/// `UTIL_AVG_UNCHANGED` (`include/linux/sched.h`): set when util_est is sampled, cleared
/// when `util_avg` next changes, so a task whose average did not move is not resampled.
pub const UTIL_AVG_UNCHANGED: u32 = 0x8000_0000;

/// `UTIL_EST_WEIGHT_SHIFT` (`include/linux/sched.h`): new samples weigh `1 / 2^2`.
pub const UTIL_EST_WEIGHT_SHIFT: u32 = 2;

/// `UTIL_EST_MARGIN` (`kernel/sched/fair.c`): about 1% of the capacity scale (10).
pub const UTIL_EST_MARGIN: u32 = (SCHED_CAPACITY_SCALE / 100) as u32;

/// Which util_est the emulated kernel has, and whether `sched_feat(UTIL_EST)` is on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum UtilEstMode {
    /// `NO_UTIL_EST`: no estimate is kept (every util_est value stays 0).
    Off,
    /// The single-field form of v6.8+ as in 6.12.117 (the default).
    #[default]
    V6_12,
    /// The `{enqueued, ewma}` form of v4.17..v6.7, with or without `UTIL_EST_FASTUP`.
    Legacy {
        /// `sched_feat(UTIL_EST_FASTUP)`.
        fastup: bool,
    },
}

impl UtilEstMode {
    /// The names [`UtilEstMode::parse`] takes, for error messages.
    pub const NAMES: &'static str =
        "6.12, legacy (= legacy-fastup), legacy-fastup, legacy-nofastup, off";

    /// `sched_feat(UTIL_EST)`.
    pub fn enabled(self) -> bool {
        self != UtilEstMode::Off
    }

    /// Parses a form's name: `6.12` (v6.8+, the default), `legacy-nofastup` (the
    /// `{enqueued, ewma}` form as v4.17 merged it, seed 003's), `legacy-fastup` (the same
    /// with v5.9's `UTIL_EST_FASTUP`, as v5.9-v6.7 ran it; `legacy` says the same), `off`
    /// (`NO_UTIL_EST`).
    pub fn parse(text: &str) -> Option<UtilEstMode> {
        match text.trim() {
            "6.12" => Some(UtilEstMode::V6_12),
            "legacy" | "legacy-fastup" => Some(UtilEstMode::Legacy { fastup: true }),
            "legacy-nofastup" => Some(UtilEstMode::Legacy { fastup: false }),
            "off" => Some(UtilEstMode::Off),
            _ => None,
        }
    }

    /// The name [`UtilEstMode::parse`] reads back.
    pub fn name(self) -> &'static str {
        match self {
            UtilEstMode::V6_12 => "6.12",
            UtilEstMode::Legacy { fastup: true } => "legacy-fastup",
            UtilEstMode::Legacy { fastup: false } => "legacy-nofastup",
            UtilEstMode::Off => "off",
        }
    }
}

/// `cfs_se_util_change(avg)` (`kernel/sched/pelt.h`, both forms): `util_avg` has just been
/// recomputed, so clear `UTIL_AVG_UNCHANGED` from the (enqueued) estimate. The caller
/// checks `sched_feat(UTIL_EST)`.
#[inline]
pub fn cfs_se_util_change(sa: &mut SchedAvg) {
    if sa.util_est & UTIL_AVG_UNCHANGED != 0 {
        sa.util_est &= !UTIL_AVG_UNCHANGED;
    }
}

/// `task_util(p)` (`kernel/sched/fair.c`).
#[inline]
pub fn task_util(p: &SchedAvg) -> u64 {
    p.util_avg
}

/// `task_runnable(p)` (`kernel/sched/fair.c`).
#[inline]
pub fn task_runnable(p: &SchedAvg) -> u64 {
    p.runnable_avg
}

/// `_task_util_est(p)` (`kernel/sched/fair.c`): the task's estimate without the flag;
/// `max(ewma, enqueued)` in the legacy form.
#[inline]
pub fn task_util_est_only(p: &SchedAvg, mode: UtilEstMode) -> u32 {
    match mode {
        UtilEstMode::Legacy { .. } => p.util_est_ewma.max(p.util_est & !UTIL_AVG_UNCHANGED),
        UtilEstMode::Off | UtilEstMode::V6_12 => p.util_est & !UTIL_AVG_UNCHANGED,
    }
}

/// `task_util_est(p)` (`kernel/sched/fair.c`): `max(task_util, _task_util_est)`, what
/// placement and capacity-fitness decisions read.
#[inline]
pub fn task_util_est(p: &SchedAvg, mode: UtilEstMode) -> u64 {
    task_util(p).max(task_util_est_only(p, mode) as u64)
}

/// `util_est_enqueue(cfs_rq, p)` (`kernel/sched/fair.c`): add the task's estimate to the
/// root cfs_rq's sum.
pub fn util_est_enqueue(cfs: &mut SchedAvg, p: &SchedAvg, mode: UtilEstMode) {
    if !mode.enabled() {
        return;
    }
    cfs.util_est = cfs.util_est.wrapping_add(task_util_est_only(p, mode));
}

/// `util_est_dequeue(cfs_rq, p)` (`kernel/sched/fair.c`): remove the task's estimate from
/// the root cfs_rq's sum, clamping at 0.
pub fn util_est_dequeue(cfs: &mut SchedAvg, p: &SchedAvg, mode: UtilEstMode) {
    if !mode.enabled() {
        return;
    }
    let enqueued = cfs.util_est;
    cfs.util_est = enqueued - enqueued.min(task_util_est_only(p, mode));
}

/// `within_margin(value, margin)` (`kernel/sched/fair.c`, legacy form): `|value| < margin`
/// computed in 32-bit unsigned arithmetic.
#[inline]
pub fn within_margin(value: u32, margin: u32) -> bool {
    value.wrapping_add(margin).wrapping_sub(1) < 2 * margin - 1
}

/// `util_est_update(cfs_rq, p, task_sleep)` (`kernel/sched/fair.c`): sample the task's
/// utilization at the end of an activation. `cpu_capacity` is
/// `arch_scale_cpu_capacity()` of the task's CPU.
///
/// Only a real sleep counts (not a migration), and only if `util_avg` changed since the
/// last sample. 6.12 form: increases are taken at once; a decrease within
/// `UTIL_EST_MARGIN` keeps the EWMA; a sample above the CPU's capacity is dropped without
/// re-arming the flag; if the task was starved (`runnable` more than the margin above
/// `util`) the EWMA is not lowered; otherwise it moves a quarter of the way down.
/// Legacy form: see [`util_est_update_legacy`].
pub fn util_est_update(p: &mut SchedAvg, task_sleep: bool, cpu_capacity: u64, mode: UtilEstMode) {
    match mode {
        UtilEstMode::Off => {}
        UtilEstMode::V6_12 => util_est_update_v6_12(p, task_sleep, cpu_capacity),
        UtilEstMode::Legacy { fastup } => {
            util_est_update_legacy(p, task_sleep, cpu_capacity, fastup)
        }
    }
}

/// `util_est_update()` of 6.12.117 (single field).
fn util_est_update_v6_12(p: &mut SchedAvg, task_sleep: bool, cpu_capacity: u64) {
    if !task_sleep {
        return;
    }
    let mut ewma = p.util_est;
    if ewma & UTIL_AVG_UNCHANGED != 0 {
        return;
    }
    // `unsigned int dequeued = task_util(p)`.
    let dequeued = task_util(p) as u32;

    'done: {
        if ewma <= dequeued {
            ewma = dequeued;
            break 'done;
        }
        let last_ewma_diff = ewma - dequeued;
        if last_ewma_diff < UTIL_EST_MARGIN {
            break 'done;
        }
        if dequeued as u64 > cpu_capacity {
            return;
        }
        if (dequeued.wrapping_add(UTIL_EST_MARGIN) as u64) < task_runnable(p) {
            break 'done;
        }
        ewma <<= UTIL_EST_WEIGHT_SHIFT;
        ewma = ewma.wrapping_sub(last_ewma_diff);
        ewma >>= UTIL_EST_WEIGHT_SHIFT;
    }
    p.util_est = ewma | UTIL_AVG_UNCHANGED;
}

/// `util_est_update()` of v6.7, the last `{enqueued, ewma}` version: the new sample
/// becomes `enqueued`; with `fastup` an increase resets the EWMA; if the EWMA is within
/// the margin of the sample it is kept (and `enqueued` is only rewritten if it itself
/// moved by the margin or more); samples above the CPU's capacity are dropped; a starved
/// task keeps its EWMA; otherwise the EWMA moves a quarter of the difference, up or down.
pub fn util_est_update_legacy(p: &mut SchedAvg, task_sleep: bool, cpu_capacity: u64, fastup: bool) {
    if !task_sleep {
        return;
    }
    let mut enqueued = p.util_est;
    let mut ewma = p.util_est_ewma;
    if enqueued & UTIL_AVG_UNCHANGED != 0 {
        return;
    }
    let mut last_enqueued_diff = enqueued;
    enqueued = task_util(p) as u32;

    'done: {
        if fastup && ewma < enqueued {
            ewma = enqueued;
            break 'done;
        }
        // The kernel's `long` differences are only ever inspected modulo 2^32
        // (within_margin casts, the EWMA is 32-bit), so u32 wrapping is exact.
        let last_ewma_diff = enqueued.wrapping_sub(ewma);
        last_enqueued_diff = last_enqueued_diff.wrapping_sub(enqueued);
        if within_margin(last_ewma_diff, UTIL_EST_MARGIN) {
            if !within_margin(last_enqueued_diff, UTIL_EST_MARGIN) {
                break 'done;
            }
            return;
        }
        if task_util(p) > cpu_capacity {
            return;
        }
        if (enqueued.wrapping_add(UTIL_EST_MARGIN) as u64) < task_runnable(p) {
            break 'done;
        }
        ewma <<= UTIL_EST_WEIGHT_SHIFT;
        ewma = ewma.wrapping_add(last_ewma_diff);
        ewma >>= UTIL_EST_WEIGHT_SHIFT;
    }
    p.util_est = enqueued | UTIL_AVG_UNCHANGED;
    p.util_est_ewma = ewma;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(util: u64, runnable: u64, util_est: u32) -> SchedAvg {
        SchedAvg {
            util_avg: util,
            runnable_avg: runnable,
            util_est,
            ..SchedAvg::default()
        }
    }

    #[test]
    fn v612_increase_is_immediate_and_flags() {
        let mut p = task(300, 300, 100);
        util_est_update(&mut p, true, 1024, UtilEstMode::V6_12);
        assert_eq!(p.util_est, 300 | UTIL_AVG_UNCHANGED);
        // Flag set: a second sample without a util change is ignored.
        p.util_avg = 10;
        util_est_update(&mut p, true, 1024, UtilEstMode::V6_12);
        assert_eq!(p.util_est, 300 | UTIL_AVG_UNCHANGED);
        cfs_se_util_change(&mut p);
        assert_eq!(p.util_est, 300);
    }

    #[test]
    fn v612_decrease_moves_a_quarter() {
        // ewma 400, sample 200: ((400 << 2) - 200) >> 2 = 1400 >> 2 = 350.
        let mut p = task(200, 200, 400);
        util_est_update(&mut p, true, 1024, UtilEstMode::V6_12);
        assert_eq!(p.util_est & !UTIL_AVG_UNCHANGED, 350);
        // ewma 403, sample 400: ((403 << 2) - 3) >> 2 -- not reached, diff 3 < margin.
        let mut p = task(400, 400, 403);
        util_est_update(&mut p, true, 1024, UtilEstMode::V6_12);
        assert_eq!(p.util_est, 403 | UTIL_AVG_UNCHANGED);
        // Starved: runnable 300 > 200 + 10 keeps the EWMA.
        let mut p = task(200, 300, 400);
        util_est_update(&mut p, true, 1024, UtilEstMode::V6_12);
        assert_eq!(p.util_est, 400 | UTIL_AVG_UNCHANGED);
        // Not a sleep: nothing.
        let mut p = task(200, 200, 400);
        util_est_update(&mut p, false, 1024, UtilEstMode::V6_12);
        assert_eq!(p.util_est, 400);
    }

    #[test]
    fn v612_sample_above_capacity_is_dropped_unflagged() {
        // ewma 900, sample 500 on a 446 CPU: diff 400 >= margin, 500 > 446 -> return.
        let mut p = task(500, 500, 900);
        util_est_update(&mut p, true, 446, UtilEstMode::V6_12);
        assert_eq!(p.util_est, 900);
    }

    #[test]
    fn legacy_ewma_moves_both_ways() {
        // No fastup: enqueued 0 -> sample 400; diff = 400 - 0; ewma = (0*4 + 400) >> 2 = 100.
        let mode = UtilEstMode::Legacy { fastup: false };
        let mut p = task(400, 400, 0);
        util_est_update(&mut p, true, 1024, mode);
        assert_eq!(p.util_est, 400 | UTIL_AVG_UNCHANGED);
        assert_eq!(p.util_est_ewma, 100);
        assert_eq!(task_util_est_only(&p, mode), 400);
        // Down: ewma 100, sample 20 -> diff = -80; (400 - 80) >> 2 = 80.
        cfs_se_util_change(&mut p);
        p.util_avg = 20;
        p.runnable_avg = 20;
        util_est_update(&mut p, true, 1024, mode);
        assert_eq!(p.util_est_ewma, 80);
        assert_eq!(p.util_est, 20 | UTIL_AVG_UNCHANGED);
        // Fastup: sample above ewma replaces it.
        let mut p = task(400, 400, 0);
        util_est_update(&mut p, true, 1024, UtilEstMode::Legacy { fastup: true });
        assert_eq!(p.util_est_ewma, 400);
    }

    #[test]
    fn legacy_margin_rules() {
        let mode = UtilEstMode::Legacy { fastup: false };
        // ewma 100, previous enqueued 100, sample 105: both within margin -> untouched.
        let mut p = task(105, 105, 100);
        p.util_est_ewma = 100;
        util_est_update(&mut p, true, 1024, mode);
        assert_eq!((p.util_est, p.util_est_ewma), (100, 100));
        // ewma 100, previous enqueued 200, sample 95: ewma within margin, enqueued moved
        // by 105 -> enqueued rewritten (with the flag), ewma kept.
        let mut p = task(95, 95, 200);
        p.util_est_ewma = 100;
        util_est_update(&mut p, true, 1024, mode);
        assert_eq!(
            (p.util_est, p.util_est_ewma),
            (95 | UTIL_AVG_UNCHANGED, 100)
        );
        assert!(within_margin(9, 10) && within_margin(9u32.wrapping_neg(), 10));
        assert!(!within_margin(10, 10) && !within_margin(10u32.wrapping_neg(), 10));
    }

    #[test]
    fn cfs_sum_clamps() {
        let mode = UtilEstMode::V6_12;
        let mut cfs = SchedAvg::default();
        let p = task(0, 0, 300 | UTIL_AVG_UNCHANGED);
        util_est_enqueue(&mut cfs, &p, mode);
        assert_eq!(cfs.util_est, 300);
        cfs.util_est = 100;
        util_est_dequeue(&mut cfs, &p, mode);
        assert_eq!(cfs.util_est, 0);
        util_est_enqueue(&mut cfs, &p, UtilEstMode::Off);
        assert_eq!(cfs.util_est, 0);
    }
}
