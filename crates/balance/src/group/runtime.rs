//! A group runqueue's side of CFS bandwidth accounting: `__account_cfs_rq_runtime` and
//! `__return_cfs_rq_runtime`, which the entity store's hooks call as the runqueue runs
//! and leaves. They take the task groups' table, so they sit apart from the pool's data
//! in [`super::bandwidth`], which `TaskGroup` holds: the pool then imports nothing of the
//! groups.

use super::bandwidth::{assign_runtime, BwTimer, MIN_CFS_RQ_RUNTIME, RUNTIME_INF};
use super::TaskGroup;
use crate::cfs_rq::CfsRq;

/// `__account_cfs_rq_runtime(cfs_rq, delta_exec)`: the runqueue (of `cpu`) pays `delta`
/// and, out of runtime and not throttled, takes a slice from its group's pool. Returns
/// true when that failed with an entity running: the CPU must reschedule so that the
/// hierarchy can be throttled.
pub(crate) fn account_runtime(
    tgs: &mut [TaskGroup],
    arms: &mut Vec<BwTimer>,
    cfs: &mut CfsRq,
    cpu: usize,
    delta: u64,
    now: u64,
) -> bool {
    cfs.bw.runtime_remaining -= delta as i64;
    if cfs.bw.runtime_remaining > 0 || cfs.bw.throttled {
        return false;
    }
    let g = cfs.tg;
    let slice = tgs[g].bw.slice;
    let ok = assign_runtime(&mut tgs[g].bw, g, cpu, &mut cfs.bw, slice, now, arms);
    !ok && cfs.curr.is_some()
}

/// `__return_cfs_rq_runtime(cfs_rq)`: runtime beyond 1 ms goes back to the pool; with
/// runqueues waiting for it and more than a slice there, the slack timer will hand it
/// out.
pub(crate) fn return_runtime(
    tgs: &mut [TaskGroup],
    arms: &mut Vec<BwTimer>,
    cfs: &mut CfsRq,
    now: u64,
) {
    let slack = cfs.bw.runtime_remaining - MIN_CFS_RQ_RUNTIME;
    if slack <= 0 {
        return;
    }
    let g = cfs.tg;
    let b = &mut tgs[g].bw;
    if b.quota != RUNTIME_INF {
        b.runtime += slack as u64;
        if b.runtime > b.slice && !b.throttled.is_empty() {
            b.start_slack(g, now, arms);
        }
    }
    cfs.bw.runtime_remaining -= slack;
}
