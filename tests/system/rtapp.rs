//! rt-app JSON workloads: parsing as rt-app does (comments, repeated events, phases,
//! instances), the periodic timer's activations, slack and wakeup latency, and one-line
//! refusals.

use crate::common;

use fairsim_workloads::run;
use fairsim_workloads::{Rtapp, WorkloadSpec};

fn file(name: &str) -> String {
    format!("{}/tests/data/rtapp/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn run_file(machine: &str, name: &str, ms: u64) -> fairsim_workloads::RunResult {
    let spec = format!("rtapp:{}", file(name));
    let mut s = common::spec(machine, &[spec.as_str()], ms, 7);
    s.config.check_invariants = true;
    run(&s, &mut |_, _| {}).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn phase(j: &serde_json::Value, thread: usize, phase: usize) -> &serde_json::Value {
    &j["threads"][thread]["phases"][phase]
}

fn int(v: &serde_json::Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

#[test]
fn a_periodic_task_alone_activates_once_per_period_with_the_expected_slack() {
    let w = WorkloadSpec::parse(&format!("rtapp:{}", file("periodic.json"))).unwrap();
    // global.duration is the run's own length; calibration and logdir are noted.
    assert_eq!(w.own_duration(), Some(1_000_000_000));
    assert!(
        w.notes().iter().any(|n| n.contains("calibration, logdir")),
        "{:?}",
        w.notes()
    );
    let r = run_file("smt-mc-1s4c2t", "periodic.json", 1_000);
    let j = &r.reports[0].json;
    assert_eq!(j["threads"][0]["name"], "thread0-0");
    let p = phase(j, 0, 0);
    // One pass per 16 ms boundary inside the second.
    assert_eq!(int(&p["passes"]), 1_000 / 16);
    assert_eq!(int(&p["slack_us"]["count"]), 1_000 / 16);
    // Alone, the 2 ms of work at capacity 1024 leave about 14 ms of the period, less the
    // wakeup latency: the timer's 50 us slack and the wakeup path.
    let wu_max = int(&p["wu_lat_us"]["max"]);
    assert!((40..200).contains(&wu_max), "wu_lat {p}");
    let slack = int(&p["slack_us"]["p50"]);
    assert!(
        (14_000 - 250..=14_000).contains(&slack),
        "slack {slack}: {p}"
    );
    assert!(r.reports[0].text.contains("thread0-0: 62 passes; slack"));
    assert!(r.reports[0].finished);
}

#[test]
fn work_is_scaled_by_capacity_on_a_little_cpu() {
    // tc2: CPUs 0-1 are the A15s (1024), 2-4 the A7s.
    let text = std::fs::read_to_string(file("periodic.json")).unwrap();
    let text = text.replace("\"instance\" : 1,", "\"instance\" : 1, \"cpus\" : [2],");
    let dir = std::env::temp_dir().join(format!("fairsim-rtapp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("little.json");
    std::fs::write(&path, text).unwrap();
    let spec = format!("rtapp:{}", path.display());
    let s = common::spec("tc2", &[spec.as_str()], 1_000, 7);
    let cap = u64::from(s.machine.cpus[2].capacity);
    assert!(cap < 1024, "tc2's CPU 2 is a little one: {cap}");
    let r = run(&s, &mut |_, _| {}).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let p = phase(&r.reports[0].json, 0, 0);
    let busy = (2_000u64 * 1024).div_ceil(cap) as i64;
    // The wakeup latency holds the little cluster's idle exit (tc2's cpuidle table).
    let wu = int(&p["wu_lat_us"]["p50"]);
    let slack = int(&p["slack_us"]["p50"]);
    let left = 16_000 - busy - wu;
    assert!(
        (left - 250..=left + 1).contains(&slack),
        "slack {slack}, busy {busy}, wu_lat {wu}: {p}"
    );
}

#[test]
fn phases_run_in_order_and_the_task_loop_repeats_them() {
    let r = run_file("smt-mc-1s4c2t", "two_phase.json", 1_000);
    let j = &r.reports[0].json;
    assert_eq!(j["threads"][0]["phases"][0]["phase"], "light");
    assert_eq!(int(&phase(j, 0, 0)["passes"]), 20);
    assert_eq!(int(&phase(j, 0, 1)["passes"]), 10);
    // light leaves 9 ms of its 10 ms period, heavy 4 ms.
    assert!(int(&phase(j, 0, 0)["slack_us"]["p50"]) > 8_500);
    let heavy = int(&phase(j, 0, 1)["slack_us"]["p50"]);
    assert!((3_500..4_000).contains(&heavy), "{heavy}");
    // Both loops are finite: the thread exits and the workload is complete.
    assert!(r.reports[0].finished);
    assert!(r.outcome.metrics().tasks[0].exited_at.is_some());
}

#[test]
fn comments_repeated_events_and_trailing_commas_are_read_as_json_c_does() {
    let text = std::fs::read_to_string(file("comments.json")).unwrap();
    let w = Rtapp::parse("comments.json", &text).unwrap();
    use fairsim_workloads::RtEvent;
    let ev = &w.tasks[0].phases[0].events;
    // The repeated "run" is one event, at the first one's place, with the last value.
    assert_eq!(
        ev,
        &[
            RtEvent::Run(1000),
            RtEvent::Sleep(2000),
            RtEvent::Runtime(500),
            RtEvent::Sleep(3000),
            RtEvent::Run(1000),
        ]
    );
    assert!(
        w.notes()
            .iter()
            .any(|n| n.contains("tasks.thread0.run is given more than once")),
        "{:?}",
        w.notes()
    );
    let r = run_file("smt-mc-1s4c2t", "comments.json", 1_000);
    assert_eq!(int(&phase(&r.reports[0].json, 0, 0)["passes"]), 5);
    // No timer: the passes have no slack or wakeup-latency samples.
    assert_eq!(
        int(&phase(&r.reports[0].json, 0, 0)["slack_us"]["count"]),
        0
    );
    assert!(r.reports[0].finished);
}

#[test]
fn instances_are_named_as_rt_app_names_them_and_keep_their_cpus() {
    let r = run_file("smt-mc-1s4c2t", "instances.json", 500);
    let j = &r.reports[0].json;
    let names: Vec<&str> = j["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["small-0", "small-1", "small-2", "pinned-3"]);
    assert_eq!(j["threads"][0]["nice"], 5);
    for t in 0..3 {
        let m = &r.outcome.tasks()[t];
        assert_eq!(m.name, format!("small-{t}"));
        assert_eq!(m.nice, 5);
        let cpus: Vec<usize> = m.cpus_allowed.as_ref().unwrap().iter().collect();
        assert_eq!(cpus, [1, 2]);
        // Each instance has its own unique timer: the boundaries at 10, 20, ..., 490 ms
        // (the one at 500 ms is where the run stops).
        assert_eq!(int(&phase(j, t, 0)["passes"]), 49);
    }
    let pinned: Vec<usize> = r.outcome.tasks()[3]
        .cpus_allowed
        .as_ref()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(pinned, [3]);
    // The 5 ms delay does not move the shared timer's grid, which starts at 0.
    assert_eq!(int(&phase(j, 3, 0)["passes"]), 24);
    assert!(int(&phase(j, 3, 0)["slack_us"]["p50"]) > 16_000);
}

#[test]
fn shared_timers_advance_once_per_use() {
    // Two threads on one "ref": each use moves the shared instant by a period, so each
    // thread is woken every other period (rt-app's documented caveat).
    let text = r#"{"tasks": {"a": {"instance": 2, "run": 100,
        "timer": {"ref": "shared", "period": 10000}}}}"#;
    let dir = std::env::temp_dir().join(format!("fairsim-rtapp-shared-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("shared.json");
    std::fs::write(&path, text).unwrap();
    let spec = format!("rtapp:{}", path.display());
    let s = common::spec("smt-mc-1s4c2t", &[spec.as_str()], 1_000, 7);
    let r = run(&s, &mut |_, _| {}).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let j = &r.reports[0].json;
    let total = int(&phase(j, 0, 0)["passes"]) + int(&phase(j, 1, 0)["passes"]);
    assert!((99..=100).contains(&total), "{total}");
}

#[test]
fn bad_files_are_refused_in_one_line_naming_the_key() {
    let cases: [(&str, &str); 10] = [
        (r#"{"global": {}}"#, "tasks: missing"),
        (
            r#"{"tasks": {"t": {"phases": {"p1": {"rn": 10}}}}}"#,
            "tasks.t.phases.p1.rn: unknown key; allowed: events run*",
        ),
        (
            r#"{"tasks": {"t": {"run": "10"}}}"#,
            "tasks.t.run: a string is not allowed",
        ),
        (
            r#"{"tasks": {"t": {"run": 1.5}}}"#,
            "tasks.t.run: a floating-point number",
        ),
        (
            r#"{"tasks": {"t": {"run": 10, "lock": "m"}}}"#,
            "tasks.t.lock: rt-app's 'lock' event is not modelled",
        ),
        (
            r#"{"tasks": {"t": {"run": 10, "policy": "SCHED_FIFO"}}}"#,
            "tasks.t.policy: 'SCHED_FIFO' is not modelled",
        ),
        (
            r#"{"tasks": {"t": {"timer": {"ref": "a", "period": 10, "mode": "abs"}}}}"#,
            "tasks.t.timer.mode: 'abs' is not allowed; allowed: relative or absolute",
        ),
        (r#"{"tasks": {"t": {"loop": 3}}}"#, "tasks.t: no event"),
        (
            r#"{"tasks": {"t": {"run": 10}}, "global": {"durration": 1}}"#,
            "global.durration: unknown key",
        ),
        (
            "{\"tasks\": {\"t\": {\"run\": 10}\n\"x\": 1}}",
            "line 2: expected ',' or '}'",
        ),
    ];
    for (text, want) in cases {
        let e = Rtapp::parse("f.json", text).unwrap_err().to_string();
        assert!(e.contains(want), "{text}\n  got: {e}\n want: {want}");
        assert!(e.contains("rtapp f.json: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
    let e = WorkloadSpec::parse("rtapp:/nonexistent/x.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("rtapp /nonexistent/x.json: "), "{e}");
    let w = WorkloadSpec::parse(&format!("rtapp:{}", file("instances.json"))).unwrap();
    let e = w.check(2).unwrap_err().to_string();
    assert!(
        e.contains("tasks.small.cpus: CPU 2 is not on the 2-CPU machine"),
        "{e}"
    );
}

#[test]
fn taskgroups_are_read_as_rt_app_reads_them() {
    let r = Rtapp::load(&file("taskgroups.json")).unwrap();
    let groups: Vec<Option<&str>> = r.tasks.iter().map(|t| t.taskgroup.as_deref()).collect();
    // "" is no taskgroup (parse_taskgroup_data returns NULL for an empty name).
    assert_eq!(groups, [Some("/r/big"), Some("/a"), None]);
    let w = WorkloadSpec::parse(&format!("rtapp:{},cgroup=/l", file("taskgroups.json"))).unwrap();
    let joins: Vec<(String, bool)> = w
        .cgroup_joins()
        .into_iter()
        .map(|j| (j.path, j.creates))
        .collect();
    assert_eq!(
        joins,
        [
            ("/l".to_string(), false),
            ("/r/big".to_string(), true),
            ("/a".to_string(), true)
        ]
    );
    let many: Vec<String> = (0..33)
        .map(|i| format!("\"t{i}\": {{\"taskgroup\": \"/g{i}\", \"run\": 10}}"))
        .collect();
    let cases = [
        (
            r#"{"tasks": {"t": {"taskgroup": "a", "run": 10}}}"#.to_string(),
            "tasks.t.taskgroup: invalid value 'a' (not absolute)",
        ),
        (
            r#"{"tasks": {"t": {"taskgroup": 3, "run": 10}}}"#.to_string(),
            "tasks.t.taskgroup: an integer is not allowed; allowed: a string",
        ),
        (
            r#"{"tasks": {"t": {"phases": {"p": {"taskgroup": "/a", "run": 10},
                "q": {"taskgroup": "/b", "run": 10}}}}}"#
                .to_string(),
            "tasks.t.phases.q.taskgroup: changes the task group from /a to /b mid-run, which is not modelled",
        ),
        (
            r#"{"tasks": {"t": {"dl-runtime": 10, "run": 10}}}"#.to_string(),
            "tasks.t.dl-runtime: deadline parameters are not modelled",
        ),
        (
            format!("{{\"tasks\": {{{}}}}}", many.join(",")),
            "tasks: 33 distinct taskgroups; allowed: at most 32 (rt-app's max_nbr_tgs)",
        ),
    ];
    for (text, want) in cases {
        let e = Rtapp::parse("f.json", &text).unwrap_err().to_string();
        assert!(e.contains(want), "{text}\n  got: {e}\n want: {want}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn policies_and_clamps_as_parse_sched_data_reads_them() {
    use fairsim_balance::Policy;
    let parse = |text: &str| Rtapp::parse("f.json", text).unwrap();
    // SCHED_BATCH (rt-app's string_to_policy took it in 2026); -1 clamps set nothing.
    let r = parse(
        r#"{"tasks": {"b": {"policy": "SCHED_BATCH", "priority": 3,
            "util_min": -1, "util_max": -1, "run": 10}}}"#,
    );
    assert_eq!(
        (r.tasks[0].policy, r.tasks[0].nice, r.tasks[0].uclamp),
        (Policy::Batch, 3, None)
    );
    // global.default_policy is every task's, and a phase's own settings are the thread's
    // when they hold for every phase: one clamp given, the other at the kernel's default.
    let r = parse(
        r#"{"global": {"default_policy": "SCHED_IDLE"}, "tasks": {"t": {"phases": {
            "a": {"util_max": 512, "taskgroup": "/g", "nodes_membind": [0], "run": 10},
            "b": {"util_max": -1, "taskgroup": "", "run": 10}}}}}"#,
    );
    let t = &r.tasks[0];
    assert_eq!(
        (t.policy, t.uclamp, t.taskgroup.as_deref()),
        (Policy::Idle, Some((0, 512)), Some("/g"))
    );
    assert!(
        r.notes()
            .iter()
            .any(|n| n.contains("nodes_membind of 1 phase(s) ignored")),
        "{:?}",
        r.notes()
    );
    for (text, want) in [
        (
            r#"{"global": {"default_policy": "SCHED_RR"}, "tasks": {"t": {"run": 10}}}"#,
            "global.default_policy: 'SCHED_RR' is not modelled",
        ),
        (
            // The policy is named, not the real-time priority that comes first.
            r#"{"tasks": {"t": {"priority": 50, "policy": "SCHED_FIFO", "run": 10}}}"#,
            "tasks.t.policy: 'SCHED_FIFO' is not modelled",
        ),
        (
            r#"{"tasks": {"t": {"phases": {"p": {"priority": 50, "policy": "SCHED_FIFO", "run": 10}}}}}"#,
            "tasks.t.phases.p.policy: 'SCHED_FIFO' is not modelled",
        ),
        (
            r#"{"tasks": {"t": {"util_min": -2, "run": 10}}}"#,
            "tasks.t.util_min: -2 is out of range; allowed: an integer in -1..=1024",
        ),
        (
            r#"{"tasks": {"t": {"phases": {"p": {"policy": "SCHED_OTHR", "run": 10}}}}}"#,
            "tasks.t.phases.p.policy: 'SCHED_OTHR' is not a policy rt-app knows",
        ),
        (
            r#"{"tasks": {"t": {"phases": {"p": {"dl-runtime": 10, "run": 10}}}}}"#,
            "tasks.t.phases.p.dl-runtime: deadline parameters are not modelled",
        ),
    ] {
        let e = Rtapp::parse("f.json", text).unwrap_err().to_string();
        assert!(e.contains(want), "{text}\n  got: {e}\n want: {want}");
        assert!(!e.contains('\n'), "{e}");
    }
}
