//! Peak memory beside throughput at the largest size fairsim is asked to hold: 4096 CPUs
//! (two sockets of SMT-2 cores, one node each) with 65,536 tasks, 16 nanosleep loops per
//! CPU, each sleeping 100 ms between wakeups so that the run is about holding the state,
//! not about the event rate.
//!
//! The large size is measured once and printed, not sampled by criterion: its launch (the
//! launcher forks 65,536 tasks one by one) takes minutes of wall time. The line gives the
//! peak resident memory (`VmHWM`, reset through `/proc/self/clear_refs` before the run),
//! the engine's own estimate of the run (`estimate_run_memory`, what `prepare` checks
//! against the memory budget), and the emulated seconds per wall second of the steady
//! state. Criterion samples a 256-CPU, 4096-task run of the same shape, so that a change
//! in the per-task or per-CPU state shows in a quick run too.

// criterion's macros generate public functions that cannot carry doc comments.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fairsim::des::time::MS;
use fairsim::engine::world::RtState;
use fairsim::engine::WorldConfig;
use fairsim::topology::source::{parse_spec, SpecOptions};
use fairsim::topology::{Arch, BuildOptions};
use fairsim::workloads::run::{estimate_run_memory, RunSpec, DEFAULT_MEMORY_BUDGET};
use fairsim::workloads::{prepare, WorkloadSpec};

/// `cpus` CPUs in two SMT-2 sockets, one node each, running `tasks` nanosleep loops.
fn spec(cpus: usize, tasks: usize) -> RunSpec {
    let mut o = SpecOptions::new(
        &format!("{cpus},sockets=2,cores={},threads=2", cpus / 4),
        Arch::X86,
    );
    o.numa_distance = Some("10,21;21,10".into());
    RunSpec {
        cpusets: Vec::new(),
        machine: parse_spec(&o).expect("machine").into(),
        build: BuildOptions::default(),
        workloads: vec![WorkloadSpec::parse(&format!(
            "nanosleep:tasks={tasks},sleep=100ms,launch=0,exec=0"
        ))
        .expect("workload")],
        config: WorldConfig {
            duration: 3_600 * 1_000 * MS,
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

/// Builds the world, launches every loop, then runs `span` ns of emulated time: returns
/// the steady state's wall time and the emulated time the launch took.
fn run(s: &RunSpec, tasks: usize, span: u64) -> (Duration, u64) {
    let mut w = prepare(s).expect("world");
    while w.live_tasks() != tasks || w.tasks()[0].state != RtState::Exited {
        assert!(w.step().expect("run"), "the run ended during the launch");
    }
    let start = w.now().0;
    let t0 = Instant::now();
    while w.now().0 < start + span && w.step().expect("run") {}
    (t0.elapsed(), start)
}

fn memory(c: &mut Criterion) {
    let (cpus, tasks, span) = (4096, 65_536, 200 * MS);
    let s = spec(cpus, tasks);
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let t0 = Instant::now();
    let (wall, launched) = run(&s, tasks, span);
    let peak = status_kib("VmHWM:").filter(|_| reset);
    println!(
        "{cpus} CPUs, {tasks} tasks: peak RSS {}, engine estimate {} MiB, launch {:.0} ms emulated, steady state {:.3} emulated s per wall s, {:.0} s wall in all",
        peak.map_or("unknown".into(), |k| format!("{} MiB", k / 1024)),
        estimate_run_memory(&s) >> 20,
        launched as f64 / 1e6,
        (span as f64 / 1e9) / wall.as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
    let mut g = c.benchmark_group("memory: 16 nanosleep loops per CPU, 100 ms sleeps");
    g.sample_size(10);
    let (cpus, tasks, span) = (256, 4096, 200 * MS);
    let s = spec(cpus, tasks);
    g.throughput(Throughput::Elements(span / MS));
    g.bench_function(
        format!("{cpus} CPUs, {tasks} tasks, 200 ms emulated"),
        |b| b.iter_custom(|iters| (0..iters).map(|_| run(&s, tasks, span).0).sum()),
    );
    g.finish();
}

criterion_group!(benches, memory);
criterion_main!(benches);
