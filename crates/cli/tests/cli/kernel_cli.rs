//! `--kernel` (issue 31, item 2) end to end: the refusals of what an older kernel lacked,
//! and the plumbing of a run, a scenario, compare, sweep and race. These check names,
//! versions, keys and errors only, not scheduling results.

use std::path::PathBuf;
use std::process::Command;

use crate::common::{fairsim, ok, text};

/// A refusal: exit 2, one line on stderr, containing `needle`, no panic.
fn bad(args: &[&str], needle: &str) {
    let o = fairsim(args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("fairsim: error: "), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: wanted '{needle}' in {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairsim-kernel-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A short run's arguments: 4 CPUs, 100 ms of schbench.
const SHORT: [&str; 7] = [
    "run",
    "--smp",
    "4",
    "--workload",
    "schbench:m=1,t=2,c=1ms,s=1ms",
    "--duration",
    "100ms",
];

fn short(extra: &[&str]) -> Vec<String> {
    SHORT.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn what_an_older_kernel_lacked_is_refused_in_one_line() {
    bad(
        &["run", "--kernel", "5.10"],
        "--kernel: unknown kernel '5.10'; allowed: 6.12, 6.5, 4.16, 4.15, 4.5 or 3.9",
    );
    bad(
        &["run", "--kernel", "4.5", "--features", "PLACE_LAG"],
        "PLACE_LAG does not exist in Linux 4.5",
    );
    bad(
        &["run", "--kernel", "6.12", "--features", "START_DEBIT"],
        "START_DEBIT does not exist in Linux 6.12",
    );
    bad(
        &["run", "--kernel", "4.5", "--util-est", "legacy"],
        "--util-est: Linux 4.5 had no util_est; allowed: off, or --kernel 4.16",
    );
    // 4.16's util_est is seed 003's patch, off by default: a form without the feature
    // would be dropped.
    bad(
        &["run", "--kernel", "4.16", "--util-est", "legacy"],
        "--util-est: Linux 4.16's util_est (seed 003's patch) is off by default",
    );
    // rk3399 has cpufreq policies, whose default governor is schedutil (4.7+): fine for
    // 4.16, refused for 4.5.
    ok(&[
        "run",
        "--kernel",
        "4.16",
        "--topology",
        "rk3399",
        "--duration",
        "50ms",
    ]);
    bad(
        &["run", "--kernel", "4.5", "--topology", "rk3399"],
        "--governor: machine rk3399's cpufreq policies default to schedutil, which Linux 4.5 lacked",
    );
    bad(
        &[
            "run",
            "--kernel",
            "3.9",
            "--topology",
            "rk3399",
            "--governor",
            "schedutil",
        ],
        "--governor: Linux 3.9 had no schedutil (it came in 4.7); allowed: performance",
    );
    bad(
        &["run", "--kernel", "4.5", "--cpuidle", "teo"],
        "--cpuidle: Linux 4.5 had no teo governor; allowed: menu (teo came in 5.1, haltpoll in 5.4) or none",
    );
    bad(
        &["run", "--kernel", "4.15", "--idle-states", "haltpoll"],
        "--idle-states: the haltpoll states ask for the haltpoll governor, which Linux 4.15 lacked",
    );
    bad(
        &["race", "--kernel", "4.5"],
        "--kernel: race mode runs 6.12's and 6.5's load balancers; Linux 4.5's is not ported to race mode; allowed: 6.12 or 6.5",
    );
    bad(
        &[
            "compare",
            "--kernel",
            "4.5",
            "--base-kernel",
            "6.12",
            "--new",
            "",
        ],
        "--kernel: not available with --base-kernel",
    );
    bad(
        &["compare", "--new-kernel", "2.6", "--new", ""],
        "--new-kernel: unknown kernel '2.6'",
    );
    bad(
        &[
            "compare",
            "--base-kernel",
            "4.5",
            "--base",
            "PLACE_LAG",
            "--new",
            "",
        ],
        "--base: PLACE_LAG does not exist in Linux 4.5",
    );
}

#[test]
fn an_older_kernel_with_its_own_governor_runs() {
    let out = ok(&[
        "run",
        "--kernel",
        "4.5",
        "--topology",
        "rk3399",
        "--governor",
        "performance",
        "--workload",
        "schbench:m=1,t=2,c=1ms,s=1ms",
        "--duration",
        "50ms",
    ]);
    assert!(
        out.contains("kernel: Linux 4.5.0 (CFS; --kernel 4.5)"),
        "{out}"
    );
}

#[test]
fn a_run_names_its_kernel_and_6_12_reads_as_before() {
    let dir = scratch("run");
    let json = dir.join("run.json");
    let stat = dir.join("schedstat");
    let (j, s) = (json.to_str().unwrap(), stat.to_str().unwrap());
    let out = ok(&refs(&short(&[
        "--kernel",
        "4.5",
        "--json",
        j,
        "--schedstat",
        s,
    ])));
    assert!(
        out.contains("kernel: Linux 4.5.0 (CFS; --kernel 4.5)\n"),
        "{out}"
    );
    assert!(out.contains("features: default (Linux 4.5.0)"), "{out}");
    assert!(
        !out.contains("util_est"),
        "4.5's own form is not named: {out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["kernel"], "4.5");
    assert_eq!(v["kernel_release"], "4.5.0");
    assert_eq!(v["util_est"], "off", "4.5 had no util_est");
    let features = v["features"].as_str().unwrap();
    assert!(features.contains("START_DEBIT") && features.contains("NO_SIS_FIRST_IDLE"));
    assert!(
        !features.contains("LEGACY_SIS"),
        "an era runs its own: {features}"
    );
    assert!(!features.contains("PLACE_LAG"), "{features}");
    assert!(std::fs::read_to_string(&stat)
        .unwrap()
        .starts_with("version 15\n"));

    // Without --kernel, and with --kernel 6.12: no kernel line or key, version 16, and
    // the same bytes.
    let mut outs = Vec::new();
    for extra in [&[][..], &["--kernel", "6.12"][..]] {
        let mut args = short(extra);
        args.extend(["--json", j, "--schedstat", s].map(String::from));
        let out = ok(&refs(&args));
        assert!(!out.contains("kernel:"), "{out}");
        assert!(out.contains("features: default (Linux 6.12.117)"), "{out}");
        let json_text = std::fs::read_to_string(&json).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json_text).unwrap();
        assert!(v.get("kernel").is_none() && v.get("kernel_release").is_none());
        let stat_text = std::fs::read_to_string(&stat).unwrap();
        assert!(stat_text.starts_with("version 16\n"));
        outs.push((out, json_text, stat_text));
    }
    assert_eq!(outs[0], outs[1], "--kernel 6.12 is the default");

    // An explicit version still wins over the kernel's.
    ok(&refs(&short(&[
        "--kernel",
        "4.5",
        "--schedstat",
        s,
        "--schedstat-version",
        "16",
    ])));
    assert!(std::fs::read_to_string(&stat)
        .unwrap()
        .starts_with("version 16\n"));
}

#[test]
fn a_scenario_names_its_kernel_and_the_option_overrides_it() {
    let dir = scratch("scenario");
    let file = dir.join("s.toml");
    std::fs::write(
        &file,
        "smp = \"4\"\nworkload = [\"schbench:m=1,t=2,c=1ms,s=1ms\"]\nduration = \"100ms\"\nkernel = \"4.15\"\nfeatures = \"NO_START_DEBIT\"\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let out = ok(&["run", f]);
    assert!(
        out.contains("kernel: Linux 4.15.0 (CFS; --kernel 4.15)"),
        "{out}"
    );
    assert!(out.contains("features: NO_START_DEBIT"), "{out}");
    // --kernel overrides the key; the scenario's 4.15 feature does not exist in 6.12.
    bad(
        &["run", f, "--kernel", "6.12"],
        "START_DEBIT does not exist in Linux 6.12",
    );
    std::fs::write(&file, "kernel = \"9.9\"\n").unwrap();
    bad(&["run", f], "scenario key kernel: unknown kernel '9.9'");
}

#[test]
fn compare_runs_each_side_on_its_kernel() {
    let common = [
        "compare",
        "--smp",
        "4",
        "--workload",
        "schbench:m=1,t=2,c=1ms,s=1ms",
        "--duration",
        "50ms",
        "--seeds",
        "2",
    ];
    let mut args: Vec<&str> = common.to_vec();
    args.extend([
        "--base-kernel",
        "4.5",
        "--new-kernel",
        "6.12",
        "--base",
        "NO_START_DEBIT",
        "--new",
        "",
    ]);
    let out = ok(&args);
    assert!(
        out.contains("base: NO_START_DEBIT on Linux 4.5.0 (--kernel 4.5)\n"),
        "{out}"
    );
    assert!(
        out.contains("new:  (defaults) on Linux 6.12.117 (--kernel 6.12)\n"),
        "{out}"
    );
    assert!(
        out.contains("base (4.5)") && out.contains("new (6.12)"),
        "{out}"
    );
    // The per-level rows are keyed d0, d1, ...; the header names the levels.
    assert!(out.contains("\ndomain levels: d0 MC\n"), "{out}");

    // Without a kernel option the header and columns read as they always have.
    let mut args: Vec<&str> = common.to_vec();
    args.extend(["--new", "NO_NI_RANDOM"]);
    let out = ok(&args);
    assert!(
        out.contains("\nbase: (defaults)\nnew:  NO_NI_RANDOM\n"),
        "{out}"
    );
    assert!(!out.contains("Linux") && !out.contains("base ("), "{out}");
}

#[test]
fn a_sweep_with_a_kernels_axis_runs_a_point_per_kernel() {
    let dir = scratch("sweep");
    std::fs::write(
        dir.join("plan.toml"),
        "name = \"kern\"\n[run]\nduration = \"20ms\"\n[axes]\nmachines = [\"smt-mc-1s4c2t\"]\nworkloads = [\"schbench:m=1,t=2,c=1ms,s=1ms\"]\nkernels = [\"6.12\", \"4.5\"]\n",
    )
    .expect("write plan");
    let o = Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .current_dir(&dir)
        .args(["sweep", "plan.toml", "--out", "o", "--jobs", "1"])
        .output()
        .expect("run fairsim");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut points: Vec<String> = std::fs::read_dir(dir.join("o/points"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    points.sort();
    assert_eq!(points.len(), 2, "{points:?}");
    assert!(points[1].contains("kernel-4.5"), "{points:?}");
    let p: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("o/points").join(&points[1])).unwrap(),
    )
    .unwrap();
    let line = p.to_string();
    assert!(line.contains("--kernel 4.5"), "{line}");
    let summary = std::fs::read_to_string(dir.join("o/summary.txt")).unwrap();
    assert!(summary.contains("== kernels"), "{summary}");
}

#[test]
fn race_takes_6_5_and_its_features() {
    let out = ok(&[
        "race",
        "--kernel",
        "6.5",
        "--smp",
        "2",
        "--threads",
        "2",
        "--duration",
        "20ms",
        "--features",
        "NO_START_DEBIT",
    ]);
    assert!(out.contains("features: NO_START_DEBIT"), "{out}");
    bad(
        &["race", "--kernel", "6.5", "--features", "PLACE_LAG"],
        "PLACE_LAG does not exist in Linux 6.5",
    );
}

#[test]
fn linux_6_5_on_rk3399_runs_energy_aware_scheduling_and_4_16_has_none() {
    let base = [
        "run",
        "--topology",
        "rk3399",
        "--governor",
        "schedutil",
        "--workload",
        "nanosleep:n=2,sleep=1ms,uclamp=0..512",
        "--duration",
        "100ms",
    ];
    let mut a: Vec<&str> = base.to_vec();
    a.extend(["--kernel", "6.5"]);
    let out = ok(&a);
    assert!(
        out.contains("energy-aware scheduling (whole run): on"),
        "{out}"
    );
    let mut a: Vec<&str> = base.to_vec();
    a.extend(["--kernel", "4.16"]);
    bad(&a, "uclamp came in 5.3");
}
