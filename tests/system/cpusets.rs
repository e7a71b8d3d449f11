//! Exclusive cpuset partitions in a run: each partition is a root domain of its own, so
//! a task never runs in two of them. Hackbench confined to a partition with `cpus=` stays
//! there, and hackbench left to the top cpuset, allowed everywhere but launched from CPU
//! 0, is never balanced into the partition, though it spreads there without one.

use crate::common;

use std::collections::BTreeMap;

use fairsim_topology::{parse_cpusets, CpuMask};
use fairsim_trace::{TraceConfig, TraceEvent};
use fairsim_workloads::run;

/// Runs the two hackbenches on numa-2s4c2t (socket 1 is CPUs 8-15) with `cpusets`, and
/// returns per pid the CPUs it ran on (every `sched_switch` that switched it in).
fn cpus_run_on(cpusets: &[&str]) -> (BTreeMap<u32, CpuMask>, Vec<CpuMask>) {
    let mut spec = common::spec(
        "numa-2s4c2t",
        &["hackbench:g=2,l=50", "hackbench:g=1,l=50,cpus=8-15"],
        300,
        3,
    );
    let lists: Vec<String> = cpusets.iter().map(|s| s.to_string()).collect();
    spec.cpusets = parse_cpusets(16, &lists, "--cpuset").unwrap();
    spec.config.check_invariants = true;
    spec.config.trace = Some(TraceConfig::events());
    let mut r = run(&spec, &mut |_, _| {}).unwrap();
    let rds = r.outcome.sched().topo.root_domains.clone();
    let trace = r.outcome.take_trace().expect("a trace");
    let mut ran: BTreeMap<u32, CpuMask> = BTreeMap::new();
    for rec in &trace.records {
        if let TraceEvent::Switch { next, .. } = rec.event {
            if next != 0 {
                ran.entry(next)
                    .or_insert_with(|| CpuMask::new(16))
                    .set(rec.cpu as usize);
            }
        }
    }
    (ran, rds)
}

#[test]
fn no_task_runs_in_two_partitions() {
    let (ran, rds) = cpus_run_on(&["8-15"]);
    assert_eq!(
        rds.iter().map(CpuMask::to_list).collect::<Vec<_>>(),
        vec!["0-7", "8-15"]
    );
    let top = &rds[0];
    let part = &rds[1];
    let mut in_top = 0;
    let mut in_part = 0;
    for (pid, cpus) in &ran {
        // Every task keeps to one root domain: the balancer pulls only within one, and
        // wakeups and forks place only within the waker's or the parent's domains.
        assert!(
            cpus.is_subset(top) || cpus.is_subset(part),
            "pid {pid} ran on {cpus}, across the partitions {top} and {part}"
        );
        if cpus.is_subset(part) {
            in_part += 1;
        } else {
            in_top += 1;
        }
    }
    // hackbench -g 1 is 40 tasks, -g 2 is 80, plus their main tasks.
    assert!(in_part >= 40, "{in_part} tasks ran in the partition");
    assert!(in_top >= 80, "{in_top} tasks ran in the top cpuset");
}

#[test]
fn without_partitions_the_unconfined_hackbench_spreads_over_both_sockets() {
    // The control of the test above: the same run on one root domain moves tasks across
    // the sockets, so the check there is one that a missing partition fails.
    let (ran, rds) = cpus_run_on(&[]);
    assert_eq!(rds.len(), 1);
    let socket0 = CpuMask::from_cpus(16, 0..8);
    let socket1 = CpuMask::from_cpus(16, 8..16);
    let crossing = ran
        .values()
        .filter(|c| c.intersects(&socket0) && c.intersects(&socket1))
        .count();
    assert!(crossing > 0, "no task ran on both sockets");
}
