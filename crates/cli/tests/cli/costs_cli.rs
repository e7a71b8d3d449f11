//! End-to-end tests of the machine-model options: `--costs` (the named cost table),
//! `--speed` (CPU speeds apart from capacity), and the `costs`/`[speed]` keys of scenario
//! and machine files.

use std::path::{Path, PathBuf};

use crate::common::{fairsim, stderr};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fairsim-costs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `fairsim run ARGS --json FILE` and returns the JSON document.
fn run_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let path = dir.join("run.json");
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    let p = path.to_str().unwrap().to_string();
    all.extend_from_slice(&["--json", &p]);
    let o = fairsim(&all);
    assert!(o.status.success(), "{all:?}: {}", stderr(&o));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The command fails with status 2 and one line naming `field` and what is allowed.
fn assert_refused(args: &[&str], field: &str) {
    let o = fairsim(args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert!(
        e.starts_with("fairsim: error: ") && e.lines().count() == 1,
        "{args:?}: {e}"
    );
    assert!(e.contains(field) && e.contains("allowed"), "{args:?}: {e}");
}

const SYSBENCH_A7: &str = "sysbench:threads=1,events=20,cpus=2";

#[test]
fn the_cost_table_is_the_machines_unless_chosen_and_overrides_go_on_top() {
    let d = scratch("select");
    let j = run_json(&d, &["--topology", "tc2", "--workload", SYSBENCH_A7]);
    assert_eq!(j["cost_table"], "arm-2013");
    assert_eq!(j["cost_ns"]["wakeup"], 1_122);
    let j = run_json(&d, &["--workload", "hackbench:g=1,l=5"]);
    assert_eq!(j["cost_table"], "x86-2020s");
    assert_eq!(j["cost_ns"]["wakeup"], 483);
    let j = run_json(
        &d,
        &[
            "--topology",
            "tc2",
            "--workload",
            SYSBENCH_A7,
            "--costs",
            "x86-2020s",
        ],
    );
    assert_eq!(j["cost_table"], "x86-2020s");
    let j = run_json(
        &d,
        &[
            "--topology",
            "tc2",
            "--workload",
            SYSBENCH_A7,
            "--cost",
            "context_switch=2us",
        ],
    );
    assert_eq!(j["cost_table"], "arm-2013");
    assert_eq!(j["cost_ns"]["context_switch"], 2_000);
    assert_eq!(j["cost_ns"]["wakeup"], 1_122);
}

#[test]
fn the_scenario_and_the_machine_file_name_tables_and_speeds() {
    let d = scratch("files");
    std::fs::write(
        d.join("m.toml"),
        "costs = \"arm-2013\"\n[smp]\ncores = 2\n[speed]\nsysbench = \"0:1024,1:256\"\n",
    )
    .unwrap();
    let j = run_json(
        &d,
        &[
            "--machine",
            d.join("m.toml").to_str().unwrap(),
            "--workload",
            "sysbench:threads=1,events=10,cpus=1",
        ],
    );
    assert_eq!(j["cost_table"], "arm-2013");
    assert_eq!(
        j["machine"]["speed"]["sysbench"],
        serde_json::json!([1024, 256])
    );
    // 10 events of 1 ms at speed 256 take 40 ms of work.
    let t = j["workloads"][0]["results"]["total_time_ns"]
        .as_u64()
        .unwrap();
    assert!((40_000_000..41_000_000).contains(&t), "{t}");
    std::fs::write(
        d.join("s.toml"),
        "topology = \"tc2\"\ncosts = \"x86-2020s\"\nspeed = [\"none\"]\nworkload = [\"sysbench:threads=1,events=10,cpus=2\"]\n",
    )
    .unwrap();
    let j = run_json(&d, &[d.join("s.toml").to_str().unwrap()]);
    assert_eq!(j["cost_table"], "x86-2020s");
    assert!(j["machine"].get("speed").is_none(), "{}", j["machine"]);
    // The command line beats the scenario.
    let j = run_json(
        &d,
        &[d.join("s.toml").to_str().unwrap(), "--costs", "arm-2013"],
    );
    assert_eq!(j["cost_table"], "arm-2013");
}

#[test]
fn speed_changes_the_a7s_time_by_the_ratio() {
    let d = scratch("speed");
    let time = |extra: &[&str]| {
        // Enough events that the run's fixed costs (launch, fork, exit) are small beside
        // the work the speed scales.
        let w = "sysbench:threads=1,events=200,cpus=2";
        let mut args = vec!["--topology", "tc2", "--workload", w, "--noise", "off"];
        args.extend_from_slice(extra);
        let j = run_json(&d, &args);
        j["workloads"][0]["results"]["total_time_ns"]
            .as_u64()
            .unwrap() as f64
    };
    let with_table = time(&[]);
    let without = time(&["--speed", "none"]);
    let explicit = time(&["--speed", "sysbench=0-1:1024,2-4:256"]);
    let r = without / with_table;
    assert!((r - 504.0 / 430.0).abs() < 0.005, "{r}");
    let r = explicit / with_table;
    assert!((r - 504.0 / 256.0).abs() < 0.01, "{r}");
}

#[test]
fn bad_names_are_refused_in_one_line() {
    let d = scratch("bad");
    let w = ["--workload", SYSBENCH_A7];
    let mut args = vec!["run", "--topology", "tc2"];
    args.extend_from_slice(&w);
    for (extra, field) in [
        (vec!["--costs", "arm-2012"], "--costs"),
        (vec!["--costs", "context_switch=2us"], "--costs"),
        (vec!["--speed", "sysbnch=0-4:100"], "--speed"),
        (vec!["--speed", "sysbench=0-3:100"], "--speed"),
        (vec!["--speed", "sysbench=0-4:1025"], "--speed"),
        (vec!["--speed", "sysbench"], "--speed"),
    ] {
        let mut a = args.clone();
        a.extend_from_slice(&extra);
        assert_refused(&a, field);
    }
    let bad_costs = d.join("c.toml");
    std::fs::write(&bad_costs, "costs = \"pdp-11\"\n[smp]\ncores = 2\n").unwrap();
    let bad_kind = d.join("k.toml");
    std::fs::write(
        &bad_kind,
        "[smp]\ncores = 2\n[speed]\nsysbnch = \"0-1:512\"\n",
    )
    .unwrap();
    let bad_speed = d.join("v.toml");
    std::fs::write(
        &bad_speed,
        "[smp]\ncores = 2\n[speed]\nsysbench = \"0:512\"\n",
    )
    .unwrap();
    for (file, field) in [
        (&bad_costs, "costs"),
        (&bad_kind, "speed.sysbnch"),
        (&bad_speed, "speed.sysbench"),
    ] {
        let f = file.to_str().unwrap();
        assert_refused(&["run", "--machine", f, "--workload", "sysbench"], field);
        // Every command that loads the machine refuses it, not only `run`.
        assert_refused(&["topology", "--machine", f], field);
    }
    std::fs::write(
        d.join("s.toml"),
        "costs = \"arm\"\nworkload = [\"sysbench\"]\n",
    )
    .unwrap();
    assert_refused(&["run", d.join("s.toml").to_str().unwrap()], "costs");
}

#[test]
fn compare_takes_the_cost_table() {
    let o = fairsim(&[
        "compare",
        "--topology",
        "tc2",
        "--workload",
        "sysbench:threads=2,events=5",
        "--costs",
        "x86-2020s",
        "--new",
        "NO_SIS_UTIL",
        "--seeds",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_refused(
        &[
            "compare",
            "--topology",
            "tc2",
            "--workload",
            "sysbench",
            "--costs",
            "nope",
            "--new",
            "NO_SIS_UTIL",
        ],
        "--costs",
    );
}
