//! `fairsim plot`: exit codes, the paths it prints, and one-line refusals.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fairsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .args(args)
        .output()
        .expect("run fairsim")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairsim-plot-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
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
