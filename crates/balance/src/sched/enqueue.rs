//! Putting tasks on and off a runqueue: `activate_task`/`deactivate_task`, the fair
//! class's enqueue and dequeue (with delayed dequeue), and wakeup preemption.

use super::*;
use crate::pelt_tp::PeltTracepoint;

impl Sched {
    /// `activate_task(rq, p, flags)`.
    pub fn activate_task(&mut self, cpu: usize, p: TaskId, mut flags: u32) {
        if self.tasks[p].on_rq_migrating() {
            flags |= qflags::MIGRATED;
        }
        self.enqueue_task(cpu, p, flags);
        self.tasks[p].on_rq = OnRq::Queued;
    }

    /// `deactivate_task(rq, p, flags)`: dequeue for a migration.
    pub fn deactivate_task(&mut self, cpu: usize, p: TaskId, flags: u32) {
        self.tasks[p].on_rq = OnRq::Migrating;
        self.dequeue_task(cpu, p, flags);
    }

    /// `enqueue_task(rq, p, flags)` (core.c) with `enqueue_task_fair`.
    pub(super) fn enqueue_task(&mut self, cpu: usize, p: TaskId, flags: u32) {
        if flags & qflags::SAVE_RESTORE == 0 {
            // sched_info_enqueue
            let clock = self.rqs[cpu].clock;
            let si = &mut self.tasks[p].sched_info;
            if si.last_queued == 0 {
                si.last_queued = clock;
            }
        }
        // The class's enqueue_task: EEVDF (6.12) or the era's CFS. Linux 6.5 counts the
        // task's clamps before the class's enqueue (whose cpufreq update then sees them);
        // 6.12.117 after it, as ENQUEUE_DELAYED may have cleared sched_delayed. Nothing
        // happens before clamps are in use, which only 6.5 and 6.12 allow.
        if self.fair.features.kernel().is_cfs() {
            self.uclamp_rq_inc(cpu, p);
            self.enqueue_task_fair_cfs(cpu, p, flags);
        } else if self.groups.active() {
            self.enqueue_task_fair_hier(cpu, p, flags);
            self.uclamp_rq_inc(cpu, p);
        } else {
            self.enqueue_task_fair(cpu, p, flags);
            self.uclamp_rq_inc(cpu, p);
        }
    }

    /// `enqueue_task_fair(rq, p, flags)` for the flat hierarchy.
    fn enqueue_task_fair(&mut self, cpu: usize, p: TaskId, flags: u32) {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let task_new = flags & qflags::SLEEP_WAKEUP == 0;
        {
            let t = &self.tasks[p];
            if !(t.se.sched_delayed && (t.on_rq_migrating() || flags & qflags::SAVE_RESTORE != 0)) {
                util_est_enqueue(&mut self.rqs[cpu].cfs.avg.avg, &t.se.avg, fair.util_est);
                self.work.util_est_enqueues += u64::from(fair.util_est.enabled());
                if fair.util_est.enabled() {
                    let tp = PeltTracepoint::util_est_cfs(&self.rqs[cpu].cfs.avg.avg);
                    self.pelt_tp.push(cpu, tp);
                }
            }
        }
        if flags & qflags::DELAYED != 0 {
            let rq = &mut self.rqs[cpu];
            requeue_delayed_entity(&mut rq.cfs, &mut self.tasks, p, clocks, &fair);
            self.entity_op_done(cpu);
            return;
        }
        // The entity updates below may not call the cpufreq hook, so a task that waited
        // for I/O calls it here with SCHED_CPUFREQ_IOWAIT.
        if self.tasks[p].in_iowait {
            self.cpufreq_update_util(cpu, crate::cpufreq::SCHED_CPUFREQ_IOWAIT);
        }
        let h_nr_delayed = u32::from(task_new && self.tasks[p].se.sched_delayed);
        if self.tasks[p].se.on_rq {
            if self.tasks[p].se.sched_delayed {
                let rq = &mut self.rqs[cpu];
                requeue_delayed_entity(&mut rq.cfs, &mut self.tasks, p, clocks, &fair);
                self.entity_op_done(cpu);
            }
        } else {
            let rq = &mut self.rqs[cpu];
            let upd = enqueue_entity(&mut rq.cfs, &mut self.tasks, p, flags, clocks, &fair);
            if upd.resched {
                rq.need_resched = true;
            }
            self.entity_op_done(cpu);
            let rq = &mut self.rqs[cpu];
            rq.cfs_tasks_add(p);
            if h_nr_delayed == 0 {
                rq.cfs.h_nr_runnable += 1;
            }
            rq.cfs.h_nr_queued += 1;
            rq.cfs.h_nr_delayed += h_nr_delayed;
            rq.cfs.idle_h_nr_running += u32::from(self.tasks[p].policy == Policy::Idle);
        }
        // add_nr_running: a second runnable task makes the CPU's own root domain
        // overloaded.
        let rq = &mut self.rqs[cpu];
        rq.nr_running += 1;
        if rq.nr_running == 2 {
            self.lb.set_rd_overloaded(&self.topo, cpu, true);
        }
        // A new task's first enqueue is not counted: its initial util_avg (half the
        // spare capacity) would tip the root domain over on its own.
        if !task_new {
            self.check_update_overutilized_status(cpu);
        }
    }

    /// `dequeue_task(rq, p, flags)` (core.c) with `dequeue_task_fair`. Returns false when
    /// the dequeue was delayed (the task stays queued, `sched_delayed`).
    pub(super) fn dequeue_task(&mut self, cpu: usize, p: TaskId, flags: u32) -> bool {
        if flags & qflags::SAVE_RESTORE == 0 {
            // sched_info_dequeue
            let clock = self.rqs[cpu].clock;
            let si = &mut self.tasks[p].sched_info;
            if si.last_queued != 0 {
                let delta = clock - si.last_queued;
                si.last_queued = 0;
                si.run_delay += delta;
                self.rqs[cpu].stats.run_delay += delta;
            }
        }
        // Before the class: a delayed dequeue keeps sched_delayed set.
        self.uclamp_rq_dec(cpu, p);
        if self.fair.features.kernel().is_cfs() {
            self.dequeue_task_fair_cfs(cpu, p, flags);
            return true;
        }
        self.dequeue_task_fair(cpu, p, flags)
    }

    /// `dequeue_task_fair(rq, p, flags)` of 6.12 (EEVDF): util_est, then
    /// `dequeue_entities`. Returns false when the dequeue was delayed.
    fn dequeue_task_fair(&mut self, cpu: usize, p: TaskId, flags: u32) -> bool {
        let fair = self.fair;
        let sleep = flags & qflags::SLEEP_WAKEUP != 0;
        {
            let t = &self.tasks[p];
            if !(t.se.sched_delayed && (t.on_rq_migrating() || flags & qflags::SAVE_RESTORE != 0)) {
                util_est_dequeue(&mut self.rqs[cpu].cfs.avg.avg, &t.se.avg, fair.util_est);
                self.work.util_est_dequeues += u64::from(fair.util_est.enabled());
                if fair.util_est.enabled() {
                    let tp = PeltTracepoint::util_est_cfs(&self.rqs[cpu].cfs.avg.avg);
                    self.pelt_tp.push(cpu, tp);
                }
            }
            // util_est_update returns before its arithmetic unless the task slept and its
            // util_avg moved since the last sample; only a sample costs the update's time.
            let sample = fair.util_est.enabled()
                && sleep
                && t.se.avg.util_est & fairsim_pelt::UTIL_AVG_UNCHANGED == 0;
            self.work.util_est_updates += u64::from(sample);
        }
        let cap = self.rqs[cpu].capacity_orig;
        let before = self.tasks[p].se.avg.util_est;
        util_est_update(&mut self.tasks[p].se.avg, sleep, cap, fair.util_est);
        // util_est_update reached its `done:` (and its tracepoint) when it set the flag
        // its early returns leave clear.
        let unchanged = fairsim_pelt::UTIL_AVG_UNCHANGED;
        if before & unchanged == 0 && self.tasks[p].se.avg.util_est & unchanged != 0 {
            let tp = PeltTracepoint::util_est_se(p, &self.tasks[p].se.avg);
            self.pelt_tp.push(cpu, tp);
        }
        self.dequeue_entities(cpu, p, flags) >= 0
    }

    /// `dequeue_entities(rq, &p->se, flags)`: the hierarchy's walk when task groups
    /// exist, else the flat one.
    pub(super) fn dequeue_entities(&mut self, cpu: usize, p: TaskId, flags: u32) -> i32 {
        if self.groups.active() {
            return self.dequeue_entities_hier(cpu, p, flags);
        }
        self.dequeue_entities_flat(cpu, p, flags)
    }

    /// `dequeue_entities(rq, &p->se, flags)` for the flat hierarchy.
    fn dequeue_entities_flat(&mut self, cpu: usize, p: TaskId, flags: u32) -> i32 {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let task_sleep = flags & qflags::SLEEP_WAKEUP != 0;
        let task_delayed = flags & qflags::DELAYED != 0;
        let h_nr_delayed =
            u32::from(!task_sleep && !task_delayed && self.tasks[p].se.sched_delayed);
        let idle_h_nr_running = u32::from(self.tasks[p].policy == Policy::Idle);
        let was_sched_idle = self.rqs[cpu].sched_idle_rq();
        let jiffies = self.jiffies_now();
        let rq = &mut self.rqs[cpu];
        let (done, upd) = dequeue_entity(&mut rq.cfs, &mut self.tasks, p, flags, clocks, &fair);
        if upd.resched {
            rq.need_resched = true;
        }
        self.entity_op_done(cpu);
        if !done {
            return -1;
        }
        let rq = &mut self.rqs[cpu];
        rq.cfs_tasks_del(p);
        if h_nr_delayed == 0 {
            rq.cfs.h_nr_runnable -= 1;
        }
        rq.cfs.h_nr_queued -= 1;
        rq.cfs.h_nr_delayed -= h_nr_delayed;
        rq.cfs.idle_h_nr_running -= idle_h_nr_running;
        // sub_nr_running
        rq.nr_running -= 1;
        // A runqueue left with only SCHED_IDLE tasks balances at its next tick, as an
        // idle one would.
        if !was_sched_idle && rq.sched_idle_rq() {
            rq.next_balance = jiffies;
        }
        if task_delayed {
            // __block_task
            self.tasks[p].on_rq = OnRq::No;
        }
        if rq.cfs.nr_running == 0 {
            // update_idle_cfs_rq_clock_pelt: nothing to do without bandwidth throttling.
        }
        1
    }

    /// `wakeup_preempt(rq, p, flags)`: an idle CPU always reschedules; a busy one asks the
    /// fair class (`check_preempt_wakeup_fair`).
    pub fn wakeup_preempt(&mut self, cpu: usize, p: TaskId, wake_flags: u32) {
        match self.rqs[cpu].curr {
            None => self.resched_curr(cpu),
            Some(curr) if self.fair.features.kernel().is_cfs() => {
                self.check_preempt_wakeup_cfs(cpu, curr, p, wake_flags)
            }
            Some(curr) if self.groups.active() => {
                self.check_preempt_wakeup_fair_hier(cpu, curr, p, wake_flags)
            }
            Some(curr) => self.check_preempt_wakeup_fair(cpu, curr, p, wake_flags),
        }
    }

    /// `check_preempt_wakeup_fair(rq, p, wake_flags)`.
    fn check_preempt_wakeup_fair(&mut self, cpu: usize, curr: TaskId, p: TaskId, wake_flags: u32) {
        if curr == p {
            return;
        }
        let feat = self.fair.features;
        // set_next_buddy leaves an idle entity alone.
        if feat.has(Feature::NEXT_BUDDY)
            && wake_flags & wf::FORK == 0
            && !self.tasks[p].se.sched_delayed
            && self.tasks[p].policy != Policy::Idle
        {
            self.rqs[cpu].cfs.next = Some(p);
        }
        if self.rqs[cpu].need_resched {
            return;
        }
        if !feat.has(Feature::WAKEUP_PREEMPTION) {
            return;
        }
        // An idle entity gives way to any other (losing its slice protection) and never
        // preempts one; SCHED_BATCH and SCHED_IDLE wakees do not preempt at all.
        let cse_is_idle = self.tasks[curr].policy == Policy::Idle;
        let pse_is_idle = self.tasks[p].policy == Policy::Idle;
        if cse_is_idle && !pse_is_idle {
            cancel_protect_slice(&mut self.tasks[curr].se);
            self.resched_curr(cpu);
            return;
        }
        if cse_is_idle != pse_is_idle {
            return;
        }
        if self.tasks[p].policy != Policy::Normal {
            return;
        }
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let rq = &mut self.rqs[cpu];
        let upd = update_curr(&mut rq.cfs, &mut self.tasks, clocks, &fair);
        if upd.resched {
            rq.need_resched = true;
        }
        if do_preempt_short(&rq.cfs, &self.tasks, p, curr, feat) {
            cancel_protect_slice(&mut self.tasks[curr].se);
        }
        if rq.cfs.pick_eevdf(&self.tasks, feat) == Some(p) {
            self.resched_curr(cpu);
        }
    }
}
