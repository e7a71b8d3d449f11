//! Golden tests against a real kernel with real timing: the build host (Linux 6.18 in a
//! 2-vCPU KVM guest) ran the seeds' workloads natively, and `validation/host/data/` keeps
//! what `perf stat` and `perf sched` measured (see `validation/host/README.md`). fairsim
//! runs the same workloads on its model of that host (`validation/host/host.toml`) and must
//! land within the stated bounds:
//!
//! Each figure is the median over five seeds (noise on). Bounds:
//!
//! - wakeup latency p50 and p99 (sched_waking to switch-in, fairsim's wake-to-run
//!   latency) within 2x;
//! - context switches per second (perf's count: a workload task switched out; fairsim's
//!   switch-ins of workload tasks, `sched_info.pcount`) within 2x;
//! - migrations per second (`se.nr_migrations`, perf's cpu-migrations) within 2x, or within
//!   20/s of each other where both are that small (a handful of migrations in a run is
//!   noise on either side).
//!
//! Differences between 6.12.117 (fairsim) and the host's 6.18 that matter here: both have
//! EEVDF with delayed dequeue and RUN_TO_PARITY; 6.18 also has the newer
//! `sched_balance_newidle` rate limit and per-task slices, which none of these workloads
//! set. The host's cpuidle driver is haltpoll, which fairsim models as the menu governor's
//! tick decision with the VM's measured halt exit; its poll window is not modelled (the
//! data shows halts, not polls, dominate: see host.toml).
//!
//! The pipe ping-pong configurations have no fairsim workload yet and are checked only for
//! being present in the data.

use std::path::{Path, PathBuf};

use fairsim_des::time::{parse_duration, MS, SEC};
use fairsim_engine::noise::NoiseModel;
use fairsim_engine::world::Cpuidle;
use fairsim_engine::{CostTable, WorldConfig};
use fairsim_topology::source::{parse_spec, SpecOptions};
use fairsim_topology::{Arch, BuildOptions};
use fairsim_workloads::run::{RunSpec, DEFAULT_MEMORY_BUDGET};
use fairsim_workloads::scenario::Scenario;
use fairsim_workloads::{run, WorkloadSpec};
use serde_json::Value;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("validation/host")
}

/// The host model: machine, costs and idle policy from `host.toml`.
fn host_config(seed: u64) -> (fairsim_topology::Machine, WorldConfig) {
    let sc = Scenario::load(&data_dir().join("host.toml")).unwrap();
    let machine = parse_spec(&SpecOptions::new(sc.smp.as_deref().unwrap(), Arch::X86)).unwrap();
    let mut cost = CostTable::default();
    for (k, v) in &sc.cost {
        cost.apply(&format!("{k}={v}")).unwrap();
    }
    let config = WorldConfig {
        cost,
        seed,
        cpuidle: Cpuidle::parse(sc.cpuidle.as_deref().unwrap()).unwrap(),
        noise: NoiseModel::DEFAULT,
        ..WorldConfig::default()
    };
    (machine, config)
}

/// fairsim's counterpart of one measured configuration: the workload and how long to run
/// it (a steady-state window of the host run's length or shorter).
fn workload_of(doc: &Value) -> Option<(String, u64, u64)> {
    let name = doc["name"].as_str()?;
    let cfg = &doc["config"];
    let num = |k: &str| cfg[k].as_u64();
    match doc["workload"].as_str()? {
        "schbench" => {
            // The 2016 schbench ignores -m: two message threads whatever it says.
            let t = num("t")?;
            let c = num("c_us")?;
            let s = num("s_us")?;
            Some((
                format!("schbench:m=2,t={t},c={c}us,s={s}us"),
                5 * SEC,
                500 * MS,
            ))
        }
        "messaging" => {
            let g = num("groups")?;
            let l = num("loops")?;
            Some((
                format!("hackbench:g={g},l={l},pipe,process"),
                600 * MS,
                100 * MS,
            ))
        }
        "nanosleep" if !name.starts_with("vmcost") => {
            let n = num("instances")?;
            let ns = num("ns")?;
            Some((
                format!("nanosleep:tasks={n},sleep={ns}ns,launch=0,exec=0"),
                2 * SEC,
                200 * MS,
            ))
        }
        _ => None,
    }
}

struct Figures {
    lat_p50_us: f64,
    lat_p99_us: f64,
    switches_per_s: f64,
    migrations_per_s: f64,
}

fn fairsim_figures(w: &str, duration: u64, warmup: u64, seed: u64) -> Figures {
    let (machine, mut config) = host_config(seed);
    config.duration = duration;
    config.warmup = warmup;
    let spec = RunSpec {
        cpusets: Vec::new(),
        machine: machine.into(),
        build: BuildOptions::default(),
        workloads: vec![WorkloadSpec::parse(w).unwrap()],
        config,
        memory_budget: DEFAULT_MEMORY_BUDGET,
    };
    let r = run(&spec, &mut |_, _| {}).unwrap();
    let world = &r.outcome;
    let secs = world.window_ns() as f64 / 1e9;
    let h = &world.metrics().wakeup_latency;
    let (mut pcount, mut migrations) = (0u64, 0u64);
    for t in 0..world.tasks().len() {
        let m = world.task_metrics(t);
        pcount += m.pcount;
        migrations += m.migrations;
    }
    Figures {
        lat_p50_us: h.value_at_quantile(0.5) as f64 / 1e3,
        lat_p99_us: h.value_at_quantile(0.99) as f64 / 1e3,
        switches_per_s: pcount as f64 / secs,
        migrations_per_s: migrations as f64 / secs,
    }
}

fn median(v: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = v.collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn within_2x(host: f64, sim: f64) -> bool {
    host > 0.0 && sim > 0.0 && sim <= 2.0 * host && host <= 2.0 * sim
}

/// Figures outside their bounds today, each with what the traces on both sides say about
/// it. The test fails when one of them comes within its bounds (take it off the list) as
/// well as when any other figure leaves them, so the list only shrinks.
const KNOWN_DEPARTURES: &[(&str, &str, &str)] = &[
    (
        "messaging-g1-l8000-pipe-process",
        "migrations",
        "fell out of its bounds (from 496/s) when the runqueue search of a newidle balance moved to the end of the group scan's time, as the kernel orders it: fewer balances now find a queue still holding a second task; the host's 735/s is not traced yet (perf sched sees CPU 0 only)",
    ),
    (
        "messaging-g1-l8000-pipe-process",
        "latency-p99",
        "fairsim's tail is 2.2x the host's: a receiver woken onto a CPU that runs senders waits for the running sender's slice; the same slice behaviour as messaging-g2's entries, at a smaller scale",
    ),
    (
        "messaging-g1-l8000-pipe-process",
        "latency-p50",
        "not explained yet: the host's figure is CPU 0's only (no tracepoints from CPU 1's idle task) and perf sched halves the rate of such runs (validation/host/README.md); fairsim wakes more than half of its receivers across CPUs onto a busy CPU, where the wakeup waits in the queue rather than for the vCPU's 10 us tick restart",
    ),
    (
        "messaging-g2-l4000-pipe-process",
        "latency-p99",
        "work-bound where the host is not: fairsim charges 0.8 us of task work per pipe read or write (PIPE_SYSCALL_WORK in workloads/hackbench.rs, a figure for current x86), while this host moves a g=2 message in 0.33 us per system call switches included (6.4 M calls in 1.06 s on 2 CPUs); fairsim runs at 97% task time, its senders fill whole slices, and it switches 7x less often (Time 2.6 s against 1.06 s). (Its latency-p50 came within bounds when __schedule() after a tick or an IPI began reading the clock after the interrupt's work, issue 48.)",
    ),
    (
        "messaging-g2-l4000-pipe-process",
        "switches",
        "as its latency-p99",
    ),
    (
        "nanosleep-n4-ns1000",
        "migrations",
        "placement: the host kernel boots with the non-upstream `sched_vcpu_pack=15`; on it sleepers settle unevenly on the two vCPUs and stay (4 nano_sleep copies sat 3:1 across 1 s of `ps -o psr` samples), while upstream select_idle_sibling, and fairsim, move the second wakeup of a coalesced pair to the idle vCPU",
    ),
    (
        "schbench-m1-t1-c1000-s1000",
        "latency-p99",
        "placement: the host kernel boots with the non-upstream `sched_vcpu_pack=15`; on it sleepers settle unevenly on the two vCPUs and stay (4 nano_sleep copies sat 3:1 across 1 s of `ps -o psr` samples), while upstream select_idle_sibling, and fairsim, move the second wakeup of a coalesced pair to the idle vCPU; fairsim's extra migrations put a woken worker behind another on its new CPU",
    ),
    (
        "schbench-m1-t1-c1000-s1000",
        "migrations",
        "placement: the host kernel boots with the non-upstream `sched_vcpu_pack=15`; on it sleepers settle unevenly on the two vCPUs and stay (4 nano_sleep copies sat 3:1 across 1 s of `ps -o psr` samples), while upstream select_idle_sibling, and fairsim, move the second wakeup of a coalesced pair to the idle vCPU",
    ),
    (
        "schbench-m1-t2-c1000-s1000",
        "migrations",
        "placement: the host kernel boots with the non-upstream `sched_vcpu_pack=15`; on it sleepers settle unevenly on the two vCPUs and stay (4 nano_sleep copies sat 3:1 across 1 s of `ps -o psr` samples), while upstream select_idle_sibling, and fairsim, move the second wakeup of a coalesced pair to the idle vCPU",
    ),
    (
        "schbench-m1-t1-c30000-s30000",
        "migrations",
        "placement, as the other migrations entries: the host's 4.4/s are a handful of moves in its run, and fairsim's median over five seeds sits either side of the bound with the run's random stream (it came out at 42/s once the load-tracking costs drew their own noise, while this figure's latencies came within bounds)",
    ),
    (
        "schbench-m1-t2-c30000-s30000",
        "latency-p50",
        "the host's median wakeup is a halted vCPU's (tick restart, 12 us); fairsim's workers more often wake onto a CPU that is still running (4.5 us): with packing (see the migrations entries) the host's two message threads share a vCPU less often than fairsim's spread placement has them",
    ),
];

#[test]
fn fairsim_lands_within_the_bounds_of_the_real_host() {
    let dir = data_dir().join("data");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    let mut departures = Vec::new();
    let mut checked = 0;
    let mut pingpong = 0;
    println!(
        "{:36} {:>22} {:>22} {:>22} {:>22}",
        "config",
        "lat p50 us host/sim",
        "lat p99 us host/sim",
        "ctxsw/s host/sim",
        "migr/s host/sim"
    );
    for path in files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let name = doc["name"].as_str().unwrap_or("").to_string();
        if doc["workload"].as_str() == Some("pingpong") {
            pingpong += 1;
        }
        let Some((w, duration, warmup)) = workload_of(&doc) else {
            continue;
        };
        let host = Figures {
            lat_p50_us: doc["latency_us"]["p50"].as_f64().unwrap(),
            lat_p99_us: doc["latency_us"]["p99"].as_f64().unwrap(),
            switches_per_s: doc["context_switches_per_s"].as_f64().unwrap(),
            migrations_per_s: doc["cpu_migrations_per_s"].as_f64().unwrap(),
        };
        // One run is one draw of the noise: the median of five seeds is fairsim's figure,
        // as one stored host run is the host's.
        let runs: Vec<Figures> = (1..=5)
            .map(|seed| fairsim_figures(&w, duration, warmup, seed))
            .collect();
        let sim = Figures {
            lat_p50_us: median(runs.iter().map(|f| f.lat_p50_us)),
            lat_p99_us: median(runs.iter().map(|f| f.lat_p99_us)),
            switches_per_s: median(runs.iter().map(|f| f.switches_per_s)),
            migrations_per_s: median(runs.iter().map(|f| f.migrations_per_s)),
        };
        checked += 1;
        println!(
            "{name:36} {:>10.1} /{:>10.1} {:>10.1} /{:>10.1} {:>10.0} /{:>10.0} {:>10.1} /{:>10.1}",
            host.lat_p50_us,
            sim.lat_p50_us,
            host.lat_p99_us,
            sim.lat_p99_us,
            host.switches_per_s,
            sim.switches_per_s,
            host.migrations_per_s,
            sim.migrations_per_s
        );
        let (hm, sm) = (host.migrations_per_s, sim.migrations_per_s);
        for (what, h, s, ok) in [
            (
                "latency-p50",
                host.lat_p50_us,
                sim.lat_p50_us,
                within_2x(host.lat_p50_us, sim.lat_p50_us),
            ),
            (
                "latency-p99",
                host.lat_p99_us,
                sim.lat_p99_us,
                within_2x(host.lat_p99_us, sim.lat_p99_us),
            ),
            (
                "switches",
                host.switches_per_s,
                sim.switches_per_s,
                within_2x(host.switches_per_s, sim.switches_per_s),
            ),
            (
                "migrations",
                hm,
                sm,
                within_2x(hm, sm) || (hm - sm).abs() <= 20.0,
            ),
        ] {
            let known = KNOWN_DEPARTURES
                .iter()
                .any(|(c, f, _)| *c == name && *f == what);
            match (ok, known) {
                (true, true) => failures.push(format!(
                    "{name} {what}: host {h:.1}, fairsim {s:.1} is within its bounds now: take it off KNOWN_DEPARTURES"
                )),
                (false, false) => failures.push(format!(
                    "{name} {what}: host {h:.1}, fairsim {s:.1} is outside its bounds ({w})"
                )),
                (false, true) => departures.push(format!("{name} {what}")),
                (true, false) => {}
            }
        }
    }
    println!(
        "known departures still outside their bounds: {}",
        departures.len()
    );
    assert!(
        checked >= 8,
        "only {checked} configurations in {}",
        dir.display()
    );
    assert!(pingpong >= 1, "the ping-pong data is missing");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_host_model_parses_as_the_cli_reads_it() {
    let (m, c) = host_config(1);
    assert_eq!(m.nr_cpus(), 2);
    assert_eq!(c.cost.idle_exit, parse_duration("7us", 1).unwrap());
    assert_eq!(c.cost.tick_restart, parse_duration("10us", 1).unwrap());
    assert_eq!(c.cpuidle, Cpuidle::None);
}
