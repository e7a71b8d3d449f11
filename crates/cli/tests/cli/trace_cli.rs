//! `run --trace / --trace-text / --trace-window / --plot` and `compare --plot` as a user
//! runs them: the files appear, decode with Perfetto's official protos (when python3 has
//! the PyPI `perfetto` package; CI requires it), agree with the run's own counters, and
//! leave the run's own output unchanged; bad windows and unwritable files get one line.

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::common::{fairsim, s};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairsim-trace-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs a validation script when python3 can import Perfetto's protos; CI sets
/// FAIRSIM_REQUIRE_PERFETTO so that it cannot be skipped there.
fn python(script: &str, args: &[&str]) {
    let has = Command::new("python3")
        .args([
            "-c",
            "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        assert!(
            std::env::var_os("FAIRSIM_REQUIRE_PERFETTO").is_none(),
            "FAIRSIM_REQUIRE_PERFETTO is set but python3 cannot import perfetto_trace_pb2"
        );
        eprintln!("skipped {script}: python3 with the PyPI 'perfetto' package is not available");
        return;
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(script);
    let out = Command::new("python3")
        .arg(path)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );
}

const RUN: [&str; 8] = [
    "run",
    "--smp",
    "8,sockets=2,cores=2,threads=2",
    "--workload",
    "hackbench:g=2,l=300,pipe",
    "--duration",
    "40ms",
    "--seed=3",
];

#[test]
fn a_traced_run_writes_decodable_traces_and_plots_and_prints_the_same() {
    let dir = temp_dir("run");
    let (pf, txt, json, plots) = (
        dir.join("t.perfetto-trace"),
        dir.join("t.txt"),
        dir.join("r.json"),
        dir.join("plots"),
    );
    let plain = fairsim(&RUN);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let mut args = RUN.to_vec();
    args.extend([
        "--trace",
        s(&pf),
        "--trace-text",
        s(&txt),
        "--json",
        s(&json),
        "--plot",
        s(&plots),
    ]);
    let traced = fairsim(&args);
    assert!(traced.status.success(), "{}", stderr(&traced));
    assert_eq!(
        plain.stdout, traced.stdout,
        "tracing changed the run's output"
    );
    let text = std::fs::read_to_string(&txt).unwrap();
    assert!(text.starts_with("# tracer: nop\n"));
    assert!(text.contains(": sched_switch: prev_comm="));
    assert!(text.contains("hackbench"));
    assert!(std::fs::metadata(&pf).unwrap().len() > 1000);
    for f in [
        "latency-cdf.svg",
        "timeline.svg",
        "newidle.svg",
        "plot-data.json",
    ] {
        assert!(plots.join(f).is_file(), "{f} missing");
    }
    python(
        "validation/perfetto/check_trace.py",
        &[s(&pf), s(&json), "--text", s(&txt)],
    );
    python("validation/plots/check_svg.py", &[s(&plots)]);
    // `fairsim plot` draws the same data again.
    let again = dir.join("again");
    let o = fairsim(&["plot", s(&plots.join("plot-data.json")), "--out", s(&again)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(plots.join("timeline.svg")).unwrap(),
        std::fs::read(again.join("timeline.svg")).unwrap()
    );
}

#[test]
fn a_traced_cpu_max_run_shows_its_throttling_and_passes_the_checker() {
    let dir = temp_dir("cpumax");
    let (pf, txt, json) = (
        dir.join("t.perfetto-trace"),
        dir.join("t.txt"),
        dir.join("r.json"),
    );
    let run = [
        "run",
        "--smp",
        "4",
        "--cgroup",
        "/lim:cpu.max=50000 100000",
        "-w",
        "sysbench-cpu:threads=4,events=0,time=100s,cgroup=/lim",
        "--duration",
        "500ms",
    ];
    let plain = fairsim(&run);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let mut args = run.to_vec();
    args.extend([
        "--trace",
        s(&pf),
        "--trace-text",
        s(&txt),
        "--json",
        s(&json),
    ]);
    let traced = fairsim(&args);
    assert!(traced.status.success(), "{}", stderr(&traced));
    assert_eq!(
        plain.stdout, traced.stdout,
        "tracing changed the run's output"
    );
    let text = std::fs::read_to_string(&txt).unwrap();
    for event in ["throttle", "unthrottle", "refill"] {
        let needle = format!(": fairsim_cfs_{event}: cgroup=/lim ");
        assert!(text.contains(&needle), "no {needle:?} line");
    }
    // The checker matches the throttled slices and lines against cpu.stat's counters.
    python(
        "validation/perfetto/check_trace.py",
        &[s(&pf), s(&json), "--text", s(&txt)],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_window_keeps_the_trace_inside_it() {
    let dir = temp_dir("window");
    let txt = dir.join("w.txt");
    let mut args = RUN.to_vec();
    args.extend(["--trace-text", s(&txt), "--trace-window", "10ms..12ms"]);
    let o = fairsim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&txt).unwrap();
    let stamps: Vec<f64> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let before = l.split(": ").next().unwrap();
            before.split_whitespace().last().unwrap().parse().unwrap()
        })
        .collect();
    assert!(!stamps.is_empty());
    assert!(
        stamps.iter().all(|&t| (0.010..0.012).contains(&t)),
        "{stamps:?}"
    );
}

#[test]
fn compare_plots_its_sides() {
    let dir = temp_dir("compare");
    let o = fairsim(&[
        "compare",
        "--smp",
        "4",
        "--workload",
        "schbench:m=1,t=4,r=1",
        "--duration",
        "100ms",
        "--new",
        "NO_SIS_UTIL",
        "--seeds",
        "2",
        "--plot",
        s(&dir),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let data = std::fs::read_to_string(dir.join("plot-data.json")).unwrap();
    assert!(data.contains("\"new: NO_SIS_UTIL\""));
    assert!(dir.join("metrics.svg").is_file() && dir.join("latency-cdf.svg").is_file());
    python("validation/plots/check_svg.py", &[s(&dir)]);
}

#[test]
fn bad_trace_options_get_one_line() {
    let dir = temp_dir("bad");
    let t = dir.join("t.txt");
    for (extra, code, want) in [
        (
            vec!["--trace-text", s(&t), "--trace-window", "2ms..1ms"],
            2,
            "--trace-window: invalid value '2ms..1ms'",
        ),
        (
            vec!["--trace-text", s(&t), "--trace-window", "1..2"],
            2,
            "--trace-window: invalid value '1..2'",
        ),
        (
            vec!["--trace-window", "1ms..2ms"],
            2,
            "--trace-window: nothing to trace",
        ),
        (
            vec!["--trace-text", s(&t), "--trace-window", "1s.."],
            2,
            "--trace-window: invalid value '1s..'",
        ),
        (
            vec!["--trace-text", s(&t), "--trace-events", "pelt,sched"],
            2,
            "--trace-events: invalid value 'sched'",
        ),
        (
            vec!["--trace", s(&t), "--trace-events", "pelt"],
            2,
            "--trace-events: no trace to add them to",
        ),
        (
            vec!["--trace", "/nonexistent-dir/t.perfetto-trace"],
            4,
            "--trace: cannot write /nonexistent-dir/t.perfetto-trace:",
        ),
    ] {
        let mut args = RUN.to_vec();
        args.extend(extra.iter().copied());
        let o = fairsim(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{extra:?}: {err}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{extra:?}: {err}");
        assert!(lines[0].contains(want), "{extra:?}: {err}");
    }
    let o = fairsim(&[
        "compare",
        "--smp",
        "2",
        "--workload",
        "schbench",
        "--new",
        "NO_SIS_UTIL",
        "--trace",
        s(&t),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("fairsim: error: --trace: not available with compare"));
}

/// `--trace-events pelt` adds the sched_tp load-tracking events to the text and leaves
/// everything else as it was: the run's JSON and the other lines of its trace.
#[test]
fn load_tracking_events_only_add_lines() {
    let dir = temp_dir("pelt");
    let run = |name: &str, pelt: bool| {
        let (txt, json) = (
            dir.join(format!("{name}.txt")),
            dir.join(format!("{name}.json")),
        );
        let mut args = vec![
            "run",
            "--topology",
            "rk3399",
            "-w",
            "rt-app examples/rtapp/ramp.json",
            "--duration",
            "300ms",
            "--trace-text",
            s(&txt),
            "--json",
            s(&json),
        ];
        if pelt {
            args.extend(["--trace-events", "pelt"]);
        }
        let o = Command::new(env!("CARGO_BIN_EXE_fairsim"))
            .args(&args)
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        (
            std::fs::read_to_string(&txt).unwrap(),
            std::fs::read_to_string(&json).unwrap(),
        )
    };
    let (plain, plain_json) = run("plain", false);
    let (pelt, pelt_json) = run("pelt", true);
    assert_eq!(plain_json, pelt_json);
    let load_tracking = |l: &&str| {
        [
            ": sched_pelt_cfs: ",
            ": sched_pelt_se: ",
            ": sched_util_est_cfs: ",
            ": sched_util_est_se: ",
            ": sched_cpu_capacity: ",
        ]
        .iter()
        .any(|e| l.contains(e))
    };
    let body = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    assert!(!body(&plain).iter().any(|l| load_tracking(&l.as_str())));
    let rest: Vec<String> = body(&pelt)
        .into_iter()
        .filter(|l| !load_tracking(&l.as_str()))
        .collect();
    assert_eq!(rest, body(&plain));
    for e in [
        "sched_pelt_cfs: cpu=",
        "sched_pelt_se: cpu=",
        "sched_util_est_se: ",
        "sched_cpu_capacity: ",
    ] {
        assert!(pelt.contains(e), "{e}");
    }
    assert!(pelt.contains(" path=(null) comm=ramp-0 pid=1 load="));
}
