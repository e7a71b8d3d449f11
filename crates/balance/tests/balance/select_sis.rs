//! The wakeup fast path on an SMT machine (smt-mc-1s4c2t: one LLC of 4 cores x 2
//! threads, CPUs 2k and 2k+1 on core k): idle target and previous CPU, idle siblings,
//! idle cores, SIS_UTIL's scan depth and the idle-core hint.

use crate::select_support;

use fairsim_balance::select::stats::{SelectKind, SisOutcome};
use fairsim_balance::{wf, Feature, Features, SchedParams};
use select_support::*;

const MS: u64 = 1_000_000;

fn smt() -> fairsim_balance::Sched {
    let s = sched("smt-mc-1s4c2t");
    for c in 0..8 {
        let sib: Vec<usize> = s.machine.cpus[c].smt_siblings.iter().collect();
        assert_eq!(sib, vec![c & !1, c | 1], "core layout of cpu{c}");
    }
    // As after the first periodic balance of an idle LLC: scan the whole LLC.
    s.update_idle_cpu_scan(llc(&s, 0), 0);
    assert_eq!(nr_idle_scan(&s, 0), 8);
    s
}

#[test]
fn idle_previous_cpu_is_kept() {
    let mut s = smt();
    let p = sleeper_on(&mut s, 2, None, MS);
    run_on(&mut s, 0, 2 * MS);
    settle_idle(&mut s, 2 * MS);
    // The waker runs on cpu0; cpu2 is idle, so wake_affine_idle keeps prev and
    // select_idle_sibling keeps the idle target.
    assert_eq!(wake(&mut s, p, 0, 0, 3 * MS), 2);
    s.check_invariants().unwrap();
}

#[test]
fn busy_target_moves_to_an_idle_cpu_of_the_llc() {
    let mut s = smt();
    let p = sleeper_on(&mut s, 2, None, MS);
    run_on(&mut s, 0, 2 * MS);
    run_on(&mut s, 2, 2 * MS);
    run_on(&mut s, 3, 2 * MS);
    settle_idle(&mut s, 2 * MS);
    let cpu = wake(&mut s, p, 0, 0, 3 * MS);
    assert!(![0, 2, 3].contains(&cpu), "placed on busy cpu{cpu}");
    assert_eq!(s.tasks[p].cpu, cpu);
    s.check_invariants().unwrap();
}

/// Cores 0-2 have one busy thread each (cpus 0, 2, 4 busy), core 3 is fully idle. `p`
/// last ran on cpu2.
fn half_busy() -> (fairsim_balance::Sched, usize) {
    let mut s = smt();
    let p = sleeper_on(&mut s, 2, None, MS);
    for c in [0, 2, 4] {
        run_on(&mut s, c, 2 * MS);
    }
    settle_idle(&mut s, 2 * MS);
    // Entering idle on cpu6/cpu7 marked the LLC as having an idle core.
    assert!(s.test_idle_cores(0));
    (s, p)
}

#[test]
fn has_idle_cores_prefers_a_fully_idle_core() {
    let (mut s, p) = half_busy();
    let cpu = wake(&mut s, p, 0, 0, 3 * MS);
    assert!(
        cpu == 6 || cpu == 7,
        "expected the idle core 3, got cpu{cpu}"
    );
}

#[test]
fn without_idle_cores_the_idle_sibling_of_prev_is_taken() {
    let (mut s, p) = half_busy();
    s.set_idle_cores(0, false);
    // select_idle_smt(prev = 2) finds its idle sibling 3 before any LLC scan.
    assert_eq!(wake(&mut s, p, 0, 0, 3 * MS), 3);
    let st = &s.wake_stats;
    assert_eq!(st.sis_count(SisOutcome::SmtSibling), 1, "{st:?}");
    assert_eq!(st.calls_of(SelectKind::Wakeup), 1, "{st:?}");
    assert_eq!((st.scans, st.wakeups_on_busy), (0, 0), "{st:?}");
}

#[test]
fn failed_idle_core_scan_clears_the_hint_and_falls_back_to_an_idle_thread() {
    let mut s = smt();
    let p = sleeper_on(&mut s, 2, None, MS);
    for c in [0, 2, 4, 6] {
        run_on(&mut s, c, 2 * MS);
    }
    settle_idle(&mut s, 2 * MS);
    s.set_idle_cores(0, true);
    s.tasks[p].recent_used_cpu = 2;
    // Called directly with target = prev = 2: the core scan from cpu3 finds no idle core
    // but remembers cpu3, the first idle thread it saw.
    assert_eq!(s.select_idle_sibling(p, 2, 2), 3);
    assert!(
        !s.test_idle_cores(0),
        "the failed scan must clear has_idle_cores"
    );
}

#[test]
fn update_idle_core_marks_the_llc_only_when_the_whole_core_is_idle() {
    let mut s = smt();
    let a = run_on(&mut s, 6, MS);
    let b = run_on(&mut s, 7, MS);
    s.set_idle_cores(0, false);
    let _ = (a, b);
    s.block_current(7, 2 * MS);
    assert_eq!(s.schedule(7, 2 * MS), None);
    assert!(!s.test_idle_cores(0), "cpu6 still runs");
    s.block_current(6, 3 * MS);
    assert_eq!(s.schedule(6, 3 * MS), None);
    assert!(s.test_idle_cores(0));
}

/// Every CPU but cpu7 runs a task; `p` last ran on cpu2 and there is no idle core.
fn only_cpu7_idle(params: SchedParams) -> (fairsim_balance::Sched, usize) {
    let mut s = sched_with("smt-mc-1s4c2t", params);
    let p = sleeper_on(&mut s, 2, None, MS);
    for c in 0..7 {
        run_on(&mut s, c, 2 * MS);
    }
    settle_idle(&mut s, 2 * MS);
    // The hint is sticky: the sleeper's cpu2 set it when it went idle next to an idle
    // cpu3, and only a failed idle-core scan clears it. Clear it as such a scan would.
    assert!(s.test_idle_cores(0));
    s.set_idle_cores(0, false);
    s.tasks[p].recent_used_cpu = 2;
    (s, p)
}

#[test]
fn sis_util_nr_idle_scan_limits_the_scan() {
    // From target 2 the scan visits 3, 4, 5, 6, 7: cpu7 is the fifth.
    let (mut s, p) = only_cpu7_idle(SchedParams::default());
    set_nr_idle_scan(&s, 2, 4);
    assert_eq!(
        s.select_idle_sibling(p, 2, 2),
        2,
        "four CPUs scanned: cpu7 not reached"
    );
    set_nr_idle_scan(&s, 2, 5);
    assert_eq!(s.select_idle_sibling(p, 2, 2), 7);
    // An overloaded LLC (nr_idle_scan 0) is not scanned at all.
    set_nr_idle_scan(&s, 2, 0);
    assert_eq!(s.select_idle_sibling(p, 2, 2), 2);
    // Where the three wakeups went (select/stats.rs): a scan stopped at the limit of
    // 4, a scan of 5 that found cpu7, a scan SIS_UTIL skipped.
    let st = &s.wake_stats;
    assert_eq!(st.sis_count(SisOutcome::NoneIdle), 2, "{st:?}");
    assert_eq!(st.sis_count(SisOutcome::IdleCpu), 1, "{st:?}");
    assert_eq!(st.sis_calls(), 3);
    assert_eq!((st.scans, st.scans_skipped, st.scans_limited), (2, 1, 1));
    assert_eq!((st.nr_idle_scan_sum, st.nr_idle_scan_reads), (4 + 5, 2));
}

#[test]
fn no_sis_util_scans_the_whole_llc() {
    let params = SchedParams {
        features: Features::parse("NO_SIS_UTIL").unwrap(),
        ..SchedParams::default()
    };
    assert!(!params.features.has(Feature::SIS_UTIL));
    let (mut s, p) = only_cpu7_idle(params);
    set_nr_idle_scan(&s, 2, 0);
    assert_eq!(s.select_idle_sibling(p, 2, 2), 7);
}

#[test]
fn recent_used_cpu_is_a_candidate() {
    let (mut s, p) = only_cpu7_idle(SchedParams::default());
    set_nr_idle_scan(&s, 2, 0);
    s.tasks[p].recent_used_cpu = 7;
    // Target and prev busy, no scan allowed: the idle recently used CPU is taken, and
    // recent_used_cpu becomes prev.
    assert_eq!(s.select_idle_sibling(p, 2, 2), 7);
    assert_eq!(s.tasks[p].recent_used_cpu, 2);
    assert_eq!(s.wake_stats.sis_count(SisOutcome::RecentUsed), 1);
    assert_eq!(s.wake_stats.sis_calls(), 1);
}

#[test]
fn sync_wakeup_from_a_lone_waker_is_affine() {
    let mut s = smt();
    let p = sleeper_on(&mut s, 6, None, MS);
    run_on(&mut s, 0, 2 * MS);
    run_on(&mut s, 6, 2 * MS);
    run_on(&mut s, 7, 2 * MS);
    settle_idle(&mut s, 2 * MS);
    let mc = llc(&s, 0);
    let before = s.sd_stats[mc].ttwu_move_affine;
    // The waker is alone on cpu0 and about to sleep (WF_SYNC): wake_affine_idle picks
    // cpu0, counted as ttwu_move_affine in the LLC domain. cpu0 is busy, so
    // select_idle_sibling scans from cpu1 for an idle core: core 0 is half busy (cpu1 is
    // remembered), core 1 (cpus 2-3) is idle and wins.
    let cpu = wake(&mut s, p, 0, wf::SYNC, 3 * MS);
    assert_eq!(s.sd_stats[mc].ttwu_move_affine, before + 1);
    assert_eq!(cpu, 2);
}
