//! Linux 4.15's slow path (LEGACY_FIND_IDLEST), seed 004's `SD_NUMA` clause on it and its
//! 6.12 successors (FIND_IDLEST_NUMA), on numa-2s4c2t (nodes of CPUs 0-7 and 8-15, cores
//! of CPUs 2k and 2k+1) and 2n-2s16c2t (nodes of 32 CPUs).

use crate::select_support;

use fairsim_balance::{Features, Sched, SchedParams, TaskId};
use fairsim_topology::{GroupId, SdFlags, SdId};
use select_support::*;

const MS: u64 = 1_000_000;

/// Seed 004's "before" kernel: 4.15 without the clause.
const BEFORE: &str = "LEGACY_FIND_IDLEST,NO_FIND_IDLEST_NUMA";
/// Seed 004's "after" kernel: 4.15 with the clause.
const AFTER: &str = "LEGACY_FIND_IDLEST";

fn machine(name: &str, features: &str) -> Sched {
    sched_with(
        name,
        SchedParams {
            features: Features::parse(features).expect("features"),
            ..SchedParams::default()
        },
    )
}

/// The NUMA domain of `cpu` and its groups as (local, remote).
fn numa_groups(s: &Sched, cpu: usize) -> (SdId, GroupId, GroupId) {
    let sd = s.topo.cpus[cpu].sd_numa.expect("numa domain");
    let groups = &s.topo.domain(sd).groups;
    assert_eq!(groups.len(), 2);
    let local = *groups
        .iter()
        .find(|&&g| s.topo.group(g).span.test(cpu))
        .unwrap();
    let remote = *groups.iter().find(|&&g| g != local).unwrap();
    (sd, local, remote)
}

/// The domain of `cpu` that spans `weight` CPUs.
fn domain_of_weight(s: &Sched, cpu: usize, weight: usize) -> SdId {
    s.topo
        .domains_of(cpu)
        .find(|&d| s.topo.domain(d).span_weight as usize == weight)
        .expect("domain")
}

/// Forks one child from a parent running alone on cpu0 (plus `extra` pinned hogs on the
/// CPUs listed) and returns the child's CPU.
fn fork_from_cpu0(s: &mut Sched, extra: &[usize]) -> usize {
    run_on(s, 0, MS);
    for &cpu in extra {
        run_on(s, cpu, MS);
    }
    settle_idle(s, MS);
    let c = s.create_task("child", 0, None, 0);
    s.wake_up_new_task_select(c, 0, 2 * MS)
}

#[test]
fn seed_004_fork_from_an_almost_idle_node() {
    // (a) One task on node 0, none on node 1. Scaled by the node's capacity, node 0's
    // runnable load is ~128 and node 1's is 0, within 4.15's imbalance of 256: without the
    // clause the avg_load test sends the child to the idle node, with it the child stays.
    let mut before = machine("numa-2s4c2t", BEFORE);
    let cpu = fork_from_cpu0(&mut before, &[]);
    assert!(cpu >= 8, "before: cpu{cpu}");
    let mut after = machine("numa-2s4c2t", AFTER);
    let cpu = fork_from_cpu0(&mut after, &[]);
    assert!(cpu < 8, "after: cpu{cpu}");
    // Within node 0, the lower levels still move the child off the parent's core.
    assert!(cpu >= 2, "after: cpu{cpu}");
    after.check_invariants().unwrap();
    // 6.12 on this machine (imb_numa_nr = 1) sends the first child away: the 4.15 port is
    // a different path, not a relabelled one.
    let mut now = machine("numa-2s4c2t", "");
    assert!(fork_from_cpu0(&mut now, &[]) >= 8);
}

#[test]
fn a_clearly_lighter_remote_node_wins_even_with_the_clause() {
    // (c) Four tasks on node 0 (runnable ~512 scaled) against an idle node 1: the remote
    // node is lighter by more than the imbalance, so both kernels go remote.
    for f in [BEFORE, AFTER] {
        let mut s = machine("numa-2s4c2t", f);
        let cpu = fork_from_cpu0(&mut s, &[2, 4, 6]);
        assert!(cpu >= 8, "{f}: cpu{cpu}");
    }
}

#[test]
fn local_group_rules() {
    // (c) The final comparisons of find_idlest_group, called on the NUMA domain for a
    // fork from cpu0 without the clause.
    let mut s = machine("numa-2s4c2t", BEFORE);
    run_on(&mut s, 0, MS);
    settle_idle(&mut s, MS);
    let (sd, _, remote) = numa_groups(&s, 0);
    let c = s.create_task("child", 0, None, 0);
    // Close runnable loads and a lower local avg_load than the remote one would need:
    // the remote node has no load at all, so it is the idlest.
    assert_eq!(
        s.find_idlest_group_v4_15(sd, c, 0, SdFlags::BALANCE_FORK),
        Some(remote)
    );
    // A task that ran on cpu8 and sleeps leaves blocked load there: the runnable loads
    // stay close (0 against ~128) but node 1's avg_load is now the higher by the
    // imbalance_scale ratio, so the local group keeps the task.
    sleeper_on(&mut s, 8, None, MS);
    assert_eq!(s.weighted_cpuload_v4_15(8), 0);
    assert!(s.cpu_load(8) > 0);
    assert_eq!(
        s.find_idlest_group_v4_15(sd, c, 0, SdFlags::BALANCE_FORK),
        None
    );

    // A remote node heavier by more than the imbalance never wins.
    let mut s = machine("numa-2s4c2t", BEFORE);
    for cpu in [8, 10, 12, 14] {
        run_on(&mut s, cpu, MS);
    }
    settle_idle(&mut s, MS);
    let (sd, _, _) = numa_groups(&s, 0);
    let c = s.create_task("child", 0, None, 0);
    assert_eq!(
        s.find_idlest_group_v4_15(sd, c, 0, SdFlags::BALANCE_FORK),
        None
    );
}

/// A scheduler with no tasks and a task `p` (util 200) whose CPUs of node 0 have
/// `local_util` of utilization and those of node 1 `remote_util`.
fn spare_machine(features: &str, local_util: u64, remote_util: u64) -> (Sched, TaskId) {
    let mut s = machine("numa-2s4c2t", features);
    for cpu in 0..16 {
        s.rqs[cpu].cfs.avg.avg.util_avg = if cpu < 8 { local_util } else { remote_util };
    }
    let p = s.create_task("p", 0, None, 0);
    s.tasks[p].se.avg.util_avg = 200;
    (s, p)
}

#[test]
fn most_spare_capacity_decides_exec_but_not_fork() {
    // (b) Node 0 nearly full (24 spare per CPU, below half the task's 200), node 1 idle.
    for f in [BEFORE, AFTER] {
        let (s, p) = spare_machine(f, 1000, 0);
        let (sd, local, remote) = numa_groups(&s, 0);
        assert_eq!(s.capacity_spare_wake_v4_15(0, p), 24);
        // Exec: the most spare capacity wins before the loads, and before the clause.
        assert_eq!(
            s.find_idlest_group_v4_15(sd, p, 0, SdFlags::BALANCE_EXEC),
            Some(remote),
            "{f}"
        );
        // Fork skips the spare-capacity test: no runnable load anywhere, so the loads
        // decide, and only the clause keeps the task local.
        let fork = s.find_idlest_group_v4_15(sd, p, 0, SdFlags::BALANCE_FORK);
        if f == AFTER {
            assert_eq!(fork, None);
        } else {
            assert_eq!(fork, Some(remote));
        }
        assert_ne!(local, remote);
    }
    // Local spare 74 (1024 - 950) against 1024 remote: 112 * 74 < 100 * 1024, remote.
    let (s, p) = spare_machine(AFTER, 950, 0);
    let (sd, _, remote) = numa_groups(&s, 0);
    assert_eq!(
        s.find_idlest_group_v4_15(sd, p, 0, SdFlags::BALANCE_EXEC),
        Some(remote)
    );
    // Local spare 924 against 1024: 112 * 924 > 102400, and 924 > 100, so local.
    let (s, p) = spare_machine(AFTER, 100, 0);
    let (sd, _, _) = numa_groups(&s, 0);
    assert_eq!(
        s.find_idlest_group_v4_15(sd, p, 0, SdFlags::BALANCE_EXEC),
        None
    );
    // Local spare 900 against 1024: 112 * 900 = 100800 <= 102400, so the remote node.
    let (s, p) = spare_machine(AFTER, 124, 0);
    let (sd, _, remote) = numa_groups(&s, 0);
    assert_eq!(
        s.find_idlest_group_v4_15(sd, p, 0, SdFlags::BALANCE_EXEC),
        Some(remote)
    );
}

#[test]
fn idlest_cpu_prefers_this_cpu_among_equal_loads_and_the_latest_idle() {
    let mut s = machine("numa-2s4c2t", AFTER);
    // Cores 0 (CPUs 0, 1) busy with equal loads.
    run_on(&mut s, 0, MS);
    run_on(&mut s, 1, MS);
    let mc = domain_of_weight(&s, 1, 8);
    let core0 = *s
        .topo
        .domain(mc)
        .groups
        .iter()
        .find(|&&g| s.topo.group(g).span.test(1))
        .unwrap();
    let c = s.create_task("child", 0, None, 0);
    assert_eq!(s.weighted_cpuload_v4_15(0), s.weighted_cpuload_v4_15(1));
    // 4.15: on a tie the CPU doing the balancing keeps the task (4.16 took cpu0).
    assert_eq!(s.find_idlest_group_cpu_v4_15(core0, c, 1), 1);
    assert_eq!(s.find_idlest_group_cpu_v4_15(core0, c, 0), 0);
    // A lighter CPU wins over this_cpu.
    run_on(&mut s, 1, MS);
    assert_eq!(s.find_idlest_group_cpu_v4_15(core0, c, 1), 0);

    // Node 1 idle, cpu11 idled last: the most recently idled CPU wins.
    settle_idle(&mut s, MS);
    sleeper_on(&mut s, 11, None, 3 * MS);
    let (_, _, remote) = numa_groups(&s, 0);
    assert_eq!(s.find_idlest_group_cpu_v4_15(remote, c, 0), 11);
}

#[test]
fn default_6_12_keeps_forks_local_and_no_find_idlest_numa_does_not() {
    // (d) is select_fork.rs, run with the default features (its imb_numa_nr test fails if
    // the has_spare rule is off). (e) On 2n-2s16c2t (imb_numa_nr 4) 6.12 keeps the first
    // children with the parent; without the NUMA rules the node with more idle CPUs
    // wins at once.
    let mut on = machine("2n-2s16c2t", "");
    let cpu = fork_from_cpu0(&mut on, &[]);
    assert!(cpu < 32, "default: cpu{cpu}");
    let mut explicit = machine("2n-2s16c2t", "FIND_IDLEST_NUMA,NO_LEGACY_FIND_IDLEST");
    assert_eq!(fork_from_cpu0(&mut explicit, &[]), cpu);
    let mut off = machine("2n-2s16c2t", "NO_FIND_IDLEST_NUMA");
    let cpu = fork_from_cpu0(&mut off, &[]);
    assert!(cpu >= 32, "NO_FIND_IDLEST_NUMA: cpu{cpu}");
    off.check_invariants().unwrap();
}
