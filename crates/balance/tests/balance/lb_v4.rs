//! Linux 4.5's and 4.15's load balancers (`lb/v4_5`, `lb/v4_15`) against hand-computed
//! cases: the domains' `sd_init` parameters, the capacities each era derives, group
//! classification, `calculate_imbalance` / `fix_small_imbalance`, 4.15's
//! capacity-aware busiest-group and busiest-queue picks on TC2, the order in which each
//! era walks `cfs_tasks`, 4.15's tickless `cpu_load[]`, and whole balances.
//!
//! Machines: numa-2s4c2t (two nodes of 4 cores x 2 threads: SMT 2, MC 8, NUMA 16), tc2
//! (CPUs 0-1 Cortex-A15, 2-4 Cortex-A7: 4.5's `cpu_scale` 1441/606 from the efficiency
//! table, 4.15's 1024/430 from `capacity-dmips-mhz`).

use crate::select_support;

use std::sync::atomic::Ordering;

use fairsim_balance::lb::env::LbEnv;
use fairsim_balance::lb::era::Balancer;
use fairsim_balance::lb::v4_5::find_busiest::{
    calculate_imbalance, group_classify, group_has_capacity, group_is_overloaded, GroupTypeV4_5,
    SdLbStatsV4_5, SgLbStatsV4_5,
};
use fairsim_balance::{BalanceAct, CpuIdleType, Kernel, Sched, SchedParams, TaskId};
use fairsim_topology::{CpuMask, SdId};
use select_support::*;

const MS: u64 = 1_000_000;
const TICK: u64 = 4 * MS;

fn era(kernel: Kernel, machine: &str) -> Sched {
    era_with(kernel, machine, SchedParams::default())
}

fn era_with(kernel: Kernel, machine: &str, params: SchedParams) -> Sched {
    sched_with(
        machine,
        SchedParams {
            features: kernel.features(),
            ..params
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

/// A task on `cpu` (running if the CPU was idle, else queued), then free to move.
fn task_on(s: &mut Sched, cpu: usize, now: u64) -> TaskId {
    let p = run_on(s, cpu, now);
    let n = s.nr_cpus();
    s.tasks[p].cpus_allowed = CpuMask::full(n);
    s.tasks[p].nr_cpus_allowed = n;
    p
}

/// A balance environment of `dst` at `sd`.
fn env(s: &Sched, sd: SdId, dst: usize, idle: CpuIdleType) -> LbEnv {
    s.lb_env_v4_5(dst, sd, idle)
}

#[test]
fn kernels_select_their_balancers() {
    assert_eq!(era(Kernel::V4_5, "tc2").balancer(), Balancer::V4_5);
    assert_eq!(era(Kernel::V4_15, "tc2").balancer(), Balancer::V4_15);
    assert_eq!(era(Kernel::V4_16, "tc2").balancer(), Balancer::V4_15);
    assert_eq!(era(Kernel::V3_9, "tc2").balancer(), Balancer::V3_9);
    assert_eq!(era(Kernel::V6_12, "tc2").balancer(), Balancer::V6_12);
}

/// `sd_init` of 4.5 and 4.15: intervals from the level's weight, `busy_factor` 32,
/// `imbalance_pct` 110/117/125 and the load indexes per kind of level; 4.15 also makes
/// the LLC level prefer siblings.
#[test]
fn sd_init_parameters_per_level() {
    for kernel in [Kernel::V4_5, Kernel::V4_15] {
        let s = era(kernel, "numa-2s4c2t");
        let st = s.lb.legacy.as_ref().unwrap();
        let smt = domain_of_weight(&s, 0, 2);
        let mc = domain_of_weight(&s, 0, 8);
        let numa = domain_of_weight(&s, 0, 16);
        let p = st.sd[smt];
        assert_eq!(
            (
                p.min_interval,
                p.max_interval,
                p.busy_factor,
                p.imbalance_pct
            ),
            (2, 4, 32, 110)
        );
        assert_eq!(
            (p.cache_nice_tries, p.busy_idx, p.idle_idx, p.smt_gain),
            (0, 0, 0, 1178)
        );
        assert!(p.prefer_sibling && !p.serialize);
        let p = st.sd[mc];
        assert_eq!(
            (
                p.min_interval,
                p.max_interval,
                p.busy_factor,
                p.imbalance_pct
            ),
            (8, 16, 32, 117)
        );
        assert_eq!(
            (p.cache_nice_tries, p.busy_idx, p.idle_idx, p.newidle_idx),
            (1, 2, 0, 0)
        );
        assert_eq!(p.prefer_sibling, kernel == Kernel::V4_15, "{kernel}");
        let p = st.sd[numa];
        assert_eq!(
            (
                p.min_interval,
                p.max_interval,
                p.busy_factor,
                p.imbalance_pct
            ),
            (16, 32, 32, 125)
        );
        assert_eq!((p.cache_nice_tries, p.busy_idx, p.idle_idx), (2, 3, 2));
        assert!(p.serialize && !p.prefer_sibling);
        // The initial balance interval is the level's weight (ms).
        assert_eq!(s.lb.sd[mc].balance_interval, 8);
    }
}

/// Capacities: on x86 the default `arch_scale_cpu_capacity` gives each SMT thread
/// 1178 / 2 = 589; TC2's come from the era's ARM code.
#[test]
fn capacities_follow_the_eras_arch_scale() {
    for kernel in [Kernel::V4_5, Kernel::V4_15] {
        let s = era(kernel, "numa-2s4c2t");
        assert!((0..16).all(|c| s.capacity_of_v4_5(c) == 589), "{kernel}");
        let mc = domain_of_weight(&s, 0, 8);
        let core = s.topo.domain(mc).groups[0];
        assert_eq!(s.group_capacity_v4_5(core), 1178);
        let numa = domain_of_weight(&s, 0, 16);
        let node = s.topo.domain(numa).groups[0];
        assert_eq!(s.group_capacity_v4_5(node), 4 * 1178);
    }
    let cases = [
        (Kernel::V4_5, [1441, 1441, 606, 606, 606], [2882, 1818]),
        (Kernel::V4_15, [1024, 1024, 430, 430, 430], [2048, 1290]),
    ];
    for (kernel, cpus, groups) in cases {
        let s = era(kernel, "tc2");
        let caps: Vec<u64> = (0..5).map(|c| s.capacity_of_v4_5(c)).collect();
        assert_eq!(caps, cpus, "{kernel}");
        let pkg = domain_of_weight(&s, 0, 5);
        let g: Vec<u64> = s
            .topo
            .domain(pkg)
            .groups
            .iter()
            .map(|&g| s.group_capacity_v4_5(g))
            .collect();
        assert_eq!(g, groups, "{kernel}");
    }
    // 4.15's min_capacity: each cluster's smallest CPU.
    let s = era(Kernel::V4_15, "tc2");
    let st = s.lb.legacy.as_ref().unwrap();
    let pkg = domain_of_weight(&s, 0, 5);
    let mins: Vec<u64> = s
        .topo
        .domain(pkg)
        .groups
        .iter()
        .map(|&g| st.sgc_min_capacity[s.topo.group(g).sgc])
        .collect();
    assert_eq!(mins, vec![1024, 430]);
}

/// `group_is_overloaded` / `group_has_capacity` / `group_classify` on an SMT core
/// (weight 2, capacity 1178) at the LLC level (`imbalance_pct` 117).
#[test]
fn group_classification_hand_computed() {
    let core = |nr, util| SgLbStatsV4_5 {
        sum_nr_running: nr,
        group_weight: 2,
        group_capacity: 1178,
        group_util: util,
        ..SgLbStatsV4_5::default()
    };
    // 3 tasks on 2 CPUs, utilization 1100: 1178 * 100 = 117800 < 1100 * 117 = 128700.
    let busy = core(3, 1100);
    assert!(group_is_overloaded(117, &busy));
    assert!(!group_has_capacity(117, &busy));
    // Utilization 1000: 117800 >= 117000, not overloaded, and it still has capacity.
    let light = core(3, 1000);
    assert!(!group_is_overloaded(117, &light));
    assert!(group_has_capacity(117, &light));
    // 2 tasks on 2 CPUs are never overloaded, whatever their utilization; with 1100 they
    // leave no capacity (not < weight, 117800 <= 128700).
    let full = core(2, 1100);
    assert!(!group_is_overloaded(117, &full) && !group_has_capacity(117, &full));
    // Fewer tasks than CPUs always has capacity.
    assert!(group_has_capacity(117, &core(1, 1178)));
    // The class: overloaded first, then the imbalance flag, then other.
    let mut sgs = busy;
    sgs.group_no_capacity = true;
    assert_eq!(group_classify(true, &sgs), GroupTypeV4_5::Overloaded);
    assert_eq!(group_classify(true, &light), GroupTypeV4_5::Imbalanced);
    assert_eq!(group_classify(false, &light), GroupTypeV4_5::Other);
    assert!(GroupTypeV4_5::Overloaded > GroupTypeV4_5::Imbalanced);
    assert!(GroupTypeV4_5::Imbalanced > GroupTypeV4_5::Other);
}

/// A live group's statistics: three hogs on one SMT core (two on cpu2, one on cpu3),
/// read from cpu0 at the LLC level. The group's capacity is 1178, its weight 2, no CPU is
/// idle, and `avg_load` is the load per 1024 of capacity; setting the core's
/// `sgc->imbalance` makes an otherwise ordinary group `group_imbalanced`.
#[test]
fn live_group_statistics_and_the_imbalance_flag() {
    for kernel in [Kernel::V4_5, Kernel::V4_15] {
        let mut s = era(kernel, "numa-2s4c2t");
        run_on(&mut s, 2, 0);
        run_on(&mut s, 2, 0);
        run_on(&mut s, 3, 0);
        let mc = domain_of_weight(&s, 0, 8);
        let core1 = s.topo.domain(mc).groups[1];
        assert!(s.topo.group(core1).span.test(2) && s.topo.group(core1).span.test(3));
        let e = env(&s, mc, 0, CpuIdleType::Idle);
        let mut overload = false;
        let sgs = s.update_sg_lb_stats_v4_5(&e, core1, 0, false, &mut overload);
        assert!(overload, "{kernel}: cpu2 runs two tasks");
        assert_eq!((sgs.sum_nr_running, sgs.group_weight), (3, 2));
        assert_eq!((sgs.group_capacity, sgs.idle_cpus), (1178, 0));
        assert_eq!(sgs.avg_load, sgs.group_load * 1024 / 1178);
        assert_eq!(sgs.load_per_task, sgs.sum_weighted_load / 3);
        // New tasks carry a full load average: 3 x 1024.
        assert_eq!(sgs.sum_weighted_load, 3 * 1024);
        let expect = if sgs.group_no_capacity {
            GroupTypeV4_5::Overloaded
        } else {
            GroupTypeV4_5::Other
        };
        assert_eq!(sgs.group_type, expect);
        if !sgs.group_no_capacity {
            s.topo
                .group_sgc(core1)
                .imbalance
                .store(1, Ordering::Relaxed);
            let sgs = s.update_sg_lb_stats_v4_5(&e, core1, 0, false, &mut overload);
            assert_eq!(sgs.group_type, GroupTypeV4_5::Imbalanced, "{kernel}");
        }
        // The local group: cpu0 idle, cpu1 idle.
        let core0 = s.topo.domain(mc).groups[0];
        let mut o = false;
        let local = s.update_sg_lb_stats_v4_5(&e, core0, 0, true, &mut o);
        assert_eq!(
            (local.sum_nr_running, local.idle_cpus, local.avg_load),
            (0, 2, 0)
        );
        assert!(!o);
    }
}

/// Two overloaded groups of 4 CPUs (capacity 4096): the busiest runs 5 tasks of 1024,
/// the local 5 of 200. sds avg = 6120 * 1024 / 8192 = 765; the busiest is 515 above it.
/// 4.5 caps the pull at 5 * 1024 - 4096 = 1024 (a load minus a capacity): max_pull 515,
/// imbalance min(515 * 4096, (765 - 250) * 4096) / 1024 = 2060. 4.15 scales the excess
/// capacity to a load, 1024 * 1024 / 4096 = 256: imbalance 256 * 4096 / 1024 = 1024,
/// which is one task's load, so fix_small_imbalance is not needed.
#[test]
fn calculate_imbalance_4_5_and_4_15_cap_the_pull_differently() {
    let busiest = SgLbStatsV4_5 {
        avg_load: 5120 * 1024 / 4096, // 1280
        group_load: 5120,
        sum_weighted_load: 5120,
        load_per_task: 1024,
        group_capacity: 4096,
        sum_nr_running: 5,
        group_weight: 4,
        group_type: GroupTypeV4_5::Overloaded,
        group_no_capacity: true,
        ..SgLbStatsV4_5::default()
    };
    let local = SgLbStatsV4_5 {
        avg_load: 1000 * 1024 / 4096, // 250
        group_load: 1000,
        sum_weighted_load: 1000,
        load_per_task: 200,
        group_capacity: 4096,
        sum_nr_running: 5,
        group_weight: 4,
        group_type: GroupTypeV4_5::Overloaded,
        group_no_capacity: true,
        ..SgLbStatsV4_5::default()
    };
    let sds = SdLbStatsV4_5 {
        total_load: 6120,
        total_capacity: 8192,
        avg_load: 6120 * 1024 / 8192, // 765
        busiest_stat: busiest,
        local_stat: local,
        ..SdLbStatsV4_5::default()
    };
    let s = era(Kernel::V4_5, "numa-2s4c2t");
    for (v4_15, want) in [(false, 2060), (true, 1024)] {
        let mut e = env(&s, 0, 0, CpuIdleType::NotIdle);
        let mut sds = sds;
        calculate_imbalance(&mut e, &mut sds, 0, v4_15);
        assert_eq!(e.imbalance, want, "4.15: {v4_15}");
    }
    // Without two overloaded groups nothing caps the pull, in either kernel.
    let mut other = sds;
    other.local_stat.group_type = GroupTypeV4_5::Other;
    for v4_15 in [false, true] {
        let mut e = env(&s, 0, 0, CpuIdleType::NotIdle);
        let mut sds = other;
        calculate_imbalance(&mut e, &mut sds, 0, v4_15);
        assert_eq!(e.imbalance, 2060);
    }
}

/// Two SMT cores (capacity 1178): the busiest runs 4 tasks of 1024 (avg_load 3560), the
/// local 3 (2670); the domain's average is 7168 * 1024 / 2356 = 3115. The pull,
/// min(445 * 1178, 445 * 1178) / 1024 = 511, is below one task, so fix_small_imbalance
/// compares 3560 + 890 with 2670 + 2 * 890 (scaled_busy_load_per_task = 1024 * 1024 /
/// 1178 = 890; the loads per task are equal, so imbn is 2): equal, so one task moves.
/// With heavier local tasks (1100 each) the gap is too small and moving a task would not
/// raise the capacity used: the imbalance stays below half a task.
#[test]
fn fix_small_imbalance_moves_one_task_or_none() {
    let busiest = SgLbStatsV4_5 {
        avg_load: 4096 * 1024 / 1178,
        group_load: 4096,
        sum_weighted_load: 4096,
        load_per_task: 1024,
        group_capacity: 1178,
        sum_nr_running: 4,
        group_weight: 2,
        group_type: GroupTypeV4_5::Overloaded,
        group_no_capacity: true,
        ..SgLbStatsV4_5::default()
    };
    assert_eq!(busiest.avg_load, 3560);
    let local = SgLbStatsV4_5 {
        avg_load: 3072 * 1024 / 1178,
        group_load: 3072,
        sum_weighted_load: 3072,
        load_per_task: 1024,
        group_capacity: 1178,
        sum_nr_running: 3,
        group_weight: 2,
        ..SgLbStatsV4_5::default()
    };
    assert_eq!(local.avg_load, 2670);
    let sds = SdLbStatsV4_5 {
        total_load: 7168,
        total_capacity: 2356,
        avg_load: 7168 * 1024 / 2356,
        busiest_stat: busiest,
        local_stat: local,
        ..SdLbStatsV4_5::default()
    };
    assert_eq!(sds.avg_load, 3115);
    let s = era(Kernel::V4_5, "numa-2s4c2t");
    for v4_15 in [false, true] {
        let mut e = env(&s, 0, 0, CpuIdleType::NotIdle);
        let mut x = sds;
        calculate_imbalance(&mut e, &mut x, 0, v4_15);
        assert_eq!(e.imbalance, 1024, "4.15: {v4_15}");
    }
    // Local at 3 x 1100 = 3300: avg 3300 * 1024 / 1178 = 2868, domain avg 7396 * 1024 /
    // 2356 = 3214. Pull min(346, ..) * 1178 / 1024 = 398 < 1024. imbn stays 2 (1024 <
    // 1100): 3560 + 890 < 2868 + 1780. capa_now = (1178 * 1024 + 1178 * 1100) / 1024 =
    // 2443; capa_move = (1178 * min(1024, 2670) + 1178 * min(1100, 2868 + 890)) / 1024 =
    // 2443: no gain, so fix_small_imbalance leaves the 398, below half a task's load:
    // detach_tasks will move nothing.
    let mut light = sds;
    light.local_stat.group_load = 3300;
    light.local_stat.sum_weighted_load = 3300;
    light.local_stat.load_per_task = 1100;
    light.local_stat.avg_load = 3300 * 1024 / 1178;
    light.total_load = 7396;
    light.avg_load = 7396 * 1024 / 2356;
    assert_eq!((light.local_stat.avg_load, light.avg_load), (2868, 3214));
    let mut e = env(&s, 0, 0, CpuIdleType::NotIdle);
    calculate_imbalance(&mut e, &mut light, 0, false);
    assert_eq!(e.imbalance, 398);
}

/// 4.15's `update_sd_pick_busiest` on TC2, balancing from an A7 at the package level
/// while one A15 runs a task. With `SD_ASYM_CPUCAPACITY` (which no 4.15 architecture set;
/// the test sets it) the A15 group, at most one task per CPU, is not picked, as its CPUs
/// are bigger than the A7s (430 * 1280 < 1024 * 1024); without it, and in 4.5, its higher
/// `avg_load` makes it the busiest. With a second A15 task 4.15 picks it anyway: the
/// cluster level below prefers siblings in 4.15, so a remote group running two tasks more
/// than ours is classified overloaded before the clause is reached.
#[test]
fn asym_cpucapacity_keeps_a_group_of_bigger_cpus() {
    for (kernel, flag, a15_tasks, picked) in [
        (Kernel::V4_15, true, 1, false),
        (Kernel::V4_15, false, 1, true),
        (Kernel::V4_5, true, 1, true),
        (Kernel::V4_15, true, 2, true),
    ] {
        let mut s = era(kernel, "tc2");
        for cpu in 0..a15_tasks {
            task_on(&mut s, cpu, 0);
        }
        // An idle balance reads cpu_load[0] (idle_idx 1 above the cluster): tick once.
        for cpu in 0..a15_tasks {
            s.tick(cpu, TICK);
        }
        let pkg = domain_of_weight(&s, 2, 5);
        s.lb.legacy.as_mut().unwrap().sd[pkg].asym_cpucapacity = flag;
        let [a7, a15] = [s.topo.domain(pkg).groups[0], s.topo.domain(pkg).groups[1]];
        assert!(s.topo.group(a7).span.test(2) && s.topo.group(a15).span.test(0));
        assert!(s.group_smaller_cpu_capacity_v4_15(a7, a15) == (kernel == Kernel::V4_15));
        let e = env(&s, pkg, 2, CpuIdleType::Idle);
        let sds = s.update_sd_lb_stats_v4_5(&e);
        assert_eq!(sds.local, Some(a7));
        assert_eq!(
            sds.busiest == Some(a15),
            picked,
            "{kernel} flag {flag}, {a15_tasks} tasks"
        );
        if a15_tasks == 2 {
            assert_eq!(sds.busiest_stat.group_type, GroupTypeV4_5::Overloaded);
        }
    }
}

/// 4.5's and 4.15's `find_busiest_queue` compare loads per capacity by
/// cross-multiplication and skip a lone task heavier than the imbalance unless its CPU's
/// capacity is reduced. On TC2's A7 cluster under 4.15 (capacity 430): cpu2 runs two
/// tasks (2048), cpu3 one (1024). With cpu3 at its full capacity its lone task is skipped
/// (1024 > imbalance 500) and cpu2 is the busiest; with cpu3's capacity reduced to 200
/// (200 * 125 < 430 * 100) it is a candidate, and 1024 * 430 > 2048 * 200 makes it the
/// busiest; at 300, 1024 * 430 < 2048 * 300 keeps cpu2. (The package level's
/// `imbalance_pct` is 125: 300 * 125 < 430 * 100 is reduced too.)
#[test]
fn find_busiest_queue_scales_by_capacity() {
    for (cap3, want) in [(430, 2), (200, 3), (300, 2)] {
        let mut s = era(Kernel::V4_15, "tc2");
        run_on(&mut s, 2, 0);
        run_on(&mut s, 2, 0);
        run_on(&mut s, 3, 0);
        s.lb.legacy.as_mut().unwrap().cpu_power[3] = cap3;
        let pkg = domain_of_weight(&s, 0, 5);
        let a7 = s.topo.domain(pkg).groups[1];
        let mut e = env(&s, pkg, 0, CpuIdleType::Idle);
        e.imbalance = 500;
        assert_eq!(s.weighted_cpuload_v3_9(2), 2048);
        assert_eq!(
            s.find_busiest_queue_v4_5(&e, a7),
            Some(want),
            "capacity {cap3}"
        );
    }
}

/// `detach_tasks` walks `cfs_tasks` from its head in 4.5 (the task enqueued last) and
/// from its tail in 4.15 (the least recently picked; the running task there rotates to
/// the head). cpu0 runs A, with B then C queued behind it: the list is [C, B, A].
#[test]
fn detach_tasks_walks_the_list_from_each_eras_end() {
    for (kernel, pulled) in [(Kernel::V4_5, 2usize), (Kernel::V4_15, 1)] {
        let mut s = era_with(
            kernel,
            "numa-2s4c2t",
            SchedParams {
                migration_cost: 0,
                ..SchedParams::default()
            },
        );
        let tasks: Vec<TaskId> = (0..3).map(|_| task_on(&mut s, 0, 0)).collect();
        assert_eq!(s.rqs[0].curr, Some(tasks[0]));
        assert_eq!(s.rqs[0].cfs_tasks, vec![tasks[2], tasks[1], tasks[0]]);
        let mc = domain_of_weight(&s, 2, 8);
        let mut e = env(&s, mc, 2, CpuIdleType::Idle);
        e.src_cpu = 0;
        e.imbalance = 1024;
        e.loop_max = 3;
        assert_eq!(s.detach_tasks_v4_5(&mut e), 1, "{kernel}");
        assert_eq!(e.tasks, vec![tasks[pulled]], "{kernel}");
        s.attach_tasks(&mut e, MS);
        assert_eq!(s.tasks[tasks[pulled]].cpu, 2);
        s.check_invariants().unwrap();
    }
}

/// The tick restarting after idle: 4.5 feeds the missed ticks as load 0
/// (`update_cpu_load_nohz(0)`); 4.15 feeds the load the CPU has when its tick restarts,
/// after decaying the history over the missed ticks. cpu3 was idle for 25 ticks with a
/// history of 0; a woken task's load (1024) then reaches `cpu_load[0]` and half of it
/// `cpu_load[1]` in 4.15 only.
#[test]
fn tickless_restart_feeds_the_new_load_in_4_15_only() {
    for kernel in [Kernel::V4_5, Kernel::V4_15] {
        let mut s = era(kernel, "tc2");
        let p = sleeper_on(&mut s, 3, None, 0);
        settle_idle(&mut s, MS);
        s.nohz_balance_enter_idle(3);
        let now = 100 * MS;
        // A new task, as a wakeup that queues on the idle CPU.
        let q = run_on(&mut s, 3, now);
        assert_eq!(s.rqs[3].curr, Some(q));
        s.tick_nohz_idle_exit(3, now);
        let load = s.weighted_cpuload_v4_15(3);
        assert_eq!(load, 1024);
        let st = s.lb.legacy.as_ref().unwrap();
        let cl = st.cpu_load[3];
        match kernel {
            Kernel::V4_5 => assert_eq!(cl, [0; 5], "{kernel}"),
            _ => assert_eq!(cl, [1024, 512, 256, 128, 64], "{kernel}"),
        }
        let _ = p;
    }
}

/// A whole newly idle balance at the LLC level: two hogs on cpu0 and cpu2 (another core)
/// going idle. The busiest core's `avg_load` is about 2048 * 1024 / 1178 = 1780 against a
/// domain average of 2048 * 1024 / 4712 = 445: the pull, (445 - 0) * 1178 / 1024 = 511,
/// is below one task, and `fix_small_imbalance` raises it to one task's load. 4.5 takes
/// the queued hog from the head of the list; 4.15 skips the running one at the tail and
/// takes it too.
#[test]
fn a_newly_idle_core_pulls_the_queued_hog() {
    for kernel in [Kernel::V4_5, Kernel::V4_15] {
        let mut s = era_with(
            kernel,
            "numa-2s4c2t",
            SchedParams {
                migration_cost: 0,
                ..SchedParams::default()
            },
        );
        let a = task_on(&mut s, 0, 0);
        let b = task_on(&mut s, 0, 0);
        for k in 1..=10 {
            s.tick(0, k * TICK);
        }
        let now = 11 * TICK;
        let mc = domain_of_weight(&s, 2, 8);
        let r = s.sched_balance_rq(2, mc, CpuIdleType::NewlyIdle, now);
        assert_eq!(r.moved, 1, "{kernel}");
        assert_eq!(s.tasks[a].cpu, 0, "the running hog stays");
        assert_eq!(s.tasks[b].cpu, 2, "{kernel}");
        assert_eq!(s.nr_running_v3_9(0), 1);
        s.check_invariants().unwrap();
    }
}

/// An idle (not newly idle) balance does not pull from a group that is not overloaded
/// unless the group has two idle CPUs fewer than ours: cpu0's sibling cpu1 is idle, so
/// core 0 has one idle CPU against core 1's two, and cpu2 leaves the hogs where they are.
#[test]
fn an_idle_balance_leaves_a_group_with_an_idle_cpu() {
    for kernel in [Kernel::V4_5, Kernel::V4_15] {
        let mut s = era(kernel, "numa-2s4c2t");
        task_on(&mut s, 0, 0);
        task_on(&mut s, 0, 0);
        let mc = domain_of_weight(&s, 2, 8);
        let mut e = env(&s, mc, 2, CpuIdleType::Idle);
        let sds = s.update_sd_lb_stats_v4_5(&e);
        assert_eq!(sds.busiest_stat.idle_cpus, 1);
        assert_eq!(sds.local_stat.idle_cpus, 2);
        if sds.busiest_stat.group_type != GroupTypeV4_5::Overloaded {
            assert_eq!(
                s.find_busiest_group_v4_5(&mut e),
                fairsim_balance::lb::v4_5::find_busiest::BusiestGroupV4_5::Balanced,
                "{kernel}"
            );
        }
    }
}

/// The balance from cpu1, cpu0's SMT sibling, while cpu0 is idle: at the LLC level only
/// the first idle CPU of the local group (cpu0) balances, so cpu1's balance stops there
/// and says so to its caller.
#[test]
fn only_the_first_idle_cpu_of_the_group_balances() {
    for kernel in [Kernel::V4_5, Kernel::V4_15] {
        let mut s = era(kernel, "numa-2s4c2t");
        task_on(&mut s, 4, 0);
        task_on(&mut s, 4, 0);
        let mc = domain_of_weight(&s, 1, 8);
        let e = env(&s, mc, 1, CpuIdleType::Idle);
        assert!(!s.should_we_balance_v4_5(&e));
        let e0 = env(&s, mc, 0, CpuIdleType::Idle);
        assert!(s.should_we_balance_v4_5(&e0));
        let r = s.sched_balance_rq(1, mc, CpuIdleType::Idle, MS);
        assert!(!r.continue_balancing && r.moved == 0, "{kernel}");
        // A newly idle balance may run on any CPU.
        let en = env(&s, mc, 1, CpuIdleType::NewlyIdle);
        assert!(s.should_we_balance_v4_5(&en));
    }
}

/// `nohz_kick_needed`'s busy-CPU test: two CPUs of one LLC each run a task. 4.15 reads the
/// LLC's busy count and kicks the idle balancer; 4.5 reads it through `sd_busy`, the LLC
/// domain's parent, which a machine whose LLC is the top level does not have
/// (smt-mc-1s4c2t), so it does not kick there; with two LLCs (numa-2s4c2t) both kick.
#[test]
fn nohz_kick_on_two_busy_cpus_of_an_llc() {
    for (machine, kernel, kick) in [
        ("smt-mc-1s4c2t", Kernel::V4_5, false),
        ("smt-mc-1s4c2t", Kernel::V4_15, true),
        ("numa-2s4c2t", Kernel::V4_5, true),
        ("numa-2s4c2t", Kernel::V4_15, true),
    ] {
        let mut s = era(kernel, machine);
        task_on(&mut s, 0, 0);
        task_on(&mut s, 2, 0);
        // Past nohz.next_balance; cpu2's first busy tick counts it busy (one busy CPU:
        // no kick yet), then cpu0's.
        let now = 10 * TICK;
        s.tick(2, now);
        assert_eq!(
            s.sched_balance_trigger(2, now).kick_ilb,
            None,
            "{machine} {kernel}"
        );
        s.tick(0, now);
        let r = s.sched_balance_trigger(0, now);
        assert_eq!(r.kick_ilb.is_some(), kick, "{machine} {kernel}");
    }
}
