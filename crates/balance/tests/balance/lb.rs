//! Load balancing driven through the `Sched` entry points with a minimal tick loop:
//! periodic, newidle and nohz balancing spread CPU-bound tasks, schedstat counters stay
//! consistent, and the seed-000 ILB features shorten newidle scans.

use crate::lb_support;

use fairsim_balance::BalanceHost;
use fairsim_balance::{CpuIdleType, Feature, Features, Sched, SchedParams};
use fairsim_topology::source::preset;
use fairsim_topology::{build_sched_domains, BuildOptions};
use lb_support::{pile_on, tick_all};

fn sched_on(name: &str, features: Features, ilb_share: bool) -> Sched {
    let m = preset(name).unwrap();
    let opts = BuildOptions {
        shared_all_non_numa: ilb_share,
        relax_domain_level: None,
    };
    let topo = build_sched_domains(&m, opts).unwrap();
    let params = SchedParams {
        features,
        seed: 7,
        ..SchedParams::default()
    };
    Sched::new(m, topo, params)
}

fn run_ticks(s: &mut Sched, from: u64, ticks: u64) -> u64 {
    let mut t = from;
    for _ in 0..ticks {
        t += s.tick_nsec;
        tick_all(s, t);
    }
    t
}

fn busy_cpus(s: &Sched) -> usize {
    s.rqs.iter().filter(|rq| rq.curr.is_some()).count()
}

#[test]
fn newly_idle_cpu_pulls_from_an_overloaded_sibling() {
    // Without NI_RANDOM's coin toss the balance is tried on every domain.
    let mut s = sched_on(
        "smt-mc-1s4c2t",
        Features::parse("NO_NI_RANDOM").unwrap(),
        false,
    );
    pile_on(&mut s, 0, 3, 0);
    assert_eq!(s.rqs[0].nr_running, 3);
    assert!(
        s.lb.is_rd_overloaded(&s.topo, 0),
        "a second runnable task sets rd->overloaded"
    );
    // CPU 2 has nothing to run: its schedule() runs a newidle balance.
    let next = s.schedule(2, 1_000_000);
    assert!(next.is_some(), "the newidle balance pulled a task");
    assert_eq!(s.rqs[0].nr_running, 2);
    let mc = s.topo.domains_of(2).nth(1).unwrap();
    let st = &s.sd_stats[mc];
    let sd0 = s.topo.domains_of(2).next().unwrap();
    let newly = CpuIdleType::NewlyIdle as usize;
    assert_eq!(s.sd_stats[sd0].lb_count[newly], 1, "SMT domain tried first");
    assert_eq!(
        s.sd_stats[sd0].lb_nobusyg[newly], 1,
        "CPU 3 (its sibling) is idle too"
    );
    assert_eq!(st.lb_count[newly], 1);
    assert_eq!(st.lb_gained[newly], 1);
    s.check_invariants().unwrap();
}

#[test]
fn balancing_spreads_cpu_bound_tasks_one_per_cpu() {
    let mut s = sched_on("smt-mc-1s4c2t", Features::default(), false);
    pile_on(&mut s, 0, 8, 0);
    // Idle CPUs only balance when kicked or going idle: let the busy CPU's ticks kick the
    // idle load balancer, then everything should spread within a second.
    run_ticks(&mut s, 0, 250);
    assert_eq!(busy_cpus(&s), 8, "every CPU runs one of the 8 tasks");
    for rq in &s.rqs {
        assert_eq!(rq.nr_running, 1, "cpu{} runs {}", rq.cpu, rq.nr_running);
    }
}

#[test]
fn numa_machine_spreads_across_nodes_when_a_node_is_full() {
    let mut s = sched_on("numa-2s4c2t", Features::default(), false);
    pile_on(&mut s, 0, 16, 0);
    run_ticks(&mut s, 0, 500);
    let node1 = (8..16).filter(|&c| s.rqs[c].nr_running > 0).count();
    assert_eq!(node1, 8, "the second node takes half of 16 hogs");
}

#[test]
fn lb_counters_are_consistent() {
    let mut s = sched_on("numa-2s4c2t", Features::default(), false);
    pile_on(&mut s, 3, 24, 0);
    run_ticks(&mut s, 0, 300);
    for (sd, st) in s.sd_stats.iter().enumerate() {
        for it in 0..3 {
            assert!(
                st.lb_count[it] >= st.lb_balanced[it] + st.lb_failed[it],
                "sd {sd} itype {it}: count {} balanced {} failed {}",
                st.lb_count[it],
                st.lb_balanced[it],
                st.lb_failed[it]
            );
            assert!(st.lb_count[it] >= st.lb_nobusyg[it] + st.lb_nobusyq[it]);
            assert!(st.lb_gained[it] >= st.lb_hot_gained[it]);
        }
    }
    let total: u64 = s
        .sd_stats
        .iter()
        .map(|st| st.lb_count.iter().sum::<u64>())
        .sum();
    assert!(total > 0);
}

/// Newidle balances on the MC domain of a 224-CPU box with a few busy CPUs: the mean
/// number of groups scanned per balance, with and without ILB_UTIL / ILB_FAST.
fn mean_sg_scan(features: Features) -> f64 {
    let mut s = sched_on("spr-2s56c2t", features, true);
    // One busy core per 8 and an overloaded CPU so that balancing has something to find.
    pile_on(&mut s, 10, 3, 0);
    for c in (20..100).step_by(16) {
        pile_on(&mut s, c, 1, 0);
    }
    // Periodic balances fill in the snapshot and scan depth.
    let t = run_ticks(&mut s, 0, 50);
    let mc = s.topo.domains_of(60).nth(1).unwrap();
    let newly = CpuIdleType::NewlyIdle as usize;
    let before = (
        s.sd_stats[mc].lb_sg_scan[newly],
        s.sd_stats[mc].lb_count[newly],
    );
    for k in 0..20 {
        s.rqs[60].avg_idle = 10_000_000;
        s.newidle_start(60, t + k)
            .map(|mut nb| {
                while let fairsim_balance::lb::NewidleStep::Continue =
                    s.newidle_step(&mut nb, t + k)
                {}
            })
            .ok();
    }
    let after = (
        s.sd_stats[mc].lb_sg_scan[newly],
        s.sd_stats[mc].lb_count[newly],
    );
    let scans = after.0 - before.0;
    let count = after.1 - before.1;
    assert!(count > 0, "newidle balances ran on MC");
    scans as f64 / count as f64
}

#[test]
fn ilb_features_scan_fewer_groups_in_newidle_balance() {
    let mut base = Features::default();
    base.set(Feature::NI_RANDOM, false);
    base.set(Feature::ILB_SNAPSHOT, true);
    let full = mean_sg_scan(base);
    // Without ILB_UTIL/FAST every non-local group of the 56-group MC domain is scanned.
    assert!((full - 55.0).abs() < 0.01, "baseline scans {full}");
    let mut fast = base;
    fast.set(Feature::ILB_FAST, true);
    let f = mean_sg_scan(fast);
    assert!(f < full, "ILB_FAST {f} vs {full}");
    let mut util = base;
    util.set(Feature::ILB_UTIL, true);
    let u = mean_sg_scan(util);
    assert!(u < full, "ILB_UTIL {u} vs {full}");
}

/// `update_newidle_stats` after 512 failed calls that took `secs` seconds, from the state
/// `sd_init` leaves (512 calls, 256 successes, ratio 512).
fn ratio_after_failures(features: &str, secs: u64) -> u32 {
    let mut s = sched_on("smt-mc-1s4c2t", Features::parse(features).unwrap(), false);
    let sd = s.topo.cpus[0].sd.expect("cpu0 has domains");
    s.set_now(secs * 1_000_000_000);
    for _ in 0..512 {
        s.update_newidle_stats(sd, 0);
    }
    assert_eq!(s.lb.sd[sd].newidle_call, 512, "halved at 1024");
    s.lb.sd[sd].newidle_ratio
}

#[test]
fn ni_rate_keeps_a_slow_failing_domain_balancing() {
    // 6.12.117: the ratio is the success count alone, whatever the rate.
    assert_eq!(ratio_after_failures("", 2), 256);
    // NI_RATE adds delta >> 22: 2 s is 476 points, 20 s saturates at 1024.
    assert_eq!(
        ratio_after_failures("NI_RATE", 2),
        256 + (2_000_000_000u64 >> 22) as u32
    );
    assert_eq!(ratio_after_failures("NI_RATE", 20), 1024);
    // A domain whose 512 calls took no time earns no rate points.
    assert_eq!(ratio_after_failures("NI_RATE", 0), 256);
}

/// Runs `cpu`'s newidle balance up to the act phase of a domain that found a busiest
/// runqueue to lock; returns the balance and that runqueue.
fn newidle_until_act(
    s: &mut Sched,
    cpu: usize,
    now: u64,
) -> (fairsim_balance::lb::NewidleBalance, usize) {
    let mut nb = s.newidle_start(cpu, now).expect("the balance runs");
    loop {
        if let Some(rq) = nb.pending_lock(s, now) {
            return (nb, rq);
        }
        let step = s.newidle_step(&mut nb, now);
        assert_eq!(
            step,
            fairsim_balance::lb::NewidleStep::Continue,
            "cpu{cpu} ended before finding a busiest runqueue"
        );
    }
}

#[test]
fn two_newly_idle_cpus_race_for_one_task_and_the_second_finds_nothing() {
    let mut s = sched_on(
        "smt-mc-1s4c2t",
        Features::parse("NO_NI_RANDOM").unwrap(),
        false,
    );
    pile_on(&mut s, 0, 2, 0);
    assert!(s.lb.is_rd_overloaded(&s.topo, 0));
    let t = 1_000_000;
    // CPUs 2 and 4 go idle together; both scans pick CPU 0, which runs two tasks.
    let (mut a, ra) = newidle_until_act(&mut s, 2, t);
    let (mut b, rb) = newidle_until_act(&mut s, 4, t);
    assert_eq!((ra, rb), (0, 0));
    // The first to act pulls the queued task; the second acts on the state as it is now.
    s.newidle_step(&mut a, t);
    assert_eq!(s.rqs[2].nr_running, 1);
    assert_eq!(
        b.pending_lock(&mut s, t),
        None,
        "CPU 0 has one task left: nothing to lock for"
    );
    s.newidle_step(&mut b, t);
    assert_eq!(s.rqs[4].nr_running, 0);
    assert_eq!(s.rqs[0].nr_running, 1);
    let newly = CpuIdleType::NewlyIdle as usize;
    let mc = |cpu: usize| s.topo.domains_of(cpu).nth(1).unwrap();
    assert_eq!(s.sd_stats[mc(2)].lb_gained[newly], 1);
    assert_eq!(s.sd_stats[mc(4)].lb_gained[newly], 0);
    assert_eq!(
        s.sd_stats[mc(4)].lb_failed[newly],
        1,
        "the loser counts a failed balance"
    );
    s.check_invariants().unwrap();
}

#[test]
fn the_busiest_runqueue_is_chosen_when_the_group_scan_is_over() {
    use fairsim_balance::lb::rq_balance::{BalanceAct, ScanOutcome};
    let newly = CpuIdleType::NewlyIdle as usize;
    let t = 1_000_000;
    for leave in 0..=2 {
        let mut s = sched_on(
            "smt-mc-1s4c2t",
            Features::parse("NO_NI_RANDOM,NO_DELAY_DEQUEUE").unwrap(),
            false,
        );
        pile_on(&mut s, 0, 2, 0);
        let mc = s.topo.domains_of(2).nth(1).unwrap();
        // CPU 2's MC scan reads core 0's group as the busiest; its runqueue is not chosen
        // yet, as find_busiest_queue runs after update_sd_lb_stats.
        let scan = s.sched_balance_rq_scan(2, mc, CpuIdleType::NewlyIdle, t);
        assert!(
            matches!(scan.outcome, ScanOutcome::BusiestGroup(_)),
            "{:?}",
            scan.outcome
        );
        // Before the scan's time is over, `leave` of CPU 0's tasks run and sleep (dequeued
        // at once: no delayed dequeue).
        for _ in 0..leave {
            s.block_current(0, t);
            s.schedule(0, t);
        }
        assert_eq!(s.rqs[0].nr_running, 2 - leave);
        let r = s.sched_balance_rq_act(scan, t);
        let st = &s.sd_stats[mc];
        let got = (
            r.moved,
            st.lb_gained[newly],
            st.lb_failed[newly],
            st.lb_nobusyq[newly],
        );
        let want = match leave {
            // Two tasks: the queued one moves.
            0 => (1, 1, 0, 0),
            // One running task: still the busiest queue for a task imbalance, and
            // nothing can move (`lb_failed`), as in the kernel.
            1 => (0, 0, 1, 0),
            // Both asleep: no busiest queue any more (`lb_nobusyq`).
            _ => (0, 0, 0, 1),
        };
        assert_eq!(got, want, "{leave} task(s) left before the act");
        s.check_invariants().unwrap();
    }
}
