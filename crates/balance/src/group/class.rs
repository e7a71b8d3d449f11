//! The fair class's entry points walking the task-group hierarchy
//! (`for_each_sched_entity`), Linux 6.12.117's `enqueue_task_fair`, `dequeue_entities`,
//! `pick_task_fair`, `pick_next_task_fair`'s partial put/set, `put_prev_task_fair`,
//! `set_next_task_fair`, `task_tick_fair`, `check_preempt_wakeup_fair` and
//! `yield_task_fair` with `CONFIG_FAIR_GROUP_SCHED`.
//!
//! Each runqueue operation is one of [`crate::cfs_rq`]'s on the entity store
//! [`Hier`]; what the kernel does between the levels (the `h_nr_*` counts, slices, the
//! delayed-entity counts of the ancestors, the `next` buddy chain) is done here.

use crate::cfs_rq::{
    cancel_protect_slice, dequeue_entity, do_preempt_short, entity_tick, put_prev_entity_finish,
    put_prev_entity_update, qflags, requeue_delayed_entity, set_next_entity, update_cfs_group,
    update_curr, update_load_avg, CfsRq, FairParams, RqClocks, TG,
};
use crate::entities::Entities;
use crate::features::Feature;
use crate::sched::wf;
use crate::task::{OnRq, Policy, TaskId};
use crate::Sched;

use super::{is_group_se, CfsRef, GroupId, Hier, GROUP_SE_BIT, ROOT_GROUP};

impl Sched {
    /// `cfs_rq_of(se)` for an entity on `cpu`: a task's group runqueue there, or a group
    /// entity's parent group's.
    pub(crate) fn h_cfs_of(&self, id: usize, cpu: usize) -> CfsRef {
        if is_group_se(id) {
            let (g, c) = self.groups.group_cpu_of(id & !GROUP_SE_BIT);
            self.groups.parent_cfs(g, c)
        } else {
            CfsRef::of_group(&self.groups, self.groups.group_of(id), cpu)
        }
    }

    /// `parent_entity(se)`: the entity of the group the entity is queued in, `None` at
    /// the root.
    pub(crate) fn h_parent(&self, id: usize, cpu: usize) -> Option<usize> {
        let g = if is_group_se(id) {
            let (g, _) = self.groups.group_cpu_of(id & !GROUP_SE_BIT);
            self.groups.tgs[g].parent.unwrap_or(ROOT_GROUP)
        } else {
            self.groups.group_of(id)
        };
        (g != ROOT_GROUP).then(|| self.groups.se_id(g, cpu))
    }

    /// `se->depth`: 0 for an entity of a CPU's root runqueue.
    pub(crate) fn h_depth(&self, id: usize) -> u32 {
        if is_group_se(id) {
            let (g, _) = self.groups.group_cpu_of(id & !GROUP_SE_BIT);
            self.groups.tgs[g].depth
        } else {
            match self.groups.group_of(id) {
                ROOT_GROUP => 0,
                g => self.groups.tgs[g].depth + 1,
            }
        }
    }

    /// `group_cfs_rq(se)`: a group entity's own runqueue.
    pub(crate) fn h_my_q(&self, id: usize) -> Option<CfsRef> {
        is_group_se(id).then_some(CfsRef::Group(id & !GROUP_SE_BIT))
    }

    /// The runqueue `c`.
    pub(crate) fn h_cfs(&self, c: CfsRef) -> &CfsRq {
        match c {
            CfsRef::Root(cpu) => &self.rqs[cpu].cfs,
            CfsRef::Group(i) => &self.groups.cfs[i],
        }
    }

    /// The runqueue `c`, to change it.
    pub(crate) fn h_cfs_mut(&mut self, c: CfsRef) -> &mut CfsRq {
        match c {
            CfsRef::Root(cpu) => &mut self.rqs[cpu].cfs,
            CfsRef::Group(i) => &mut self.groups.cfs[i],
        }
    }

    /// `cfs_rq_is_idle(cfs_rq)`: the runqueue of an idle group (`cpu.idle`).
    pub(crate) fn h_cfs_is_idle(&self, c: CfsRef) -> bool {
        match c {
            CfsRef::Root(_) => false,
            CfsRef::Group(i) => self.groups.tgs[self.groups.cfs[i].tg].idle,
        }
    }

    /// `se_is_idle(se)`: a SCHED_IDLE task, or an idle group's entity.
    pub(crate) fn h_se_is_idle(&self, id: usize) -> bool {
        if is_group_se(id) {
            let (g, _) = self.groups.group_cpu_of(id & !GROUP_SE_BIT);
            self.groups.tgs[g].idle
        } else {
            self.tasks[id].policy == Policy::Idle
        }
    }

    /// Whether the entity is queued (`se->on_rq`).
    pub(crate) fn h_on_rq(&self, id: usize) -> bool {
        if is_group_se(id) {
            self.groups.se[id & !GROUP_SE_BIT].on_rq
        } else {
            self.tasks[id].se.on_rq
        }
    }

    /// Whether the entity's dequeue is delayed (`se->sched_delayed`).
    pub(crate) fn h_delayed(&self, id: usize) -> bool {
        if is_group_se(id) {
            self.groups.se[id & !GROUP_SE_BIT].sched_delayed
        } else {
            self.tasks[id].se.sched_delayed
        }
    }

    /// Runs one runqueue operation `f` on `c` (a runqueue of `cpu`) with the
    /// hierarchical entity store, then what the flat class does after each operation
    /// (`entity_op_done`: the cost counters and the cpufreq hook), the group runqueue's
    /// PELT counters, and the `next` buddy chain above an entity `clear_buddies` cleared.
    pub(crate) fn h_op<R>(
        &mut self,
        c: CfsRef,
        cpu: usize,
        f: impl FnOnce(&mut CfsRq, &mut Hier<'_>, RqClocks, &FairParams) -> R,
    ) -> R {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let clock = self.rqs[cpu].clock;
        let mut cleared = std::mem::take(&mut self.groups.cleared_next);
        let bw_resched;
        let g = &mut self.groups;
        let r = match c {
            CfsRef::Root(cpu) => {
                let mut h = Hier {
                    tasks: &mut self.tasks,
                    se: &mut g.se,
                    meta: &mut g.meta,
                    tgs: &mut g.tgs,
                    timer_arms: &mut g.timer_arms,
                    cfs_lo: &mut g.cfs,
                    cfs_hi: &mut [],
                    hole: usize::MAX,
                    clock,
                    cpu,
                    cleared_next: &mut cleared,
                    bw_resched: false,
                };
                let r = f(&mut self.rqs[cpu].cfs, &mut h, clocks, &fair);
                bw_resched = h.bw_resched;
                r
            }
            CfsRef::Group(i) => {
                let (lo, rest) = g.cfs.split_at_mut(i);
                let (cfs, hi) = rest.split_first_mut().expect("a group runqueue");
                // cfs_rq_clock_pelt: a group runqueue's PELT clock stops while its
                // hierarchy is throttled.
                let bw = &cfs.bw;
                let clocks = RqClocks {
                    clock_pelt: if bw.throttle_count != 0 {
                        bw.throttled_clock_pelt
                    } else {
                        clocks.clock_pelt
                    }
                    .wrapping_sub(bw.throttled_clock_pelt_time),
                    ..clocks
                };
                let mut h = Hier {
                    tasks: &mut self.tasks,
                    se: &mut g.se,
                    meta: &mut g.meta,
                    tgs: &mut g.tgs,
                    timer_arms: &mut g.timer_arms,
                    cfs_lo: lo,
                    cfs_hi: hi,
                    hole: i,
                    clock,
                    cpu,
                    cleared_next: &mut cleared,
                    bw_resched: false,
                };
                let r = f(cfs, &mut h, clocks, &fair);
                bw_resched = h.bw_resched;
                let calls = std::mem::take(&mut cfs.pelt_calls);
                self.work.pelt_se_updates += calls.se;
                self.work.pelt_cfs_rq_updates += calls.cfs_rq;
                r
            }
        };
        // __clear_buddies_next: the ancestors that were their runqueues' next buddy
        // because of the cleared entity lose the mark too.
        for id in cleared.drain(..) {
            let mut se = self.h_parent(id, cpu);
            while let Some(s) = se {
                let pc = self.h_cfs_of(s, cpu);
                let cfs = self.h_cfs_mut(pc);
                if cfs.next != Some(s) {
                    break;
                }
                cfs.next = None;
                se = self.h_parent(s, cpu);
            }
        }
        self.groups.cleared_next = cleared;
        self.entity_op_done(cpu);
        if bw_resched {
            self.resched_curr(cpu);
        }
        r
    }

    /// The rest of `set_delayed`/`clear_delayed` for a task: its ancestors' runqueues
    /// count it as delayed (or runnable again) too, when the operation just run on its
    /// own runqueue changed `sched_delayed` (`was`).
    pub(crate) fn h_fix_delayed(&mut self, id: usize, cpu: usize, was: bool) {
        if is_group_se(id) {
            return;
        }
        let now = self.tasks[id].se.sched_delayed;
        if now == was {
            return;
        }
        // The walk ends at a throttled runqueue: what is below it is already off the
        // counts above it.
        if self.h_throttled(self.h_cfs_of(id, cpu)) {
            return;
        }
        let mut se = self.h_parent(id, cpu);
        while let Some(s) = se {
            let c = self.h_cfs_of(s, cpu);
            let cfs = self.h_cfs_mut(c);
            if now {
                cfs.h_nr_runnable -= 1;
                cfs.h_nr_delayed += 1;
            } else {
                cfs.h_nr_runnable += 1;
                cfs.h_nr_delayed -= 1;
            }
            if self.h_throttled(c) {
                break;
            }
            se = self.h_parent(s, cpu);
        }
    }

    /// `cfs_rq_min_slice(cfs_rq)`: the smallest slice of the queued entities (the
    /// kernel keeps it in the tree's augmented data; here the tree is read).
    pub(crate) fn h_min_slice(&self, c: CfsRef) -> u64 {
        let cfs = self.h_cfs(c);
        let mut min = u64::MAX;
        if let Some(cur) = cfs.curr {
            let se = self.h_se(cur);
            if se.on_rq {
                min = se.slice;
            }
        }
        for &id in cfs.timeline.values() {
            min = min.min(self.h_se(id).slice);
        }
        min
    }

    /// The entity `id`.
    pub(crate) fn h_se(&self, id: usize) -> &crate::task::SchedEntity {
        if is_group_se(id) {
            &self.groups.se[id & !GROUP_SE_BIT]
        } else {
            &self.tasks[id].se
        }
    }

    /// The entity `id`, to change it.
    pub(crate) fn h_se_mut(&mut self, id: usize) -> &mut crate::task::SchedEntity {
        if is_group_se(id) {
            &mut self.groups.se[id & !GROUP_SE_BIT]
        } else {
            &mut self.tasks[id].se
        }
    }

    /// Adds `queued` tasks (`runnable` of them not delayed, `idle` SCHED_IDLE ones) to
    /// runqueue `c`'s hierarchical counts; negative numbers remove them.
    pub(crate) fn h_count(
        &mut self,
        c: CfsRef,
        queued: i32,
        runnable: i32,
        delayed: i32,
        idle: i32,
    ) {
        let cfs = self.h_cfs_mut(c);
        cfs.h_nr_queued = cfs.h_nr_queued.wrapping_add_signed(queued);
        cfs.h_nr_runnable = cfs.h_nr_runnable.wrapping_add_signed(runnable);
        cfs.h_nr_delayed = cfs.h_nr_delayed.wrapping_add_signed(delayed);
        cfs.idle_h_nr_running = cfs.idle_h_nr_running.wrapping_add_signed(idle);
    }

    /// `requeue_delayed_entity(se)` on the entity's runqueue of `cpu`.
    pub(crate) fn h_requeue_delayed(&mut self, id: usize, cpu: usize) {
        let c = self.h_cfs_of(id, cpu);
        let was = self.h_delayed(id);
        self.h_op(c, cpu, |cfs, h, clocks, fair| {
            requeue_delayed_entity(cfs, h, id, clocks, fair)
        });
        self.h_fix_delayed(id, cpu, was);
    }

    /// `enqueue_task_fair(rq, p, flags)` walking the hierarchy: the entities not yet
    /// queued are enqueued bottom-up, then the ancestors' loads and weights are brought
    /// up to date; each level counts the task.
    pub(crate) fn enqueue_task_fair_hier(&mut self, cpu: usize, p: TaskId, mut flags: u32) {
        let fair = self.fair;
        let task_new = flags & qflags::SLEEP_WAKEUP == 0;
        {
            let t = &self.tasks[p];
            if !(t.se.sched_delayed && (t.on_rq_migrating() || flags & qflags::SAVE_RESTORE != 0)) {
                fairsim_pelt::util_est_enqueue(
                    &mut self.rqs[cpu].cfs.avg.avg,
                    &t.se.avg,
                    fair.util_est,
                );
                self.work.util_est_enqueues += u64::from(fair.util_est.enabled());
                if fair.util_est.enabled() {
                    let avg = &self.rqs[cpu].cfs.avg.avg;
                    let tp = crate::pelt_tp::PeltTracepoint::util_est_cfs(avg);
                    self.pelt_tp.push(cpu, tp);
                }
            }
        }
        if flags & qflags::DELAYED != 0 {
            self.h_requeue_delayed(p, cpu);
            return;
        }
        if self.tasks[p].in_iowait {
            self.cpufreq_update_util(cpu, crate::cpufreq::SCHED_CPUFREQ_IOWAIT);
        }
        let h_nr_delayed = i32::from(task_new && self.tasks[p].se.sched_delayed);
        let runnable = 1 - h_nr_delayed;
        let mut idle = i32::from(self.tasks[p].policy == Policy::Idle);
        let mut slice = 0u64;
        let mut se = Some(p);
        while let Some(s) = se {
            if self.h_on_rq(s) {
                if self.h_delayed(s) {
                    self.h_requeue_delayed(s, cpu);
                }
                break;
            }
            let c = self.h_cfs_of(s, cpu);
            if slice != 0 {
                let e = self.h_se_mut(s);
                e.slice = slice;
                e.custom_slice = true;
            }
            self.h_enqueue_entity(c, s, flags, cpu);
            if !is_group_se(s) {
                // account_entity_enqueue: tasks join the CPU's cfs_tasks list.
                self.rqs[cpu].cfs_tasks_add(s);
            }
            slice = self.h_min_slice(c);
            self.h_count(c, 1, runnable, h_nr_delayed, idle);
            if self.h_cfs_is_idle(c) {
                idle = 1;
            }
            // A throttled runqueue ends the walk: the task waits there, uncounted above.
            if self.h_throttled(c) {
                return;
            }
            flags = qflags::SLEEP_WAKEUP;
            se = self.h_parent(s, cpu);
        }
        if !self.h_update_up(se, cpu, slice, [1, runnable, h_nr_delayed, idle]) {
            return;
        }
        self.add_nr_running(cpu, 1);
        if !task_new {
            self.check_update_overutilized_status(cpu);
        }
    }

    /// `dequeue_entities(rq, se, flags)` walking the hierarchy, for a task's entity or a
    /// delayed group entity the pick met: -1 when the task's dequeue was delayed, 1 when
    /// done.
    pub(crate) fn dequeue_entities_hier(&mut self, cpu: usize, id: usize, mut flags: u32) -> i32 {
        let was_sched_idle = self.rqs[cpu].sched_idle_rq();
        let task_sleep = flags & qflags::SLEEP_WAKEUP != 0;
        let task_delayed = flags & qflags::DELAYED != 0;
        let task = (!is_group_se(id)).then_some(id);
        let (queued, mut idle, h_nr_delayed) = match task {
            Some(p) => (
                1,
                i32::from(self.tasks[p].policy == Policy::Idle),
                i32::from(!task_sleep && !task_delayed && self.tasks[p].se.sched_delayed),
            ),
            None => (0, 0, 0),
        };
        let runnable = if h_nr_delayed == 0 { queued } else { 0 };
        let jiffies = self.jiffies_now();
        let mut slice = 0u64;
        let mut se = Some(id);
        while let Some(s) = se {
            let c = self.h_cfs_of(s, cpu);
            let was = self.h_delayed(s);
            let (done, upd) = self.h_op(c, cpu, |cfs, h, clocks, fair| {
                dequeue_entity(cfs, h, s, flags, clocks, fair)
            });
            if upd.resched {
                self.rqs[cpu].need_resched = true;
            }
            self.h_fix_delayed(s, cpu, was);
            if !done {
                if task == Some(s) {
                    return -1;
                }
                slice = self.h_min_slice(c);
                break;
            }
            if !is_group_se(s) {
                self.rqs[cpu].cfs_tasks_del(s);
            }
            self.h_count(c, -queued, -runnable, -h_nr_delayed, -idle);
            if self.h_cfs_is_idle(c) {
                idle = queued;
            }
            if self.h_throttled(c) {
                return self.dequeue_out(task, task_delayed, 0);
            }
            if self.h_cfs(c).load.weight != 0 {
                slice = self.h_min_slice(c);
                se = self.h_parent(s, cpu);
                // Bias the next pick to this group: the task sleeps within its slice.
                if task_sleep && !self.h_throttled_hierarchy(c) {
                    if let Some(parent) = se {
                        self.h_set_next_buddy(parent, cpu);
                    }
                }
                break;
            }
            flags |= qflags::SLEEP_WAKEUP;
            flags &= !(qflags::DELAYED | qflags::SPECIAL);
            se = self.h_parent(s, cpu);
        }
        let counts = [-queued, -runnable, -h_nr_delayed, -idle];
        if !self.h_update_up(se, cpu, slice, counts) {
            return self.dequeue_out(task, task_delayed, 0);
        }
        // sub_nr_running
        let rq = &mut self.rqs[cpu];
        rq.nr_running -= queued as u32;
        if !was_sched_idle && rq.sched_idle_rq() {
            rq.next_balance = jiffies;
        }
        self.dequeue_out(task, task_delayed, 1)
    }

    /// The second walk of `enqueue_task_fair` and `dequeue_entities`: from `se` up, each
    /// entity's load, runnable count and weight are brought up to date, its slice becomes
    /// its runqueue's smallest, and its runqueue counts the change (`counts`: queued,
    /// runnable, delayed and idle tasks, negative on dequeue; below an idle group, all the
    /// tasks count as idle). Returns false when a throttled runqueue ended the walk.
    fn h_update_up(
        &mut self,
        mut se: Option<usize>,
        cpu: usize,
        mut slice: u64,
        counts: [i32; 4],
    ) -> bool {
        let [queued, runnable, delayed, mut idle] = counts;
        while let Some(s) = se {
            let c = self.h_cfs_of(s, cpu);
            let resched = self.h_op(c, cpu, |cfs, h, clocks, fair| {
                update_load_avg(cfs, h, s, clocks, TG, fair);
                h.se_update_runnable(s);
                update_cfs_group(cfs, h, s, clocks, fair)
            });
            if resched {
                self.rqs[cpu].need_resched = true;
            }
            self.h_se_mut(s).slice = slice;
            slice = self.h_min_slice(c);
            self.h_count(c, queued, runnable, delayed, idle);
            if self.h_cfs_is_idle(c) {
                idle = queued;
            }
            if self.h_throttled(c) {
                return false;
            }
            se = self.h_parent(s, cpu);
        }
        true
    }

    /// The end of `dequeue_entities`: a delayed task's dequeue finishes blocking it
    /// (`__block_task`); `ret` is 1 when done, 0 when a throttled runqueue ended the walk.
    fn dequeue_out(&mut self, task: Option<TaskId>, task_delayed: bool, ret: i32) -> i32 {
        if let (Some(p), true) = (task, task_delayed) {
            self.tasks[p].on_rq = OnRq::No;
        }
        ret
    }

    /// `set_next_buddy(se)`: the entity and its ancestors become their runqueues' `next`
    /// buddies, up to the first idle one.
    pub(crate) fn h_set_next_buddy(&mut self, id: usize, cpu: usize) {
        let mut se = Some(id);
        while let Some(s) = se {
            if !self.h_on_rq(s) || self.h_se_is_idle(s) {
                return;
            }
            let c = self.h_cfs_of(s, cpu);
            self.h_cfs_mut(c).next = Some(s);
            se = self.h_parent(s, cpu);
        }
    }

    /// `pick_task_fair(rq)` walking down: at each level the runqueue's current entity is
    /// brought up to date and `pick_next_entity` chooses (a delayed entity it meets is
    /// dequeued and the pick starts over at the root).
    pub(crate) fn pick_task_fair_hier(&mut self, cpu: usize) -> Option<TaskId> {
        'again: loop {
            let mut c = CfsRef::Root(cpu);
            if self.rqs[cpu].cfs.nr_running == 0 {
                return None;
            }
            loop {
                if let Some(cur) = self.h_cfs(c).curr {
                    if self.h_on_rq(cur) {
                        let upd = self.h_op(c, cpu, |cfs, h, clocks, fair| {
                            update_curr(cfs, h, clocks, fair)
                        });
                        if upd.resched {
                            self.rqs[cpu].need_resched = true;
                        }
                    }
                }
                if self.check_cfs_rq_runtime(c) {
                    continue 'again;
                }
                let feat = self.fair.features;
                let se = self.h_op(c, cpu, |cfs, h, _, _| {
                    if feat.has(Feature::PICK_BUDDY) {
                        if let Some(nx) = cfs.next {
                            if cfs.entity_eligible(h, nx) {
                                return Some(nx);
                            }
                        }
                    }
                    cfs.pick_eevdf(h, feat)
                })?;
                if self.h_delayed(se) {
                    self.dequeue_entities_hier(cpu, se, qflags::SLEEP_WAKEUP | qflags::DELAYED);
                    continue 'again;
                }
                match self.h_my_q(se) {
                    Some(q) => c = q,
                    None => return Some(se),
                }
            }
        }
    }

    /// The fair-class half of `pick_next_task_fair` with groups once `p` is picked: when
    /// the previous task was the fair class's current one, only the levels where the two
    /// tasks' ancestries differ are put and set (the walk by depth to their common
    /// runqueue); otherwise every level of `p` is set (`set_next_task_fair`). Then
    /// `__set_next_task_fair`.
    pub(crate) fn switch_fair_hier(&mut self, cpu: usize, prev: Option<TaskId>, p: TaskId) {
        let prev_fair = prev.filter(|&pv| self.is_fair_curr(cpu, pv));
        match prev_fair {
            Some(pv) => {
                let mut se = p;
                let mut pse = pv;
                loop {
                    let c_se = self.h_cfs_of(se, cpu);
                    let c_pse = self.h_cfs_of(pse, cpu);
                    if c_se == c_pse {
                        break;
                    }
                    let sd = self.h_depth(se);
                    let pd = self.h_depth(pse);
                    if sd <= pd {
                        self.h_put_prev_entity(c_pse, pse, cpu);
                        pse = self.h_parent(pse, cpu).unwrap_or(pse);
                    }
                    if sd >= pd {
                        self.h_set_next_entity(c_se, se, cpu);
                        se = self.h_parent(se, cpu).unwrap_or(se);
                    }
                }
                let c = self.h_cfs_of(se, cpu);
                self.h_put_prev_entity(c, pse, cpu);
                self.h_set_next_entity(c, se, cpu);
            }
            None => {
                let mut se = Some(p);
                while let Some(s) = se {
                    let c = self.h_cfs_of(s, cpu);
                    self.h_set_next_entity(c, s, cpu);
                    // Make sure bandwidth has been allocated on the new runqueue.
                    self.account_cfs_rq_runtime(c, cpu, 0);
                    se = self.h_parent(s, cpu);
                }
            }
        }
        // __set_next_task_fair(rq, p, true)
        if self.tasks[p].se.on_rq {
            self.rqs[cpu].cfs_tasks_move_front(p);
        }
        self.update_misfit_status(Some(p), cpu);
    }

    /// `put_prev_entity(cfs_rq, prev)` with `check_cfs_rq_runtime` between charging the
    /// entity and putting it back: a group runqueue out of runtime is throttled here.
    pub(crate) fn h_put_prev_entity(&mut self, c: CfsRef, id: usize, cpu: usize) {
        let upd = self.h_op(c, cpu, |cfs, h, clocks, fair| {
            put_prev_entity_update(cfs, h, id, clocks, fair)
        });
        if upd.resched {
            self.rqs[cpu].need_resched = true;
        }
        self.check_cfs_rq_runtime(c);
        self.h_op(c, cpu, |cfs, h, clocks, fair| {
            put_prev_entity_finish(cfs, h, id, clocks, fair)
        });
    }

    pub(crate) fn h_set_next_entity(&mut self, c: CfsRef, id: usize, cpu: usize) {
        self.h_op(c, cpu, |cfs, h, clocks, fair| {
            set_next_entity(cfs, h, id, clocks, fair)
        });
    }

    /// `put_prev_task_fair(rq, prev)`: every level of the task is put.
    pub(crate) fn put_prev_task_fair_hier(&mut self, cpu: usize, p: TaskId) {
        let mut se = Some(p);
        while let Some(s) = se {
            let c = self.h_cfs_of(s, cpu);
            self.h_put_prev_entity(c, s, cpu);
            se = self.h_parent(s, cpu);
        }
    }

    /// Whether `p` is its runqueue's current entity (not yet put back).
    pub(crate) fn is_fair_curr(&self, cpu: usize, p: TaskId) -> bool {
        if self.groups.active() {
            self.h_cfs(self.h_cfs_of(p, cpu)).curr == Some(p)
        } else {
            self.rqs[cpu].cfs.curr == Some(p)
        }
    }

    /// `task_tick_fair(rq, curr, 0)`: `entity_tick` at every level, then the misfit and
    /// overutilized status.
    pub(crate) fn task_tick_fair_hier(&mut self, cpu: usize, curr: TaskId) {
        let mut se = Some(curr);
        while let Some(s) = se {
            let c = self.h_cfs_of(s, cpu);
            let upd = self.h_op(c, cpu, |cfs, h, clocks, fair| {
                entity_tick(cfs, h, s, clocks, fair)
            });
            if upd.resched {
                self.rqs[cpu].need_resched = true;
            }
            se = self.h_parent(s, cpu);
        }
        self.update_misfit_status(Some(curr), cpu);
        self.check_update_overutilized_status(cpu);
    }

    /// `find_matching_se(&se, &pse)`: the two entities' ancestors that are queued on the
    /// same runqueue.
    pub(crate) fn h_find_matching_se(
        &self,
        mut se: usize,
        mut pse: usize,
        cpu: usize,
    ) -> (usize, usize) {
        let mut sd = self.h_depth(se);
        let mut pd = self.h_depth(pse);
        while sd > pd {
            sd -= 1;
            se = self.h_parent(se, cpu).unwrap_or(se);
        }
        while pd > sd {
            pd -= 1;
            pse = self.h_parent(pse, cpu).unwrap_or(pse);
        }
        while self.h_cfs_of(se, cpu) != self.h_cfs_of(pse, cpu) {
            se = self.h_parent(se, cpu).unwrap_or(se);
            pse = self.h_parent(pse, cpu).unwrap_or(pse);
        }
        (se, pse)
    }

    /// `check_preempt_wakeup_fair(rq, p, wake_flags)` with groups: the wakee's and the
    /// current task's ancestors on a common runqueue are compared.
    pub(crate) fn check_preempt_wakeup_fair_hier(
        &mut self,
        cpu: usize,
        curr: TaskId,
        p: TaskId,
        wake_flags: u32,
    ) {
        if curr == p {
            return;
        }
        // attach_tasks may wake a task into a hierarchy its enqueue just throttled.
        if self.h_throttled_hierarchy(self.h_cfs_of(p, cpu)) {
            return;
        }
        let feat = self.fair.features;
        if feat.has(Feature::NEXT_BUDDY)
            && wake_flags & wf::FORK == 0
            && !self.tasks[p].se.sched_delayed
        {
            self.h_set_next_buddy(p, cpu);
        }
        if self.rqs[cpu].need_resched || !feat.has(Feature::WAKEUP_PREEMPTION) {
            return;
        }
        let (se, pse) = self.h_find_matching_se(curr, p, cpu);
        let cse_is_idle = self.h_se_is_idle(se);
        let pse_is_idle = self.h_se_is_idle(pse);
        if cse_is_idle && !pse_is_idle {
            cancel_protect_slice(self.h_se_mut(se));
            self.resched_curr(cpu);
            return;
        }
        if cse_is_idle != pse_is_idle || self.tasks[p].policy != Policy::Normal {
            return;
        }
        let c = self.h_cfs_of(se, cpu);
        let (resched, picked) = self.h_op(c, cpu, |cfs, h, clocks, fair| {
            let upd = update_curr(cfs, h, clocks, fair);
            if do_preempt_short(cfs, h, pse, se, feat) {
                cancel_protect_slice(h.se_mut(se));
            }
            (upd.resched, cfs.pick_eevdf(h, feat))
        });
        if resched {
            self.rqs[cpu].need_resched = true;
        }
        if picked == Some(pse) {
            self.resched_curr(cpu);
        }
    }

    /// `yield_task_fair(rq)` with groups: the current task gives up the rest of its
    /// request on its own runqueue.
    pub(crate) fn yield_task_fair_hier(&mut self, cpu: usize, curr: TaskId) {
        let c = self.h_cfs_of(curr, cpu);
        let upd = self.h_op(c, cpu, |cfs, h, clocks, fair| {
            crate::cfs_rq::clear_buddies(cfs, h, curr);
            update_curr(cfs, h, clocks, fair)
        });
        if upd.resched {
            self.rqs[cpu].need_resched = true;
        }
        let se = &mut self.tasks[curr].se;
        let vslice = crate::weight::calc_delta_fair(se.slice, &mut se.load);
        se.deadline = se.deadline.wrapping_add(vslice);
    }

    /// The group-entity part of `__sched_group_set_shares` on one CPU: group `g`'s entity
    /// and its ancestors are brought up to date and reweighted.
    pub(crate) fn refresh_group_weights(&mut self, g: GroupId, cpu: usize) {
        let mut se = Some(self.groups.se_id(g, cpu));
        while let Some(s) = se {
            let c = self.h_cfs_of(s, cpu);
            let resched = self.h_op(c, cpu, |cfs, h, clocks, fair| {
                update_load_avg(cfs, h, s, clocks, TG, fair);
                update_cfs_group(cfs, h, s, clocks, fair)
            });
            if resched {
                self.rqs[cpu].need_resched = true;
            }
            se = self.h_parent(s, cpu);
        }
    }

    /// The per-CPU part of `sched_group_set_idle`: the group's queued tasks that are not
    /// SCHED_IDLE themselves move into (or out of) the idle counts of the runqueues its
    /// entity is queued on, up to the first idle one.
    pub(crate) fn propagate_group_idle(&mut self, g: GroupId, cpu: usize, idle: bool) {
        let i = self.groups.idx(g, cpu);
        let gcfs = &self.groups.cfs[i];
        let mut delta = gcfs.h_nr_queued as i32 - gcfs.idle_h_nr_running as i32;
        if !idle {
            delta = -delta;
        }
        let mut se = Some(GROUP_SE_BIT | i);
        while let Some(s) = se {
            if !self.h_on_rq(s) {
                break;
            }
            let c = self.h_cfs_of(s, cpu);
            self.h_count(c, 0, 0, 0, delta);
            if self.h_cfs_is_idle(c) {
                break;
            }
            se = self.h_parent(s, cpu);
        }
    }
}
