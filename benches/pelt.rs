//! PELT arithmetic benchmarks: the cost of one `___update_load_sum` +
//! `___update_load_avg` pair, of emulating one second of a 50% duty-cycle task, and of
//! the load-tracking bookkeeping steps the cost table charges (`bookkeeping/*`).
//!
//! The `bookkeeping/*` figures are the basis of the cost table's `pelt_update_se`,
//! `pelt_update_cfs_rq` and `util_est_*` entries: they time fairsim's ports, which run
//! the kernel functions' integer operations on cache lines the caller has just touched,
//! as `enqueue_task_fair` and `dequeue_task_fair` find them.

// criterion's macros generate public functions that cannot carry doc comments.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use fairsim::pelt::sim::{simulate, Pattern, SimParams};
use fairsim::pelt::{
    update_cfs_rq_load_avg, update_load_avg, update_load_avg_se, update_load_sum, util_est_dequeue,
    util_est_enqueue, util_est_update, CfsRqAvg, CfsRqInputs, SchedAvg, SeInputs, UtilEstMode,
    UTIL_AVG_UNCHANGED,
};
use std::hint::black_box;

fn update_pair(c: &mut Criterion) {
    c.bench_function("pelt/update_load_sum+avg (4 ms steps)", |b| {
        let mut sa = SchedAvg {
            last_update_time: 1 << 20,
            ..SchedAvg::default()
        };
        let mut now = 1u64 << 20;
        b.iter(|| {
            now += 4_000_000;
            if update_load_sum(black_box(now), &mut sa, 1, 1, true) {
                update_load_avg(&mut sa, 1024);
            }
            black_box(sa.util_avg)
        });
    });
}

fn duty_cycle(c: &mut Criterion) {
    let params = SimParams::new(
        Pattern::duty(8_000_000, 8_000_000).expect("valid pattern"),
        1_000_000_000,
    );
    c.bench_function("pelt/simulate 1s 50% duty (8ms/8ms, HZ=250)", |b| {
        b.iter(|| black_box(simulate(black_box(&params)).expect("valid params").len()));
    });
}

/// The steps between two updates of one entity: hackbench's messaging tasks run and sleep
/// for a few to a few hundred microseconds, so most updates stay inside one 1024-us PELT
/// period and some cross one or more. The cycle below crosses a period boundary on
/// roughly one update in four.
const STEPS_NS: [u64; 8] = [
    3_000, 11_000, 40_000, 7_000, 160_000, 23_000, 650_000, 90_000,
];

fn se_inputs() -> SeInputs {
    SeInputs {
        weight: 1024,
        on_rq: true,
        runnable: 1,
        running: true,
    }
}

fn bookkeeping(c: &mut Criterion) {
    let mut g = c.benchmark_group("bookkeeping");
    g.bench_function("__update_load_avg_se (mixed steps)", |b| {
        let mut se = SchedAvg {
            last_update_time: 1 << 20,
            util_avg: 300,
            ..SchedAvg::default()
        };
        let mut now = 1u64 << 20;
        let mut i = 0usize;
        b.iter(|| {
            now += STEPS_NS[i % STEPS_NS.len()];
            i += 1;
            black_box(update_load_avg_se(
                black_box(now),
                &mut se,
                se_inputs(),
                true,
            ))
        });
    });
    g.bench_function("update_cfs_rq_load_avg (mixed steps)", |b| {
        let mut cfs = CfsRqAvg::default();
        cfs.avg.last_update_time = 1 << 20;
        let mut now = 1u64 << 20;
        let mut i = 0usize;
        let inp = CfsRqInputs {
            load: 2048,
            runnable: 2,
            running: true,
        };
        b.iter(|| {
            now += STEPS_NS[i % STEPS_NS.len()];
            i += 1;
            black_box(update_cfs_rq_load_avg(black_box(now), &mut cfs, inp))
        });
    });
    g.bench_function("util_est_enqueue + util_est_dequeue", |b| {
        let mut cfs = SchedAvg::default();
        let p = SchedAvg {
            util_avg: 200,
            util_est: 180,
            ..SchedAvg::default()
        };
        b.iter(|| {
            util_est_enqueue(&mut cfs, black_box(&p), UtilEstMode::V6_12);
            util_est_dequeue(&mut cfs, black_box(&p), UtilEstMode::V6_12);
            black_box(cfs.util_est)
        });
    });
    for (name, mode) in [
        ("util_est_update (6.12)", UtilEstMode::V6_12),
        (
            "util_est_update (v4.17 form)",
            UtilEstMode::Legacy { fastup: false },
        ),
    ] {
        g.bench_function(name, |b| {
            let mut i = 0u64;
            let mut p = SchedAvg::default();
            b.iter(|| {
                // A new sample each time (the flag cleared, as an update of util_avg
                // does), alternating up and down so every branch of the EWMA runs.
                i += 1;
                p.util_avg = 150 + (i & 7) * 40;
                p.runnable_avg = p.util_avg;
                p.util_est &= !UTIL_AVG_UNCHANGED;
                util_est_update(&mut p, true, 1024, black_box(mode));
                black_box(p.util_est)
            });
        });
    }
    g.finish();
}

criterion_group!(benches, update_pair, duty_cycle, bookkeeping);
criterion_main!(benches);
