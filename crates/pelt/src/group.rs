//! Propagation of load changes from a group cfs_rq to its group sched_entity
//! (`propagate_entity_load_avg` and `update_tg_cfs_{util,runnable,load}` in
//! `kernel/sched/fair.c`, `CONFIG_FAIR_GROUP_SCHED`).
//!
//! When a task is attached to or detached from a group's cfs_rq, the group entity that
//! represents that cfs_rq in its parent must follow at once, otherwise the parent would
//! only see the change after the slow PELT ramp.

use crate::avg::SchedAvg;
use crate::avg::{get_pelt_divider, PELT_MIN_DIVIDER};
use crate::entity::{add_positive_u32, add_positive_u64, add_tg_cfs_propagate, CfsRqAvg};
use crate::SCHED_CAPACITY_SHIFT;

fn max_u32(a: u64, b: u64) -> u64 {
    (a as u32).max(b as u32) as u64
}

/// `update_tg_cfs_util(cfs_rq, se, gcfs_rq)`: copy the group cfs_rq's `util_avg` to its
/// entity and pass the difference on to the parent cfs_rq.
pub fn update_tg_cfs_util(cfs: &mut CfsRqAvg, se: &mut SchedAvg, gcfs: &CfsRqAvg) {
    let delta_avg = gcfs.avg.util_avg.wrapping_sub(se.util_avg) as i64;
    if delta_avg == 0 {
        return;
    }
    let divider = get_pelt_divider(&cfs.avg);
    se.util_avg = gcfs.avg.util_avg;
    let new_sum = (se.util_avg as u32).wrapping_mul(divider);
    let delta_sum = new_sum as i64 - se.util_sum as i64;
    se.util_sum = new_sum;

    add_positive_u64(&mut cfs.avg.util_avg, delta_avg);
    add_positive_u32(&mut cfs.avg.util_sum, delta_sum);
    cfs.avg.util_sum = max_u32(
        cfs.avg.util_sum as u64,
        cfs.avg.util_avg.wrapping_mul(PELT_MIN_DIVIDER as u64),
    ) as u32;
}

/// `update_tg_cfs_runnable(cfs_rq, se, gcfs_rq)`: the same as [`update_tg_cfs_util`] for
/// `runnable_avg`.
pub fn update_tg_cfs_runnable(cfs: &mut CfsRqAvg, se: &mut SchedAvg, gcfs: &CfsRqAvg) {
    let delta_avg = gcfs.avg.runnable_avg.wrapping_sub(se.runnable_avg) as i64;
    if delta_avg == 0 {
        return;
    }
    let divider = get_pelt_divider(&cfs.avg) as u64;
    se.runnable_avg = gcfs.avg.runnable_avg;
    let new_sum = se.runnable_avg.wrapping_mul(divider);
    let delta_sum = (new_sum as i64).wrapping_sub(se.runnable_sum as i64);
    se.runnable_sum = new_sum;

    add_positive_u64(&mut cfs.avg.runnable_avg, delta_avg);
    add_positive_u64(&mut cfs.avg.runnable_sum, delta_sum);
    cfs.avg.runnable_sum = max_u32(
        cfs.avg.runnable_sum,
        cfs.avg.runnable_avg.wrapping_mul(PELT_MIN_DIVIDER as u64),
    );
}

/// `update_tg_cfs_load(cfs_rq, se, gcfs_rq)`: apply the group cfs_rq's pending
/// `prop_runnable_sum` to its entity's load and to the parent cfs_rq.
///
/// `se_weight` is the group entity's `se_weight()`, `gcfs_load` is
/// `scale_load_down(gcfs_rq->load.weight)`.
pub fn update_tg_cfs_load(
    cfs: &mut CfsRqAvg,
    se: &mut SchedAvg,
    se_weight: u64,
    gcfs: &mut CfsRqAvg,
    gcfs_load: u64,
) {
    let mut runnable_sum = gcfs.prop_runnable_sum;
    if runnable_sum == 0 {
        return;
    }
    gcfs.prop_runnable_sum = 0;

    let divider = get_pelt_divider(&cfs.avg) as i64;
    if runnable_sum >= 0 {
        // Add runnable time, clipped at the maximum a sum can hold.
        runnable_sum = runnable_sum.wrapping_add(se.load_sum as i64).min(divider);
    } else {
        // Estimate the group's new unweighted runnable sum assuming all its tasks are
        // equally runnable, but never inflate the entity's.
        let load_sum = gcfs.avg.load_sum.checked_div(gcfs_load).unwrap_or(0);
        runnable_sum = se.load_sum.min(load_sum) as i64;
    }

    // Runnable time can't be below running time, rescaled to the same range.
    let running_sum = (se.util_sum >> SCHED_CAPACITY_SHIFT) as i64;
    runnable_sum = runnable_sum.max(running_sum);

    let load_sum = se_weight.wrapping_mul(runnable_sum as u64);
    let load_avg = load_sum / divider as u64;

    let delta_avg = load_avg.wrapping_sub(se.load_avg) as i64;
    if delta_avg == 0 {
        return;
    }
    let delta_sum = (load_sum as i64).wrapping_sub(se_weight.wrapping_mul(se.load_sum) as i64);

    se.load_sum = runnable_sum as u64;
    se.load_avg = load_avg;
    add_positive_u64(&mut cfs.avg.load_avg, delta_avg);
    add_positive_u64(&mut cfs.avg.load_sum, delta_sum);
    cfs.avg.load_sum = max_u32(
        cfs.avg.load_sum,
        cfs.avg.load_avg.wrapping_mul(PELT_MIN_DIVIDER as u64),
    );
}

/// `propagate_entity_load_avg(se)` for a group entity: if its group cfs_rq has a pending
/// propagation, hand it up to the parent cfs_rq and resynchronise the entity's util,
/// runnable and load. Returns true if something was propagated. (For a task entity the
/// kernel returns 0 at once; do not call this for tasks.)
pub fn propagate_entity_load_avg(
    cfs: &mut CfsRqAvg,
    se: &mut SchedAvg,
    se_weight: u64,
    gcfs: &mut CfsRqAvg,
    gcfs_load: u64,
) -> bool {
    if !gcfs.propagate {
        return false;
    }
    gcfs.propagate = false;
    add_tg_cfs_propagate(cfs, gcfs.prop_runnable_sum);
    update_tg_cfs_util(cfs, se, gcfs);
    update_tg_cfs_runnable(cfs, se, gcfs);
    update_tg_cfs_load(cfs, se, se_weight, gcfs, gcfs_load);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn propagation_copies_group_util_to_entity_and_parent() {
        // Parent at period_contrib 0: divider 46718.
        let mut parent = CfsRqAvg::default();
        let mut gse = SchedAvg::default();
        let mut gcfs = CfsRqAvg::default();
        gcfs.avg.util_avg = 200;
        gcfs.avg.runnable_avg = 200;
        gcfs.propagate = true;
        gcfs.prop_runnable_sum = 10_000;
        assert!(propagate_entity_load_avg(
            &mut parent,
            &mut gse,
            1024,
            &mut gcfs,
            1024
        ));
        assert_eq!(gse.util_avg, 200);
        assert_eq!(gse.util_sum, 200 * 46718);
        assert_eq!(parent.avg.util_avg, 200);
        // load: runnable_sum = 10000 + 0, max with running 200*46718 >> 10 = 9124 -> 10000;
        // load_sum = 1024 * 10000, load_avg = 10240000 / 46718 = 219.
        assert_eq!(gse.load_sum, 10_000);
        assert_eq!(gse.load_avg, 219);
        assert_eq!(parent.avg.load_avg, 219);
        assert!(parent.propagate);
        assert_eq!(parent.prop_runnable_sum, 10_000);
        assert!(!gcfs.propagate);
        assert_eq!(gcfs.prop_runnable_sum, 0);
    }
}
