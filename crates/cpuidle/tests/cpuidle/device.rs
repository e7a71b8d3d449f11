//! The cpuidle core around the governors (drivers/cpuidle/cpuidle.c, 6.12.117): the
//! statistics of `cpuidle_enter_state` and `cpuidle_poll_time`, on the Skylake-SP table.

use crate::common;

use common::{skx, TICK};
use fairsim_cpuidle::{tick_nsec, CpuidleDevice, GovernorKind, StateUsage};

/// Enter `idx` at `start` and leave `residency_ns` later.
fn stay(
    dev: &mut CpuidleDevice,
    states: &[fairsim_cpuidle::IdleState],
    idx: usize,
    start: u64,
    residency_ns: u64,
) {
    dev.enter(idx, start);
    dev.exit(states, start + residency_ns, false, false);
}

#[test]
fn usage_time_above_below() {
    let states = skx();
    let mut dev = CpuidleDevice::new(GovernorKind::Menu, states.len());
    // C1E for 15 us: below its 20 us residency while C1 and POLL are enabled: "above".
    stay(&mut dev, &states, 2, 0, 15_000);
    // C1 for 100 us: 100 - 2 (exit latency) = 98 us reaches C1E's 20 us: "below".
    stay(&mut dev, &states, 1, 100_000, 100_000);
    // C1 for 21 us: 19 us after the exit latency is short of C1E's 20 us: neither.
    stay(&mut dev, &states, 1, 300_000, 21_000);
    // C1 for 2 us: exactly its residency (not above) and not more than its exit latency
    // (not below).
    stay(&mut dev, &states, 1, 400_000, 2_000);
    // C6 for 1 ms: nothing deeper, nothing to count.
    stay(&mut dev, &states, 3, 500_000, 1_000_000);
    assert_eq!(dev.last_residency_ns(), 1_000_000);
    assert_eq!(
        dev.usage(),
        &[
            StateUsage::default(),
            StateUsage {
                usage: 3,
                time_ns: 123_000,
                below: 1,
                ..StateUsage::default()
            },
            StateUsage {
                usage: 1,
                time_ns: 15_000,
                above: 1,
                ..StateUsage::default()
            },
            StateUsage {
                usage: 1,
                time_ns: 1_000_000,
                ..StateUsage::default()
            },
        ]
    );
    // sysfs `time` is in microseconds.
    assert_eq!(dev.usage()[1].time_us(), 123);
}

#[test]
fn above_and_below_look_only_at_enabled_states() {
    let mut states = skx();
    let mut dev = CpuidleDevice::new(GovernorKind::Menu, states.len());
    // With POLL and C1 disabled, C1E for 15 us is short but nothing shallower could have
    // been used: not "above".
    states[0].disabled = true;
    states[1].disabled = true;
    stay(&mut dev, &states, 2, 0, 15_000);
    assert_eq!(dev.usage()[2].above, 0);
    // With C1E disabled, C1 for 100 us is compared with C6 (600 us), the next enabled
    // deeper state, not with C1E: not "below".
    let mut states = skx();
    states[2].disabled = true;
    stay(&mut dev, &states, 1, 100_000, 100_000);
    assert_eq!(dev.usage()[1].below, 0);
    // 700 us in C1 would have paid off in C6: "below".
    stay(&mut dev, &states, 1, 300_000, 700_000);
    assert_eq!(dev.usage()[1].below, 1);
}

#[test]
fn refused_entries_and_exits_without_entry() {
    let states = skx();
    let mut dev = CpuidleDevice::new(GovernorKind::Menu, states.len());
    stay(&mut dev, &states, 3, 0, 700_000);
    assert_eq!(dev.last_residency_ns(), 700_000);
    // The driver refuses C6: rejected, residency 0, and no usage.
    dev.enter(3, 800_000);
    dev.reject(3);
    assert_eq!(dev.last_residency_ns(), 0);
    assert_eq!((dev.usage()[3].usage, dev.usage()[3].rejected), (1, 1));
    // An exit with nothing entered changes nothing.
    dev.exit(&states, 900_000, false, false);
    assert_eq!(dev.usage()[3].usage, 1);
    // A clock that runs backwards counts as 0 ns, not as a huge residency.
    dev.enter(1, 1_000_000);
    dev.exit(&states, 999_000, false, false);
    assert_eq!((dev.last_residency_ns(), dev.usage()[1].time_ns), (0, 0));
}

#[test]
fn poll_time_follows_the_first_deep_enough_enabled_state() {
    let hz250 = TICK;
    let hz1000 = tick_nsec(1000);
    assert_eq!(
        (hz250, hz1000, tick_nsec(300)),
        (4_000_000, 1_000_000, 3_333_333)
    );
    let mut states = skx();
    let mut dev = CpuidleDevice::new(GovernorKind::Menu, states.len());
    // C1's 2 us is below CPUIDLE_POLL_MIN (10 us); C1E's 20 us is the limit, under
    // TICK_NSEC / 16 = 250 us.
    assert_eq!(dev.poll_time_ns(&states, hz250), 20_000);
    // The value is cached: disabling C1E changes nothing until a sysfs write resets it.
    states[2].disabled = true;
    assert_eq!(dev.poll_time_ns(&states, hz250), 20_000);
    dev.reset_poll_limit();
    // C6's 600 us, capped at 250 us.
    assert_eq!(dev.poll_time_ns(&states, hz250), 250_000);
    // At HZ=1000 the cap is 1 ms / 16 = 62.5 us.
    dev.reset_poll_limit();
    assert_eq!(dev.poll_time_ns(&states, hz1000), 62_500);
    // Nothing deep enough enabled: the cap.
    states[3].disabled = true;
    dev.reset_poll_limit();
    assert_eq!(dev.poll_time_ns(&states, hz250), 250_000);
}

#[test]
fn selection_stays_inside_the_table() {
    // Haltpoll answers "halt" (state 1) without looking at the table; a one-state table
    // gets state 0. 6.12.117's idle loop never asks a governor about such a table.
    let states = &skx()[..1];
    let mut dev = CpuidleDevice::new(GovernorKind::Haltpoll, 1);
    assert_eq!(dev.select(&common::ctx(states, 0, 10_000_000, TICK)).idx, 0);
    let mut dev = CpuidleDevice::new(GovernorKind::Menu, 0);
    assert_eq!(dev.select(&common::ctx(&[], 0, 10_000_000, TICK)).idx, 0);
    assert!(dev.usage().is_empty());
}

/// Extreme inputs (clocks at 0 and u64::MAX, absurd latencies and residencies, tables of
/// every size up to past CPUIDLE_STATE_MAX, states entered against the governor's advice as
/// a forced-idle or broadcast fallback would) never panic, and every selection indexes the
/// table.
#[test]
fn extreme_inputs_do_not_panic() {
    let big = u64::MAX;
    let mut tables: Vec<Vec<fairsim_cpuidle::IdleState>> = Vec::new();
    for n in 0..=12 {
        let mut t: Vec<_> = (0..n)
            .map(|i| common::state("S", i * (big / 16), i * (big / 12)))
            .collect();
        if let Some(s) = t.first_mut() {
            s.polling = true;
        }
        tables.push(t);
    }
    tables.push(skx());
    let values = [0, 1, 1_000, TICK, big / 2, big];
    for kind in [
        GovernorKind::Menu,
        GovernorKind::Teo,
        GovernorKind::Haltpoll,
    ] {
        for states in &tables {
            let mut dev = CpuidleDevice::new(kind, states.len());
            let mut now = 0u64;
            let mut k = 0usize;
            for &a in &values {
                for &b in &values {
                    let ctx = fairsim_cpuidle::IdleCtx {
                        now_ns: now,
                        sleep_length_ns: a,
                        delta_tick_ns: b,
                        tick_stopped: a > b,
                        latency_req_ns: b,
                        tick_nsec: a,
                        states,
                    };
                    let s = dev.select(&ctx);
                    assert!(states.is_empty() || s.idx < states.len().min(10));
                    // Every other round enters some other state of the table.
                    k += 1;
                    let idx = if k % 2 == 0 || states.is_empty() {
                        s.idx
                    } else {
                        k % states.len()
                    };
                    dev.enter(idx, now);
                    now = now.wrapping_add(a);
                    dev.exit(states, now, a > b, b > a);
                    dev.poll_time_ns(states, a);
                }
            }
        }
    }
}
