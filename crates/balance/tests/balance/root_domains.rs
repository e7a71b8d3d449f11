//! Root domains of exclusive cpuset partitions: `rd->overloaded` is per root domain, so
//! one partition's overload lets no other partition's newidle balance proceed, and
//! balancing, which walks only a CPU's own domains, never moves a task across partitions,
//! even a task allowed everywhere.

use crate::lb_support;

use fairsim_balance::{CpuIdleType, Features, Sched, SchedParams};
use fairsim_topology::source::preset;
use fairsim_topology::{parse_cpusets, partition_sched_domains, BuildOptions};
use lb_support::{pile_on, tick_all};

/// numa-2s4c2t (CPUs 0-7 on socket 0, 8-15 on socket 1) with socket 1 an exclusive
/// partition: root domain 0 is the top cpuset's 0-7, root domain 1 is 8-15.
fn partitioned() -> Sched {
    let m = preset("numa-2s4c2t").unwrap();
    let sets = parse_cpusets(m.nr_cpus(), &["8-15".to_string()], "--cpuset").unwrap();
    let topo = partition_sched_domains(&m, BuildOptions::default(), &sets).unwrap();
    let params = SchedParams {
        // Without NI_RANDOM's coin toss a newidle balance is tried on every domain.
        features: Features::parse("NO_NI_RANDOM").unwrap(),
        seed: 7,
        ..SchedParams::default()
    };
    Sched::new(m, topo, params)
}

fn newidle_attempts(s: &Sched, cpu: usize) -> u64 {
    let newly = CpuIdleType::NewlyIdle as usize;
    s.topo
        .domains_of(cpu)
        .map(|sd| s.sd_stats[sd].lb_count[newly])
        .sum()
}

#[test]
fn one_partitions_overload_does_not_open_anothers_newidle_balance() {
    let mut s = partitioned();
    assert_eq!(s.topo.root_domain_of(0), 0);
    assert_eq!(s.topo.root_domain_of(8), 1);
    pile_on(&mut s, 0, 3, 0);
    assert!(s.lb.is_rd_overloaded(&s.topo, 0), "CPU 0 runs three tasks");
    assert!(
        !s.lb.is_rd_overloaded(&s.topo, 8),
        "no CPU of 8-15 runs two tasks"
    );
    // CPU 8 goes idle: its root domain is not overloaded, so sched_balance_newidle
    // returns before trying any domain.
    assert_eq!(s.schedule(8, 1_000_000), None);
    assert_eq!(newidle_attempts(&s, 8), 0);
    // CPU 2 shares CPU 0's root domain: it tries, and pulls.
    assert!(s.schedule(2, 1_000_000).is_some());
    assert!(newidle_attempts(&s, 2) > 0);
    s.check_invariants().unwrap();
}

#[test]
fn balancing_never_moves_a_task_across_partitions() {
    let mut s = partitioned();
    let tasks = pile_on(&mut s, 0, 12, 0);
    // Ticks on every CPU: periodic, nohz and newidle balancing for a second.
    let mut t = 0;
    for _ in 0..250 {
        t += s.tick_nsec;
        tick_all(&mut s, t);
        for &p in &tasks {
            assert!(
                s.tasks[p].cpu < 8,
                "task {p} reached CPU {}",
                s.tasks[p].cpu
            );
        }
    }
    // The twelve tasks spread over their own partition's eight CPUs.
    assert!((0..8).all(|c| s.rqs[c].curr.is_some()));
    assert!((8..16).all(|c| s.rqs[c].nr_running == 0));
}
