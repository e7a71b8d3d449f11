//! Load balancing in virtual time: the periodic balance softirq from the tick, the nohz
//! idle-load-balancer kick, active balancing and the exec balance through the stopper, and
//! the newidle balance stepped inside `schedule()` so that its scan costs time while other
//! CPUs act.

use fairsim_balance::lb::NewidleStep;
use fairsim_balance::AffineMove;
use fairsim_topology::CpuMask;

use crate::event::{Event, Tid};
use fairsim_des::time::Time;

use super::World;
use crate::profile::{Ctx, Site};

impl World {
    /// `sched_balance_trigger` from a busy CPU's tick: the balance softirq when due, and
    /// the nohz kick of an idle CPU (an IPI).
    pub(super) fn balance_tick(&mut self, cpu: usize, now: u64) {
        let r = self.sched.sched_balance_trigger(cpu, now);
        self.charge_sched_work(cpu, now, Ctx::Trigger);
        if r.softirq {
            self.balance_softirq(cpu, now, Ctx::PeriodicBalance);
        }
        if let Some(ilb) = r.kick_ilb {
            let at = now + self.config.cost.ipi_latency;
            self.queue.push(Time(at), Event::NohzKick { cpu: ilb });
        }
    }

    /// `sched_balance_softirq` on `cpu`, its work charged to it in `ctx` (the CPU's own
    /// periodic balance, or the idle load balancer's for the nohz CPUs).
    fn balance_softirq(&mut self, cpu: usize, now: u64, ctx: Ctx) {
        let t0 = now.max(self.cpus[cpu].kernel_until);
        let before = self.trace_softirq_before(cpu, t0, ctx == Ctx::NohzBalance);
        self.sched.sched_balance_softirq(cpu, now);
        self.charge_sched_work(cpu, now, ctx);
        if let Some(before) = before {
            let t1 = self.cpus[cpu].kernel_until.max(t0);
            self.trace_softirq_after(cpu, t0, t1, before);
        }
        self.deliver_balance_effects(cpu, now);
    }

    /// After balancing moved tasks: reschedule the CPUs the scheduler asked for, and queue
    /// the active balances (`stop_one_cpu_nowait` wakes the busiest CPU's stopper).
    ///
    /// The scheduler's list also holds requests that the wakeup paths made and delivered
    /// themselves; a CPU whose `need_resched` is already clear has rescheduled since, and
    /// kicking it again would run a spurious `schedule()` (an idle CPU would count another
    /// `sched_goidle`).
    pub(super) fn deliver_balance_effects(&mut self, from: usize, now: u64) {
        for c in self.sched.take_resched() {
            if c != from && self.sched.rqs[c].need_resched {
                self.kick(c, from, now);
            }
        }
        for b in std::mem::take(&mut self.sched.pending_active_balance) {
            let at = if b == from {
                now
            } else {
                now + self.config.cost.ipi_latency
            };
            self.queue.push(Time(at), Event::ActiveBalance { cpu: b });
        }
    }

    /// The nohz kick IPI reaches the idle load balancer.
    pub(super) fn nohz_kick(&mut self, cpu: usize, now: u64) {
        self.interrupt_entry(cpu, now);
        self.charge(
            cpu,
            now,
            self.config.cost.ipi_handle,
            Site::fixed(Ctx::NohzKickIpi),
        );
        if self.sched.nohz_csd_func(cpu) {
            self.balance_softirq(cpu, now, Ctx::NohzBalance);
        }
        if self.cpus[cpu].curr.is_none() && self.sched.rqs[cpu].nr_running > 0 {
            self.schedule_cpu(cpu, now);
        }
    }

    /// The stopper runs on the busiest CPU: it preempts the current task and pushes one
    /// task to the CPU that asked; both CPUs then reschedule.
    pub(super) fn active_balance(&mut self, cpu: usize, now: u64) {
        if self.cpus[cpu].newidle.is_some() {
            // The stopper runs once schedule() is done; try again right after.
            let at = now.max(self.cpus[cpu].kernel_until) + 1;
            self.queue.push(Time(at), Event::ActiveBalance { cpu });
            return;
        }
        self.interrupt_entry(cpu, now);
        self.charge(
            cpu,
            now,
            self.config.cost.ipi_handle,
            Site::fixed(Ctx::ActiveBalance),
        );
        let had = self.cpus[cpu].curr;
        self.pause_seg_pub(cpu, now);
        self.sched.active_load_balance_cpu_stop(cpu, now);
        self.charge_sched_work(cpu, now, Ctx::ActiveBalance);
        if had.is_some() && self.sched.rqs[cpu].curr.is_none() {
            self.stopper_took_cpu(cpu, now);
        }
        self.deliver_balance_effects(cpu, now);
        self.schedule_cpu(cpu, now);
    }

    /// The stopper took `cpu` from its current task: the switch to the stopper is paid,
    /// and the task no longer runs here.
    fn stopper_took_cpu(&mut self, cpu: usize, now: u64) {
        self.trace_stopper(cpu, now.max(self.cpus[cpu].kernel_until));
        self.cpus[cpu].curr = None;
        self.charge(
            cpu,
            now,
            self.config.cost.context_switch,
            Site::fixed(Ctx::Schedule),
        );
    }

    /// `sched_exec()` for the current task of `cpu` at `execve`: the exec balance, and
    /// when it picks another CPU, the local stopper (`stop_one_cpu`) takes the CPU from the
    /// task and moves it there. Returns whether the task left `cpu`.
    pub(super) fn sched_exec(&mut self, cpu: usize, now: u64) -> bool {
        let moved = self.sched.sched_exec(cpu, now);
        self.charge_sched_work(cpu, now, Ctx::Exec);
        if moved.is_none() {
            return false;
        }
        // The task runs on its new CPU once that one reschedules.
        self.stopper_took_cpu(cpu, now);
        self.deliver_balance_effects(cpu, now);
        self.schedule_cpu(cpu, now);
        true
    }

    /// `sched_setaffinity(0, mask)` by task `t`, current on `cpu` (rt-app's
    /// `set_thread_affinity`): `__set_cpus_allowed_ptr` sets the mask, and when the
    /// task's CPU left it, `stop_one_cpu(migration_cpu_stop)` has the local stopper take
    /// the CPU from the task and move it to the CPU `cpumask_any_and_distribute` chose,
    /// as the exec balance's stopper does. The move is charged as `migration` and the
    /// switch to the stopper as `context_switch`; the system call's own path has no entry
    /// in the cost table and is not charged. Returns whether the task left `cpu`.
    pub(super) fn set_affinity(&mut self, cpu: usize, now: u64, t: Tid, mask: CpuMask) -> bool {
        let Some(sid) = self.tasks[t].sched_id else {
            return false;
        };
        self.tasks[t].cpus_allowed = Some(mask.clone());
        let moved = self.sched.set_cpus_allowed_ptr(sid, &mask, cpu, now);
        self.charge_sched_work(cpu, now, Ctx::AffinityStop);
        match moved {
            Some(AffineMove::Stopper { from, .. }) if from == cpu => {
                // The task runs on its new CPU once that one reschedules.
                self.stopper_took_cpu(cpu, now);
                self.deliver_balance_effects(cpu, now);
                self.schedule_cpu(cpu, now);
                true
            }
            Some(AffineMove::Stopper { .. } | AffineMove::Queued { .. }) => {
                self.deliver_balance_effects(cpu, now);
                false
            }
            _ => false,
        }
    }

    /// `schedule()` found nothing to run: begin the newidle balance.
    pub(super) fn start_newidle(&mut self, cpu: usize, prev: Option<Tid>, now: u64) {
        let t0 = now.max(self.cpus[cpu].kernel_until);
        match self.sched.newidle_start(cpu, now) {
            Err(pulled) => {
                self.charge_sched_work(cpu, now, Ctx::Newidle);
                self.trace_newidle_progress(cpu, t0, self.cpus[cpu].kernel_until.max(t0));
                // finish_newidle adds the same span to newidle_ns.
                self.metrics.cpus[cpu].newidle_gated_ns +=
                    self.cpus[cpu].kernel_until.max(now) - now;
                self.finish_newidle(cpu, prev, pulled, now, now);
            }
            Ok(nb) => {
                self.charge_sched_work(cpu, now, Ctx::Newidle);
                self.trace_newidle_progress(cpu, t0, self.cpus[cpu].kernel_until.max(t0));
                self.cpus[cpu].act_lock = None;
                self.metrics.cpus[cpu].newidle_balances += 1;
                self.cpus[cpu].newidle = Some((nb, prev, now));
                self.newidle_step(cpu, now);
            }
        }
    }

    /// One step of the newidle balance; the next runs once the work just done has taken
    /// its time on the CPU.
    pub(super) fn newidle_step(&mut self, cpu: usize, now: u64) {
        let Some((mut nb, prev, started)) = self.cpus[cpu].newidle.take() else {
            return;
        };
        if self.cpus[cpu].act_lock.is_none() {
            let t0 = now.max(self.cpus[cpu].kernel_until);
            let lock = nb.pending_lock(&mut self.sched, now);
            // The runqueue search just run read the busiest group's CPUs.
            self.charge_sched_work(cpu, now, Ctx::Newidle);
            self.trace_newidle_progress(cpu, t0, self.cpus[cpu].kernel_until.max(t0));
            if let Some(rq) = lock {
                // rq_lock_irqsave(busiest) before detach_tasks: when another CPU holds it,
                // spin, and act on the state as it is once the lock is ours.
                let got = self.rq_lock(cpu, rq, now, self.config.cost.remote_rq_lock, Ctx::Newidle);
                self.cpus[cpu].act_lock = Some(rq);
                if got > now {
                    self.cpus[cpu].newidle = Some((nb, prev, started));
                    self.cpus[cpu].gen += 1;
                    let gen = self.cpus[cpu].gen;
                    self.queue.push(Time(got), Event::NewidleStep { cpu, gen });
                    return;
                }
            }
        }
        let t0 = now.max(self.cpus[cpu].kernel_until);
        let step = self.sched.newidle_step(&mut nb, now);
        self.charge_sched_work(cpu, now, Ctx::Newidle);
        self.trace_newidle_progress(cpu, t0, self.cpus[cpu].kernel_until.max(t0));
        self.cpus[cpu].act_lock = None;
        self.deliver_balance_effects(cpu, now);
        match step {
            NewidleStep::Continue => {
                self.cpus[cpu].newidle = Some((nb, prev, started));
                self.cpus[cpu].gen += 1;
                let gen = self.cpus[cpu].gen;
                let at = now.max(self.cpus[cpu].kernel_until);
                self.queue.push(Time(at), Event::NewidleStep { cpu, gen });
            }
            NewidleStep::Done(pulled) => self.finish_newidle(cpu, prev, pulled, started, now),
        }
    }

    /// The newidle balance is over: pick again if something arrived, else go idle.
    fn finish_newidle(
        &mut self,
        cpu: usize,
        prev: Option<Tid>,
        pulled: i32,
        started: u64,
        now: u64,
    ) {
        self.metrics.cpus[cpu].newidle_ns += self.cpus[cpu].kernel_until.max(now) - started;
        self.trace_newidle_end(cpu);
        let next = self.sched.schedule_after_newidle(cpu, pulled, now);
        self.charge_sched_work(cpu, now, Ctx::Pick);
        self.complete_switch(cpu, prev, next, now);
    }

    /// The go-idle path: the idle loop's `nohz_run_idle_balance` (blocked-load refresh
    /// asked for by a newidle balance).
    pub(super) fn balance_on_idle(&mut self, cpu: usize, now: u64) {
        if self.sched.nohz_run_idle_balance(cpu, now) {
            self.charge_sched_work(cpu, now, Ctx::IdleBalance);
        }
    }
}
