//! The schedstat reader against files a real kernel wrote: Linux 6.12.117 (version 16)
//! and 6.1 (version 15) on the numa-2s4c2t guest around the `nsleep` workload. The sums
//! are checked against the ground truth's own summaries (schedstat-summary-nsleep.json).

use fairsim_balance::schedstat_read::{diff_schedstat, parse_schedstat, render_listing, Schedstat};

fn load(name: &str) -> Schedstat {
    let path = format!("{}/tests/data/schedstat/{name}", env!("CARGO_MANIFEST_DIR"));
    parse_schedstat(&std::fs::read_to_string(&path).unwrap(), name).unwrap()
}

/// Sum over CPUs of one field of domain `k`.
fn domain_sum(d: &Schedstat, k: usize, field: &str) -> u64 {
    d.cpus
        .iter()
        .map(|c| {
            c.domains[k]
                .fields
                .iter()
                .find(|(n, _)| n == field)
                .unwrap()
                .1
        })
        .sum()
}

fn stat_sum(d: &Schedstat, field: &str) -> u64 {
    d.cpus
        .iter()
        .map(|c| c.stats.iter().find(|(n, _)| n == field).unwrap().1)
        .sum()
}

#[test]
fn v16_delta_matches_the_ground_truth_summary() {
    let d = diff_schedstat(&load("v16-before.txt"), &load("v16-after.txt")).unwrap();
    assert_eq!(d.version, 16);
    assert_eq!(d.cpus.len(), 16);
    assert_eq!(stat_sum(&d, "sched_count"), 377_482);
    assert_eq!(stat_sum(&d, "sched_goidle"), 188_652);
    assert_eq!(stat_sum(&d, "rq_sched_info.run_delay"), 1_067_055_602);
    // domain0:SMT newidle and idle rows, domain1:MC newidle row of the summary.
    assert_eq!(domain_sum(&d, 0, "CPU_NEWLY_IDLE.lb_count"), 2100);
    assert_eq!(domain_sum(&d, 0, "CPU_NEWLY_IDLE.lb_gained"), 6);
    assert_eq!(domain_sum(&d, 0, "CPU_IDLE.lb_count"), 3768);
    assert_eq!(domain_sum(&d, 0, "CPU_NOT_IDLE.lb_count"), 230);
    assert_eq!(domain_sum(&d, 1, "CPU_NEWLY_IDLE.lb_count"), 871);
    assert_eq!(domain_sum(&d, 1, "CPU_NEWLY_IDLE.lb_failed"), 53);
    assert_eq!(domain_sum(&d, 1, "ttwu_wake_remote"), 2453);
    let listing = render_listing(&d, Some(&[0]));
    assert!(listing.starts_with("cpu0\n.domain0."), "{listing}");
    assert!(
        listing.lines().all(|l| !l.ends_with(" 0")),
        "zero deltas are omitted"
    );
}

#[test]
fn v15_uses_the_older_block_order() {
    let d = diff_schedstat(&load("v15-before.txt"), &load("v15-after.txt")).unwrap();
    assert_eq!(d.version, 15);
    // The 6.1 summary's domain1:MC idle row (its JSON names the types).
    assert_eq!(domain_sum(&d, 1, "CPU_IDLE.lb_count"), 2284);
    assert_eq!(domain_sum(&d, 1, "CPU_IDLE.lb_nobusyg"), 358);
    assert_eq!(stat_sum(&d, "sched_count"), 316_268);
}

#[test]
fn diff_refuses_mismatched_files() {
    assert!(diff_schedstat(&load("v15-before.txt"), &load("v16-after.txt")).is_err());
    // Counters never go down between a before and an after snapshot.
    assert!(diff_schedstat(&load("v16-after.txt"), &load("v16-before.txt")).is_err());
}
