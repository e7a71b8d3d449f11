//! CPU frequency: frequency invariance of work and PELT, schedutil's choices on an
//! always-running and a lightly loaded task, the governors' fixed frequencies, the
//! outputs, and one-line refusals.

use crate::common;

use fairsim_balance::cpufreq::{CpufreqError, Governor};
use fairsim_des::time::MS;
use fairsim_engine::{CostTable, EngineError, WorldConfig};
use fairsim_pelt::sim::{summarize, Pattern, Sample, SimParams};
use fairsim_topology::source::{parse_spec, preset, SpecOptions};
use fairsim_topology::{Arch, BuildOptions, CpuMask, FreqDomain, Machine, Opp};
use fairsim_workloads::run::{prepare, run, RunSpec, DEFAULT_MEMORY_BUDGET};
use fairsim_workloads::{Rtapp, Workload, WorkloadSpec};

/// A one-CPU arm64 machine whose only policy has two OPPs, 512 and 1024 MHz, so that the
/// lower one is exactly half the frequency scale (512 of 1024).
fn one_cpu_two_opps() -> Machine {
    let mut m = parse_spec(&SpecOptions::new("1", Arch::Arm64)).unwrap();
    m.name = "one-cpu".into();
    m.cpufreq = vec![FreqDomain {
        cpus: CpuMask::full(1),
        opps: [512_000, 1_024_000]
            .iter()
            .map(|&khz| Opp {
                khz,
                microvolt: None,
                power_uw: None,
            })
            .collect(),
        transition_latency_ns: 10_000,
        dynamic_power_coefficient: None,
    }];
    m.validate().unwrap();
    m
}

/// Every cost of the table set to zero, so that task work alone sets the times.
fn no_costs() -> CostTable {
    let mut c = CostTable::default();
    for name in CostTable::NAMES {
        c.apply(&format!("{name}=0ns")).unwrap();
    }
    c
}

fn spec_on(machine: Machine, workloads: Vec<WorkloadSpec>, ms: u64, governor: Governor) -> RunSpec {
    RunSpec {
        cpusets: Vec::new(),
        machine: machine.into(),
        build: BuildOptions::default(),
        workloads,
        config: WorldConfig {
            duration: ms * MS,
            governor: Some(governor),
            check_invariants: true,
            ..WorldConfig::default()
        },
        memory_budget: DEFAULT_MEMORY_BUDGET,
    }
}

fn rtapp(text: &str) -> WorkloadSpec {
    WorkloadSpec {
        workload: Workload::Rtapp(Rtapp::parse("t.json", text).unwrap()),
        cpus: None,
        mem: None,
        uclamp: None,
        nice: None,
        policy: None,
        cgroup: None,
    }
}

#[test]
fn work_at_half_frequency_takes_twice_as_long() {
    let exit_at = |khz: u32| {
        let w = WorkloadSpec::parse("sysbench-cpu:threads=1,events=50,event=1ms").unwrap();
        let mut s = spec_on(
            one_cpu_two_opps(),
            vec![w],
            1_000,
            Governor::Userspace { khz },
        );
        s.config.cost = no_costs();
        let r = run(&s, &mut |_, _| {}).unwrap();
        assert_eq!(
            r.outcome.sched().rqs[0].freq_capacity,
            u64::from(khz) * 1024 / 1_024_000
        );
        let t = (0..r.outcome.tasks().len())
            .find(|&t| r.outcome.tasks()[t].name == "sysbench0")
            .unwrap();
        r.outcome.task_metrics(t).exited_at.unwrap()
    };
    let full = exit_at(1_024_000);
    let half = exit_at(512_000);
    assert_eq!(full, 50 * MS, "50 events of 1 ms at full speed");
    assert_eq!(half, 100 * MS, "the same work at half the frequency");
}

/// The rt-app task's `util_avg` over the second half of a run on `one_cpu_two_opps` at
/// `khz`, (min, max) at every event, as the PELT emulation summarises its samples.
fn settled_util(khz: u32, ms: u64) -> (u64, u64) {
    let text =
        r#"{"tasks": {"t": {"loop": -1, "run": 2000, "timer": {"ref": "t", "period": 16000}}}}"#;
    let mut s = spec_on(
        one_cpu_two_opps(),
        vec![rtapp(text)],
        ms,
        Governor::Userspace { khz },
    );
    s.config.cost = no_costs();
    s.config.timer_slack = 0;
    let mut w = prepare(&s).unwrap();
    let mut range: Option<(u64, u64)> = None;
    while w.step().unwrap() {
        if w.now().0 < ms * MS / 2 {
            continue;
        }
        if let Some(sid) = w.tasks()[0].sched_id {
            let u = w.sched().tasks[sid].se.avg.util_avg;
            range = Some(range.map_or((u, u), |(lo, hi)| (lo.min(u), hi.max(u))));
        }
    }
    range.unwrap()
}

/// What the PELT emulation says for a task running `run_ms` of every 16 ms of wall time
/// on a CPU at frequency scale `freq`.
fn pelt_says(run_ms: u64, freq: u64, ms: u64) -> (u64, u64) {
    let pattern = Pattern::duty(run_ms * MS, (16 - run_ms) * MS).unwrap();
    let mut p = SimParams::new(pattern, ms * MS);
    p.freq_capacity = freq;
    let samples: Vec<Sample> = fairsim_pelt::sim::simulate(&p).unwrap();
    summarize(&samples, ms * MS, 1024).settled_util.unwrap()
}

#[test]
fn util_settles_where_the_invariant_pelt_clock_puts_it() {
    // 2 ms of work every 16 ms: at full speed the task runs 2 ms, at half speed 4 ms of
    // wall time; with frequency invariance both settle near 1/8 of 1024.
    let ms = 800;
    let full = settled_util(1_024_000, ms);
    let half = settled_util(512_000, ms);
    let want_full = pelt_says(2, 1024, ms);
    let want_half = pelt_says(4, 512, ms);
    let near = |got: (u64, u64), want: (u64, u64)| {
        got.0.abs_diff(want.0) <= 3 && got.1.abs_diff(want.1) <= 3
    };
    assert!(
        near(full, want_full),
        "full speed {full:?}, PELT {want_full:?}"
    );
    assert!(
        near(half, want_half),
        "half speed {half:?}, PELT {want_half:?}"
    );
    // Without invariance the 4 ms runs would count twice: far above what was measured.
    let not_invariant = pelt_says(4, 1024, ms);
    assert!(
        half.1 + 40 < not_invariant.1,
        "half {half:?} vs a non-invariant clock {not_invariant:?}"
    );
}

fn rk3399_run(
    workloads: Vec<WorkloadSpec>,
    ms: u64,
    governor: Governor,
) -> fairsim_workloads::RunResult {
    let s = spec_on(preset("rk3399").unwrap(), workloads, ms, governor);
    run(&s, &mut |_, _| {}).unwrap()
}

/// Time in state of `policy` in ns, `(kHz, ns)` per OPP.
fn time_in_state(r: &fairsim_workloads::RunResult, policy: usize) -> Vec<(u32, u64)> {
    let cf = r.outcome.sched().cpufreq.as_ref().unwrap();
    cf.policies[policy]
        .stats
        .time_in_state_ns(r.outcome.now().0)
}

#[test]
fn schedutil_takes_an_always_running_task_to_the_top_opp() {
    let w = WorkloadSpec::parse("sysbench-cpu:threads=1,events=100000,cpus=4").unwrap();
    let r = rk3399_run(vec![w], 1_000, Governor::DEFAULT);
    let cf = r.outcome.sched().cpufreq.as_ref().unwrap();
    let big = &cf.policies[1];
    assert_eq!(big.cur, 1_800_000);
    assert_eq!(r.outcome.sched().rqs[4].freq_capacity, 1024);
    let tis = time_in_state(&r, 1);
    let total: u64 = tis.iter().map(|x| x.1).sum();
    let top = tis.last().unwrap().1;
    assert!(top * 10 > total * 8, "{tis:?}");
    // It climbed through the OPPs as the invariant util grew: one transition per step,
    // never down.
    let rt = r.outcome.cpufreq_rt().unwrap();
    let steps: Vec<u32> = rt
        .timeline
        .iter()
        .filter(|c| c.policy == 1)
        .map(|c| c.khz)
        .collect();
    assert!(steps.windows(2).all(|p| p[0] < p[1]), "{steps:?}");
    assert_eq!(steps.last(), Some(&1_800_000));
}

#[test]
fn schedutil_keeps_a_ten_percent_task_low() {
    let text = r#"{"tasks": {"t": {"loop": -1, "run": 1000, "cpus": [4], "timer": {"ref": "t", "period": 10000}}}}"#;
    let r = rk3399_run(vec![rtapp(text)], 1_000, Governor::DEFAULT);
    let tis = time_in_state(&r, 1);
    let total: u64 = tis.iter().map(|x| x.1).sum();
    // Invariant util about 100 of 1024: 125 with the headroom asks for 220 MHz, and the
    // lowest efficient OPP, 816 MHz (408 and 600 MHz cost more per unit of work at the
    // same voltage), is where the policy stays.
    let low: u64 = tis.iter().filter(|x| x.0 <= 1_008_000).map(|x| x.1).sum();
    assert!(low * 10 > total * 9, "{tis:?}");
    let at_816 = tis.iter().find(|x| x.0 == 816_000).unwrap().1;
    assert!(at_816 * 10 > total * 8, "{tis:?}");
}

#[test]
fn fixed_governors_pin_every_policy() {
    let w = || vec![WorkloadSpec::parse("sysbench-cpu:threads=2,events=100").unwrap()];
    for (g, want) in [
        (Governor::Performance, [1_416_000, 1_800_000]),
        (Governor::Powersave, [408_000, 408_000]),
        (
            Governor::Userspace { khz: 1_500_000 },
            [1_416_000, 1_608_000],
        ),
    ] {
        let r = rk3399_run(w(), 200, g);
        let cf = r.outcome.sched().cpufreq.as_ref().unwrap();
        let cur: Vec<u32> = cf.policies.iter().map(|p| p.cur).collect();
        assert_eq!(cur, want, "{g:?}");
        assert!(
            cf.policies.iter().all(|p| p.stats.total_trans == 0),
            "{g:?}"
        );
        let scale = (u64::from(want[0]) << 10) / 1_416_000;
        assert_eq!(r.outcome.sched().rqs[0].freq_capacity, scale, "{g:?}");
    }
}

#[test]
fn outputs_carry_time_in_state_timeline_and_energy() {
    let w = WorkloadSpec::parse("sysbench-cpu:threads=1,events=100000,cpus=4").unwrap();
    let s = spec_on(preset("rk3399").unwrap(), vec![w], 500, Governor::DEFAULT);
    let r = run(&s, &mut |_, _| {}).unwrap();
    let text = fairsim_output::summary(&s, &r);
    assert!(text.contains("== cpufreq: governor schedutil =="), "{text}");
    assert!(text.contains("policy4 (CPUs 4-5)"), "{text}");
    assert!(text.contains("    1800000 "), "{text}");
    let j = fairsim_output::to_json(&s, &r);
    let cf = &j["cpufreq"];
    assert_eq!(cf["governor"], "schedutil");
    assert_eq!(cf["policies"][1]["rate_limit_us"], 60);
    let tis = cf["policies"][1]["stats"]["time_in_state"]
        .as_array()
        .unwrap();
    let units: u64 = tis.iter().map(|x| x[1].as_u64().unwrap()).sum();
    // 500 ms in 10 ms units, give or take the truncation of each line.
    assert!((42..=50).contains(&units), "{tis:?}");
    let transitions = cf["timeline"]["transitions"].as_array().unwrap();
    assert!(!transitions.is_empty());
    let total = cf["energy_uj"].as_u64().unwrap();
    // At most 500 ms of one A72 at its top OPP (1.13 W), the rest at lower power.
    assert!(total > 100_000 && total < 565_056, "{total}");
    // Runs of the same inputs are the same bytes.
    let again = fairsim_output::to_json(&s, &run(&s, &mut |_, _| {}).unwrap());
    assert_eq!(j.to_string(), again.to_string());
}

#[test]
fn a_machine_without_cpufreq_has_no_cpufreq_output() {
    let s = common::spec("tc2", &["sysbench-cpu:threads=1,events=10"], 50, 1);
    let r = run(&s, &mut |_, _| {}).unwrap();
    assert!(r.outcome.sched().cpufreq.is_none());
    assert!(r
        .outcome
        .sched()
        .rqs
        .iter()
        .all(|rq| rq.freq_capacity == 1024));
    let j = fairsim_output::to_json(&s, &r);
    assert!(j.get("cpufreq").is_none());
    assert!(!fairsim_output::summary(&s, &r).contains("cpufreq"));
}

#[test]
fn bad_governor_settings_are_one_line_errors() {
    let mut s = common::spec("tc2", &["sysbench-cpu:threads=1,events=10"], 50, 1);
    s.config.governor = Some(Governor::Performance);
    let e = match prepare(&s) {
        Err(e @ EngineError::Cpufreq(CpufreqError::NoPolicies { .. })) => e.to_string(),
        other => panic!("{other:?}"),
    };
    assert!(
        e.contains("--governor") && e.contains("no cpufreq") && !e.contains('\n'),
        "{e}"
    );
    let w = WorkloadSpec::parse("sysbench-cpu:threads=1,events=10").unwrap();
    let s = spec_on(
        preset("rk3399").unwrap(),
        vec![w],
        50,
        Governor::Userspace { khz: 1200 },
    );
    let e = prepare(&s).unwrap_err();
    assert!(
        matches!(
            e,
            EngineError::Cpufreq(CpufreqError::OutsideRange { khz: 1200, .. })
        ),
        "{e:?}"
    );
    let e = e.to_string();
    assert!(
        e.contains("userspace:1200") && e.contains("408000 to 1800000 kHz"),
        "{e}"
    );
}

#[test]
fn every_transition_is_traced_on_each_cpu_of_its_policy() {
    // rk3399's two policies (CPUs 0-3 and 4-5) under schedutil with a task that ramps
    // the big cluster: each transition the timeline keeps is one `cpu_frequency` per CPU
    // of its policy, at the same instant and with the same frequency.
    let text = r#"{"tasks": {"r": {"loop": -1, "cpus": [4], "run": 20000,
        "timer": {"ref": "unique", "period": 200000}}}}"#;
    let mut s = spec_on(
        preset("rk3399").unwrap(),
        vec![rtapp(text)],
        1_000,
        Governor::DEFAULT,
    );
    s.config.trace = Some(fairsim_trace::TraceConfig::events());
    let mut r = run(&s, &mut |_, _| {}).unwrap();
    let timeline: Vec<(u64, u32, u32)> = r
        .outcome
        .cpufreq_rt()
        .unwrap()
        .timeline
        .iter()
        .map(|c| (c.at, c.policy, c.khz))
        .collect();
    assert!(timeline.len() >= 4, "{timeline:?}");
    let trace = r.outcome.take_trace().unwrap();
    let mut traced: Vec<(u64, u32, u32)> = trace
        .records
        .iter()
        .filter_map(|rec| match rec.event {
            fairsim_trace::TraceEvent::CpuFrequency { khz } => Some((rec.ts, rec.cpu, khz)),
            _ => None,
        })
        .collect();
    traced.sort_unstable();
    let mut expect: Vec<(u64, u32, u32)> = timeline
        .iter()
        .flat_map(|&(at, policy, khz)| {
            let cpus: &[u32] = if policy == 0 { &[0, 1, 2, 3] } else { &[4, 5] };
            cpus.iter().map(move |&c| (at, c, khz))
        })
        .collect();
    expect.sort_unstable();
    assert_eq!(traced, expect);
}

#[test]
fn work_follows_the_frequency_across_a_transition_on_one_cpu() {
    // One always-running thread on the two-OPP CPU under schedutil: it starts at 512 MHz
    // and is raised to 1024 MHz as its utilization grows, with segment after segment on
    // the same CPU on both sides of the change. Whatever the engine keeps of a segment's
    // rate, the work done must be what the frequencies say: each ns busy at 512 MHz does
    // half the work of one at 1024 MHz.
    let w = WorkloadSpec::parse("sysbench-cpu:threads=1,events=50,event=1ms").unwrap();
    let mut s = spec_on(one_cpu_two_opps(), vec![w], 1_000, Governor::DEFAULT);
    s.config.cost = no_costs();
    let r = run(&s, &mut |_, _| {}).unwrap();
    let busy = r.outcome.cpufreq_busy_by_opp(0);
    assert!(busy[0] > 0 && busy[1] > 0, "both OPPs ran: {busy:?}");
    let work_ns = busy[0] / 2 + busy[1];
    // Each 1 ms event rounds its end up to the ns: at most one ns per event.
    assert!(
        work_ns.abs_diff(50 * MS) <= 50,
        "{work_ns} ns of full-speed work for 50 ms asked, busy {busy:?}"
    );
}

#[test]
fn eas_places_wakeups_until_a_ramping_task_overutilizes_the_root_domain() {
    // One task ramping from 10% to 90% of a big CPU in 400 ms steps: EAS places its
    // wakeups while it fits a LITTLE CPU; from the 30% step (307 does not fit 381 with
    // the 20% margin) the root domain is overutilized and wakeups skip EAS.
    let w = rtapp(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/rtapp/ramp.json"
        ))
        .unwrap(),
    );
    let s = spec_on(preset("rk3399").unwrap(), vec![w], 2100, Governor::DEFAULT);
    let r = run(&s, &mut |_, _| {}).unwrap();
    let eas = &r.outcome.sched().eas;
    assert!(eas.present);
    let st = eas.stats;
    assert!(
        st.feec_placed > 20 && st.feec_placed == st.feec_calls,
        "{st:?}"
    );
    assert!(st.overutilized_wakeups > 20, "{st:?}");
    assert!(st.overutilized_sets >= 1, "{st:?}");
    let j = fairsim_output::to_json(&s, &r);
    assert_eq!(j["cpufreq"]["eas"]["enabled"], true);
    assert_eq!(j["cpufreq"]["eas"]["feec_placed"], st.feec_placed);
    // The ramp ends on a big CPU: its time per capacity has both classes.
    let caps = j["tasks"][0]["capacity_ns"].as_array().unwrap();
    let classes: Vec<u64> = caps.iter().map(|c| c[0].as_u64().unwrap()).collect();
    assert_eq!(classes, [381, 1024], "{caps:?}");
    let text = fairsim_output::summary(&s, &r);
    assert!(
        text.contains("energy-aware scheduling (whole run): on;"),
        "{text}"
    );
    // Under another governor the kernel builds no perf domains, and says why.
    let w = WorkloadSpec::parse("sysbench-cpu:threads=1,events=10").unwrap();
    let s = spec_on(
        preset("rk3399").unwrap(),
        vec![w],
        50,
        Governor::Performance,
    );
    let r = run(&s, &mut |_, _| {}).unwrap();
    let text = fairsim_output::summary(&s, &r);
    assert!(
        text.contains(
            "energy-aware scheduling: off (schedutil is mandatory (the governor is performance))"
        ),
        "{text}"
    );
    let j = fairsim_output::to_json(&s, &r);
    assert_eq!(j["cpufreq"]["eas"]["enabled"], false);
}

#[test]
fn a_traced_eas_run_shows_each_placement_and_each_overutilized_stretch() {
    use fairsim_trace::{write_ftrace_text, write_perfetto, TraceConfig, TraceEvent};
    let w = rtapp(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/rtapp/ramp.json"
        ))
        .unwrap(),
    );
    let mut s = spec_on(preset("rk3399").unwrap(), vec![w], 2100, Governor::DEFAULT);
    let plain = run(&s, &mut |_, _| {}).unwrap();
    let plain_json = fairsim_output::to_json(&s, &plain).to_string();
    s.config.trace = Some(TraceConfig::events());
    let mut r = run(&s, &mut |_, _| {}).unwrap();
    // The tracer only observes.
    assert_eq!(fairsim_output::to_json(&s, &r).to_string(), plain_json);
    let st = r.outcome.sched().eas.stats;
    let trace = r.outcome.take_trace().unwrap();
    assert_eq!(trace.root_domains, ["3f"]);
    let mut feec = 0u64;
    let mut moved = 0u64;
    let mut stretches = 0u64;
    let mut on = false;
    for rec in &trace.records {
        match rec.event {
            TraceEvent::Feec {
                prev_cpu, dst_cpu, ..
            } => {
                feec += 1;
                moved += u64::from(dst_cpu >= 0 && dst_cpu as u32 != prev_cpu);
            }
            TraceEvent::Overutilized { rd, overutilized } => {
                assert_eq!(rd, 0);
                stretches += u64::from(overutilized && !on);
                on = overutilized;
            }
            _ => {}
        }
    }
    assert_eq!(feec, st.feec_calls, "{st:?}");
    assert_eq!(moved, st.feec_moved, "{st:?}");
    assert_eq!(stretches, st.overutilized_sets, "{st:?}");
    assert!(stretches >= 1);
    let mut text = Vec::new();
    write_ftrace_text(&trace, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("sched_overutilized: overutilized=1 span=0x3f\n"),
        "no overutilized line"
    );
    assert!(text.contains("fairsim_feec: comm=ramp-0 pid=1 prev_cpu="));
    let mut pb = Vec::new();
    write_perfetto(&trace, &mut pb).unwrap();
    let has = |needle: &str| pb.windows(needle.len()).any(|w| w == needle.as_bytes());
    assert!(has("root domain 0 overutilized"));
    assert!(has("cpu 0 EAS placements"));
}

#[test]
fn the_system_util_clamp_max_caps_an_always_running_task_frequency() {
    use fairsim_balance::tunables::Place;
    // One always-running task on a big CPU reaches 1.8 GHz; with the system's maximum
    // clamp at 512 (`sched_util_clamp_max`, the minimum lowered first as the kernel
    // requires) its effective clamp is 512. `sugov_effective_cpu_perf` adds the headroom
    // to the utilization (1024 plus 25%) and then keeps the smaller clamp, with no
    // headroom: 512 of 1024 is 900 MHz of 1.8 GHz, so the policy settles on 1.008 GHz,
    // its first OPP at or above that.
    let top = |writes: &[&str]| {
        let w = WorkloadSpec::parse("sysbench-cpu:threads=1,events=100000,cpus=4").unwrap();
        let mut s = spec_on(preset("rk3399").unwrap(), vec![w], 500, Governor::DEFAULT);
        let k = s.config.params.features.kernel();
        for text in writes {
            s.config
                .params
                .tunables
                .write(k, Place::Sysctl, text)
                .unwrap();
        }
        let r = run(&s, &mut |_, _| {}).unwrap();
        assert_eq!(r.outcome.sched().uclamp_used, !writes.is_empty());
        r.outcome.sched().cpufreq.as_ref().unwrap().policies[1].cur
    };
    assert_eq!(top(&[]), 1_800_000);
    assert_eq!(
        top(&[
            "kernel.sched_util_clamp_min=0",
            "kernel.sched_util_clamp_max=512"
        ]),
        1_008_000
    );
}

#[test]
fn rtapp_util_min_moves_a_small_task_to_a_big_cpu_at_a_higher_opp() {
    // The one small periodic task (12% of a big CPU) with and without util_min 600.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/rtapp/periodic.json"
    ))
    .unwrap();
    let clamped = text.replace("\"loop\" : -1,", "\"loop\" : -1, \"util_min\" : 600,");
    assert_ne!(clamped, text);
    let busy_per_class = |text: &str| {
        let s = spec_on(
            preset("rk3399").unwrap(),
            vec![rtapp(text)],
            1000,
            Governor::DEFAULT,
        );
        let r = run(&s, &mut |_, _| {}).unwrap();
        let j = fairsim_output::to_json(&s, &r);
        let caps = j["tasks"][0]["capacity_ns"].clone();
        // The big policy's busiest OPP (kHz) over the run.
        let tis = time_in_state(&r, 1);
        (caps, r.outcome.sched().uclamp_used, tis)
    };
    let (plain, used, _) = busy_per_class(&text);
    assert!(!used);
    assert_eq!(plain.as_array().unwrap().len(), 1);
    assert_eq!(plain[0][0], 381);
    let (lifted, used, big) = busy_per_class(&clamped);
    let s = spec_on(
        preset("rk3399").unwrap(),
        vec![rtapp(&clamped)],
        100,
        Governor::DEFAULT,
    );
    let j = fairsim_output::to_json(&s, &run(&s, &mut |_, _| {}).unwrap());
    assert_eq!(j["tasks"][0]["uclamp"], serde_json::json!([600, 1024]));
    assert!(used);
    assert_eq!(lifted[0][0], 1024, "{lifted}");
    // util_min 600 asks the A72s for 600 * 1.25 of 1024: above 1 GHz.
    let above_1ghz: u64 = big
        .iter()
        .filter(|(f, _)| *f > 1_008_000)
        .map(|(_, t)| t)
        .sum();
    assert!(above_1ghz > 0, "{big:?}");
}

#[test]
fn uclamp_is_refused_on_kernels_before_5_3_and_runs_on_6_5() {
    let w = WorkloadSpec::parse("sysbench-cpu:threads=1,events=10,uclamp=100..900").unwrap();
    assert_eq!(w.uclamp, Some((100, 900)));
    assert!(
        w.canonical(6).ends_with(",uclamp=100..900"),
        "{}",
        w.canonical(6)
    );
    let mut s = spec_on(preset("rk3399").unwrap(), vec![w], 50, Governor::DEFAULT);
    s.config.params.features = fairsim_balance::Kernel::V4_16.features();
    let e = fairsim_workloads::run::prepare(&s)
        .err()
        .unwrap()
        .to_string();
    assert!(e.starts_with("uclamp: Linux 4.16"), "{e}");
    assert!(e.contains("uclamp came in 5.3"), "{e}");
    // Linux 6.5 had utilization clamps.
    s.config.params.features = fairsim_balance::Kernel::V6_5.features();
    assert!(fairsim_workloads::run::prepare(&s).is_ok());
    for bad in [
        "uclamp=5..4",
        "uclamp=0..1025",
        "uclamp=7",
        "uclamp=1..2,uclamp=1..2",
    ] {
        let e = WorkloadSpec::parse(&format!("nanosleep:{bad}"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("nanosleep: uclamp:"), "{bad}: {e}");
    }
}
