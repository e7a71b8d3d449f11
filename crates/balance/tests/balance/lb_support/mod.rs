//! What the load-balancing integration tests share: piling tasks on one CPU, and the tick
//! loop that drives a scheduler.

#![allow(dead_code)]

use fairsim_balance::lb::periodic::TriggerResult;
use fairsim_balance::{Sched, TaskId};
use fairsim_topology::CpuMask;

/// One tick on every CPU at `t`: busy CPUs tick and may reschedule; the balance softirq
/// and nohz kicks run; idle CPUs with queued work schedule.
pub(crate) fn tick_all(s: &mut Sched, t: u64) {
    for cpu in 0..s.nr_cpus() {
        let busy = s.rqs[cpu].curr.is_some();
        if busy {
            if s.tick(cpu, t) {
                s.schedule(cpu, t);
            }
            let TriggerResult { softirq, kick_ilb } = s.sched_balance_trigger(cpu, t);
            if softirq {
                s.sched_balance_softirq(cpu, t);
            }
            if let Some(ilb) = kick_ilb {
                if s.nohz_csd_func(ilb) {
                    s.sched_balance_softirq(ilb, t);
                }
            }
        }
    }
    for b in std::mem::take(&mut s.pending_active_balance) {
        s.active_load_balance_cpu_stop(b, t);
        s.schedule(b, t);
    }
    for cpu in 0..s.nr_cpus() {
        if s.rqs[cpu].curr.is_none() && s.rqs[cpu].nr_running > 0 || s.rqs[cpu].need_resched {
            s.schedule(cpu, t);
        }
        // These CPUs have no timers: an idle one stops its tick.
        if s.rqs[cpu].curr.is_none() {
            s.nohz_balance_enter_idle(cpu);
        }
    }
    s.check_invariants().unwrap();
}

/// Forks `n` CPU-bound tasks all on `cpu` (pinned while forking, then allowed everywhere,
/// as `taskset` followed by a cpuset widening would leave them).
pub(crate) fn pile_on(s: &mut Sched, cpu: usize, n: usize, now: u64) -> Vec<TaskId> {
    let nr = s.nr_cpus();
    let mut v = Vec::new();
    for _ in 0..n {
        let p = s.create_task("hog", 0, Some(CpuMask::single(nr, cpu)), cpu);
        s.wake_up_new_task_select(p, cpu, now);
        s.wake_up_new_task_activate(p, now);
        v.push(p);
    }
    for &p in &v {
        s.set_cpus_allowed(p, CpuMask::full(nr));
    }
    if s.rqs[cpu].curr.is_none() || s.rqs[cpu].need_resched {
        s.schedule(cpu, now);
    }
    v
}
