//! `fairsim plot`: exit codes, the paths it prints, and one-line refusals.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{fairsim, s};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairsim-plot-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A plot data file with a latency series, a 2-CPU timeline and one metric.
const DATA: &str = r#"{
  "format": "fairsim-plot-data",
  "version": 1,
  "title": "2 CPUs, pipe",
  "latency": [{"label": "baseline", "total": 4, "points": [[1000, 1], [3000, 4]]}],
  "timeline": {
    "start_ns": 0, "end_ns": 100000, "cpus": 2,
    "tasks": [[1, "pipe"], [2, "pipe"]],
    "slices": [
      {"cpu": 0, "start_ns": 0, "end_ns": 40000, "kind": "task", "pid": 1},
      {"cpu": 0, "start_ns": 40000, "end_ns": 42000, "kind": "newidle", "pid": 0},
      {"cpu": 1, "start_ns": 10000, "end_ns": 90000, "kind": "task", "pid": 2}
    ]
  },
  "newidle": null,
  "metrics": [{"name": "Wakeup-99.0th-us", "higher_better": false,
               "sets": [{"label": "baseline", "mean": 3.0, "stddev": 0.5, "n": 3}]}]
}"#;

/// A criterion 0.5 directory with `benches/lb_scan.rs`'s group, in its real layout.
fn fake_criterion(dir: &Path) {
    let group = "update_sd_lb_stats newidle MC";
    for function in ["baseline", "ILB_UTIL", "ILB_FAST"] {
        for groups in [8u32, 32, 128, 512] {
            let new = dir
                .join(group)
                .join(function)
                .join(groups.to_string())
                .join("new");
            std::fs::create_dir_all(&new).unwrap();
            let id = format!("{group}/{function}/{groups}");
            std::fs::write(
                new.join("benchmark.json"),
                format!(
                    "{{\"group_id\":\"{group}\",\"function_id\":\"{function}\",\
                     \"value_str\":\"{groups}\",\"throughput\":null,\"full_id\":\"{id}\",\
                     \"directory_name\":\"{id}\",\"title\":\"{id}\"}}"
                ),
            )
            .unwrap();
            let mean = f64::from(groups) * 25.0;
            std::fs::write(
                new.join("estimates.json"),
                format!(
                    "{{\"mean\":{{\"confidence_interval\":{{\"confidence_level\":0.95,\
                     \"lower_bound\":{},\"upper_bound\":{}}},\"point_estimate\":{mean},\
                     \"standard_error\":0.3}}}}",
                    mean * 0.98,
                    mean * 1.02
                ),
            )
            .unwrap();
        }
    }
}

/// Asserts a refusal with `status` and one line on stderr containing `what`.
fn assert_refused(o: &Output, status: i32, what: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(status), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("fairsim: error: "), "{err}");
    assert!(err.contains(what), "{what} not in: {err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn plots_a_data_file_and_a_criterion_directory() {
    let dir = temp_dir("ok");
    let data = dir.join("plot-data.json");
    std::fs::write(&data, DATA).unwrap();
    let crit = dir.join("criterion");
    fake_criterion(&crit);
    let out = dir.join("plots");
    let o = fairsim(&["plot", s(&data), "--criterion", s(&crit), "--out", s(&out)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8(o.stdout).unwrap();
    let expected: Vec<String> = [
        "latency-cdf.svg",
        "timeline.svg",
        "metrics.svg",
        "lb-scan.svg",
    ]
    .iter()
    .map(|f| out.join(f).display().to_string())
    .collect();
    assert_eq!(printed.lines().collect::<Vec<_>>(), expected);
    for p in &expected {
        let svg = std::fs::read_to_string(p).unwrap();
        assert!(svg.starts_with("<svg"), "{p}");
        assert!(svg.trim_end().ends_with("</svg>"), "{p}");
    }

    // Criterion alone, into the default directory relative to the working directory.
    let o = Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .args(["plot", "--criterion", s(&crit)])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8(o.stdout).unwrap(), "plots/lb-scan.svg\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_refused_on_one_line() {
    let dir = temp_dir("bad");
    let out = dir.join("plots");
    assert_refused(&fairsim(&["plot", "--out", s(&out)]), 2, "no input given");

    let data = dir.join("bad.json");
    std::fs::write(
        &data,
        DATA.replace("\"end_ns\": 42000", "\"end_ns\": 40000"),
    )
    .unwrap();
    assert_refused(
        &fairsim(&["plot", s(&data), "--out", s(&out)]),
        2,
        "bad.json: timeline.slices[1].end_ns: invalid value '40000'",
    );
    std::fs::write(&data, DATA.replace("\"version\": 1", "\"version\": 7")).unwrap();
    assert_refused(
        &fairsim(&["plot", s(&data), "--out", s(&out)]),
        2,
        "version: invalid value '7'; allowed: 1",
    );
    assert_refused(
        &fairsim(&["plot", "--criterion", s(&dir), "--out", s(&out)]),
        2,
        "no criterion group 'update_sd_lb_stats newidle MC'",
    );
    assert!(!out.exists(), "nothing is written for bad input");

    // An output directory that cannot be created is an output error.
    let good = dir.join("good.json");
    std::fs::write(&good, DATA).unwrap();
    let blocker = dir.join("file");
    std::fs::write(&blocker, "").unwrap();
    assert_refused(
        &fairsim(&["plot", s(&good), "--out", s(&blocker.join("plots"))]),
        4,
        "cannot write",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_run_with_cpufreq_plots_each_policys_frequency() {
    let dir = temp_dir("freq");
    let plots = dir.join("plots");
    let o = fairsim(&[
        "run",
        "--topology",
        "rk3399",
        "--governor",
        "schedutil",
        "--workload",
        "sysbench-cpu:threads=1,cpus=4",
        "--duration",
        "50ms",
        "--plot",
        s(&plots),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(plots.join("frequency.svg")).expect("frequency.svg");
    assert!(svg.contains("policy0 (CPUs 0-3)") && svg.contains("policy4 (CPUs 4-5)"));
    let data = std::fs::read_to_string(plots.join("plot-data.json")).unwrap();
    assert!(data.contains("\"frequency\""), "{data}");
    // A machine without cpufreq draws no frequency plot.
    let plain = dir.join("plain");
    let o = fairsim(&["run", "--duration", "20ms", "--plot", s(&plain)]);
    assert!(o.status.success());
    assert!(!plain.join("frequency.svg").exists());
}

/// Runs `validation/plots/check_svg.py` on `dir` (titles within the canvas, bucket widths
/// stated, starred metrics marked), skipping where python3 is missing.
fn check_svg(dir: &Path) {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../validation/plots/check_svg.py"
    );
    match Command::new("python3").arg(script).arg(dir).output() {
        Ok(o) => assert!(
            o.status.success(),
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => eprintln!("skipped check_svg.py: python3: {e}"),
    }
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read JSON")).expect("JSON")
}

#[test]
fn a_runs_plots_name_its_features_buckets_and_llcs() {
    let dir = temp_dir("run-labels");
    let o = fairsim(&["run", "--duration", "50ms", "--plot", s(&dir)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let data = json(&dir.join("plot-data.json"));
    // The legend says what differs from the defaults, not the whole features file.
    assert_eq!(data["latency"][0]["label"], "6.12 defaults");
    assert_eq!(data["latency"][0]["buckets"]["unit_ns"], 1);
    assert_eq!(data["latency"][0]["buckets"]["linear_to_ns"], 2048);
    let groups = data["timeline"]["groups"].as_array().expect("LLC groups");
    assert!(
        !groups.is_empty() && groups[0]["name"] == "LLC 0",
        "{groups:?}"
    );
    let cdf = std::fs::read_to_string(dir.join("latency-cdf.svg")).unwrap();
    assert!(cdf.contains("6.12 defaults (p50 ") && cdf.contains("buckets: 1 ns wide"));
    check_svg(&dir);

    // With a feature changed, the legend names that change alone.
    let dir = temp_dir("run-feature");
    let o = fairsim(&[
        "run",
        "--duration",
        "20ms",
        "--features",
        "NO_SIS_UTIL",
        "--plot",
        s(&dir),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        json(&dir.join("plot-data.json"))["latency"][0]["label"],
        "NO_SIS_UTIL"
    );
}

#[test]
fn a_224_cpu_timeline_is_drawn_by_llc() {
    let dir = temp_dir("spr");
    let o = fairsim(&[
        "run",
        "--topology",
        "spr-2s56c2t",
        "--workload",
        "nanosleep:tasks=224",
        "--duration",
        "10ms",
        "--plot",
        s(&dir),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(dir.join("timeline.svg")).unwrap();
    assert!(svg.contains("Timeline by LLC, "), "title");
    assert!(svg.contains("LLC 0: 0-6\n") && svg.contains("LLC 1: 112-118\n"));
    assert!(svg.contains("nano_sleep (") && svg.contains("buckets of 10 µs"));
    check_svg(&dir);
}

#[test]
fn compares_plots_name_the_sides_and_levels_and_star_as_the_table_does() {
    let dir = temp_dir("compare");
    let csv = dir.join("table.csv");
    let plots = dir.join("plots");
    let o = fairsim(&[
        "compare",
        "--new",
        "NO_NI_RANDOM",
        "--duration",
        "200ms",
        "--seeds",
        "3",
        "--csv",
        s(&csv),
        "--plot",
        s(&plots),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let data = json(&plots.join("plot-data.json"));
    let labels: Vec<&str> = data["latency"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["base: 6.12 defaults", "new: NO_NI_RANDOM"]);
    let metrics = data["metrics"].as_array().unwrap();
    let names: Vec<&str> = metrics
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    // Levels are named as run's plots name them, never by index alone.
    assert!(names.contains(&"d1 MC: newidle-lb/s"), "{names:?}");
    assert!(names.contains(&"d2 NUMA: newidle-lb/s"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("d0-")), "{names:?}");
    // Each metric's mark is the table's: its CSV row, in the same order, says the same.
    let table = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), metrics.len());
    let mut starred = 0;
    for (m, row) in metrics.iter().zip(&rows) {
        let significant = m["change"]["significant"].as_bool().unwrap();
        assert_eq!(significant.to_string(), row[6], "{} vs {row:?}", m["name"]);
        assert_eq!(m["change"]["mean"], row[2]);
        starred += usize::from(significant);
    }
    assert!(
        starred > 0,
        "NO_NI_RANDOM changes newidle time significantly"
    );
    let svg = std::fs::read_to_string(plots.join("metrics.svg")).unwrap();
    assert_eq!(svg.matches(" significant\n").count(), starred);
    check_svg(&plots);
}
