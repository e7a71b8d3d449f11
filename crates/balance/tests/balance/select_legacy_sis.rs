//! Linux 4.5's `select_idle_sibling` (LEGACY_SIS) and seed 001's first-idle-CPU patch on it
//! (SIS_FIRST_IDLE), on smt-mc-1s4c2t (one LLC of 4 cores x 2 threads, CPUs 2k and 2k+1
//! on core k) and, for the cache test, numa-2s4c2t (two LLCs, CPUs 0-7 and 8-15).

use crate::select_support;

use fairsim_balance::{Feature, FeatureError, Features, LbRead, Sched, SchedParams, TaskId};
use fairsim_topology::CpuMask;
use select_support::*;

const MS: u64 = 1_000_000;

fn params(features: &str) -> SchedParams {
    SchedParams {
        features: Features::parse(features).expect("features"),
        ..SchedParams::default()
    }
}

/// A scheduler for `machine` with `features`, a sleeping task `p` that last ran on `prev`
/// (allowed on `allowed`, or everywhere), and a pinned hog running on each of `busy`.
fn state(
    machine: &str,
    features: &str,
    prev: usize,
    allowed: Option<&[usize]>,
    busy: &[usize],
) -> (Sched, TaskId) {
    let mut s = sched_with(machine, params(features));
    let n = s.nr_cpus();
    let mask = allowed.map(|cpus| CpuMask::from_cpus(n, cpus.iter().copied()));
    let p = sleeper_on(&mut s, prev, mask, MS);
    for &c in busy {
        run_on(&mut s, c, 2 * MS);
    }
    settle_idle(&mut s, 2 * MS);
    for c in 0..n {
        assert_eq!(
            s.idle_cpu_v4_5(c),
            !busy.contains(&c),
            "cpu{c}'s idleness as set up"
        );
    }
    assert_eq!(s.tasks[p].cpu, prev);
    (s, p)
}

fn smt(features: &str, prev: usize, busy: &[usize]) -> (Sched, TaskId) {
    state("smt-mc-1s4c2t", features, prev, None, busy)
}

#[test]
fn the_llc_groups_are_the_cores() {
    // The walk's first level is sd_llc, whose groups must be the four cores, and its
    // second the SMT domain, whose groups are single threads; the tests below rely on it.
    let s = sched("smt-mc-1s4c2t");
    let llc = s.topo.domain(s.topo.cpus[2].sd_llc.expect("llc"));
    let cores: Vec<Vec<usize>> = llc
        .groups
        .iter()
        .map(|&g| s.topo.group(g).span.iter().collect())
        .collect();
    assert_eq!(cores, vec![vec![2, 3], vec![4, 5], vec![6, 7], vec![0, 1]]);
    let child = s.topo.domain(llc.child.expect("SMT child"));
    assert_eq!(child.span.iter().collect::<Vec<_>>(), vec![2, 3]);
    assert_eq!(child.groups.len(), 2);
}

#[test]
fn legacy_sis_takes_the_idle_core_behind_a_busy_target() {
    // Core 0 busy, cores 1 and 2 half busy, core 3 idle; prev (cpu2) busy. The first
    // fully idle core from target's is core 3; the patch would take the idle thread cpu3.
    let (s, p) = smt("LEGACY_SIS", 2, &[0, 1, 2, 4]);
    assert_eq!(s.select_idle_sibling_v4_5(p, 0), 6);
    let (s, p) = smt("LEGACY_SIS,SIS_FIRST_IDLE", 2, &[0, 1, 2, 4]);
    assert_eq!(s.select_idle_sibling_v4_5(p, 0), 3);
}

#[test]
fn legacy_sis_walks_the_groups_from_targets_core_and_wraps() {
    // Cores 0 and 3 are idle, target cpu4 is on core 2: 4.5's list goes core 2, 3, 0, 1,
    // so core 3 comes before core 0. The patch scans in CPU order and takes cpu0.
    let (s, p) = smt("LEGACY_SIS", 2, &[2, 4, 5]);
    assert_eq!(s.select_idle_sibling_v4_5(p, 4), 6);
    let (s, p) = smt("LEGACY_SIS,SIS_FIRST_IDLE", 2, &[2, 4, 5]);
    assert_eq!(s.select_idle_sibling_v4_5(p, 4), 0);
}

#[test]
fn a_half_idle_core_is_rejected_but_first_idle_takes_its_thread() {
    // Target's core (0) is fully busy and every other core has one busy thread: no group
    // at either level is all idle, so 4.5 stays on the busy target, while the patch takes
    // cpu3, the first idle CPU of the LLC.
    let busy = [0, 1, 2, 4, 6];
    let (s, p) = smt("LEGACY_SIS", 2, &busy);
    assert_eq!(s.select_idle_sibling_v4_5(p, 0), 0);
    let (s, p) = smt("LEGACY_SIS,SIS_FIRST_IDLE", 2, &busy);
    assert_eq!(s.select_idle_sibling_v4_5(p, 0), 3);
    // 6.12 finds an idle thread too (the whole LLC is scanned on a fresh machine).
    let (mut s, p) = smt("", 2, &busy);
    s.update_idle_cpu_scan(llc(&s, 0), 0);
    let cpu = s.select_idle_sibling(p, 2, 0);
    assert!([3, 5, 7].contains(&cpu), "6.12 chose cpu{cpu}");
}

#[test]
fn an_idle_smt_sibling_of_target_is_the_fallback() {
    // Every core has one busy thread; target cpu2's own sibling cpu3 is idle. The LLC
    // level finds no idle core, and the walk goes down to target's SMT domain, whose
    // groups are single threads: {2} is target, {3} is idle and taken. The patch takes
    // cpu1, the first idle CPU of the LLC.
    let busy = [0, 2, 4, 6];
    let (s, p) = smt("LEGACY_SIS", 4, &busy);
    assert_eq!(s.select_idle_sibling_v4_5(p, 2), 3);
    let (s, p) = smt("LEGACY_SIS,SIS_FIRST_IDLE", 4, &busy);
    assert_eq!(s.select_idle_sibling_v4_5(p, 2), 1);
}

#[test]
fn the_group_holding_target_is_never_chosen() {
    // Target cpu2 and its whole core are idle, as is core 2. The function keeps the idle
    // target at once; its walk, reached in the kernel when target was busy at the top
    // and has gone idle since, skips target's core although all of it is idle.
    let (s, p) = smt("LEGACY_SIS", 0, &[0, 1, 6, 7]);
    assert_eq!(s.select_idle_sibling_v4_5(p, 2), 2);
    assert_eq!(s.sis_v4_5_lower_domains(p, 2), 4);
    // With core 1 the only idle core, the LLC level has nothing; at the SMT level the
    // group {2} is target again, so the walk takes the sibling, never target itself.
    let (s, p) = smt("LEGACY_SIS", 0, &[0, 1, 4, 5, 6, 7]);
    assert_eq!(s.sis_v4_5_lower_domains(p, 2), 3);
    // The patch's scan has no such exception.
    assert_eq!(s.sis_first_idle_llc(p, 2), 2);
}

#[test]
fn an_idle_cache_affine_prev_is_kept_before_any_scan() {
    // prev cpu5 is idle and in target's LLC: kept although cores 1 and 3 are fully idle
    // and, for the patch, cpu2 comes first.
    for f in ["LEGACY_SIS", "LEGACY_SIS,SIS_FIRST_IDLE"] {
        let (s, p) = smt(f, 5, &[0, 1, 4]);
        assert_eq!(s.select_idle_sibling_v4_5(p, 0), 5, "{f}");
    }
    // An idle prev in the other LLC does not count: the walk finds core 1 of target's.
    let (s, p) = state("numa-2s4c2t", "LEGACY_SIS", 9, None, &[0, 1]);
    assert!(!s.cpus_share_cache(9, 0));
    assert_eq!(s.select_idle_sibling_v4_5(p, 0), 2);
}

#[test]
fn allowed_cpus_are_respected() {
    // Cores 1-3 idle. Allowed on {3, 7}: core 1 intersects the mask and is all idle, so
    // its first allowed CPU, cpu3, not cpu2.
    let (s, p) = state("smt-mc-1s4c2t", "LEGACY_SIS", 0, Some(&[3, 7]), &[0, 1]);
    assert_eq!(s.select_idle_sibling_v4_5(p, 0), 3);
    // Allowed on {7} only: cores 1 and 2 are skipped although idle.
    let (s, p) = state("smt-mc-1s4c2t", "LEGACY_SIS", 0, Some(&[7]), &[0, 1]);
    assert_eq!(s.select_idle_sibling_v4_5(p, 0), 7);
    // Allowed on {3}: core 1 is half busy, so the allowed idle cpu3 is not taken.
    let (s, p) = state("smt-mc-1s4c2t", "LEGACY_SIS", 0, Some(&[3]), &[0, 1, 2]);
    assert_eq!(s.select_idle_sibling_v4_5(p, 0), 0);
    // The patch scans only the allowed CPUs: cpu5 before the disallowed idle cpu2-4.
    let (s, p) = state(
        "smt-mc-1s4c2t",
        "LEGACY_SIS,SIS_FIRST_IDLE",
        0,
        Some(&[5, 7]),
        &[0, 1],
    );
    assert_eq!(s.select_idle_sibling_v4_5(p, 0), 5);
}

#[test]
fn a_pending_wakeup_makes_a_cpu_busy() {
    // 4.5's idle_cpu() reads a non-empty wake_list as busy: an idle core with a queued
    // wakeup is not idle.
    let (mut s, p) = smt("LEGACY_SIS", 2, &[0, 1, 2, 4]);
    s.rqs[6].ttwu_pending = 1;
    assert!(!s.idle_cpu_v4_5(6));
    assert_eq!(s.select_idle_sibling_v4_5(p, 0), 0);
}

#[test]
fn the_walk_counts_the_runqueues_it_reads() {
    // From core 0: cpu0 is target (not read), cpu2 busy, cpu4 busy, cpu6 and cpu7 idle.
    let (mut s, p) = smt("LEGACY_SIS", 2, &[0, 1, 2, 4]);
    s.take_work();
    assert_eq!(s.sis_v4_5_lower_domains(p, 0), 6);
    assert_eq!(s.take_work().cpus_visited, 4);
    // The patch reads cpu0 to cpu3.
    assert_eq!(s.sis_first_idle_llc(p, 0), 3);
    assert_eq!(s.take_work().cpus_visited, 4);
}

/// `p` last ran on cpu1 and is woken by the hog on cpu0; cores 1-3 each have one busy
/// thread. Returns the CPU the wakeup chose.
fn wake_from_cpu0(features: &str) -> usize {
    let (mut s, p) = smt(features, 1, &[0, 1, 2, 4, 6]);
    s.update_idle_cpu_scan(llc(&s, 0), 0);
    let cpu = wake(&mut s, p, 0, 0, 3 * MS);
    s.check_invariants().unwrap();
    cpu
}

#[test]
fn select_task_rq_fair_dispatches_on_the_features() {
    // wake_affine picks cpu0 or cpu1, both on the fully busy core 0.
    let c = wake_from_cpu0("");
    assert!([3, 5, 7].contains(&c), "6.12: cpu{c}");
    let c = wake_from_cpu0("LEGACY_SIS");
    assert!([0, 1].contains(&c), "4.5: cpu{c}");
    assert_eq!(wake_from_cpu0("LEGACY_SIS,SIS_FIRST_IDLE"), 3);
    // SIS_FIRST_IDLE alone is refused, so it can never act without LEGACY_SIS.
    assert!(!params("LEGACY_SIS").features.has(Feature::SIS_FIRST_IDLE));
}

#[test]
fn sis_first_idle_needs_legacy_sis() {
    for list in ["SIS_FIRST_IDLE", "NO_LEGACY_SIS,SIS_FIRST_IDLE"] {
        match Features::parse(list) {
            Err(e @ FeatureError::Requires { .. }) => {
                let text = e.to_string();
                assert!(text.contains("SIS_FIRST_IDLE needs LEGACY_SIS"), "{text}");
                assert_eq!(text.lines().count(), 1);
            }
            other => panic!("{list}: {other:?}"),
        }
    }
    let f = Features::parse("LEGACY_SIS,SIS_FIRST_IDLE").unwrap();
    assert!(f.has(Feature::LEGACY_SIS) && f.has(Feature::SIS_FIRST_IDLE));
    // Both default off.
    let d = Features::default();
    assert!(!d.has(Feature::LEGACY_SIS) && !d.has(Feature::SIS_FIRST_IDLE));
}
