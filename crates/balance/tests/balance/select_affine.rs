//! wake_affine and wake_wide across the two nodes of numa-2s4c2t (CPUs 0-7 on node 0,
//! 8-15 on node 1, an LLC per node, 8 CPUs per LLC).

use crate::select_support;

use fairsim_balance::{Sched, TaskId};
use select_support::*;

const MS: u64 = 1_000_000;

/// The waker runs alone on cpu0; `p` last ran on cpu8, where three tasks now run. The
/// rest of both nodes is idle.
fn setup() -> (Sched, TaskId, TaskId) {
    let mut s = sched("numa-2s4c2t");
    assert_eq!(s.topo.cpus[0].sd_llc_size, 8);
    let p = sleeper_on(&mut s, 8, None, MS);
    let w = run_on(&mut s, 0, 2 * MS);
    for _ in 0..3 {
        run_on(&mut s, 8, 2 * MS);
    }
    settle_idle(&mut s, 2 * MS);
    s.update_idle_cpu_scan(llc(&s, 0), 0);
    s.update_idle_cpu_scan(llc(&s, 8), 0);
    (s, p, w)
}

fn numa_sd(s: &Sched) -> usize {
    s.topo.cpus[0].sd_numa.expect("numa domain")
}

#[test]
fn heavy_previous_cpu_makes_the_wakeup_affine() {
    let (mut s, p, _w) = setup();
    let numa = numa_sd(&s);
    let cpu = wake(&mut s, p, 0, 0, 3 * MS);
    // wake_affine_weight: cpu8's load without p, biased by 108%, outweighs cpu0's load
    // with p, so the waker's node is chosen and select_idle_sibling finds an idle core
    // there.
    assert!(cpu < 8, "expected node 0, got cpu{cpu}");
    assert_eq!(s.sd_stats[numa].ttwu_move_affine, 1);
}

#[test]
fn wake_wide_keeps_a_one_to_many_wakee_near_its_previous_cpu() {
    let (mut s, p, w) = setup();
    let numa = numa_sd(&s);
    // The waker wakes 70 different tasks: 70 flips (1:N). The wakee itself switches
    // between 8 partners.
    let others: Vec<TaskId> = (0..70)
        .map(|i| s.create_task(&format!("t{i}"), 0, None, 0))
        .collect();
    for (i, &o) in others.iter().enumerate() {
        s.record_wakee(o, 0, 2 * MS + i as u64);
    }
    assert!(
        s.tasks[w].wakee_flips >= 64,
        "flips {}",
        s.tasks[w].wakee_flips
    );
    s.tasks[p].wakee_flips = 8;
    assert!(s.wake_wide(p, 0));
    let cpu = wake(&mut s, p, 0, 0, 3 * MS);
    // No affine domain: select_idle_sibling runs around prev (cpu8) in node 1.
    assert!(cpu >= 8, "expected node 1, got cpu{cpu}");
    assert_eq!(s.sd_stats[numa].ttwu_move_affine, 0);
}

#[test]
fn wake_wide_needs_both_partners_to_flip() {
    let (mut s, p, w) = setup();
    s.tasks[w].wakee_flips = 1000;
    s.tasks[p].wakee_flips = 7;
    assert!(!s.wake_wide(p, 0), "the wakee flips less than the LLC size");
    s.tasks[p].wakee_flips = 8;
    s.tasks[w].wakee_flips = 63;
    assert!(!s.wake_wide(p, 0), "the waker flips less than 8 x 8");
    s.tasks[w].wakee_flips = 64;
    assert!(s.wake_wide(p, 0));
    // Symmetric: the roles of waker and wakee are interchangeable.
    s.tasks[w].wakee_flips = 8;
    s.tasks[p].wakee_flips = 64;
    assert!(s.wake_wide(p, 0));
}

#[test]
fn record_wakee_counts_flips_and_decays_once_a_second() {
    let (mut s, p, w) = setup();
    let t = s.create_task("t", 0, None, 0);
    let now = 10 * MS;
    s.record_wakee(p, 0, now);
    let base = s.tasks[w].wakee_flips;
    // Waking the same task again is no flip.
    s.record_wakee(p, 0, now + MS);
    assert_eq!(s.tasks[w].wakee_flips, base);
    for i in 0..10 {
        s.record_wakee(if i % 2 == 0 { t } else { p }, 0, now + 2 * MS + i);
    }
    assert_eq!(s.tasks[w].wakee_flips, base + 10);
    // Within a second of the last decay, waking the last wakee again: nothing changes.
    s.record_wakee(p, 0, now + 900 * MS);
    assert_eq!(s.tasks[w].wakee_flips, base + 10);
    // More than HZ jiffies later: halved once, then the flip counts.
    s.record_wakee(t, 0, now + 1100 * MS);
    assert_eq!(s.tasks[w].wakee_flips, (base + 10) / 2 + 1);
}
