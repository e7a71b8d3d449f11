//! `cpus=LIST` on a workload, as a user runs it: its tasks run only there, the header
//! says so, `pin` places tasks round robin on the list, and a list the machine lacks is
//! refused in one line.

use crate::common::fairsim;

/// The CPUs that ran task work in a run with `workload`, and the run's JSON.
fn busy_cpus(workload: &str, extra: &[&str]) -> (Vec<u64>, serde_json::Value) {
    let json = std::env::temp_dir().join(format!(
        "fairsim-affinity-{}-{}.json",
        std::process::id(),
        workload.replace([':', ',', '='], "_")
    ));
    let mut args = vec![
        "run",
        "--topology",
        "numa-2s4c2t",
        "--workload",
        workload,
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = fairsim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let busy = v["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["task_ns"].as_u64().unwrap() > 0)
        .map(|c| c["cpu"].as_u64().unwrap())
        .collect();
    (busy, v)
}

#[test]
fn a_workload_runs_only_on_its_cpus() {
    let (busy, v) = busy_cpus("hackbench:g=2,l=300,cpus=0-1,8-9,pipe", &[]);
    assert!(!busy.is_empty());
    assert!(busy.iter().all(|c| [0, 1, 8, 9].contains(c)), "{busy:?}");
    assert!(busy.len() > 2, "the four CPUs share the work: {busy:?}");
    assert_eq!(
        v["workloads"][0]["spec"],
        "hackbench:g=2,l=300,f=20,s=100,pipe,process,cpus=0-1,8-9"
    );
    // Without a list the same workload spreads wider.
    let (all, _) = busy_cpus("hackbench:g=2,l=300,pipe", &[]);
    assert!(all.iter().any(|c| ![0, 1, 8, 9].contains(c)), "{all:?}");
}

#[test]
fn pin_places_tasks_round_robin_on_the_list() {
    let (busy, _) = busy_cpus("nanosleep:tasks=4,pin,cpus=10-11", &["--duration", "50ms"]);
    assert_eq!(busy, vec![10, 11]);
}

#[test]
fn a_list_the_machine_lacks_is_refused_in_one_line() {
    for (spec, want) in [
        (
            "nanosleep:tasks=2,cpus=8-9",
            "fairsim: error: --workload: nanosleep: cpus: invalid value '8-9' (CPU 9 is not on the 4-CPU machine, whose CPUs are 0-3); allowed: CPUs of the machine",
        ),
        (
            "schbench:cpus=3-1",
            "fairsim: error: --workload: schbench: cpus: invalid value '3-1' (range '3-1' runs backwards); allowed: a CPU list such as 0-9,20-29",
        ),
    ] {
        let o = fairsim(&["run", "--smp", "4", "--workload", spec]);
        assert_eq!(o.status.code(), Some(2), "{spec}");
        assert_eq!(String::from_utf8(o.stderr).unwrap().trim_end(), want);
    }
}
