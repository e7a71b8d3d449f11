//! CPU speeds apart from capacity (`fairsim_engine::speed`) and the per-platform cost
//! tables, end to end through `prepare` and `World::run`.

use crate::common;

use fairsim_engine::{CostTableName, EngineError};
use fairsim_topology::SpeedTable;
use fairsim_workloads::run::{RunResult, RunSpec};

/// The capacity TC2's device tree gives an A7 (606 / 1441 of an A15, normalised).
const A7_CAPACITY: u64 = 430;

/// The speed the tc2 preset gives an A7 on sysbench (1024 * 16.5 / 33.5).
const A7_SYSBENCH: u64 = 504;

fn run(spec: &RunSpec) -> RunResult {
    fairsim_workloads::run(spec, &mut |_, _| {}).expect("run")
}

/// One sysbench thread pinned to CPU `cpu` of tc2, `events` events of 1 ms at capacity
/// 1024, with or without the preset's speed table.
fn sysbench_on(cpu: usize, events: u64, with_speed: bool) -> RunSpec {
    let w = format!("sysbench:threads=1,events={events},cpus={cpu}");
    let mut s = common::spec("tc2", &[w.as_str()], 60_000, 1);
    if !with_speed {
        std::sync::Arc::make_mut(&mut s.machine).speed = SpeedTable::new();
    }
    s
}

fn total_ns(r: &RunResult) -> u64 {
    r.reports[0].json["total_time_ns"]
        .as_u64()
        .expect("finished")
}

/// What the scheduler sees of `cpu` at the end of the run: the capacities the speed
/// table must leave alone.
fn capacities(w: &fairsim_engine::Outcome, cpu: usize) -> (u64, u64) {
    let rq = &w.sched().rqs[cpu];
    (rq.capacity_orig, rq.cpu_capacity)
}

#[test]
fn an_a7_runs_sysbench_at_its_speed_and_the_scheduler_keeps_its_capacity() {
    let fast = run(&sysbench_on(2, 200, true));
    let slow = run(&sysbench_on(2, 200, false));
    // The work itself takes exactly capacity / speed as long (task time is work time;
    // each segment rounds up by at most 1 ns).
    let task_fast = fast.outcome.metrics().cpus[2].task_ns;
    let task_slow = slow.outcome.metrics().cpus[2].task_ns;
    let work = 200 * 1_000_000u64 * 1024;
    assert!(
        task_fast.abs_diff(work / A7_SYSBENCH) < 1_000,
        "{task_fast}"
    );
    assert!(
        task_slow.abs_diff(work / A7_CAPACITY) < 1_000,
        "{task_slow}"
    );
    // The run's completion time follows, within the ticks' and the launch's overhead.
    let ratio = total_ns(&slow) as f64 / total_ns(&fast) as f64;
    let expect = A7_SYSBENCH as f64 / A7_CAPACITY as f64;
    assert!((ratio - expect).abs() < 0.002, "{ratio} vs {expect}");
    // The capacity the scheduler balances with is the device tree's either way.
    assert_eq!(capacities(&fast.outcome, 2).0, A7_CAPACITY);
    assert_eq!(capacities(&fast.outcome, 2), capacities(&slow.outcome, 2));
}

#[test]
fn an_a15_runs_at_1024_either_way() {
    let with = run(&sysbench_on(0, 100, true));
    let without = run(&sysbench_on(0, 100, false));
    assert_eq!(total_ns(&with), total_ns(&without));
    // And the A7 with its speed is 1024/504 = 2.03x slower than the A15, the posting's
    // 33.5 / 16.5, where capacity alone says 1024/430 = 2.38x.
    let a7 = run(&sysbench_on(2, 100, true));
    let ratio = total_ns(&a7) as f64 / total_ns(&with) as f64;
    assert!((ratio - 1024.0 / 504.0).abs() < 0.01, "{ratio}");
}

#[test]
fn an_entry_for_one_kind_leaves_the_others_at_capacity() {
    // hackbench on tc2: the preset's sysbench entry must not touch it.
    let mut a = common::spec("tc2", &["hackbench:g=1,l=20"], 60_000, 3);
    let mut b = a.clone();
    std::sync::Arc::make_mut(&mut b.machine).speed = SpeedTable::new();
    let (ra, rb) = (run(&a), run(&b));
    assert_eq!(ra.reports[0].json, rb.reports[0].json);
    assert_eq!(ra.outcome.events(), rb.outcome.events());
    // A `*` entry covers hackbench, and slowing the A7s lengthens the run.
    std::sync::Arc::make_mut(&mut a.machine)
        .speed
        .insert("*", vec![1024, 1024, 100, 100, 100]);
    a.config.duration = 600_000_000_000;
    b.config.duration = a.config.duration;
    let slow = run(&a);
    let t = |r: &RunResult| r.reports[0].json["time_ns"].as_u64().expect("finished");
    assert!(t(&slow) > t(&rb), "{} vs {}", t(&slow), t(&rb));
}

#[test]
fn prepare_refuses_what_the_machine_names_but_the_engine_lacks() {
    let mut s = common::spec("tc2", &["sysbench"], 10, 1);
    std::sync::Arc::make_mut(&mut s.machine)
        .speed
        .insert("sysbnch", vec![1024; 5]);
    match fairsim_workloads::prepare(&s) {
        Err(EngineError::Invalid { field, .. }) => assert!(field.contains("speed.sysbnch")),
        other => panic!("accepted or refused for another reason: {other:?}"),
    }
    let mut s = common::spec("tc2", &["sysbench"], 10, 1);
    std::sync::Arc::make_mut(&mut s.machine).costs = Some("arm-2012".into());
    let e = fairsim_workloads::prepare(&s).unwrap_err().to_string();
    assert!(e.contains("costs") && e.contains("arm-2013"), "{e}");
}

#[test]
fn the_arm_table_changes_what_kernel_work_costs() {
    let x86 = common::spec("tc2", &["hackbench:g=1,l=20"], 60_000, 5);
    let mut arm = x86.clone();
    arm.config.cost = CostTableName::Arm2013.table();
    arm.config.cost_table = CostTableName::Arm2013;
    let (rx, ra) = (run(&x86), run(&arm));
    let overhead = |r: &RunResult| -> u64 {
        r.outcome
            .metrics()
            .cpus
            .iter()
            .map(|c| c.overhead_total())
            .sum()
    };
    // Every switch and wakeup costs about 2.3 times the x86 figure on the A15.
    assert!(
        overhead(&ra) > 2 * overhead(&rx),
        "{} {}",
        overhead(&ra),
        overhead(&rx)
    );
    let json = fairsim_output::to_json(&arm, &ra);
    assert_eq!(json["cost_table"], "arm-2013");
    assert_eq!(json["cost_ns"]["context_switch"], 3_373);
}
