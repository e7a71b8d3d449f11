//! rt-app's per-phase `cpus` (`set_thread_affinity` at each pass, the kernel's
//! `__set_cpus_allowed_ptr` moving a running thread through the stopper) and its
//! per-activation log (the log files and the JSON's activations, which must agree with
//! the slack and wu_lat distributions).

use crate::common;

use fairsim_workloads::run;
use fairsim_workloads::RunSpec;
use fairsim_workloads::{Rtapp, Workload};

/// Writes `text` as a temporary rt-app file named `name` and returns its workload spec.
fn write(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("fairsim-rtapp-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    format!("rtapp:{}", path.display())
}

fn spec(machine: &str, name: &str, text: &str, ms: u64) -> RunSpec {
    let w = write(name, text);
    let mut s = common::spec(machine, &[w.as_str()], ms, 7);
    s.config.check_invariants = true;
    s
}

fn rtapp(s: &RunSpec) -> &Rtapp {
    match &s.workloads[0].workload {
        Workload::Rtapp(r) => r,
        other => panic!("not rt-app: {other:?}"),
    }
}

fn int(v: &serde_json::Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// The CPU each activation of thread `k` ended on.
fn cpus_of(j: &serde_json::Value, k: usize) -> Vec<i64> {
    j["threads"][k]["activations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| int(&a["cpu"]))
        .collect()
}

const MOVER: &str = r#"{"tasks": {"mover": {"loop": 1, "phases": {
    "first": {"cpus": [1], "loop": 5, "run": 10000, "timer": {"ref": "unique", "period": 20000}},
    "second": {"cpus": [3], "loop": 5, "run": 10000, "timer": {"ref": "unique", "period": 20000}},
    "third": {"loop": 5, "run": 10000, "timer": {"ref": "unique", "period": 20000}}
}}}}"#;

#[test]
fn a_phase_with_its_own_cpus_moves_the_running_thread_at_its_start() {
    let s = spec("smt-mc-1s4c2t", "mover.json", MOVER, 1_000);
    let r = run(&s, &mut |_, _| {}).unwrap();
    let j = &r.reports[0].json;
    // Every pass of `first` ran on CPU 1 and every pass of `second` on CPU 3, the thread
    // moved by the stopper at the phase's first pass; `third` has no cpus of its own
    // nor a task-level list, so rt-app restores the inherited (full) affinity, and the
    // thread, already allowed where it is, stays on CPU 3.
    assert_eq!(cpus_of(j, 0), [1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]);
    let t = r
        .outcome
        .tasks()
        .iter()
        .position(|t| t.name == "mover-0")
        .unwrap();
    let m = &r.outcome.metrics().tasks[t];
    assert_eq!(m.cpu_ns.get(1), Some(50_000_000), "{m:?}");
    assert_eq!(m.cpu_ns.get(3), Some(100_000_000), "{m:?}");
    // The two moves are charged as migrations at the stopper's profile site, beside the
    // load tracking of their dequeue and enqueue.
    use fairsim_engine::profile::{Ctx, Leaf, Site};
    let prof = r.outcome.profile(None);
    let moved = prof.sites[Site::new(Ctx::AffinityStop, Leaf::Move).index()];
    assert_eq!(moved, 2 * s.config.cost.migration);
    let line = prof.line(fairsim_engine::profile::Sym::MigrationCpuStop);
    let pelt: u64 = [
        Leaf::PeltSe,
        Leaf::PeltCfsRq,
        Leaf::UtilEstEnqueue,
        Leaf::UtilEstDequeue,
    ]
    .into_iter()
    .map(|l| prof.sites[Site::new(Ctx::AffinityStop, l).index()])
    .sum();
    assert!(pelt > 0, "{line:?}");
    assert_eq!(line.children_ns, moved + pelt, "{line:?}");
}

#[test]
fn a_phase_without_cpus_goes_back_to_the_task_cpus() {
    // The task's list is [0, 1]; `away` pins the thread to CPU 3, and `back`, without a
    // list of its own, makes rt-app ask for the task's list again, which moves it off
    // CPU 3 to a CPU of [0, 1].
    let text = r#"{"tasks": {"t": {"loop": 2, "cpus": [0, 1], "phases": {
        "away": {"cpus": [3], "loop": 3, "run": 5000, "timer": {"ref": "unique", "period": 10000}},
        "back": {"loop": 3, "run": 5000, "timer": {"ref": "unique", "period": 10000}}
    }}}}"#;
    let s = spec("smt-mc-1s4c2t", "back.json", text, 1_000);
    let r = run(&s, &mut |_, _| {}).unwrap();
    let cpus = cpus_of(&r.reports[0].json, 0);
    assert_eq!(cpus.len(), 12, "{cpus:?}");
    for (i, c) in cpus.iter().enumerate() {
        if (i / 3) % 2 == 0 {
            assert_eq!(*c, 3, "pass {i} of `away`: {cpus:?}");
        } else {
            assert!([0, 1].contains(c), "pass {i} of `back`: {cpus:?}");
        }
    }
}

#[test]
fn without_task_cpus_a_phase_goes_back_to_the_inherited_affinity() {
    // No task-level list: rt-app's default is the affinity the thread started with,
    // here the workload's `cpus=0-1` (as `taskset` would give it), not every CPU.
    let text = r#"{"tasks": {"t": {"loop": 1, "phases": {
        "away": {"cpus": [3], "loop": 2, "run": 5000, "timer": {"ref": "unique", "period": 10000}},
        "back": {"loop": 2, "run": 5000, "timer": {"ref": "unique", "period": 10000}}
    }}}}"#;
    let w = format!("{},cpus=0-1", write("inherit.json", text));
    let mut s = common::spec("smt-mc-1s4c2t", &[w.as_str()], 1_000, 7);
    s.config.check_invariants = true;
    let r = run(&s, &mut |_, _| {}).unwrap();
    let cpus = cpus_of(&r.reports[0].json, 0);
    assert_eq!(&cpus[..2], [3, 3], "{cpus:?}");
    assert!(cpus[2..].iter().all(|c| [0, 1].contains(c)), "{cpus:?}");
}

/// A log file's data lines as columns.
fn rows(text: &str) -> Vec<Vec<i64>> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(|c| c.parse().unwrap()).collect())
        .collect()
}

#[test]
fn the_log_file_has_rt_app_columns_and_hand_checked_values() {
    let text = r#"{"tasks": {"p": {"run": 5000, "timer": {"ref": "unique", "period": 100000}}}}"#;
    let s = spec("smt-mc-1s4c2t", "p.json", text, 1_000);
    let r = run(&s, &mut |_, _| {}).unwrap();
    let files = rtapp(&s).log_files(0, &r.outcome);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].0, "rt-app-p-0-0.log");
    let lines: Vec<&str> = files[0].1.lines().collect();
    assert_eq!(lines[0], "# Policy : SCHED_OTHER priority : 0");
    assert_eq!(
        lines[1],
        "#idx     perf      run   period           start             end          rel_st      slack c_duration   c_period     wu_lat"
    );
    let rows = rows(&files[0].1);
    // A pass is `run` then the timer's sleep: it ends when the timer wakes the thread,
    // so the second holds 9 whole passes (the 10th ends at 1 s, after the run stops).
    assert_eq!(rows.len(), 9);
    for (i, row) in rows.iter().enumerate() {
        let [idx, perf, run, period, start, end, rel_st, slack, c_dur, c_per, wu] = row[..] else {
            panic!("{row:?}")
        };
        assert_eq!((idx, perf, c_dur, c_per), (0, 5_000, 5_000, 100_000));
        // Alone on an idle CPU at capacity 1024, the 5 ms of work take 5 ms.
        assert!((5_000..=5_002).contains(&run), "line {i}: {row:?}");
        assert_eq!(rel_st, start);
        assert!((period - (end - start)).abs() <= 1, "{row:?}");
        // Each pass ends as the timer wakes the thread at the next 100 ms boundary, a
        // wakeup latency late; the next starts there. The slack is what the run left of
        // the period: the boundary minus the end of the run.
        let boundary = 100_000 * (i as i64 + 1);
        assert!((0..100).contains(&wu), "{row:?}");
        assert!((end - boundary - wu).abs() <= 1, "{row:?}");
        assert!((slack - (boundary - start - run)).abs() <= 1, "{row:?}");
        if i > 0 {
            // 95 ms, less the lateness of the wakeup that started the pass.
            assert!((94_800..=95_000).contains(&slack), "{row:?}");
        }
    }
    // The JSON lists the same activations.
    let a = &r.reports[0].json["threads"][0]["activations"];
    assert_eq!(a.as_array().unwrap().len(), 9);
    assert_eq!(int(&a[3]["slack_us"]), rows[3][7]);
    assert_eq!(int(&a[3]["end_us"]), rows[3][5]);
    assert_eq!(
        a[3]["freq_khz"],
        serde_json::Value::Null,
        "no cpufreq on this machine"
    );
}

/// count, mean (towards zero), p50, p99 (nearest rank) and max, as `UsDist` gives them.
fn dist(mut v: Vec<i64>) -> [i64; 5] {
    v.sort_unstable();
    let n = v.len() as i64;
    let rank = |pct: i64| v[((pct * n + 99) / 100).max(1) as usize - 1];
    [
        n,
        v.iter().sum::<i64>() / n,
        rank(50),
        rank(99),
        *v.last().unwrap(),
    ]
}

#[test]
fn the_log_agrees_with_the_slack_and_wu_lat_distributions() {
    // Four threads on two CPUs contend, so slack and wakeup latency vary from pass to
    // pass; each thread has one phase, so its log lines are that phase's passes.
    let text = r#"{"tasks": {"busy": {"instance": 4, "cpus": [0, 1], "run": 4000,
        "timer": {"ref": "unique", "period": 9000}}}}"#;
    let mut s = spec("smt-mc-1s4c2t", "busy.json", text, 500);
    s.config.rtapp_log = true;
    let r = run(&s, &mut |_, _| {}).unwrap();
    let j = &r.reports[0].json;
    for (k, (name, text)) in rtapp(&s).log_files(0, &r.outcome).iter().enumerate() {
        assert_eq!(name, &format!("rt-app-busy-{k}-{k}.log"));
        let rows = rows(text);
        let ph = &j["threads"][k]["phases"][0];
        assert_eq!(rows.len() as i64, int(&ph["passes"]), "{name}");
        let slack = dist(rows.iter().map(|r| r[7]).collect());
        let wu = dist(rows.iter().map(|r| r[10]).collect());
        let want =
            |d: &serde_json::Value| ["count", "mean", "p50", "p99", "max"].map(|f| int(&d[f]));
        assert_eq!(slack, want(&ph["slack_us"]), "{name}");
        assert_eq!(wu, want(&ph["wu_lat_us"]), "{name}");
        let lo = rows.iter().map(|r| r[7]).min().unwrap();
        assert!(
            lo < slack[4] && wu[4] > 0,
            "contention shows: {slack:?} {wu:?}"
        );
    }
}

#[test]
fn the_first_activation_after_a_long_sleep_runs_at_a_lower_frequency() {
    // On rk3399's big cluster with schedutil, a busy phase ramps CPU 4 to its top OPP; a
    // 500 ms sleep decays the thread's utilization, so without util_est the first
    // activation after it ends at a lower frequency than the busy phase's last one. With
    // util_est (seed 003), the thread's estimate brings the frequency back at once.
    let text = r#"{"tasks": {"ramp": {"loop": 1, "cpus": [4], "phases": {
        "busy": {"loop": 30, "run": 8000, "timer": {"ref": "unique", "period": 10000}},
        "rest": {"loop": 1, "sleep": 500000},
        "again": {"loop": 5, "run": 8000, "timer": {"ref": "unique", "period": 10000}}
    }}}}"#;
    let freqs = |util_est: &str| -> Vec<i64> {
        let mut s = spec("rk3399", "ramp.json", text, 2_000);
        s.config.params.util_est = fairsim_pelt::UtilEstMode::parse(util_est).unwrap();
        s.config.governor = Some(fairsim_balance::cpufreq::Governor::DEFAULT);
        let r = run(&s, &mut |_, _| {}).unwrap();
        let a = r.reports[0].json["threads"][0]["activations"].clone();
        a.as_array()
            .unwrap()
            .iter()
            .map(|x| int(&x["freq_khz"]))
            .collect()
    };
    let off = freqs("off");
    assert_eq!(off.len(), 36, "{off:?}");
    let (busy_end, after) = (off[29], off[31]);
    assert_eq!(
        busy_end, 1_800_000,
        "the busy phase reaches the top OPP: {off:?}"
    );
    assert!(after < busy_end, "{off:?}");
    let on = freqs("6.12");
    assert!(
        on[31] > after,
        "util_est ramps up faster: {on:?} vs {off:?}"
    );
}

#[test]
fn phase_cpus_off_the_machine_or_malformed_are_refused_in_one_line() {
    let text = r#"{"tasks": {"t": {"phases": {"p1": {"cpus": [0, 9], "run": 10}}}}}"#;
    let w = write("off.json", text);
    let e = fairsim_workloads::WorkloadSpec::parse(&w)
        .unwrap()
        .check(4)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tasks.t.phases.p1.cpus: CPU 9 is not on the 4-CPU machine; allowed: 0..=3"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
    for (text, want) in [
        (
            r#"{"tasks": {"t": {"phases": {"p1": {"cpus": 1, "run": 10}}}}}"#,
            "tasks.t.phases.p1.cpus: an integer is not allowed; allowed: an array of CPU numbers",
        ),
        (
            r#"{"tasks": {"t": {"phases": {"p1": {"cpus": [], "run": 10}}}}}"#,
            "tasks.t.phases.p1.cpus: an empty list",
        ),
        (
            r#"{"tasks": {"t": {"phases": {"p1": {"cpus": [-1], "run": 10}}}}}"#,
            "tasks.t.phases.p1.cpus: -1 is not a CPU",
        ),
        (
            r#"{"tasks": {"t": {"phases": {"p1": {"priority": 3, "run": 10}, "p2": {"priority": 4, "run": 10}}}}}"#,
            "tasks.t.phases.p2.priority: sets the priority (nice value): the nice value goes from 3 to 4 mid-run",
        ),
    ] {
        let e = Rtapp::parse("f.json", text).unwrap_err().to_string();
        assert!(e.contains(want), "{text}\n  got: {e}\n want: {want}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn passes_before_the_warm_up_ends_are_not_counted() {
    // A 10 ms period for 1 s: 100 passes, of which the last 60 end after a 400 ms warm-up.
    let text = r#"{"tasks": {"p": {"loop": -1, "run": 2000,
        "timer": {"ref": "unique", "period": 10000}}}}"#;
    let passes = |warmup_ms: u64| -> (i64, usize) {
        let mut s = spec("smt-mc-1s4c2t", "warm.json", text, 1_000);
        s.config.warmup = warmup_ms * fairsim_des::time::MS;
        let r = run(&s, &mut |_, _| {}).unwrap();
        let th = &r.reports[0].json["threads"][0];
        let acts = th["activations"].as_array().unwrap();
        // Every activation kept ends inside the window.
        for a in acts {
            assert!(int(&a["end_us"]) >= (warmup_ms * 1000) as i64, "{a}");
        }
        (int(&th["phases"][0]["passes"]), acts.len())
    };
    let (all, _) = passes(0);
    let (late, kept) = passes(400);
    assert!((99..=100).contains(&all), "{all}");
    assert!((59..=61).contains(&late), "{late} of {all}");
    assert_eq!(kept as i64, late);
}
