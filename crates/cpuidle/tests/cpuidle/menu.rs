//! The menu governor of 6.12.117 on the Skylake-SP table, HZ=250 (TICK_NSEC = 4 ms).
//! Every expected value is worked out by hand from menu.c's integer arithmetic in the
//! comments next to it.

use crate::common;

use common::{ctx, cycle, skx, state, TICK};
use fairsim_cpuidle::governor::menu::{get_typical_interval, which_bucket, INTERVALS};
use fairsim_cpuidle::{CpuidleDevice, GovernorKind, Selection, KTIME_MAX};

const MAX: u32 = u32::MAX;

fn sel(idx: usize, stop_tick: bool, sleep_length_queried: bool) -> Selection {
    Selection {
        idx,
        stop_tick,
        sleep_length_queried,
    }
}

#[test]
fn which_bucket_splits_by_decade() {
    let cases = [
        (0, 0),
        (9_999, 0),
        (10_000, 1),
        (99_999, 1),
        (100_000, 2),
        (999_999, 2),
        (1_000_000, 3),
        (9_999_999, 3),
        (10_000_000, 4),
        (99_999_999, 4),
        (100_000_000, 5),
        (KTIME_MAX, 5),
    ];
    for (ns, bucket) in cases {
        assert_eq!(which_bucket(ns), bucket, "{ns} ns");
    }
}

#[test]
fn typical_interval_accepts_tight_groups_and_drops_upside_outliers() {
    let t = |v: [u32; INTERVALS]| get_typical_interval(&v);
    // A steady 10 us: average 10, variance 0.
    assert_eq!(t([10; 8]), 10);
    // One outlier: avg (70 + 5000) >> 3 = 633, variance far above 400 and above avg^2/36;
    // 8 samples > 6, so the threshold drops to 4999 and the seven 10s remain: 10.
    assert_eq!(t([10, 10, 10, 10, 5000, 10, 10, 10]), 10);
    // Two outliers: after dropping 6000, avg 5060 / 7 = 722 and variance
    // (6 * 712^2 + 4278^2) / 7 = 21342948 / 7 = 3048992: rejected; 7 * 4 > 24, so 5000
    // goes too and six 10s give variance 0 <= 400: 10.
    assert_eq!(t([10, 5000, 10, 10, 6000, 10, 10, 10]), 10);
    // Three outliers: with six samples left (five 10s and 5000) avg 5050 / 6 = 841 and
    // variance 20750086 / 6 = 3458347 fail, and 6 * 4 <= 24 ends the search: UINT_MAX.
    assert_eq!(t([10, 5000, 10, 7000, 6000, 10, 10, 10]), MAX);
    // avg > 6 * stddev: avg 8000 >> 3 = 1000, variance 25000 >> 3 = 3125 > 400, but
    // 1000^2 = 1000000 > 36 * 3125 = 112500 with all eight samples: 1000.
    assert_eq!(t([1000, 1100, 900, 1000, 1050, 950, 1000, 1000]), 1000);
    // The same test with five samples fails on 5 * 4 < 24: avg 5050 / 5 = 1010, variance
    // (100 + 8100 + 12100 + 100 + 1600) / 5 = 4400 > 400, and 5 * 4 <= 24: UINT_MAX.
    assert_eq!(t([MAX, 1000, 1100, MAX, 900, 1000, 1050, MAX]), MAX);
    // UINT_MAX entries (refused entries) are above INT_MAX and never count: the seven 91s
    // are divided by 7, not shifted.
    assert_eq!(t([MAX, 91, 91, 91, 91, 91, 91, 91]), 91);
    // Nothing but zeros: max is 0, no prediction.
    assert_eq!(t([0; 8]), MAX);
    // Dropping every copy of the maximum at once can leave a single sample, which then has
    // variance 0: [10, 71 x 7] has avg 507 >> 3 = 63 and variance 3257 >> 3 = 407 > 400, so
    // the 71s go and 10 is returned.
    assert_eq!(t([10, 71, 71, 71, 71, 71, 71, 71]), 10);
}

/// A CPU woken 50 us after every entry while its next timer is 4 ms away: the correction
/// factor of bucket 3 (1 ms..10 ms) falls every round and the recent intervals fill with the
/// same value, which takes the choice from C6 to C1E.
#[test]
fn woken_after_50us_with_timer_at_4ms() {
    let states = skx();
    let mut dev = CpuidleDevice::new(GovernorKind::Menu, states.len());
    let mut now = 1_000_000;
    let run = |dev: &mut CpuidleDevice, now: &mut u64| {
        cycle(dev, &states, now, 4_000_000, 2_000_000, 50_000)
    };

    // Round 1: the first selection finds last_residency_ns = 0 and records UINT_MAX in
    // intervals[0]; the other seven are 0, so there is no typical interval. timer_us =
    // (4096000 + 4000000 * 8192) / 8192000 = 4000, so predicted = 4 ms: C6 fits, and
    // 4 ms is not below TICK_NSEC, so the tick may stop.
    assert_eq!(run(&mut dev, &mut now), sel(3, true, true));
    let m = dev.menu().unwrap();
    assert_eq!(
        (m.intervals()[0], m.bucket(), m.next_timer_ns()),
        (MAX, 3, 4_000_000)
    );
    // C6 lasted 50 us + 133 us = 183 us < 600 us with shallower states enabled: "above".
    assert_eq!(dev.usage()[3].usage, 1);
    assert_eq!(dev.usage()[3].time_ns, 183_000);
    assert_eq!(dev.usage()[3].above, 1);

    // Each later round first updates: 183000 is not above 2 * 133000, so measured =
    // 183000 / 2 = 91500 (91 us) and the factor gains 1024 * 91500 / 4000000 = 23:
    // 8192 - 1024 + 23 = 7191, then f - f / 8 + 23: 6316, 5550, 4880, 4293, 3780, 3331.
    // The intervals [MAX, 91 x k, 0 x (7 - k)] never pass (k = 1: avg 13, variance 1014),
    // and dropping the 91s leaves zeros only, so the timer decides: timer_us = 3511, 3084,
    // 2710, 2383, 2096, 1846, all below the tick period (the tick is kept) and above C6's
    // 600 us (C6 still fits before the next tick, 2 ms away).
    let factors = [7191, 6316, 5550, 4880, 4293, 3780];
    for (round, factor) in (2..=7).zip(factors) {
        assert_eq!(
            run(&mut dev, &mut now),
            sel(3, false, true),
            "round {round}"
        );
        assert_eq!(
            dev.menu().unwrap().correction_factor()[3],
            factor,
            "round {round}"
        );
    }
    assert_eq!(dev.usage()[3].usage, 7);

    // Round 8: the factor is 3780 - 472 + 23 = 3331 (timer_us 1626) but intervals
    // [MAX, 91 x 7] average 91 with variance 0: predicted 91 us, C1E.
    assert_eq!(run(&mut dev, &mut now), sel(2, false, true));
    assert_eq!(dev.menu().unwrap().correction_factor()[3], 3331);
    // C1E lasted 50 + 10 = 60 us: not above (>= 20 us); 60 - 10 = 50 us < C6's 600 us, so
    // not below either.
    assert_eq!(dev.usage()[2].usage, 1);
    assert_eq!((dev.usage()[2].above, dev.usage()[2].below), (0, 0));

    // Round 9: measured = 60000 - 10000 = 50000, so the factor becomes
    // 3331 - 416 + 1024 * 50000 / 4000000 = 2915 + 12 = 2927; intervals [50, 91 x 7] give
    // avg 687 >> 3 = 85 and variance 1477 >> 3 = 184 <= 400: 85 us, C1E again.
    assert_eq!(run(&mut dev, &mut now), sel(2, false, true));
    let m = dev.menu().unwrap();
    assert_eq!(m.correction_factor()[3], 2927);
    assert_eq!(m.intervals(), &[50, 91, 91, 91, 91, 91, 91, 91]);
}

/// A steady 10 us idle pattern: once the recent intervals say 10 us, which is below
/// RESIDENCY_THRESHOLD_NS, menu picks C1 without asking for the sleep length.
#[test]
fn steady_10us_pattern_skips_the_sleep_length() {
    let states = skx();
    let mut dev = CpuidleDevice::new(GovernorKind::Menu, states.len());
    let mut now = 0;
    let mut picks = Vec::new();
    for _ in 0..17 {
        picks.push(cycle(
            &mut dev, &states, &mut now, 4_000_000, 2_000_000, 10_000,
        ));
    }
    // Rounds 1-7: C6, which lasts 143 us and records 143000 / 2 = 71 us (not the 10 us:
    // the state may not have been reached). Round 8: [MAX, 71 x 7] gives 71 us, C1E,
    // which lasts 20 us and records 20000 / 2 = 10 us.
    for (i, s) in picks[..7].iter().enumerate() {
        assert_eq!(s.idx, 3, "round {}", i + 1);
    }
    assert_eq!(picks[7], sel(2, false, true));
    // Round 9: [10, 71 x 7] fails (variance 407), dropping the 71s leaves the single 10:
    // predicted 10 us <= 15 us, no sleep length, next_timer_ns = KTIME_MAX, delta_tick =
    // TICK_NSEC / 2. C1 fits 10 us, C1E does not and 10 us < TICK_NSEC: C1, tick kept.
    // C1 lasts 12 us and records 12000 - 2000 = 10 us, so it stays so.
    for (i, s) in picks[8..].iter().enumerate() {
        assert_eq!(*s, sel(1, false, false), "round {}", i + 9);
    }
    let m = dev.menu().unwrap();
    assert_eq!(m.intervals(), &[10; 8]);
    assert_eq!((m.next_timer_ns(), m.bucket()), (KTIME_MAX, 5));
}

#[test]
fn tick_kept_below_the_tick_period_and_state_refit_to_the_next_tick() {
    let states = skx();
    let pick = |sleep_ns: u64, delta_tick_ns: u64| {
        let mut dev = CpuidleDevice::new(GovernorKind::Menu, states.len());
        dev.select(&ctx(&states, 0, sleep_ns, delta_tick_ns))
    };
    // 5 ms: timer_us = (4096000 + 5000000 * 8192) / 8192000 = 5000, not below 4 ms: C6
    // and the tick may stop.
    assert_eq!(pick(5_000_000, 4_000_000), sel(3, true, true));
    // 3 ms: predicted 3 ms < TICK_NSEC, so the tick is kept; C6's 600 us fits before the
    // tick 3 ms away.
    assert_eq!(pick(3_000_000, 3_000_000), sel(3, false, true));
    // The same with the next tick 100 us away: C6 would be cut short by the tick, so the
    // deepest state with a residency within 100 us, C1E, is taken.
    assert_eq!(pick(3_000_000, 100_000), sel(2, false, true));
    // With the tick 1 us away nothing fits; the walk ends on the shallowest enabled state.
    assert_eq!(pick(3_000_000, 1_000), sel(0, false, true));
}

#[test]
fn state_0_early_return() {
    let states = skx();
    let fresh = || CpuidleDevice::new(GovernorKind::Menu, 4);
    // The next timer in 1.5 us, below C1's 2 us residency: POLL, and since it polls the
    // tick is kept.
    assert_eq!(
        fresh().select(&ctx(&states, 0, 1_500, TICK)),
        sel(0, false, true)
    );
    // A latency limit of 0, or one below C1's 2 us exit latency: POLL as well.
    for latency_req_ns in [0, 1_999] {
        let c = fairsim_cpuidle::IdleCtx {
            latency_req_ns,
            ..ctx(&states, 0, 10_000_000, TICK)
        };
        assert_eq!(fresh().select(&c), sel(0, false, true), "{latency_req_ns}");
    }
    // With POLL disabled there is no early return: timer_us = (4096000 + 1500 * 8192) /
    // 8192000 = 2, so predicted 2 us and C1 (2 us) fits; below the tick: tick kept.
    let mut no_poll = skx();
    no_poll[0].disabled = true;
    assert_eq!(
        fresh().select(&ctx(&no_poll, 0, 1_500, TICK)),
        sel(1, false, true)
    );
    // A table whose state 0 does not poll lets the tick stop on the early return.
    let no_poll_state = vec![state("C1", 2_000, 2_000), state("C6", 133_000, 600_000)];
    let mut dev = CpuidleDevice::new(GovernorKind::Menu, 2);
    assert_eq!(
        dev.select(&ctx(&no_poll_state, 0, 100_000, TICK)),
        sel(0, true, true)
    );
}

#[test]
fn disabled_states_and_the_latency_limit_cap_the_depth() {
    let pick = |states: &[fairsim_cpuidle::IdleState], latency_req_ns: u64| {
        let mut dev = CpuidleDevice::new(GovernorKind::Menu, states.len());
        let c = fairsim_cpuidle::IdleCtx {
            latency_req_ns,
            ..ctx(states, 0, 10_000_000, TICK)
        };
        dev.select(&c)
    };
    let nolimit = fairsim_cpuidle::PM_QOS_DEFAULT_LATENCY_REQ_NS;
    // 10 ms ahead (predicted 10 ms >= TICK_NSEC): C6, tick stopped.
    assert_eq!(pick(&skx(), nolimit), sel(3, true, true));
    // C6 disabled: C1E; C1E and C6 disabled: C1. The prediction is still 10 ms.
    let mut t = skx();
    t[3].disabled = true;
    assert_eq!(pick(&t, nolimit), sel(2, true, true));
    t[2].disabled = true;
    assert_eq!(pick(&t, nolimit), sel(1, true, true));
    // A 50 us limit stops the walk at C6 (133 us exit latency): C1E; 5 us stops it at
    // C1E (10 us): C1.
    assert_eq!(pick(&skx(), 50_000), sel(2, true, true));
    assert_eq!(pick(&skx(), 5_000), sel(1, true, true));
}

/// The tick woke the CPU from C6 after 4 ms although the prediction (10 ms) was beyond
/// the tick: menu_update records 9/10 of MAX_INTERESTING capped at the sleep length.
#[test]
fn tick_wakeup_counts_as_a_long_idle_period() {
    let states = skx();
    let run = |tick_wakeup: bool| {
        let mut dev = CpuidleDevice::new(GovernorKind::Menu, 4);
        let s = dev.select(&ctx(&states, 0, 10_000_000, TICK));
        assert_eq!(s, sel(3, true, true));
        dev.enter(3, 0);
        dev.exit(&states, 4_133_000, tick_wakeup, false);
        dev.select(&ctx(&states, 5_000_000, 10_000_000, TICK));
        let m = dev.menu().unwrap();
        (m.correction_factor()[4], m.intervals()[1])
    };
    // 45 ms capped at 10 ms: ratio 1024, so the factor stays at 8192; 10000 us recorded.
    assert_eq!(run(true), (8192, 10_000));
    // Measured instead: 4133000 - 133000 = 4 ms, ratio 1024 * 4 / 10 = 409: 7168 + 409.
    assert_eq!(run(false), (7577, 4_000));

    // With the next timer 100 ms away (bucket 5) the 45 ms stands: it is below
    // MAX_INTERESTING, so the ratio is 1024 * 45 / 100 = 460 and the factor 7168 + 460.
    let mut dev = CpuidleDevice::new(GovernorKind::Menu, 4);
    assert_eq!(dev.select(&ctx(&states, 0, 100_000_000, TICK)).idx, 3);
    dev.enter(3, 0);
    dev.exit(&states, 4_133_000, true, false);
    dev.select(&ctx(&states, 5_000_000, 100_000_000, TICK));
    let m = dev.menu().unwrap();
    assert_eq!((m.correction_factor()[5], m.intervals()[1]), (7628, 45_000));
}

/// Polling that ran into its time limit is taken as a wakeup by the next timer.
#[test]
fn poll_time_limit_counts_as_the_timer() {
    let states = skx();
    let run = |poll_time_limit: bool| {
        let mut dev = CpuidleDevice::new(GovernorKind::Menu, 4);
        // 1.5 us to the timer: POLL (early return), bucket 0.
        assert_eq!(dev.select(&ctx(&states, 0, 1_500, TICK)).idx, 0);
        dev.enter(0, 0);
        dev.exit(&states, 1_000, false, poll_time_limit);
        assert_eq!(dev.poll_time_limit(), poll_time_limit);
        dev.select(&ctx(&states, 2_000, 1_500, TICK));
        dev.menu().unwrap().correction_factor()[0]
    };
    // measured = next_timer_ns = 1500: ratio 1024, the factor stays at 8192.
    assert_eq!(run(true), 8192);
    // measured = 1000 (POLL has no exit latency): 7168 + 1024 * 1000 / 1500 = 7168 + 682.
    assert_eq!(run(false), 7850);
}

/// A selection that is not entered (a reschedule came first) leaves last_residency_ns at
/// 0 and no reflect: the next selection records UINT_MAX as the interval.
#[test]
fn cancelled_entry_records_an_unusable_interval() {
    let states = skx();
    let mut dev = CpuidleDevice::new(GovernorKind::Menu, 4);
    let mut now = 0;
    cycle(&mut dev, &states, &mut now, 4_000_000, 2_000_000, 50_000);
    dev.select(&ctx(&states, now, 4_000_000, 2_000_000));
    dev.cancel();
    assert_eq!(dev.last_residency_ns(), 0);
    dev.select(&ctx(&states, now, 4_000_000, 2_000_000));
    let m = dev.menu().unwrap();
    // [0]: the first selection's UINT_MAX; [1]: round 1's 91 us; [2]: the cancelled one.
    assert_eq!(&m.intervals()[..3], &[MAX, 91, MAX]);
    assert_eq!(m.interval_ptr(), 3);
    assert_eq!(dev.usage()[3].usage, 1);
}
