//! Properties over random machines and workloads: after every event, every task is
//! running on one CPU, queued on exactly one runqueue, or blocked; `nr_running` and
//! `h_nr_queued` (and `idle_h_nr_running`, for SCHED_IDLE tasks) match the queues; affinity is honoured (all checked by
//! `World::check_invariants` through `check_invariants = true`); time is monotone.

use crate::common;

use proptest::prelude::*;

const MACHINES: &[&str] = &[
    "numa-2s4c2t",
    "smt-mc-1s4c2t",
    "tc2",
    "numa-4n-ring",
    "dies-1s2d2c1t",
];

fn workload() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..3, 1u32..6, 1u32..4000, 100u32..4000)
            .prop_map(|(m, t, c, s)| format!("schbench:m={m},t={t},c={c},s={s}")),
        (1u32..3, 1u32..20, 1u32..6, any::<bool>()).prop_map(|(g, l, f, p)| format!(
            "hackbench:g={g},l={l},f={f}{}",
            if p { ",pipe" } else { "" }
        )),
        (1u32..40, 0u32..200, 0u32..3000, any::<bool>(), policy()).prop_map(
            |(n, s, r, pin, policy)| format!(
                "nanosleep:tasks={n},sleep={s}us,run={r}ns{}{policy}",
                if pin { ",pin" } else { "" }
            )
        ),
        (1u32..8, 1u32..20, policy()).prop_map(|(t, e, policy)| format!(
            "sysbench-cpu:threads={t},events={e},event=200us{policy}"
        )),
    ]
}

/// Mostly SCHED_NORMAL, sometimes SCHED_BATCH or SCHED_IDLE (whose counts the invariants
/// check too).
fn policy() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        4 => Just(""),
        1 => Just(",policy=batch"),
        1 => Just(",policy=idle"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_after_every_event(
        m in 0..MACHINES.len(),
        w1 in workload(),
        w2 in workload(),
        seed in any::<u64>(),
    ) {
        let mut s = common::spec(MACHINES[m], &[&w1, &w2], 40, seed);
        s.config.check_invariants = true;
        let mut w = fairsim_workloads::prepare(&s).unwrap();
        let mut last = 0;
        while w.step().map_err(|e| TestCaseError::fail(format!("{w1} {w2}: {e}")))? {
            prop_assert!(w.now().0 >= last);
            last = w.now().0;
        }
        // Tasks that exited are off every runqueue; tasks still alive are accounted for.
        let forked = w.tasks().iter().filter(|t| t.sched_id.is_some()).count();
        let exited = w.tasks().iter().filter(|t| t.state == fairsim_engine::world::RtState::Exited).count();
        prop_assert_eq!(forked - exited, w.live_tasks());
    }
}

/// A random group tree for two workloads: `/a` and `/a/b` or `/c`, each with a random
/// weight, sometimes idle, and sometimes a quota over a short period (so that a 40 ms run
/// throttles); returns the `--cgroup` options and the two groups the workloads join.
fn groups() -> impl Strategy<Value = (Vec<String>, [String; 2])> {
    let file = prop_oneof![
        3 => (1u32..500).prop_map(|w| format!(":cpu.weight={w}")),
        1 => Just(":cpu.idle=1".to_string()),
        2 => (1u32..8, 0u32..2).prop_map(|(q, b)| format!(
            ":cpu.max={} 10000{}",
            1000 * q,
            if b == 1 { format!(",cpu.max.burst={}", 1000 * q) } else { String::new() }
        )),
    ];
    (
        file.clone(),
        file.clone(),
        file,
        any::<bool>(),
        0usize..3,
        0usize..3,
    )
        .prop_map(|(fa, fb, fc, nested, j1, j2)| {
            let b = if nested { "/a/b" } else { "/b" };
            let options = vec![format!("/a{fa}"), format!("{b}{fb}"), format!("/c{fc}")];
            let paths = ["/a".to_string(), b.to_string(), "/c".to_string()];
            (options, [paths[j1].clone(), paths[j2].clone()])
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

    /// With task groups (weights, idle groups, quotas), every runqueue's counts match
    /// what is queued on and below it after every event, and no group with a quota uses
    /// more than its quota per period over the run, plus its burst and a tick's overrun
    /// per CPU (the debt the next period pays back).
    #[test]
    fn group_invariants_and_quotas_hold(
        m in 0..MACHINES.len(),
        w1 in workload(),
        w2 in workload(),
        (options, joins) in groups(),
        seed in any::<u64>(),
    ) {
        let w1 = format!("{w1},cgroup={}", joins[0]);
        let w2 = format!("{w2},cgroup={}", joins[1]);
        let mut s = common::spec(MACHINES[m], &[&w1, &w2], 40, seed);
        s.config.cgroups =
            fairsim_workloads::cgroups::from_sources(&Default::default(), &options).unwrap();
        s.config.check_invariants = true;
        let mut w = fairsim_workloads::prepare(&s).unwrap();
        while w.step().map_err(|e| TestCaseError::fail(format!("{options:?} {w1} {w2}: {e}")))? {}
        let tg = w.sched().task_groups();
        let ncpus = w.sched().nr_cpus() as u64;
        let elapsed = w.now().0;
        for (g, group) in tg.tgs.iter().enumerate().skip(1) {
            let b = &group.bw;
            if b.quota == fairsim_balance::group::RUNTIME_INF {
                continue;
            }
            // The group's usage: its tasks' and its descendants' runtime.
            let usage: u64 = w
                .tasks()
                .iter()
                .filter_map(|t| t.sched_id)
                .filter(|&sid| tg.ancestry(tg.group_of(sid)).any(|a| a == g))
                .map(|sid| w.sched().tasks[sid].se.sum_exec_runtime)
                .sum();
            let bound = b.quota * (elapsed / b.period + 2) + b.burst + ncpus * w.sched().tick_nsec;
            prop_assert!(usage <= bound, "{}: used {usage} ns, bound {bound} ({options:?})", group.path);
        }
    }
}
