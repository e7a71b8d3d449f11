//! Linux 6.5's wakeup placement and load balancer (`--kernel 6.5`) against 6.12.117's on
//! hand-built states: for each ported difference, a state where the two kernels decide
//! differently (the list is in `crates/balance/src/lb/v6_5/mod.rs`).

use crate::lb_support;
use crate::select_support;

use fairsim_balance::group_type::{group_has_capacity, GroupType, SgLbStats};
use fairsim_balance::lb::env::{LbScan, MigrationType, ScanOutcome, SdLbStats};
use fairsim_balance::lb::era::Balancer;
use fairsim_balance::lb::v6_5::balance::MoveTasksV6_5;
use fairsim_balance::lb::v6_5::stats::StatsV6_5;
use fairsim_balance::{
    BalanceAct, BalanceScan, CpuIdleType, Features, GroupStats, Kernel, MoveTasks, ScanCounters,
    Sched, SchedParams, SrcSelect, TaskId,
};
use fairsim_topology::source::{parse_spec, SpecOptions};
use fairsim_topology::{build_sched_domains, Arch, BuildOptions, CpuMask, SdId};
use select_support::{run_on, sleeper_on, wake};

const MS: u64 = 1_000_000;

/// The parameters of `kernel` with its default features and `extra` written over them.
fn params(kernel: Kernel, extra: &str) -> SchedParams {
    let features = if extra.is_empty() {
        kernel.features()
    } else {
        Features::parse_for(kernel, extra).unwrap()
    };
    SchedParams {
        features,
        util_est: kernel.util_est(),
        seed: 7,
        ..SchedParams::default()
    }
}

/// A scheduler for the named preset running `kernel`.
fn sched(name: &str, kernel: Kernel, extra: &str) -> Sched {
    select_support::sched_with(name, params(kernel, extra))
}

/// A scheduler for a qemu-style x86 machine running `kernel`.
fn sched_spec(smp: &str, kernel: Kernel, extra: &str) -> Sched {
    let m = parse_spec(&SpecOptions::new(smp, Arch::X86)).unwrap();
    let topo = build_sched_domains(&m, BuildOptions::default()).unwrap();
    Sched::new(m, topo, params(kernel, extra))
}

/// The domain of `cpu` spanning `weight` CPUs.
fn domain_of(s: &Sched, cpu: usize, weight: u32) -> SdId {
    s.topo
        .domains_of(cpu)
        .find(|&d| s.topo.domain(d).span_weight == weight)
        .unwrap_or_else(|| panic!("no {weight}-CPU domain on cpu{cpu}"))
}

/// Creates a task that stays queued on `cpu` (pinned while created), allowed everywhere.
fn queue_on(s: &mut Sched, cpu: usize, now: u64) -> TaskId {
    let n = s.nr_cpus();
    let p = s.create_task("hog", 0, Some(CpuMask::single(n, cpu)), cpu);
    s.wake_up_new_task_select(p, cpu, now);
    s.wake_up_new_task_activate(p, now);
    s.set_cpus_allowed(p, CpuMask::full(n));
    if s.rqs[cpu].curr.is_none() {
        s.schedule(cpu, now);
    }
    p
}

#[test]
fn kernel_6_5_selects_its_balancer() {
    assert_eq!(
        sched("smt-mc-1s4c2t", Kernel::V6_5, "").balancer(),
        Balancer::V6_5
    );
    assert_eq!(
        sched("smt-mc-1s4c2t", Kernel::V6_12, "").balancer(),
        Balancer::V6_12
    );
}

// ---- wakeup placement ----

/// TC2 (cpus 0-1 big, 2-4 LITTLE) with both bigs busy, the waker on LITTLE cpu2 and a
/// task too big for a LITTLE CPU that last ran on cpu3: every idle CPU is a LITTLE one
/// that does not fit.
fn tc2_no_fit(kernel: Kernel) -> (Sched, TaskId) {
    let mut s = sched("tc2", kernel, "");
    let p = sleeper_on(&mut s, 3, None, MS);
    run_on(&mut s, 2, 2 * MS);
    run_on(&mut s, 0, 2 * MS);
    run_on(&mut s, 1, 2 * MS);
    s.tasks[p].se.avg.util_est = 600;
    (s, p)
}

#[test]
fn select_idle_capacity_scans_from_after_the_target() {
    // wake_affine_idle keeps the idle previous CPU, cpu3, as the target; it does not fit.
    // 6.12 scans from the target and keeps it (cpu4's equal capacity is not greater);
    // 6.5 scans from target + 1, so cpu4 comes first and the target last.
    let (mut s, p) = tc2_no_fit(Kernel::V6_12);
    assert!(!s.task_fits_cpu(p, 3));
    assert_eq!(wake(&mut s, p, 2, 0, 3 * MS), 3);
    let (mut s, p) = tc2_no_fit(Kernel::V6_5);
    assert_eq!(wake(&mut s, p, 2, 0, 3 * MS), 4);
    s.check_invariants().unwrap();
}

/// A 16-CPU LLC without SMT: cpu0 wakes `p` (last on cpu1) with every CPU busy but
/// cpu9, eight CPUs after the target.
fn llc16(kernel: Kernel, extra: &str) -> (Sched, TaskId) {
    let mut s = sched_spec("16,sockets=1,cores=16,threads=1", kernel, extra);
    let p = sleeper_on(&mut s, 1, None, MS);
    for cpu in (0..16).filter(|&c| c != 9) {
        run_on(&mut s, cpu, 2 * MS);
    }
    (s, p)
}

#[test]
fn sis_prop_limits_the_scan_by_the_wakers_idle_time() {
    // 6.12 has no SIS_PROP: with SIS_UTIL off the scan is unlimited and finds cpu9.
    let (mut s, p) = llc16(Kernel::V6_12, "NO_SIS_UTIL");
    s.set_now(3 * MS);
    assert_eq!(s.select_idle_sibling(p, 1, 1), 9);
    // 6.5 with SIS_PROP: a waker with no predicted idle time scans at least 4 CPUs'
    // worth (`!--nr` stops before the 4th), so cpu9 is out of reach.
    let (mut s, p) = llc16(Kernel::V6_5, "SIS_PROP,NO_SIS_UTIL");
    s.set_now(3 * MS);
    s.lb.rq[0].wake_avg_idle = 0;
    let before = s.lb.sd[s.topo.cpus[0].sd_llc.unwrap()].avg_scan_cost;
    assert_eq!(s.select_idle_sibling_v6_5(p, 1, 1, 0), 1);
    // A scan cut short by `nr` records no cost.
    let llc0 = s.topo.cpus[0].sd_llc.unwrap();
    assert_eq!(s.lb.sd[llc0].avg_scan_cost, before);
    // With 1 ms predicted: nr = 16 * 1e6 / 1 covers the LLC; the scan reads 8 CPUs
    // (cpu2..cpu9) at 40 ns, which leaves the prediction and enters the average.
    let (mut s, p) = llc16(Kernel::V6_5, "SIS_PROP,NO_SIS_UTIL");
    s.set_now(3 * MS);
    let j = s.jiffies_now();
    s.lb.rq[0].wake_stamp = j;
    s.lb.rq[0].wake_avg_idle = MS;
    assert_eq!(s.select_idle_sibling_v6_5(p, 1, 1, 0), 9);
    assert_eq!(s.lb.rq[0].wake_avg_idle, MS - 8 * 40);
    assert_eq!(s.lb.sd[llc0].avg_scan_cost, 8 * 40 / 8);
    // SIS_PROP off (6.5's default), the scan is not limited either.
    let (mut s, p) = llc16(Kernel::V6_5, "NO_SIS_UTIL");
    s.set_now(3 * MS);
    s.lb.rq[0].wake_avg_idle = 0;
    assert_eq!(s.select_idle_sibling_v6_5(p, 1, 1, 0), 9);
}

#[test]
fn sis_prop_ages_the_prediction_per_jiffy() {
    // Three jiffies since the stamp halve 8 us three times: 1 us, so nr = 16 * 1000 / 1
    // still covers the LLC, and the 8 reads (320 ns) leave 680 ns.
    let (mut s, p) = llc16(Kernel::V6_5, "SIS_PROP,NO_SIS_UTIL");
    s.set_now(30 * MS);
    let j = s.jiffies_now();
    s.lb.rq[0].wake_stamp = j - 3;
    s.lb.rq[0].wake_avg_idle = 8000;
    assert_eq!(s.select_idle_sibling_v6_5(p, 1, 1, 0), 9);
    assert_eq!(s.lb.rq[0].wake_stamp, j);
    assert_eq!(s.lb.rq[0].wake_avg_idle, 1000 - 320);
}

#[test]
fn a_wakeup_after_a_newidle_balance_restarts_the_prediction_in_6_5_only() {
    for (kernel, expect_half) in [(Kernel::V6_5, true), (Kernel::V6_12, false)] {
        let mut s = sched("smt-mc-1s4c2t", kernel, "");
        // cpu3 goes idle through schedule(), which stamps it.
        let p = sleeper_on(&mut s, 3, None, MS);
        assert_ne!(s.rqs[3].idle_stamp, 0);
        s.lb.rq[3].wake_avg_idle = 12345;
        assert_eq!(wake(&mut s, p, 3, 0, 5 * MS), 3);
        let got = s.lb.rq[3].wake_avg_idle;
        if expect_half {
            assert_eq!(got, s.rqs[3].avg_idle / 2, "{kernel}");
            assert_eq!(s.lb.rq[3].wake_stamp, s.jiffies_now());
        } else {
            assert_eq!(got, 12345, "{kernel}");
        }
    }
}

// ---- load balancing ----

#[test]
fn should_we_balance_takes_the_first_idle_cpu_not_the_first_idle_core() {
    // numa-2s4c2t, node 0 = cpus 0-7 (cores {0,1} .. {6,7}). cpu0 is idle but its
    // sibling cpu1 runs; core {2,3} is fully idle. At the NUMA level 6.12 lets cpu2
    // balance (the first CPU of an idle core), 6.5 cpu0 (the first idle CPU).
    for kernel in [Kernel::V6_5, Kernel::V6_12] {
        let mut s = sched("numa-2s4c2t", kernel, "");
        run_on(&mut s, 1, MS);
        let numa = domain_of(&s, 2, 16);
        let env2 = s.lb_env(2, numa, CpuIdleType::Idle);
        let numa0 = domain_of(&s, 0, 16);
        let env0 = s.lb_env(0, numa0, CpuIdleType::Idle);
        let (cpu2, cpu0) = match kernel {
            Kernel::V6_5 => (
                s.should_we_balance_v6_5(&env2),
                s.should_we_balance_v6_5(&env0),
            ),
            _ => (s.should_we_balance(&env2), s.should_we_balance(&env0)),
        };
        assert_eq!(
            (cpu2, cpu0),
            (kernel == Kernel::V6_12, kernel == Kernel::V6_5)
        );
    }
}

#[test]
fn an_smt_core_running_two_tasks_is_not_group_smt_balance_in_6_5() {
    // smt-mc-1s4c2t: cpu2 and cpu3 (one core) run a task each; cpu0 balances its MC
    // domain as an idle CPU.
    let mut s = sched("smt-mc-1s4c2t", Kernel::V6_5, "");
    run_on(&mut s, 2, MS);
    run_on(&mut s, 3, MS);
    let mc = domain_of(&s, 0, 8);
    let env = s.lb_env(0, mc, CpuIdleType::Idle);
    let core1 = s.topo.domain(mc).groups[1];
    assert!(s.topo.group(core1).span.test(2));
    let local = Some(s.topo.domain(mc).groups[0]);
    let mut c = ScanCounters::default();
    let (v612, _) = GroupStats::update_sg_lb_stats(&s, &mut c, &env, local, core1);
    let (v65, _) = s.update_sg_lb_stats_v6_5(&mut c, &env, local, core1);
    assert_eq!(v612.group_type, GroupType::SmtBalance);
    assert_eq!(v65.group_smt_balance, 0);
    let pct = s.topo.domain(mc).imbalance_pct;
    let expect = if group_has_capacity(pct, &v65) {
        GroupType::HasSpare
    } else {
        GroupType::FullyBusy
    };
    assert_eq!(v65.group_type, expect);
}

#[test]
fn a_little_cpu_may_pick_a_fully_busy_big_group_in_6_5() {
    // TC2 at the package level from LITTLE cpu2: the big cluster's group, fully busy,
    // against the initial busiest statistics (has spare). 6.12.117 rejects it first
    // (its CPUs are bigger than cpu2); 6.5 takes it on its type and never gets to that
    // test.
    let s = sched("tc2", Kernel::V6_5, "");
    let pkg = domain_of(&s, 2, 5);
    let env = s.lb_env(2, pkg, CpuIdleType::Idle);
    let big = *s
        .topo
        .domain(pkg)
        .groups
        .iter()
        .find(|&&g| s.topo.group(g).span.test(0))
        .unwrap();
    let sgs = SgLbStats {
        sum_nr_running: 2,
        sum_h_nr_running: 2,
        group_weight: 2,
        group_capacity: 2048,
        group_type: GroupType::FullyBusy,
        ..SgLbStats::default()
    };
    let sds = SdLbStats::new();
    assert!(!GroupStats::update_sd_pick_busiest(
        &s, &env, &sds, big, &sgs
    ));
    assert!(s.update_sd_pick_busiest_v6_5(&env, &sds, big, &sgs));
}

/// Statistics of a domain whose busiest group (3 tasks on 2 CPUs, spare capacity) and
/// local group (idle) prefer siblings.
fn sibling_stats(s: &Sched, sd: SdId) -> SdLbStats {
    let g = &s.topo.domain(sd).groups;
    let mut sds = SdLbStats::new();
    sds.local = Some(g[0]);
    sds.busiest = Some(g[1]);
    sds.prefer_sibling = true;
    sds.local_stat = SgLbStats {
        group_weight: 2,
        idle_cpus: 2,
        group_capacity: 2048,
        ..SgLbStats::default()
    };
    sds.busiest_stat = SgLbStats {
        sum_nr_running: 3,
        sum_h_nr_running: 3,
        group_weight: 2,
        idle_cpus: 0,
        group_capacity: 2048,
        ..SgLbStats::default()
    };
    sds
}

#[test]
fn a_busy_cpu_spreads_tasks_to_sibling_groups_in_6_5() {
    // A periodic balance of a busy CPU: 6.12's sibling_imbalance() is 0 when not idle,
    // 6.5 asks for half the difference in running tasks.
    let s = sched("smt-mc-1s4c2t", Kernel::V6_5, "");
    let mc = domain_of(&s, 0, 8);
    let mut env = s.lb_env(0, mc, CpuIdleType::NotIdle);
    let mut sds = sibling_stats(&s, mc);
    SrcSelect::calculate_imbalance(&s, &mut env, &mut sds);
    assert_eq!(
        (env.migration_type, env.imbalance),
        (MigrationType::Task, 0)
    );
    let mut env = s.lb_env(0, mc, CpuIdleType::NotIdle);
    let mut sds = sibling_stats(&s, mc);
    s.calculate_imbalance_v6_5(&mut env, &mut sds);
    assert_eq!(
        (env.migration_type, env.imbalance),
        (MigrationType::Task, 1)
    );
}

#[test]
fn a_task_on_the_biggest_cpu_is_a_misfit_in_6_5_only() {
    // TC2: a task too big even for a big CPU (util 900 > 80% of 1024) runs on cpu0.
    for kernel in [Kernel::V6_5, Kernel::V6_12] {
        let mut s = sched("tc2", kernel, "");
        let p = queue_on(&mut s, 0, MS);
        s.tasks[p].se.avg.util_est = 900;
        assert_eq!(s.tasks[p].max_allowed_capacity, 1024);
        s.update_misfit_status(Some(p), 0);
        let misfit = s.rqs[0].misfit_task_load;
        assert_eq!(misfit != 0, kernel == Kernel::V6_5, "{kernel}: {misfit}");
    }
}

#[test]
fn a_misfit_task_overloads_the_root_domain_in_6_5_and_6_12() {
    // TC2: a task too big for a LITTLE CPU (util 900) runs alone on cpu2; big cpu0,
    // idle, scans the package domain. No CPU runs two tasks, but the misfit sets the
    // domain-wide overload flag in both kernels (6.12.117 fair.c update_sg_lb_stats:
    // `*sg_overloaded = 1` beside `group_misfit_task_load`; 6.5: `SG_OVERLOAD`), which
    // at the root becomes rd->overloaded, the gate of newidle balance.
    for kernel in [Kernel::V6_5, Kernel::V6_12] {
        let mut s = sched("tc2", kernel, "");
        let p = queue_on(&mut s, 2, MS);
        s.tasks[p].se.avg.util_est = 900;
        s.update_misfit_status(Some(p), 2);
        assert_ne!(s.rqs[2].misfit_task_load, 0, "{kernel}");
        let pkg = domain_of(&s, 0, 5);
        assert!(s.topo.domain(pkg).parent.is_none());
        let env = s.lb_env(0, pkg, CpuIdleType::Idle);
        let groups = &s.topo.domain(pkg).groups;
        let local = Some(groups[0]);
        let little = groups[1];
        assert!(s.topo.group(little).span.test(2));
        let mut c = ScanCounters::default();
        let (sgs, overloaded) = match kernel {
            Kernel::V6_5 => s.update_sg_lb_stats_v6_5(&mut c, &env, local, little),
            _ => GroupStats::update_sg_lb_stats(&s, &mut c, &env, local, little),
        };
        assert_eq!(sgs.group_misfit_task_load, s.rqs[2].misfit_task_load);
        assert_eq!(sgs.sum_nr_running, 1);
        assert!(overloaded, "{kernel}: a misfit task sets sg_overloaded");
    }
}

#[test]
fn task_hot_counts_the_last_buddy_in_6_5() {
    // cpu0 runs one task and has another queued, which is cfs_rq->last; cpu1, the
    // destination, is busy. The queued task ran long ago (migration cost 0.5 ms).
    let mut s = sched("smt-mc-1s4c2t", Kernel::V6_5, "");
    queue_on(&mut s, 0, MS);
    let q = queue_on(&mut s, 0, MS);
    run_on(&mut s, 1, MS);
    s.set_now(50 * MS);
    s.update_rq_clock(0, 50 * MS);
    s.rqs[0].cfs.last = Some(q);
    let mc = domain_of(&s, 1, 8);
    let mut env = s.lb_env(1, mc, CpuIdleType::Idle);
    env.src_cpu = 0;
    assert!(!MoveTasks::task_hot(&s, q, &env));
    assert!(s.task_hot_v6_5(q, &env));
}

#[test]
fn a_util_imbalance_is_not_relaxed_by_failures_in_6_5() {
    // cpu0 runs one task and has one queued with util_est 300; the imbalance is 200 of
    // utilization after two failed balances. 6.12 compares 300 >> 2 = 75 and takes the
    // task; 6.5 compares 300 and leaves it.
    for kernel in [Kernel::V6_5, Kernel::V6_12] {
        let mut s = sched("smt-mc-1s4c2t", kernel, "");
        queue_on(&mut s, 0, MS);
        let q = queue_on(&mut s, 0, MS);
        s.tasks[q].se.avg.util_est = 300;
        let mc = domain_of(&s, 2, 8);
        s.lb.sd[mc].nr_balance_failed = 2;
        s.set_now(50 * MS);
        s.update_rq_clock(0, 50 * MS);
        let mut env = s.lb_env(2, mc, CpuIdleType::Idle);
        env.src_cpu = 0;
        env.migration_type = MigrationType::Util;
        env.imbalance = 200;
        env.loop_max = 2;
        let n = match kernel {
            Kernel::V6_5 => s.detach_tasks_v6_5(&mut env),
            _ => MoveTasks::detach_tasks(&mut s, &mut env),
        };
        assert_eq!(n, u32::from(kernel == Kernel::V6_12), "{kernel}");
        if n == 1 {
            s.attach_tasks(&mut env, 50 * MS);
        }
        s.check_invariants().unwrap();
    }
}

#[test]
fn an_all_pinned_runqueue_is_walked_to_loop_break_in_6_5() {
    // cpu0 runs three tasks pinned to it; cpu2's newly idle balance finds it busiest.
    // 6.12 stops after loop_max (3) tasks; 6.5 keeps walking while every task seen was
    // pinned, until loop_break (32), and then, loop >= nr_running, gives up.
    for kernel in [Kernel::V6_5, Kernel::V6_12] {
        let mut s = sched("smt-mc-1s4c2t", kernel, "");
        let n = s.nr_cpus();
        for _ in 0..3 {
            let p = s.create_task("pinned", 0, Some(CpuMask::single(n, 0)), 0);
            s.wake_up_new_task_select(p, 0, MS);
            s.wake_up_new_task_activate(p, MS);
        }
        s.schedule(0, MS);
        let mc = domain_of(&s, 2, 8);
        let mut env = s.lb_env(2, mc, CpuIdleType::NewlyIdle);
        env.migration_type = MigrationType::Task;
        env.imbalance = 1;
        let scan = LbScan {
            env,
            outcome: ScanOutcome::Busiest(0),
        };
        s.take_work();
        let r = s.sched_balance_rq_act(scan, 2 * MS);
        assert_eq!(r.moved, 0);
        let examined = s.take_work().tasks_examined;
        let expect = if kernel == Kernel::V6_5 { 32 } else { 3 };
        assert_eq!(examined, expect, "{kernel}");
    }
}

#[test]
fn a_failed_misfit_balance_counts_as_a_failure_in_6_5() {
    // A periodic misfit balance from cpu2 finds only tasks that fit on cpu0: 6.12.117
    // does not count the failure, 6.5 does.
    for kernel in [Kernel::V6_5, Kernel::V6_12] {
        let mut s = sched("smt-mc-1s4c2t", kernel, "");
        queue_on(&mut s, 0, MS);
        queue_on(&mut s, 0, MS);
        let mc = domain_of(&s, 2, 8);
        let mut env = s.lb_env(2, mc, CpuIdleType::Idle);
        env.migration_type = MigrationType::Misfit;
        env.imbalance = 1;
        let scan = LbScan {
            env,
            outcome: ScanOutcome::Busiest(0),
        };
        let r = s.sched_balance_rq_act(scan, 2 * MS);
        assert_eq!(r.moved, 0);
        let failed = s.lb.sd[mc].nr_balance_failed;
        assert_eq!(failed, u32::from(kernel == Kernel::V6_5), "{kernel}");
    }
}

#[test]
fn newidle_stops_after_the_domain_during_which_a_wakeup_arrived() {
    // smt-mc-1s4c2t with three tasks on cpu0 (rd->overloaded). cpu2's newly idle
    // balance tries its SMT domain (cpu3 idle: nothing to pull); meanwhile a wakeup is
    // queued to cpu2. 6.5 stops at the end of that domain; 6.12 goes on to the MC domain,
    // where should_we_balance says no: one more lb_count, counted balanced.
    for kernel in [Kernel::V6_5, Kernel::V6_12] {
        let extra = if kernel == Kernel::V6_12 {
            "NO_NI_RANDOM"
        } else {
            ""
        };
        let mut s = sched("smt-mc-1s4c2t", kernel, extra);
        lb_support::pile_on(&mut s, 0, 3, 0);
        assert!(s.lb.is_rd_overloaded(&s.topo, 0));
        let now = MS;
        let mut nb = s.newidle_start(2, now).expect("the balance runs");
        // The SMT domain's scan, then its act.
        assert!(matches!(
            s.newidle_step(&mut nb, now),
            fairsim_balance::lb::NewidleStep::Continue
        ));
        s.rqs[2].ttwu_pending = 1;
        let mut steps = 0;
        let pulled = loop {
            match s.newidle_step(&mut nb, now) {
                fairsim_balance::lb::NewidleStep::Done(p) => break p,
                fairsim_balance::lb::NewidleStep::Continue => steps += 1,
            }
            assert!(steps < 10);
        };
        assert_eq!(pulled, 0);
        let smt = domain_of(&s, 2, 2);
        let mc = domain_of(&s, 2, 8);
        let newly = CpuIdleType::NewlyIdle as usize;
        assert_eq!(s.sd_stats[smt].lb_count[newly], 1, "{kernel}");
        let mc_count = s.sd_stats[mc].lb_count[newly];
        assert_eq!(mc_count, u64::from(kernel == Kernel::V6_12), "{kernel}");
        s.rqs[2].ttwu_pending = 0;
    }
}

#[test]
fn balancing_spreads_cpu_bound_tasks_under_6_5() {
    let mut s = sched("smt-mc-1s4c2t", Kernel::V6_5, "");
    lb_support::pile_on(&mut s, 0, 8, 0);
    let mut t = 0;
    for _ in 0..250 {
        t += s.tick_nsec;
        lb_support::tick_all(&mut s, t);
    }
    for rq in &s.rqs {
        assert_eq!(rq.nr_running, 1, "cpu{} runs {}", rq.cpu, rq.nr_running);
    }
    // The hogs never sleep: the periodic and nohz balances spread them.
    assert!(s
        .sd_stats
        .iter()
        .any(|st| st.lb_gained.iter().sum::<u64>() > 0));
}
