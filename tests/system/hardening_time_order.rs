//! Hardening: zero-cost kernel work keeps virtual time in order.
//!
//! A path that takes "the waker's `kernel_until`" as the time its work ends is right only
//! when that work took time: a charge of 0 ns (a cost set to 0, or a small mean that the
//! noise draws as 0) leaves an older `kernel_until` behind, and an event scheduled there
//! lands in the past. These runs used to stop with "time went backwards".

use crate::common;

use fairsim_engine::{CostTable, NoiseModel};
use fairsim_workloads::run;

/// The run of the hardening issue's item 3: `fairsim run --topology dies-1s2d2c1t
/// -w schbench:m=2,t=4,c=1ms,s=1ms --duration 30ms --seed S --cost wakeup=0
/// --cost remote_rq_lock=0`, with the command line's default noise.
fn schbench_spec(seed: u64, overrides: &[&str]) -> fairsim_workloads::run::RunSpec {
    let mut s = common::spec("dies-1s2d2c1t", &["schbench:m=2,t=4,c=1ms,s=1ms"], 30, seed);
    s.config.noise = NoiseModel::DEFAULT;
    let mut cost = CostTable::default();
    for o in overrides {
        cost.apply(o).unwrap();
    }
    s.config.cost = cost;
    s
}

#[test]
fn zero_wakeup_and_remote_lock_costs_keep_time_in_order_for_25_seeds() {
    for seed in 540..565 {
        let s = schbench_spec(seed, &["wakeup=0ns", "remote_rq_lock=0ns"]);
        let r = run(&s, &mut |_, _| {}).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(
            r.outcome.now().0,
            s.config.duration,
            "seed {seed} ran to its end"
        );
    }
}

#[test]
fn a_one_ns_cost_that_the_noise_draws_as_zero_keeps_time_in_order() {
    // A 1 ns mean can be drawn as 0 ns of work: the same stale base as a cost of 0.
    for seed in 540..550 {
        let s = schbench_spec(seed, &["wakeup=1ns", "remote_rq_lock=1ns"]);
        run(&s, &mut |_, _| {}).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    }
}

#[test]
fn every_cost_zero_runs_every_workload_with_invariants_checked() {
    let all_zero: Vec<String> = CostTable::NAMES
        .iter()
        .map(|n| format!("{n}=0ns"))
        .collect();
    for w in [
        "schbench:m=2,t=4,c=1ms,s=1ms",
        "hackbench:g=1,l=20,pipe",
        "hackbench:g=1,l=20",
        "nanosleep:tasks=6,sleep=10us",
        "sysbench-cpu:threads=5,events=20",
    ] {
        for seed in 1..4 {
            let mut s = common::spec("dies-1s2d2c1t", &[w], 10, seed);
            s.config.noise = NoiseModel::DEFAULT;
            s.config.check_invariants = true;
            for o in &all_zero {
                s.config.cost.apply(o).unwrap();
            }
            run(&s, &mut |_, _| {}).unwrap_or_else(|e| panic!("{w} seed {seed}: {e}"));
        }
    }
}
