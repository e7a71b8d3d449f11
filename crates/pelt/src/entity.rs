//! The signals of a sched_entity and of a cfs_rq, and the hooks that move an entity's
//! contribution in and out of a cfs_rq (`kernel/sched/pelt.c` and the PELT part of
//! `kernel/sched/fair.c`).
//!
//! This crate owns no runqueue: callers pass the few facts PELT reads from them
//! ([`SeInputs`], [`CfsRqInputs`]) and the `now` of the cfs_rq's PELT clock.

use crate::avg::{
    get_pelt_divider, update_crosses_period, update_load_avg, update_load_sum, SchedAvg,
    PELT_MIN_DIVIDER,
};
use crate::util_est::cfs_se_util_change;
use crate::SCHED_CAPACITY_SHIFT;

/// What PELT reads from a sched_entity at an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeInputs {
    /// `se_weight(se)`: `scale_load_down(se->load.weight)`, 1024 for a nice-0 task.
    pub weight: u64,
    /// `se->on_rq`: the entity is queued (or is current and not yet dequeued).
    pub on_rq: bool,
    /// `se_runnable(se)`: for a task, on_rq and not delayed (0 or 1); for a group
    /// entity, its `runnable_weight` (the group cfs_rq's runnable count).
    pub runnable: u64,
    /// `cfs_rq->curr == se`.
    pub running: bool,
}

/// What PELT reads from a cfs_rq at an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CfsRqInputs {
    /// `scale_load_down(cfs_rq->load.weight)`: the summed weight of queued entities.
    pub load: u64,
    /// `cfs_rq->h_nr_queued - cfs_rq->h_nr_delayed` (6.12.117).
    pub runnable: u64,
    /// `cfs_rq->curr != NULL`.
    pub running: bool,
}

/// Load removed from a cfs_rq by a task that left without the cfs_rq's lock
/// (`cfs_rq->removed`), folded in at the next [`update_cfs_rq_load_avg`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Removed {
    /// Number of entities removed since the last fold.
    pub nr: u32,
    /// Summed `load_avg` of the removed entities.
    pub load_avg: u64,
    /// Summed `util_avg` of the removed entities.
    pub util_avg: u64,
    /// Summed `runnable_avg` of the removed entities.
    pub runnable_avg: u64,
}

/// The PELT part of `struct cfs_rq`: its averages, pending removals and pending
/// propagation to the parent group entity. Laid out in declaration order, the averages
/// first: a load balance reads them of every CPU it scans.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct CfsRqAvg {
    /// `cfs_rq->avg`.
    pub avg: SchedAvg,
    /// `cfs_rq->removed`.
    pub removed: Removed,
    /// `cfs_rq->propagate`: a change must be propagated to the parent entity.
    pub propagate: bool,
    /// `cfs_rq->prop_runnable_sum`: the unweighted load_sum change to propagate.
    pub prop_runnable_sum: i64,
}

/// `scale_load_down(w)` (`kernel/sched/sched.h`, 64-bit): drop the 10 extra fixed-point
/// bits of a load weight, but never below 2 for a non-zero weight.
#[inline]
pub fn scale_load_down(w: u64) -> u64 {
    if w == 0 {
        0
    } else {
        (w >> SCHED_CAPACITY_SHIFT).max(2)
    }
}

/// `add_positive(ptr, val)` (`kernel/sched/fair.c`): add a signed value to an unsigned
/// one, clamping at 0 when a negative value would wrap.
#[inline]
pub fn add_positive_u64(var: &mut u64, val: i64) {
    let res = var.wrapping_add(val as u64);
    *var = if val < 0 && res > *var { 0 } else { res };
}

/// `add_positive(ptr, val)` on a 32-bit field (`util_sum`).
#[inline]
pub fn add_positive_u32(var: &mut u32, val: i64) {
    // The macro converts `val` to the type of `val` (long) and adds it to the u32: the
    // addition wraps modulo 2^32 once stored.
    let res = var.wrapping_add(val as u32);
    *var = if val < 0 && res > *var { 0 } else { res };
}

/// `sub_positive(ptr, val)` (`kernel/sched/fair.c`): unsigned subtraction clamped at 0.
#[inline]
pub fn sub_positive_u64(var: &mut u64, val: u64) {
    let res = var.wrapping_sub(val);
    *var = if res > *var { 0 } else { res };
}

/// `sub_positive(ptr, val)` on a 32-bit field; `val` is first converted to u32 as the
/// macro's `typeof(*ptr) val = (_val)` does.
#[inline]
pub fn sub_positive_u32(var: &mut u32, val: u64) {
    let val = val as u32;
    let res = var.wrapping_sub(val);
    *var = if res > *var { 0 } else { res };
}

/// `max_t(u32, a, b)`: both operands truncated to 32 bits, as the kernel's lower-bound
/// fix-ups of `*_sum` after a removal do.
#[inline]
fn max_u32(a: u64, b: u64) -> u64 {
    (a as u32).max(b as u32) as u64
}

/// `__update_load_avg_blocked_se(now, se)` (`kernel/sched/pelt.c`): decay a sleeping
/// entity (no load, not runnable, not running). Returns true if the averages changed.
pub fn update_load_avg_blocked_se(now: u64, se: &mut SchedAvg, weight: u64) -> bool {
    if update_load_sum(now, se, 0, 0, false) {
        update_load_avg(se, weight);
        return true;
    }
    false
}

/// `__update_load_avg_se(now, cfs_rq, se)` (`kernel/sched/pelt.c`): accrue a queued or
/// sleeping entity, then, if a period was crossed, recompute its averages and clear
/// util_est's `UTIL_AVG_UNCHANGED` flag (`cfs_se_util_change`) when `util_est_feature`
/// (`sched_feat(UTIL_EST)`) is on.
pub fn update_load_avg_se(
    now: u64,
    se: &mut SchedAvg,
    inp: SeInputs,
    util_est_feature: bool,
) -> bool {
    if update_load_sum(now, se, inp.on_rq as u64, inp.runnable, inp.running) {
        update_load_avg(se, inp.weight);
        if util_est_feature {
            cfs_se_util_change(se);
        }
        return true;
    }
    false
}

/// `__update_load_avg_cfs_rq(now, cfs_rq)` (`kernel/sched/pelt.c`): accrue a cfs_rq's own
/// sums (its `load_sum` is weighted, so the averages use a multiplier of 1).
pub fn update_load_avg_cfs_rq(now: u64, cfs: &mut SchedAvg, inp: CfsRqInputs) -> bool {
    if update_load_sum(now, cfs, inp.load, inp.runnable, inp.running) {
        update_load_avg(cfs, 1);
        return true;
    }
    false
}

/// `add_tg_cfs_propagate(cfs_rq, runnable_sum)` (`kernel/sched/fair.c`): record a load
/// change that the parent group entity must take into account.
///
/// The kernel compiles this to nothing without `CONFIG_FAIR_GROUP_SCHED`; the flag and
/// sum are kept here unconditionally and are simply ignored by callers that have no
/// task groups.
pub fn add_tg_cfs_propagate(cfs: &mut CfsRqAvg, runnable_sum: i64) {
    cfs.propagate = true;
    cfs.prop_runnable_sum = cfs.prop_runnable_sum.wrapping_add(runnable_sum);
}

/// `update_cfs_rq_load_avg(now, cfs_rq)` (`kernel/sched/fair.c`): fold pending removals
/// into the cfs_rq (keeping each `*_sum` above `*_avg * PELT_MIN_DIVIDER`), then accrue
/// it. Returns true if the load decayed or load was removed.
pub fn update_cfs_rq_load_avg(now: u64, cfs: &mut CfsRqAvg, inp: CfsRqInputs) -> bool {
    let mut decayed = false;
    if cfs.removed.nr != 0 {
        let divider = get_pelt_divider(&cfs.avg) as u64;
        let removed = std::mem::take(&mut cfs.removed);
        let sa = &mut cfs.avg;

        let r = removed.load_avg;
        sub_positive_u64(&mut sa.load_avg, r);
        sub_positive_u64(&mut sa.load_sum, r.wrapping_mul(divider));
        sa.load_sum = max_u32(sa.load_sum, sa.load_avg * PELT_MIN_DIVIDER as u64);

        let r = removed.util_avg;
        sub_positive_u64(&mut sa.util_avg, r);
        sub_positive_u32(&mut sa.util_sum, r.wrapping_mul(divider));
        sa.util_sum = max_u32(sa.util_sum as u64, sa.util_avg * PELT_MIN_DIVIDER as u64) as u32;

        let r = removed.runnable_avg;
        sub_positive_u64(&mut sa.runnable_avg, r);
        sub_positive_u64(&mut sa.runnable_sum, r.wrapping_mul(divider));
        sa.runnable_sum = max_u32(sa.runnable_sum, sa.runnable_avg * PELT_MIN_DIVIDER as u64);

        // removed_runnable is the unweighted removed load; `-(long)(x) >> 10` is an
        // arithmetic shift of a negative number in the kernel.
        let prop = (removed.runnable_avg.wrapping_mul(divider) as i64).wrapping_neg()
            >> SCHED_CAPACITY_SHIFT;
        add_tg_cfs_propagate(cfs, prop);
        decayed = true;
    }
    decayed |= update_load_avg_cfs_rq(now, &mut cfs.avg, inp);
    decayed
}

/// `enqueue_load_avg(cfs_rq, se)` (`kernel/sched/fair.c`): add the entity's load to the
/// cfs_rq's.
pub fn enqueue_load_avg(cfs: &mut CfsRqAvg, se: &SchedAvg, weight: u64) {
    cfs.avg.load_avg = cfs.avg.load_avg.wrapping_add(se.load_avg);
    cfs.avg.load_sum = cfs
        .avg
        .load_sum
        .wrapping_add(weight.wrapping_mul(se.load_sum));
}

/// `dequeue_load_avg(cfs_rq, se)` (`kernel/sched/fair.c`): remove the entity's load from
/// the cfs_rq's, clamping at 0 and at the `load_avg * PELT_MIN_DIVIDER` lower bound.
pub fn dequeue_load_avg(cfs: &mut CfsRqAvg, se: &SchedAvg, weight: u64) {
    sub_positive_u64(&mut cfs.avg.load_avg, se.load_avg);
    sub_positive_u64(&mut cfs.avg.load_sum, weight.wrapping_mul(se.load_sum));
    cfs.avg.load_sum = max_u32(cfs.avg.load_sum, cfs.avg.load_avg * PELT_MIN_DIVIDER as u64);
}

/// `attach_entity_load_avg(cfs_rq, se)` (`kernel/sched/fair.c`): align a (migrated or new)
/// entity with the cfs_rq's decay window and add its averages to the cfs_rq.
///
/// The entity's sums are rebuilt from its averages with the cfs_rq's divider (the
/// kernel's "not strictly correct" truncation), and a zero `load_sum` becomes 1. Call
/// [`update_cfs_rq_load_avg`] first so the cfs_rq's `last_update_time` is current.
pub fn attach_entity_load_avg(cfs: &mut CfsRqAvg, se: &mut SchedAvg, weight: u64) {
    let divider = get_pelt_divider(&cfs.avg);

    se.last_update_time = cfs.avg.last_update_time;
    se.period_contrib = cfs.avg.period_contrib;

    se.util_sum = (se.util_avg as u32).wrapping_mul(divider);
    se.runnable_sum = se.runnable_avg.wrapping_mul(divider as u64);
    se.load_sum = se.load_avg.wrapping_mul(divider as u64);
    if weight < se.load_sum {
        se.load_sum /= weight;
    } else {
        se.load_sum = 1;
    }

    enqueue_load_avg(cfs, se, weight);
    cfs.avg.util_avg = cfs.avg.util_avg.wrapping_add(se.util_avg);
    cfs.avg.util_sum = cfs.avg.util_sum.wrapping_add(se.util_sum);
    cfs.avg.runnable_avg = cfs.avg.runnable_avg.wrapping_add(se.runnable_avg);
    cfs.avg.runnable_sum = cfs.avg.runnable_sum.wrapping_add(se.runnable_sum);

    add_tg_cfs_propagate(cfs, se.load_sum as i64);
}

/// `detach_entity_load_avg(cfs_rq, se)` (`kernel/sched/fair.c`): subtract an entity that
/// leaves the cfs_rq under its lock (load-balance migration, class or group change).
/// Call [`update_cfs_rq_load_avg`] and the entity's own update first.
pub fn detach_entity_load_avg(cfs: &mut CfsRqAvg, se: &SchedAvg, weight: u64) {
    dequeue_load_avg(cfs, se, weight);
    sub_positive_u64(&mut cfs.avg.util_avg, se.util_avg);
    sub_positive_u32(&mut cfs.avg.util_sum, se.util_sum as u64);
    cfs.avg.util_sum = max_u32(
        cfs.avg.util_sum as u64,
        cfs.avg.util_avg * PELT_MIN_DIVIDER as u64,
    ) as u32;

    sub_positive_u64(&mut cfs.avg.runnable_avg, se.runnable_avg);
    sub_positive_u64(&mut cfs.avg.runnable_sum, se.runnable_sum);
    cfs.avg.runnable_sum = max_u32(
        cfs.avg.runnable_sum,
        cfs.avg.runnable_avg * PELT_MIN_DIVIDER as u64,
    );

    add_tg_cfs_propagate(cfs, (se.load_sum as i64).wrapping_neg());
}

/// `sync_entity_load_avg(se)` (`kernel/sched/fair.c`): decay a dequeued entity up to its
/// cfs_rq's `last_update_time`, without touching the cfs_rq.
pub fn sync_entity_load_avg(cfs: &CfsRqAvg, se: &mut SchedAvg, weight: u64) {
    update_load_avg_blocked_se(cfs.avg.last_update_time, se, weight);
}

/// `remove_entity_load_avg(se)` (`kernel/sched/fair.c`): the wakeup-migration path. The
/// entity is synced to its old cfs_rq and its averages are queued in `removed`, to be
/// subtracted at that cfs_rq's next update. The caller then sets
/// `se.last_update_time = 0` (as `migrate_task_rq_fair` does) so that the next enqueue
/// attaches it to the new cfs_rq.
pub fn remove_entity_load_avg(cfs: &mut CfsRqAvg, se: &mut SchedAvg, weight: u64) {
    sync_entity_load_avg(cfs, se, weight);
    cfs.removed.nr += 1;
    cfs.removed.util_avg = cfs.removed.util_avg.wrapping_add(se.util_avg);
    cfs.removed.load_avg = cfs.removed.load_avg.wrapping_add(se.load_avg);
    cfs.removed.runnable_avg = cfs.removed.runnable_avg.wrapping_add(se.runnable_avg);
}

/// Optional actions of `update_load_avg(cfs_rq, se, flags)` (`UPDATE_TG`,
/// `SKIP_AGE_LOAD`, `DO_ATTACH`, `DO_DETACH` in `kernel/sched/fair.c`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpdateFlags {
    /// `UPDATE_TG`: the caller wants the task-group load refreshed if load changed
    /// (reported back in [`UpdateOutcome::update_tg`]; this crate has no task groups).
    pub update_tg: bool,
    /// `SKIP_AGE_LOAD`: do not age the entity.
    pub skip_age_load: bool,
    /// `DO_ATTACH`: attach a migrated or new entity (`last_update_time == 0`).
    pub do_attach: bool,
    /// `DO_DETACH`: detach an entity leaving with the task (on-rq migration).
    pub do_detach: bool,
}

/// What `update_load_avg` did, for the caller's cpufreq and task-group hooks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpdateOutcome {
    /// The cfs_rq's load decayed or changed (`decayed`).
    pub decayed: bool,
    /// The entity was attached.
    pub attached: bool,
    /// The entity was detached.
    pub detached: bool,
    /// `update_tg_load_avg(cfs_rq)` would run now.
    pub update_tg: bool,
    /// `cfs_rq_util_change(cfs_rq, 0)` would run now (schedutil's hook).
    pub util_change: bool,
}

/// `update_load_avg(cfs_rq, se, flags)` (`kernel/sched/fair.c`) for a task entity: age the
/// entity (unless it is unattached or `SKIP_AGE_LOAD`), then the cfs_rq, then attach or
/// detach it on request.
///
/// `now` is `cfs_rq_clock_pelt(cfs_rq)`. `cfs_inp` describes the cfs_rq *before* the
/// caller changes its weight for this enqueue/dequeue, as in the kernel where the
/// weight is accounted after this call. Group-entity propagation
/// (`propagate_entity_load_avg`) is a no-op for tasks and is provided separately by
/// [`crate::group::propagate_entity_load_avg`].
pub fn update_load_avg_task(
    now: u64,
    cfs: &mut CfsRqAvg,
    cfs_inp: CfsRqInputs,
    se: &mut SchedAvg,
    se_inp: SeInputs,
    flags: UpdateFlags,
    util_est_feature: bool,
) -> UpdateOutcome {
    update_load_avg_task_traced(
        now,
        cfs,
        cfs_inp,
        se,
        se_inp,
        flags,
        util_est_feature,
        &mut (),
    )
}

/// The bare tracepoints 6.12.117 fires inside `update_load_avg`, for a tracer that
/// listens: `pelt_se_tp(se)` in `__update_load_avg_se` and `pelt_cfs_tp(cfs_rq)` in
/// `__update_load_avg_cfs_rq` when the update crossed a period
/// ([`update_crosses_period`]), and `pelt_cfs_tp` again at the end of
/// `attach_entity_load_avg` and `detach_entity_load_avg`.
pub trait PeltTracer {
    /// Whether it listens; `()` does not, and the update then does no tracer work.
    const ON: bool;
    /// `pelt_se_tp(se)`, with the entity's signals after its update.
    fn se(&mut self, se: &SchedAvg);
    /// `pelt_cfs_tp(cfs_rq)`, with the runqueue's signals after its update.
    fn cfs(&mut self, cfs: &CfsRqAvg);
}

impl PeltTracer for () {
    const ON: bool = false;
    #[inline]
    fn se(&mut self, _: &SchedAvg) {}
    #[inline]
    fn cfs(&mut self, _: &CfsRqAvg) {}
}

/// [`update_load_avg_task`] with its tracepoints handed to `tp` where 6.12.117 fires
/// them (see [`PeltTracer`]); the signals are the same whether or not `tp` listens.
#[allow(clippy::too_many_arguments)]
pub fn update_load_avg_task_traced<T: PeltTracer>(
    now: u64,
    cfs: &mut CfsRqAvg,
    cfs_inp: CfsRqInputs,
    se: &mut SchedAvg,
    se_inp: SeInputs,
    flags: UpdateFlags,
    util_est_feature: bool,
    tp: &mut T,
) -> UpdateOutcome {
    let mut out = UpdateOutcome::default();
    if se.last_update_time != 0 && !flags.skip_age_load {
        let fires = T::ON && update_crosses_period(now, se);
        update_load_avg_se(now, se, se_inp, util_est_feature);
        if fires {
            tp.se(se);
        }
    }
    let fires = T::ON && update_crosses_period(now, &cfs.avg);
    let decayed = update_cfs_rq_load_avg(now, cfs, cfs_inp);
    if fires {
        tp.cfs(cfs);
    }
    out.decayed = decayed;

    if se.last_update_time == 0 && flags.do_attach {
        attach_entity_load_avg(cfs, se, se_inp.weight);
        tp.cfs(cfs);
        out.attached = true;
        out.update_tg = true;
        out.util_change = true;
    } else if flags.do_detach {
        detach_entity_load_avg(cfs, se, se_inp.weight);
        tp.cfs(cfs);
        out.detached = true;
        out.update_tg = true;
        out.util_change = true;
    } else if decayed {
        out.util_change = true;
        out.update_tg = flags.update_tg;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positive_helpers_clamp() {
        let mut v = 5u64;
        add_positive_u64(&mut v, -7);
        assert_eq!(v, 0);
        let mut v = 5u64;
        add_positive_u64(&mut v, 3);
        assert_eq!(v, 8);
        let mut w = 5u32;
        sub_positive_u32(&mut w, 6);
        assert_eq!(w, 0);
        let mut w = 5u32;
        add_positive_u32(&mut w, -2);
        assert_eq!(w, 3);
        assert_eq!(scale_load_down(1024 << 10), 1024);
        assert_eq!(scale_load_down(3), 2);
        assert_eq!(scale_load_down(0), 0);
    }

    #[test]
    fn attach_rebuilds_sums_with_cfs_divider() {
        // cfs_rq at period_contrib 100: divider = 46718 + 100 = 46818.
        let mut cfs = CfsRqAvg::default();
        cfs.avg.last_update_time = 5 << 20;
        cfs.avg.period_contrib = 100;
        let mut se = SchedAvg {
            util_avg: 512,
            runnable_avg: 512,
            load_avg: 1024,
            ..SchedAvg::default()
        };
        attach_entity_load_avg(&mut cfs, &mut se, 1024);
        assert_eq!(se.last_update_time, 5 << 20);
        assert_eq!(se.period_contrib, 100);
        assert_eq!(se.util_sum, 512 * 46818);
        assert_eq!(se.runnable_sum, 512 * 46818);
        // load_sum = 1024 * 46818 / 1024 = 46818 (unweighted).
        assert_eq!(se.load_sum, 46818);
        assert_eq!(cfs.avg.load_sum, 1024 * 46818);
        assert_eq!(cfs.avg.util_avg, 512);
        assert_eq!(cfs.prop_runnable_sum, 46818);

        // A zero-load entity gets load_sum = 1, the kernel's quirk.
        let mut se0 = SchedAvg::default();
        attach_entity_load_avg(&mut cfs, &mut se0, 1024);
        assert_eq!(se0.load_sum, 1);

        // Detaching the first entity takes its averages back out.
        detach_entity_load_avg(&mut cfs, &se, 1024);
        assert_eq!(cfs.avg.util_avg, 0);
        assert_eq!(cfs.avg.load_avg, 0);
        // Only se0's weighted load_sum (1024 * 1) is left.
        assert_eq!(cfs.avg.load_sum, 1024);
    }

    #[test]
    fn removed_load_is_folded_at_next_update() {
        let mut cfs = CfsRqAvg::default();
        cfs.avg.last_update_time = 1 << 20;
        let mut se = SchedAvg {
            util_avg: 300,
            runnable_avg: 300,
            load_avg: 600,
            ..SchedAvg::default()
        };
        attach_entity_load_avg(&mut cfs, &mut se, 1024);
        remove_entity_load_avg(&mut cfs, &mut se, 1024);
        assert_eq!(cfs.removed.nr, 1);
        let inp = CfsRqInputs {
            load: 0,
            runnable: 0,
            running: false,
        };
        // Same instant: nothing decays, but the removal is folded and reported.
        assert!(update_cfs_rq_load_avg(1 << 20, &mut cfs, inp));
        assert_eq!(cfs.avg.util_avg, 0);
        assert_eq!(cfs.avg.load_avg, 0);
        assert_eq!(cfs.avg.util_sum, 0);
        assert_eq!(cfs.removed, Removed::default());
    }
}
