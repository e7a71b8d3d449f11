//! The EEVDF entity operations on one `struct cfs_rq` (fair.c): virtual time, lag,
//! eligibility, the deadline-ordered timeline and `pick_eevdf`, placement, `update_curr`,
//! PELT, reweighting, and entity enqueue/dequeue with delayed dequeue.
//!
//! They sit below [`super`]'s data because they are generic over the
//! [`crate::entities::Entities`] store, whose hooks take a `CfsRq`: with the operations
//! here, `entities` and the runqueue's data module do not import each other.

use fairsim_pelt::{
    update_load_avg_task, update_load_avg_task_traced, CfsRqInputs, PeltTracer, SeInputs,
    UpdateFlags,
};

use super::{deadline_key, entity_before, qflags, CfsRq, FairParams, RqClocks};
use crate::entities::Entities;
use crate::features::{Feature, Features};
use crate::pelt_tp::{PeltSignals, PeltTracepoint};
use crate::task::{SchedEntity, TaskId};
use crate::weight::{calc_delta_fair, scale_load_down, LoadWeight};

impl CfsRq {
    /// `entity_key(cfs_rq, se)`.
    fn entity_key(&self, se_vruntime: u64) -> i64 {
        se_vruntime.wrapping_sub(self.zero_vruntime) as i64
    }

    /// The current entity if it is still queued (`curr && curr->on_rq`).
    fn curr_on_rq<E: Entities + ?Sized>(&self, ents: &E) -> Option<TaskId> {
        self.curr.filter(|&c| ents.se(c).on_rq)
    }

    /// `avg_vruntime_add`.
    fn avg_vruntime_add(&mut self, se: &SchedEntity) {
        let w = scale_load_down(se.load.weight);
        self.avg_vruntime = self
            .avg_vruntime
            .wrapping_add(self.entity_key(se.vruntime).wrapping_mul(w as i64));
        self.avg_load += w;
    }

    /// `avg_vruntime_sub`.
    fn avg_vruntime_sub(&mut self, se: &SchedEntity) {
        let w = scale_load_down(se.load.weight);
        self.avg_vruntime = self
            .avg_vruntime
            .wrapping_sub(self.entity_key(se.vruntime).wrapping_mul(w as i64));
        self.avg_load -= w;
    }

    /// `update_zero_vruntime`: move the reference point by `delta`.
    fn update_zero_vruntime(&mut self, delta: i64) {
        self.avg_vruntime = self
            .avg_vruntime
            .wrapping_sub((self.avg_load as i64).wrapping_mul(delta));
        self.zero_vruntime = self.zero_vruntime.wrapping_add(delta as u64);
    }

    /// `avg_vruntime(cfs_rq)`: the weighted average vruntime V (floored), which also moves
    /// `zero_vruntime` to it as the 6.12.117 kernel does.
    pub fn avg_vruntime<E: Entities + ?Sized>(&mut self, ents: &E) -> u64 {
        let curr = self.curr_on_rq(ents);
        let mut weight = self.avg_load as i64;
        let mut delta = 0i64;
        if weight != 0 {
            let mut runtime = self.avg_vruntime;
            if let Some(c) = curr {
                let w = scale_load_down(ents.se(c).load.weight) as i64;
                runtime =
                    runtime.wrapping_add(self.entity_key(ents.se(c).vruntime).wrapping_mul(w));
                weight += w;
            }
            // A negative sum needs flooring, not truncation towards zero.
            if runtime < 0 {
                runtime -= weight - 1;
            }
            delta = runtime / weight;
        } else if let Some(c) = curr {
            delta = ents.se(c).vruntime.wrapping_sub(self.zero_vruntime) as i64;
        }
        self.update_zero_vruntime(delta);
        self.zero_vruntime
    }

    /// `vruntime_eligible(cfs_rq, vruntime)`: lag >= 0 without a division.
    pub fn vruntime_eligible<E: Entities + ?Sized>(&self, ents: &E, vruntime: u64) -> bool {
        let mut avg = self.avg_vruntime;
        let mut load = self.avg_load as i64;
        if let Some(c) = self.curr_on_rq(ents) {
            let w = scale_load_down(ents.se(c).load.weight) as i64;
            avg = avg.wrapping_add(self.entity_key(ents.se(c).vruntime).wrapping_mul(w));
            load += w;
        }
        avg >= self.entity_key(vruntime).wrapping_mul(load)
    }

    /// `entity_eligible(cfs_rq, se)`.
    pub fn entity_eligible<E: Entities + ?Sized>(&self, ents: &E, p: TaskId) -> bool {
        self.vruntime_eligible(ents, ents.se(p).vruntime)
    }

    /// `__enqueue_entity`: into the tree and the average.
    pub(crate) fn enqueue_tree<E: Entities + ?Sized>(&mut self, ents: &mut E, p: TaskId) {
        self.avg_vruntime_add(ents.se(p));
        let key = (deadline_key(ents.se(p).deadline), self.next_seq);
        self.next_seq += 1;
        self.timeline.insert(key, p);
        ents.se_mut(p).run_node = Some(key);
    }

    /// `__dequeue_entity`: out of the tree and the average.
    pub(crate) fn dequeue_tree<E: Entities + ?Sized>(&mut self, ents: &mut E, p: TaskId) {
        if let Some(key) = ents.se_mut(p).run_node.take() {
            self.timeline.remove(&key);
        }
        self.avg_vruntime_sub(ents.se(p));
    }

    /// `__pick_first_entity`: the earliest deadline in the tree.
    pub fn pick_first(&self) -> Option<TaskId> {
        self.timeline.values().next().copied()
    }

    /// `pick_eevdf(cfs_rq)`: the eligible entity with the earliest virtual deadline, with
    /// `RUN_TO_PARITY` keeping a protected current entity.
    pub fn pick_eevdf<E: Entities + ?Sized>(&self, ents: &E, feat: Features) -> Option<TaskId> {
        let first = self.pick_first();
        let mut curr = self.curr;
        if self.nr_running == 1 {
            return match curr {
                Some(c) if ents.se(c).on_rq => Some(c),
                _ => first,
            };
        }
        if let Some(c) = curr {
            if !ents.se(c).on_rq || !self.entity_eligible(ents, c) {
                curr = None;
            }
        }
        if feat.has(Feature::RUN_TO_PARITY) {
            if let Some(c) = curr {
                if protect_slice(ents.se(c)) {
                    return Some(c);
                }
            }
        }
        // The tree is in deadline order, so the first eligible entity is the answer of the
        // kernel's augmented heap search.
        let best = self
            .timeline
            .values()
            .copied()
            .find(|&p| self.entity_eligible(ents, p));
        match (best, curr) {
            (None, c) => c,
            (Some(b), Some(c)) if entity_before(ents.se(c), ents.se(b)) => Some(c),
            (b, _) => b,
        }
    }
}

/// `set_protect_slice`: stash the deadline in vlag while the entity runs.
pub(crate) fn set_protect_slice(se: &mut SchedEntity) {
    se.vlag = se.deadline as i64;
}

/// `protect_slice`.
pub(crate) fn protect_slice(se: &SchedEntity) -> bool {
    se.vlag == se.deadline as i64
}

/// `cancel_protect_slice`.
pub(crate) fn cancel_protect_slice(se: &mut SchedEntity) {
    if protect_slice(se) {
        se.vlag = se.deadline.wrapping_add(1) as i64;
    }
}

/// `entity_lag(avruntime, se)`: V - v, clamped to the lag bound
/// `calc_delta_fair(max(2 * slice, TICK_NSEC))`.
fn entity_lag(avruntime: u64, se: &mut SchedEntity, tick_nsec: u64) -> i64 {
    let vlag = avruntime.wrapping_sub(se.vruntime) as i64;
    let limit = calc_delta_fair((2 * se.slice).max(tick_nsec), &mut se.load) as i64;
    vlag.clamp(-limit, limit)
}

/// `update_entity_lag(cfs_rq, se)`.
pub(crate) fn update_entity_lag<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    tick_nsec: u64,
) {
    let v = cfs.avg_vruntime(ents);
    ents.se_mut(p).vlag = entity_lag(v, ents.se_mut(p), tick_nsec);
}

/// `update_deadline(cfs_rq, se)`: once the request is consumed, a new slice and deadline.
/// Returns whether the current task should be rescheduled.
fn update_deadline<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    params: &FairParams,
) -> bool {
    let se = ents.se_mut(p);
    if (se.vruntime.wrapping_sub(se.deadline) as i64) < 0 {
        return false;
    }
    if !se.custom_slice {
        se.slice = params.base_slice;
    }
    let vslice = calc_delta_fair(se.slice, &mut se.load);
    se.deadline = se.vruntime.wrapping_add(vslice);
    cfs.avg_vruntime(ents);
    true
}

/// `did_preempt_short`.
fn did_preempt_short<E: Entities + ?Sized>(
    cfs: &CfsRq,
    ents: &E,
    curr: TaskId,
    feat: Features,
) -> bool {
    if !feat.has(Feature::PREEMPT_SHORT) {
        return false;
    }
    if protect_slice(ents.se(curr)) {
        return false;
    }
    !cfs.entity_eligible(ents, curr)
}

/// `do_preempt_short(cfs_rq, pse, se)`: a wakee with a shorter slice may cut the current
/// entity's protection.
pub(crate) fn do_preempt_short<E: Entities + ?Sized>(
    cfs: &CfsRq,
    ents: &E,
    pse: TaskId,
    se: TaskId,
    feat: Features,
) -> bool {
    if !feat.has(Feature::PREEMPT_SHORT) {
        return false;
    }
    if ents.se(pse).slice >= ents.se(se).slice {
        return false;
    }
    if !cfs.entity_eligible(ents, pse) {
        return false;
    }
    if entity_before(ents.se(pse), ents.se(se)) {
        return true;
    }
    !cfs.entity_eligible(ents, se)
}

/// Result of [`update_curr`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CurrUpdate {
    /// Wall time charged to the current entity.
    pub delta_exec: u64,
    /// `resched_curr(rq)` was requested.
    pub resched: bool,
}

/// `update_curr(cfs_rq)`: charge the running entity for the time since `exec_start`, move
/// its vruntime, and ask for a reschedule when its request is consumed.
pub fn update_curr<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    clocks: RqClocks,
    params: &FairParams,
) -> CurrUpdate {
    let Some(curr) = cfs.curr else {
        return CurrUpdate::default();
    };
    let se = ents.se_mut(curr);
    let delta = clocks.clock_task.wrapping_sub(se.exec_start) as i64;
    if delta <= 0 {
        return CurrUpdate::default();
    }
    let delta_exec = delta as u64;
    se.exec_start = clocks.clock_task;
    se.sum_exec_runtime += delta_exec;
    let dv = calc_delta_fair(delta_exec, &mut se.load);
    se.vruntime = se.vruntime.wrapping_add(dv);
    let resched = update_deadline(cfs, ents, curr, params);
    // account_cfs_rq_runtime: a group runqueue under cpu.max pays for the time.
    if E::GROUPS && cfs.bw.runtime_enabled {
        ents.account_runtime(cfs, delta_exec);
    }
    if cfs.nr_running == 1 {
        return CurrUpdate {
            delta_exec,
            resched: false,
        };
    }
    let resched = resched || did_preempt_short(cfs, ents, curr, params.features);
    if resched {
        clear_buddies(cfs, ents, curr);
    }
    CurrUpdate {
        delta_exec,
        resched,
    }
}

/// `clear_buddies(cfs_rq, se)`.
pub(crate) fn clear_buddies<E: Entities + ?Sized>(cfs: &mut CfsRq, ents: &mut E, p: TaskId) {
    if cfs.next == Some(p) {
        cfs.next = None;
        // __clear_buddies_next goes on up the hierarchy while each parent is its own
        // runqueue's buddy: the store remembers the entity for the class to finish.
        if E::GROUPS {
            ents.next_cleared(p);
        }
    }
}

/// `place_entity(cfs_rq, se, flags)`: vruntime from V and the preserved (inflated) lag,
/// then the deadline (half a slice for new tasks with `PLACE_DEADLINE_INITIAL`).
pub fn place_entity<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    flags: u32,
    params: &FairParams,
) {
    let vruntime = cfs.avg_vruntime(ents);
    let curr_w = cfs
        .curr_on_rq(ents)
        .map(|c| scale_load_down(ents.se(c).load.weight))
        .unwrap_or(0);
    let se = ents.se_mut(p);
    if !se.custom_slice {
        se.slice = params.base_slice;
    }
    let mut vslice = calc_delta_fair(se.slice, &mut se.load);
    let mut lag: i64 = 0;
    if params.features.has(Feature::PLACE_LAG) && cfs.nr_running != 0 {
        lag = se.vlag;
        let mut load = cfs.avg_load + curr_w;
        lag = lag.wrapping_mul((load + scale_load_down(se.load.weight)) as i64);
        if load == 0 {
            load = 1;
        }
        // div_s64 truncates towards zero.
        lag /= load as i64;
    }
    se.vruntime = vruntime.wrapping_sub(lag as u64);
    if params.features.has(Feature::PLACE_REL_DEADLINE) && se.rel_deadline {
        se.deadline = se.deadline.wrapping_add(se.vruntime);
        se.rel_deadline = false;
        return;
    }
    if params.features.has(Feature::PLACE_DEADLINE_INITIAL) && flags & qflags::INITIAL != 0 {
        vslice /= 2;
    }
    se.deadline = se.vruntime.wrapping_add(vslice);
}

/// `update_load_avg(cfs_rq, se, flags)`.
pub fn update_load_avg<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    clocks: RqClocks,
    flags: UpdateFlags,
    params: &FairParams,
) {
    if E::GROUPS {
        update_load_avg_hier(cfs, ents, p, clocks, flags, params);
        return;
    }
    let cfs_inp = CfsRqInputs {
        load: scale_load_down(cfs.load.weight),
        runnable: u64::from(cfs.h_nr_queued - cfs.h_nr_delayed),
        running: cfs.curr.is_some(),
    };
    let se = ents.se_mut(p);
    // update_load_avg ages the entity only if it was ever attached and the caller did not
    // ask to skip it; the cfs_rq is always brought up to date.
    if se.avg.last_update_time != 0 && !flags.skip_age_load {
        cfs.pelt_calls.se += 1;
    }
    cfs.pelt_calls.cfs_rq += 1;
    let se_inp = SeInputs {
        weight: scale_load_down(se.load.weight),
        on_rq: se.on_rq,
        runnable: u64::from(se.on_rq && !se.sched_delayed),
        running: cfs.curr == Some(p),
    };
    let util_est = params.util_est.enabled();
    let now = clocks.clock_pelt;
    let (avg, se_avg) = (&mut cfs.avg, &mut se.avg);
    let out = match cfs.pelt_tp.as_mut() {
        Some(tps) => {
            let mut log = TaskTpLog { task: p, tps };
            update_load_avg_task_traced(
                now, avg, cfs_inp, se_avg, se_inp, flags, util_est, &mut log,
            )
        }
        None => update_load_avg_task(now, avg, cfs_inp, se_avg, se_inp, flags, util_est),
    };
    if out.util_change {
        cfs.util_changed = true;
    }
}

/// The root runqueue's tracepoint log as the PELT update's tracer (see
/// [`crate::pelt_tp`]): a task's `pelt_se_tp` and the runqueue's `pelt_cfs_tp`.
struct TaskTpLog<'a> {
    task: TaskId,
    tps: &'a mut Vec<PeltTracepoint>,
}

impl PeltTracer for TaskTpLog<'_> {
    const ON: bool = true;
    fn se(&mut self, se: &fairsim_pelt::SchedAvg) {
        let sig = PeltSignals::of(se);
        self.tps.push(PeltTracepoint::Se {
            task: self.task,
            sig,
        });
    }
    fn cfs(&mut self, cfs: &fairsim_pelt::CfsRqAvg) {
        let sig = PeltSignals::of(&cfs.avg);
        self.tps.push(PeltTracepoint::Cfs { group: 0, sig });
    }
}

/// `update_load_avg(cfs_rq, se, flags)` with task groups: as the flat form, with the
/// group entity's propagation (`propagate_entity_load_avg`) after the runqueue's own
/// update, and the group's `tg->load_avg` kept up (`update_tg_load_avg`). Only the CPU's
/// root runqueue calls the cpufreq hook (`cfs_rq_util_change` checks `&rq->cfs`).
fn update_load_avg_hier<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    clocks: RqClocks,
    flags: UpdateFlags,
    params: &FairParams,
) {
    use fairsim_pelt::{
        attach_entity_load_avg, detach_entity_load_avg, update_cfs_rq_load_avg, update_load_avg_se,
    };
    let now = clocks.clock_pelt;
    let se_inp = {
        let se = ents.se(p);
        SeInputs {
            weight: scale_load_down(se.load.weight),
            on_rq: se.on_rq,
            runnable: ents.se_runnable(p),
            running: cfs.curr == Some(p),
        }
    };
    let is_task = ents.is_task(p);
    let util_est = params.util_est.enabled() && is_task;
    // Only the root runqueue keeps a tracepoint log (see crate::pelt_tp): a task queued
    // there, and the root's own signals, are traced; the hierarchy below is not.
    let traced = cfs.pelt_tp.is_some();
    let se = ents.se_mut(p);
    if se.avg.last_update_time != 0 && !flags.skip_age_load {
        cfs.pelt_calls.se += 1;
        let fires = traced && is_task && fairsim_pelt::update_crosses_period(now, &se.avg);
        update_load_avg_se(now, &mut se.avg, se_inp, util_est);
        if let (true, Some(tps)) = (fires, cfs.pelt_tp.as_mut()) {
            let sig = PeltSignals::of(&se.avg);
            tps.push(PeltTracepoint::Se { task: p, sig });
        }
    }
    cfs.pelt_calls.cfs_rq += 1;
    let cfs_inp = CfsRqInputs {
        load: scale_load_down(cfs.load.weight),
        runnable: u64::from(cfs.h_nr_runnable),
        running: cfs.curr.is_some(),
    };
    let fires = traced && fairsim_pelt::update_crosses_period(now, &cfs.avg.avg);
    let mut decayed = update_cfs_rq_load_avg(now, &mut cfs.avg, cfs_inp);
    let root_tp = |cfs: &mut CfsRq| {
        let sig = PeltSignals::of(&cfs.avg.avg);
        if let Some(tps) = cfs.pelt_tp.as_mut() {
            tps.push(PeltTracepoint::Cfs { group: 0, sig });
        }
    };
    if fires {
        root_tp(cfs);
    }
    decayed |= ents.propagate(p, &mut cfs.avg);
    let se = ents.se_mut(p);
    let root = cfs.tg == crate::task::ROOT_GROUP;
    if se.avg.last_update_time == 0 && flags.do_attach {
        attach_entity_load_avg(&mut cfs.avg, &mut se.avg, se_inp.weight);
        root_tp(cfs);
        cfs.util_changed |= root;
        ents.update_tg_load_avg(cfs);
    } else if flags.do_detach {
        detach_entity_load_avg(&mut cfs.avg, &se.avg, se_inp.weight);
        root_tp(cfs);
        cfs.util_changed |= root;
        ents.update_tg_load_avg(cfs);
    } else if decayed {
        cfs.util_changed |= root;
        if flags.update_tg {
            ents.update_tg_load_avg(cfs);
        }
    }
}

/// `set_delayed(se)` on the entity's own runqueue: a task's counts move from runnable to
/// delayed (its ancestors' are the hierarchy walk's); a group entity's do not move.
fn set_delayed<E: Entities + ?Sized>(cfs: &mut CfsRq, ents: &mut E, p: TaskId) {
    ents.se_mut(p).sched_delayed = true;
    if ents.is_task(p) {
        cfs.h_nr_runnable -= 1;
        cfs.h_nr_delayed += 1;
    }
}

/// `clear_delayed(se)` on the entity's own runqueue, as [`set_delayed`].
pub(crate) fn clear_delayed<E: Entities + ?Sized>(cfs: &mut CfsRq, ents: &mut E, p: TaskId) {
    ents.se_mut(p).sched_delayed = false;
    if ents.is_task(p) {
        cfs.h_nr_runnable += 1;
        cfs.h_nr_delayed -= 1;
    }
}

/// `update_cfs_group(se)`: a group entity takes the weight `calc_group_shares` gives it
/// (nothing for a task, or a group whose runqueue is empty). Returns whether the reweight's
/// `update_curr` asked for a reschedule.
pub(crate) fn update_cfs_group<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    clocks: RqClocks,
    params: &FairParams,
) -> bool {
    if !E::GROUPS {
        return false;
    }
    match ents.group_shares(p) {
        Some(shares) if ents.se(p).load.weight != shares => {
            reweight_entity(cfs, ents, p, shares, clocks, params)
        }
        _ => false,
    }
}

/// `reweight_entity(cfs_rq, se, weight)` of 6.12.117 with `reweight_eevdf`: a queued
/// entity leaves the tree and the runqueue's weight, keeps its lag and relative deadline
/// scaled by old/new weight, and comes back; a sleeping one scales its stored `vlag`.
/// The PELT load follows the new weight at once. Returns whether `update_curr` asked for a
/// reschedule.
pub(crate) fn reweight_entity<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    weight: u64,
    clocks: RqClocks,
    params: &FairParams,
) -> bool {
    use fairsim_pelt::entity::{dequeue_load_avg, enqueue_load_avg};
    use fairsim_pelt::get_pelt_divider;
    let curr = cfs.curr == Some(p);
    let on_rq = ents.se(p).on_rq;
    let mut resched = false;
    let mut avruntime = 0;
    if on_rq {
        resched = update_curr(cfs, ents, clocks, params).resched;
        avruntime = cfs.avg_vruntime(ents);
        if !curr {
            cfs.dequeue_tree(ents, p);
        }
        cfs.load.sub(ents.se(p).load.weight);
    }
    let old_w = scale_load_down(ents.se(p).load.weight);
    dequeue_load_avg(&mut cfs.avg, &ents.se(p).avg, old_w);
    let tick = params.tick_nsec;
    let se = ents.se_mut(p);
    let old_weight = se.load.weight;
    if on_rq {
        // reweight_eevdf: v' = V - (V - v) * w / w', d' = V + (d - V) * w / w'.
        if avruntime != se.vruntime {
            let vlag = entity_lag(avruntime, se, tick);
            let vlag = vlag.wrapping_mul(old_weight as i64) / weight as i64;
            se.vruntime = avruntime.wrapping_sub(vlag as u64);
        }
        let vslice = se.deadline.wrapping_sub(avruntime) as i64;
        let vslice = vslice.wrapping_mul(old_weight as i64) / weight as i64;
        se.deadline = avruntime.wrapping_add(vslice as u64);
    } else {
        se.vlag = se.vlag.wrapping_mul(old_weight as i64) / weight as i64;
    }
    // update_load_set
    se.load = LoadWeight {
        weight,
        inv_weight: 0,
    };
    let new_w = scale_load_down(weight);
    let divider = u64::from(get_pelt_divider(&se.avg));
    se.avg.load_avg = new_w.wrapping_mul(se.avg.load_sum) / divider;
    enqueue_load_avg(&mut cfs.avg, &ents.se(p).avg, new_w);
    if on_rq {
        cfs.load.add(weight);
        if !curr {
            cfs.enqueue_tree(ents, p);
        }
    }
    resched
}

pub(crate) const TG: UpdateFlags = UpdateFlags {
    update_tg: true,
    skip_age_load: false,
    do_attach: false,
    do_detach: false,
};

pub(crate) const NONE: UpdateFlags = UpdateFlags {
    update_tg: false,
    skip_age_load: false,
    do_attach: false,
    do_detach: false,
};

/// `enqueue_entity(cfs_rq, se, flags)`.
pub fn enqueue_entity<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    flags: u32,
    clocks: RqClocks,
    params: &FairParams,
) -> CurrUpdate {
    let is_curr = cfs.curr == Some(p);
    // The current entity is renormalised before update_curr().
    if is_curr {
        place_entity(cfs, ents, p, flags, params);
    }
    let mut upd = update_curr(cfs, ents, clocks, params);
    let attach = UpdateFlags {
        do_attach: true,
        ..TG
    };
    update_load_avg(cfs, ents, p, clocks, attach, params);
    if E::GROUPS {
        ents.se_update_runnable(p);
        upd.resched |= update_cfs_group(cfs, ents, p, clocks, params);
    }
    if !is_curr {
        place_entity(cfs, ents, p, flags, params);
    }
    // account_entity_enqueue
    cfs.load.add(ents.se(p).load.weight);
    cfs.nr_running += 1;
    if flags & qflags::MIGRATED != 0 {
        ents.se_mut(p).exec_start = 0;
    }
    if !is_curr {
        cfs.enqueue_tree(ents, p);
    }
    ents.se_mut(p).on_rq = true;
    upd
}

/// `dequeue_entity(cfs_rq, se, flags)`: false when the dequeue is delayed instead.
pub fn dequeue_entity<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    flags: u32,
    clocks: RqClocks,
    params: &FairParams,
) -> (bool, CurrUpdate) {
    let sleep = flags & qflags::SLEEP_WAKEUP != 0;
    let mut upd = update_curr(cfs, ents, clocks, params);
    clear_buddies(cfs, ents, p);
    if flags & qflags::DELAYED == 0 {
        let delay = sleep && flags & qflags::SPECIAL == 0;
        if params.features.has(Feature::DELAY_DEQUEUE) && delay && !cfs.entity_eligible(ents, p) {
            update_load_avg(cfs, ents, p, clocks, NONE, params);
            set_delayed(cfs, ents, p);
            return (false, upd);
        }
    }
    let action = UpdateFlags {
        do_detach: ents.migrating(p),
        ..TG
    };
    update_load_avg(cfs, ents, p, clocks, action, params);
    if E::GROUPS {
        ents.se_update_runnable(p);
    }
    update_entity_lag(cfs, ents, p, params.tick_nsec);
    if params.features.has(Feature::PLACE_REL_DEADLINE) && !sleep {
        let se = ents.se_mut(p);
        se.deadline = se.deadline.wrapping_sub(se.vruntime);
        se.rel_deadline = true;
    }
    if cfs.curr != Some(p) {
        cfs.dequeue_tree(ents, p);
    }
    ents.se_mut(p).on_rq = false;
    // account_entity_dequeue
    cfs.load.sub(ents.se(p).load.weight);
    cfs.nr_running -= 1;
    if E::GROUPS {
        // return_cfs_rq_runtime: the last entity leaving hands back unused runtime.
        if cfs.bw.runtime_enabled && cfs.nr_running == 0 {
            ents.return_runtime(cfs);
        }
        upd.resched |= update_cfs_group(cfs, ents, p, clocks, params);
    }
    if flags & qflags::DELAYED != 0 {
        // finish_delayed_dequeue_entity
        clear_delayed(cfs, ents, p);
        if params.features.has(Feature::DELAY_ZERO) && ents.se(p).vlag > 0 {
            ents.se_mut(p).vlag = 0;
        }
    }
    (true, upd)
}

/// `requeue_delayed_entity(se)`: a delayed entity is woken before it was picked.
pub fn requeue_delayed_entity<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    clocks: RqClocks,
    params: &FairParams,
) {
    if params.features.has(Feature::DELAY_ZERO) {
        update_entity_lag(cfs, ents, p, params.tick_nsec);
        if ents.se(p).vlag > 0 {
            cfs.nr_running -= 1;
            let in_tree = cfs.curr != Some(p);
            if in_tree {
                cfs.dequeue_tree(ents, p);
            }
            ents.se_mut(p).vlag = 0;
            place_entity(cfs, ents, p, 0, params);
            if in_tree {
                cfs.enqueue_tree(ents, p);
            }
            cfs.nr_running += 1;
        }
    }
    update_load_avg(cfs, ents, p, clocks, NONE, params);
    clear_delayed(cfs, ents, p);
}

/// `set_next_entity(cfs_rq, se)`: the entity leaves the tree to become current.
pub fn set_next_entity<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    clocks: RqClocks,
    params: &FairParams,
) {
    clear_buddies(cfs, ents, p);
    if ents.se(p).on_rq {
        cfs.dequeue_tree(ents, p);
        update_load_avg(cfs, ents, p, clocks, TG, params);
        set_protect_slice(ents.se_mut(p));
    }
    // update_stats_curr_start
    ents.se_mut(p).exec_start = clocks.clock_task;
    cfs.curr = Some(p);
    ents.se_mut(p).prev_sum_exec_runtime = ents.se(p).sum_exec_runtime;
}

/// `put_prev_entity(cfs_rq, prev)`: a still-queued previous entity goes back in the tree.
pub fn put_prev_entity<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    clocks: RqClocks,
    params: &FairParams,
) -> CurrUpdate {
    let upd = put_prev_entity_update(cfs, ents, p, clocks, params);
    put_prev_entity_finish(cfs, ents, p, clocks, params);
    upd
}

/// The first half of `put_prev_entity`: a still-queued entity's time is charged. With
/// task groups, `check_cfs_rq_runtime` runs between the halves.
pub(crate) fn put_prev_entity_update<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    clocks: RqClocks,
    params: &FairParams,
) -> CurrUpdate {
    if ents.se(p).on_rq {
        update_curr(cfs, ents, clocks, params)
    } else {
        CurrUpdate::default()
    }
}

/// The second half of `put_prev_entity`: a still-queued entity goes back in the tree.
pub(crate) fn put_prev_entity_finish<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    clocks: RqClocks,
    params: &FairParams,
) {
    if ents.se(p).on_rq {
        cfs.enqueue_tree(ents, p);
        update_load_avg(cfs, ents, p, clocks, NONE, params);
    }
    cfs.curr = None;
}

/// `entity_tick(cfs_rq, curr, 0)`.
pub fn entity_tick<E: Entities + ?Sized>(
    cfs: &mut CfsRq,
    ents: &mut E,
    p: TaskId,
    clocks: RqClocks,
    params: &FairParams,
) -> CurrUpdate {
    let mut upd = update_curr(cfs, ents, clocks, params);
    update_load_avg(cfs, ents, p, clocks, TG, params);
    if E::GROUPS {
        upd.resched |= update_cfs_group(cfs, ents, p, clocks, params);
    }
    upd
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairsim_pelt::{CfsRqAvg, SchedAvg};

    /// The traced update is the untraced one with a listener: equal
    /// signals after a run of updates, attaches and detaches, and a `pelt_se_tp` exactly
    /// when the entity's update returned true.
    #[test]
    fn the_traced_update_is_the_untraced_one() {
        let mut a = (CfsRqAvg::default(), SchedAvg::default());
        let mut b = a;
        let mut tps = Vec::new();
        let mut now = 5 << 20;
        let steps: [(u64, bool, bool); 8] = [
            (0, true, false),
            (700_000, false, false),
            (1_500, false, false),
            (4_000_000, false, true),
            (0, true, false),
            (33_000_000, false, false),
            (999, false, false),
            (2_000_000, false, false),
        ];
        for (dt, attach, detach) in steps {
            now += dt;
            if attach {
                a.1.last_update_time = 0;
                b.1.last_update_time = 0;
            }
            let flags = UpdateFlags {
                do_attach: attach,
                do_detach: detach,
                ..UpdateFlags::default()
            };
            let cfs_inp = CfsRqInputs {
                load: 1024,
                runnable: 1,
                running: true,
            };
            let se_inp = SeInputs {
                weight: 1024,
                on_rq: true,
                runnable: 1,
                running: true,
            };
            let out = update_load_avg_task(now, &mut a.0, cfs_inp, &mut a.1, se_inp, flags, true);
            let before = tps.len();
            let mut log = TaskTpLog {
                task: 7,
                tps: &mut tps,
            };
            let changed = update_load_avg_task_traced(
                now, &mut b.0, cfs_inp, &mut b.1, se_inp, flags, true, &mut log,
            )
            .util_change;
            assert_eq!(a, b);
            assert_eq!(out.util_change, changed);
            // Every record of this step ends at the signals left behind, but for a
            // runqueue record an attach or detach followed.
            for tp in &tps[before..] {
                if let PeltTracepoint::Se { sig, .. } = tp {
                    assert_eq!(*sig, PeltSignals::of(&b.1));
                }
            }
            if attach || detach {
                let last = tps.last().copied();
                assert_eq!(
                    last,
                    Some(PeltTracepoint::Cfs {
                        group: 0,
                        sig: PeltSignals::of(&b.0.avg)
                    })
                );
            }
        }
        assert!(tps
            .iter()
            .any(|t| matches!(t, PeltTracepoint::Se { task: 7, .. })));
    }
}
