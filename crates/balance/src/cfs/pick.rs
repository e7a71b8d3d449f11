//! CFS's pick and wakeup preemption, 3.9 to 6.5: `wakeup_gran`,
//! `wakeup_preempt_entity`, the buddies (`set_next_buddy`, `set_last_buddy`,
//! `set_skip_buddy`) and `pick_next_entity` in its three forms.

use crate::cfs_rq::{CfsRq, FairParams};
use crate::kernel::Kernel;
use crate::task::{Task, TaskId};

use super::calc::calc_delta_fair_era;
use super::entity::{clear_buddies, vruntime_before};

/// `wakeup_gran(se)` (`wakeup_gran(curr, se)` before 4.16; `curr` was unused):
/// `sysctl_sched_wakeup_granularity` in the virtual time of `se`, so that a lighter
/// wakee needs a larger lead.
pub fn wakeup_gran(tasks: &mut [Task], se: TaskId, params: &FairParams) -> u64 {
    let gran = params.cfs.wakeup_granularity;
    calc_delta_fair_era(params.features.kernel(), gran, &mut tasks[se].se.load)
}

/// `wakeup_preempt_entity(curr, se)`: -1 when `se` is not behind `curr` in vruntime, 1
/// when it is behind by more than `wakeup_gran(se)`, else 0.
pub fn wakeup_preempt_entity(
    tasks: &mut [Task],
    curr: TaskId,
    se: TaskId,
    params: &FairParams,
) -> i32 {
    let vdiff = tasks[curr].se.vruntime.wrapping_sub(tasks[se].se.vruntime) as i64;
    if vdiff <= 0 {
        return -1;
    }
    let gran = wakeup_gran(tasks, se, params) as i64;
    if vdiff > gran {
        1
    } else {
        0
    }
}

/// `set_next_buddy(se)` (fairsim has no SCHED_IDLE task for it to skip).
pub fn set_next_buddy(cfs: &mut CfsRq, p: TaskId) {
    cfs.next = Some(p);
}

/// `set_last_buddy(se)`.
pub fn set_last_buddy(cfs: &mut CfsRq, p: TaskId) {
    cfs.last = Some(p);
}

/// `set_skip_buddy(se)`.
pub fn set_skip_buddy(cfs: &mut CfsRq, p: TaskId) {
    cfs.skip = Some(p);
}

/// `pick_next_entity(cfs_rq, curr)` by era.
///
/// - 3.9 (`pick_next_entity(cfs_rq)`): the previous task is already back in the tree;
///   the leftmost entity, the second one instead of a skip buddy, then the last buddy,
///   then the next buddy (the later test wins), each only if
///   `wakeup_preempt_entity(buddy, leftmost) < 1`; the winner's buddies are cleared.
/// - 4.5 to 4.16: the same with the current entity (still out of the tree) counted as
///   a candidate for leftmost and second.
/// - 6.5: the next buddy is tried before the last one (`else if`), and buddies are
///   cleared in `set_next_entity` instead.
pub fn pick_next_entity(
    cfs: &mut CfsRq,
    tasks: &mut [Task],
    curr: Option<TaskId>,
    params: &FairParams,
) -> Option<TaskId> {
    let kernel = params.features.kernel();
    let mut left = cfs.pick_first();
    if kernel > Kernel::V3_9 {
        if let Some(c) = curr {
            match left {
                Some(l) if !vruntime_before(tasks[c].se.vruntime, tasks[l].se.vruntime) => {}
                _ => left = Some(c),
            }
        }
    }
    let left = left?;
    let mut se = left;
    if cfs.skip == Some(se) {
        let second = if kernel == Kernel::V3_9 {
            cfs.cfs_pick_after(tasks, se)
        } else if Some(se) == curr {
            cfs.pick_first()
        } else {
            let mut second = cfs.cfs_pick_after(tasks, se);
            if let Some(c) = curr {
                match second {
                    Some(s) if !vruntime_before(tasks[c].se.vruntime, tasks[s].se.vruntime) => {}
                    _ => second = Some(c),
                }
            }
            second
        };
        if let Some(s) = second {
            if wakeup_preempt_entity(tasks, s, left, params) < 1 {
                se = s;
            }
        }
    }
    if kernel == Kernel::V6_5 {
        if let Some(n) = cfs
            .next
            .filter(|&n| wakeup_preempt_entity(tasks, n, left, params) < 1)
        {
            se = n;
        } else if let Some(l) = cfs
            .last
            .filter(|&l| wakeup_preempt_entity(tasks, l, left, params) < 1)
        {
            se = l;
        }
        return Some(se);
    }
    if let Some(l) = cfs.last {
        if wakeup_preempt_entity(tasks, l, left, params) < 1 {
            se = l;
        }
    }
    if let Some(n) = cfs.next {
        if wakeup_preempt_entity(tasks, n, left, params) < 1 {
            se = n;
        }
    }
    clear_buddies(cfs, se);
    Some(se)
}
