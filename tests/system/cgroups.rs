//! Task groups from the engine's side: declared groups reach the scheduler in creation
//! order with their weights, every task a workload creates (forked children included)
//! is in its workload's group, rt-app's taskgroups are created when not declared, the
//! report sums the tasks' counters over each subtree, outputs without groups are what
//! they were, and a CFS-era kernel is refused.

use crate::common;

use fairsim_balance::group::ROOT_GROUP;
use fairsim_balance::Kernel;
use fairsim_output::{cgroup_rows, summary, to_json};
use fairsim_workloads::run::{prepare, run, RunSpec};
use fairsim_workloads::RunResult;

fn rtapp_file(name: &str) -> String {
    format!("{}/tests/data/rtapp/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// `common::spec` with the groups of `options` (as `--cgroup` takes them).
fn spec_with(options: &[&str], workloads: &[&str], ms: u64, seed: u64) -> RunSpec {
    let mut s = common::spec("numa-2s4c2t", workloads, ms, seed);
    let options: Vec<String> = options.iter().map(|o| o.to_string()).collect();
    s.config.cgroups =
        fairsim_workloads::cgroups::from_sources(&Default::default(), &options).unwrap();
    s.config.check_invariants = true;
    s
}

fn run_ok(s: &RunSpec) -> RunResult {
    run(s, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// The path of the group each forked task is in, by task name, in task order.
fn task_groups(r: &RunResult) -> Vec<(String, String)> {
    let w = &r.outcome;
    let tg = w.sched().task_groups();
    w.tasks()
        .iter()
        .filter_map(|t| {
            let sid = t.sched_id?;
            Some((t.name.clone(), tg.tgs[tg.group_of(sid)].path.clone()))
        })
        .collect()
}

#[test]
fn declared_groups_reach_the_scheduler_in_order_with_their_weights() {
    let s = spec_with(
        &["/b/c:cpu.weight=250", "/a:cpu.weight.nice=5", "/d"],
        &["sysbench-cpu:threads=1,events=10"],
        20,
        1,
    );
    let w = prepare(&s).unwrap();
    let tg = w.sched().task_groups();
    let got: Vec<(&str, Option<usize>, u64)> = tg
        .tgs
        .iter()
        .map(|g| (g.path.as_str(), g.parent, g.shares >> 10))
        .collect();
    // cpu.weight 250 is DIV_ROUND_CLOSEST(250 * 1024, 100) = 2560 shares; nice 5 is
    // sched_prio_to_weight[25] = 335; /b, made by mkdir -p, keeps the default 1024.
    assert_eq!(
        got,
        [
            ("/", None, 1024),
            ("/b", Some(0), 1024),
            ("/b/c", Some(1), 2560),
            ("/a", Some(0), 335),
            ("/d", Some(0), 1024),
        ]
    );
}

#[test]
fn every_task_of_a_workload_is_in_its_group_forked_children_included() {
    let s = spec_with(
        &["/h:cpu.weight=300", "/s/t"],
        &[
            "hackbench:g=1,l=20,f=2,cgroup=/h",
            "sysbench-cpu:threads=2,events=40,cgroup=/s/t",
            "nanosleep:tasks=2",
        ],
        200,
        3,
    );
    let r = run_ok(&s);
    let groups = task_groups(&r);
    let of = |workload: usize| -> Vec<&str> {
        let (a, b) = r.outcome.workloads()[workload].tasks;
        r.outcome.tasks()[a..b]
            .iter()
            .filter_map(|t| t.sched_id)
            .map(|sid| {
                let tg = r.outcome.sched().task_groups();
                tg.tgs[tg.group_of(sid)].path.as_str()
            })
            .collect()
    };
    // hackbench's launcher forks its senders and receivers: all of them are in /h.
    assert!(of(0).len() > 2, "{groups:?}");
    assert!(of(0).iter().all(|p| *p == "/h"), "{groups:?}");
    assert!(
        of(1).len() >= 3 && of(1).iter().all(|p| *p == "/s/t"),
        "{groups:?}"
    );
    assert!(of(2).iter().all(|p| *p == "/"), "{groups:?}");
}

#[test]
fn rtapp_taskgroups_are_created_when_not_declared_and_override_the_workload_group() {
    let w = format!("rtapp:{},cgroup=/launch", rtapp_file("taskgroups.json"));
    let s = spec_with(&["/launch", "/a:cpu.weight=50"], &[w.as_str()], 200, 5);
    let r = run_ok(&s);
    let tg = r.outcome.sched().task_groups();
    let paths: Vec<&str> = tg.tgs.iter().map(|g| g.path.as_str()).collect();
    // Declared first, then what the file creates (with its parent), in file order.
    assert_eq!(paths, ["/", "/launch", "/a", "/r", "/r/big"]);
    assert_eq!(tg.tgs[tg.find("/r/big").unwrap()].shares >> 10, 1024);
    assert_eq!(tg.tgs[tg.find("/a").unwrap()].shares >> 10, 512);
    assert_eq!(
        task_groups(&r),
        [
            ("big-0".to_string(), "/r/big".to_string()),
            ("big-1".to_string(), "/r/big".to_string()),
            ("small-2".to_string(), "/a".to_string()),
            ("plain-3".to_string(), "/launch".to_string()),
        ]
    );
}

#[test]
fn the_report_sums_the_tasks_counters_over_each_subtree() {
    let s = spec_with(
        &["/p:cpu.weight=200", "/p/q", "/idle"],
        &[
            "sysbench-cpu:threads=2,events=0,time=10s,cgroup=/p",
            "sysbench-cpu:threads=1,events=0,time=10s,cgroup=/p/q",
            "nanosleep:tasks=2,sleep=50us",
        ],
        300,
        7,
    );
    let r = run_ok(&s);
    let rows = cgroup_rows(&r.outcome);
    let paths: Vec<&str> = rows.iter().map(|g| g.path.as_str()).collect();
    assert_eq!(paths, ["/", "/p", "/p/q", "/idle"]);
    let j = to_json(&s, &r);
    let tasks = j["tasks"].as_array().unwrap();
    let sum = |f: &dyn Fn(&str) -> bool, key: &str| -> u64 {
        tasks
            .iter()
            .filter(|t| f(t["cgroup"].as_str().unwrap()))
            .map(|t| t[key].as_u64().unwrap())
            .sum()
    };
    for (row, within) in rows.iter().zip([
        Box::new(|_: &str| true) as Box<dyn Fn(&str) -> bool>,
        Box::new(|p: &str| p == "/p" || p.starts_with("/p/")),
        Box::new(|p: &str| p == "/p/q"),
        Box::new(|p: &str| p == "/idle"),
    ]) {
        assert_eq!(row.usage_ns, sum(&*within, "runtime_ns"), "{row:?}");
        assert_eq!(row.wait_ns, sum(&*within, "run_delay_ns"), "{row:?}");
        assert_eq!(row.user_ns + row.system_ns, row.usage_ns, "{row:?}");
    }
    // Own tasks and subtree tasks: sysbench is a main thread and its workers.
    let count = |p: &str| rows.iter().find(|g| g.path == p).unwrap();
    assert_eq!((count("/p").tasks, count("/p").tasks_total), (3, 5));
    assert_eq!((count("/p/q").tasks, count("/p/q").tasks_total), (2, 2));
    assert_eq!(count("/idle").tasks_total, 0);
    assert_eq!(count("/").tasks, 3);
    assert_eq!(
        (count("/p").weight, count("/p").weight_nice),
        (Some(200), Some(-3))
    );
    assert_eq!((count("/").weight, count("/").weight_nice), (None, None));
    // The JSON holds the same rows, in microseconds, root first.
    let cg = j["cgroups"].as_array().unwrap();
    assert_eq!(cg.len(), 4);
    assert_eq!(cg[0]["path"], "/");
    assert!(cg[0]["cpu.weight"].is_null());
    assert_eq!(cg[1]["cpu.weight"], 200);
    assert_eq!(cg[2]["parent"], "/p");
    assert_eq!(cg[1]["usage_usec"], rows[1].usage_ns / 1000);
    assert_eq!(cg[1]["wait_usec"], rows[1].wait_ns / 1000);
    assert_eq!(cg[0]["share_pct"], 100.0);
    let text = summary(&s, &r);
    assert!(
        text.contains("\ncgroups (cpu.stat over the window"),
        "{text}"
    );
    assert!(text.contains("\n  /p/q  "), "{text}");
}

#[test]
fn with_warmup_the_times_cover_the_window_only() {
    let mut s = spec_with(
        &["/a"],
        &["sysbench-cpu:threads=1,events=0,time=10s,cgroup=/a"],
        400,
        2,
    );
    s.config.warmup = 300 * fairsim_des::time::MS;
    let r = run_ok(&s);
    let rows = cgroup_rows(&r.outcome);
    // One hog for the 100 ms window: its usage cannot exceed the window.
    let a = &rows[1];
    assert!(a.usage_ns <= 100_000_000, "{a:?}");
    assert!(a.usage_ns > 90_000_000, "{a:?}");
}

#[test]
fn runs_without_groups_have_no_cgroup_output() {
    let s = common::spec("numa-2s4c2t", &["schbench:m=1,t=2,c=2ms,s=2ms"], 100, 1);
    let r = run_ok(&s);
    assert!(cgroup_rows(&r.outcome).is_empty());
    let j = to_json(&s, &r);
    assert!(j.get("cgroups").is_none());
    assert!(j["tasks"][0].get("cgroup").is_none());
    assert!(!summary(&s, &r).contains("cgroups"));
    // A group declared but never joined still makes the section (the group exists).
    let s = spec_with(&["/empty"], &["schbench:m=1,t=2,c=2ms,s=2ms"], 100, 1);
    let r = run_ok(&s);
    let j = to_json(&s, &r);
    assert_eq!(j["cgroups"].as_array().unwrap().len(), 2);
    assert_eq!(j["tasks"][0]["cgroup"], "/");
}

#[test]
fn same_seed_same_bytes_with_groups() {
    let json = |seed| {
        let s = spec_with(
            &["/a:cpu.weight=100", "/b:cpu.weight=400"],
            &[
                "schbench:m=1,t=3,c=3ms,s=3ms,cgroup=/a",
                "nanosleep:tasks=4,sleep=20us,cgroup=/b",
            ],
            200,
            seed,
        );
        let r = run_ok(&s);
        (
            serde_json::to_string(&to_json(&s, &r)).unwrap(),
            summary(&s, &r),
        )
    };
    let a = json(1);
    assert_eq!(a, json(1));
    assert_ne!(a.0, json(2).0);
}

#[test]
fn prepare_refuses_cfs_kernels_and_undeclared_groups_in_one_line() {
    let mut s = spec_with(&["/a"], &["sysbench-cpu:threads=1,events=10"], 20, 1);
    s.config.params.features = Kernel::V4_16.features();
    let e = prepare(&s).unwrap_err().to_string();
    assert!(
        e.starts_with("--cgroup: task groups are modelled for --kernel 6.12 only")
            && e.ends_with("allowed: --kernel 6.12, or no --cgroup"),
        "{e}"
    );
    let mut s = common::spec("numa-2s4c2t", &["sysbench-cpu:cgroup=/a"], 20, 1);
    s.config.params.features = Kernel::V3_9.features();
    let e = prepare(&s).unwrap_err().to_string();
    assert!(e.ends_with("or no cgroup="), "{e}");
    let w = format!("rtapp:{}", rtapp_file("taskgroups.json"));
    let mut s = common::spec("numa-2s4c2t", &[w.as_str()], 20, 1);
    s.config.params.features = Kernel::V6_5.features();
    let e = prepare(&s).unwrap_err().to_string();
    assert!(
        e.contains("taskgroups.json: tasks.big.taskgroup: task groups are modelled")
            && e.ends_with("or no taskgroup"),
        "{e}"
    );
    let s = common::spec("numa-2s4c2t", &["sysbench-cpu:cgroup=/nowhere"], 20, 1);
    let e = prepare(&s).unwrap_err().to_string();
    assert_eq!(
        e,
        "--workload: sysbench-cpu: cgroup: '/nowhere' is not a declared cgroup; allowed: / (declare others with --cgroup /PATH or a scenario's [cgroup.\"/PATH\"] table)"
    );
    // Joining the root needs no declaration.
    let s = common::spec("numa-2s4c2t", &["sysbench-cpu:events=10,cgroup=/"], 20, 1);
    let w = prepare(&s).unwrap();
    assert!(!w.sched().task_groups().active());
    assert_eq!(w.tasks()[0].cgroup, ROOT_GROUP);
}
