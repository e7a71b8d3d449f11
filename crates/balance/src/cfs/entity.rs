//! CFS's entity operations on one cfs_rq, 3.9 to 6.5: the vruntime-ordered timeline,
//! `update_min_vruntime`, `update_curr`, `__sched_period` / `sched_slice`,
//! `place_entity`, `check_preempt_tick`, and entity enqueue, dequeue, set-next, put-prev
//! and tick. Where an era differs, the function says which and how.
//!
//! PELT calls sit where 4.15's `enqueue_entity`/`dequeue_entity` put them and use
//! 6.12's arithmetic for every era (see [`crate::kernel`]); the vruntime arithmetic is
//! each era's own.

use crate::cfs_rq::{deadline_key, qflags, update_load_avg, CfsRq, FairParams, RqClocks, NONE, TG};
use crate::features::Feature;
use crate::kernel::Kernel;
use crate::task::{Task, TaskId};
use crate::weight::LoadWeight;

use super::calc::{calc_delta_era, calc_delta_fair_era};

/// `entity_before(a, b)` of CFS: `(s64)(a->vruntime - b->vruntime) < 0`.
pub fn vruntime_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// `max_vruntime(max_vruntime, vruntime)`.
pub fn max_vruntime(max: u64, v: u64) -> u64 {
    if (v.wrapping_sub(max) as i64) > 0 {
        v
    } else {
        max
    }
}

/// `min_vruntime(min_vruntime, vruntime)`.
pub fn min_vruntime(min: u64, v: u64) -> u64 {
    if (v.wrapping_sub(min) as i64) < 0 {
        v
    } else {
        min
    }
}

impl CfsRq {
    /// `__enqueue_entity` of CFS: into the rbtree by vruntime, an equal key going to the
    /// right of the entries already there (the insertion counter breaks ties the same
    /// way).
    pub(crate) fn cfs_enqueue_tree(&mut self, tasks: &mut [Task], p: TaskId) {
        let key = (deadline_key(tasks[p].se.vruntime), self.next_seq);
        self.next_seq += 1;
        self.timeline.insert(key, p);
        tasks[p].se.run_node = Some(key);
    }

    /// `__dequeue_entity` of CFS.
    pub(crate) fn cfs_dequeue_tree(&mut self, tasks: &mut [Task], p: TaskId) {
        if let Some(key) = tasks[p].se.run_node.take() {
            self.timeline.remove(&key);
        }
    }

    /// `__pick_next_entity(se)`: the entity after `p` in the tree.
    pub(crate) fn cfs_pick_after(&self, tasks: &[Task], p: TaskId) -> Option<TaskId> {
        let key = tasks[p].se.run_node?;
        self.timeline
            .range((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded))
            .next()
            .map(|(_, &t)| t)
    }
}

/// `update_min_vruntime(cfs_rq)`. Up to 4.5 the current entity counts even when it has
/// been dequeued (it is still `cfs_rq->curr` until put); 4.15 counts it only while it is
/// queued.
pub fn update_min_vruntime(cfs: &mut CfsRq, tasks: &[Task], kernel: Kernel) {
    let mut vruntime = cfs.min_vruntime;
    let mut curr = cfs.curr;
    if let Some(c) = curr {
        if kernel >= Kernel::V4_15 && !tasks[c].se.on_rq {
            curr = None;
        } else {
            vruntime = tasks[c].se.vruntime;
        }
    }
    if let Some(left) = cfs.pick_first() {
        let lv = tasks[left].se.vruntime;
        vruntime = match curr {
            None => lv,
            Some(_) => min_vruntime(vruntime, lv),
        };
    }
    cfs.min_vruntime = max_vruntime(cfs.min_vruntime, vruntime);
}

/// `update_curr(cfs_rq)` of CFS: charge the running entity, move its vruntime by its
/// weight and `min_vruntime` with it. Returns the wall time charged. (3.9 returned on a
/// zero delta rather than a non-positive one; a runqueue's task clock never goes back,
/// so the two agree.)
pub fn update_curr(cfs: &mut CfsRq, tasks: &mut [Task], clocks: RqClocks, kernel: Kernel) -> u64 {
    let Some(curr) = cfs.curr else {
        return 0;
    };
    let se = &mut tasks[curr].se;
    let delta = clocks.clock_task.wrapping_sub(se.exec_start) as i64;
    if delta <= 0 {
        return 0;
    }
    let delta_exec = delta as u64;
    se.exec_start = clocks.clock_task;
    se.sum_exec_runtime += delta_exec;
    let dv = calc_delta_fair_era(kernel, delta_exec, &mut se.load);
    se.vruntime = se.vruntime.wrapping_add(dv);
    update_min_vruntime(cfs, tasks, kernel);
    delta_exec
}

/// `__sched_period(nr_running)`: the latency target, stretched to `nr_running` minimum
/// granularities once more than `sched_nr_latency` tasks share the CPU.
pub fn sched_period(nr_running: u64, params: &FairParams) -> u64 {
    let t = params.cfs;
    if nr_running > t.nr_latency {
        nr_running * t.min_granularity
    } else {
        t.latency
    }
}

/// `sched_slice(cfs_rq, se)`: the entity's share of the period by weight (counting it
/// in when it is not queued). 6.1-6.5 count the CPU's `h_nr_running` under ALT_PERIOD
/// (the same number on fairsim's flat hierarchy) and never go below
/// `sysctl_sched_min_granularity` under BASE_SLICE (fairsim has no SCHED_IDLE entities,
/// whose floor is `sysctl_sched_idle_min_granularity`).
pub fn sched_slice(cfs: &CfsRq, tasks: &[Task], p: TaskId, params: &FairParams) -> u64 {
    let kernel = params.features.kernel();
    let se = &tasks[p].se;
    let mut nr = u64::from(cfs.nr_running);
    if kernel == Kernel::V6_5 && params.features.has(Feature::ALT_PERIOD) {
        nr = u64::from(cfs.h_nr_queued);
    }
    let slice = sched_period(nr + u64::from(!se.on_rq), params);
    let mut load: LoadWeight = cfs.load;
    if !se.on_rq {
        load.add(se.load.weight);
    }
    let mut slice = calc_delta_era(kernel, slice, se.load.weight, &mut load);
    if kernel == Kernel::V6_5 && params.features.has(Feature::BASE_SLICE) {
        slice = slice.max(params.cfs.min_granularity);
    }
    slice
}

/// `sched_vslice(cfs_rq, se)`: the slice in the entity's virtual time.
pub fn sched_vslice(cfs: &CfsRq, tasks: &mut [Task], p: TaskId, params: &FairParams) -> u64 {
    let slice = sched_slice(cfs, tasks, p, params);
    calc_delta_fair_era(params.features.kernel(), slice, &mut tasks[p].se.load)
}

/// `entity_is_long_sleeper(se)` (6.5): slept longer than 2^63 / NICE_0 ns (~104 days),
/// so that its vruntime may no longer compare with `min_vruntime`.
fn entity_is_long_sleeper(t: &Task, clock_task: u64) -> bool {
    let se = &t.se;
    if se.exec_start == 0 || clock_task <= se.exec_start {
        return false;
    }
    clock_task - se.exec_start > (1u64 << 63) / 1024
}

/// `place_entity(cfs_rq, se, initial)`: a new task (`initial`) starts a virtual slice
/// after `min_vruntime` with START_DEBIT; a waking one gets up to
/// `sysctl_sched_latency` of sleeper credit (half with GENTLE_FAIR_SLEEPERS), never
/// moving back. 6.5 places a long sleeper at the placed value outright.
pub fn place_entity(
    cfs: &CfsRq,
    tasks: &mut [Task],
    p: TaskId,
    initial: bool,
    clock_task: u64,
    params: &FairParams,
) {
    let feat = params.features;
    let mut vruntime = cfs.min_vruntime;
    if initial && feat.has(Feature::START_DEBIT) {
        vruntime = vruntime.wrapping_add(sched_vslice(cfs, tasks, p, params));
    }
    if !initial {
        let mut thresh = params.cfs.latency;
        if feat.has(Feature::GENTLE_FAIR_SLEEPERS) {
            thresh >>= 1;
        }
        vruntime = vruntime.wrapping_sub(thresh);
    }
    let long_sleeper =
        feat.kernel() == Kernel::V6_5 && entity_is_long_sleeper(&tasks[p], clock_task);
    let se = &mut tasks[p].se;
    se.vruntime = if long_sleeper {
        vruntime
    } else {
        max_vruntime(se.vruntime, vruntime)
    };
}

/// `__clear_buddies_*` / `clear_buddies(cfs_rq, se)`.
pub fn clear_buddies(cfs: &mut CfsRq, p: TaskId) {
    if cfs.last == Some(p) {
        cfs.last = None;
    }
    if cfs.next == Some(p) {
        cfs.next = None;
    }
    if cfs.skip == Some(p) {
        cfs.skip = None;
    }
}

/// `enqueue_entity(cfs_rq, se, flags)` of CFS. A task that was not woken (new, or moved
/// by a balance) or that migrated carries a vruntime relative to its old queue's
/// `min_vruntime` and is made absolute here; a woken one is placed with sleeper credit.
///
/// Up to 4.5 the renormalisation came first, before `update_curr`, for every
/// `ENQUEUE_WAKING` wakeup (fairsim's wakeups all take that remote path: `task_waking_fair`
/// made the vruntime relative when the wakeup began); 4.15 renormalises a migrated or
/// non-woken entity, the current one before `update_curr` and others after it.
pub fn enqueue_entity(
    cfs: &mut CfsRq,
    tasks: &mut [Task],
    p: TaskId,
    flags: u32,
    clocks: RqClocks,
    params: &FairParams,
) {
    let kernel = params.features.kernel();
    let wakeup = flags & qflags::SLEEP_WAKEUP != 0;
    let is_curr = cfs.curr == Some(p);
    if kernel <= Kernel::V4_5 {
        // !(flags & ENQUEUE_WAKEUP) || (flags & ENQUEUE_WAKING): always, here.
        tasks[p].se.vruntime = tasks[p].se.vruntime.wrapping_add(cfs.min_vruntime);
        update_curr(cfs, tasks, clocks, kernel);
    } else {
        let renorm = !wakeup || flags & qflags::MIGRATED != 0;
        if renorm && is_curr {
            tasks[p].se.vruntime = tasks[p].se.vruntime.wrapping_add(cfs.min_vruntime);
        }
        update_curr(cfs, tasks, clocks, kernel);
        if renorm && !is_curr {
            tasks[p].se.vruntime = tasks[p].se.vruntime.wrapping_add(cfs.min_vruntime);
        }
    }
    let attach = fairsim_pelt::UpdateFlags {
        do_attach: true,
        ..TG
    };
    update_load_avg(cfs, tasks, p, clocks, attach, params);
    // account_entity_enqueue
    cfs.load.add(tasks[p].se.load.weight);
    cfs.nr_running += 1;
    if wakeup {
        place_entity(cfs, tasks, p, false, clocks.clock_task, params);
    }
    if kernel == Kernel::V6_5 && flags & qflags::MIGRATED != 0 {
        tasks[p].se.exec_start = 0;
    }
    if !is_curr {
        cfs.cfs_enqueue_tree(tasks, p);
    }
    tasks[p].se.on_rq = true;
}

/// `dequeue_entity(cfs_rq, se, flags)` of CFS: an entity that does not go to sleep
/// leaves with its vruntime made relative to `min_vruntime`, to be renormalised where it
/// is enqueued next. When `min_vruntime` is brought forward afterwards depends on the
/// era: always up to 4.5; in 4.15 and 4.16 only for `DEQUEUE_SAVE` without
/// `DEQUEUE_MOVE` (the condition was inverted by mistake, fixed by 6.1), so a plain
/// sleep or migration leaves it; in 6.5 except for `DEQUEUE_SAVE` without
/// `DEQUEUE_MOVE` (fairsim never passes `DEQUEUE_SAVE`).
pub fn dequeue_entity(
    cfs: &mut CfsRq,
    tasks: &mut [Task],
    p: TaskId,
    flags: u32,
    clocks: RqClocks,
    params: &FairParams,
) {
    let kernel = params.features.kernel();
    update_curr(cfs, tasks, clocks, kernel);
    let action = fairsim_pelt::UpdateFlags {
        do_detach: tasks[p].on_rq_migrating(),
        ..TG
    };
    update_load_avg(cfs, tasks, p, clocks, action, params);
    clear_buddies(cfs, p);
    if cfs.curr != Some(p) {
        cfs.cfs_dequeue_tree(tasks, p);
    }
    tasks[p].se.on_rq = false;
    // account_entity_dequeue
    cfs.load.sub(tasks[p].se.load.weight);
    cfs.nr_running -= 1;
    if flags & qflags::SLEEP_WAKEUP == 0 {
        tasks[p].se.vruntime = tasks[p].se.vruntime.wrapping_sub(cfs.min_vruntime);
    }
    // DEQUEUE_SAVE is never set here (fairsim has no sched_setattr/numa moves that save).
    let save_only = flags & qflags::SAVE_RESTORE != 0;
    let update = match kernel {
        Kernel::V3_9 | Kernel::V4_5 => true,
        Kernel::V4_15 | Kernel::V4_16 => save_only,
        _ => !save_only,
    };
    if update {
        update_min_vruntime(cfs, tasks, kernel);
    }
}

/// `set_next_entity(cfs_rq, se)` of CFS (6.5 clears the entity's buddies here, not in
/// `pick_next_entity`).
pub fn set_next_entity(
    cfs: &mut CfsRq,
    tasks: &mut [Task],
    p: TaskId,
    clocks: RqClocks,
    params: &FairParams,
) {
    if params.features.kernel() == Kernel::V6_5 {
        clear_buddies(cfs, p);
    }
    if tasks[p].se.on_rq {
        cfs.cfs_dequeue_tree(tasks, p);
        update_load_avg(cfs, tasks, p, clocks, TG, params);
    }
    tasks[p].se.exec_start = clocks.clock_task;
    cfs.curr = Some(p);
    tasks[p].se.prev_sum_exec_runtime = tasks[p].se.sum_exec_runtime;
}

/// `put_prev_entity(cfs_rq, prev)` of CFS: a still-queued entity goes back in the tree.
pub fn put_prev_entity(
    cfs: &mut CfsRq,
    tasks: &mut [Task],
    p: TaskId,
    clocks: RqClocks,
    params: &FairParams,
) {
    if tasks[p].se.on_rq {
        update_curr(cfs, tasks, clocks, params.features.kernel());
        cfs.cfs_enqueue_tree(tasks, p);
        update_load_avg(cfs, tasks, p, clocks, NONE, params);
    }
    cfs.curr = None;
}

/// `check_preempt_tick(cfs_rq, curr)`: the current task is preempted once it has run
/// its `sched_slice` since it was picked, or, past the minimum granularity, once it is
/// more than a slice of vruntime ahead of the leftmost task. 6.5 caps the slice at
/// `sysctl_sched_latency`. Returns whether to reschedule.
pub fn check_preempt_tick(
    cfs: &mut CfsRq,
    tasks: &[Task],
    curr: TaskId,
    params: &FairParams,
) -> bool {
    let mut ideal_runtime = sched_slice(cfs, tasks, curr, params);
    if params.features.kernel() == Kernel::V6_5 {
        ideal_runtime = ideal_runtime.min(params.cfs.latency);
    }
    let se = &tasks[curr].se;
    let delta_exec = se.sum_exec_runtime - se.prev_sum_exec_runtime;
    if delta_exec > ideal_runtime {
        clear_buddies(cfs, curr);
        return true;
    }
    if delta_exec < params.cfs.min_granularity {
        return false;
    }
    let Some(first) = cfs.pick_first() else {
        return false;
    };
    let delta = se.vruntime.wrapping_sub(tasks[first].se.vruntime) as i64;
    if delta < 0 {
        return false;
    }
    delta as u64 > ideal_runtime
}

/// `entity_tick(cfs_rq, curr, 0)` of CFS. Returns whether to reschedule.
pub fn entity_tick(
    cfs: &mut CfsRq,
    tasks: &mut [Task],
    p: TaskId,
    clocks: RqClocks,
    params: &FairParams,
) -> bool {
    update_curr(cfs, tasks, clocks, params.features.kernel());
    update_load_avg(cfs, tasks, p, clocks, TG, params);
    cfs.nr_running > 1 && check_preempt_tick(cfs, tasks, p, params)
}
