//! select_idle_capacity on the big.LITTLE tc2 (cpus 0-1 big at 1024, 2-4 LITTLE at 430).

use crate::select_support;

use fairsim_balance::{Sched, TaskId};
use select_support::*;

const MS: u64 = 1_000_000;

/// The waker runs on LITTLE cpu2; `p` last ran on LITTLE cpu3.
fn setup(util_est: u32) -> (Sched, TaskId) {
    let mut s = sched("tc2");
    assert!(s.sched_asym_cpucap_active());
    assert_eq!(s.rqs[0].capacity_orig, 1024);
    assert!(s.rqs[3].capacity_orig < 1024);
    let p = sleeper_on(&mut s, 3, None, MS);
    run_on(&mut s, 2, 2 * MS);
    settle_idle(&mut s, 2 * MS);
    s.tasks[p].se.avg.util_est = util_est;
    (s, p)
}

#[test]
fn fits_capacity_thresholds() {
    let (s, _) = setup(0);
    // util * 1280 < capacity * 1024: 343 fits 430 (439040 < 440320), 344 does not.
    let little = 3;
    assert_eq!(s.util_fits_cpu(343, 0, 1024, little), 1);
    assert_eq!(s.util_fits_cpu(344, 0, 1024, little), 0);
    assert_eq!(s.util_fits_cpu(819, 0, 1024, 0), 1);
    assert_eq!(s.util_fits_cpu(820, 0, 1024, 0), 0);
    assert!(fairsim_balance::cpu_util::capacity_greater(1024, 950));
    assert!(!fairsim_balance::cpu_util::capacity_greater(1024, 973));
}

#[test]
fn task_too_big_for_little_goes_to_an_idle_big_cpu() {
    let (mut s, p) = setup(600);
    assert!(!s.task_fits_cpu(p, 3));
    let cpu = wake(&mut s, p, 2, 0, 3 * MS);
    assert!(cpu < 2, "cpu{cpu}");
    s.check_invariants().unwrap();
}

#[test]
fn small_task_stays_on_its_idle_little_cpu() {
    let (mut s, p) = setup(100);
    assert!(s.task_fits_cpu(p, 3));
    assert_eq!(wake(&mut s, p, 2, 0, 3 * MS), 3);
}

#[test]
fn without_an_idle_big_cpu_the_best_idle_little_one_is_used() {
    let (mut s, p) = setup(600);
    run_on(&mut s, 0, 2 * MS);
    run_on(&mut s, 1, 2 * MS);
    let cpu = wake(&mut s, p, 2, 0, 3 * MS);
    assert!(cpu == 3 || cpu == 4, "cpu{cpu}");
}
