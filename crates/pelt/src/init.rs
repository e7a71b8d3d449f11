//! New-task initialisation (`init_entity_runnable_average` and
//! `post_init_entity_util_avg` in `kernel/sched/fair.c`).

use crate::avg::SchedAvg;

/// `init_entity_runnable_average(se)` (`kernel/sched/fair.c`): all zero, except that a
/// task starts with `load_avg` equal to its weight so it is treated as heavy until its
/// signal has had time to settle. Group entities start empty.
pub fn init_entity_runnable_average(is_task: bool, se_weight: u64) -> SchedAvg {
    let mut sa = SchedAvg::default();
    if is_task {
        sa.load_avg = se_weight;
    }
    sa
}

/// `post_init_entity_util_avg(p)` (`kernel/sched/fair.c`) for a fair task: extrapolate the
/// new task's `util_avg` from its cfs_rq, `cfs util * weight / (cfs load + 1)`, capped at
/// half the CPU's spare capacity (or exactly that half when the cfs_rq has no
/// utilization); `runnable_avg` starts equal to `util_avg`. With no spare capacity
/// `util_avg` stays as it was (0 after init).
///
/// `cpu_scale` is `arch_scale_cpu_capacity()` of the CPU; `cfs` is the cfs_rq's average
/// as it stands (the kernel does not update it first).
pub fn post_init_entity_util_avg(
    sa: &mut SchedAvg,
    cfs: &SchedAvg,
    cpu_scale: u64,
    se_weight: u64,
) {
    // `long cap = (long)(cpu_scale - cfs_rq->avg.util_avg) / 2;` -- the subtraction is
    // unsigned and may wrap to a negative long; division truncates towards zero.
    let cap = (cpu_scale.wrapping_sub(cfs.util_avg) as i64) / 2;
    if cap > 0 {
        if cfs.util_avg != 0 {
            sa.util_avg = cfs.util_avg.wrapping_mul(se_weight) / (cfs.load_avg + 1);
            if sa.util_avg > cap as u64 {
                sa.util_avg = cap as u64;
            }
        } else {
            sa.util_avg = cap as u64;
        }
    }
    sa.runnable_avg = sa.util_avg;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_comment_series() {
        // The series in the kernel's comment on a 1024 CPU: 512, 256, 128, ... when each
        // new task is added to the cfs_rq's util (load kept large so the ratio term
        // exceeds the cap).
        let mut cfs = SchedAvg {
            load_avg: 0,
            ..SchedAvg::default()
        };
        for expect in [512u64, 256, 128, 64, 32, 16, 8] {
            let mut sa = init_entity_runnable_average(true, 1024);
            assert_eq!(sa.load_avg, 1024);
            post_init_entity_util_avg(&mut sa, &cfs, 1024, 1024);
            assert_eq!(sa.util_avg, expect);
            assert_eq!(sa.runnable_avg, expect);
            cfs.util_avg += sa.util_avg;
            cfs.load_avg = 0; // util * 1024 / 1 always exceeds the cap here.
        }
    }

    #[test]
    fn extrapolation_and_full_cpu() {
        // cfs util 200, load 1023: 200 * 1024 / 1024 = 200; cap = (446 - 200) / 2 = 123.
        let cfs = SchedAvg {
            util_avg: 200,
            load_avg: 1023,
            ..SchedAvg::default()
        };
        let mut sa = init_entity_runnable_average(true, 1024);
        post_init_entity_util_avg(&mut sa, &cfs, 446, 1024);
        assert_eq!(sa.util_avg, 123);
        // cfs util 100, load 2047: 100 * 1024 / 2048 = 50 < cap 173.
        let cfs = SchedAvg {
            util_avg: 100,
            load_avg: 2047,
            ..SchedAvg::default()
        };
        let mut sa = init_entity_runnable_average(true, 1024);
        post_init_entity_util_avg(&mut sa, &cfs, 446, 1024);
        assert_eq!(sa.util_avg, 50);
        // Over-utilized CPU: cap negative, util stays 0.
        let cfs = SchedAvg {
            util_avg: 500,
            ..SchedAvg::default()
        };
        let mut sa = init_entity_runnable_average(true, 1024);
        post_init_entity_util_avg(&mut sa, &cfs, 446, 1024);
        assert_eq!((sa.util_avg, sa.runnable_avg), (0, 0));
        assert_eq!(init_entity_runnable_average(false, 1024).load_avg, 0);
    }
}
