//! Wall cost of `update_sd_lb_stats` against the number of groups in the domain (8 to 512),
//! with the seed-000 features on and off, so the scan-cost scaling can be read off a plot.
//!
//! The machine is one socket of N cores with 2 threads (the MC domain has N groups); one
//! core in eight runs a task and CPU 1 runs two, so balancing finds something to pull.
//!
//! - `update_sd_lb_stats newidle MC`: the statistics of CPU 2's MC domain (no
//!   migration), as a newidle balance on a big LLC computes them. Tasks are pinned, so
//!   the state is the same at every iteration.
//! - `sched_balance_newidle`: CPU 2's whole newidle balance, domain by domain until it
//!   pulls CPU 1's second task (the only one allowed to move), with `NI_RANDOM`'s dice on
//!   and off. Each iteration starts from a copy of the same state; the copy is not timed.
//!
//! A periodic balance first fills in the ILB snapshot and scan depth.

// criterion's macros generate public functions that cannot carry doc comments.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use fairsim::balance::{BalanceAct, BalanceScan, CpuIdleType, Features, Sched, SchedParams};
use fairsim::topology::source::{parse_spec, SpecOptions};
use fairsim::topology::{build_sched_domains, Arch, BuildOptions, CpuMask};

fn machine(cores: usize, features: Features) -> Sched {
    machine_with(cores, features, false)
}

/// The bench machine; with `movable`, CPU 1's second task may run anywhere.
fn machine_with(cores: usize, features: Features, movable: bool) -> Sched {
    let m = parse_spec(&SpecOptions::new(
        &format!("sockets=1,cores={cores},threads=2"),
        Arch::X86,
    ))
    .expect("spec");
    let opts = BuildOptions {
        shared_all_non_numa: true,
        relax_domain_level: None,
    };
    let topo = build_sched_domains(&m, opts).expect("domains");
    let params = SchedParams {
        features,
        ..SchedParams::default()
    };
    let mut s = Sched::new(m, topo, params);
    let n = s.nr_cpus();
    let place = |s: &mut Sched, cpu: usize| {
        let p = s.create_task("t", 0, Some(CpuMask::single(n, cpu)), cpu);
        s.wake_up_new_task_select(p, cpu, 0);
        s.wake_up_new_task_activate(p, 0);
        if s.rqs[cpu].curr.is_none() {
            s.schedule(cpu, 0);
        }
    };
    for core in (0..cores).step_by(8) {
        place(&mut s, core * 2 + 1);
    }
    place(&mut s, 1);
    if movable {
        let p = s.tasks.len() - 1;
        s.set_cpus_allowed(p, CpuMask::full(n));
    }
    // A periodic idle balance (CPU 0 is the first idle CPU of its group) fills in the
    // snapshot and the scan depth.
    let mc = mc_domain(&s, 0);
    let _ = s.sched_balance_rq(0, mc, CpuIdleType::Idle, 1_000_000);
    let sh = s.topo.domain(mc).shared.expect("sd_share on MC");
    assert!(
        s.topo.shared[sh]
            .total_capacity
            .load(std::sync::atomic::Ordering::Relaxed)
            > 0
    );
    s
}

/// The MC domain of `cpu`.
fn mc_domain(s: &Sched, cpu: usize) -> usize {
    s.topo
        .domains_of(cpu)
        .find(|&d| s.topo.domain(d).name == "MC")
        .expect("MC domain")
}

fn update_sd_lb_stats(c: &mut Criterion) {
    let mut g = c.benchmark_group("update_sd_lb_stats newidle MC");
    g.sample_size(20);
    let variants = [
        ("baseline", "NO_NI_RANDOM,ILB_SNAPSHOT"),
        ("ILB_UTIL", "NO_NI_RANDOM,ILB_SNAPSHOT,ILB_UTIL"),
        ("ILB_FAST", "NO_NI_RANDOM,ILB_SNAPSHOT,ILB_FAST"),
    ];
    for groups in [8usize, 32, 128, 512] {
        for (label, feats) in variants {
            let mut s = machine(groups, Features::parse(feats).expect("features"));
            let mc = mc_domain(&s, 2);
            g.bench_with_input(BenchmarkId::new(label, groups), &groups, |b, _| {
                b.iter(|| {
                    let mut env = s.lb_env(2, mc, CpuIdleType::NewlyIdle);
                    let sds = s.update_sd_lb_stats(&mut env);
                    std::hint::black_box(sds.busiest)
                })
            });
        }
    }
    g.finish();
}

fn sched_balance_newidle(c: &mut Criterion) {
    let mut g = c.benchmark_group("sched_balance_newidle");
    g.sample_size(20);
    let variants = [
        ("baseline", "NO_NI_RANDOM,ILB_SNAPSHOT"),
        ("NI_RANDOM", "NI_RANDOM,ILB_SNAPSHOT"),
        ("ILB_UTIL", "NO_NI_RANDOM,ILB_SNAPSHOT,ILB_UTIL"),
        ("ILB_FAST", "NO_NI_RANDOM,ILB_SNAPSHOT,ILB_FAST"),
    ];
    for groups in [8usize, 32, 128, 512] {
        for (label, feats) in variants {
            let mut s = machine_with(groups, Features::parse(feats).expect("features"), true);
            assert!(s.lb.is_rd_overloaded(&s.topo, 1), "CPU 1 runs two tasks");
            g.bench_with_input(BenchmarkId::new(label, groups), &groups, |b, _| {
                // By reference, so that dropping the copy is not timed either.
                b.iter_batched_ref(
                    || {
                        // A new throw of NI_RANDOM's dice for every copy.
                        s.lb.rnd[2].next_u32();
                        s.clone()
                    },
                    |s| std::hint::black_box(s.sched_balance_newidle_inline(2, 2_000_000)),
                    BatchSize::LargeInput,
                )
            });
        }
    }
    g.finish();
}

criterion_group!(benches, update_sd_lb_stats, sched_balance_newidle);
criterion_main!(benches);
