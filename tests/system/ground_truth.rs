//! Orders of magnitude against the reference kernel. The ground truth's `nsleep` run
//! (Linux 6.12.117 on the numa-2s4c2t TCG guest: 16 processes forked in a tight loop, each
//! looping `nanosleep(1us)`, 5 s) counted every balance in `/proc/schedstat`. The guest's
//! timing is not realistic (a loop took ~420 us there, ~55 us here), so DESIGN.md asks for
//! structure and orders of magnitude, not exact figures. The guest had no cpuidle driver, so
//! its idle CPUs stopped the tick at every idle entry; fairsim runs with `Cpuidle::None`
//! to match. Every idle and busy balance row the kernel counted at least 100 times must
//! then be within a factor of 10 of fairsim's, per second.
//!
//! Newidle rows are left out, and that is a known difference: the kernel counted 2100
//! SMT, 871 MC and 219 NUMA newidle balances in 5 s, fairsim 12, 11 and 17. A newidle
//! balance needs `rd->overloaded`, which root-level balances clear whenever no CPU has
//! two runnable tasks at that instant; the likely reason is that fairsim's tasks, which
//! run ~1 us per loop, are rarely runnable together, while the guest's loop takes ~420 us.
//! That is not settled.

use crate::common;

use fairsim_balance::schedstat_read::{diff_schedstat, parse_schedstat, Schedstat};
use fairsim_balance::CpuIdleType;
use fairsim_engine::Cpuidle;
use fairsim_workloads::run;

/// The kernel's 5 s delta, from the files the balance crate's reader tests use.
fn kernel_delta() -> Schedstat {
    let dir = format!(
        "{}/crates/balance/tests/data/schedstat",
        env!("CARGO_MANIFEST_DIR")
    );
    let load = |name: &str| {
        let text = std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
        parse_schedstat(&text, name).unwrap()
    };
    diff_schedstat(&load("v16-before.txt"), &load("v16-after.txt")).unwrap()
}

/// Sum over CPUs of `field` of domain level `k` in the kernel's delta.
fn kernel_sum(d: &Schedstat, k: usize, field: &str) -> u64 {
    d.cpus
        .iter()
        .map(|c| {
            let f = &c.domains[k].fields;
            f.iter().find(|(n, _)| n == field).map_or(0, |x| x.1)
        })
        .sum()
}

#[test]
fn nsleep_balance_counts_are_the_kernels_order_of_magnitude() {
    const KERNEL_SECS: f64 = 5.0;
    const SECS: u64 = 2;
    let kernel = kernel_delta();
    let mut spec = common::spec(
        "numa-2s4c2t",
        &["nanosleep:tasks=16,sleep=1us,exec=0,launch=0"],
        SECS * 1000,
        1,
    );
    spec.config.cpuidle = Cpuidle::None;
    let r = run(&spec, &mut |_, _| {}).unwrap();
    let s = &r.outcome.sched();
    let mut checked = 0;
    for level in 0..3 {
        for it in [CpuIdleType::Idle, CpuIdleType::NotIdle] {
            let field = format!("{}.lb_count", it.name());
            let k = kernel_sum(&kernel, level, &field);
            if k < 100 {
                continue;
            }
            let ours: u64 = (0..s.nr_cpus())
                .map(|c| {
                    let sd = s.topo.domains_of(c).nth(level).unwrap();
                    s.sd_stats[sd].lb_count[it as usize]
                })
                .sum();
            let ratio = (ours as f64 / SECS as f64) / (k as f64 / KERNEL_SECS);
            assert!(
                (0.1..=10.0).contains(&ratio),
                "domain{level} {field}: fairsim {ours} in {SECS} s, kernel {k} in 5 s (ratio {ratio:.2})"
            );
            checked += 1;
        }
    }
    // SMT idle and busy, MC idle, NUMA idle (the other busy rows are under 100).
    assert_eq!(checked, 4);
}
