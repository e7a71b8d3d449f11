//! Autogroup (`--sysctl kernel.sched_autogroup_enabled=1`, issue 36) end to end: two
//! CPU hogs of 1 and 4 threads on one CPU share it 1:1 by session with it on and 1:4
//! by thread without it; a workload in a cgroup is not autogrouped; the autogroups show
//! in the cgroups table and JSON; a scenario's `[sysctl]` table turns it on too; CFS
//! kernels and bad values are refused in one line; and the bytes repeat.

use std::path::{Path, PathBuf};

use crate::common::{ok, refused};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairsim-autogroup-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("JSON file")).expect("JSON")
}

const ON: [&str; 2] = ["--sysctl", "kernel.sched_autogroup_enabled=1"];

/// One hog thread and four, each a workload, on one CPU for 2 s.
const HOGS: [&str; 10] = [
    "run",
    "--smp",
    "1",
    "-w",
    "sysbench-cpu:threads=1,events=0,time=100s",
    "-w",
    "sysbench-cpu:threads=4,events=0,time=100s",
    "--duration",
    "2s",
    "--seed",
];

/// The share of all task CPU time, in percent, of each workload's tasks.
fn workload_shares(doc: &serde_json::Value) -> Vec<f64> {
    let mut ns = vec![0u64; doc["workloads"].as_array().unwrap().len()];
    for t in doc["tasks"].as_array().unwrap() {
        ns[t["workload"].as_u64().unwrap() as usize] += t["runtime_ns"].as_u64().unwrap();
    }
    let all: u64 = ns.iter().sum();
    ns.iter().map(|&n| n as f64 * 100.0 / all as f64).collect()
}

#[test]
fn hogs_of_1_and_4_threads_share_one_cpu_1_to_1_with_autogroup_and_1_to_4_without() {
    let dir = scratch("shares");
    let (on, off) = (dir.join("on.json"), dir.join("off.json"));
    let mut args: Vec<&str> = HOGS.to_vec();
    args.extend(["1", "--json", on.to_str().unwrap()]);
    args.extend(ON);
    let out = ok(&args);
    let doc = json(&on);
    let s = workload_shares(&doc);
    assert!((s[0] - 50.0).abs() < 2.0, "{s:?}");
    // The table and the JSON give each autogroup its half.
    let cg = doc["cgroups"].as_array().unwrap();
    let paths: Vec<&str> = cg.iter().map(|g| g["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["/", "/autogroup-1", "/autogroup-2"]);
    for g in &cg[1..] {
        assert!((g["share_pct"].as_f64().unwrap() - 50.0).abs() < 2.0, "{g}");
        assert_eq!(g["cpu.weight"], 100);
        assert_eq!(g["parent"], "/");
    }
    // sysbench's main thread and its workers.
    assert_eq!(
        (cg[1]["tasks"].as_u64(), cg[2]["tasks"].as_u64()),
        (Some(2), Some(5))
    );
    assert!(
        out.contains("\n  /autogroup-1     100       0      2      2  "),
        "{out}"
    );
    assert_eq!(
        doc["tunables"][0]["write"],
        "kernel.sched_autogroup_enabled=1"
    );
    let mut args: Vec<&str> = HOGS.to_vec();
    args.extend(["1", "--json", off.to_str().unwrap()]);
    let out = ok(&args);
    let doc = json(&off);
    let s = workload_shares(&doc);
    assert!((s[0] - 20.0).abs() < 2.0, "{s:?}");
    assert!(doc.get("cgroups").is_none() && !out.contains("cgroups"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_workload_in_a_cgroup_is_not_autogrouped() {
    let dir = scratch("cgroup");
    let j = dir.join("run.json");
    let mut args = vec![
        "run",
        "--smp",
        "1",
        "--cgroup",
        "/x",
        "-w",
        "sysbench-cpu:threads=1,events=0,time=100s,cgroup=/x",
        "-w",
        "sysbench-cpu:threads=4,events=0,time=100s",
        "--duration",
        "1s",
        "--json",
        j.to_str().unwrap(),
    ];
    args.extend(ON);
    ok(&args);
    let doc = json(&j);
    let cg = doc["cgroups"].as_array().unwrap();
    let rows: Vec<(&str, u64)> = cg
        .iter()
        .map(|g| (g["path"].as_str().unwrap(), g["tasks"].as_u64().unwrap()))
        .collect();
    // The first session's autogroup exists (its setsid made it) but holds nothing.
    assert_eq!(
        rows,
        [
            ("/", 0),
            ("/x", 2),
            ("/autogroup-1", 0),
            ("/autogroup-2", 5)
        ]
    );
    for t in doc["tasks"].as_array().unwrap() {
        let want = if t["workload"] == 0 {
            "/x"
        } else {
            "/autogroup-2"
        };
        assert_eq!(t["cgroup"], want, "{t}");
    }
    // /x and /autogroup-2 weigh the same: 1:1 again.
    let s = workload_shares(&doc);
    assert!((s[0] - 50.0).abs() < 2.0, "{s:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_scenario_sysctl_table_turns_it_on() {
    let dir = scratch("scenario");
    let sc = dir.join("s.toml");
    std::fs::write(
        &sc,
        "smp = \"1\"\nworkload = [\"sysbench-cpu:threads=1,events=0,time=100s\", \"sysbench-cpu:threads=4,events=0,time=100s\"]\nduration = \"1s\"\n[sysctl]\n\"kernel.sched_autogroup_enabled\" = 1\n",
    )
    .unwrap();
    let out = ok(&["run", sc.to_str().unwrap()]);
    assert!(out.contains("\n  /autogroup-2  "), "{out}");
    std::fs::write(
        &sc,
        "kernel = \"6.5\"\nworkload = [\"sysbench-cpu\"]\n[sysctl]\n\"kernel.sched_autogroup_enabled\" = 1\n",
    )
    .unwrap();
    refused(
        &["run", sc.to_str().unwrap()],
        "scenario table [sysctl]: kernel.sched_autogroup_enabled=1 puts each session in an autogroup",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cfs_kernels_and_bad_values_are_refused_in_one_line() {
    for k in ["3.9", "4.5", "4.15", "4.16", "6.5"] {
        let mut args = vec!["run", "--kernel", k, "-w", "sysbench-cpu"];
        args.extend(ON);
        refused(
            &args,
            &format!("--sysctl: kernel.sched_autogroup_enabled=1 puts each session in an autogroup, a task group, and task groups are modelled for --kernel 6.12 only (Linux {}", if k == "4.16" { "4.16.13".to_string() } else { format!("{k}.0") }),
        );
        // Every era had the sysctl: a 0 runs.
        ok(&[
            "run",
            "--kernel",
            k,
            "-w",
            "sysbench-cpu:events=10",
            "--sysctl",
            "kernel.sched_autogroup_enabled=0",
        ]);
    }
    refused(
        &[
            "compare",
            "-w",
            "sysbench-cpu",
            "--seeds",
            "1",
            "--new-kernel",
            "6.5",
            "--new",
            "",
            "--sysctl",
            "kernel.sched_autogroup_enabled=1",
        ],
        "allowed: --kernel 6.12, or kernel.sched_autogroup_enabled=0",
    );
    refused(
        &[
            "run",
            "-w",
            "sysbench-cpu",
            "--sysctl",
            "kernel.sched_autogroup_enabled=2",
        ],
        "--sysctl: kernel.sched_autogroup_enabled=2 is out of Linux 6.12's range; allowed: 0 or 1",
    );
    let mut args = vec!["run", "--cgroup", "/autogroup-1", "-w", "sysbench-cpu"];
    args.extend(ON);
    refused(
        &args,
        "--cgroup: /autogroup-1 is the name autogroup 1 goes by",
    );
}

#[test]
fn the_same_seed_gives_the_same_bytes_with_autogroups() {
    let dir = scratch("same");
    let bytes = |seed: &str, name: &str| {
        let j = dir.join(name);
        let mut args = vec![
            "run",
            "--smp",
            "4",
            "-w",
            "hackbench:g=1,l=40",
            "-w",
            "schbench:m=1,t=3,r=1",
            "--duration",
            "200ms",
            "--seed",
            seed,
            "--json",
            j.to_str().unwrap(),
        ];
        args.extend(ON);
        let out = ok(&args);
        (out, std::fs::read(&j).unwrap())
    };
    let a = bytes("7", "a.json");
    assert_eq!(a, bytes("7", "b.json"));
    assert_ne!(a.1, bytes("8", "c.json").1);
    let _ = std::fs::remove_dir_all(&dir);
}
