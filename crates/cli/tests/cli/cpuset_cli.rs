//! `--cpuset LIST`, as a user runs it: `fairsim topology` prints each exclusive partition's
//! domains with its `root domain span:` line, one socket of e5-2690v2 as a one-socket
//! machine of that shape; `run` names the partitions in its summary and JSON; scenario
//! files take `cpusets`; bad lists are refused in one line with exit status 2.

use crate::common::fairsim;

fn ok(args: &[&str]) -> String {
    let o = fairsim(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn bad(args: &[&str], needle: &str) {
    let o = fairsim(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"));
}

#[test]
fn a_socket_partition_prints_as_the_socket_alone() {
    let parted = ok(&[
        "topology",
        "--topology",
        "e5-2690v2",
        "--cpuset",
        "0-19",
        "--format",
        "dmesg",
    ]);
    // The top cpuset keeps socket 1 and is printed first; socket 0's block follows.
    let blocks: Vec<&str> = parted.split("root domain span: ").collect();
    assert_eq!(blocks.len(), 3, "{parted}");
    assert!(blocks[0].starts_with("CPU20 attaching"));
    assert!(blocks[1].starts_with("20-39 (max cpu_capacity = 1024)\nCPU0 attaching"));
    assert_eq!(blocks[2], "0-19 (max cpu_capacity = 1024)\n");
    let socket0 = blocks[1].split_once('\n').unwrap().1;
    let alone = ok(&[
        "topology",
        "--smp",
        "20,sockets=1,dies=1,cores=10,threads=2",
        "--format",
        "dmesg",
    ]);
    assert_eq!(socket0, alone);
    // The whole machine has a NUMA level the partition lacks.
    let whole = ok(&["topology", "--topology", "e5-2690v2", "--format", "dmesg"]);
    assert!(whole.contains("level=NUMA"));
    assert!(!socket0.contains("level=NUMA"));
}

#[test]
fn run_names_the_partitions_in_its_summary_and_json() {
    let json = std::env::temp_dir().join(format!("fairsim-cpuset-{}.json", std::process::id()));
    let out = ok(&[
        "run",
        "--topology",
        "numa-2s4c2t",
        "--cpuset",
        "8-15",
        "--workload",
        "hackbench:g=1,l=10,cpus=8-15",
        "--duration",
        "50ms",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        out.contains("cpuset partitions: root domains 0-7 | 8-15"),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).ok();
    assert_eq!(v["machine"]["cpusets"], serde_json::json!(["8-15"]));
    assert_eq!(
        v["machine"]["root_domains"],
        serde_json::json!(["0-7", "8-15"])
    );
}

#[test]
fn scenario_files_and_compare_take_cpusets() {
    let dir = std::env::temp_dir().join(format!("fairsim-cpuset-scn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scn = dir.join("s.toml");
    std::fs::write(
        &scn,
        "topology = \"numa-2s4c2t\"\ncpusets = [\"0-3\", \"12-15\"]\n\
         workload = [\"hackbench:g=1,l=5,cpus=0-3\"]\nduration = \"20ms\"\n",
    )
    .unwrap();
    let out = ok(&["run", scn.to_str().unwrap()]);
    assert!(out.contains("root domains 4-11 | 0-3 | 12-15"), "{out}");
    // The command line's --cpuset replaces the file's.
    let out = ok(&["run", scn.to_str().unwrap(), "--cpuset", "0-7"]);
    assert!(out.contains("root domains 8-15 | 0-7"), "{out}");
    std::fs::write(
        &scn,
        "cpusets = [\"0-3\", \"3\"]\nworkload = [\"hackbench\"]\n",
    )
    .unwrap();
    bad(&["run", scn.to_str().unwrap()], "scenario key cpusets: ");
    let o = fairsim(&[
        "compare",
        "--topology",
        "numa-2s4c2t",
        "--cpuset",
        "8-15",
        "--workload",
        "hackbench:g=1,l=5,cpus=8-15",
        "--duration",
        "20ms",
        "--new",
        "NO_SIS_UTIL",
        "--seeds",
        "2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_cpusets_are_refused_in_one_line() {
    for cmd in ["topology", "run"] {
        bad(
            &[cmd, "--cpuset", "0-3", "--cpuset", "2-5"],
            "--cpuset: 2-5 and 0-3 share CPUs 2-3; allowed: exclusive partitions",
        );
        bad(
            &[cmd, "--cpuset", ""],
            "--cpuset: invalid value ''; allowed: a non-empty",
        );
        bad(&[cmd, "--cpuset", "0-16"], "CPU 16 is out of range 0-15");
        bad(&[cmd, "--cpuset", "a-b"], "--cpuset: invalid value 'a-b'");
        bad(&[cmd, "--cpuset", "5-2"], "runs backwards");
    }
    bad(
        &["race", "--cpuset", "0-3"],
        "--cpuset: not available with race",
    );
}

#[test]
fn sweep_plans_take_cpuset_as_a_run_option() {
    let dir = std::env::temp_dir().join(format!("fairsim-cpuset-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let plan = |cpuset: &str| {
        format!(
            "name = \"parted\"\n[run]\nduration = \"8ms\"\ncpuset = [\"{cpuset}\"]\n[axes]\n\
             machines = [\"smt-mc-1s4c2t\"]\nworkloads = [\"hackbench:g=1,l=2,cpus=4-7\"]\n\
             seeds = 1\n[axes.features]\nbase = \"\"\n"
        )
    };
    std::fs::write(dir.join("plan.toml"), plan("4-7")).unwrap();
    let out = dir.join("out");
    ok(&[
        "sweep",
        dir.join("plan.toml").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let planned = std::fs::read_to_string(out.join("plan.json")).unwrap();
    assert!(
        planned.contains("--cpuset") && planned.contains("4-7"),
        "{planned}"
    );
    std::fs::write(dir.join("plan.toml"), plan("4-8")).unwrap();
    bad(
        &[
            "sweep",
            dir.join("plan.toml").to_str().unwrap(),
            "--out",
            dir.join("bad").to_str().unwrap(),
        ],
        "--cpuset: invalid value '4-8'",
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn topology_json_names_root_domains_only_when_partitioned() {
    let parted: serde_json::Value =
        serde_json::from_str(&ok(&["topology", "--cpuset", "8-15", "--format", "json"])).unwrap();
    assert_eq!(parted["root_domains"][0]["span"], "0-7");
    assert_eq!(parted["root_domains"][1]["span"], "8-15");
    assert_eq!(parted["root_domains"][1]["max_cpu_capacity"], 1024);
    assert_eq!(parted["cpus"][9]["root_domain"], 1);
    let whole: serde_json::Value =
        serde_json::from_str(&ok(&["topology", "--format", "json"])).unwrap();
    assert!(whole.get("root_domains").is_none());
    assert!(whole["cpus"][9].get("root_domain").is_none());
}
