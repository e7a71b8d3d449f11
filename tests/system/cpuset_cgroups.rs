//! The cpuset controller in the cgroup tree: a root partition declared on a group is the
//! same run as `--cpuset` with the workload's `cpus=`, a group with cpuset files alone
//! makes no task group, a group with both weighs its tasks and bounds their affinity,
//! and bad cpusets are refused in one line.

use crate::common;

use fairsim_output::to_json;
use fairsim_topology::CpuMask;
use fairsim_workloads::run::{prepare, run, RunSpec};

fn spec_with(options: &[&str], workloads: &[&str], cpusets: &[&str]) -> RunSpec {
    let mut s = common::spec("numa-2s4c2t", workloads, 150, 3);
    let options: Vec<String> = options.iter().map(|o| o.to_string()).collect();
    s.config.cgroups =
        fairsim_workloads::cgroups::from_sources(&Default::default(), &options).unwrap();
    s.config.check_invariants = true;
    let n = s.machine.nr_cpus();
    s.cpusets = cpusets
        .iter()
        .map(|l| CpuMask::parse_list(n, l).unwrap())
        .collect();
    s
}

/// The JSON results without the workload specifications, which spell `cgroup=` or
/// `cpus=`.
fn results(s: &RunSpec) -> (String, String) {
    let r = run(s, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"));
    let mut j = to_json(s, &r);
    let text = serde_json::to_string(&j["tasks"]).unwrap();
    for k in ["workloads", "run", "config"] {
        if let Some(o) = j.as_object_mut() {
            o.remove(k);
        }
    }
    let topo = format!("{:?}", r.outcome.sched().topo);
    (serde_json::to_string(&j).unwrap() + &text, topo)
}

#[test]
fn a_root_partition_group_is_the_cpuset_shorthand() {
    let by_group = spec_with(
        &["/p:cpuset.cpus=4-7,cpuset.cpus.partition=root"],
        &["hackbench:g=1,l=50,f=4,cgroup=/p"],
        &[],
    );
    let by_option = spec_with(&[], &["hackbench:g=1,l=50,f=4,cpus=4-7"], &["4-7"]);
    let w = prepare(&by_group).unwrap();
    assert!(!w.sched().task_groups().active());
    let (a, b) = (results(&by_group), results(&by_option));
    assert!(a == b, "the runs differ");
}

#[test]
fn a_group_with_both_controllers_weighs_and_bounds_its_tasks() {
    let s = spec_with(
        &["/w:cpu.weight=300,cpuset.cpus=8-11", "/c:cpuset.cpus=2-3"],
        &[
            "schbench:m=1,t=2,c=2ms,s=2ms,cgroup=/w",
            "sysbench-cpu:threads=2,events=20,cgroup=/c,cpus=3-5",
        ],
        &[],
    );
    let w = prepare(&s).unwrap();
    let tg = w.sched().task_groups();
    assert!(tg.active());
    let groups: Vec<(&str, u64)> = tg
        .tgs
        .iter()
        .map(|g| (g.path.as_str(), g.shares >> 10))
        .collect();
    // /c writes cpuset files only: no task group.
    assert_eq!(groups, [("/", 1024), ("/w", 3072)]);
    let r = run(&s, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"));
    for t in r.outcome.tasks() {
        let mask = t.cpus_allowed.as_ref().map(|m| m.to_list());
        let want = if t.name.starts_with("sysbench") {
            "3"
        } else {
            "8-11"
        };
        assert_eq!(mask.as_deref(), Some(want), "{}", t.name);
    }
}

#[test]
fn cpuset_errors_are_one_line_naming_the_field() {
    for (opts, workloads, want) in [
        (
            &["/p:cpuset.cpus=4-7"][..],
            &["schbench:m=1,t=1,cgroup=/p,cpus=0-1"][..],
            "schbench: cgroup: the affinity 0-1 of task",
        ),
        (
            &["/p:cpuset.cpus=16"],
            &["schbench:m=1,t=1,cgroup=/p"],
            "--cgroup: /p: cpuset.cpus: invalid value '16'",
        ),
        (
            &["/p:cpuset.cpus.partition=root"],
            &["schbench:m=1,t=1"],
            "--cgroup: /p: cpuset.cpus.partition=root needs the group's own cpuset.cpus",
        ),
    ] {
        let s = spec_with(opts, workloads, &[]);
        let Err(e) = prepare(&s) else {
            panic!("accepted")
        };
        let e = e.to_string();
        assert!(e.contains(want) && !e.contains('\n'), "{e}");
    }
    let s = spec_with(
        &["/p:cpuset.cpus=0-3,cpuset.cpus.partition=root"],
        &["schbench:m=1,t=1"],
        &["2-5"],
    );
    let Err(e) = prepare(&s) else {
        panic!("accepted")
    };
    let e = e.to_string();
    assert!(e.contains("share CPUs 2-3"), "{e}");
}
