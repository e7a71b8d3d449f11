//! Blocking, `__schedule` (put, pick, switch, `sched_info`), the fair class's pick and
//! its put/set of the current task, the tick, and the stopper's preemption.

use super::*;

impl Sched {
    /// `block_task` for the current task of `cpu` going to sleep (from `__schedule`):
    /// dequeue with `DEQUEUE_SLEEP`; the dequeue may be delayed.
    pub fn block_current(&mut self, cpu: usize, now: u64) {
        let Some(p) = self.rqs[cpu].curr else {
            return;
        };
        self.update_rq_clock(cpu, now);
        self.tasks[p].state = TaskState::Sleeping;
        if self.dequeue_task(cpu, p, qflags::SLEEP_WAKEUP) {
            self.tasks[p].on_rq = OnRq::No;
        }
    }

    /// The current task of `cpu` exits (`do_task_dead`): it blocks for good, and a delayed
    /// dequeue is finished at once (`task_dead_fair`). The kernel finishes it with
    /// `dequeue_entities` itself, not through `dequeue_task_fair`: the blocking dequeue
    /// already removed the task's util_est and took its sample, and `sched_info` saw it
    /// leave.
    pub fn exit_current(&mut self, cpu: usize, now: u64) {
        let Some(p) = self.rqs[cpu].curr else {
            return;
        };
        self.block_current(cpu, now);
        self.tasks[p].state = TaskState::Dead;
        if self.tasks[p].se.sched_delayed {
            self.dequeue_entities(cpu, p, qflags::SLEEP_WAKEUP | qflags::DELAYED);
        }
    }

    /// `__schedule` on `cpu` after the previous task has blocked or been preempted: put the
    /// previous task back, pick the next (`pick_next_task_fair`, dequeuing delayed
    /// entities it meets, running a newidle balance when nothing is left), switch, and
    /// account schedstat and `sched_info`. Returns the new current task, `None` for idle.
    /// The newidle balance runs at this one instant (no modelled cost); an engine that
    /// models its cost uses [`Sched::schedule_stepped`].
    pub fn schedule(&mut self, cpu: usize, now: u64) -> Option<TaskId> {
        match self.schedule_inner(cpu, now, true) {
            PickOutcome::Next(n) => n,
            PickOutcome::Newidle => None,
        }
    }

    /// `__schedule` for an engine that steps newidle balances: like [`Sched::schedule`],
    /// but stops with [`PickOutcome::Newidle`] where the kernel would balance.
    pub fn schedule_stepped(&mut self, cpu: usize, now: u64) -> PickOutcome {
        self.schedule_inner(cpu, now, false)
    }

    fn schedule_inner(&mut self, cpu: usize, now: u64, inline_newidle: bool) -> PickOutcome {
        self.set_now(now);
        self.update_rq_clock(cpu, now);
        self.rqs[cpu].stats.sched_count += 1;
        let prev = self.rqs[cpu].curr;
        loop {
            if let Some(p) = self.pick_next_task(cpu, prev) {
                return PickOutcome::Next(Some(p));
            }
            if !inline_newidle {
                return PickOutcome::Newidle;
            }
            // The newidle balance runs with prev still current; a pull makes the fair
            // class pick again.
            if self.sched_balance_newidle_inline(cpu, now) > 0 {
                continue;
            }
            self.switch_to_idle(cpu, prev);
            return PickOutcome::Next(None);
        }
    }

    /// The rest of `__schedule` after a stepped newidle balance that returned `pulled`:
    /// pick again if something arrived, else switch to idle.
    pub fn schedule_after_newidle(&mut self, cpu: usize, pulled: i32, now: u64) -> Option<TaskId> {
        self.set_now(now);
        self.update_rq_clock(cpu, now);
        let prev = self.rqs[cpu].curr;
        if pulled != 0 {
            if let Some(p) = self.pick_next_task(cpu, prev) {
                return Some(p);
            }
        }
        self.switch_to_idle(cpu, prev);
        None
    }

    /// The class's `pick_next_task` with the switch's accounting: EEVDF's pick and its
    /// put/set, or the era's CFS `pick_next_task_fair`. `None` when the class is empty.
    fn pick_next_task(&mut self, cpu: usize, prev: Option<TaskId>) -> Option<TaskId> {
        if self.fair.features.kernel().is_cfs() {
            let p = self.pick_next_task_fair_cfs(cpu, prev)?;
            self.finish_switch(cpu, prev, Some(p));
            return Some(p);
        }
        if self.groups.active() {
            let p = self.pick_task_fair_hier(cpu)?;
            if prev != Some(p) {
                self.switch_fair_hier(cpu, prev, p);
            }
            self.finish_switch(cpu, prev, Some(p));
            return Some(p);
        }
        let p = self.pick_task_fair(cpu)?;
        self.switch_fair(cpu, prev, p);
        Some(p)
    }

    /// The fair-class half of `pick_next_task_fair` once `p` is picked: put the previous
    /// entity back and make `p` current, then `context_switch`'s accounting.
    fn switch_fair(&mut self, cpu: usize, prev: Option<TaskId>, p: TaskId) {
        if prev != Some(p) {
            if let Some(pv) = prev {
                if self.rqs[cpu].cfs.curr == Some(pv) {
                    self.put_prev_task_fair(cpu, pv);
                }
            }
            self.set_next_task_fair(cpu, p);
        }
        self.finish_switch(cpu, prev, Some(p));
    }

    /// The idle class is picked: put the previous fair entity back, then switch.
    fn switch_to_idle(&mut self, cpu: usize, prev: Option<TaskId>) {
        if let Some(pv) = prev {
            if self.is_fair_curr(cpu, pv) {
                self.put_prev_task(cpu, pv);
            }
        }
        self.finish_switch(cpu, prev, None);
    }

    /// Accounting of a switch from `prev` to `next` (`context_switch`, `sched_info_switch`),
    /// and, when going idle, `set_next_task_idle`'s PELT sync, `update_idle_core` and the
    /// nohz tick stop.
    fn finish_switch(&mut self, cpu: usize, prev: Option<TaskId>, next: Option<TaskId>) {
        self.rqs[cpu].need_resched = false;
        if prev != next {
            self.rqs[cpu].nr_switches += 1;
            self.sched_info_switch(cpu, prev, next);
            if let Some(pv) = prev {
                self.tasks[pv].on_cpu = false;
            }
            if let Some(nx) = next {
                self.tasks[nx].on_cpu = true;
            }
            self.rqs[cpu].curr = next;
        }
        if next.is_none() {
            // pick_next_task_idle -> set_next_task_idle
            self.rqs[cpu].stats.sched_goidle += 1;
            // update_idle_core: tell the LLC when a whole core became idle.
            self.update_idle_core(cpu);
            let util_sum = self.rqs[cpu].cfs.avg.avg.util_sum;
            self.rqs[cpu].pelt.update_idle_rq_clock_pelt(util_sum);
            // Whether the idle loop stops the tick (and calls nohz_balance_enter_idle) is
            // the engine's decision: it depends on the CPU's next timer.
        }
    }

    /// `sched_info_switch(rq, prev, next)`.
    fn sched_info_switch(&mut self, cpu: usize, prev: Option<TaskId>, next: Option<TaskId>) {
        let clock = self.rqs[cpu].clock;
        if let Some(pv) = prev {
            // sched_info_depart
            let delta = clock - self.tasks[pv].sched_info.last_arrival;
            self.rqs[cpu].stats.rq_cpu_time += delta;
            if self.tasks[pv].state == TaskState::Running {
                let si = &mut self.tasks[pv].sched_info;
                if si.last_queued == 0 {
                    si.last_queued = clock;
                }
            }
        }
        if let Some(nx) = next {
            // sched_info_arrive
            let si = &mut self.tasks[nx].sched_info;
            let delta = if si.last_queued != 0 {
                clock - si.last_queued
            } else {
                0
            };
            si.last_queued = 0;
            si.run_delay += delta;
            si.last_arrival = clock;
            si.pcount += 1;
            self.rqs[cpu].stats.run_delay += delta;
            self.rqs[cpu].stats.pcount += 1;
        }
    }

    /// `pick_task_fair(rq)`.
    fn pick_task_fair(&mut self, cpu: usize) -> Option<TaskId> {
        loop {
            let clocks = self.clocks(cpu);
            let fair = self.fair;
            let rq = &mut self.rqs[cpu];
            if rq.cfs.nr_running == 0 {
                return None;
            }
            if let Some(c) = rq.cfs.curr {
                if self.tasks[c].se.on_rq {
                    let upd = update_curr(&mut rq.cfs, &mut self.tasks, clocks, &fair);
                    if upd.resched {
                        rq.need_resched = true;
                    }
                }
            }
            // pick_next_entity
            if fair.features.has(Feature::PICK_BUDDY) {
                if let Some(nx) = rq.cfs.next {
                    if rq.cfs.entity_eligible(&self.tasks, nx) {
                        return Some(nx);
                    }
                }
            }
            let se = rq.cfs.pick_eevdf(&self.tasks, fair.features)?;
            if self.tasks[se].se.sched_delayed {
                self.dequeue_entities(cpu, se, qflags::SLEEP_WAKEUP | qflags::DELAYED);
                continue;
            }
            return Some(se);
        }
    }

    /// The class's `put_prev_task`: EEVDF's or the era's CFS one.
    fn put_prev_task(&mut self, cpu: usize, p: TaskId) {
        if self.fair.features.kernel().is_cfs() {
            self.put_prev_task_fair_cfs(cpu, p);
        } else if self.groups.active() {
            self.put_prev_task_fair_hier(cpu, p);
        } else {
            self.put_prev_task_fair(cpu, p);
        }
    }

    /// `put_prev_task_fair(rq, prev)`.
    fn put_prev_task_fair(&mut self, cpu: usize, p: TaskId) {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let rq = &mut self.rqs[cpu];
        let upd = put_prev_entity(&mut rq.cfs, &mut self.tasks, p, clocks, &fair);
        if upd.resched {
            rq.need_resched = true;
        }
        self.entity_op_done(cpu);
    }

    /// `set_next_task_fair(rq, p, true)`: the task becomes current and moves to the front
    /// of `cfs_tasks`.
    fn set_next_task_fair(&mut self, cpu: usize, p: TaskId) {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let rq = &mut self.rqs[cpu];
        set_next_entity(&mut rq.cfs, &mut self.tasks, p, clocks, &fair);
        self.entity_op_done(cpu);
        // 3.9 and 4.5 never moved a picked task to the front of cfs_tasks (their balancers
        // walk the list in enqueue order); 4.15's pick_next_task_fair added the move.
        let era_order = matches!(
            self.balancer(),
            crate::lb::era::Balancer::V3_9 | crate::lb::era::Balancer::V4_5
        );
        if self.tasks[p].se.on_rq && !era_order {
            self.rqs[cpu].cfs_tasks_move_front(p);
        }
        self.update_misfit_status(Some(p), cpu);
    }

    /// `yield_task_fair(rq)` of 6.12 (EEVDF): the current task's deadline moves on by a
    /// slice, so that the pick prefers others.
    pub(super) fn yield_task_fair(&mut self, cpu: usize) {
        let Some(curr) = self.rqs[cpu].curr else {
            return;
        };
        if self.rqs[cpu].nr_running == 1 {
            return;
        }
        if self.groups.active() {
            self.yield_task_fair_hier(cpu, curr);
            return;
        }
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let rq = &mut self.rqs[cpu];
        crate::cfs_rq::clear_buddies(&mut rq.cfs, &mut self.tasks, curr);
        let upd = update_curr(&mut rq.cfs, &mut self.tasks, clocks, &fair);
        if upd.resched {
            rq.need_resched = true;
        }
        let se = &mut self.tasks[curr].se;
        let vslice = crate::weight::calc_delta_fair(se.slice, &mut se.load);
        se.deadline = se.deadline.wrapping_add(vslice);
    }

    /// `sched_tick()` on `cpu`: `update_rq_clock`, then `task_tick_fair` for the current
    /// task. Returns whether the CPU must reschedule.
    pub fn tick(&mut self, cpu: usize, now: u64) -> bool {
        self.set_now(now);
        self.update_rq_clock(cpu, now);
        if let Some(curr) = self.rqs[cpu].curr {
            // The class's task_tick: EEVDF's or the era's CFS one.
            if self.fair.features.kernel().is_cfs() {
                self.task_tick_fair_cfs(cpu, curr);
            } else if self.groups.active() {
                self.task_tick_fair_hier(cpu, curr);
            } else {
                self.task_tick_fair(cpu, curr);
            }
        }
        // The balancer's own per-tick state (3.9's cpu_load[]).
        self.balancer_tick(cpu);
        // sched_tick: remember whether the CPU was idle for the balance softirq.
        self.lb.rq[cpu].idle_balance = self.rqs[cpu].idle_cpu();
        self.rqs[cpu].need_resched
    }

    /// `task_tick_fair(rq, curr, 0)` of 6.12: `entity_tick` and the misfit status.
    fn task_tick_fair(&mut self, cpu: usize, curr: TaskId) {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let rq = &mut self.rqs[cpu];
        let upd = entity_tick(&mut rq.cfs, &mut self.tasks, curr, clocks, &fair);
        if upd.resched {
            rq.need_resched = true;
        }
        self.entity_op_done(cpu);
        self.update_misfit_status(Some(curr), cpu);
        self.check_update_overutilized_status(cpu);
    }

    /// The stopper thread preempts `cpu`'s current task for an active balance: the task is
    /// put back in the tree (it may now be migrated) and the CPU must reschedule.
    /// `sched_exec()` (core.c) for the current task of `cpu` entering `execve` at `now`:
    /// the fair class picks a CPU with `SD_BALANCE_EXEC` (the slow path, as at fork), and
    /// when that is another CPU the local stopper moves the task there
    /// (`migration_cpu_stop` -> `move_queued_task`). Returns the destination when the task
    /// moved; the engine then reschedules both CPUs.
    pub fn sched_exec(&mut self, cpu: usize, now: u64) -> Option<usize> {
        self.set_now(now);
        let p = self.rqs[cpu].curr?;
        if self.tasks[p].nr_cpus_allowed <= 1 {
            return None;
        }
        let dest = self.select_task_rq_fair(p, self.tasks[p].cpu, wf::EXEC, cpu, now);
        if dest == cpu || !self.tasks[p].allowed_on(dest) {
            return None;
        }
        self.update_rq_clock(cpu, now);
        self.preempt_current_for_stopper(cpu);
        self.move_queued_task(cpu, p, dest, now);
        Some(dest)
    }

    /// `move_queued_task(rq, rf, p, new_cpu)`, as the stopper's `__migrate_task` runs it:
    /// deactivate on `from`, `set_task_cpu`, activate on `to`, and `wakeup_preempt`
    /// there; counted as one task moved for the engine's migration cost. Shared by the
    /// exec balance and `set_cpus_allowed_ptr`.
    pub(crate) fn move_queued_task(&mut self, from: usize, p: TaskId, to: usize, now: u64) {
        self.deactivate_task(from, p, 0);
        self.set_task_cpu(p, to);
        self.work.tasks_moved += 1;
        self.update_rq_clock(to, now);
        self.activate_task(to, p, 0);
        self.wakeup_preempt(to, p, 0);
    }

    pub(crate) fn preempt_current_for_stopper(&mut self, cpu: usize) {
        if let Some(curr) = self.rqs[cpu].curr {
            if self.is_fair_curr(cpu, curr) {
                self.put_prev_task(cpu, curr);
            }
            self.tasks[curr].on_cpu = false;
            self.sched_info_switch(cpu, Some(curr), None);
            self.rqs[cpu].curr = None;
            self.rqs[cpu].nr_switches += 1;
        }
        self.rqs[cpu].need_resched = true;
    }
}
