//! Linux 4.5's `select_task_rq_fair` (`--kernel 4.5`): `wake_affine` on the runnable load
//! averages, the domain walk, and the `find_idlest_group`/`find_idlest_cpu` descent for
//! forks, on smt-mc-1s4c2t (one LLC of 4 cores x 2 threads, CPUs 2k and 2k+1 on core k).
//! Loads are set by hand on each task's `se.avg`, at its runqueue's last update, so that
//! `weighted_cpuload()` is their plain sum.

use crate::select_support;

use fairsim_balance::select::stats::SisOutcome;
use fairsim_balance::select::v4_15_find_idlest::imbalance_pct_v4_15;
use fairsim_balance::{wf, Kernel, Sched, SchedParams, TaskId};
use fairsim_topology::{CpuMask, SdId};
use select_support::*;

const MS: u64 = 1_000_000;

fn sched45() -> Sched {
    sched_with(
        "smt-mc-1s4c2t",
        SchedParams {
            features: Kernel::V4_5.features(),
            util_est: Kernel::V4_5.util_est(),
            ..SchedParams::default()
        },
    )
}

/// Gives `t` a `load_avg` of `load`, current as of its runqueue's last update (so that the
/// rebuilt `runnable_load_avg` adds it unchanged).
fn set_load(s: &mut Sched, t: TaskId, load: u64) {
    let cpu = s.tasks[t].cpu;
    let at = s.rqs[cpu].cfs.avg.avg.last_update_time;
    let avg = &mut s.tasks[t].se.avg;
    avg.load_avg = load;
    avg.last_update_time = at;
}

/// A hog pinned on `cpu` (the current task there if the CPU was idle) with `load`.
fn hog(s: &mut Sched, cpu: usize, load: u64) -> TaskId {
    let t = run_on(s, cpu, MS);
    set_load(s, t, load);
    t
}

/// Creates a child of `parent` (running on its CPU, with `load`), allowed everywhere;
/// `task_fork` may bring the parent's runqueue forward, so its load is set again after.
fn fork_from(s: &mut Sched, parent: TaskId, load: u64) -> TaskId {
    let cpu = s.tasks[parent].cpu;
    let n = s.nr_cpus();
    let c = s.create_task("child", 0, Some(CpuMask::full(n)), cpu);
    s.task_fork(c, cpu, 3 * MS);
    set_load(s, parent, load);
    c
}

/// The lowest domain of `cpu` that spans `other`.
fn domain_spanning(s: &Sched, cpu: usize, other: usize) -> SdId {
    s.topo
        .domains_of(cpu)
        .find(|&d| s.topo.domain(d).span.test(other))
        .expect("a common domain")
}

/// A machine where the hog `waker` runs on cpu0 with load `this`, a hog with load `prev`
/// runs on cpu4, and `p` (load `w`, allowed everywhere) sleeps, last on cpu4. Every other
/// CPU is idle.
fn affine_state(this: u64, prev: u64, w: u64) -> (Sched, TaskId) {
    let mut s = sched45();
    let p = sleeper_on(&mut s, 4, None, MS);
    hog(&mut s, 0, this);
    hog(&mut s, 4, prev);
    settle_idle(&mut s, 2 * MS);
    s.tasks[p].se.avg.load_avg = w;
    assert_eq!(s.weighted_cpuload_v4_15(0), this);
    assert_eq!(s.weighted_cpuload_v4_15(4), prev);
    (s, p)
}

#[test]
fn sd_init_gives_4_5s_imbalance_pct() {
    // The LLC level (MC) is 117, so wake_affine's margin is 100 + 17 / 2 = 108; SMT 110.
    let s = sched45();
    let mc = domain_spanning(&s, 0, 4);
    let smt = domain_spanning(&s, 0, 1);
    assert_eq!(imbalance_pct_v4_15(s.topo.domain(mc).flags), 117);
    assert_eq!(imbalance_pct_v4_15(s.topo.domain(smt).flags), 110);
}

#[test]
fn wake_affine_goes_affine_when_the_waker_is_lighter() {
    // Every CPU has the same capacity C, which cancels out:
    // this_eff = 100 * C * (300 + 200) = 50_000 C <= prev_eff = 108 * C * 900 = 97_200 C.
    let (mut s, p) = affine_state(300, 900, 200);
    let mc = domain_spanning(&s, 0, 4);
    assert!((1..8).all(|c| s.capacity_of_sel_v4_5(c) == s.capacity_of_sel_v4_5(0)));
    assert!(s.wake_affine_v4_5(mc, p, 0, 4, false));
    assert_eq!(s.sd_stats[mc].ttwu_move_affine, 1);
}

#[test]
fn wake_affine_stays_when_the_waker_is_heavier() {
    // this_eff = 100 * C * (900 + 200) = 110_000 C > prev_eff = 108 * C * 300 = 32_400 C:
    // not affine, nothing counted.
    let (mut s, p) = affine_state(900, 300, 200);
    let mc = domain_spanning(&s, 0, 4);
    assert!(!s.wake_affine_v4_5(mc, p, 0, 4, false));
    assert_eq!(s.sd_stats[mc].ttwu_move_affine, 0);
}

#[test]
fn wake_affine_is_affine_on_equal_effective_loads() {
    // 100 * (340 + 200) = 54_000 = 108 * 500: 4.5 is affine on `<=` (6.12 on `<`).
    let (mut s, p) = affine_state(340, 500, 200);
    let mc = domain_spanning(&s, 0, 4);
    assert!(s.wake_affine_v4_5(mc, p, 0, 4, false));
    // One unit more on the waker's side tips it.
    let (mut s, p) = affine_state(341, 500, 200);
    assert!(!s.wake_affine_v4_5(mc, p, 0, 4, false));
}

#[test]
fn a_sync_waker_carrying_its_cpus_load_is_always_affine() {
    // The waker's own load_avg (300) is all of cpu0's: this_load = 0, so only the
    // capacities are compared (100 * C <= 108 * C), even against an almost idle prev.
    let (mut s, p) = affine_state(300, 10, 200);
    let mc = domain_spanning(&s, 0, 4);
    assert!(!s.wake_affine_v4_5(mc, p, 0, 4, false));
    assert!(s.wake_affine_v4_5(mc, p, 0, 4, true));
    assert_eq!(s.sd_stats[mc].ttwu_move_affine, 1);
}

#[test]
fn the_wakeup_goes_affine_then_select_idle_sibling_runs_around_the_target() {
    // Affine: the target becomes cpu0 (busy); the previous CPU (4) is busy too, so 4.5's
    // walk from core 0 skips target's core and takes idle core 1's first CPU, cpu2.
    let (mut s, p) = affine_state(300, 900, 200);
    assert_eq!(s.select_task_rq_fair(p, 4, wf::TTWU, 0, 3 * MS), 2);
    // Where it went (select/stats.rs): one wake_affine call that pulled to the waker's
    // CPU, then 4.5's search found an idle core, read from the CPU it returned.
    let st = &s.wake_stats;
    assert_eq!((st.affine_calls, st.affine_pulled), (1, 1), "{st:?}");
    assert_eq!(st.sis_count(SisOutcome::IdleCore), 1, "{st:?}");
    assert_eq!(st.sis_calls(), 1, "{st:?}");
    assert_eq!(st.wakeups_on_busy, 0, "{st:?}");
    // record_wakee (4.5's task_waking_fair) noted the flip on the waker.
    let waker = s.rqs[0].curr.expect("waker");
    assert_eq!(s.tasks[waker].last_wakee, Some(p));
    assert_eq!(s.tasks[waker].wakee_flips, 1);
    // Not affine: the target stays cpu4 (busy); the walk from core 2 skips it and takes
    // core 3's cpu6.
    let (mut s, p) = affine_state(900, 300, 200);
    assert_eq!(s.select_task_rq_fair(p, 4, wf::TTWU, 0, 3 * MS), 6);
}

#[test]
fn wake_wide_skips_the_affine_domain() {
    // The waker flips among many wakees, and so does p: no affine domain, so the target
    // is the previous CPU whatever wake_affine would say.
    let (mut s, p) = affine_state(300, 900, 200);
    let waker = s.rqs[0].curr.expect("waker");
    // Even halved by record_wakee's once-a-second decay, the waker's flips stay above
    // p's times sd_llc_size (100 * 8).
    s.tasks[waker].wakee_flips = 10_000;
    s.tasks[p].wakee_flips = 100;
    assert_eq!(s.select_task_rq_fair(p, 4, wf::TTWU, 0, 3 * MS), 6);
    assert_eq!((s.wake_stats.wake_wide, s.wake_stats.affine_calls), (1, 0));
    assert!(s.wake_wide(p, 0));
    let mc = domain_spanning(&s, 0, 4);
    assert_eq!(s.sd_stats[mc].ttwu_move_affine, 0);
}

#[test]
fn a_waker_cpu_the_task_may_not_use_is_not_affine() {
    // p may run on cpu4-7 only: want_affine is off, and the wakeup searches around prev.
    let (mut s, p) = affine_state(300, 900, 200);
    let n = s.nr_cpus();
    s.tasks[p].cpus_allowed = CpuMask::from_cpus(n, 4..8);
    s.tasks[p].nr_cpus_allowed = 4;
    assert_eq!(s.select_task_rq_fair(p, 4, wf::TTWU, 0, 3 * MS), 6);
}

#[test]
fn a_fork_goes_to_the_idlest_group() {
    // Parent on cpu0 (load 1024); hogs on cpu2 and cpu4 (1024 each); core 3 (cpu6-7) is
    // idle. MC level: the idlest group is core 3 (load 0), and the parent's core is not
    // within 108% of 0, so the task goes there: of cpu6 and cpu7 (both idle, same exit
    // latency) the more recently idled, cpu7; then at cpu7's SMT level the local {7} and
    // the remote {6} both read 0, and `100 * 0 < 105 * 0` is false, so {6} and cpu6.
    let mut s = sched45();
    let parent = hog(&mut s, 0, 1024);
    hog(&mut s, 2, 1024);
    hog(&mut s, 4, 1024);
    settle_idle(&mut s, 2 * MS);
    s.rqs[6].idle_stamp = 10;
    s.rqs[7].idle_stamp = 20;
    let c = fork_from(&mut s, parent, 1024);
    s.take_work();
    assert_eq!(s.wake_up_new_task_select(c, 0, 3 * MS), 6);
    // MC: 4 groups and 8 CPUs; cpu6-7 group: 2 CPUs; SMT: 2 groups of one CPU, each read
    // once by find_idlest_group and once by find_idlest_cpu.
    let w = s.take_work();
    assert_eq!(w.groups_visited, 4 + 2);
    assert_eq!(w.cpus_visited, 8 + 2 + 2 + 1);
    assert_eq!(s.tasks[parent].cpu, 0);
}

#[test]
fn a_fork_stays_when_the_local_group_is_within_the_margin() {
    // Every core carries 1000 except the parent's, which carries 1050: 100 * 1050 is below
    // 108 * 1000, so the MC level keeps the local group; at the SMT level cpu1 (idle, 0)
    // is below cpu0's 1050 by far, so the child goes to cpu1.
    let mut s = sched45();
    let parent = hog(&mut s, 0, 1050);
    for cpu in [2, 4, 6] {
        hog(&mut s, cpu, 1000);
    }
    settle_idle(&mut s, 2 * MS);
    let c = fork_from(&mut s, parent, 1050);
    assert_eq!(s.weighted_cpuload_v4_15(0), 1050);
    assert_eq!(s.wake_up_new_task_select(c, 0, 3 * MS), 1);
}
