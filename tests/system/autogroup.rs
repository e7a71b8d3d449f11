//! Autogroup from the engine's side (`kernel.sched_autogroup_enabled=1`): one autogroup
//! per workload, numbered in launch order, holding every task the workload forks or
//! clones unless a cgroup holds it; CPU hogs share a CPU by session rather than by
//! thread; the sysctl at 0 changes nothing; CFS kernels and clashing paths are refused
//! in one line; and runs repeat byte for byte.

use crate::common;

use fairsim_balance::group::ROOT_GROUP;
use fairsim_balance::{Kernel, TunablePlace};
use fairsim_output::{cgroup_rows, summary, to_json};
use fairsim_topology::source::{parse_spec, SpecOptions};
use fairsim_topology::Arch;
use fairsim_workloads::run::{prepare, run, RunSpec};
use fairsim_workloads::RunResult;

/// `common::spec` on `cpus` CPUs, with `kernel.sched_autogroup_enabled` written to
/// `enabled` (no write at all for `None`) and the groups of `options` declared.
fn spec(
    cpus: &str,
    enabled: Option<u8>,
    options: &[&str],
    workloads: &[&str],
    ms: u64,
    seed: u64,
) -> RunSpec {
    let mut s = common::spec("numa-2s4c2t", workloads, ms, seed);
    s.machine = parse_spec(&SpecOptions::new(cpus, Arch::X86))
        .unwrap()
        .into();
    if let Some(v) = enabled {
        s.config
            .params
            .tunables
            .write(
                Kernel::V6_12,
                TunablePlace::Sysctl,
                &format!("kernel.sched_autogroup_enabled={v}"),
            )
            .unwrap();
    }
    let options: Vec<String> = options.iter().map(|o| o.to_string()).collect();
    s.config.cgroups =
        fairsim_workloads::cgroups::from_sources(&Default::default(), &options).unwrap();
    s.config.check_invariants = true;
    s
}

fn run_ok(s: &RunSpec) -> RunResult {
    run(s, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// The group path of each forked task of workload `i`.
fn groups_of(r: &RunResult, i: usize) -> Vec<String> {
    let (a, b) = r.outcome.workloads()[i].tasks;
    let tg = r.outcome.sched().task_groups();
    r.outcome.tasks()[a..b]
        .iter()
        .filter_map(|t| t.sched_id)
        .map(|sid| tg.tgs[tg.group_of(sid)].path.clone())
        .collect()
}

/// Workload `i`'s CPU time, ns.
fn runtime(r: &RunResult, i: usize) -> u64 {
    let (a, b) = r.outcome.workloads()[i].tasks;
    (a..b).map(|x| r.outcome.task_metrics(x).runtime_ns).sum()
}

const HOGS: [&str; 2] = [
    "sysbench-cpu:threads=1,events=0,time=100s",
    "sysbench-cpu:threads=4,events=0,time=100s",
];

#[test]
fn hogs_share_a_cpu_by_session_with_autogroup_and_by_thread_without() {
    let share = |enabled| {
        let r = run_ok(&spec("1", enabled, &[], &HOGS, 1000, 1));
        let (one, four) = (runtime(&r, 0), runtime(&r, 1));
        one as f64 / (one + four) as f64
    };
    // Each autogroup has the weight of nice 0: one hog against four is 1:1.
    let on = share(Some(1));
    assert!((0.48..=0.52).contains(&on), "{on}");
    // Without autogroups every thread weighs the same: 1:4.
    let off = share(None);
    assert!((0.18..=0.22).contains(&off), "{off}");
}

#[test]
fn each_workload_is_a_session_with_its_own_autogroup_forked_children_included() {
    let s = spec(
        "4",
        Some(1),
        &[],
        &["hackbench:g=1,l=20,f=2", "sysbench-cpu:threads=2,events=40"],
        200,
        3,
    );
    let r = run_ok(&s);
    let tg = r.outcome.sched().task_groups();
    let paths: Vec<(&str, Option<usize>, u64)> = tg
        .tgs
        .iter()
        .map(|g| (g.path.as_str(), g.parent, g.shares >> 10))
        .collect();
    assert_eq!(
        paths,
        [
            ("/", None, 1024),
            ("/autogroup-1", Some(ROOT_GROUP), 1024),
            ("/autogroup-2", Some(ROOT_GROUP), 1024),
        ]
    );
    assert!(tg.is_autogroup(1) && tg.is_autogroup(2));
    // hackbench's launcher forks its senders and receivers: all in the session's group.
    let h = groups_of(&r, 0);
    assert!(
        h.len() > 2 && h.iter().all(|p| p == "/autogroup-1"),
        "{h:?}"
    );
    let b = groups_of(&r, 1);
    assert!(
        b.len() == 3 && b.iter().all(|p| p == "/autogroup-2"),
        "{b:?}"
    );
    // The report lists them as it lists cgroups, root first.
    let rows = cgroup_rows(&r.outcome);
    let got: Vec<(&str, u64, Option<u64>)> = rows
        .iter()
        .map(|g| (g.path.as_str(), g.tasks, g.weight))
        .collect();
    assert_eq!(
        got,
        [
            ("/", 0, None),
            ("/autogroup-1", h.len() as u64, Some(100)),
            ("/autogroup-2", 3, Some(100)),
        ]
    );
    let j = to_json(&s, &r);
    assert_eq!(j["cgroups"][1]["path"], "/autogroup-1");
    assert_eq!(j["cgroups"][1]["parent"], "/");
    assert_eq!(j["tasks"][0]["cgroup"], "/autogroup-1");
    assert!(summary(&s, &r).contains("\n  /autogroup-2  "));
}

#[test]
fn tasks_a_cgroup_holds_are_not_autogrouped() {
    let rtapp = format!(
        "rtapp:{}/tests/data/rtapp/taskgroups.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let s = spec(
        "4",
        Some(1),
        &["/x:cpu.weight=50", "/a"],
        &["sysbench-cpu:threads=2,events=40,cgroup=/x", rtapp.as_str()],
        200,
        5,
    );
    let r = run_ok(&s);
    let tg = r.outcome.sched().task_groups();
    let paths: Vec<&str> = tg.tgs.iter().map(|g| g.path.as_str()).collect();
    // Declared groups, rt-app's own, then one autogroup per session: the first session's
    // stays empty (its setsid made it, but every task of it is in /x).
    assert_eq!(
        paths,
        [
            "/",
            "/x",
            "/a",
            "/r",
            "/r/big",
            "/autogroup-1",
            "/autogroup-2"
        ]
    );
    assert!(groups_of(&r, 0).iter().all(|p| p == "/x"));
    // rt-app's threads with a taskgroup stay in it; the one left in the root cgroup
    // runs in the session's autogroup.
    assert_eq!(groups_of(&r, 1), ["/r/big", "/r/big", "/a", "/autogroup-2"]);
    let rows = cgroup_rows(&r.outcome);
    assert_eq!(rows[5].tasks_total, 0, "{:?}", rows[5]);
}

#[test]
fn the_sysctl_at_0_changes_nothing() {
    let workloads = [
        "schbench:m=1,t=3,c=3ms,s=3ms",
        "nanosleep:tasks=3,sleep=20us",
    ];
    let outputs = |enabled| {
        let s = spec("4", enabled, &[], &workloads, 150, 4);
        let r = run_ok(&s);
        assert!(!r.outcome.sched().task_groups().active());
        let mut j = to_json(&s, &r);
        // The write itself is listed; everything else must be the same.
        j.as_object_mut().unwrap().remove("tunables");
        serde_json::to_string(&j).unwrap()
    };
    let none = outputs(None);
    assert!(!none.contains("cgroup"));
    assert_eq!(none, outputs(Some(0)));
}

#[test]
fn same_seed_same_bytes_with_autogroups() {
    let outputs = |seed| {
        let s = spec(
            "4",
            Some(1),
            &["/b:cpu.weight=300"],
            &[
                "schbench:m=1,t=3,c=3ms,s=3ms",
                "nanosleep:tasks=4,sleep=20us,cgroup=/b",
                "hackbench:g=1,l=20,f=2",
            ],
            150,
            seed,
        );
        let r = run_ok(&s);
        (
            serde_json::to_string(&to_json(&s, &r)).unwrap(),
            summary(&s, &r),
        )
    };
    let a = outputs(1);
    assert_eq!(a, outputs(1));
    assert_ne!(a.0, outputs(2).0);
}

#[test]
fn prepare_refuses_cfs_kernels_and_clashing_paths_in_one_line() {
    // A write accepted for 6.12, run on a CFS kernel: the engine refuses it too.
    for k in [Kernel::V6_5, Kernel::V3_9] {
        let mut s = spec(
            "2",
            Some(1),
            &[],
            &["sysbench-cpu:threads=1,events=10"],
            20,
            1,
        );
        s.config.params.features = k.features();
        let e = prepare(&s).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "--sysctl: kernel.sched_autogroup_enabled=1 puts each session in an autogroup"
            ) && e.ends_with("allowed: --kernel 6.12, or kernel.sched_autogroup_enabled=0")
                && !e.contains('\n'),
            "{e}"
        );
        // At 0 the CFS kernels run as they did.
        let mut s = spec(
            "2",
            Some(0),
            &[],
            &["sysbench-cpu:threads=1,events=10"],
            20,
            1,
        );
        s.config.params.features = k.features();
        assert!(prepare(&s).is_ok());
    }
    let s = spec(
        "2",
        Some(1),
        &["/autogroup-1"],
        &["sysbench-cpu:threads=1,events=10"],
        20,
        1,
    );
    let e = prepare(&s).unwrap_err().to_string();
    assert_eq!(
        e,
        "--cgroup: /autogroup-1 is the name autogroup 1 goes by with kernel.sched_autogroup_enabled=1, and the outputs name groups by path; allowed: another path, or kernel.sched_autogroup_enabled=0"
    );
    // An autogroup is no cgroup: cgroup= cannot name one.
    let s = spec(
        "2",
        Some(1),
        &[],
        &["sysbench-cpu:threads=1,events=10,cgroup=/autogroup-1"],
        20,
        1,
    );
    let e = prepare(&s).unwrap_err().to_string();
    assert!(e.contains("'/autogroup-1' is not a declared cgroup"), "{e}");
}
