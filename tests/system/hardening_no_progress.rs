//! Hardening: a world whose virtual time stops fails with one line instead of running
//! (and growing) for ever, and no run that makes progress comes near the bound.

use crate::common;

use fairsim_des::time::MS;
use fairsim_engine::world::events_per_instant_limit;
use fairsim_engine::{CostTable, EngineError, NoiseModel};
use fairsim_workloads::{prepare, run};

/// The hardening issue's item 4 (`fairsim run -w nanosleep:tasks=1,sleep=0,run=0
/// --timer-slack 0 --cost context_switch=0 --cost wakeup=0 --cost timer_irq=0
/// --cost idle_exit=0 --duration 50ms`, on the command line's default machine), with the
/// load-tracking costs that came later set to 0 too: each enqueue and dequeue pays them.
fn stuck_spec() -> fairsim_workloads::RunSpec {
    let mut s = common::spec("numa-2s4c2t", &["nanosleep:tasks=1,sleep=0,run=0"], 50, 42);
    s.config.noise = NoiseModel::DEFAULT;
    s.config.timer_slack = 0;
    for o in [
        "context_switch=0ns",
        "wakeup=0ns",
        "timer_irq=0ns",
        "idle_exit=0ns",
        "pelt_update_se=0ns",
        "pelt_update_cfs_rq=0ns",
        "util_est_enqueue=0ns",
        "util_est_dequeue=0ns",
        "util_est_update=0ns",
    ] {
        s.config.cost.apply(o).unwrap();
    }
    s
}

#[test]
fn a_loop_that_never_lets_time_pass_fails_within_the_bound_and_bounded_memory() {
    let s = stuck_spec();
    let mut world = prepare(&s).unwrap();
    let limit = events_per_instant_limit(world.tasks().len(), world.cpus().len());
    let mut most_queued = 0;
    let mut most_resched = 0;
    let err = loop {
        match world.step() {
            Ok(true) => {
                most_queued = most_queued.max(world.queue_len());
                most_resched = most_resched.max(world.sched().resched_list.len());
            }
            Ok(false) => panic!("the run ended at {}", world.now()),
            Err(e) => break e,
        }
        assert!(
            world.events() <= limit + 1_000,
            "no error after {} events",
            world.events()
        );
    };
    let EngineError::NoProgress { events, at, .. } = &err else {
        panic!("not a no-progress error: {err}");
    };
    assert_eq!(*events, limit + 1);
    assert!(at.0 < s.config.duration, "stopped at {at}");
    // What the stuck loop accumulates is bounded by the events before the guard trips.
    assert!(most_queued < 100, "queue grew to {most_queued}");
    assert!(
        (most_resched as u64) <= limit,
        "resched list grew to {most_resched}"
    );
    let msg = err.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    assert!(msg.starts_with("no progress: "), "{msg}");
    assert!(
        msg.contains(
            "a cost of 0 for context_switch, wakeup, timer_irq, idle_exit, pelt_update_se, \
             pelt_update_cfs_rq, util_est_enqueue, util_est_dequeue, util_est_update"
        ),
        "{msg}"
    );
}

#[test]
fn the_run_api_returns_the_error() {
    let e = run(&stuck_spec(), &mut |_, _| {}).unwrap_err();
    assert!(matches!(e, EngineError::NoProgress { .. }), "{e}");
}

#[test]
fn heavy_runs_that_make_progress_are_unaffected() {
    // Seed 000's machine and task count, and the densest instants measured (every cost
    // 0, all timers expiring together): each runs to its end.
    let all_zero: Vec<String> = CostTable::NAMES
        .iter()
        .map(|n| format!("{n}=0ns"))
        .collect();
    for (w, zero) in [
        ("nanosleep:tasks=224", false),
        ("nanosleep:tasks=448,sleep=1us,run=0", true),
        ("hackbench:g=4,l=20", true),
    ] {
        let mut s = common::spec("spr-2s56c2t", &[w], 10, 42);
        if zero {
            s.config.timer_slack = 0;
            for o in &all_zero {
                s.config.cost.apply(o).unwrap();
            }
        }
        let r = run(&s, &mut |_, _| {}).unwrap_or_else(|e| panic!("{w}: {e}"));
        assert!(
            r.outcome.now().0 == 10 * MS || r.reports[0].finished,
            "{w} stopped at {}",
            r.outcome.now()
        );
    }
}

#[test]
fn a_stuck_world_whose_queue_grows_stops_inside_its_memory_budget() {
    // Zero costs with haltpoll on 2s24c2t: CPUs go idle and are woken again and again
    // while time creeps on, and each idle entry leaves a stale poll-limit event queued.
    // The per-CPU allowance (96 CPUs x 4096 events) would take tens of MiB; with a budget
    // 1 MiB above the run's estimate, the queue stops at the guard's floor instead.
    let mut s = common::spec("2s24c2t", &["nanosleep:tasks=5,sleep=0us,run=0us"], 5, 0);
    s.config.timer_slack = 0;
    s.config.cpuidle = fairsim_engine::Cpuidle::Haltpoll;
    for n in CostTable::NAMES {
        s.config.cost.apply(&format!("{n}=0ns")).unwrap();
    }
    let allowance = fairsim_engine::world::queue_limit(5, 96);
    assert!(allowance > fairsim_engine::world::MIN_QUEUE);
    s.memory_budget = fairsim_workloads::estimate_run_memory(&s) + (1 << 20);
    match run(&s, &mut |_, _| {}) {
        Err(EngineError::NoProgress {
            queued,
            queue_limit,
            ..
        }) => {
            assert_eq!(queue_limit, fairsim_engine::world::MIN_QUEUE);
            // One event may queue a few more before the guard sees it.
            assert!(
                queued > queue_limit && queued <= queue_limit + 16,
                "{queued}"
            );
        }
        other => panic!("expected the progress guard, got {other:?}"),
    }
    // With the default budget the allowance is the per-CPU one.
    s.memory_budget = fairsim_workloads::run::DEFAULT_MEMORY_BUDGET;
    match run(&s, &mut |_, _| {}) {
        // (The workload's launcher is a task too.)
        Err(EngineError::NoProgress { queue_limit, .. }) => {
            assert!(queue_limit >= allowance, "{queue_limit}")
        }
        other => panic!("expected the progress guard, got {other:?}"),
    }
}
