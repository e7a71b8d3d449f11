//! Linux 3.9's balancer (LEGACY_LB) in the engine: workloads finish with invariants
//! checked, seed 002's sysbench placement follows the launching CPU under 3.9 and not with
//! the posting's patches, and `--launch-cpu random` varies by seed.

use crate::common;

use fairsim_balance::Features;
use fairsim_engine::world::Launch;
use fairsim_engine::NoiseModel;
use fairsim_workloads::run::run;

const K39: &str = "LEGACY_LB,LEGACY_SIS";
const PATCHES: &str = "LEGACY_LB,LEGACY_SIS,LB_RUNNABLE_AVG,LB_FORCE_BETTER_CPU,LB_IDLE_PULL_MULTI";

fn run_with(
    machine: &str,
    w: &str,
    features: &str,
    ms: u64,
    seed: u64,
    launch: Launch,
) -> fairsim_workloads::RunResult {
    let mut s = common::spec(machine, &[w], ms, seed);
    s.config.params.features = Features::parse(features).unwrap();
    s.config.launch = launch;
    s.config.noise = NoiseModel::DEFAULT;
    s.config.check_invariants = true;
    run(&s, &mut |_, _| {}).unwrap_or_else(|e| panic!("{machine} {w} {features}: {e}"))
}

/// Seconds each sysbench thread ran on the A15s (CPUs 0-1) and on the A7s.
fn split(r: &fairsim_workloads::RunResult) -> Vec<(u64, u64)> {
    let w = &r.outcome;
    (0..w.tasks().len())
        .filter(|&x| w.tasks()[x].name.starts_with("sysbench") && w.tasks()[x].parent.is_some())
        .map(|x| {
            let m = w.task_metrics(x);
            let big: u64 = m
                .cpu_ns
                .iter()
                .filter(|(c, _)| *c < 2)
                .map(|(_, n)| n)
                .sum();
            let little: u64 = m
                .cpu_ns
                .iter()
                .filter(|(c, _)| *c >= 2)
                .map(|(_, n)| n)
                .sum();
            (big, little)
        })
        .collect()
}

/// Every kernel of seed 002 runs hackbench, cyclictest and sysbench to the end from any
/// launching CPU with the invariants checked after every event. (A newly idle CPU once
/// went idle with a task queued during its 3.9 `idle_balance`, leaving the default
/// hackbench's parent asleep forever with LEGACY_LB from some launching CPUs: 3.9's
/// `__schedule` picks whatever is queued after `idle_balance`.)
#[test]
fn every_seed_002_kernel_finishes_its_workloads() {
    for features in ["LEGACY_LB", K39, PATCHES] {
        for seed in 1..=3 {
            for (w, ms) in [
                ("hackbench", 5_000),
                ("sysbench-cpu:threads=5,events=20", 5_000),
            ] {
                let r = run_with("tc2", w, features, ms, seed, Launch::Random);
                assert!(r.reports[0].finished, "{w} {features} seed {seed}");
                assert_eq!(r.outcome.live_tasks(), 0, "{w} {features} seed {seed}");
            }
        }
    }
}

/// One sysbench thread: under 3.9 its cluster follows the launching CPU (the parent goes
/// to the other cluster, its child back to the launcher's), so seeds split it between the
/// A15s and the A7s; with the posting's patches it always ends on an A15.
#[test]
fn a_lone_thread_lands_by_launch_cpu_under_3_9_and_on_an_a15_with_the_patches() {
    let w = "sysbench-cpu:threads=1,events=40,event=5ms";
    let mut on_little = 0;
    for seed in 1..=12 {
        let r = run_with("tc2", w, K39, 2_000, seed, Launch::Random);
        let s = split(&r);
        assert_eq!(s.len(), 1);
        // 3.9 never moves a lone task between clusters: all of it on one side.
        assert!(s[0].0 == 0 || s[0].1 == 0, "seed {seed}: {s:?}");
        if s[0].1 > 0 {
            on_little += 1;
        }
        let p = split(&run_with("tc2", w, PATCHES, 2_000, seed, Launch::Random));
        assert!(p[0].0 > 9 * p[0].1, "patches, seed {seed}: {p:?}");
    }
    assert!(
        (1..12).contains(&on_little),
        "3.9 on the A7s in {on_little} of 12 seeds"
    );
    // From CPU 0 the lone thread always ends on an A15 under 3.9.
    let r = run_with("tc2", w, K39, 2_000, 1, Launch::Cpu(0));
    assert_eq!(split(&r)[0].1, 0);
}
