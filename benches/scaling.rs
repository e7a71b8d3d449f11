//! How the engine's cost grows with the machine: the same per-CPU load (one nanosleep
//! loop per CPU, as seed 000 runs on spr-2s56c2t) on 16, 64, 224, 1024 and 4096 CPUs with
//! SMT-2 cores, and on 64, 224 and 1024 CPUs without SMT.
//!
//! The 4096-CPU size is measured once (its printed line), not sampled by criterion: its
//! launch alone takes a minute of wall time. Only the steady state is timed: each iteration launches the loops untimed (the
//! launcher forks them one by one, 20 us each, so 4096 CPUs take 98 ms of emulated
//! launch) and times what follows. Throughput is reported in emulated CPU-milliseconds
//! per second of wall time, so a flat curve means the cost per emulated CPU-second does
//! not grow with the machine. The kernel's own work does grow: a balance scans O(groups)
//! and the domains get deeper, so some growth is the scheduler's, not the engine's.
//! Before the timed runs each size runs once and prints its events per emulated CPU-ms,
//! so that the two can be told apart (events per CPU-ms stays flat when the kernel's work
//! per CPU does), and its peak resident memory (`VmHWM`, reset through
//! `/proc/self/clear_refs` before the run).

// criterion's macros generate public functions that cannot carry doc comments.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fairsim::des::time::MS;
use fairsim::engine::world::RtState;
use fairsim::engine::WorldConfig;
use fairsim::topology::source::{parse_spec, SpecOptions};
use fairsim::topology::{Arch, BuildOptions};
use fairsim::workloads::run::{RunSpec, DEFAULT_MEMORY_BUDGET};
use fairsim::workloads::{prepare, WorkloadSpec};

/// A machine of `cpus` CPUs shaped like the seed machines: two sockets of cores with
/// `threads` hardware threads each (one socket below 32 CPUs), one NUMA node per socket.
fn machine_spec(cpus: usize, threads: usize, workload: &str, duration_ns: u64) -> RunSpec {
    let sockets = if cpus >= 32 { 2 } else { 1 };
    let cores = cpus / sockets / threads;
    let mut o = SpecOptions::new(
        &format!("{cpus},sockets={sockets},cores={cores},threads={threads}"),
        Arch::X86,
    );
    if sockets == 2 {
        o.numa_distance = Some("10,21;21,10".into());
    }
    RunSpec {
        cpusets: Vec::new(),
        machine: parse_spec(&o).expect("machine").into(),
        build: BuildOptions::default(),
        workloads: vec![WorkloadSpec::parse(workload).expect("workload")],
        config: WorldConfig {
            duration: duration_ns,
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

/// Launches the loops untimed (until the launcher has forked them all and exited, then
/// 10 ms more), then runs `span` ns of emulated time and returns its wall time, the events
/// it took and when the launch ended.
fn steady(s: &RunSpec, tasks: usize, span: u64) -> (Duration, u64, u64) {
    let mut w = prepare(s).expect("world");
    // Task 0 is the launcher: once it has exited, every loop is forked.
    while w.live_tasks() != tasks || w.tasks()[0].state != RtState::Exited {
        assert!(w.step().expect("run"), "the run ended during the launch");
    }
    let launched = w.now().0;
    while w.now().0 < launched + 10 * MS {
        w.step().expect("run");
    }
    let (start, events) = (w.now().0, w.events());
    let t0 = Instant::now();
    while w.now().0 < start + span && w.step().expect("run") {}
    (t0.elapsed(), w.events() - events, launched)
}

fn scaling(c: &mut Criterion) {
    let mut g = c.benchmark_group("scaling: one nanosleep loop per CPU, steady state");
    g.sample_size(10);
    // SMT-2 machines like the seeds', and machines without SMT, where the scheduler's
    // SMT paths are off (`sched_smt_active()` false) and each CPU is its own core.
    let sizes = [
        (16, 200, 2),
        (64, 100, 2),
        (224, 50, 2),
        (1024, 20, 2),
        (4096, 10, 2),
        (64, 100, 1),
        (224, 50, 1),
        (1024, 20, 1),
    ];
    for (cpus, ms, threads) in sizes {
        let smt = if threads == 1 { ", no SMT" } else { "" };
        // The run's own end is far away: `steady` stops it.
        let s = machine_spec(
            cpus,
            threads,
            &format!("nanosleep:tasks={cpus},sleep=1us,launch=0,exec=0"),
            3_600 * 1_000 * MS,
        );
        // One untimed run says how much the kernel's own work per CPU grows: events per
        // emulated CPU-ms stays flat when it does not.
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let (wall, events, launched) = steady(&s, cpus, ms * MS);
        let peak = status_kib("VmHWM:").filter(|_| reset);
        println!(
            "{cpus} CPUs{smt}: {events} events in {ms} ms emulated after {:.1} ms of launch, {:.0} events per emulated CPU-ms, {:.0} emulated CPU-ms per wall second, peak RSS {}",
            launched as f64 / 1e6,
            events as f64 / (cpus as u64 * ms) as f64,
            (cpus as u64 * ms) as f64 / wall.as_secs_f64(),
            peak.map_or("unknown".into(), |k| format!("{} MiB", k / 1024))
        );
        if cpus > 1024 {
            // Its launch takes about 1.5 s of emulated time (a minute of wall time) before
            // every sample: the line above is its one measurement.
            continue;
        }
        // Elements are emulated CPU-milliseconds: elements/s is CPU-ms per wall second.
        g.throughput(Throughput::Elements(cpus as u64 * ms));
        g.bench_function(format!("{cpus} CPUs{smt}, {ms} ms emulated"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| steady(&s, cpus, ms * MS).0).sum())
        });
    }
    g.finish();
}

criterion_group!(benches, scaling);
criterion_main!(benches);
