//! The cost of load tracking: every `update_load_avg` and util_est step the scheduler
//! makes is charged to the CPU that makes it, at the cost table's price, under its own
//! profile frame, and a run without util_est pays nothing for it.

use crate::common;

use fairsim_engine::profile::Sym;
use fairsim_engine::NoiseModel;
use fairsim_pelt::UtilEstMode;
use fairsim_workloads::{run, RunSpec};

fn spec(util_est: UtilEstMode, overrides: &[&str]) -> RunSpec {
    let mut s = common::spec("smt-mc-1s4c2t", &["hackbench:g=2,l=300,pipe"], 2_000, 7);
    s.config.noise = NoiseModel::OFF;
    s.config.params.util_est = util_est;
    for o in overrides {
        s.config.cost.apply(o).unwrap();
    }
    s
}

/// Self time of each load-tracking frame, ns: `__update_load_avg_se`,
/// `update_cfs_rq_load_avg`, `util_est_enqueue`, `util_est_dequeue`, `util_est_update`.
fn frames(s: &RunSpec) -> [u64; 5] {
    let r = run(s, &mut |_, _| {}).unwrap();
    assert!(
        r.reports.iter().all(|w| w.finished),
        "hackbench did not finish"
    );
    let p = r.outcome.profile(None);
    [
        Sym::UpdateLoadAvgSe,
        Sym::UpdateCfsRqLoadAvg,
        Sym::UtilEstEnqueue,
        Sym::UtilEstDequeue,
        Sym::UtilEstUpdate,
    ]
    .map(|sym| p.line(sym).self_ns)
}

#[test]
fn each_step_is_charged_at_its_price_and_util_est_off_pays_nothing_for_it() {
    let t = fairsim_engine::CostTable::default();
    let [se, cfs, enq, deq, upd] = frames(&spec(UtilEstMode::V6_12, &[]));
    // Without noise each charge is exactly the table's price, so every frame's time is a
    // whole number of steps.
    for (ns, price, name) in [
        (se, t.pelt_update_se, "se"),
        (cfs, t.pelt_update_cfs_rq, "cfs_rq"),
        (enq, t.util_est_enqueue, "enqueue"),
        (deq, t.util_est_dequeue, "dequeue"),
        (upd, t.util_est_update, "update"),
    ] {
        assert!(
            ns > 0 && ns % price == 0,
            "{name}: {ns} ns at {price} ns a step"
        );
    }
    // Every update_load_avg brings the cfs_rq up to date, the entity only when it was
    // attached already: at least as many cfs_rq steps as entity steps.
    assert!(cfs / t.pelt_update_cfs_rq >= se / t.pelt_update_se);
    // Each enqueue's estimate is removed by exactly one dequeue, never two (a task that
    // exits while its dequeue is delayed is finished by `dequeue_entities`, which leaves
    // util_est alone), and a sample is taken at most once per dequeue.
    let (n_enq, n_deq, n_upd) = (
        enq / t.util_est_enqueue,
        deq / t.util_est_dequeue,
        upd / t.util_est_update,
    );
    assert!(
        n_deq <= n_enq && n_enq - n_deq <= 8,
        "{n_enq} enqueues, {n_deq} dequeues"
    );
    assert!(n_upd <= n_deq, "{n_upd} samples, {n_deq} dequeues");

    let [se_off, cfs_off, enq_off, deq_off, upd_off] = frames(&spec(UtilEstMode::Off, &[]));
    assert_eq!([enq_off, deq_off, upd_off], [0, 0, 0]);
    assert!(se_off > 0 && cfs_off > 0);
}

#[test]
fn the_legacy_form_samples_only_when_util_avg_moved() {
    // Patch 4/4 of seed 003: the {enqueued, ewma} form skips the update when util_avg
    // did not change since the last sample, as 6.12's does, so neither form samples more
    // often than tasks sleep.
    let t = fairsim_engine::CostTable::default();
    let [_, _, _, deq, upd] = frames(&spec(UtilEstMode::Legacy { fastup: false }, &[]));
    assert!(upd > 0 && upd / t.util_est_update <= deq / t.util_est_dequeue);
}

#[test]
fn a_price_override_sets_its_own_frames_price_only() {
    let t = fairsim_engine::CostTable::default();
    let base = frames(&spec(UtilEstMode::V6_12, &[]));
    let dear = frames(&spec(
        UtilEstMode::V6_12,
        &["util_est_enqueue=1us", "util_est_update=0ns"],
    ));
    // The overridden steps cost their new price (or nothing)...
    assert!(dear[2] > 0 && dear[2] % 1_000 == 0, "{dear:?}");
    assert_eq!(dear[4], 0);
    // ...and the others keep the table's.
    assert!(dear[0] % t.pelt_update_se == 0 && dear[1] % t.pelt_update_cfs_rq == 0);
    assert!(dear[3] > 0 && dear[3] % t.util_est_dequeue == 0);
    assert!(base[2] > 0 && base[2] < dear[2]);
}
