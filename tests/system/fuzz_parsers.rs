//! Fuzzing every parser a user's text reaches, on stable Rust, with proptest: arbitrary
//! strings and structured near-valid values (the right keys with out-of-range, empty,
//! negative, huge or malformed values, and valid inputs with one token changed).
//!
//! The contract under test, for each parser: it returns (never panics, never hangs), and an
//! error is one non-empty line. Accepted machines of modest size are also built into sched
//! domains, so that what a parser lets through cannot crash the next stage.
//!
//! CI runs a short pass (the default case count below). The long pass, documented in the
//! README, sets `FAIRSIM_FUZZ_CASES`:
//! `FAIRSIM_FUZZ_CASES=20000 cargo test --release -p fairsim --test system fuzz_parsers::`.

use crate::common;

use std::path::PathBuf;

use fairsim_balance::schedstat_read::parse_schedstat;
use fairsim_balance::Features;
use fairsim_des::time::{parse_duration, parse_duration_with_unit};
use fairsim_engine::cgroup::{check_path, Cgroups};
use fairsim_engine::cost::CostTable;
use fairsim_engine::NoiseModel;
use fairsim_topology::source::{load_machine_file, parse_spec, SpecOptions};
use fairsim_topology::{build_sched_domains, Arch, BuildOptions, CpuMask};
use fairsim_workloads::scenario::Scenario;
use fairsim_workloads::WorkloadSpec;
use proptest::prelude::*;

/// An error a user sees must be one non-empty line.
fn one_line(what: &str, input: &str, err: &str) -> Result<(), TestCaseError> {
    prop_assert!(!err.trim().is_empty(), "{what} {input:?}: empty error");
    prop_assert!(
        !err.contains('\n'),
        "{what} {input:?}: error of several lines: {err}"
    );
    Ok(())
}

/// Values that sit at and beyond the edges of what options accept.
fn edge_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("0".to_string()),
        Just("1".to_string()),
        Just("-1".to_string()),
        Just("2".to_string()),
        Just("4294967296".to_string()),
        Just("18446744073709551615".to_string()),
        Just("99999999999999999999999".to_string()),
        Just("1.5".to_string()),
        Just(".".to_string()),
        Just("0x10".to_string()),
        Just("1e9".to_string()),
        Just("NaN".to_string()),
        Just("x".to_string()),
        Just("1ms".to_string()),
        Just("0ns".to_string()),
        Just("3600s".to_string()),
        Just("1.0000000001s".to_string()),
        Just("µs".to_string()),
        Just("10,20".to_string()),
        Just("=".to_string()),
        (0u64..100_000).prop_map(|v| v.to_string()),
        "[ -~]{0,8}",
    ]
}

/// `key=value,...` with keys drawn from `keys` (plus a stranger) and edge values.
fn kv_list(keys: &'static [&'static str]) -> impl Strategy<Value = String> {
    let key = prop_oneof![
        proptest::sample::select(keys).prop_map(str::to_string),
        Just("bogus".to_string()),
        "[a-z]{0,3}",
    ];
    let item = prop_oneof![
        4 => (key.clone(), edge_value()).prop_map(|(k, v)| format!("{k}={v}")),
        1 => key,
    ];
    proptest::collection::vec(item, 0..6).prop_map(|v| v.join(","))
}

/// A CPU list such as `0-3,8`, often malformed.
fn cpu_list() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        (0u32..20).prop_map(|a| a.to_string()),
        (0u32..20, 0u32..20).prop_map(|(a, b)| format!("{a}-{b}")),
        (0u32..20, 0u32..20, 0u32..5).prop_map(|(a, b, s)| format!("{a}-{b}:{s}")),
        Just("99999".to_string()),
        Just("-".to_string()),
        Just(String::new()),
        "[0-9,:-]{0,6}",
    ];
    proptest::collection::vec(part, 0..4).prop_map(|v| v.join(","))
}

/// A distance matrix text, mostly square, often not.
fn distance_matrix() -> impl Strategy<Value = String> {
    let entry = prop_oneof![
        Just("10".to_string()),
        Just("20".to_string()),
        Just("21".to_string()),
        Just("0".to_string()),
        Just("255".to_string()),
        Just("256".to_string()),
        edge_value(),
    ];
    (0usize..5).prop_flat_map(move |n| {
        proptest::collection::vec(
            proptest::collection::vec(entry.clone(), 0..=n + 1),
            0..=n + 1,
        )
        .prop_map(|rows| {
            rows.iter()
                .map(|r| r.join(","))
                .collect::<Vec<_>>()
                .join(";")
        })
    })
}

/// `--smp` and its companions.
fn spec_options() -> impl Strategy<Value = SpecOptions> {
    let smp = prop_oneof![
        kv_list(&[
            "sockets", "dies", "clusters", "cores", "threads", "cpus", "maxcpus", "books",
            "drawers", "modules"
        ]),
        (1u32..5, 1u32..5, 1u32..3)
            .prop_map(|(s, c, t)| format!("sockets={s},cores={c},threads={t}")),
        (0u32..70).prop_map(|n| n.to_string()),
        "[ -~]{0,12}",
    ];
    let opt = |s: BoxedStrategy<String>| proptest::option::weighted(0.3, s);
    (
        smp,
        opt(distance_matrix().boxed()),
        opt(prop_oneof![
            cpu_list(),
            (cpu_list(), cpu_list()).prop_map(|(a, b)| format!("{a};{b}"))
        ]
        .boxed()),
        opt((cpu_list(), edge_value())
            .prop_map(|(l, v)| format!("{l}:{v}"))
            .boxed()),
        opt((cpu_list(), edge_value())
            .prop_map(|(l, v)| format!("{l}:{v}"))
            .boxed()),
        any::<bool>(),
    )
        .prop_map(|(smp, numa_distance, numa_cpus, capacity, itmt, arm)| {
            let mut o = SpecOptions::new(&smp, if arm { Arch::Arm64 } else { Arch::X86 });
            o.numa_distance = numa_distance;
            o.numa_cpus = numa_cpus;
            o.capacity = capacity;
            o.itmt = itmt;
            o
        })
}

/// Workload specifications with each tool's keys.
fn workload_text() -> impl Strategy<Value = String> {
    prop_oneof![
        kv_list(&[
            "version",
            "m",
            "message-threads",
            "t",
            "threads",
            "c",
            "cputime",
            "s",
            "sleeptime",
            "r",
            "runtime"
        ])
        .prop_map(|b| format!("schbench:{b}")),
        kv_list(&[
            "g", "groups", "l", "loops", "f", "fds", "s", "datasize", "pipe", "p", "threads", "T",
            "process", "P"
        ])
        .prop_map(|b| format!("hackbench:{b}")),
        kv_list(&["tasks", "n", "sleep", "run", "pin", "launch", "exec"])
            .prop_map(|b| format!("nanosleep:{b}")),
        kv_list(&[
            "threads",
            "num-threads",
            "events",
            "event",
            "event-work",
            "cpu-max-prime",
            "time",
            "cgroup"
        ])
        .prop_map(|b| format!("sysbench-cpu:{b}")),
        kv_list(&["t", "l", "m", "r", "instances", "c", "C", "H", "4"])
            .prop_map(|b| format!("netperf:{b}")),
        kv_list(&["t", "clients", "n", "server"]).prop_map(|b| format!("tbench:{b}")),
        "[ -~]{0,24}",
        Just("schbench".to_string()),
        Just(":".to_string()),
    ]
}

/// `--cgroup` declarations: paths near and off the rules, with the cpu controller's keys
/// (and ones not modelled) and edge values.
fn cgroup_text() -> impl Strategy<Value = String> {
    let path = prop_oneof![
        Just("/".to_string()),
        Just("/a".to_string()),
        Just("/a/b".to_string()),
        Just("/a/".to_string()),
        Just("/../a".to_string()),
        Just("a".to_string()),
        Just(String::new()),
        "/[a-z.@+_-]{0,6}(/[ -~]{0,4}){0,2}",
    ];
    let keys = kv_list(&[
        "cpu.weight",
        "cpu.weight.nice",
        "cpu.max",
        "cpu.idle",
        "cpuset.cpus",
    ]);
    prop_oneof![
        (path.clone(), keys).prop_map(|(p, k)| format!("{p}:{k}")),
        path,
    ]
}

/// Feature lists: real names, NO_ forms, repeats and strangers.
fn feature_list() -> impl Strategy<Value = String> {
    let names: Vec<String> = fairsim_balance::features::Feature::ALL
        .iter()
        .map(|f| f.name().to_string())
        .collect();
    let word = prop_oneof![
        proptest::sample::select(names.clone()),
        proptest::sample::select(names).prop_map(|n| format!("NO_{n}")),
        Just("NO_".to_string()),
        Just(String::new()),
        "[A-Za-z_]{0,10}",
    ];
    proptest::collection::vec(word, 0..6).prop_map(|v| v.join(","))
}

/// `--idle-states` texts: presets, explicit tables, disables.
fn idle_states_text() -> impl Strategy<Value = String> {
    let item = prop_oneof![
        proptest::sample::select(vec![
            "bdx",
            "ivt",
            "ivt-4s",
            "ivt-8s",
            "spr",
            "spr-nopc6",
            "tc2",
            "haltpoll",
            "flat",
            "no-C6",
            "no-C1",
            "no-POLL",
            "no-",
            "C1",
            "spr"
        ])
        .prop_map(str::to_string),
        ("[A-Z0-9]{0,4}", edge_value(), edge_value()).prop_map(|(n, e, r)| format!("{n}:{e}:{r}")),
        "[ -~]{0,10}",
    ];
    proptest::collection::vec(item, 0..5).prop_map(|v| v.join(","))
}

/// Scenario texts: known keys with values of the right and wrong TOML types.
fn scenario_text() -> impl Strategy<Value = String> {
    let key = proptest::sample::select(vec![
        "topology",
        "smp",
        "numa_distance",
        "machine",
        "workload",
        "features",
        "duration",
        "seed",
        "hz",
        "timer_slack",
        "timer_expiry",
        "cpuidle",
        "idle_states",
        "noise",
        "warmup",
        "schedstat",
        "schedstat_version",
        "json",
        "bogus",
    ]);
    let value = prop_oneof![
        edge_value().prop_map(|v| format!("{v:?}")),
        edge_value(),
        workload_text().prop_map(|w| format!("[{w:?}]")),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just("true".to_string()),
        Just("-9223372036854775808".to_string()),
        Just("1e400".to_string()),
    ];
    let line = prop_oneof![
        6 => (key, value).prop_map(|(k, v)| format!("{k} = {v}")),
        1 => Just("[cost]".to_string()),
        1 => Just("[cgroup.\"/a\"]".to_string()),
        1 => (proptest::sample::select(vec!["\"cpu.weight\"", "cpu.weight", "\"cpu.max\""]), edge_value())
            .prop_map(|(k, v)| format!("{k} = {v}")),
        1 => (proptest::sample::select(CostTable::NAMES), edge_value())
            .prop_map(|(k, v)| format!("{k} = {v:?}")),
        1 => "[ -~]{0,16}",
    ];
    proptest::collection::vec(line, 0..8).prop_map(|v| v.join("\n"))
}

/// A valid schedstat file of the repository's test data, with edits.
fn schedstat_text() -> impl Strategy<Value = String> {
    let base = include_str!("../../crates/balance/tests/data/schedstat/v16-before.txt");
    let lines: Vec<String> = base.lines().map(str::to_string).collect();
    let n = lines.len();
    let edit = prop_oneof![
        (0..n).prop_map(|i| (0u8, i, String::new())),
        (0..n).prop_map(|i| (1u8, i, String::new())),
        (0..n, edge_value()).prop_map(|(i, v)| (2u8, i, v)),
        (0..n, "[ -~]{0,20}").prop_map(|(i, v)| (3u8, i, v)),
    ];
    proptest::collection::vec(edit, 0..4).prop_map(move |edits| {
        let mut l = lines.clone();
        for (kind, i, v) in edits {
            if l.is_empty() {
                break;
            }
            let i = i % l.len();
            match kind {
                0 => {
                    l.remove(i);
                }
                1 => {
                    let dup = l[i].clone();
                    l.insert(i, dup);
                }
                2 => {
                    let mut words: Vec<String> =
                        l[i].split_whitespace().map(str::to_string).collect();
                    if !words.is_empty() {
                        let w = v.len() % words.len();
                        words[w] = v;
                    }
                    l[i] = words.join(" ");
                }
                _ => l[i] = v,
            }
        }
        l.join("\n")
    })
}

/// A scratch directory for machine files, unique to this process.
fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("fairsim-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Machine file texts (TOML and JSON) with the schema's keys and wrong values.
fn machine_file() -> impl Strategy<Value = (bool, String)> {
    let toml_text = (
        proptest::option::of(proptest::sample::select(vec!["x86", "arm64", "riscv", ""])),
        kv_list(&["sockets", "dies", "clusters", "cores", "threads", "llc"]),
        proptest::option::of(distance_matrix()),
        proptest::option::of(cpu_list()),
    )
        .prop_map(|(arch, smp, dist, cap)| {
            let mut t = String::new();
            if let Some(a) = arch {
                t += &format!("arch = {a:?}\n");
            }
            if let Some(c) = cap {
                t += &format!("capacity = \"{c}:512\"\n");
            }
            t += "[smp]\n";
            for kv in smp.split(',').filter(|s| !s.is_empty()) {
                match kv.split_once('=') {
                    Some((k, v)) if v.parse::<i64>().is_ok() => t += &format!("{k} = {v}\n"),
                    Some((k, v)) => t += &format!("{k} = {v:?}\n"),
                    None => t += &format!("{kv} = 1\n"),
                }
            }
            if let Some(d) = dist {
                let rows: Vec<String> = d.split(';').map(|r| format!("[{}]", r)).collect();
                t += &format!("[numa]\ndistance = [{}]\n", rows.join(", "));
            }
            (false, t)
        });
    let json_text = prop_oneof![
        Just((true, "[1, 2]".to_string())),
        Just((true, "null".to_string())),
        Just((true, "{}".to_string())),
        Just((true, r#"{"guest_observed": 1}"#.to_string())),
        Just((true, r#"{"guest_observed": {"cpus": []}}"#.to_string())),
        "[ -~]{0,30}".prop_map(|t| (true, t)),
    ];
    prop_oneof![3 => toml_text, 1 => json_text]
}

/// Builds the sched domains of an accepted machine when it is small enough to be quick.
fn build_if_small(m: &fairsim_topology::Machine, input: &str) -> Result<(), TestCaseError> {
    if m.nr_cpus() <= 64 {
        if let Err(e) = build_sched_domains(m, BuildOptions::default()) {
            one_line("build_sched_domains", input, &e.to_string())?;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(common::fuzz_config(256, 2_000))]

    #[test]
    fn smp_specs(o in spec_options()) {
        let input = format!("{o:?}");
        match parse_spec(&o) {
            Ok(m) => build_if_small(&m, &input)?,
            Err(e) => one_line("parse_spec", &input, &e.to_string())?,
        }
    }

    #[test]
    fn workload_strings(w in workload_text()) {
        match WorkloadSpec::parse(&w) {
            Ok(spec) => {
                // What is accepted can be sized: the memory budget relies on it.
                let _ = spec.nr_tasks(224);
            }
            Err(e) => one_line("workload", &w, &e.to_string())?,
        }
    }

    #[test]
    fn cgroup_declarations(texts in proptest::collection::vec(cgroup_text(), 1..4)) {
        let input = format!("{texts:?}");
        match fairsim_workloads::cgroups::from_sources(&Default::default(), &texts) {
            Ok(c) => {
                // What is accepted is a tree a scheduler takes, parents first.
                for (id, g) in c.iter() {
                    prop_assert!(g.parent < id, "{input}: {g:?}");
                    prop_assert!(check_path(&g.path).is_ok(), "{input}: {g:?}");
                    if let Some(w) = g.weight {
                        prop_assert!(w.shares().is_ok(), "{input}: {g:?}");
                    }
                }
            }
            Err(e) => one_line("cgroup", &input, &e.to_string())?,
        }
    }

    #[test]
    fn feature_lists(f in feature_list()) {
        if let Err(e) = Features::parse(&f) {
            one_line("features", &f, &e.to_string())?;
        }
    }

    #[test]
    fn idle_state_specs(s in idle_states_text(), n in 1usize..300) {
        if let Err(e) = fairsim_cpuidle::parse::parse_idle_states(&s, n) {
            one_line("idle states", &s, &e.to_string())?;
        }
    }

    #[test]
    fn durations_and_costs(v in edge_value(), name in proptest::sample::select(CostTable::NAMES)) {
        if let Err(e) = parse_duration(&v, 1) {
            one_line("duration", &v, &e.to_string())?;
        }
        if let Err(e) = parse_duration_with_unit(&v) {
            one_line("duration", &v, &e.to_string())?;
        }
        let mut c = CostTable::default();
        let spec = format!("{name}={v}");
        if let Err(e) = c.apply(&spec) {
            one_line("cost", &spec, &e.to_string())?;
        }
        let _ = NoiseModel::parse(&v);
    }

    #[test]
    fn scenario_files(t in scenario_text()) {
        if let Err(e) = Scenario::parse(&t) {
            one_line("scenario", &t, &e.to_string())?;
        }
    }

    #[test]
    fn schedstat_files(t in schedstat_text()) {
        if let Err(e) = parse_schedstat(&t, "fuzz") {
            one_line("schedstat", &t, &e.to_string())?;
        }
    }

    #[test]
    fn cpu_lists(l in cpu_list(), n in 1usize..100) {
        if let Err(e) = CpuMask::parse_list(n, &l) {
            one_line("cpu list", &l, &e.to_string())?;
        }
    }

    #[test]
    fn machine_files((json, text) in machine_file(), k in 0u32..1_000_000) {
        let path = scratch().join(format!("m{k}.{}", if json { "json" } else { "toml" }));
        std::fs::write(&path, &text).unwrap();
        let result = load_machine_file(&path);
        let _ = std::fs::remove_file(&path);
        match result {
            Ok(m) => build_if_small(&m, &text)?,
            Err(e) => one_line("machine file", &text, &e.to_string())?,
        }
    }

    #[test]
    fn arbitrary_strings_everywhere(s in "\\PC{0,40}") {
        let _ = WorkloadSpec::parse(&s).map_err(|e| e.to_string());
        if let Err(e) = WorkloadSpec::parse(&s) { one_line("workload", &s, &e.to_string())?; }
        if let Err(e) = Features::parse(&s) { one_line("features", &s, &e.to_string())?; }
        if let Err(e) = fairsim_workloads::cgroups::declare_option(&mut Cgroups::default(), &s) {
            one_line("cgroup", &s, &e.to_string())?;
        }
        if let Err(e) = Scenario::parse(&s) { one_line("scenario", &s, &e.to_string())?; }
        if let Err(e) = parse_schedstat(&s, "fuzz") { one_line("schedstat", &s, &e.to_string())?; }
        if let Err(e) = parse_duration(&s, 1) { one_line("duration", &s, &e.to_string())?; }
        if let Err(e) = fairsim_cpuidle::parse::parse_idle_states(&s, 8) {
            one_line("idle states", &s, &e.to_string())?;
        }
        if let Err(e) = parse_spec(&SpecOptions::new(&s, Arch::X86)) {
            one_line("smp", &s, &e.to_string())?;
        }
    }
}
