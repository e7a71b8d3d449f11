//! Linux 4.15 and 4.16's wakeup placement (`select/v4_15_*.rs`) with hand-computed
//! expectations: `wake_affine_idle` of each kernel on an idle previous CPU,
//! `wake_affine_weight` on both sides of its threshold, SIS_PROP's scan depth and the
//! `avg_scan_cost` update, `select_idle_core`, `wake_cap`, and 4.16's `recent_used_cpu`.
//!
//! Machines: smt-mc-1s4c2t (one LLC of 4 cores x 2 threads, CPUs 2k and 2k+1 on core k),
//! numa-2s4c2t (two LLCs/nodes of CPUs 0-7 and 8-15) and tc2 (CPUs 0-1 at 1024, 2-4 at
//! 430).

use crate::select_support;

use fairsim_balance::select::v4_15_sis::sis_prop_nr_v4_15;
use fairsim_balance::{Feature, Kernel, Sched, SchedParams, TaskId};
use fairsim_topology::SdId;
use select_support::*;

const MS: u64 = 1_000_000;

fn era(kernel: Kernel, machine: &str) -> Sched {
    sched_with(
        machine,
        SchedParams {
            features: kernel.features(),
            ..SchedParams::default()
        },
    )
}

/// The domain of `cpu` that spans `weight` CPUs.
fn domain_of_weight(s: &Sched, cpu: usize, weight: u32) -> SdId {
    s.topo
        .domains_of(cpu)
        .find(|&d| s.topo.domain(d).span_weight == weight)
        .expect("domain")
}

/// Sets the PELT load of the task running on `cpu` and leaves it current with the
/// cfs_rq, so that 4.15's `weighted_cpuload` reads it unchanged.
fn set_curr_load(s: &mut Sched, cpu: usize, load: u64) -> TaskId {
    let t = s.rqs[cpu].curr.expect("a task runs");
    assert_eq!(s.rqs[cpu].cfs_tasks.len(), 1);
    s.tasks[t].se.avg.load_avg = load;
    s.tasks[t].se.avg.last_update_time = s.rqs[cpu].cfs.avg.avg.last_update_time;
    assert_eq!(s.weighted_cpuload_v4_15(cpu), load);
    t
}

// --- wake_affine_idle -----------------------------------------------------------------

/// `p` last ran on cpu2; every CPU is idle; the wakeup comes from idle cpu0 (an
/// interrupt). 4.15 pulls to the waking CPU, 4.16 keeps the idle previous CPU.
#[test]
fn idle_waking_cpu_with_idle_prev_4_15_pulls_4_16_keeps_prev() {
    for (kernel, want) in [(Kernel::V4_15, 0), (Kernel::V4_16, 2)] {
        let mut s = era(kernel, "smt-mc-1s4c2t");
        let p = sleeper_on(&mut s, 2, None, MS);
        settle_idle(&mut s, 2 * MS);
        assert!(s.rqs[0].idle_cpu() && s.rqs[2].idle_cpu());

        assert!(s.wake_affine_idle_v4_15(0, false));
        assert_eq!(s.wake_affine_idle_v4_16(0, 2, false), Some(2));

        let llc = llc(&s, 0);
        assert_eq!(s.wake_affine_v4_15(llc, p, 0, 2, false), want, "{kernel}");
        // 4.16 counts the decision even though the task stays.
        assert_eq!(s.sd_stats[llc].ttwu_move_affine, 1, "{kernel}");

        // Through try_to_wake_up: the idle target is kept by select_idle_sibling.
        assert_eq!(wake(&mut s, p, 0, 0, 3 * MS), want, "{kernel}");
        s.check_invariants().unwrap();
    }
}

/// An idle waking CPU in another LLC: 4.15 says affine, 4.16 decides nothing (then
/// WA_WEIGHT decides); a busy previous CPU in the same LLC: 4.16 takes the waking CPU.
#[test]
fn wake_affine_idle_cache_and_sync_cases() {
    let mut s = era(Kernel::V4_16, "numa-2s4c2t");
    run_on(&mut s, 2, MS);
    run_on(&mut s, 9, MS);
    // cpu0 idle, prev cpu9 in the other LLC.
    assert!(s.wake_affine_idle_v4_15(0, false));
    assert_eq!(s.wake_affine_idle_v4_16(0, 9, false), None);
    // cpu0 idle, prev cpu2 busy in the same LLC.
    assert_eq!(s.wake_affine_idle_v4_16(0, 2, false), Some(0));
    // A sync wakeup from cpu9, whose waker is alone there.
    assert!(s.wake_affine_idle_v4_15(9, true));
    assert_eq!(s.wake_affine_idle_v4_16(9, 2, true), Some(9));
    assert!(!s.wake_affine_idle_v4_15(9, false));
    assert_eq!(s.wake_affine_idle_v4_16(9, 2, false), None);
}

// --- wake_affine_weight ---------------------------------------------------------------

/// Waker hog on cpu0, `p` last ran on cpu2 where another hog runs; the affine domain is
/// the LLC (imbalance_pct 117 in 4.15, so WA_BIAS's factor is 100 + 17 / 2 = 108).
fn weight_setup() -> (Sched, TaskId, SdId) {
    let mut s = era(Kernel::V4_15, "smt-mc-1s4c2t");
    let p = sleeper_on(&mut s, 2, None, MS);
    run_on(&mut s, 0, 2 * MS);
    run_on(&mut s, 2, 2 * MS);
    // task_h_load(p) = 300 * 1299 / 1300 = 299.
    s.tasks[p].se.avg.load_avg = 300;
    s.rqs[2].cfs.avg.avg.load_avg = 1299;
    assert_eq!(s.task_h_load(p), 299);
    assert_eq!(s.capacity_of(0), s.capacity_of(2));
    let sd = domain_of_weight(&s, 0, 8);
    (s, p, sd)
}

#[test]
fn wake_affine_weight_threshold_is_inclusive() {
    let (mut s, p, sd) = weight_setup();
    set_curr_load(&mut s, 2, 1199);
    // this = (673 + 299) * 100 = 97200, prev = (1199 - 299) * 108 = 97200: equal, and
    // 4.15 is affine on <= (6.12 needs <).
    set_curr_load(&mut s, 0, 673);
    assert!(s.wake_affine_weight_v4_15(sd, p, 0, 2, false));
    // One more unit of load on the waking CPU: 97300 > 97200.
    set_curr_load(&mut s, 0, 674);
    assert!(!s.wake_affine_weight_v4_15(sd, p, 0, 2, false));

    // Without WA_BIAS: 674 + 299 = 973 > 900, 600 + 299 = 899 <= 900.
    s.fair.features.set(Feature::WA_BIAS, false);
    assert!(!s.wake_affine_weight_v4_15(sd, p, 0, 2, false));
    set_curr_load(&mut s, 0, 601);
    assert!(s.wake_affine_weight_v4_15(sd, p, 0, 2, false));
    set_curr_load(&mut s, 0, 602);
    assert!(!s.wake_affine_weight_v4_15(sd, p, 0, 2, false));
}

#[test]
fn wake_affine_weight_sync_and_negative_prev() {
    let (mut s, p, sd) = weight_setup();
    // The previous CPU's runnable load is below the task's: prev_eff < 0, never affine.
    set_curr_load(&mut s, 2, 200);
    set_curr_load(&mut s, 0, 0);
    assert!(!s.wake_affine_weight_v4_15(sd, p, 0, 2, false));

    // Sync: the waker's task_h_load is taken out of this CPU's load. Waker load 1000 on
    // a cfs_rq of load 1000: task_h_load = 1000 * 1000 / 1001 = 999, so this CPU's 1000
    // becomes 1; this = (1 + 299) * 100 = 30000 <= prev = (1199 - 299) * 108 = 97200.
    set_curr_load(&mut s, 2, 1199);
    let w = set_curr_load(&mut s, 0, 1000);
    s.rqs[0].cfs.avg.avg.load_avg = 1000;
    assert_eq!(s.task_h_load(w), 999);
    assert!(!s.wake_affine_weight_v4_15(sd, p, 0, 2, false));
    assert!(s.wake_affine_weight_v4_15(sd, p, 0, 2, true));
    // With the waker alone on its CPU, its task_h_load (load * C / (C + 1)) never
    // exceeds the CPU's runnable load, so the "waker heavier than its CPU" shortcut
    // does not apply here; the subtraction decided.
}

// --- select_idle_cpu (SIS_PROP) -------------------------------------------------------

#[test]
fn sis_prop_depth_by_hand() {
    // span 8, avg_idle 20, avg_cost 10: 160 > 40, nr = 16.
    assert_eq!(sis_prop_nr_v4_15(8, 20, 10), 16);
    // 8 * 5 = 40 is not above 4 * 10: the floor of 4.
    assert_eq!(sis_prop_nr_v4_15(8, 5, 10), 4);
    // 8 * 6 = 48 > 40: 48 / 10 = 4 (truncated).
    assert_eq!(sis_prop_nr_v4_15(8, 6, 10), 4);
    // 8 * 7 = 56: 5.
    assert_eq!(sis_prop_nr_v4_15(8, 7, 10), 5);
    // The default avg_idle (1 ms) on a fresh domain: 1_000_000 / 512 = 1953, cost 1.
    assert_eq!(sis_prop_nr_v4_15(8, 1953, 1), 15624);
}

/// The CPUs in `busy` busy on smt-mc-1s4c2t, the rest idle; `p` (never enqueued) may
/// run anywhere.
fn scan_setup(busy: &[usize]) -> (Sched, TaskId, SdId) {
    let mut s = era(Kernel::V4_15, "smt-mc-1s4c2t");
    for &c in busy {
        run_on(&mut s, c, MS);
    }
    let p = s.create_task("p", 0, None, 0);
    let sd = llc(&s, 0);
    (s, p, sd)
}

#[test]
fn select_idle_cpu_stops_before_the_nth_cpu() {
    // nr = 4 (avg_idle 5, avg_cost 10): the scan from target 0 reads cpus 0, 1, 2 and
    // stops at cpu3, which is idle.
    let (mut s, p, sd) = scan_setup(&[0, 1, 2]);
    s.rqs[0].avg_idle = 5 * 512;
    s.lb.sd[sd].avg_scan_cost = 9;
    s.take_work();
    assert_eq!(s.select_idle_cpu_v4_15(p, sd, 0, 0), None);
    // A scan cut short by nr leaves avg_scan_cost alone.
    assert_eq!(s.lb.sd[sd].avg_scan_cost, 9);
    let w = s.take_work();
    assert_eq!(w.cpus_visited, 3);

    // nr = 5 (avg_idle 7): cpu3 is read and taken.
    s.rqs[0].avg_idle = 7 * 512 + 511;
    assert_eq!(s.select_idle_cpu_v4_15(p, sd, 0, 0), Some(3));
    // 4 CPUs read at 40 ns: (160 - 9) / 8 = 18, avg_scan_cost 27.
    assert_eq!(s.lb.sd[sd].avg_scan_cost, 27);
    assert_eq!(s.take_work().cpus_visited, 4);
}

#[test]
fn select_idle_cpu_starts_at_target_and_updates_the_cost_signed() {
    // Everything busy but cpu5: from target 5 the scan reads cpu5 first.
    let (mut s, p, sd) = scan_setup(&[0, 1, 2, 3, 4, 6, 7]);
    s.lb.sd[sd].avg_scan_cost = 1001;
    assert_eq!(s.rqs[0].avg_idle, 1_000_000);
    // avg_idle 1 ms: nr = 8 * 1953 / 1002 = 15.
    assert_eq!(s.select_idle_cpu_v4_15(p, sd, 5, 0), Some(5));
    // (40 - 1001) / 8 = -120 (truncated towards 0, not -121): 881.
    assert_eq!(s.lb.sd[sd].avg_scan_cost, 881);

    // The full scan from target 6 wraps and ends at cpu5 after 8 reads.
    s.take_work();
    assert_eq!(s.select_idle_cpu_v4_15(p, sd, 6, 0), Some(5));
    assert_eq!(s.take_work().cpus_visited, 8);
    // (320 - 881) / 8 = -70: 811.
    assert_eq!(s.lb.sd[sd].avg_scan_cost, 811);

    // The scan is timed with the engine's per-CPU figure.
    s.params.idle_scan_per_cpu = 100;
    assert_eq!(s.select_idle_cpu_v4_15(p, sd, 5, 0), Some(5));
    // (100 - 811) / 8 = -88: 723.
    assert_eq!(s.lb.sd[sd].avg_scan_cost, 723);
}

#[test]
fn sis_avg_cpu_skips_the_scan_when_idle_time_is_short() {
    let (mut s, p, sd) = scan_setup(&[0]);
    s.fair.features.set(Feature::SIS_AVG_CPU, true);
    s.rqs[0].avg_idle = 100 * 512;
    s.lb.sd[sd].avg_scan_cost = 100;
    // 100 < 101: no scan.
    assert_eq!(s.select_idle_cpu_v4_15(p, sd, 0, 0), None);
    s.lb.sd[sd].avg_scan_cost = 99;
    assert_eq!(s.select_idle_cpu_v4_15(p, sd, 0, 0), Some(1));
}

#[test]
fn disallowed_cpus_count_towards_nr_but_are_not_read() {
    let (mut s, p, sd) = scan_setup(&[0]);
    // p may use only cpu3 and cpu4; nr = 4 reaches cpus 0, 1, 2 only.
    let mut mask = fairsim_topology::CpuMask::new(8);
    mask.set(3);
    mask.set(4);
    s.tasks[p].cpus_allowed = mask;
    s.tasks[p].nr_cpus_allowed = 2;
    s.rqs[0].avg_idle = 5 * 512;
    s.lb.sd[sd].avg_scan_cost = 9;
    s.take_work();
    assert_eq!(s.select_idle_cpu_v4_15(p, sd, 0, 0), None);
    assert_eq!(s.take_work().cpus_visited, 0);
    // nr = 5 reaches cpu3.
    s.rqs[0].avg_idle = 7 * 512;
    assert_eq!(s.select_idle_cpu_v4_15(p, sd, 0, 0), Some(3));
    assert_eq!(s.take_work().cpus_visited, 1);
}

// --- select_idle_core / select_idle_smt / select_idle_sibling -------------------------

#[test]
fn select_idle_core_finds_the_idle_core_or_clears_the_hint() {
    // One thread busy on cores 0-2; core 3 (cpus 6, 7) idle.
    let (mut s, p, sd) = scan_setup(&[0, 2, 4]);
    settle_idle(&mut s, 2 * MS);
    assert!(s.test_idle_cores(0));
    s.take_work();
    assert_eq!(s.select_idle_core_v4_15(p, sd, 0), Some(6));
    // From target 7 the walk starts at cpu7 itself (6.12 starts after the target).
    assert_eq!(s.select_idle_core_v4_15(p, sd, 7), Some(7));
    // Cores 0-2 read both threads each, then core 3's two: 8 reads.
    s.take_work();
    assert_eq!(s.select_idle_core_v4_15(p, sd, 0), Some(6));
    assert_eq!(s.take_work().cpus_visited, 8);

    // With core 3 half busy no core is idle: the hint is cleared.
    run_on(&mut s, 7, 3 * MS);
    assert_eq!(s.select_idle_core_v4_15(p, sd, 0), None);
    assert!(!s.test_idle_cores(0));
    // ...and the next call does not scan.
    s.take_work();
    assert_eq!(s.select_idle_core_v4_15(p, sd, 0), None);
    assert_eq!(s.take_work().cpus_visited, 0);
}

#[test]
fn sibling_order_core_then_cpu_then_smt() {
    // cpus 0, 2, 3 busy: target 0 busy, prev 2 busy.
    let mut s = era(Kernel::V4_15, "smt-mc-1s4c2t");
    let p = sleeper_on(&mut s, 2, None, MS);
    for c in [0, 2, 3] {
        run_on(&mut s, c, 2 * MS);
    }
    settle_idle(&mut s, 2 * MS);
    // Cores 2 and 3 are idle: the idle-core scan from cpu0 finds core 2 (cpu4).
    assert!(s.test_idle_cores(0));
    assert_eq!(s.select_idle_sibling_v4_15(p, 2, 0, 0), 4);
    // Without the hint the CPU scan from cpu0 reads cpu0, then takes idle cpu1, before
    // any sibling search (6.12 would try prev's sibling first: cpu3, busy here).
    s.set_idle_cores(0, false);
    assert_eq!(s.select_idle_sibling_v4_15(p, 2, 0, 0), 1);
    // With the CPU scan skipped (SIS_AVG_CPU and no idle time on the waking CPU), the
    // sibling search reads target's core: cpu0 busy, cpu1 idle.
    s.fair.features.set(Feature::SIS_AVG_CPU, true);
    s.rqs[0].avg_idle = 0;
    let sd = llc(&s, 0);
    assert_eq!(s.select_idle_cpu_v4_15(p, sd, 0, 0), None);
    s.take_work();
    assert_eq!(s.select_idle_sibling_v4_15(p, 2, 0, 0), 1);
    assert_eq!(s.take_work().cpus_visited, 2);
    // With cpu1 busy too, target itself.
    run_on(&mut s, 1, 3 * MS);
    assert_eq!(s.select_idle_smt_v4_15(p, 0), None);
    assert_eq!(s.select_idle_sibling_v4_15(p, 2, 0, 0), 0);
}

// --- 4.16's recent_used_cpu -----------------------------------------------------------

/// cpus 0-3 busy, 4-7 idle, no idle-core hint; `p` last ran on cpu2 and used cpu7
/// before.
fn recent_setup(kernel: Kernel) -> (Sched, TaskId) {
    let mut s = era(kernel, "smt-mc-1s4c2t");
    let p = sleeper_on(&mut s, 2, None, MS);
    for c in 0..4 {
        run_on(&mut s, c, 2 * MS);
    }
    settle_idle(&mut s, 2 * MS);
    s.set_idle_cores(0, false);
    s.tasks[p].recent_used_cpu = 7;
    (s, p)
}

#[test]
fn recent_used_cpu_is_taken_by_4_16_only() {
    let (mut s, p) = recent_setup(Kernel::V4_16);
    assert_eq!(s.select_idle_sibling_v4_15(p, 2, 0, 0), 7);
    assert_eq!(s.tasks[p].recent_used_cpu, 2);

    let (mut s, p) = recent_setup(Kernel::V4_15);
    // 4.15 scans from target 0 and takes cpu4; recent_used_cpu is not touched.
    assert_eq!(s.select_idle_sibling_v4_15(p, 2, 0, 0), 4);
    assert_eq!(s.tasks[p].recent_used_cpu, 7);
}

#[test]
fn recent_used_cpu_is_left_alone_when_not_taken_in_4_16() {
    let (mut s, p) = recent_setup(Kernel::V4_16);
    // recent_used_cpu is busy: 4.16 keeps it (6.12 would overwrite it with prev).
    s.tasks[p].recent_used_cpu = 3;
    assert_eq!(s.select_idle_sibling_v4_15(p, 2, 0, 0), 4);
    assert_eq!(s.tasks[p].recent_used_cpu, 3);
    // Not allowed: skipped.
    s.tasks[p].recent_used_cpu = 7;
    s.tasks[p].cpus_allowed.clear(7);
    s.tasks[p].nr_cpus_allowed -= 1;
    assert_eq!(s.select_idle_sibling_v4_15(p, 2, 0, 0), 4);
    assert_eq!(s.tasks[p].recent_used_cpu, 7);
}

#[test]
fn waker_recent_used_cpu_is_set_by_4_16_affine_wakeups() {
    for (kernel, want) in [(Kernel::V4_15, 5), (Kernel::V4_16, 0)] {
        let (mut s, p) = recent_setup(kernel);
        let waker = s.rqs[0].curr.expect("hog on cpu0");
        s.tasks[waker].recent_used_cpu = 5;
        wake(&mut s, p, 0, 0, 3 * MS);
        assert_eq!(s.tasks[waker].recent_used_cpu, want, "{kernel}");
        s.check_invariants().unwrap();
    }
}

// --- wake_cap -------------------------------------------------------------------------

#[test]
fn wake_cap_on_big_little() {
    let mut s = era(Kernel::V4_15, "tc2");
    assert_eq!(s.rqs[3].capacity_orig, 430);
    let p = sleeper_on(&mut s, 3, None, MS);
    let sync_util = |s: &mut Sched, util: u64| {
        s.tasks[p].se.avg.util_avg = util;
        s.tasks[p].se.avg.last_update_time = s.rqs[3].cfs.avg.avg.last_update_time;
    };
    // 430 * 1024 = 440320 against util * 1280: 344 fits (440320 is not below 440320).
    sync_util(&mut s, 344);
    assert!(!s.wake_cap_v4_15(p, 0, 3));
    sync_util(&mut s, 345);
    assert!(s.wake_cap_v4_15(p, 0, 3));
    // Both CPUs big: 1024 is the root domain's largest, so no test at all.
    sync_util(&mut s, 1000);
    assert!(!s.wake_cap_v4_15(p, 0, 1));

    // Symmetric machine: never.
    let mut s = era(Kernel::V4_15, "smt-mc-1s4c2t");
    let p = sleeper_on(&mut s, 3, None, MS);
    s.tasks[p].se.avg.util_avg = 1024;
    assert!(!s.wake_cap_v4_15(p, 0, 3));
}

/// A task too big for LITTLE cpu3 woken from big cpu0: `wake_cap` drops `want_affine`,
/// no domain has `SD_BALANCE_WAKE`, so the fast path runs around the previous CPU.
#[test]
fn wake_cap_sends_the_wakeup_to_prev() {
    let mut s = era(Kernel::V4_15, "tc2");
    let p = sleeper_on(&mut s, 3, None, MS);
    run_on(&mut s, 0, 2 * MS);
    settle_idle(&mut s, 2 * MS);
    run_on(&mut s, 3, 2 * MS);
    s.tasks[p].se.avg.util_avg = 600;
    s.tasks[p].se.avg.last_update_time = s.rqs[3].cfs.avg.avg.last_update_time;
    assert!(s.wake_cap_v4_15(p, 0, 3));
    // select_idle_sibling(p, 3, 3): cpu3 is busy, so the scan of its LLC (the LITTLE
    // cluster) from cpu3 takes cpu4. No wake_affine ran.
    assert_eq!(wake(&mut s, p, 0, 0, 3 * MS), 4);
    assert_eq!(
        s.sd_stats.iter().map(|d| d.ttwu_move_affine).sum::<u64>(),
        0
    );
    s.check_invariants().unwrap();
}
