//! Linux 3.9's `select_task_rq_fair` (`--kernel 3.9`): `wake_affine` on the queued
//! weights with `power_of`, the sync shortcut and the `tl_per_task` clause; its
//! `select_idle_sibling`; the domain walk that returns the previous CPU when no domain is
//! wake-affine; and the fork descent. On smt-mc-1s4c2t (one LLC of 4 cores x 2 threads,
//! CPUs 2k and 2k+1 on core k), where 3.9 gives every thread a `cpu_power` of 589
//! (`smt_gain` 1178 over two) and the MC level an `imbalance_pct` of 125 (margin 112);
//! numa-2s4c2t (two LLCs, CPUs 0-7 and 8-15) for the cache test.

use crate::select_support;

use fairsim_balance::{wf, Kernel, Sched, SchedParams, TaskId};
use fairsim_topology::{CpuMask, SdId};
use select_support::*;

const MS: u64 = 1_000_000;

fn sched39(machine: &str) -> Sched {
    sched_with(
        machine,
        SchedParams {
            features: Kernel::V3_9.features(),
            util_est: Kernel::V3_9.util_est(),
            ..SchedParams::default()
        },
    )
}

/// A task of `nice` pinned on `cpu` and enqueued there (current if the CPU was idle).
fn hog(s: &mut Sched, cpu: usize, nice: i32) -> TaskId {
    let n = s.nr_cpus();
    let t = s.create_task("hog", nice, Some(CpuMask::single(n, cpu)), cpu);
    s.task_fork(t, cpu, MS);
    assert_eq!(s.wake_up_new_task_select(t, cpu, MS), cpu);
    s.wake_up_new_task_activate(t, MS);
    if s.rqs[cpu].curr.is_none() {
        s.schedule(cpu, MS);
    }
    t
}

/// The lowest domain of `cpu` that spans `other`.
fn domain_spanning(s: &Sched, cpu: usize, other: usize) -> SdId {
    s.topo
        .domains_of(cpu)
        .find(|&d| s.topo.domain(d).span.test(other))
        .expect("a common domain")
}

/// `p` (nice 0, allowed everywhere) asleep, last on `prev`; then hogs of the given nice
/// levels on cpu0 (the first is the waker, current there) and on `prev`.
fn affine_state(prev: usize, on_this: &[i32], on_prev: &[i32]) -> (Sched, TaskId) {
    let mut s = sched39("smt-mc-1s4c2t");
    let p = sleeper_on(&mut s, prev, None, MS);
    for &nice in on_this {
        hog(&mut s, 0, nice);
    }
    for &nice in on_prev {
        hog(&mut s, prev, nice);
    }
    settle_idle(&mut s, 2 * MS);
    assert_eq!(s.tasks[p].cpu, prev);
    (s, p)
}

#[test]
fn the_loads_and_powers_are_3_9s() {
    let (s, _) = affine_state(4, &[0, 10], &[0, 5]);
    // rq->load.weight: nice 0 weighs 1024, nice 5 335, nice 10 110.
    assert_eq!(s.weighted_cpuload_v3_9(0), 1024 + 110);
    assert_eq!(s.weighted_cpuload_v3_9(4), 1024 + 335);
    assert!((0..8).all(|c| s.power_of_v3_9(c) == 589));
    // SD_MC_INIT: imbalance_pct 125, wake_idx and forkexec_idx 0.
    let mc = domain_spanning(&s, 0, 4);
    let sd = s.lb.legacy.as_ref().expect("3.9's balancer state").sd[mc];
    assert_eq!(
        (sd.imbalance_pct, sd.wake_idx, sd.forkexec_idx),
        (125, 0, 0)
    );
}

#[test]
fn wake_affine_goes_affine_when_balanced() {
    // this_load 1024 (the waker), load 2048 (two hogs), weight(p) 1024:
    // 100 * 589 * (1024 + 1024) = 120_627_200 <= 112 * 589 * 2048 = 135_102_464.
    let (mut s, p) = affine_state(4, &[0], &[0, 0]);
    let mc = domain_spanning(&s, 0, 4);
    s.take_work();
    assert!(s.wake_affine_v3_9(mc, p, 0, 4, false));
    assert_eq!(s.sd_stats[mc].ttwu_move_affine, 1);
    // The loads are read without charging an idle scan.
    assert_eq!(s.take_work().cpus_visited, 0);
}

#[test]
fn wake_affine_stays_when_the_waker_is_busier() {
    // this_load 2048, load 1024: 100 * 589 * 3072 > 112 * 589 * 1024, and this_load is
    // above load, so the tl_per_task clause does not apply either.
    let (mut s, p) = affine_state(4, &[0, 0], &[0]);
    let mc = domain_spanning(&s, 0, 4);
    assert!(!s.wake_affine_v3_9(mc, p, 0, 4, false));
    assert!(!s.wake_affine_v3_9(mc, p, 0, 4, true));
    assert_eq!(s.sd_stats[mc].ttwu_move_affine, 0);
}

#[test]
fn a_sync_wakeup_that_empties_the_waker_cpu_is_affine_uncounted() {
    // The waker alone on cpu0: sync leaves this_load at 0, which is balanced, and the
    // sync shortcut returns before the schedstat count.
    let (mut s, p) = affine_state(4, &[0], &[0]);
    let mc = domain_spanning(&s, 0, 4);
    assert!(s.wake_affine_v3_9(mc, p, 0, 4, true));
    assert_eq!(s.sd_stats[mc].ttwu_move_affine, 0);
    // Without sync: 100 * 589 * 2048 > 112 * 589 * 1024, and 1024 + 1024 exceeds
    // tl_per_task (1024): not affine.
    assert!(!s.wake_affine_v3_9(mc, p, 0, 4, false));
}

#[test]
fn the_tl_per_task_clause_pulls_an_unbalanced_sync_wakeup() {
    // cpu0: the waker (1024) and a nice-10 hog (110); cpu4: a nice-5 hog (335).
    // Sync: this_load = 1134 - 1024 = 110; 100 * 589 * (110 + 1024) = 66_792_600 is above
    // 112 * 589 * 335 = 22_099_280, so not balanced and no shortcut. tl_per_task =
    // 1134 / 2 = 567: 110 <= 335 and 110 + 335 = 445 <= 567, so affine, counted.
    let (mut s, p) = affine_state(4, &[0, 10], &[5]);
    let mc = domain_spanning(&s, 0, 4);
    assert!(s.wake_affine_v3_9(mc, p, 0, 4, true));
    assert_eq!(s.sd_stats[mc].ttwu_move_affine, 1);
    // Without sync this_load is 1134, above load: not affine.
    assert!(!s.wake_affine_v3_9(mc, p, 0, 4, false));
    assert_eq!(s.sd_stats[mc].ttwu_move_affine, 1);
}

#[test]
fn wake_affine_weighs_by_power_on_tc2() {
    // TC2: cpu0-1 are A15s (power 1441), cpu2-4 A7s (606); the PKG level joins them
    // (imbalance_pct 125). p last on the A7 cpu2 beside one hog; the waker on cpu0 has a
    // second hog: this_load 2048, load 1024.
    // 100 * 606 * (2048 + 1024) = 186_163_200 is above 112 * 1441 * 1024 = 165_265_408,
    // and this_load is above load: not affine. With a second hog on cpu2 (load 2048) the
    // right side is 330_530_816: affine, where equal powers would give 100 * 3072 above
    // 112 * 2048, not affine.
    for (prev_hogs, affine) in [(1, false), (2, true)] {
        let mut s = sched39("tc2");
        let p = sleeper_on(&mut s, 2, None, MS);
        hog(&mut s, 0, 0);
        hog(&mut s, 0, 0);
        for _ in 0..prev_hogs {
            hog(&mut s, 2, 0);
        }
        settle_idle(&mut s, 2 * MS);
        assert_eq!((s.power_of_v3_9(0), s.power_of_v3_9(2)), (1441, 606));
        let pkg = domain_spanning(&s, 0, 2);
        assert_eq!(s.wake_affine_v3_9(pkg, p, 0, 2, false), affine);
    }
}

#[test]
fn the_wakeup_runs_3_9s_select_idle_sibling_around_the_target() {
    // Affine: the target is cpu0 (busy), prev cpu4 is busy; the walk from core 0 takes
    // idle core 1's cpu2. Not affine: the target stays cpu4; the walk takes cpu6.
    let (mut s, p) = affine_state(4, &[0], &[0, 0]);
    assert_eq!(s.select_task_rq_fair(p, 4, wf::TTWU, 0, 3 * MS), 2);
    // 3.9 has no wakee flips (record_wakee came in 3.12).
    let waker = s.rqs[0].curr.expect("waker");
    assert_eq!(s.tasks[waker].last_wakee, None);
    assert_eq!(s.tasks[waker].wakee_flips, 0);
    let (mut s, p) = affine_state(4, &[0, 0], &[0]);
    assert_eq!(s.select_task_rq_fair(p, 4, wf::TTWU, 0, 3 * MS), 6);
}

#[test]
fn without_a_wake_affine_domain_the_previous_cpu_is_kept_as_it_is() {
    // p may not run on the waking cpu0: 3.9 has no affine domain and no SD_BALANCE_WAKE
    // domain, so it returns the busy previous cpu4 with no idle search (4.5 and 6.12 would
    // search around it and take the idle core 3).
    let (mut s, p) = affine_state(4, &[0], &[0, 0]);
    let n = s.nr_cpus();
    s.tasks[p].cpus_allowed = CpuMask::from_cpus(n, 4..8);
    s.tasks[p].nr_cpus_allowed = 4;
    assert_eq!(s.select_task_rq_fair(p, 4, wf::TTWU, 0, 3 * MS), 4);
    // The same wakeup under 4.5's select_idle_sibling would leave the busy core.
    assert_eq!(s.select_idle_sibling_v4_5(p, 4), 6);
}

#[test]
fn select_idle_sibling_keeps_an_idle_target_then_an_idle_cache_affine_prev() {
    // p last on cpu5 (idle); cores 0 (cpu0-1) and 2's cpu4 busy.
    let mut s = sched39("smt-mc-1s4c2t");
    let p = sleeper_on(&mut s, 5, None, MS);
    for cpu in [0, 1, 4] {
        hog(&mut s, cpu, 0);
    }
    settle_idle(&mut s, 2 * MS);
    // An idle target is kept, although prev is idle too.
    assert_eq!(s.select_idle_sibling_v3_9(p, 2), 2);
    // A busy target: the idle previous CPU in its LLC, before the idle cores 1 and 3.
    assert_eq!(s.select_idle_sibling_v3_9(p, 0), 5);
    // A busy previous CPU (target = prev): the walk from core 2 skips it and takes core 3.
    let q = hog(&mut s, 5, 0);
    assert_eq!(s.tasks[q].cpu, 5);
    assert_eq!(s.select_idle_sibling_v3_9(p, 5), 6);
    // SIS_FIRST_IDLE is 4.5's patch and not in 3.9's features file.
    assert!(!Kernel::V3_9.has_feature(fairsim_balance::Feature::SIS_FIRST_IDLE));
}

#[test]
fn an_idle_prev_in_another_llc_is_not_kept() {
    // numa-2s4c2t: p last on cpu9 (node 1, idle); target cpu0 busy with its sibling. The
    // previous CPU does not share target's cache, so the walk of target's LLC runs and
    // takes core 1's cpu2.
    let mut s = sched39("numa-2s4c2t");
    let p = sleeper_on(&mut s, 9, None, MS);
    hog(&mut s, 0, 0);
    hog(&mut s, 1, 0);
    settle_idle(&mut s, 2 * MS);
    assert_eq!(s.select_idle_sibling_v3_9(p, 0), 2);
}

#[test]
fn a_fork_goes_to_the_idlest_group() {
    // Parent on cpu0, hogs on cpu2 and cpu4, core 3 idle. MC: the idlest group is core 3
    // (0) and 100 * this_load is not below 112 * 0, so its least loaded CPU, cpu6 (the
    // first of two at 0); then at cpu6's SMT level {7} reads 0 as {6} does and
    // `100 * 0 < 105 * 0` is false, so cpu7.
    let mut s = sched39("smt-mc-1s4c2t");
    hog(&mut s, 0, 0);
    hog(&mut s, 2, 0);
    hog(&mut s, 4, 0);
    settle_idle(&mut s, 2 * MS);
    let n = s.nr_cpus();
    let c = s.create_task("child", 0, Some(CpuMask::full(n)), 0);
    s.task_fork(c, 0, 3 * MS);
    assert_eq!(s.wake_up_new_task_select(c, 0, 3 * MS), 7);
}

#[test]
fn a_fork_stays_in_the_local_group_within_the_margin() {
    // Every core carries one nice-0 hog, the parent's core the parent: 100 * 1024 is below
    // 112 * 1024, so MC keeps the local core; at the SMT level the idle cpu1 wins.
    let mut s = sched39("smt-mc-1s4c2t");
    for cpu in [0, 2, 4, 6] {
        hog(&mut s, cpu, 0);
    }
    settle_idle(&mut s, 2 * MS);
    let n = s.nr_cpus();
    let c = s.create_task("child", 0, Some(CpuMask::full(n)), 0);
    s.task_fork(c, 0, 3 * MS);
    assert_eq!(s.wake_up_new_task_select(c, 0, 3 * MS), 1);
}
