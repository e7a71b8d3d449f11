//! End-to-end tests of task groups (`--cgroup`, the scenario's `[cgroup."/PATH"]`
//! tables, the workloads' `cgroup=` key): the summary table and the JSON array only
//! with groups, one-line refusals of bad declarations, unknown groups and CFS-era
//! kernels, determinism, and compare's and sweep's per-group metrics.

use std::path::PathBuf;
use std::process::Command;

use crate::common::{ok, refused, text};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairsim-cgroup-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).expect("JSON file")).expect("JSON")
}

/// Two CPU hogs, each in its own group, on one CPU.
const TWO_GROUPS: [&str; 10] = [
    "--smp",
    "1",
    "--cgroup",
    "/a:cpu.weight=100",
    "--cgroup",
    "/b:cpu.weight=200",
    "-w",
    "sysbench-cpu:threads=1,events=0,time=100s,cgroup=/a",
    "-w",
    "sysbench-cpu:threads=1,events=0,time=100s,cgroup=/b",
];

#[test]
fn a_run_with_groups_prints_their_table_and_json() {
    let dir = scratch("table");
    let j = dir.join("run.json");
    let mut args = vec!["run", "--duration", "200ms", "--json", j.to_str().unwrap()];
    args.extend(TWO_GROUPS);
    let out = ok(&args);
    assert!(
        out.contains("\ncgroups (cpu.stat over the window, each group with its descendants"),
        "{out}"
    );
    assert!(
        out.contains("  path  weight  w.nice  tasks  total  usage-ms"),
        "{out}"
    );
    let row = |p: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("  {p} ")))
            .unwrap_or_else(|| panic!("no row {p} in {out}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(row("/")[1..5], ["-", "-", "0", "4"]);
    assert_eq!(row("/b")[1..5], ["200", "-3", "2", "2"]);
    assert!(out.contains(",cgroup=/a =="), "{out}");
    let doc = json(&j);
    let cg = doc["cgroups"].as_array().expect("cgroups array");
    let paths: Vec<&str> = cg.iter().map(|g| g["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["/", "/a", "/b"]);
    for key in [
        "cpu.weight",
        "cpu.weight.nice",
        "tasks",
        "tasks_total",
        "usage_usec",
        "user_usec",
        "system_usec",
        "wait_usec",
        "share_pct",
        "parent",
    ] {
        assert!(cg[1].get(key).is_some(), "{key} missing in {}", cg[1]);
    }
    assert_eq!(cg[2]["cpu.weight"], 200);
    let usage = |g: usize| cg[g]["usage_usec"].as_u64().unwrap();
    assert_eq!(usage(0), usage(1) + usage(2));
    let tasks = doc["tasks"].as_array().unwrap();
    assert!(tasks
        .iter()
        .all(|t| t["cgroup"] == "/a" || t["cgroup"] == "/b"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_groups_nothing_about_them_is_written() {
    let dir = scratch("none");
    let j = dir.join("run.json");
    let out = ok(&[
        "run",
        "--smp",
        "2",
        "-w",
        "sysbench-cpu:threads=2,events=20",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert!(!out.contains("cgroup"), "{out}");
    let doc = json(&j);
    assert!(doc.get("cgroups").is_none());
    assert!(doc["tasks"][0].get("cgroup").is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_same_seed_gives_the_same_bytes_with_groups() {
    let dir = scratch("determinism");
    let mut args = vec!["run", "--duration", "100ms", "--check-determinism"];
    args.extend(TWO_GROUPS);
    let out = ok(&args);
    assert!(out.contains("determinism: OK"), "{out}");
    let runs: Vec<(String, Vec<u8>)> = (0..2)
        .map(|i| {
            let j = dir.join(format!("{i}.json"));
            let mut args = vec!["run", "--duration", "100ms", "--json", j.to_str().unwrap()];
            args.extend(TWO_GROUPS);
            (ok(&args), std::fs::read(&j).unwrap())
        })
        .collect();
    assert_eq!(runs[0], runs[1]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_declarations_and_joins_are_refused_in_one_line() {
    let w = "sysbench-cpu:threads=1,events=10";
    for (cgroup, want) in [
        (
            "a",
            "--cgroup 'a': invalid path 'a' (not absolute); allowed: an absolute path",
        ),
        ("/a/", "invalid path '/a/' (an empty component)"),
        ("/a/../b", "(the component '..')"),
        ("/:cpu.weight=100", "'/' is the root cgroup"),
        (
            "/a:cpu.weight=0",
            "cpu.weight: 0 is out of range (ERANGE); allowed: 1 to 10000",
        ),
        ("/a:cpu.weight=10001", "allowed: 1 to 10000"),
        ("/a:cpu.weight=1.5", "cpu.weight: invalid value '1.5'"),
        (
            "/a:cpu.weight.nice=-21",
            "cpu.weight.nice: -21 is out of range",
        ),
        (
            "/a:cpu.max=fast",
            "cpu.max: invalid value 'fast' (EINVAL); allowed: 'QUOTA_US [PERIOD_US]'",
        ),
        (
            "/a:cpu.max=500 100000",
            "--cgroup: /a: cpu.max: quota and period must be at least 1000 us (EINVAL)",
        ),
        (
            "/a:cpu.max=50000 2000000",
            "cpu.max: period must be at most 1000000 us (EINVAL)",
        ),
        (
            "/a:cpu.max=50000,cpu.max.burst=60000",
            "cpu.max.burst must not exceed the cpu.max quota",
        ),
        ("/a:cpu.max.burst=x", "cpu.max.burst: invalid value 'x'"),
        // The quota's nanoseconds overflow u64: refused, never taken as unlimited.
        (
            "/a:cpu.max=9223372036854775807 100000",
            "cpu.max: quota exceeds max_cfs_runtime (its ns overflow u64) (EINVAL)",
        ),
        (
            "/a:cpu.max=18446744073709551 100000",
            "cpu.max: quota exceeds max_cfs_runtime (EINVAL)",
        ),
        (
            "/a:cpu.max=max 18446744073709552",
            "period must be at most 1000000 us (its ns overflow u64) (EINVAL)",
        ),
        (
            "/a:cpu.max.burst=18446744073709552",
            "cpu.max.burst exceeds max_cfs_runtime (its ns overflow u64) (EINVAL)",
        ),
        // A burst written before the quota is checked when the quota is written.
        (
            "/a:cpu.max.burst=60000,cpu.max=50000",
            "cpu.max.burst must not exceed the cpu.max quota",
        ),
        (
            "/a:cpu.idle=2",
            "cpu.idle: invalid value '2' (EINVAL); allowed: 0 or 1",
        ),
        ("/a:cpu.idle=1,cpu.idle=0", "cpu.idle: given twice"),
        (
            "/a:cpuset.cpus=999",
            "--cgroup: /a: cpuset.cpus: invalid value '999' (CPU 999 is out of range",
        ),
        (
            "/a:cpuset.cpus=x",
            "--cgroup '/a:cpuset.cpus=x': cpuset.cpus: invalid value 'x'",
        ),
        (
            "/a:cpuset.cpus=0,cpuset.cpus.partition=isolated",
            "cpuset.cpus.partition: 'isolated' (a partition without load balancing) is not modelled",
        ),
        (
            "/a:cpuset.cpus.partition=root",
            "--cgroup: /a: cpuset.cpus.partition=root needs the group's own cpuset.cpus",
        ),
        (
            "/a:cpuset.mems=0",
            "cpuset.mems: this cpuset controller file is not modelled",
        ),
        (
            "/a:io.weight=5",
            "'io.weight' is not a cpu controller file fairsim models",
        ),
        (
            "/a:cpu.weight=5,cpu.weight.nice=1",
            "given after cpu.weight",
        ),
    ] {
        refused(&["run", "--cgroup", cgroup, "-w", w], want);
    }
    refused(
        &["run", "--cgroup", "/a", "--cgroup", "/a", "-w", w],
        "--cgroup '/a': /a is declared twice",
    );
    refused(
        &["run", "--cgroup", "/a", "-w", "sysbench-cpu:cgroup=/b"],
        "--workload: sysbench-cpu: cgroup: '/b' is not a declared cgroup; allowed: /, /a",
    );
    refused(
        &["run", "-w", "sysbench-cpu:cgroup=b"],
        "sysbench-cpu: cgroup: invalid value 'b' (not absolute)",
    );
    refused(
        &["run", "-w", "cgexec -g memory:/a sysbench cpu run"],
        "cgexec: -g: controllers 'memory' do not include cpu",
    );
}

#[test]
fn cfs_kernels_and_race_mode_refuse_groups() {
    for k in ["3.9", "4.5", "4.15", "4.16", "6.5"] {
        refused(
            &["run", "--kernel", k, "--cgroup", "/a", "-w", "sysbench-cpu"],
            "--cgroup: task groups are modelled for --kernel 6.12 only",
        );
    }
    refused(
        &["run", "--kernel", "4.15", "-w", "sysbench-cpu:cgroup=/"],
        "--workload: sysbench-cpu: cgroup: task groups are modelled for --kernel 6.12 only (Linux 4.15.0's group scheduling is not ported); allowed: --kernel 6.12, or no cgroup=",
    );
    refused(
        &[
            "compare",
            "--cgroup",
            "/a",
            "-w",
            "sysbench-cpu:cgroup=/a",
            "--seeds",
            "1",
            "--new-kernel",
            "6.5",
            "--new",
            "",
        ],
        "allowed: --kernel 6.12, or no --cgroup",
    );
    // Race mode shares no option with run: clap refuses the option by name.
    refused(&["race", "--cgroup", "/a"], "'--cgroup'");
}

#[test]
fn scenario_tables_declare_groups_and_options_write_on_top() {
    let dir = scratch("scenario");
    let s = dir.join("s.toml");
    std::fs::write(
        &s,
        "smp = \"2\"\nduration = \"50ms\"\nworkload = [\"sysbench-cpu:threads=1,events=0,time=9s,cgroup=/x/y\"]\n[cgroup.\"/x\"]\n\"cpu.weight\" = 300\n[cgroup.\"/x/y\"]\ncpu.weight.nice = 5\n",
    )
    .unwrap();
    let j = dir.join("run.json");
    ok(&["run", s.to_str().unwrap(), "--json", j.to_str().unwrap()]);
    let doc = json(&j);
    let cg = doc["cgroups"].as_array().unwrap();
    let got: Vec<(&str, u64)> = cg[1..]
        .iter()
        .map(|g| {
            (
                g["path"].as_str().unwrap(),
                g["cpu.weight"].as_u64().unwrap(),
            )
        })
        .collect();
    // nice 5 is 335 shares, which cpu.weight reads back as 33.
    assert_eq!(got, [("/x", 300), ("/x/y", 33)]);
    ok(&[
        "run",
        s.to_str().unwrap(),
        "--cgroup",
        "/x:cpu.weight=50",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert_eq!(json(&j)["cgroups"][1]["cpu.weight"], 50);
    std::fs::write(&s, "[cgroup.\"/x\"]\n\"cpu.max\" = \"fast\"\n").unwrap();
    refused(
        &["run", s.to_str().unwrap(), "-w", "sysbench-cpu"],
        "scenario table [cgroup.\"/x\"]: cpu.max: invalid value 'fast'",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compare_and_sweep_report_each_groups_metrics() {
    let dir = scratch("compare");
    let j = dir.join("cmp.json");
    let mut args = vec![
        "compare",
        "--duration",
        "30ms",
        "--seeds",
        "2",
        "--min-seeds",
        "2",
        "--new",
        "NO_SIS_UTIL",
        "--until",
        "cgroup./b.share-%:significant",
        "--json",
        j.to_str().unwrap(),
    ];
    args.extend(TWO_GROUPS);
    let out = ok(&args);
    for m in [
        "cgroup./a.usage_usec",
        "cgroup./b.wait_usec",
        "cgroup./b.share-%",
    ] {
        assert!(out.contains(m), "{m} missing in {out}");
    }
    assert!(!out.contains("cgroup./.usage_usec"), "{out}");
    let mut args = vec![
        "compare",
        "--duration",
        "30ms",
        "--seeds",
        "2",
        "--min-seeds",
        "2",
        "--new",
        "NO_SIS_UTIL",
        "--until",
        "cgroup./c.share-%:significant",
    ];
    args.extend(TWO_GROUPS);
    refused(&args, "--until: unknown metric 'cgroup./c.share-%'");
    std::fs::write(
        dir.join("plan.toml"),
        "name = \"cg\"\n[run]\nduration = \"20ms\"\ncgroup = [\"/a:cpu.weight=100\", \"/b\"]\n[axes]\nmachines = [\"smt-mc-1s4c2t\"]\nworkloads = [\"sysbench-cpu:threads=1,events=0,time=10s,cgroup=/a\"]\nseeds = 1\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_fairsim"))
        .current_dir(&dir)
        .args(["sweep", "plan.toml", "--out", "o"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let point = std::fs::read_dir(dir.join("o/points"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let point = json(&point);
    let names: Vec<&str> = point["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .filter(|n| n.starts_with("cgroup."))
        .collect();
    assert_eq!(
        names,
        [
            "cgroup./a.usage_usec",
            "cgroup./a.wait_usec",
            "cgroup./a.share-%",
            "cgroup./a.nr_throttled",
            "cgroup./a.throttled_usec",
            "cgroup./b.usage_usec",
            "cgroup./b.wait_usec",
            "cgroup./b.share-%",
            "cgroup./b.nr_throttled",
            "cgroup./b.throttled_usec",
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The weights at work: two saturating groups on one CPU, at cpu.weight 100 and 200,
/// share it 1:2 (the group entities weigh 1024 and 2048 on the CPU's runqueue), within
/// a few per cent.
#[test]
fn two_saturating_groups_at_cpu_weight_100_and_200_share_one_cpu_1_to_2() {
    let dir = scratch("weights");
    let j = dir.join("run.json");
    let mut args = vec!["run", "--duration", "2s", "--json", j.to_str().unwrap()];
    args.extend(TWO_GROUPS);
    ok(&args);
    let doc = json(&j);
    let cg = doc["cgroups"].as_array().unwrap();
    let usage = |g: usize| cg[g]["usage_usec"].as_u64().unwrap() as f64;
    let ratio = usage(2) / usage(1);
    assert!((ratio / 2.0 - 1.0).abs() < 0.03, "/b:/a = {ratio}: {cg:?}");
    let share = cg[2]["share_pct"].as_f64().unwrap();
    assert!((share - 200.0 / 3.0).abs() < 2.0, "{share}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bandwidth control at work: a saturating group under `cpu.max 50000 100000` on a
/// 4-CPU machine gets half a CPU over 2 s (its debt carried from period to period), and
/// `cpu.stat` counts its periods and throttled periods; an idle group fills the rest.
#[test]
fn a_group_at_cpu_max_half_a_cpu_gets_half_and_counts_its_throttling() {
    let dir = scratch("cpumax");
    let j = dir.join("run.json");
    ok(&[
        "run",
        "--smp",
        "4",
        "--duration",
        "2s",
        "--check-invariants",
        "--cgroup",
        "/lim:cpu.max=50000 100000",
        "--cgroup",
        "/bg:cpu.idle=1",
        "-w",
        "sysbench-cpu:threads=4,events=0,time=100s,cgroup=/lim",
        "-w",
        "sysbench-cpu:threads=2,events=0,time=100s,cgroup=/bg",
        "--json",
        j.to_str().unwrap(),
    ]);
    let doc = json(&j);
    let cg = doc["cgroups"].as_array().unwrap();
    let lim = &cg[1];
    assert_eq!(lim["cpu.max"], "50000 100000");
    let usage = lim["usage_usec"].as_u64().unwrap() as f64;
    // 2 s at half a CPU, and at most a tick's overrun per CPU and period.
    assert!((1_000_000.0..1_100_000.0).contains(&usage), "{usage}");
    let periods = lim["nr_periods"].as_u64().unwrap();
    assert!((19..=21).contains(&periods), "{periods}");
    assert!(lim["nr_throttled"].as_u64().unwrap() >= periods - 1);
    assert!(lim["throttled_usec"].as_u64().unwrap() > 4_000_000);
    assert_eq!(cg[2]["cpu.idle"], 1);
    assert_eq!(cg[2]["cpu.weight"], 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A root partition on a group of the tree is `--cpuset` with the workload's `cpus=`: the
/// same schedstat, summary and JSON but for the workload's own spelling; a group with
/// cpuset files only is no task group, so neither run has a cgroups table.
#[test]
fn a_cpuset_partition_group_is_the_cpuset_shorthand() {
    let dir = scratch("cpuset");
    let run = |extra: &[&str], name: &str| {
        let ss = dir.join(format!("{name}.ss"));
        let j = dir.join(format!("{name}.json"));
        let mut args = vec![
            "run",
            "--topology",
            "numa-2s4c2t",
            "--seed",
            "4",
            "--schedstat",
            ss.to_str().unwrap(),
            "--json",
            j.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let out = ok(&args);
        let mut doc = json(&j);
        doc.as_object_mut().unwrap().remove("workloads");
        doc.as_object_mut().unwrap().remove("events");
        (std::fs::read_to_string(&ss).unwrap(), doc, out)
    };
    let (ss_a, j_a, out_a) = run(
        &[
            "--cgroup",
            "/p:cpuset.cpus=4-5,6-7,cpuset.cpus.partition=root",
            "-w",
            "hackbench:g=1,l=50,f=4,cgroup=/p",
        ],
        "group",
    );
    let (ss_b, j_b, out_b) = run(
        &["--cpuset", "4-7", "-w", "hackbench:g=1,l=50,f=4,cpus=4-7"],
        "option",
    );
    assert_eq!(ss_a, ss_b);
    assert_eq!(j_a["machine"]["cpusets"], j_b["machine"]["cpusets"]);
    assert!(j_a.get("cgroups").is_none());
    assert!(
        out_a.contains("cpuset partitions: root domains 0-3,8-15 | 4-7"),
        "{out_a}"
    );
    assert!(!out_a.contains("cgroups ("));
    let keep = |o: &str| -> Vec<String> {
        o.lines()
            .filter(|l| !l.contains("workload 1:") && !l.contains("events"))
            .map(String::from)
            .collect()
    };
    assert_eq!(keep(&out_a), keep(&out_b));
    // A scenario table makes the same partition.
    let s = dir.join("s.toml");
    std::fs::write(
        &s,
        "[cgroup.\"/p\"]\n\"cpuset.cpus\" = \"4-7\"\n\"cpuset.cpus.partition\" = \"root\"\n",
    )
    .unwrap();
    let (ss_c, _, _) = run(
        &[
            s.to_str().unwrap(),
            "-w",
            "hackbench:g=1,l=50,f=4,cgroup=/p",
        ],
        "scenario",
    );
    assert_eq!(ss_a, ss_c);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The bandwidth writes of one group made in order, each a `tg_set_cfs_bandwidth()`
/// that refills the runtime: `cpu.max` then `cpu.max.burst` starts the group at quota +
/// burst, as a real 6.12 and 6.1 do (the first refill then counts the burst used); the
/// other order starts it at the quota, and a group that never leaves runtime over never
/// bursts.
#[test]
fn cpu_max_then_burst_starts_the_group_at_quota_plus_burst() {
    let dir = scratch("burst");
    let j = dir.join("run.json");
    let run = |writes: &str| {
        ok(&[
            "run",
            "--smp",
            "4",
            "--duration",
            "1s",
            "--cgroup",
            &format!("/lim:{writes}"),
            "-w",
            "sysbench-cpu:threads=4,events=0,time=100s,cgroup=/lim",
            "--json",
            j.to_str().unwrap(),
        ]);
        let doc = json(&j);
        let lim = doc["cgroups"][1].clone();
        assert_eq!(lim["cpu.max"], "50000 100000");
        assert_eq!(lim["cpu.max.burst"], 50000);
        (
            lim["usage_usec"].as_u64().unwrap(),
            lim["nr_bursts"].as_u64().unwrap(),
            lim["burst_usec"].as_u64().unwrap(),
        )
    };
    let (usage_first, bursts_first, burst_usec_first) =
        run("cpu.max=50000 100000,cpu.max.burst=50000");
    let (usage_last, bursts_last, burst_usec_last) =
        run("cpu.max.burst=50000,cpu.max=50000 100000");
    // The extra 50 ms of the start is all the burst four saturating threads ever use.
    assert_eq!(burst_usec_first, 50_000);
    assert!((1..=2).contains(&bursts_first), "{bursts_first}");
    assert_eq!((bursts_last, burst_usec_last), (0, 0));
    let extra = usage_first as i64 - usage_last as i64;
    assert!(
        (45_000..=55_000).contains(&extra),
        "{usage_first} - {usage_last}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
