//! Engine throughput: emulated seconds per wall second and events per second, on the seed
//! scenarios: schbench on 2s24c2t (seed 001), the nanosleep stress on spr-2s56c2t with
//! 224 tasks (seed 000) with the default features and with `ILB_FAST`, and pinned one per
//! CPU (the pinned form keeps every CPU busy with its own loop, which is the load the real
//! stress puts on the machine once wakeup placement spreads the tasks), and a slice of
//! seed 000's hackbench (`-g 4 -f 28 -s 100`, 200 loops instead of 200,000: the same
//! event mix, about a thousandth of the run, so that criterion can sample it).
//!
//! Each benchmark runs a fixed span of emulated time; criterion's time per iteration
//! divided into that span is the emulated-seconds-per-wall-second figure, and the
//! reported element throughput is events per second.

// criterion's macros generate public functions that cannot carry doc comments.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fairsim::balance::Features;
use fairsim::des::time::MS;
use fairsim::engine::WorldConfig;
use fairsim::topology::source::preset;
use fairsim::topology::BuildOptions;
use fairsim::workloads::run::{RunSpec, DEFAULT_MEMORY_BUDGET};
use fairsim::workloads::{prepare, WorkloadSpec};

fn spec(machine: &str, workload: &str, ms: u64) -> RunSpec {
    RunSpec {
        cpusets: Vec::new(),
        machine: preset(machine).expect("preset").into(),
        build: BuildOptions::default(),
        workloads: vec![WorkloadSpec::parse(workload).expect("workload")],
        config: WorldConfig {
            duration: ms * MS,
            ..WorldConfig::default()
        },
        memory_budget: DEFAULT_MEMORY_BUDGET,
    }
}

/// [`spec`] with the scheduler features `features` (a `--features` list).
fn with_features(mut s: RunSpec, features: &str) -> RunSpec {
    s.config.params.features = Features::parse(features).expect("features");
    s
}

fn events_of(s: &RunSpec) -> u64 {
    let mut w = prepare(s).expect("world");
    w.run(&mut |_, _| {}).expect("run");
    w.events()
}

fn bench_scenario(c: &mut Criterion, name: &str, s: RunSpec) {
    let mut g = c.benchmark_group("engine");
    g.sample_size(10);
    g.throughput(Throughput::Elements(events_of(&s)));
    g.bench_function(name, |b| {
        b.iter(|| {
            let mut w = prepare(&s).expect("world");
            w.run(&mut |_, _| {}).expect("run");
            w.events()
        })
    });
    g.finish();
}

fn schbench(c: &mut Criterion) {
    bench_scenario(
        c,
        "schbench m=6 t=24 c=30ms s=30ms, 2s24c2t, 1 s emulated",
        spec("2s24c2t", "schbench:m=6,t=24,c=30ms,s=30ms", 1_000),
    );
}

fn nanosleep(c: &mut Criterion) {
    bench_scenario(
        c,
        "nanosleep 224 x 1us, spr-2s56c2t, 100 ms emulated",
        spec("spr-2s56c2t", "nanosleep:tasks=224,sleep=1us", 100),
    );
    bench_scenario(
        c,
        "nanosleep 224 x 1us ILB_FAST, spr-2s56c2t, 100 ms emulated",
        with_features(
            spec("spr-2s56c2t", "nanosleep:tasks=224,sleep=1us", 100),
            "ILB_SNAPSHOT,ILB_FAST",
        ),
    );
    bench_scenario(
        c,
        "nanosleep 224 x 1us pinned, spr-2s56c2t, 100 ms emulated",
        spec("spr-2s56c2t", "nanosleep:tasks=224,sleep=1us,pin", 100),
    );
}

fn hackbench(c: &mut Criterion) {
    // The run ends when hackbench does: the duration is only its bound.
    bench_scenario(
        c,
        "hackbench g=4 l=200 f=28 s=100, spr-2s56c2t, until done",
        spec("spr-2s56c2t", "hackbench:g=4,l=200,f=28,s=100", 60_000),
    );
}

criterion_group!(benches, schbench, nanosleep, hackbench);
criterion_main!(benches);
