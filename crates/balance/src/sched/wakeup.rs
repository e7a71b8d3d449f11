//! `try_to_wake_up`: the wakeup side (select the CPU, the wake list decision, schedstat
//! counters), `ttwu_do_activate` on the target, and `set_task_cpu`.

use super::*;
use crate::lb::view::LbRead;

impl Sched {
    /// The wakeup side of `try_to_wake_up(p)` run on `this_cpu`: a delayed (still queued)
    /// task is requeued in place (`ttwu_runnable`); otherwise the CPU is selected
    /// (`select_task_rq`, `set_task_cpu`) and the schedstat wakeup counters are charged.
    pub fn try_to_wake_up(
        &mut self,
        p: TaskId,
        this_cpu: usize,
        wake_flags: u32,
        now: u64,
    ) -> WakeDecision {
        let mut wake_flags = wake_flags | wf::TTWU;
        if self.tasks[p].state != TaskState::Sleeping {
            return WakeDecision::NotSleeping;
        }
        if self.tasks[p].on_rq != OnRq::No {
            // ttwu_runnable: the dequeue was delayed; requeue on the same rq.
            let cpu = self.tasks[p].cpu;
            self.update_rq_clock(cpu, now);
            if self.tasks[p].se.sched_delayed {
                self.enqueue_task(cpu, p, qflags::DELAYED);
            }
            if self.rqs[cpu].curr != Some(p) {
                self.wakeup_preempt(cpu, p, wake_flags);
            }
            self.tasks[p].state = TaskState::Running;
            self.ttwu_stat(p, cpu, this_cpu, wake_flags);
            return WakeDecision::Runnable {
                cpu,
                preempt: self.rqs[cpu].need_resched,
            };
        }
        if self.fair.features.kernel() <= crate::kernel::Kernel::V4_5 {
            // p->state = TASK_WAKING; p->sched_class->task_waking(p) (3.9, 4.5).
            self.task_waking_fair(p);
        }
        if self.tasks[p].on_cpu {
            // The task blocked but its CPU is still inside schedule() (a newidle balance
            // runs with it as prev): the wakeup goes to that CPU's wake list, to be
            // activated there once schedule() is done (the kernel's on_cpu path of
            // ttwu_queue_wakelist; its spin-wait alternative is not modelled).
            let cpu = self.tasks[p].cpu;
            self.rqs[cpu].ttwu_pending += 1;
            self.ttwu_stat(p, cpu, this_cpu, wake_flags);
            return WakeDecision::Enqueue {
                cpu,
                wake_flags,
                via_wakelist: true,
            };
        }
        let prev = self.tasks[p].wake_cpu;
        let cpu = self.select_task_rq(p, prev, &mut wake_flags, this_cpu, now);
        if self.tasks[p].cpu != cpu {
            wake_flags |= wf::MIGRATED;
            self.set_task_cpu(p, cpu);
        }
        let via_wakelist =
            self.fair.features.has(Feature::TTWU_QUEUE) && self.ttwu_queue_cond(p, cpu, this_cpu);
        if via_wakelist {
            self.rqs[cpu].ttwu_pending += 1;
        }
        self.ttwu_stat(p, cpu, this_cpu, wake_flags);
        WakeDecision::Enqueue {
            cpu,
            wake_flags,
            via_wakelist,
        }
    }

    /// `ttwu_queue_cond(p, cpu)`: queue on the target's wake list when it does not share
    /// the waker's cache or is idle.
    fn ttwu_queue_cond(&self, p: TaskId, cpu: usize, this_cpu: usize) -> bool {
        if !self.tasks[p].allowed_on(cpu) {
            return false;
        }
        if !self.cpus_share_cache(this_cpu, cpu) {
            return true;
        }
        if cpu == this_cpu {
            return false;
        }
        self.rqs[cpu].nr_running == 0
    }

    /// `ttwu_stat(p, cpu, wake_flags)` charged to the waking CPU.
    fn ttwu_stat(&mut self, _p: TaskId, cpu: usize, this_cpu: usize, _wake_flags: u32) {
        if cpu == this_cpu {
            self.rqs[this_cpu].stats.ttwu_local += 1;
        } else {
            let sd = self
                .topo
                .domains_of(this_cpu)
                .find(|&sd| self.topo.domain(sd).span.test(cpu));
            if let Some(sd) = sd {
                self.sd_stats[sd].ttwu_wake_remote += 1;
            }
        }
        self.rqs[this_cpu].stats.ttwu_count += 1;
    }

    /// `ttwu_do_activate(rq, p, wake_flags)` on the selected CPU when the wakeup arrives
    /// there: enqueue, check preemption, and fold the idle time into `avg_idle`. Returns
    /// whether the CPU must reschedule.
    pub fn ttwu_do_activate(
        &mut self,
        p: TaskId,
        wake_flags: u32,
        via_wakelist: bool,
        now: u64,
    ) -> bool {
        let cpu = self.tasks[p].cpu;
        if via_wakelist {
            self.rqs[cpu].ttwu_pending = self.rqs[cpu].ttwu_pending.saturating_sub(1);
        }
        self.update_rq_clock(cpu, now);
        let mut en = qflags::SLEEP_WAKEUP;
        if wake_flags & wf::MIGRATED != 0 {
            en |= qflags::MIGRATED;
        }
        self.activate_task(cpu, p, en);
        self.wakeup_preempt(cpu, p, wake_flags);
        self.tasks[p].state = TaskState::Running;
        let rq = &mut self.rqs[cpu];
        let newidle_stamped = rq.idle_stamp != 0;
        fold_idle_time(
            &mut rq.avg_idle,
            &mut rq.idle_stamp,
            rq.clock,
            rq.max_idle_balance_cost,
        );
        // Linux 6.5 restarts SIS_PROP's idle prediction here as well.
        if newidle_stamped && self.fair.features.kernel() == crate::kernel::Kernel::V6_5 {
            self.sis_prop_wakeup_v6_5(cpu);
        }
        self.rqs[cpu].need_resched
    }

    /// `set_task_cpu(p, new_cpu)` with `migrate_task_rq_fair`: a sleeping task's load leaves
    /// its old cfs_rq through the removed-load path; it will attach at its next enqueue.
    pub fn set_task_cpu(&mut self, p: TaskId, new_cpu: usize) {
        let old = self.tasks[p].cpu;
        if old == new_cpu {
            return;
        }
        if let Some(log) = &mut self.migration_log {
            log.push((p, old, new_cpu));
        }
        if self.fair.features.kernel().is_cfs() {
            self.migrate_task_rq_fair_cfs(p);
        }
        if !self.tasks[p].on_rq_migrating() {
            let weight = scale_load_down(self.tasks[p].se.load.weight);
            let traced = self.pelt_tp.on();
            let c = self.h_cfs_of(p, old);
            let se_avg: &mut SchedAvg = &mut self.tasks[p].se.avg;
            let cfs = match c {
                crate::group::CfsRef::Root(cpu) => &mut self.rqs[cpu].cfs,
                crate::group::CfsRef::Group(i) => &mut self.groups.cfs[i],
            };
            let fires =
                traced && fairsim_pelt::update_crosses_period(cfs.avg.avg.last_update_time, se_avg);
            remove_entity_load_avg(&mut cfs.avg, se_avg, weight);
            if fires {
                // pelt_se_tp in the __update_load_avg_blocked_se of its sync.
                let sig = crate::pelt_tp::PeltSignals::of(se_avg);
                self.pelt_tp
                    .push(old, crate::pelt_tp::PeltTracepoint::Se { task: p, sig });
            }
        }
        self.tasks[p].se.avg.last_update_time = 0;
        self.tasks[p].se.nr_migrations += 1;
        self.tasks[p].cpu = new_cpu;
        self.tasks[p].wake_cpu = new_cpu;
    }
}
