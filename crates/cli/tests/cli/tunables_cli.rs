//! `--sysctl` and `--debugfs` (issue 33, part 2) end to end: a tunable written on the
//! command line, in a scenario and as a sweep axis reaches the scheduler and shows in the
//! header and the JSON; each kind of refusal is one line naming the option.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::text;

fn fairsim_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run fairsim")
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairsim-tunables-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let o = fairsim_in(dir, args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

/// A refusal: exit 2, one line on stderr, containing `needle`, no panic.
fn bad(args: &[&str], needle: &str) {
    let o = fairsim_in(&std::env::temp_dir(), args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("fairsim: error: "), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: wanted '{needle}' in {err}");
}

/// A short hackbench on 4 CPUs: enough balancing for migration_cost to matter.
const RUN: [&str; 6] = [
    "run",
    "--smp",
    "sockets=1,cores=4",
    "--workload",
    "hackbench:g=2,l=40",
    "--noise=off",
];

/// The run's JSON document, with `extra` options.
fn run_json(dir: &Path, extra: &[&str], name: &str) -> (String, serde_json::Value) {
    run_json_seed(dir, extra, name, "3")
}

/// [`run_json`] with the run's `--seed`.
fn run_json_seed(
    dir: &Path,
    extra: &[&str],
    name: &str,
    seed: &str,
) -> (String, serde_json::Value) {
    let mut args: Vec<&str> = RUN.to_vec();
    args.extend(extra);
    args.extend(["--seed", seed]);
    args.extend(["--json", name]);
    let out = ok(dir, &args);
    let json = serde_json::from_slice(&std::fs::read(dir.join(name)).expect("json")).expect("JSON");
    (out, json)
}

#[test]
fn migration_cost_changes_the_migrations_and_shows_only_when_written() {
    let dir = scratch("mc");
    let (out0, j0) = run_json(&dir, &[], "default.json");
    let (out1, j1) = run_json(&dir, &["--debugfs", "migration_cost_ns=0"], "zero.json");
    let (out2, j2) = run_json(
        &dir,
        &["--debugfs", "migration_cost_ns=4294967295"],
        "hot.json",
    );
    let m = |j: &serde_json::Value| j["scheduler"]["migrations"].as_u64().expect("migrations");
    // No task is cache hot with 0; every task is with -1 (4294967295). One short run can
    // go either way (seed 3 alone moves 537 -> 482 with 0), so the migrations are summed
    // over four seeds, the runs above among them.
    let mut sums = [m(&j0), m(&j1), m(&j2)];
    for seed in ["1", "2", "4"] {
        for (i, extra) in [
            &[][..],
            &["--debugfs", "migration_cost_ns=0"][..],
            &["--debugfs", "migration_cost_ns=4294967295"][..],
        ]
        .into_iter()
        .enumerate()
        {
            sums[i] += m(&run_json_seed(&dir, extra, "seed.json", seed).1);
        }
    }
    let [default, zero, hot] = sums;
    assert!(zero > default, "0: {zero} vs default {default}");
    assert!(hot < zero, "always hot: {hot} vs 0: {zero}");
    assert!(
        !out0.contains("tunables") && j0.get("tunables").is_none(),
        "{out0}"
    );
    assert!(
        out1.contains("\ntunables (written after boot): --debugfs migration_cost_ns=0\n"),
        "{out1}"
    );
    assert!(
        out2.contains("--debugfs migration_cost_ns=4294967295"),
        "{out2}"
    );
    assert_eq!(j1["tunables"][0]["write"], "migration_cost_ns=0");
    assert_eq!(
        j1["tunables"][0]["path"],
        "/sys/kernel/debug/sched/migration_cost_ns"
    );
    // The same write from a scenario file runs the same.
    std::fs::write(
        dir.join("s.toml"),
        "workload = [\"hackbench:g=2,l=40\"]\n[debugfs]\nmigration_cost_ns = 0\n",
    )
    .expect("scenario");
    let out = ok(
        &dir,
        &[
            "run",
            "s.toml",
            "--smp",
            "sockets=1,cores=4",
            "--seed",
            "3",
            "--noise=off",
            "--json",
            "scen.json",
        ],
    );
    assert!(out.contains("--debugfs migration_cost_ns=0"), "{out}");
    let js: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("scen.json")).expect("json")).expect("JSON");
    assert_eq!(m(&js), m(&j1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cfs_sysctl_reaches_the_fair_class() {
    let dir = scratch("cfs");
    let base = ["--kernel", "4.16"];
    let (_, j0) = run_json(&dir, &base, "a.json");
    let (out, j1) = run_json(
        &dir,
        &[
            "--kernel",
            "4.16",
            "--sysctl",
            "kernel.sched_latency_ns=100000",
            "--sysctl",
            "kernel.sched_min_granularity_ns=100000",
        ],
        "b.json",
    );
    assert!(
        out.contains("--sysctl kernel.sched_latency_ns=100000 --sysctl kernel.sched_min_granularity_ns=100000"),
        "{out}"
    );
    let cs = |j: &serde_json::Value| j["scheduler"]["context_switches"].as_u64().expect("cs");
    assert_ne!(
        cs(&j0),
        cs(&j1),
        "a 0.1 ms latency target must change the switching"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_kind_of_refusal_is_one_line() {
    // Unknown for this era.
    bad(
        &["run", "--sysctl", "kernel.sched_latency_ns=1000000"],
        "--sysctl: kernel.sched_latency_ns does not exist in Linux 6.12 (6.6 replaced it with debugfs base_slice_ns); allowed: ",
    );
    // A write the kernel refuses on this machine: no EAS without asymmetric capacities.
    bad(
        &[
            "run",
            "--sysctl",
            "kernel.sched_energy_aware=0",
            "--duration",
            "1ms",
            "-w",
            "nanosleep",
        ],
        "--sysctl: kernel.sched_energy_aware: the kernel refuses the write (EOPNOTSUPP) because EAS is not possible on this machine: CPUs do not have asymmetric capacities",
    );
    // Wrong place, both ways.
    bad(
        &[
            "run",
            "--kernel",
            "6.5",
            "--sysctl",
            "kernel.sched_migration_cost_ns=0",
        ],
        "allowed: --debugfs migration_cost_ns=VALUE",
    );
    bad(
        &["run", "--kernel", "4.15", "--debugfs", "nr_migrate=8"],
        "allowed: --sysctl kernel.sched_nr_migrate=VALUE",
    );
    // Out of the kernel's range.
    bad(
        &[
            "run",
            "--kernel",
            "3.9",
            "--sysctl",
            "kernel.sched_min_granularity_ns=50000",
        ],
        "allowed: 100000 to 1000000000",
    );
    bad(
        &["run", "--debugfs", "tunable_scaling=3"],
        "out of Linux 6.12's range",
    );
    bad(&["run", "--debugfs", "nr_migrate=many"], "not an integer");
    bad(
        &["run", "--debugfs", "bogus=1"],
        "--debugfs: unknown tunable 'bogus'",
    );
    // compare names the side's option.
    bad(
        &["compare", "--new", "", "--new-debugfs", "latency_ns=1"],
        "--new-debugfs: latency_ns does not exist in Linux 6.12",
    );
    // A scenario's table names itself.
    let dir = scratch("bad");
    std::fs::write(
        dir.join("s.toml"),
        "[sysctl]\nkernel.sched_nr_migrate = 8\n",
    )
    .expect("s");
    let path = dir.join("s.toml");
    bad(
        &["run", path.to_str().expect("path")],
        "scenario table [sysctl]: Linux 6.12 keeps this tunable at --debugfs",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sweep_axis_over_a_tunable() {
    let dir = scratch("sweep");
    std::fs::write(
        dir.join("plan.toml"),
        r#"name = "mc"
[run]
noise = "off"
[axes]
machines = [{ name = "four", smp = "sockets=1,cores=4" }]
workloads = ["hackbench:g=2,l=40"]
debugfs = ["migration_cost_ns=0", "migration_cost_ns=500000"]
seeds = [3]
"#,
    )
    .expect("plan");
    ok(&dir, &["sweep", "plan.toml", "--jobs", "1", "--out", "o"]);
    let points: Vec<String> = std::fs::read_dir(dir.join("o/points"))
        .expect("points")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(points.len(), 2, "{points:?}");
    assert!(
        points
            .iter()
            .any(|p| p.contains("_debugfs-migration-cost-ns-0_")),
        "{points:?}"
    );
    let summary = std::fs::read_to_string(dir.join("o/summary.txt")).expect("summary");
    assert!(
        summary.contains("== debugfs: migration_cost_ns=0 vs migration_cost_ns=500000"),
        "{summary}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 50 row 4: sides that differ only in tunables are told apart in the header and
/// in the JSON, which names each side's own writes.
#[test]
fn compare_names_sides_that_differ_only_in_tunables() {
    let dir = scratch("compare-sides");
    let out = ok(
        &dir,
        &[
            "compare",
            "--smp",
            "2",
            "-w",
            "hackbench:g=1,l=20",
            "--duration",
            "20ms",
            "--new",
            "",
            "--new-debugfs",
            "base_slice_ns=3000000",
            "--base-sysctl",
            "kernel.sched_autogroup_enabled=0",
            "--seeds",
            "2",
            "--json",
            "c.json",
        ],
    );
    assert!(
        out.contains("\nbase: (defaults); sysctl kernel.sched_autogroup_enabled=0\n"),
        "{out}"
    );
    assert!(
        out.contains("\nnew:  (defaults); debugfs base_slice_ns=3000000\n"),
        "{out}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("c.json")).expect("json"))
            .expect("JSON");
    assert_eq!(
        doc["new"]["debugfs"],
        serde_json::json!(["base_slice_ns=3000000"])
    );
    assert_eq!(doc["new"]["sysctl"], serde_json::json!([]));
    assert_eq!(
        doc["base"]["sysctl"],
        serde_json::json!(["kernel.sched_autogroup_enabled=0"])
    );
    assert_ne!(doc["base"], doc["new"]);
    let _ = std::fs::remove_dir_all(&dir);
}
