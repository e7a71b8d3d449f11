//! How the engine's cost grows with the machine: the same per-CPU load (one nanosleep
//! loop per CPU, as seed 000 runs on spr-2s56c2t) on 16, 64, 224, 1024 and 4096 CPUs, and
//! the memory of the largest runs.
//!
//! Throughput is reported in emulated CPU-milliseconds per second of wall time, so a flat
//! curve means the cost per emulated CPU-second does not grow with the machine. The
//! kernel's own work does grow: a balance scans O(groups) and the domains get deeper, so
//! some growth is the scheduler's, not the engine's. Before the timed runs each size runs
//! once untimed and prints its events per emulated CPU-ms, so that the two can be told
//! apart (events per CPU-ms stays flat when the kernel's work per CPU does), and its peak
//! resident memory (`VmHWM`, reset through `/proc/self/clear_refs` before the run).
//!
//! The memory group builds 4096 CPUs with 65,536 tasks (16 per CPU) and runs it briefly,
//! reporting the peak beside the throughput; the bound is 1 GiB.

// criterion's macros generate public functions that cannot carry doc comments.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fairsim::engine::run::{RunSpec, DEFAULT_MEMORY_BUDGET};
use fairsim::engine::time::MS;
use fairsim::engine::{prepare, WorkloadSpec, WorldConfig};
use fairsim::topology::source::{parse_spec, SpecOptions};
use fairsim::topology::{Arch, BuildOptions};

/// A machine of `cpus` CPUs shaped like the seed machines: two sockets of SMT-2 cores
/// (one socket below 32 CPUs), one NUMA node per socket.
fn machine_spec(cpus: usize, workload: &str, ms: u64) -> RunSpec {
    let sockets = if cpus >= 32 { 2 } else { 1 };
    let cores = cpus / sockets / 2;
    let mut o = SpecOptions::new(
        &format!("{cpus},sockets={sockets},cores={cores},threads=2"),
        Arch::X86,
    );
    if sockets == 2 {
        o.numa_distance = Some("10,21;21,10".into());
    }
    RunSpec {
        machine: parse_spec(&o).expect("machine"),
        build: BuildOptions::default(),
        workloads: vec![WorkloadSpec::parse(workload).expect("workload")],
        config: WorldConfig {
            duration: ms * MS,
            ..WorldConfig::default()
        },
        memory_budget: DEFAULT_MEMORY_BUDGET,
    }
}

/// `field` of /proc/self/status in KiB.
fn status_kib(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `s` once, untimed, and prints its events per emulated CPU-ms and its peak memory.
fn probe(name: &str, s: &RunSpec) {
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let mut w = prepare(s).expect("world");
    w.run(&mut |_, _| {}).expect("run");
    let cpu_ms = s.machine.nr_cpus() as u64 * (s.config.duration / MS);
    let peak = status_kib("VmHWM:").filter(|_| reset);
    println!(
        "{name}: {} events, {:.0} events per emulated CPU-ms, peak RSS {}",
        w.events(),
        w.events() as f64 / cpu_ms.max(1) as f64,
        peak.map_or("unknown".into(), |k| format!("{} MiB", k / 1024))
    );
}

fn scaling(c: &mut Criterion) {
    let mut g = c.benchmark_group("scaling: one nanosleep loop per CPU");
    g.sample_size(10);
    // Shorter spans on bigger machines keep each size's samples within a minute.
    for (cpus, ms) in [(16, 200), (64, 100), (224, 50), (1024, 10), (4096, 4)] {
        let s = machine_spec(cpus, &format!("nanosleep:tasks={cpus},sleep=1us"), ms);
        let name = format!("{cpus} CPUs, {ms} ms emulated");
        probe(&name, &s);
        // Elements are emulated CPU-milliseconds: elements/s is CPU-ms per wall second.
        g.throughput(Throughput::Elements(cpus as u64 * ms));
        g.bench_function(&name, |b| {
            b.iter(|| {
                let mut w = prepare(&s).expect("world");
                w.run(&mut |_, _| {}).expect("run");
                w.events()
            })
        });
    }
    g.finish();
}

fn memory(c: &mut Criterion) {
    let mut g = c.benchmark_group("memory: 4096 CPUs, 65536 tasks");
    g.sample_size(10);
    let s = machine_spec(4096, "nanosleep:tasks=65536,sleep=1ms,launch=0,exec=0", 2);
    let name = "4096 CPUs, 65536 nanosleep tasks, 2 ms emulated";
    probe(name, &s);
    g.throughput(Throughput::Elements(4096 * 2));
    g.bench_function(name, |b| {
        b.iter(|| {
            let mut w = prepare(&s).expect("world");
            w.run(&mut |_, _| {}).expect("run");
            w.events()
        })
    });
    g.finish();
}

criterion_group!(benches, scaling, memory);
criterion_main!(benches);
