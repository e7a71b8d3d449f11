//! Fork balancing (the slow path) on numa-2s4c2t: the NUMA level keeps a child on the
//! parent's node while the imbalance is within `imb_numa_nr`, then spreads.

use crate::select_support;

use fairsim_balance::select::slow_path::adjust_numa_imbalance;
use select_support::*;

const MS: u64 = 1_000_000;

#[test]
fn adjust_numa_imbalance_rules() {
    // Few tasks on the destination: an imbalance up to NUMA_IMBALANCE_MIN is allowed.
    assert_eq!(adjust_numa_imbalance(2, 2, 2), 0);
    assert_eq!(adjust_numa_imbalance(3, 2, 2), 3);
    // Above imb_numa_nr the imbalance always stands.
    assert_eq!(adjust_numa_imbalance(1, 3, 2), 1);
}

/// Forks `n` children from a parent running on cpu0 of a two-node machine and returns
/// their CPUs, checking each against the has_spare NUMA rule of
/// sched_balance_find_dst_group: stay local when `adjust_numa_imbalance` forgives the
/// idle-CPU difference (`local running + 1 <= imb_numa_nr` and difference <= 2) or the
/// local node has at least as many idle CPUs; go remote otherwise.
fn fork_children(name: &str, n: usize) -> (Vec<usize>, u32) {
    let mut s = sched(name);
    let numa = s.topo.cpus[0].sd_numa.expect("numa");
    let imb = s.topo.domain(numa).imb_numa_nr;
    let node_size = s.nr_cpus() / 2;
    let node = |cpu: usize| usize::from(cpu >= node_size);
    run_on(&mut s, 0, MS);
    settle_idle(&mut s, MS);
    let mut running = [1usize, 0];
    let mut placed = Vec::new();
    for k in 0..n {
        let now = 2 * MS + k as u64 * 10_000;
        let idle = [node_size - running[0], node_size - running[1]];
        let forgiven = adjust_numa_imbalance(
            idle[0].abs_diff(idle[1]) as i64,
            running[0] as i64 + 1,
            i64::from(imb),
        ) == 0;
        let expect_local = forgiven || idle[0] >= idle[1];
        let c = s.create_task("child", 0, None, 0);
        let cpu = s.wake_up_new_task_select(c, 0, now);
        assert_eq!(
            node(cpu) == 0,
            expect_local,
            "child {k} on cpu{cpu}, running {running:?}, imb_numa_nr {imb}"
        );
        s.wake_up_new_task_activate(c, now);
        if s.rqs[cpu].curr.is_none() {
            s.schedule(cpu, now);
        }
        running[node(cpu)] += 1;
        placed.push(cpu);
    }
    // Every child got an idle CPU of its own.
    let mut sorted = placed.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), placed.len(), "{placed:?}");
    assert!(!placed.contains(&0));
    s.check_invariants().unwrap();
    (placed, imb)
}

#[test]
fn fork_stays_local_within_imb_numa_nr_then_spreads() {
    // 32 CPUs per node, one LLC each: imb_numa_nr = 32 >> 3 = 4.
    let (placed, imb) = fork_children("2n-2s16c2t", 12);
    assert_eq!(imb, 4);
    let node = |cpu: usize| usize::from(cpu >= 32);
    // Children 1 and 2 stay with the parent (3 running <= 4, idle difference <= 2);
    // child 3 makes the difference 3, and the remote node has more idle CPUs.
    assert_eq!(
        placed.iter().take(3).map(|&c| node(c)).collect::<Vec<_>>(),
        vec![0, 0, 1],
        "{placed:?}"
    );
    let remote = placed.iter().filter(|&&c| node(c) == 1).count();
    assert!(
        remote >= 5,
        "children must spread once past the threshold: {placed:?}"
    );
}

#[test]
fn small_nodes_spread_from_the_first_fork() {
    // 8 CPUs per node: imb_numa_nr = max(1, 8 >> 3) = 1, so parent + child already
    // exceed it and the first child goes to the idler node.
    let (placed, imb) = fork_children("numa-2s4c2t", 8);
    assert_eq!(imb, 1);
    assert!(placed[0] >= 8, "{placed:?}");
}

#[test]
fn fork_with_a_disallowed_remote_node_stays_local() {
    let mut s = sched("numa-2s4c2t");
    run_on(&mut s, 0, MS);
    settle_idle(&mut s, MS);
    let n = s.nr_cpus();
    let node0 = fairsim_topology::CpuMask::from_cpus(n, 0..8);
    for k in 0..6u64 {
        let now = 2 * MS + k * 10_000;
        let c = s.create_task("child", 0, Some(node0.clone()), 0);
        let cpu = s.wake_up_new_task_select(c, 0, now);
        assert!(cpu < 8, "child {k} on cpu{cpu}");
        s.wake_up_new_task_activate(c, now);
        if s.rqs[cpu].curr.is_none() {
            s.schedule(cpu, now);
        }
    }
    s.check_invariants().unwrap();
}

#[test]
fn overloaded_local_node_pushes_forks_away() {
    let mut s = sched("numa-2s4c2t");
    // Two tasks on every CPU of node 0: the local group is overloaded, node 1 has spare.
    for cpu in 0..8 {
        run_on(&mut s, cpu, MS);
        run_on(&mut s, cpu, MS);
    }
    settle_idle(&mut s, MS);
    let c = s.create_task("child", 0, None, 0);
    let cpu = s.wake_up_new_task_select(c, 0, 2 * MS);
    assert!(cpu >= 8, "cpu{cpu}");
}

#[test]
fn exec_moves_a_task_that_shares_its_cpu_to_an_idle_one() {
    // A child was just forked behind its running parent on CPU 0 (pinned while forking,
    // so fork balancing kept it there); the parent calls execve.
    let mut s = sched("numa-2s4c2t");
    run_on(&mut s, 0, MS);
    let c = s.create_task(
        "child",
        0,
        Some(fairsim_topology::CpuMask::single(16, 0)),
        0,
    );
    s.wake_up_new_task_select(c, 0, MS);
    s.wake_up_new_task_activate(c, MS);
    s.set_cpus_allowed(c, fairsim_topology::CpuMask::full(16));
    let p = s.rqs[0].curr.unwrap();
    s.set_cpus_allowed(p, fairsim_topology::CpuMask::full(16));
    let dest = s
        .sched_exec(0, MS)
        .expect("the parent moves to an idle CPU");
    // The stopper took CPU 0 from it; the child stays there.
    assert_ne!(dest, 0);
    assert_eq!(s.tasks[p].cpu, dest);
    assert_eq!(s.rqs[dest].nr_running, 1);
    assert_eq!(s.rqs[0].nr_running, 1);
    assert!(s.rqs[0].curr.is_none() && s.rqs[0].need_resched);
    s.check_invariants().unwrap();
}
