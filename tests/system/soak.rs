//! Soak tests: minutes of seed 000's scenario, checking that nothing drifts. Not run by
//! default (each takes minutes); run them with
//!
//! ```text
//! cargo test --release -p fairsim --test system soak:: -- --ignored --nocapture
//! ```
//!
//! `FAIRSIM_SOAK_SECS` sets the emulated seconds of the soak (default 60). Race mode's
//! soak is the race crate's (`crates/race/tests/race/soak.rs`).

use crate::common;

use fairsim_des::time::SEC;
use fairsim_engine::noise::NoiseModel;
use fairsim_workloads::prepare;

/// The soak's length from `FAIRSIM_SOAK_SECS`, else `default`.
fn soak_secs(default: u64) -> u64 {
    std::env::var("FAIRSIM_SOAK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// This process's resident set in KiB, from `/proc/self/status` (0 where there is none).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Seed 000's scenario (spr-2s56c2t, 224 nanosleep loops, spr idle states without C6,
/// noise on) for minutes of emulated time. Every 2,000 events and at every emulated
/// second the scheduler's and the engine's invariants are checked (checking after every
/// event, as `--check-invariants` does, runs at 0.02 emulated s/s here); the task count
/// must stay 224 (nanosleep loops never exit, so a task lost or duplicated by a migration
/// shows), the event queue must not grow, and the resident memory must stay flat once the
/// first emulated second has sized every structure.
#[test]
#[ignore]
fn seed000_scenario_for_minutes_keeps_invariants_tasks_and_memory() {
    let secs = soak_secs(60);
    let mut spec = common::spec(
        "spr-2s56c2t",
        &["nanosleep:tasks=224,sleep=1us"],
        secs * 1_000,
        7,
    );
    spec.config.noise = NoiseModel::DEFAULT;
    spec.config.idle_states =
        Some(fairsim_cpuidle::parse_idle_states("spr,no-C6", 224).expect("idle states"));
    let mut world = prepare(&spec).expect("prepare");
    let started = std::time::Instant::now();
    let mut next_second = SEC;
    let mut baseline: Option<(u64, usize)> = None;
    let mut peak_rss = 0u64;
    let mut peak_queue = 0usize;
    while world.step().expect("step") {
        if world.events() % 2_000 == 0 {
            world.check_invariants().expect("invariants");
        }
        if world.now().0 >= next_second {
            world.check_invariants().expect("invariants at a second");
            assert_eq!(world.live_tasks(), 224, "tasks at {}s", next_second / SEC);
            let rss = rss_kib();
            let queue = world.queue_len();
            match baseline {
                None => baseline = Some((rss, queue)),
                Some(_) => {
                    peak_rss = peak_rss.max(rss);
                    peak_queue = peak_queue.max(queue);
                }
            }
            if next_second % (10 * SEC) == 0 {
                eprintln!(
                    "soak: {}s emulated in {:.0}s wall: rss {rss} KiB, queue {queue}, events {}",
                    next_second / SEC,
                    started.elapsed().as_secs_f64(),
                    world.events()
                );
            }
            next_second += SEC;
        }
    }
    let (rss0, queue0) = baseline.expect("at least one emulated second");
    eprintln!(
        "soak: done: {secs}s emulated in {:.0}s wall, {} events; rss at 1s {rss0} KiB, peak after {peak_rss} KiB; queue at 1s {queue0}, peak after {peak_queue}",
        started.elapsed().as_secs_f64(),
        world.events()
    );
    // Flat: what the first second allocated carries the rest, give or take the allocator's
    // slack. (A per-event record would grow by megabytes a minute; race mode's was one.)
    assert!(
        peak_rss <= rss0 + rss0 / 10 + 2 * 1024,
        "memory grew: {rss0} KiB at 1s, {peak_rss} KiB later"
    );
    assert!(
        peak_queue <= 2 * queue0 + 1_024,
        "event queue grew: {queue0} at 1s, {peak_queue} later"
    );
}
