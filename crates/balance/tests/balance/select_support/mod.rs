//! Helpers shared by the `select_*` integration tests: build a machine's scheduler and
//! put tasks on CPUs through the public entry points.

#![allow(dead_code)]

use fairsim_balance::{Sched, SchedParams, TaskId, WakeDecision};
use fairsim_topology::source::preset;
use fairsim_topology::{build_sched_domains, BuildOptions, CpuMask};

/// A scheduler for the named preset with default parameters.
pub(crate) fn sched(name: &str) -> Sched {
    sched_with(name, SchedParams::default())
}

/// A scheduler for the named preset with `params`.
pub(crate) fn sched_with(name: &str, params: SchedParams) -> Sched {
    let m = preset(name).expect("preset");
    let topo = build_sched_domains(&m, BuildOptions::default()).expect("domains");
    Sched::new(m, topo, params)
}

/// Creates a task pinned to `cpu`, enqueues it there and, if the CPU was idle, makes it
/// the current task. Returns its id.
pub(crate) fn run_on(s: &mut Sched, cpu: usize, now: u64) -> TaskId {
    let n = s.nr_cpus();
    let p = s.create_task("hog", 0, Some(CpuMask::single(n, cpu)), cpu);
    let got = s.wake_up_new_task_select(p, cpu, now);
    assert_eq!(got, cpu);
    s.wake_up_new_task_activate(p, now);
    if s.rqs[cpu].curr.is_none() {
        s.schedule(cpu, now);
    }
    p
}

/// Creates a task that runs on `cpu` then sleeps there, leaving the CPU idle (its idle
/// stamp set by the newidle hook). The task is then allowed everywhere (or on
/// `allowed`). Returns its id.
pub(crate) fn sleeper_on(s: &mut Sched, cpu: usize, allowed: Option<CpuMask>, now: u64) -> TaskId {
    let n = s.nr_cpus();
    assert!(s.rqs[cpu].curr.is_none(), "cpu{cpu} must be idle");
    let p = s.create_task("sleeper", 0, Some(CpuMask::single(n, cpu)), cpu);
    s.wake_up_new_task_select(p, cpu, now);
    s.wake_up_new_task_activate(p, now);
    assert_eq!(s.schedule(cpu, now), Some(p));
    s.block_current(cpu, now + 1000);
    assert_eq!(s.schedule(cpu, now + 1000), None);
    let mask = allowed.unwrap_or_else(|| CpuMask::full(n));
    s.tasks[p].nr_cpus_allowed = mask.weight();
    s.tasks[p].cpus_allowed = mask;
    p
}

/// Runs the idle path of `schedule` on every idle CPU, as a CPU entering idle does: it
/// sets the idle stamps and the idle-core hints.
pub(crate) fn settle_idle(s: &mut Sched, now: u64) {
    for cpu in 0..s.nr_cpus() {
        if s.rqs[cpu].curr.is_none() && s.rqs[cpu].nr_running == 0 {
            s.schedule(cpu, now);
        }
    }
}

/// Wakes `p` from `waker_cpu` and completes the enqueue. Returns the chosen CPU.
pub(crate) fn wake(s: &mut Sched, p: TaskId, waker_cpu: usize, flags: u32, now: u64) -> usize {
    match s.try_to_wake_up(p, waker_cpu, flags, now) {
        WakeDecision::Enqueue {
            cpu,
            wake_flags,
            via_wakelist,
        } => {
            s.ttwu_do_activate(p, wake_flags, via_wakelist, now);
            cpu
        }
        WakeDecision::Runnable { cpu, .. } => cpu,
        WakeDecision::NotSleeping => panic!("task {p} was not sleeping"),
    }
}

/// The id of `cpu`'s LLC domain.
pub(crate) fn llc(s: &Sched, cpu: usize) -> usize {
    s.topo.cpus[cpu].sd_llc.expect("llc")
}

/// Sets SIS_UTIL's `nr_idle_scan` of `cpu`'s LLC.
pub(crate) fn set_nr_idle_scan(s: &Sched, cpu: usize, nr: i32) {
    let sds = s.topo.cpus[cpu].sd_llc_shared.expect("llc shared");
    s.topo.shared[sds]
        .nr_idle_scan
        .store(nr, std::sync::atomic::Ordering::Relaxed);
}

/// Reads SIS_UTIL's `nr_idle_scan` of `cpu`'s LLC.
pub(crate) fn nr_idle_scan(s: &Sched, cpu: usize) -> i32 {
    let sds = s.topo.cpus[cpu].sd_llc_shared.expect("llc shared");
    s.topo.shared[sds]
        .nr_idle_scan
        .load(std::sync::atomic::Ordering::Relaxed)
}
