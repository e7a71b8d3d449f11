//! Properties over random machines and workloads: after every event, every task is
//! running on one CPU, queued on exactly one runqueue, or blocked; `nr_running` and
//! `h_nr_queued` (and `idle_h_nr_running`, for SCHED_IDLE tasks) match the queues; affinity is honoured (all checked by
//! `World::check_invariants` through `check_invariants = true`); time is monotone.

mod common;

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
        let mut w = fairsim_engine::prepare(&s).unwrap();
        let mut last = 0;
        while w.step().map_err(|e| TestCaseError::fail(format!("{w1} {w2}: {e}")))? {
            prop_assert!(w.now().0 >= last);
            last = w.now().0;
        }
        // Tasks that exited are off every runqueue; tasks still alive are accounted for.
        let forked = w.tasks.iter().filter(|t| t.sched_id.is_some()).count();
        let exited = w.tasks.iter().filter(|t| t.state == fairsim_engine::world::RtState::Exited).count();
        prop_assert_eq!(forked - exited, w.live_tasks());
    }
}
