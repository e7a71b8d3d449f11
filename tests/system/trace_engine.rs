//! The tracer against the run's own counters: a traced run makes the same decisions as an
//! untraced one (same JSON, byte for byte), and its trace holds exactly the switches,
//! wakeups and migrations the run counted, in a consistent per-CPU switch stream.

use crate::common;

use fairsim_engine::Cpuidle;
use fairsim_output::to_json;
use fairsim_trace::{BalanceKind, Trace, TraceConfig, TraceEvent, CPU_IDLE_EXIT};
use fairsim_workloads::run;

/// Runs `spec` with and without the tracer and returns both JSON documents and the trace.
fn traced(mut spec: fairsim_workloads::run::RunSpec) -> (String, String, Trace, u64) {
    let plain = run(&spec, &mut |_, _| {}).unwrap();
    let plain_json = serde_json::to_string(&to_json(&spec, &plain)).unwrap();
    spec.config.trace = Some(TraceConfig {
        series_bucket: Some(1_000_000),
        ..TraceConfig::events()
    });
    let mut r = run(&spec, &mut |_, _| {}).unwrap();
    let json = serde_json::to_string(&to_json(&spec, &r)).unwrap();
    let trace = r.outcome.take_trace().expect("a trace");
    let series = r.outcome.newidle_series().expect("a series");
    let series_balances: u64 = series.balances.iter().flatten().sum();
    (plain_json, json, trace, series_balances)
}

fn is_stopper(t: &Trace, pid: u32) -> bool {
    t.task(pid)
        .is_some_and(|i| i.comm.starts_with("migration/"))
}

/// The checks CI's Python checker also makes, on the in-memory trace.
fn check(trace: &Trace, json: &serde_json::Value) {
    let s = &json["scheduler"];
    let mut switches = 0u64;
    let mut wakings = 0u64;
    let mut migrations = 0u64;
    let mut curr = trace.initial.clone();
    let mut last = vec![0u64; trace.cpus as usize];
    for r in &trace.records {
        let c = r.cpu as usize;
        assert!(r.ts >= trace.window.0 && r.ts < trace.window.1.max(trace.window.0 + 1));
        match &r.event {
            TraceEvent::Switch { prev, next, .. } => {
                assert_eq!(
                    *prev, curr[c],
                    "cpu{c} at {}: prev is not the last next",
                    r.ts
                );
                assert!(r.ts >= last[c], "cpu{c}: switches out of order");
                last[c] = r.ts;
                curr[c] = *next;
                // The engine counts switches between tasks and idle; the stopper's switch
                // in, and its switch to idle when it leaves the CPU idle, are the trace's.
                let stopper_in = is_stopper(trace, *next);
                let stopper_to_idle = is_stopper(trace, *prev) && *next == 0;
                if !stopper_in && !stopper_to_idle {
                    switches += 1;
                }
                for pid in [*prev, *next] {
                    assert!(pid == 0 || trace.task(pid).is_some(), "unknown pid {pid}");
                }
            }
            TraceEvent::Waking { pid, .. } => {
                wakings += 1;
                assert!(trace.task(*pid).is_some());
            }
            TraceEvent::Migrate {
                orig_cpu, dest_cpu, ..
            } => {
                migrations += 1;
                assert_ne!(orig_cpu, dest_cpu);
            }
            _ => {}
        }
    }
    assert_eq!(switches, s["context_switches"].as_u64().unwrap());
    assert_eq!(
        wakings,
        s["wakeups_local"].as_u64().unwrap() + s["wakeups_remote"].as_u64().unwrap()
    );
    assert_eq!(migrations, s["migrations"].as_u64().unwrap());
    assert!(switches > 0 && wakings > 0);
}

#[test]
fn a_traced_schbench_run_decides_the_same_and_counts_the_same() {
    let spec = common::spec("2s24c2t", &["schbench:m=4,t=32,r=1"], 40, 7);
    let (plain, json, trace, series) = traced(spec);
    assert_eq!(plain, json, "tracing changed the run");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    check(&trace, &v);
    // schbench's workers are threads of one process.
    let w = trace
        .tasks
        .iter()
        .find(|t| t.comm == "schbench-w0.0")
        .unwrap();
    let main = trace.tasks.iter().find(|t| t.comm == "schbench").unwrap();
    assert_eq!(w.tgid, main.pid);
    assert!(trace.tasks.iter().all(|t| t.comm.len() <= 15));
    // Newidle balances appear as balance slices and in the series, which counts every
    // newidle balance the schedstat counters counted.
    let newidle: u64 = trace
        .records
        .iter()
        .filter(|r| {
            matches!(
                r.event,
                TraceEvent::Balance {
                    kind: BalanceKind::Newidle,
                    ..
                }
            )
        })
        .count() as u64;
    assert!(newidle > 0);
    let lb_newidle: u64 = v["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["domains"].as_array().unwrap())
        .map(|d| d["lb"]["CPU_NEWLY_IDLE"]["lb_count"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(series, lb_newidle);
}

#[test]
fn a_traced_nanosleep_run_with_cpuidle_counts_the_same() {
    let mut spec = common::spec("numa-2s4c2t", &["nanosleep:tasks=12"], 30, 3);
    spec.config.cpuidle = Cpuidle::Menu;
    let (plain, json, trace, _) = traced(spec);
    assert_eq!(plain, json, "tracing changed the run");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    check(&trace, &v);
    // Idle entries and exits alternate on each CPU.
    let mut inside = vec![false; trace.cpus as usize];
    for r in &trace.records {
        if let TraceEvent::CpuIdle { state } = r.event {
            let c = r.cpu as usize;
            if state == CPU_IDLE_EXIT {
                assert!(inside[c], "cpu{c}: exit without entry at {}", r.ts);
                inside[c] = false;
            } else {
                assert!(!inside[c], "cpu{c}: entry while idle at {}", r.ts);
                inside[c] = true;
            }
        }
    }
    assert!(trace
        .records
        .iter()
        .any(|r| matches!(r.event, TraceEvent::Fork { .. })));
}

#[test]
fn a_window_keeps_only_its_events_and_knows_who_ran_when_it_opened() {
    let mut spec = common::spec("smt-mc-1s4c2t", &["hackbench:g=2,l=200"], 50, 1);
    spec.config.trace = Some(TraceConfig {
        window: Some((2_000_000, 3_000_000)),
        ..TraceConfig::events()
    });
    let mut r = run(&spec, &mut |_, _| {}).unwrap();
    let trace = r.outcome.take_trace().unwrap();
    assert!(!trace.records.is_empty());
    assert!(trace
        .records
        .iter()
        .all(|r| (2_000_000..3_000_000).contains(&r.ts)));
    let mut curr = trace.initial.clone();
    for r in &trace.records {
        if let TraceEvent::Switch { prev, next, .. } = r.event {
            assert_eq!(prev, curr[r.cpu as usize]);
            curr[r.cpu as usize] = next;
        }
    }
}

#[test]
fn a_trace_that_outgrows_the_budget_fails_in_one_line() {
    let mut spec = common::spec("smt-mc-1s4c2t", &["hackbench:g=2,l=2000"], 200, 1);
    spec.config.trace = Some(TraceConfig::events());
    let mut world = fairsim_workloads::run::prepare(&spec).unwrap();
    world.cap_queue_memory(fairsim_trace::RECORD_BYTES * 1000);
    let err = world.run(&mut |_, _| {}).unwrap_err().to_string();
    assert!(
        err.starts_with("--trace: 1000 events recorded by t="),
        "{err}"
    );
    assert!(!err.contains('\n'));
}
