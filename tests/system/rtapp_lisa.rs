//! rt-app files written by LISA's `lisa.wlgen.rta` (tests/data/rtapp/lisa, made by
//! validation/lisa/make_rta.py with LISA 3.1.0): every file runs on rk3399 unchanged,
//! its phases, loops, properties and LISA's defaults read as rt-app reads them, and what
//! fairsim does not model is refused in one line naming the key.

use crate::common;

use fairsim_balance::Policy;
use fairsim_workloads::run;
use fairsim_workloads::{Rtapp, RunResult, WorkloadSpec};

fn dir() -> String {
    format!("{}/tests/data/rtapp/lisa", env!("CARGO_MANIFEST_DIR"))
}

fn file(name: &str) -> String {
    format!("{}/{name}", dir())
}

/// The JSON files directly in `sub` (of the LISA directory), sorted.
fn files(sub: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("{}/{sub}", dir()))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

fn run_file(name: &str, ms: u64) -> RunResult {
    let spec = format!("rtapp:{}", file(name));
    let mut s = common::spec("rk3399", &[spec.as_str()], ms, 7);
    s.config.check_invariants = true;
    run(&s, &mut |_, _| {}).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn int(v: &serde_json::Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Per phase of thread `t`: its name and passes.
fn passes(j: &serde_json::Value, t: usize) -> Vec<(String, i64)> {
    j["threads"][t]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["phase"].as_str().unwrap().to_string(), int(&p["passes"])))
        .collect()
}

/// `c_duration_us` of every activation of thread `t`, in order, deduplicated.
fn c_durations(j: &serde_json::Value, t: usize) -> Vec<i64> {
    let mut out: Vec<i64> = j["threads"][t]["activations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| int(&a["c_duration_us"]))
        .collect();
    out.dedup();
    out
}

#[test]
fn every_lisa_file_runs_on_rk3399_unchanged() {
    let names = files("");
    // The set make_rta.py writes (a file added or lost there shows here).
    assert_eq!(names.len(), 21, "{names:?}");
    for name in &names {
        let w = WorkloadSpec::parse(&format!("rtapp:{}", file(name)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // LISA's global keys are read and noted, never refused.
        assert!(
            w.notes()
                .iter()
                .any(|n| n
                    .contains("global calibration, lock_pages, log_size, ftrace, logdir ignored")),
            "{name}: {:?}",
            w.notes()
        );
        let r = run_file(name, 1_000);
        let j = &r.reports[0].json;
        let threads = j["threads"].as_array().unwrap();
        assert!(!threads.is_empty(), "{name}");
        // Each thread ran its first phase, except StaggeredFinishes' threads, which
        // sleep for their first second.
        for t in 0..threads.len() {
            let p = passes(j, t);
            assert!(
                p[0].1 > 0 || name == "bundle_StaggeredFinishes.json",
                "{name}: thread {t}: {p:?}"
            );
        }
    }
}

#[test]
fn periodic_wload_and_the_duty_cycle_sweep_keep_lisa_s_periods_and_work() {
    let r = run_file("periodic.json", 1_000);
    let j = &r.reports[0].json;
    assert_eq!(j["threads"][0]["name"], "per-0");
    // PeriodicWload(20%, 16 ms, 1 s): floor(1 / 0.016) = 62 passes of 3.2 ms of work on
    // rt-app's timer.
    assert_eq!(passes(j, 0), [("0".to_string(), 62)]);
    assert_eq!(c_durations(j, 0), [3_200]);
    assert_eq!(int(&j["threads"][0]["phases"][0]["slack_us"]["count"]), 62);
    // guaranteed_time="sleep" writes a sleep, not a timer: no slack samples.
    assert_eq!(j["threads"][1]["name"], "sleeper-1");
    assert_eq!(int(&j["threads"][1]["phases"][0]["slack_us"]["count"]), 0);
    assert_eq!(c_durations(j, 1), [3_000]);

    // DutyCycleSweepPhase(10..=90 by 20, 16 ms, 200 ms a step): five phases of
    // floor(0.2 / 0.016) = 12 passes, 960 ms in all.
    let r = run_file("sweep.json", 1_000);
    let j = &r.reports[0].json;
    let want: Vec<(String, i64)> = (0..5).map(|i| (i.to_string(), 12)).collect();
    assert_eq!(passes(j, 0), want);
    // LISA rounds each run up (math.ceil of 0.7 * 0.016 s in us: 11201).
    assert_eq!(c_durations(j, 0), [1_600, 4_800, 8_000, 11_201, 14_400]);
    assert!(r.reports[0].finished);
}

#[test]
fn ramp_step_and_pulse_are_phases_of_their_loads() {
    // Ramp(10..=70 by 20, 200 ms, 16 ms): four phases of 12 passes.
    let r = run_file("ramp.json", 1_000);
    let j = &r.reports[0].json;
    assert_eq!(
        passes(j, 0).iter().map(|p| p.1).collect::<Vec<_>>(),
        [12, 12, 12, 12]
    );
    assert_eq!(c_durations(j, 0), [1_600, 4_800, 8_000, 11_201]);
    // Step(20 -> 80, 400 ms): two phases of 25 passes.
    let r = run_file("step.json", 1_000);
    let j = &r.reports[0].json;
    assert_eq!(
        passes(j, 0).iter().map(|p| p.1).collect::<Vec<_>>(),
        [25, 25]
    );
    assert_eq!(c_durations(j, 0), [3_200, 12_800]);
    // Pulse(80 -> 10, 300 ms): the high load, then the low one.
    let r = run_file("pulse.json", 1_000);
    let j = &r.reports[0].json;
    assert_eq!(c_durations(j, 0), [12_800, 1_600]);
}

#[test]
fn lisa_s_properties_hold_from_the_first_phase() {
    // composed: priority 5 and uclamp (200, 900) on the whole task, which LISA writes in
    // its first phase only; bg's policy SCHED_IDLE in its one phase.
    let w = Rtapp::load(&file("composed.json")).unwrap();
    let bg = &w.tasks[0];
    assert_eq!(
        (bg.name.as_str(), bg.policy, bg.uclamp),
        ("bg", Policy::Idle, None)
    );
    let comp = &w.tasks[1];
    assert_eq!(comp.name, "comp");
    assert_eq!((comp.nice, comp.uclamp), (5, Some((200, 900))));
    // The last phase's own CPUs (rt-app's set_thread_affinity at each pass).
    assert_eq!(comp.phases[3].cpus, Some(vec![4, 5]));
    // sweep_props: the template's clamp and CPUs in every step of the sweep.
    let w = Rtapp::load(&file("sweep_props.json")).unwrap();
    assert_eq!(w.tasks[0].uclamp, Some((128, 768)));
    // LISA's test bundles write util_min and util_max -1 (no clamp, to LISA), which
    // rt-app reads as "unchanged": no clamp is set.
    for name in files("").iter().filter(|n| n.starts_with("bundle_")) {
        let w = Rtapp::load(&file(name)).unwrap();
        for t in &w.tasks {
            assert_eq!(
                (t.policy, t.nice, t.uclamp),
                (Policy::Normal, 0, None),
                "{name}"
            );
        }
    }
    let r = run_file("composed.json", 1_000);
    let j = &r.reports[0].json;
    assert_eq!(j["threads"][1]["nice"], 5);
    let tasks = &r.outcome.tasks();
    assert_eq!(tasks[0].policy, Policy::Idle);
    assert_eq!(tasks[1].uclamp, Some((200, 900)));
    // Phase 3 runs on the big CPUs only.
    let acts = j["threads"][1]["activations"].as_array().unwrap();
    let last: Vec<i64> = acts[acts.len() - 18..]
        .iter()
        .map(|a| int(&a["cpu"]))
        .collect();
    assert!(last.iter().all(|&c| c == 4 || c == 5), "{last:?}");
}

#[test]
fn force_defaults_files_run_as_the_plain_ones() {
    // LISA's test bundles write every default into the first phase (force_defaults):
    // policy, priority 0, util_min/util_max -1, nodes_membind, every CPU. rt-app reads
    // them as no change, and so does fairsim: the same threads, settings, phases and
    // passes. (The activations' times may differ by a microsecond: a phase's own `cpus`
    // makes rt-app's set_thread_affinity a call at each pass.)
    for name in ["periodic", "composed"] {
        let plain = Rtapp::load(&file(&format!("{name}.json"))).unwrap();
        let forced = Rtapp::load(&file(&format!("{name}_defaults.json"))).unwrap();
        assert_eq!(plain.tasks.len(), forced.tasks.len());
        for (a, b) in plain.tasks.iter().zip(&forced.tasks) {
            let settings = |t: &fairsim_workloads::RtTask| {
                (
                    t.name.clone(),
                    t.instances,
                    t.policy,
                    t.nice,
                    t.uclamp,
                    t.taskgroup.clone(),
                    t.repeat,
                )
            };
            assert_eq!(settings(a), settings(b), "{name}");
            for (p, q) in a.phases.iter().zip(&b.phases) {
                assert_eq!(
                    (&p.name, p.repeat, &p.events),
                    (&q.name, q.repeat, &q.events)
                );
                let every = Some((0..6).collect::<Vec<usize>>());
                assert!(p.cpus == q.cpus || (p.cpus.is_none() && q.cpus == every));
            }
        }
        let passes_of = |file_name: String| {
            let r = run_file(&file_name, 1_000);
            let j = r.reports[0].json.clone();
            (0..j["threads"].as_array().unwrap().len())
                .map(|t| passes(&j, t))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            passes_of(format!("{name}.json")),
            passes_of(format!("{name}_defaults.json")),
            "{name}"
        );
        let w = WorkloadSpec::parse(&format!("rtapp:{}", file(&format!("{name}_defaults.json"))))
            .unwrap();
        assert!(
            w.notes()
                .iter()
                .any(|n| n.contains("nodes_membind of 2 phase(s) ignored")),
            "{:?}",
            w.notes()
        );
    }
}

#[test]
fn lisa_s_event_names_delays_and_task_loops() {
    let w = Rtapp::load(&file("events.json")).unwrap();
    use fairsim_workloads::RtEvent;
    let seq = w.tasks.iter().find(|t| t.name == "seq").unwrap();
    // RunWload + SleepWload + RunWload: LISA names the second run "run-1".
    assert_eq!(
        seq.phases[0].events,
        [
            RtEvent::Run(10_000),
            RtEvent::Sleep(20_000),
            RtEvent::Run(10_000),
            RtEvent::Runtime(5_000),
            RtEvent::Timer {
                reference: "unique".into(),
                period: 50_000
            },
        ]
    );
    // "* 10" is ten phases (LISA folds them into the task's loop only when they are
    // written alike, and the first carries the taskgroup), which holds for all ten.
    assert_eq!((seq.repeat, seq.phases.len()), (1, 10));
    assert_eq!(seq.taskgroup.as_deref(), Some("/lisa/seq"));
    let late = w.tasks.iter().find(|t| t.name == "late").unwrap();
    // delay_s is a phase of its own: a 100 ms sleep.
    assert_eq!(late.phases[0].name, "delay");
    assert_eq!(late.phases[0].events, [RtEvent::Sleep(100_000)]);
    let idle = w.tasks.iter().find(|t| t.name == "idle").unwrap();
    assert_eq!(idle.policy, Policy::Idle);
    let r = run_file("events.json", 1_000);
    let j = &r.reports[0].json;
    let k = |name: &str| {
        j["threads"]
            .as_array()
            .unwrap()
            .iter()
            .position(|t| t["name"].as_str().unwrap().starts_with(name))
            .unwrap()
    };
    let want: Vec<(String, i64)> = (0..10).map(|i| (i.to_string(), 1)).collect();
    assert_eq!(passes(j, k("seq")), want);
    assert_eq!(
        passes(j, k("late")).iter().map(|p| p.1).collect::<Vec<_>>(),
        [1, 12, 12, 12]
    );
}

#[test]
fn what_lisa_writes_and_fairsim_does_not_model_is_refused_in_one_line() {
    let cases = [
        ("barrier.json", "tasks.t1.phases.0.barrier: rt-app's 'barrier' event is not modelled"),
        ("bundle_UtilClamp.json", "tasks.task.phases.test/uclamp-135.util_min: changes util_min from unset to 135 mid-run"),
        ("fifo.json", "tasks.rt.phases.0.policy: 'SCHED_FIFO' is not modelled"),
        ("lock.json", "tasks.lk.phases.0.lock: rt-app's 'lock' event is not modelled"),
        ("nice_change.json", "tasks.nice.phases.1.priority: sets the priority (nice value): the nice value goes from 0 to 10 mid-run"),
        ("uclamp_change.json", "tasks.clamp.phases.1.util_min: changes util_min from 0 to 512 mid-run"),
        ("yield.json", "tasks.y.phases.0.yield: rt-app's 'yield' event is not modelled"),
    ];
    assert_eq!(
        files("refused"),
        cases.iter().map(|c| c.0.to_string()).collect::<Vec<_>>()
    );
    for (name, want) in cases {
        let path = file(&format!("refused/{name}"));
        let e = WorkloadSpec::parse(&format!("rtapp:{path}"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{name}\n  got: {e}\n want: {want}");
        assert!(!e.contains('\n'), "{e}");
    }
}
