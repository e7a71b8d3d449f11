//! Properties of load balancing on random runqueue states, and scenarios that reach each
//! `group_type` and `migration_type`.

use fairsim_balance::group_type::GroupType;
use fairsim_balance::lb::MigrationType;
use fairsim_balance::{BalanceAct, BalanceScan, CpuIdleType, Features, Sched, SchedParams, TaskId};
use fairsim_topology::source::preset;
use fairsim_topology::{build_sched_domains, BuildOptions, CpuMask};
use proptest::prelude::*;

fn sched_on(name: &str) -> Sched {
    sched_for(preset(name).unwrap())
}

fn sched_for(m: fairsim_topology::Machine) -> Sched {
    let topo = build_sched_domains(&m, BuildOptions::default()).unwrap();
    let params = SchedParams {
        features: Features::parse("NO_NI_RANDOM").unwrap(),
        seed: 3,
        ..SchedParams::default()
    };
    Sched::new(m, topo, params)
}

/// Places a new CPU-bound task on `cpu`, then gives it `allowed` as its affinity.
fn place(s: &mut Sched, cpu: usize, allowed: &CpuMask, now: u64) -> TaskId {
    let n = s.nr_cpus();
    let p = s.create_task("t", 0, Some(CpuMask::single(n, cpu)), cpu);
    s.wake_up_new_task_select(p, cpu, now);
    s.wake_up_new_task_activate(p, now);
    s.set_cpus_allowed(p, allowed.or(&CpuMask::single(n, cpu)));
    if s.rqs[cpu].curr.is_none() || s.rqs[cpu].need_resched {
        s.schedule(cpu, now);
    }
    p
}

/// Runs every busy CPU for `ticks` ticks (no balancing) so PELT signals build up.
fn warm(s: &mut Sched, ticks: u64) -> u64 {
    let mut t = 0;
    for _ in 0..ticks {
        t += s.tick_nsec;
        for cpu in 0..s.nr_cpus() {
            if s.rqs[cpu].curr.is_some() && s.tick(cpu, t) {
                s.schedule(cpu, t);
            }
        }
    }
    t
}

fn state() -> impl Strategy<Value = (usize, Vec<(usize, u64)>, usize, u8)> {
    (
        0usize..3,
        proptest::collection::vec((0usize..16, any::<u64>()), 1..40),
        0usize..16,
        0u8..3,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn find_src_group_and_detach_respect_the_rules((m, tasks, dst, itype) in state()) {
        let name = ["smt-mc-1s4c2t", "numa-2s4c2t", "numa-4n-far"][m];
        let mut s = sched_on(name);
        let n = s.nr_cpus();
        let dst = dst % n;
        for (cpu, mask_bits) in &tasks {
            let mask = CpuMask::from_cpus(n, (0..n).filter(|c| mask_bits >> (c % 64) & 1 == 1));
            place(&mut s, cpu % n, &mask, 0);
        }
        let t = warm(&mut s, 30);
        let idle = [CpuIdleType::NotIdle, CpuIdleType::Idle, CpuIdleType::NewlyIdle][itype as usize];
        let before: usize = s.rqs.iter().map(|r| r.nr_running as usize).sum();
        let domains: Vec<_> = s.topo.domains_of(dst).collect();
        for sd in domains {
            let mut env = s.lb_env(dst, sd, idle);
            let sds = s.update_sd_lb_stats(&mut env.clone());
            if let Some(b) = sds.busiest {
                // The local group is never the busiest.
                prop_assert_ne!(Some(b), sds.local);
                prop_assert!(!s.topo.group(b).span.test(dst));
            }
            if let Some(g) = s.sched_balance_find_src_group(&mut env) {
                prop_assert!(env.imbalance > 0, "a chosen group comes with a positive imbalance");
                prop_assert!(!s.topo.group(g).span.test(dst));
                let local = sds.local_stat.group_type;
                let busiest = sds.busiest_stat.group_type;
                // A group is only pulled from when it is at least as busy as the local one,
                // except for the forced cases (misfit, asym packing, imbalanced).
                let forced = matches!(busiest, GroupType::MisfitTask | GroupType::AsymPacking | GroupType::Imbalanced);
                prop_assert!(forced || busiest >= local, "busiest {busiest:?} local {local:?}");
            } else {
                prop_assert!(env.imbalance >= 0);
            }
            let r = s.sched_balance_rq(dst, sd, idle, t);
            let _ = r;
            for (p, task) in s.tasks.iter().enumerate() {
                if task.se.on_rq {
                    prop_assert!(task.allowed_on(task.cpu), "task {p} on disallowed cpu{}", task.cpu);
                }
            }
            if let Err(e) = s.check_invariants() {
                return Err(TestCaseError::fail(e.to_string()));
            }
        }
        let after: usize = s.rqs.iter().map(|r| r.nr_running as usize).sum();
        prop_assert_eq!(before, after, "tasks are conserved across migrations");
    }
}

/// The migration type and busiest group type of balancing `sd_level` of `dst`.
fn classify(
    s: &mut Sched,
    dst: usize,
    level: usize,
    idle: CpuIdleType,
) -> Option<(GroupType, MigrationType)> {
    let sd = s.topo.domains_of(dst).nth(level)?;
    let mut env = s.lb_env(dst, sd, idle);
    let sds = s.update_sd_lb_stats(&mut env.clone());
    s.sched_balance_find_src_group(&mut env)?;
    Some((sds.busiest_stat.group_type, env.migration_type))
}

#[test]
fn overloaded_groups_move_load() {
    // Three tasks on each CPU of the first core, an idle-but-busy rest: both MC groups
    // end up overloaded once everything runs two tasks.
    let mut s = sched_on("smt-mc-1s4c2t");
    let all = CpuMask::full(8);
    for cpu in 0..8 {
        place(&mut s, cpu, &all, 0);
        place(&mut s, cpu, &all, 0);
    }
    for _ in 0..4 {
        place(&mut s, 0, &all, 0);
        place(&mut s, 1, &all, 0);
    }
    warm(&mut s, 100);
    let (g, m) = classify(&mut s, 6, 1, CpuIdleType::NotIdle).expect("imbalance found");
    assert_eq!(g, GroupType::Overloaded);
    assert_eq!(m, MigrationType::Load);
}

#[test]
fn spare_capacity_in_an_llc_moves_tasks() {
    let mut s = sched_on("smt-mc-1s4c2t");
    let all = CpuMask::full(8);
    place(&mut s, 0, &all, 0);
    place(&mut s, 0, &all, 0);
    place(&mut s, 0, &all, 0);
    warm(&mut s, 50);
    let (_, m) = classify(&mut s, 6, 1, CpuIdleType::Idle).expect("imbalance found");
    assert_eq!(m, MigrationType::Task);
}

#[test]
fn overloaded_remote_node_with_spare_local_node_moves_utilization() {
    let mut s = sched_on("numa-2s4c2t");
    let all = CpuMask::full(16);
    for cpu in 0..8 {
        place(&mut s, cpu, &all, 0);
        place(&mut s, cpu, &all, 0);
    }
    warm(&mut s, 100);
    let (g, m) = classify(&mut s, 12, 2, CpuIdleType::Idle).expect("imbalance found");
    assert_eq!(g, GroupType::Overloaded);
    assert_eq!(m, MigrationType::Util);
}

#[test]
fn a_core_with_two_busy_siblings_is_smt_balanced() {
    let mut s = sched_on("smt-mc-1s4c2t");
    let all = CpuMask::full(8);
    place(&mut s, 0, &all, 0);
    place(&mut s, 1, &all, 0);
    warm(&mut s, 50);
    // CPU 4's core is idle; core 0-1 runs one task per sibling.
    let (g, m) = classify(&mut s, 4, 1, CpuIdleType::Idle).expect("imbalance found");
    assert_eq!(g, GroupType::SmtBalance);
    assert_eq!(m, MigrationType::Task);
}

#[test]
fn a_pinned_imbalance_marks_the_parent_group_imbalanced() {
    let mut s = sched_on("numa-2s4c2t");
    let n = 16;
    // Tasks pinned to CPU 0 and 1 only: node 1's CPUs cannot take them.
    let pin = CpuMask::from_cpus(n, [0, 1]);
    for _ in 0..6 {
        place(&mut s, 0, &pin, 0);
    }
    let t = warm(&mut s, 30);
    // Balancing MC on CPU 2 pulls what it can; the SMT child of CPU 0's... flag the parent.
    let mc = s.topo.domains_of(2).nth(1).unwrap();
    s.sched_balance_rq(2, mc, CpuIdleType::Idle, t);
    let parent = s.topo.domain(mc).parent.unwrap();
    let head = s.topo.domain(parent).groups[0];
    let flagged = s
        .topo
        .group_sgc(head)
        .imbalance
        .load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(
        flagged, 1,
        "LBF_SOME_PINNED with imbalance left sets sgc->imbalance"
    );
    let (g, m) = classify(&mut s, 10, 2, CpuIdleType::Idle).expect("imbalance found");
    assert_eq!(g, GroupType::Imbalanced);
    assert_eq!(m, MigrationType::Task);
}

#[test]
fn a_big_task_on_a_little_cpu_is_a_misfit() {
    let mut s = sched_on("tc2");
    let all = CpuMask::full(5);
    let p = place(&mut s, 3, &all, 0);
    // Run it alone on the LITTLE CPU long enough for its utilization to exceed 80% of 430.
    let t = warm(&mut s, 100);
    assert!(
        s.rqs[3].misfit_task_load > 0,
        "util {}",
        s.tasks[p].se.avg.util_avg
    );
    let (g, m) = classify(&mut s, 0, 1, CpuIdleType::Idle).expect("misfit found");
    assert_eq!(g, GroupType::MisfitTask);
    assert_eq!(m, MigrationType::Misfit);
    let _ = t;
}

#[test]
fn an_idle_big_cpu_pulls_a_running_misfit_through_the_stopper() {
    let mut s = sched_on("tc2");
    let all = CpuMask::full(5);
    let p = place(&mut s, 3, &all, 0);
    let t = warm(&mut s, 100);
    // The idle big CPU 0 balances PKG: the misfit runs alone, so nothing can be detached
    // and the balance asks CPU 3's stopper to push it.
    let pkg = s.topo.domains_of(0).nth(1).unwrap();
    let r = s.sched_balance_rq(0, pkg, CpuIdleType::Idle, t);
    assert_eq!(r.moved, 0);
    assert_eq!(r.active_balance, Some(3));
    // The stopper runs on CPU 3 with the misfit as its only fair task, and moves it.
    assert_eq!(s.rqs[3].nr_running, 1);
    assert_eq!(s.active_load_balance_cpu_stop(3, t), Some(p));
    assert_eq!(s.tasks[p].cpu, 0);
    assert_eq!(s.rqs[0].nr_running, 1);
    assert_eq!(s.rqs[3].nr_running, 0);
    assert_eq!(s.sd_stats[pkg].alb_pushed, 1);
    assert!(!s.lb.rq[3].active_balance);
}

#[test]
fn an_idle_high_priority_cpu_packs_a_task_from_a_low_priority_one() {
    // Four cores with ITMT: core 3 is the favoured (Turbo Boost Max) core.
    let mut opts = fairsim_topology::source::SpecOptions::new(
        "sockets=1,cores=4,threads=1",
        fairsim_topology::Arch::X86,
    );
    opts.itmt = Some("0-2:40,3:60".into());
    let mut s = sched_for(fairsim_topology::source::parse_spec(&opts).unwrap());
    let all = CpuMask::full(4);
    let p = place(&mut s, 0, &all, 0);
    let t = warm(&mut s, 20);
    let mc = s.topo.domains_of(3).next().unwrap();
    assert_eq!(
        s.topo.group(s.topo.domain(mc).groups[0]).asym_prefer_cpu,
        Some(3)
    );
    // From the idle favoured CPU, CPU 0's group is asym_packing and one task is to move.
    let (g, m) = classify(&mut s, 3, 0, CpuIdleType::Idle).expect("imbalance found");
    assert_eq!(g, GroupType::AsymPacking);
    assert_eq!(m, MigrationType::Task);
    // The task runs alone on CPU 0, so the balance asks CPU 0's stopper to push it.
    let r = s.sched_balance_rq(3, mc, CpuIdleType::Idle, t);
    assert_eq!(r.active_balance, Some(0));
    assert_eq!(s.active_load_balance_cpu_stop(0, t), Some(p));
    assert_eq!(s.tasks[p].cpu, 3);
    // The lower-priority CPUs see nothing to pack from the favoured one.
    assert!(classify(&mut s, 0, 0, CpuIdleType::Idle).is_none());
}
