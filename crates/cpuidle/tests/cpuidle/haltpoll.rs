//! The haltpoll governor of 6.12.117 on the cpuidle-haltpoll driver's two states: POLL and
//! "haltpoll idle" (exit latency and target residency 1 us), with the module parameters'
//! defaults unless a test says otherwise.

use crate::common;

use common::{ctx, state, TICK};
use fairsim_cpuidle::governor::haltpoll::adjust_poll_limit;
use fairsim_cpuidle::{CpuidleDevice, GovernorKind, HaltpollParams, IdleCtx, IdleState, Selection};

fn table() -> Vec<IdleState> {
    let mut poll = state("POLL", 0, 0);
    poll.polling = true;
    vec![poll, state("haltpoll idle", 1_000, 1_000)]
}

fn sel(idx: usize, stop_tick: bool) -> Selection {
    Selection {
        idx,
        stop_tick,
        sleep_length_queried: false,
    }
}

/// One round: select, enter at `*now`, leave `residency_ns` later (the poll ending on its
/// window if `poll_time_limit`).
fn round(
    dev: &mut CpuidleDevice,
    states: &[IdleState],
    now: &mut u64,
    residency_ns: u64,
    poll_time_limit: bool,
) -> Selection {
    let s = dev.select(&ctx(states, *now, 10_000_000, TICK));
    dev.enter(s.idx, *now);
    *now += residency_ns;
    dev.exit(states, *now, false, poll_time_limit);
    *now += 1_000;
    s
}

#[test]
fn poll_window_grows_from_grow_start_to_the_maximum() {
    let states = table();
    let mut dev = CpuidleDevice::new(GovernorKind::Haltpoll, 2);
    let mut now = 0;
    // The window starts at 0: halt, and the tick may stop. A 30 us halt is longer than the
    // window (0) and within guest_halt_poll_ns: 0 * 2 = 0 is raised to grow_start, 50 us.
    assert_eq!(
        round(&mut dev, &states, &mut now, 30_000, false),
        sel(1, true)
    );
    assert_eq!(dev.poll_limit_ns(), 50_000);
    // After a halt, poll (tick kept) for at most the window, which cpuidle_poll_time
    // returns as cached.
    let s = dev.select(&ctx(&states, now, 10_000_000, TICK));
    assert_eq!(s, sel(0, false));
    dev.enter(0, now);
    assert_eq!(dev.poll_time_ns(&states, TICK), 50_000);
    now += 50_000;
    dev.exit(&states, now, false, true);
    // The poll ran out its window: halt. A 120 us halt doubles the window to 100 us.
    assert_eq!(
        round(&mut dev, &states, &mut now, 120_000, false),
        sel(1, true)
    );
    assert_eq!(dev.poll_limit_ns(), 100_000);
    // A poll ended by a wakeup is followed by another poll; a halt does not change the
    // window while it is no longer than it (80 us <= 100 us).
    assert_eq!(
        round(&mut dev, &states, &mut now, 30_000, false),
        sel(0, false)
    );
    assert_eq!(
        round(&mut dev, &states, &mut now, 100_000, true),
        sel(0, false)
    );
    assert_eq!(
        round(&mut dev, &states, &mut now, 80_000, false),
        sel(1, true)
    );
    assert_eq!(dev.poll_limit_ns(), 100_000);
    // 150 us > 100 us: 200 us. 199 us is not above 200 us: no change.
    round(&mut dev, &states, &mut now, 100_000, true);
    round(&mut dev, &states, &mut now, 150_000, false);
    assert_eq!(dev.poll_limit_ns(), 200_000);
    round(&mut dev, &states, &mut now, 200_000, true);
    round(&mut dev, &states, &mut now, 199_000, false);
    assert_eq!(dev.poll_limit_ns(), 200_000);
}

#[test]
fn poll_window_shrinks_on_long_halts() {
    let p = HaltpollParams::default();
    let mut limit = 200_000;
    // A halt of more than guest_halt_poll_ns (200 us) halves the window: 100 us, then
    // 50 us; half of that is below grow_start (50 us), so polling stops: 0.
    for expected in [100_000, 50_000, 0, 0] {
        adjust_poll_limit(&p, &mut limit, 500_000);
        assert_eq!(limit, expected);
    }
    // A halt of exactly 200 us is not "more than" it: it grows the window instead.
    let mut limit = 50_000;
    adjust_poll_limit(&p, &mut limit, 200_000);
    assert_eq!(limit, 100_000);
    // Without shrinking the window stays; a shrink divisor of 0 drops it to 0.
    let keep = HaltpollParams {
        guest_halt_poll_allow_shrink: false,
        ..p
    };
    let mut limit = 200_000;
    adjust_poll_limit(&keep, &mut limit, 500_000);
    assert_eq!(limit, 200_000);
    let zero = HaltpollParams {
        guest_halt_poll_shrink: 0,
        ..p
    };
    adjust_poll_limit(&zero, &mut limit, 500_000);
    assert_eq!(limit, 0);
    // A grow factor of 3 from 50 us gives 150 us, then 450 us capped at 200 us.
    let grow3 = HaltpollParams {
        guest_halt_poll_grow: 3,
        ..p
    };
    let mut limit = 50_000;
    adjust_poll_limit(&grow3, &mut limit, 60_000);
    assert_eq!(limit, 150_000);
    adjust_poll_limit(&grow3, &mut limit, 160_000);
    assert_eq!(limit, 200_000);
}

#[test]
fn long_halt_through_the_device_shrinks_the_window() {
    let states = table();
    let params = HaltpollParams {
        guest_halt_poll_grow_start: 20_000,
        ..HaltpollParams::default()
    };
    let mut dev = CpuidleDevice::new(GovernorKind::Haltpoll, 2).with_haltpoll_params(params);
    assert_eq!(dev.haltpoll_params(), Some(&params));
    let mut now = 0;
    // 10 us halt: the window starts at the lowered grow_start, 20 us.
    round(&mut dev, &states, &mut now, 10_000, false);
    assert_eq!(dev.poll_limit_ns(), 20_000);
    // Poll times out, then a 1 ms halt: 20 us / 2 = 10 us < 20 us, so 0; with a window of
    // 0 the next selection halts at once.
    round(&mut dev, &states, &mut now, 20_000, true);
    round(&mut dev, &states, &mut now, 1_000_000, false);
    assert_eq!(dev.poll_limit_ns(), 0);
    assert_eq!(
        dev.select(&ctx(&states, now, 10_000_000, TICK)),
        sel(1, true)
    );
}

#[test]
fn latency_limit_of_zero_polls() {
    let states = table();
    let mut dev = CpuidleDevice::new(GovernorKind::Haltpoll, 2);
    let c = IdleCtx {
        latency_req_ns: 0,
        ..ctx(&states, 0, 10_000_000, TICK)
    };
    assert_eq!(dev.select(&c), sel(0, false));
    // With the window still 0, cpuidle_poll_time computes the default: no state after
    // POLL has a residency of 10 us or more, so TICK_NSEC / 16 = 250 us, then cached.
    dev.enter(0, 0);
    assert_eq!(dev.poll_time_ns(&states, TICK), 250_000);
    assert_eq!(dev.poll_limit_ns(), 250_000);
}
