//! PELT arithmetic benchmarks: the cost of one `___update_load_sum` +
//! `___update_load_avg` pair, and of emulating one second of a 50% duty-cycle task.

// criterion's macros generate public functions that cannot carry doc comments.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use fairsim::pelt::sim::{simulate, Pattern, SimParams};
use fairsim::pelt::{update_load_avg, update_load_sum, SchedAvg};
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

criterion_group!(benches, update_pair, duty_cycle);
criterion_main!(benches);
