//! The CFS fair class's entry points as kernel/sched/core.c calls them (3.9 to 6.5):
//! `enqueue_task_fair`, `dequeue_task_fair`, `pick_next_task_fair`,
//! `put_prev_task_fair`, `set_next_task_fair` (`set_curr_task_fair` before 5.x),
//! `task_tick_fair`, `check_preempt_wakeup`, `task_fork_fair`, `task_waking_fair`
//! (3.9 and 4.5), `migrate_task_rq_fair`'s vruntime part (4.15 on) and
//! `yield_task_fair`. [`crate::sched`] dispatches here when the run's kernel is a CFS
//! one; the EEVDF class of 6.12 is never entered for such a run.

use crate::cfs_rq::qflags;
use crate::features::Feature;
use crate::kernel::Kernel;
use crate::sched::{wf, Sched};
use crate::task::{TaskId, TaskState};

use super::entity::{
    clear_buddies, dequeue_entity, enqueue_entity, entity_tick, place_entity, put_prev_entity,
    set_next_entity, update_curr, vruntime_before,
};
use super::pick::{
    pick_next_entity, set_last_buddy, set_next_buddy, set_skip_buddy, wakeup_preempt_entity,
};

impl Sched {
    /// `enqueue_task_fair(rq, p, flags)` of CFS on the flat hierarchy: the entity, then
    /// `h_nr_running` and `add_nr_running` (util_est first where the era has it: seed
    /// 003's 4.16 patch and 6.5).
    pub(crate) fn enqueue_task_fair_cfs(&mut self, cpu: usize, p: TaskId, flags: u32) {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        if fair.util_est.enabled() {
            fairsim_pelt::util_est_enqueue(
                &mut self.rqs[cpu].cfs.avg.avg,
                &self.tasks[p].se.avg,
                fair.util_est,
            );
            self.work.util_est_enqueues += 1;
        }
        if self.tasks[p].in_iowait {
            self.cpufreq_update_util(cpu, crate::cpufreq::SCHED_CPUFREQ_IOWAIT);
        }
        let rq = &mut self.rqs[cpu];
        enqueue_entity(&mut rq.cfs, &mut self.tasks, p, flags, clocks, &fair);
        self.entity_op_done(cpu);
        let rq = &mut self.rqs[cpu];
        rq.cfs_tasks_add(p);
        rq.cfs.h_nr_runnable += 1;
        rq.cfs.h_nr_queued += 1;
        rq.nr_running += 1;
        if rq.nr_running == 2 {
            self.lb.set_rd_overloaded(&self.topo, cpu, true);
        }
        // update_overutilized_status(rq), from 5.0's EAS on (6.5 here; the older eras
        // never build perf domains, so it would never fire there). A new task's first
        // enqueue is not counted: its initial util_avg could tip the root domain over.
        let task_new = flags & qflags::SLEEP_WAKEUP == 0;
        if self.fair.features.kernel().has_eas() && !task_new {
            self.check_update_overutilized_status(cpu);
        }
    }

    /// `dequeue_task_fair(rq, p, flags)` of CFS: util_est (where the era has it), the
    /// entity, the counts. CFS never delays a dequeue.
    pub(crate) fn dequeue_task_fair_cfs(&mut self, cpu: usize, p: TaskId, flags: u32) {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let sleep = flags & qflags::SLEEP_WAKEUP != 0;
        if fair.util_est.enabled() {
            fairsim_pelt::util_est_dequeue(
                &mut self.rqs[cpu].cfs.avg.avg,
                &self.tasks[p].se.avg,
                fair.util_est,
            );
            self.work.util_est_dequeues += 1;
            let sample =
                sleep && self.tasks[p].se.avg.util_est & fairsim_pelt::UTIL_AVG_UNCHANGED == 0;
            self.work.util_est_updates += u64::from(sample);
        }
        let cap = self.rqs[cpu].capacity_orig;
        fairsim_pelt::util_est_update(&mut self.tasks[p].se.avg, sleep, cap, fair.util_est);
        let rq = &mut self.rqs[cpu];
        dequeue_entity(&mut rq.cfs, &mut self.tasks, p, flags, clocks, &fair);
        self.entity_op_done(cpu);
        let rq = &mut self.rqs[cpu];
        rq.cfs_tasks_del(p);
        rq.cfs.h_nr_runnable -= 1;
        rq.cfs.h_nr_queued -= 1;
        rq.nr_running -= 1;
    }

    /// `pick_next_task_fair(rq, prev)` of CFS, including the put of the previous task
    /// and the set of the next. 3.9's `__schedule` puts the previous task back before the
    /// class picks; from 4.5 (the `CONFIG_FAIR_GROUP_SCHED` path) the current entity is
    /// updated and weighed against the tree in place, and only put when another wins.
    /// Returns `None` when the class has nothing to run (the caller balances or idles).
    pub(crate) fn pick_next_task_fair_cfs(
        &mut self,
        cpu: usize,
        prev: Option<TaskId>,
    ) -> Option<TaskId> {
        if self.rqs[cpu].cfs.nr_running == 0 {
            return None;
        }
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let kernel = fair.features.kernel();
        let prev_fair = prev.filter(|&pv| self.rqs[cpu].cfs.curr == Some(pv));
        if kernel == Kernel::V3_9 {
            if let Some(pv) = prev_fair {
                self.put_prev_task_fair_cfs(cpu, pv);
            }
            let rq = &mut self.rqs[cpu];
            let se = pick_next_entity(&mut rq.cfs, &mut self.tasks, None, &fair)?;
            self.set_next_task_fair_cfs(cpu, se);
            return Some(se);
        }
        let rq = &mut self.rqs[cpu];
        let mut curr = rq.cfs.curr;
        if let Some(c) = curr {
            if self.tasks[c].se.on_rq {
                update_curr(&mut rq.cfs, &mut self.tasks, clocks, kernel);
            } else {
                curr = None;
            }
        }
        let se = pick_next_entity(&mut rq.cfs, &mut self.tasks, curr, &fair)?;
        if prev != Some(se) {
            if let Some(pv) = prev_fair {
                self.put_prev_task_fair_cfs(cpu, pv);
            }
            self.set_next_task_fair_cfs(cpu, se);
        }
        Some(se)
    }

    /// `put_prev_task_fair(rq, prev)` of CFS.
    pub(crate) fn put_prev_task_fair_cfs(&mut self, cpu: usize, p: TaskId) {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let rq = &mut self.rqs[cpu];
        put_prev_entity(&mut rq.cfs, &mut self.tasks, p, clocks, &fair);
        self.entity_op_done(cpu);
    }

    /// `set_next_entity` for the picked task, then, as `pick_next_task_fair` does from
    /// 4.15 on (3.9 and 4.5 did not), the task moves to the front of `cfs_tasks`.
    pub(crate) fn set_next_task_fair_cfs(&mut self, cpu: usize, p: TaskId) {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let rq = &mut self.rqs[cpu];
        set_next_entity(&mut rq.cfs, &mut self.tasks, p, clocks, &fair);
        self.entity_op_done(cpu);
        if self.tasks[p].se.on_rq && fair.features.kernel() >= Kernel::V4_15 {
            self.rqs[cpu].cfs_tasks_move_front(p);
        }
        self.update_misfit_status(Some(p), cpu);
    }

    /// `task_tick_fair(rq, curr, 0)` of CFS: `entity_tick` with `check_preempt_tick`.
    pub(crate) fn task_tick_fair_cfs(&mut self, cpu: usize, curr: TaskId) {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let rq = &mut self.rqs[cpu];
        if entity_tick(&mut rq.cfs, &mut self.tasks, curr, clocks, &fair) {
            rq.need_resched = true;
        }
        self.entity_op_done(cpu);
        self.update_misfit_status(Some(curr), cpu);
    }

    /// `check_preempt_wakeup(rq, p, wake_flags)` of CFS: the wakee preempts when it is
    /// more than `wakeup_gran` behind the current task in vruntime; it then becomes the
    /// next buddy (whatever NEXT_BUDDY says), and the preempted task the last buddy when
    /// LAST_BUDDY is on and at least `sched_nr_latency` tasks are queued. NEXT_BUDDY marks
    /// every wakee (but a fork's child) when that many are queued.
    pub(crate) fn check_preempt_wakeup_cfs(
        &mut self,
        cpu: usize,
        curr: TaskId,
        p: TaskId,
        wake_flags: u32,
    ) {
        if curr == p {
            return;
        }
        let fair = self.fair;
        let feat = fair.features;
        let rq = &mut self.rqs[cpu];
        let scale = u64::from(rq.cfs.nr_running) >= fair.cfs.nr_latency;
        let mut next_buddy_marked = false;
        if feat.has(Feature::NEXT_BUDDY) && scale && wake_flags & wf::FORK == 0 {
            set_next_buddy(&mut rq.cfs, p);
            next_buddy_marked = true;
        }
        if rq.need_resched {
            return;
        }
        if !feat.has(Feature::WAKEUP_PREEMPTION) {
            return;
        }
        let clocks = self.clocks(cpu);
        let rq = &mut self.rqs[cpu];
        update_curr(&mut rq.cfs, &mut self.tasks, clocks, feat.kernel());
        if wakeup_preempt_entity(&mut self.tasks, curr, p, &fair) != 1 {
            return;
        }
        if !next_buddy_marked {
            set_next_buddy(&mut self.rqs[cpu].cfs, p);
        }
        self.resched_curr(cpu);
        if !self.tasks[curr].se.on_rq {
            return;
        }
        if feat.has(Feature::LAST_BUDDY) && scale {
            set_last_buddy(&mut self.rqs[cpu].cfs, curr);
        }
    }

    /// `task_fork_fair(p)` of CFS, on the parent's CPU: the child starts at the parent's
    /// vruntime, placed with START_DEBIT, swapped with the parent under
    /// `sysctl_sched_child_runs_first`, and made relative to `min_vruntime` until
    /// `wake_up_new_task` enqueues it.
    pub(crate) fn task_fork_fair_cfs(&mut self, p: TaskId, cpu: usize) {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let kernel = fair.features.kernel();
        let rq = &mut self.rqs[cpu];
        let curr = rq.cfs.curr;
        if let Some(c) = curr {
            update_curr(&mut rq.cfs, &mut self.tasks, clocks, kernel);
            self.tasks[p].se.vruntime = self.tasks[c].se.vruntime;
        }
        place_entity(&rq.cfs, &mut self.tasks, p, true, clocks.clock_task, &fair);
        if let Some(c) = curr {
            if fair.cfs.child_runs_first
                && vruntime_before(self.tasks[c].se.vruntime, self.tasks[p].se.vruntime)
            {
                let (a, b) = (self.tasks[c].se.vruntime, self.tasks[p].se.vruntime);
                self.tasks[c].se.vruntime = b;
                self.tasks[p].se.vruntime = a;
                self.resched_curr(cpu);
            }
        }
        let min = self.rqs[cpu].cfs.min_vruntime;
        self.tasks[p].se.vruntime = self.tasks[p].se.vruntime.wrapping_sub(min);
    }

    /// `task_waking_fair(p)` (3.9 and 4.5): a sleeping task's vruntime is made relative to
    /// its queue's `min_vruntime` as its wakeup begins; the enqueue (`ENQUEUE_WAKING`) adds
    /// the destination's.
    pub(crate) fn task_waking_fair(&mut self, p: TaskId) {
        let min = self.rqs[self.tasks[p].cpu].cfs.min_vruntime;
        self.tasks[p].se.vruntime = self.tasks[p].se.vruntime.wrapping_sub(min);
    }

    /// The CFS part of `migrate_task_rq_fair(p)` inside `set_task_cpu`: from 4.15 a
    /// waking task's vruntime is made relative to the old queue's `min_vruntime` (the
    /// `ENQUEUE_MIGRATED` enqueue adds the new one's); 4.5 to 4.16 forget `exec_start`
    /// here (6.5 does it at the enqueue; 3.9 never did).
    pub(crate) fn migrate_task_rq_fair_cfs(&mut self, p: TaskId) {
        let kernel = self.fair.features.kernel();
        let waking = self.tasks[p].state == TaskState::Sleeping && !self.tasks[p].se.on_rq;
        if kernel >= Kernel::V4_15 && waking {
            let min = self.rqs[self.tasks[p].cpu].cfs.min_vruntime;
            self.tasks[p].se.vruntime = self.tasks[p].se.vruntime.wrapping_sub(min);
        }
        if matches!(kernel, Kernel::V4_5 | Kernel::V4_15 | Kernel::V4_16) {
            self.tasks[p].se.exec_start = 0;
        }
    }

    /// `yield_task_fair(rq)` of CFS: the current task becomes the skip buddy.
    pub(crate) fn yield_task_fair_cfs(&mut self, cpu: usize) {
        let Some(curr) = self.rqs[cpu].curr else {
            return;
        };
        if self.rqs[cpu].nr_running == 1 {
            return;
        }
        let clocks = self.clocks(cpu);
        let kernel = self.fair.features.kernel();
        let rq = &mut self.rqs[cpu];
        clear_buddies(&mut rq.cfs, curr);
        update_curr(&mut rq.cfs, &mut self.tasks, clocks, kernel);
        set_skip_buddy(&mut rq.cfs, curr);
    }
}
