//! Shared fixtures: the Skylake-SP table of intel_idle (`skx_cstates`) and an idle loop
//! that runs select, enter and exit the way `cpuidle_idle_call` does.

#![allow(dead_code)]

use fairsim_cpuidle::{tick_nsec, CpuidleDevice, IdleCtx, IdleState, Selection};

/// TICK_NSEC for Debian's CONFIG_HZ=250.
pub(crate) const TICK: u64 = tick_nsec(250);

/// One state of a test table.
pub(crate) fn state(name: &str, exit_latency_ns: u64, target_residency_ns: u64) -> IdleState {
    IdleState::new(name, exit_latency_ns, target_residency_ns)
}

/// intel_idle's `skx_cstates` behind the cpuidle core's POLL state, in nanoseconds:
/// POLL (0, 0), C1 (2 us, 2 us), C1E (10 us, 20 us), C6 (133 us, 600 us, timer stops).
pub(crate) fn skx() -> Vec<IdleState> {
    let mut poll = state("POLL", 0, 0);
    poll.polling = true;
    let mut c6 = state("C6", 133_000, 600_000);
    c6.timer_stop = true;
    vec![
        poll,
        state("C1", 2_000, 2_000),
        state("C1E", 10_000, 20_000),
        c6,
    ]
}

/// What the idle loop sees at `now`: the next timer `sleep_ns` away, the next tick
/// `delta_tick_ns` away, the tick running, no PM QoS limit, HZ=250.
pub(crate) fn ctx(
    states: &[IdleState],
    now: u64,
    sleep_ns: u64,
    delta_tick_ns: u64,
) -> IdleCtx<'_> {
    IdleCtx {
        now_ns: now,
        sleep_length_ns: sleep_ns,
        delta_tick_ns,
        ..IdleCtx::new(states, TICK)
    }
}

/// One round of the idle loop: select at `*now`, enter at once, wake `wake_after_ns` later
/// and run again once the state's exit latency is paid; the clock then moves 1 us on (the
/// CPU runs a task between two idle periods).
pub(crate) fn cycle(
    dev: &mut CpuidleDevice,
    states: &[IdleState],
    now: &mut u64,
    sleep_ns: u64,
    delta_tick_ns: u64,
    wake_after_ns: u64,
) -> Selection {
    let sel = dev.select(&ctx(states, *now, sleep_ns, delta_tick_ns));
    dev.enter(sel.idx, *now);
    let end = *now + wake_after_ns + states[sel.idx].exit_latency_ns;
    dev.exit(states, end, false, false);
    *now = end + 1_000;
    sel
}
