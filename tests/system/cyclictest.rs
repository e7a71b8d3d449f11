//! cyclictest (rt-tests 0.85): the threads' intervals, the cycle count and latencies on an
//! idle machine, the idle state's exit latency in Min, affinity, `-l`'s early stop, the
//! end of a run by `-D`, and one-line refusals.

use crate::common;

use fairsim_des::time::{MS, SEC};
use fairsim_workloads::run::{run, RunResult};
use fairsim_workloads::WorkloadSpec;
use proptest::prelude::*;

fn run_spec(machine: &str, spec: &str, ms: u64, idle: Option<&str>) -> RunResult {
    let mut s = common::spec(machine, &[spec], ms, 7);
    s.config.check_invariants = true;
    if let Some(states) = idle {
        let n = s.machine.nr_cpus();
        s.config.idle_states = Some(fairsim_cpuidle::parse_idle_states(states, n).unwrap());
    }
    run(&s, &mut |_, _| {}).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn int(v: &serde_json::Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn threads(r: &RunResult) -> &Vec<serde_json::Value> {
    r.reports[0].json["threads"].as_array().unwrap()
}

/// The error of `spec` on `machine`, from parsing or from the run's checks.
fn error(machine: &str, spec: &str) -> String {
    match WorkloadSpec::parse(spec) {
        Err(e) => e.to_string(),
        Ok(w) => {
            let mut s = common::spec(machine, &["cyclictest:n"], 10, 1);
            s.workloads = vec![w];
            match run(&s, &mut |_, _| {}) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{spec} was accepted"),
            }
        }
    }
}

#[test]
fn thread_k_gets_i_plus_k_times_d_and_counts_duration_over_interval() {
    // Idle machine, one thread per CPU of its own: each thread measures from its own
    // start until the first thread passes D, so C is D/I give or take one cycle.
    let r = run_spec(
        "smt-mc-1s4c2t",
        "cyclictest:t=4,a,n,i=200,d=300,D=1",
        2_000,
        None,
    );
    let th = threads(&r);
    assert_eq!(th.len(), 4);
    for (k, t) in th.iter().enumerate() {
        let interval = int(&t["interval_us"]);
        assert_eq!(interval, 200 + 300 * k as i64, "{t}");
        let want = 1_000_000 / interval;
        let c = int(&t["cycles"]);
        assert!((c - want).abs() <= 1, "thread {k}: C {c}, D/I {want}");
        assert!(
            int(&t["min_us"]) >= 0 && int(&t["max_us"]) >= int(&t["min_us"]),
            "{t}"
        );
    }
    assert!(r.reports[0].finished);
    // The tool ends the run by itself: D, one interval, main's last 10 ms round and its
    // 50 ms wait, well before the 2 s the world was given.
    let end = r.outcome.now().0;
    assert!((SEC..SEC + 100 * MS).contains(&end), "ended at {end}");
}

#[test]
fn an_idle_cpus_thread_measures_the_timer_slack_and_the_wakeup_path() {
    // flat: C1 with a 1 us exit. The hrtimer fires at its hard expiry (next + 50 us of
    // slack) on a quiet CPU, then the interrupt, the idle exit, the wakeup and the switch.
    let r = run_spec(
        "smt-mc-1s4c2t",
        "cyclictest:t=1,a=2,n,D=1",
        2_000,
        Some("flat"),
    );
    let t = &threads(&r)[0];
    let (min, max, avg) = (int(&t["min_us"]), int(&t["max_us"]), int(&t["avg_us"]));
    assert!((50..60).contains(&min), "{t}");
    assert!(max - min <= 5 && (min..=max).contains(&avg), "{t}");
    assert_eq!(t["cpus"], serde_json::json!([2]));
}

#[test]
fn the_idle_states_exit_latency_shows_up_in_min() {
    // The same thread with a 300 us state the menu governor can pick for a 1 ms sleep
    // (target residency 400 us): every wakeup pays its exit latency on top.
    let base = run_spec(
        "tc2",
        "cyclictest:t=1,a=0,n,D=1",
        2_000,
        Some("WFI:1us:1us"),
    );
    let deep = run_spec(
        "tc2",
        "cyclictest:t=1,a=0,n,D=1",
        2_000,
        Some("WFI:1us:1us,deep:300us:400us"),
    );
    let min = |r: &RunResult| int(&threads(r)[0]["min_us"]);
    let extra = min(&deep) - min(&base);
    assert!(
        (295..=305).contains(&extra),
        "Min {} vs {}",
        min(&deep),
        min(&base)
    );
    // The header says cyclictest would have held the deeper state off.
    assert!(
        deep.reports[0].text.contains("this run may enter deep"),
        "{}",
        deep.reports[0].text
    );
    assert!(!base.reports[0].text.contains("cpu_dma_latency"));
}

#[test]
fn affinity_pins_thread_k_to_cpu_k_mod_ncpus_or_all_to_one() {
    // tc2 has 5 CPUs: thread 6 goes to CPU 1 with -a alone.
    let r = run_spec("tc2", "cyclictest:t=7,a,n,D=1", 2_000, None);
    for (k, t) in threads(&r).iter().enumerate() {
        assert_eq!(t["cpu"], serde_json::json!(k % 5), "{t}");
        assert_eq!(t["cpus"], serde_json::json!([k % 5]), "{t}");
        assert!(int(&t["cycles"]) > 0, "{t}");
    }
    let r = run_spec("tc2", "cyclictest:t=3,a=3,n,D=1", 2_000, None);
    for t in threads(&r) {
        assert_eq!(t["cpus"], serde_json::json!([3]), "{t}");
    }
    // Without a, cpus=LIST confines the threads as taskset does.
    let r = run_spec("tc2", "cyclictest:t=4,n,D=1,cpus=2-3", 2_000, None);
    for t in threads(&r) {
        assert_eq!(t["cpu"], serde_json::Value::Null);
        let cpus = t["cpus"].as_array().unwrap();
        assert!(cpus.iter().all(|c| (2..=3).contains(&int(c))), "{t}");
    }
}

#[test]
fn loops_end_the_run_when_the_first_thread_has_done_them() {
    // 0.85's main leaves its loop as soon as one thread has done its -l cycles: thread 0
    // (1 ms) does 200, thread 1 (1.5 ms) stops at its next wakeup, about 133 + 7.
    let r = run_spec("tc2", "cyclictest:t=2,a,n,l=200", 5_000, None);
    let th = threads(&r);
    assert_eq!(int(&th[0]["cycles"]), 200);
    let c1 = int(&th[1]["cycles"]);
    assert!((133..=145).contains(&c1), "thread 1: {c1}");
    assert!(r.reports[0].finished);
    assert!(r.outcome.now().0 < 400 * MS, "{}", r.outcome.now().0);
}

#[test]
fn main_signals_a_thread_still_asleep() {
    // Thread 1's period is 400.5 ms: at 1 s it sleeps until 1.2 s, and main's SIGTERM,
    // 50 ms after it saw the shutdown, ends the sleep without a measurement.
    let r = run_spec("tc2", "cyclictest:t=2,a,n,d=399500,D=1", 3_000, None);
    let th = threads(&r);
    assert_eq!(int(&th[1]["interval_us"]), 400_500);
    assert_eq!(int(&th[1]["cycles"]), 2);
    let end = r.outcome.now().0;
    assert!(end < SEC + 100 * MS, "ended at {end}");
    assert!(r.reports[0].finished);
}

#[test]
fn without_d_the_run_length_bounds_it_and_a_warmup_is_left_out() {
    let mut s = common::spec("tc2", &["cyclictest:t=1,a=0,n"], 1_000, 3);
    s.config.warmup = 500 * MS;
    let r = run(&s, &mut |_, _| {}).unwrap();
    let c = int(&threads(&r)[0]["cycles"]);
    assert!((495..=500).contains(&c), "C {c}");
    assert!(
        r.reports[0].finished,
        "an endless tool is complete when the run stops"
    );
    let w = WorkloadSpec::parse("cyclictest:n").unwrap();
    assert_eq!(fairsim_workloads::run::default_duration(&[w]), 5 * SEC);
    let w = WorkloadSpec::parse("cyclictest:n,D=10").unwrap();
    assert_eq!(w.own_duration(), Some(10 * SEC + 101 * MS));
}

#[test]
fn the_output_is_print_stats_layout() {
    let r = run_spec("tc2", "cyclictest:t=2,a,n,D=1,p=80", 2_000, None);
    let text = &r.reports[0].text;
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("T:")).collect();
    assert_eq!(lines.len(), 2, "{text}");
    // "T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld"
    let t = &threads(&r)[0];
    let want = format!(
        "T: 0 ({:5}) P:80 I:1000 C:{:7} Min:{:7} Act:{:5} Avg:{:5} Max:{:8}",
        int(&t["tid"]),
        int(&t["cycles"]),
        int(&t["min_us"]),
        int(&t["act_us"]),
        int(&t["avg_us"]),
        int(&t["max_us"])
    );
    assert_eq!(lines[0], want);
    assert!(lines[1].starts_with("T: 1 (") && lines[1].contains(" P:80 I:1500 C:    667 "));
    assert!(text
        .contains("not modelled: SCHED_FIFO threads run as SCHED_OTHER (fair class) in fairsim"));
    let j = &r.reports[0].json;
    assert_eq!(int(&j["cycles"]), 1_000 + 667);
    assert!(j["latency_avg_us"].as_f64().unwrap() > 0.0);
}

#[test]
fn bad_input_gets_one_line_naming_the_field() {
    for (machine, spec, want) in [
        ("tc2", "cyclictest:t=2,a", "n: missing"),
        ("tc2", "cyclictest:n,x=1", "unknown key 'x'"),
        ("tc2", "cyclictest:n,t=0", "t: invalid value '0'"),
        ("tc2", "cyclictest:n,i=0", "i: invalid value '0'"),
        ("tc2", "cyclictest:n,i=-100", "i: invalid value '-100'"),
        ("tc2", "cyclictest:n,d=-5", "d: invalid value '-5'"),
        ("tc2", "cyclictest:n,D=0", "D: invalid value '0'"),
        ("tc2", "cyclictest:n,l=0", "l: invalid value '0'"),
        ("tc2", "cyclictest:n,p=-1", "p: invalid value '-1'"),
        ("tc2", "cyclictest:n,cpus=x", "cpus: invalid value 'x'"),
        ("tc2", "cyclictest:n,cpus=3-1", "cpus: invalid value '3-1'"),
        (
            "tc2",
            "cyclictest:n,cpus=7",
            "CPU 7 is not on the 5-CPU machine",
        ),
        ("tc2", "cyclictest:n,a=5", "a: invalid value '5'"),
        (
            "tc2",
            "cyclictest:n,t,i=2147483647,d=1",
            "d: invalid value '1'",
        ),
    ] {
        let e = error(machine, spec);
        assert!(e.contains(want), "{spec}: {e}");
        assert!(e.contains("allowed"), "{spec}: {e}");
        assert!(!e.contains('\n'), "{spec}: {e}");
    }
}

proptest! {
    #![proptest_config(common::fuzz_config(64, 64))]

    /// Any body is parsed or refused in one line, never a panic; whatever parses runs.
    #[test]
    fn any_body_parses_or_is_refused(
        body in proptest::collection::vec(
            prop_oneof![
                Just("n".to_string()),
                Just("a".to_string()),
                Just("t".to_string()),
                Just("q".to_string()),
                (prop_oneof![Just("t"), Just("i"), Just("d"), Just("a"), Just("l"), Just("p"),
                    Just("D"), Just("threads"), Just("interval"), Just("cpus"), Just("zz")],
                 "-?[0-9]{0,3}[a-z]{0,2}")
                    .prop_map(|(k, v)| format!("{k}={v}")),
            ],
            0..6,
        )
    ) {
        let spec = format!("cyclictest:{}", body.join(","));
        match WorkloadSpec::parse(&spec) {
            Err(e) => prop_assert!(!e.to_string().contains('\n')),
            Ok(w) => {
                let mut s = common::spec("tc2", &["cyclictest:n"], 30, 1);
                s.workloads = vec![w];
                if let Err(e) = run(&s, &mut |_, _| {}) {
                    prop_assert!(!e.to_string().contains('\n'), "{e}");
                }
            }
        }
    }
}
