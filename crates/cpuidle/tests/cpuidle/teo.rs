//! The teo governor of 6.12.117 on the Skylake-SP table, HZ=250 (TICK_NSEC = 4 ms). The
//! expected bins and totals are worked out by hand from teo.c's arithmetic: every update
//! takes `x >> 3` off each metric and adds PULSE (1024) to one of them.

use crate::common;

use common::{ctx, cycle, skx, TICK};
use fairsim_cpuidle::{CpuidleDevice, GovernorKind, IdleCtx, IdleState, Selection, TeoBin};

fn sel(idx: usize, stop_tick: bool, sleep_length_queried: bool) -> Selection {
    Selection {
        idx,
        stop_tick,
        sleep_length_queried,
    }
}

fn bin(hits: u32, intercepts: u32) -> TeoBin {
    TeoBin { intercepts, hits }
}

/// The first three bins and the total.
fn bins(dev: &CpuidleDevice) -> ([TeoBin; 3], u32) {
    let t = dev.teo().unwrap();
    ([t.bins()[0], t.bins()[1], t.bins()[2]], t.total())
}

#[test]
fn first_selection_counts_the_zeroed_device_as_a_hit() {
    let states = skx();
    let mut dev = CpuidleDevice::new(GovernorKind::Teo, 4);
    // The device starts with last_state_idx 0 and teo's data zeroed, so teo_update runs:
    // time_span 0 >= sleep_length 0 makes the measured duration U64_MAX, and only POLL's
    // 0 ns residency is within the 0 ns sleep length: a hit in bin 0, total 1024.
    // Selection: the deepest state, C6; no intercepts; 10 ms to the timer: C6, tick off.
    let s = dev.select(&ctx(&states, 0, 10_000_000, TICK));
    assert_eq!(s, sel(3, true, true));
    assert_eq!(dev.last_state_idx(), -1);
    assert_eq!(bins(&dev), ([bin(1024, 0), bin(0, 0), bin(0, 0)], 1024));
    assert_eq!(dev.teo().unwrap().sleep_length_ns(), 10_000_000);
}

/// A CPU woken 50 us after every entry while its timer is 10 ms away: the wakeups land in
/// C1E's bin as intercepts, which first take the choice to C1E, then keep the tick.
#[test]
fn intercepts_move_the_choice_and_keep_the_tick() {
    let states = skx();
    let mut dev = CpuidleDevice::new(GovernorKind::Teo, 4);
    let mut now = 0;
    let mut run =
        |dev: &mut CpuidleDevice| cycle(dev, &states, &mut now, 10_000_000, 2_000_000, 50_000);
    assert_eq!(run(&mut dev), sel(3, true, true));
    assert_eq!(dev.teo().unwrap().time_span_ns(), 183_000);
    // C6 lasted 183 us; less half its exit latency, 116500 ns: past C1E's 20 us, short of
    // C6's 600 us and of the tick period, while the sleep length was past the tick period
    // (idx_timer = 4): an intercept in bin 2. Bin 0 decays to 896; total 896 + 1024.
    // Intercepts below C6 (1024) doubled beat total - hits below C6 (1920 - 896): the
    // search takes C1E, whose bin holds them. Its 20 us fit the 10 ms sleep length, and
    // tick intercepts (1024) are not above 1920 / 2 + 1920 / 8 = 1200: the tick may stop.
    assert_eq!(run(&mut dev), sel(2, true, true));
    assert_eq!(bins(&dev), ([bin(896, 0), bin(0, 0), bin(0, 1024)], 1920));
    // C1E lasted 60 us, 55 us after half its exit latency: another intercept in bin 2,
    // now 896 + 1024 = 1920; bin 0 784; total 784 + 896 + 1024 = 2704. C1E again, but now
    // tick intercepts 1920 > 2704 / 2 + 2704 / 8 = 1690: duration TICK_NSEC / 2, the tick
    // is kept, and C1E fits before the tick 2 ms away.
    assert_eq!(run(&mut dev), sel(2, false, true));
    assert_eq!(bins(&dev), ([bin(784, 0), bin(0, 0), bin(0, 1920)], 2704));
}

/// Wakeups 3 us after entry end up in C1's bin; C1 is below RESIDENCY_THRESHOLD_NS behind a
/// polling state 0, so teo then picks it without querying the sleep length.
#[test]
fn short_wakeups_pick_c1_without_the_sleep_length() {
    let states = skx();
    let mut dev = CpuidleDevice::new(GovernorKind::Teo, 4);
    let mut now = 0;
    let mut run =
        |dev: &mut CpuidleDevice| cycle(dev, &states, &mut now, 10_000_000, 2_000_000, 3_000);
    // C6 for 136 us (69500 ns after half the exit latency): an intercept in bin 2, as in
    // the 50 us case, so C1E next with the tick allowed to stop.
    assert_eq!(run(&mut dev), sel(3, true, true));
    assert_eq!(run(&mut dev), sel(2, true, true));
    // C1E for 13 us, 8 us after half its exit latency: an intercept in bin 1. Bins: 784
    // hits in 0, 1024 intercepts in 1, 896 in 2; total 2704. Intercepts below C6 (1920)
    // doubled beat 2704 - 784; walking down, bin 2 alone (896) is not more than half of
    // 1920, bins 2 and 1 (1920) are: C1, whose 2 us is below 15 us: no timer check.
    assert_eq!(run(&mut dev), sel(1, false, false));
    assert_eq!(bins(&dev), ([bin(784, 0), bin(0, 1024), bin(0, 896)], 2704));
    assert_eq!(dev.teo().unwrap().sleep_length_ns(), i64::MAX);
    // C1 for 5 us, 4 us after half its exit latency; the sleep length was KTIME_MAX, so
    // bin 1 gets the intercept: 686 hits, 1920 and 784 intercepts, total 3390. C1 again.
    assert_eq!(run(&mut dev), sel(1, false, false));
    assert_eq!(bins(&dev), ([bin(686, 0), bin(0, 1920), bin(0, 784)], 3390));
}

/// Wakeups 0.5 us after entry end up in POLL's bin; once those intercepts are the
/// majority teo picks POLL, and queries the sleep length anyway so that the next update
/// can tell whether the guess was right.
#[test]
fn intercepts_in_bin_0_pick_poll_and_still_query_the_timer() {
    let states = skx();
    let mut dev = CpuidleDevice::new(GovernorKind::Teo, 4);
    let mut now = 0;
    let mut run =
        |dev: &mut CpuidleDevice| cycle(dev, &states, &mut now, 10_000_000, 2_000_000, 500);
    // C6 for 133.5 us (67 us after half the exit latency): bin 2; C1E for 10.5 us
    // (5.5 us): bin 1; then C1, as with the 3 us wakeups.
    assert_eq!(run(&mut dev), sel(3, true, true));
    assert_eq!(run(&mut dev), sel(2, true, true));
    assert_eq!(run(&mut dev), sel(1, false, false));
    // C1 for 2.5 us, 1.5 us after half its exit latency: bin 0. Bins: 686 hits and 1024
    // intercepts in 0, 896 in 1, 784 in 2, total 3390. Walking down from C6 the sum
    // crosses half of 2704 at bin 1 (784 + 896 = 1680): C1 again.
    assert_eq!(run(&mut dev), sel(1, false, false));
    assert_eq!(
        bins(&dev),
        ([bin(686, 1024), bin(0, 896), bin(0, 784)], 3390)
    );
    // Another bin-0 intercept: 601 hits and 1920 intercepts in 0, 784 in 1, 686 in 2,
    // total 601 + 896 + 784 + 686 + 1024 = 3991. Intercepts below C6 (3390) doubled beat
    // 3991 - 601; the walk crosses half of 3390 only at bin 0 (686 + 784 + 1920): POLL,
    // with the sleep length read for the next update, and the tick kept.
    assert_eq!(run(&mut dev), sel(0, false, true));
    assert_eq!(
        bins(&dev),
        ([bin(601, 1920), bin(0, 784), bin(0, 686)], 3991)
    );
    assert_eq!(dev.teo().unwrap().sleep_length_ns(), 10_000_000);
}

#[test]
fn stopped_tick_keeps_states_below_the_tick_period_out() {
    let states = skx();
    let mut dev = CpuidleDevice::new(GovernorKind::Teo, 4);
    let mut now = 0;
    for _ in 0..2 {
        cycle(&mut dev, &states, &mut now, 10_000_000, 2_000_000, 3_000);
    }
    // The history that picked C1 above, but with the tick stopped: C1E (20 us) is below
    // the tick period, so the walk stops there and C6 stays; the tick stays stopped.
    let c = IdleCtx {
        tick_stopped: true,
        ..ctx(&states, now, 10_000_000, 10_000_000)
    };
    assert_eq!(dev.select(&c), sel(3, true, true));
}

#[test]
fn latency_limit_and_enabled_states() {
    let pick = |states: &[IdleState], latency_req_ns: u64, tick_stopped: bool| {
        let mut dev = CpuidleDevice::new(GovernorKind::Teo, states.len());
        let c = IdleCtx {
            latency_req_ns,
            tick_stopped,
            ..ctx(states, 0, 10_000_000, 2_000_000)
        };
        dev.select(&c)
    };
    let nolimit = fairsim_cpuidle::PM_QOS_DEFAULT_LATENCY_REQ_NS;
    // 50 us: C6 (133 us) is out, C1E is checked against the 10 ms sleep length.
    assert_eq!(pick(&skx(), 50_000, false), sel(2, true, true));
    // 5 us: C1, short enough behind POLL to skip the timer check; tick kept.
    assert_eq!(pick(&skx(), 5_000, false), sel(1, false, false));
    // 0: state 0, no timer check.
    assert_eq!(pick(&skx(), 0, false), sel(0, false, false));
    // Only C6 enabled: its 600 us residency, below the tick period, keeps the tick
    // unless the tick is stopped already.
    let mut only_c6 = skx();
    for s in &mut only_c6[..3] {
        s.disabled = true;
    }
    assert_eq!(pick(&only_c6, nolimit, false), sel(3, false, false));
    assert_eq!(pick(&only_c6, nolimit, true), sel(3, true, false));
    // Only POLL enabled, or nothing: state 0.
    let mut only_poll = skx();
    for s in &mut only_poll[1..] {
        s.disabled = true;
    }
    assert_eq!(pick(&only_poll, nolimit, false), sel(0, false, false));
    only_poll[0].disabled = true;
    assert_eq!(pick(&only_poll, nolimit, false), sel(0, false, false));
    // One state: no choice.
    assert_eq!(pick(&skx()[..1], nolimit, false), sel(0, false, false));
}

#[test]
fn sleep_length_and_next_tick_cap_the_depth() {
    let states = skx();
    let pick = |sleep_ns: u64, delta_tick_ns: u64| {
        let mut dev = CpuidleDevice::new(GovernorKind::Teo, 4);
        dev.select(&ctx(&states, 0, sleep_ns, delta_tick_ns))
    };
    // 100 us to the timer: C6 does not fit, C1E does; 100 us is below the tick period,
    // so the tick is kept, and C1E fits before the tick 100 us away.
    assert_eq!(pick(100_000, 100_000), sel(2, false, true));
    // The tick 10 us away: C1E would be cut short by it, C1 fits.
    assert_eq!(pick(100_000, 10_000), sel(1, false, true));
}

/// teo_reflect: the tick waking the CPU (the sleep length being past the tick period) or
/// the polling limit makes the whole sleep length the time span, which teo_update then
/// counts as reaching the timer.
#[test]
fn safety_nets_count_as_the_timer() {
    let states = skx();
    let run = |tick_wakeup: bool| {
        let mut dev = CpuidleDevice::new(GovernorKind::Teo, 4);
        assert_eq!(dev.select(&ctx(&states, 0, 10_000_000, 4_000_000)).idx, 3);
        dev.enter(3, 0);
        dev.exit(&states, 1_133_000, tick_wakeup, false);
        dev.select(&ctx(&states, 2_000_000, 10_000_000, 2_000_000));
        let t = dev.teo().unwrap();
        (t.tick_hits(), t.bins()[3].intercepts, t.total())
    };
    // The tick: time span 10 ms >= sleep length, measured U64_MAX: a hit past the tick
    // period (tick_hits), total 896 + 1024.
    assert_eq!(run(true), (1024, 0, 1920));
    // A wakeup at 1.133 ms: 1133000 - 66500 = 1066500 ns reaches C6's bin but not the
    // tick period the sleep length reached: an intercept in bin 3.
    assert_eq!(run(false), (0, 1024, 1920));

    // POLL (latency limit 0, so no sleep length: KTIME_MAX) ended on its time limit: teo
    // clears the flag and takes the sleep length as the time span.
    let mut dev = CpuidleDevice::new(GovernorKind::Teo, 4);
    let c = IdleCtx {
        latency_req_ns: 0,
        ..ctx(&states, 0, 10_000_000, 4_000_000)
    };
    assert_eq!(dev.select(&c).idx, 0);
    dev.enter(0, 0);
    dev.exit(&states, 20_000, false, true);
    assert!(!dev.poll_time_limit());
    assert_eq!(dev.teo().unwrap().time_span_ns(), i64::MAX);
    dev.select(&c);
    assert_eq!(dev.teo().unwrap().tick_hits(), 1024);
}
