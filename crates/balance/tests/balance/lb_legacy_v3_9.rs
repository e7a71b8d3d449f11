//! Linux 3.9's load balancer (LEGACY_LB) and seed 002's features on top of it, on ARM's
//! TC2 (`tc2`: CPUs 0-1 are Cortex-A15 with cpu_power 1441, CPUs 2-4 Cortex-A7 with 606).

use crate::select_support;

use fairsim_balance::lb::env::{LbEnv, MigrationType};
use fairsim_balance::lb::v3_9::find_busiest::{calculate_imbalance_arith, SdLbStatsV3_9};
use fairsim_balance::{BalanceAct, CpuIdleType, Features, Sched, SchedParams};
use fairsim_topology::{CpuMask, SdId};
use select_support::*;

const MS: u64 = 1_000_000;
const TICK: u64 = 4 * MS;

fn tc2(features: &str) -> Sched {
    sched_with(
        "tc2",
        SchedParams {
            features: Features::parse(features).expect("features"),
            ..SchedParams::default()
        },
    )
}

/// The PKG domain of `cpu` (3.9's CPU level): the two clusters as groups.
fn pkg(s: &Sched, cpu: usize) -> SdId {
    s.topo
        .domains_of(cpu)
        .find(|&d| s.topo.domain(d).span_weight == 5)
        .expect("pkg domain")
}

/// An environment for a balance by `dst` at `sd`.
fn env(s: &Sched, sd: SdId, dst: usize, idle: CpuIdleType, imbalance: i64) -> LbEnv {
    LbEnv {
        sd,
        src_cpu: dst,
        dst_cpu: dst,
        dst_core_idle: false,
        dst_grpmask: s.topo.group(s.topo.domain(sd).groups[0]).span.clone(),
        new_dst_cpu: dst,
        idle,
        imbalance,
        cpus: CpuMask::full(s.nr_cpus()),
        flags: 0,
        loop_: 0,
        loop_break: 32,
        loop_max: 0,
        migration_type: MigrationType::Load,
        tasks: Vec::new(),
    }
}

/// Runs a hog alone on `cpu` for `ticks` ticks, so that its load average and the CPU's
/// `cpu_load[]` build up.
fn hog_for(s: &mut Sched, cpu: usize, ticks: u64) {
    let p = run_on(s, cpu, 0);
    // Placed by pinning, then free to move as sysbench's threads are.
    let n = s.nr_cpus();
    s.tasks[p].cpus_allowed = CpuMask::full(n);
    s.tasks[p].nr_cpus_allowed = n;
    for k in 1..=ticks {
        s.tick(cpu, k * TICK);
    }
}

#[test]
fn tc2_powers_are_the_postings_and_groups_sum_them() {
    let s = tc2("LEGACY_LB");
    let powers: Vec<u64> = (0..5).map(|c| s.power_of_v3_9(c)).collect();
    assert_eq!(powers, vec![1441, 1441, 606, 606, 606]);
    let sd = pkg(&s, 0);
    let g: Vec<u64> = s
        .topo
        .domain(sd)
        .groups
        .iter()
        .map(|&g| s.group_power_v3_9(g))
        .collect();
    assert_eq!(g, vec![2882, 1818]);
    // The SMP configuration of the posting: 3.9 leaves every CPU at 1024.
    let smp = sched_with(
        "tc2-2a15",
        SchedParams {
            features: Features::parse("LEGACY_LB").unwrap(),
            ..SchedParams::default()
        },
    );
    assert_eq!(smp.power_of_v3_9(0), 1024);
}

#[test]
fn group_capacity_counts_the_a15_pair_as_three_and_the_a7_trio_as_two() {
    let mut s = tc2("LEGACY_LB");
    let sd = pkg(&s, 0);
    let e = env(&s, sd, 0, CpuIdleType::NewlyIdle, 0);
    let groups = s.topo.domain(sd).groups.to_vec();
    let local = s.update_sg_lb_stats_v3_9(&e, groups[0], 0, true).unwrap();
    let remote = s.update_sg_lb_stats_v3_9(&e, groups[1], 0, false).unwrap();
    assert_eq!((local.group_capacity, local.group_weight), (3, 2));
    assert_eq!((remote.group_capacity, remote.group_weight), (2, 3));
}

/// Five hogs, one per CPU, when the A15s are done: an idle A15 balancing at the CPU level
/// finds the A7 group over its capacity of 2 and computes an imbalance below one task,
/// which `fix_small_imbalance` raises to one task's load (hand-computed from 3.9's code).
#[test]
fn calculate_imbalance_raises_a_small_imbalance_to_one_task() {
    let mut e = env(&tc2("LEGACY_LB"), 0, 0, CpuIdleType::Idle, 0);
    let mut sds = SdLbStatsV3_9 {
        total_load: 3072,
        total_pwr: 2882 + 1818,
        avg_load: 3072 * 1024 / 4700, // 669
        this_load: 0,
        this_load_per_task: 0,
        this_nr_running: 0,
        max_load: 3072 * 1024 / 1818, // 1730
        busiest_load_per_task: 3072,
        busiest_nr_running: 3,
        busiest_group_capacity: 2,
        busiest_group_weight: 3,
        ..SdLbStatsV3_9::default()
    };
    // load_above_capacity = 1 * 1024 * 1024 / 1818 = 576; max_pull = min(1061, 576);
    // imbalance = min(576 * 1818, 669 * 2882) / 1024 = 1022 < 1024 per task.
    calculate_imbalance_arith(&mut e, &mut sds, 1818, 2882, 0, false);
    assert_eq!(sds.busiest_load_per_task, 1024);
    // scaled_busy_load_per_task = 576; 1730 - 0 + 576 >= 2 * 576: move one task.
    assert_eq!(e.imbalance, 1024);
}

/// Seed 002's 2/2 in `fix_small_imbalance`: three tasks on the A15 pair, two on the A7
/// trio, an A7 idle. Moving a task does not raise the power used (`pwr_move` 3866 <
/// `pwr_now` 4700), so 3.9 moves nothing; the patch moves one because the busiest group
/// runs more tasks than it has CPUs.
#[test]
fn idle_pull_multi_moves_a_task_that_gains_no_throughput() {
    let sds0 = SdLbStatsV3_9 {
        total_load: 5120,
        total_pwr: 4700,
        avg_load: 5120 * 1024 / 4700,  // 1115
        this_load: 2048 * 1024 / 1818, // 1153
        this_load_per_task: 2048,
        this_nr_running: 2,
        max_load: 3072 * 1024 / 2882, // 1091
        busiest_load_per_task: 3072,
        busiest_nr_running: 3,
        busiest_group_capacity: 3,
        busiest_group_weight: 2,
        group_imb: true,
        ..SdLbStatsV3_9::default()
    };
    let s = tc2("LEGACY_LB");
    for (multi, want) in [(false, 0), (true, 1024)] {
        let mut e = env(&s, 0, 2, CpuIdleType::Idle, 0);
        let mut sds = sds0;
        calculate_imbalance_arith(&mut e, &mut sds, 2882, 1818, 0, multi);
        assert_eq!(e.imbalance, want, "LB_IDLE_PULL_MULTI {multi}");
    }
    // A busy CPU does not get the patch's pull.
    let mut e = env(&s, 0, 2, CpuIdleType::NotIdle, 0);
    let mut sds = sds0;
    calculate_imbalance_arith(&mut e, &mut sds, 2882, 1818, 0, true);
    assert_eq!(e.imbalance, 0);
}

/// Seed 002's 1/2 in `find_busiest_queue`: a lone A7 task heavier than the imbalance is
/// skipped by 3.9, and becomes the busiest queue with the patch because its runnable load
/// exceeds the A7's power while the destination A15 is more powerful.
#[test]
fn force_better_cpu_picks_a_lone_overloaded_a7() {
    for (features, want) in [
        ("LEGACY_LB", None),
        ("LEGACY_LB,LB_FORCE_BETTER_CPU", Some(2)),
    ] {
        let mut s = tc2(features);
        hog_for(&mut s, 2, 100);
        assert!(s.weighted_cpuload_v4_15(2) > 606);
        let sd = pkg(&s, 0);
        let a7 = s.topo.domain(sd).groups[1];
        let e = env(&s, sd, 0, CpuIdleType::Idle, 100);
        assert_eq!(s.find_busiest_queue_v3_9(&e, a7), want, "{features}");
    }
}

/// The whole balance: an idle A15 at the CPU level with one hog on an A7. 3.9 sees no
/// busiest group (one task, capacity 2, no internal imbalance); with 1/2 the A7 group is
/// imbalanced, its CPU is the busiest queue, nothing can be pulled from a lone running
/// task, and `need_active_balance` asks the A7's stopper to push it to the A15.
#[test]
fn force_better_cpu_queues_an_active_balance_to_the_a15() {
    for (features, want) in [
        ("LEGACY_LB", None),
        ("LEGACY_LB,LB_FORCE_BETTER_CPU", Some(2)),
    ] {
        let mut s = tc2(features);
        hog_for(&mut s, 2, 100);
        let now = 101 * TICK;
        let sd = pkg(&s, 0);
        let r = s.sched_balance_rq(0, sd, CpuIdleType::Idle, now);
        assert_eq!(r.moved, 0, "{features}");
        assert_eq!(r.active_balance, want, "{features}");
        if want.is_some() {
            let moved = s.active_load_balance_cpu_stop(2, now);
            assert!(moved.is_some());
            assert_eq!(s.nr_running_v3_9(0), 1);
            assert_eq!(s.nr_running_v3_9(2), 0);
        }
        s.check_invariants().unwrap();
    }
}

/// 3.9's fork placement on an idle TC2 sends the child to the other cluster from the
/// parent's: a parent running alone on an A15 loads its group, so the A7 group is the
/// idlest; a parent on an A7 sends it to an A15.
#[test]
fn fork_goes_to_the_other_cluster_from_the_parent() {
    for (parent_cpu, other) in [(0usize, 2..5), (3, 0..2)] {
        let mut s = tc2("LEGACY_LB");
        run_on(&mut s, parent_cpu, 0);
        settle_idle(&mut s, MS);
        let c = s.create_task("child", 0, None, parent_cpu);
        let cpu = s.wake_up_new_task_select(c, parent_cpu, 2 * MS);
        assert!(
            other.contains(&cpu),
            "parent cpu{parent_cpu}: child cpu{cpu}"
        );
    }
}

#[test]
fn cpu_load_follows_the_tick_and_source_target_bias_it() {
    let mut s = tc2("LEGACY_LB");
    hog_for(&mut s, 2, 1);
    // One tick with a load of 1024: cpu_load[1] is half way (512, rounded up).
    assert_eq!(s.source_load_v3_9(2, 2), 512);
    assert_eq!(s.target_load_v3_9(2, 2), 1024);
    assert_eq!(s.source_load_v3_9(2, 0), 1024);
    let mut nobias = tc2("LEGACY_LB,NO_LB_BIAS");
    hog_for(&mut nobias, 2, 1);
    assert_eq!(nobias.source_load_v3_9(2, 2), 1024);
}

/// LB_RUNNABLE_AVG: the balancer's CPU load is the runnable average, not the weight. A
/// task that slept for a second and was just woken weighs 1024 in 3.9 but carries its
/// decayed average under Alex Shi's series.
#[test]
fn runnable_avg_reads_a_woken_sleepers_decayed_load() {
    for (features, low) in [("LEGACY_LB", false), ("LEGACY_LB,LB_RUNNABLE_AVG", true)] {
        let mut s = tc2(features);
        let p = sleeper_on(&mut s, 2, None, 0);
        settle_idle(&mut s, MS);
        wake(&mut s, p, 2, 0, 1_000 * MS);
        let cpu = s.tasks[p].cpu;
        let load = s.weighted_cpuload_v3_9(cpu);
        if low {
            assert!(load < 512, "{features}: {load}");
        } else {
            assert_eq!(load, 1024, "{features}");
        }
    }
}
