//! Race mode's newidle storm: the total wall cost of concurrent newidle balances against
//! the number of OS threads running them at once (1, 2, and every count up to the host's
//! parallelism in powers of two), with seed 000's ILB features on and off.
//!
//! The machine is spr-2s56c2t in the fixed state of `fairsim_race::storm`: both threads
//! of every other core run a token with a cache-hot one queued behind it, the other 112
//! CPUs are idle. One iteration is one round: each idle CPU runs `sched_balance_newidle`
//! once, all threads at once over the shared runqueues, so the time per iteration is what
//! one wave of 112 newly idle CPUs costs the machine in wall time.

// criterion's macros generate public functions that cannot carry doc comments.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use fairsim::balance::{Features, SchedParams};
use fairsim::race::storm::NewidleStorm;
use fairsim::topology::source::preset;

fn thread_counts() -> Vec<usize> {
    let avail = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut v = vec![1, 2];
    let mut t = 4;
    while t <= avail {
        v.push(t);
        t *= 2;
    }
    v
}

fn newidle_storm(c: &mut Criterion) {
    let mut g = c.benchmark_group("newidle_storm spr-2s56c2t round of 112 newidle balances");
    g.sample_size(10);
    // NI_RANDOM is off in every set: the storm never pulls, so its success ratio would
    // fall to nothing and its dice would skip almost every balance, leaving little of the
    // scan to time.
    for (label, feats) in [
        ("default", "NO_NI_RANDOM"),
        ("ILB_UTIL", "NO_NI_RANDOM,ILB_SNAPSHOT,ILB_UTIL"),
        ("ILB_FAST", "NO_NI_RANDOM,ILB_SNAPSHOT,ILB_FAST"),
    ] {
        let params = SchedParams {
            features: Features::parse(feats).expect("features"),
            ..SchedParams::default()
        };
        let storm =
            NewidleStorm::new(preset("spr-2s56c2t").expect("preset"), params).expect("storm state");
        for threads in thread_counts() {
            g.bench_with_input(BenchmarkId::new(label, threads), &threads, |b, &t| {
                b.iter_custom(|iters| storm.run(t, iters).0);
            });
        }
    }
    g.finish();
}

criterion_group!(benches, newidle_storm);
criterion_main!(benches);
