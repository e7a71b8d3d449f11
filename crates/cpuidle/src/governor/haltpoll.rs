//! The haltpoll governor (drivers/cpuidle/governors/haltpoll.c, Linux 6.12.117).
//!
//! Made for the two states of the cpuidle-haltpoll driver in KVM guests (state 0 polls,
//! state 1 halts, which exits to the host): poll for up to a per-CPU window,
//! `dev->poll_limit_ns`, then halt. The window grows when halts were short enough that
//! polling a bit longer would have caught the wakeup, and shrinks when halts were long.

use crate::governor_api::{DevState, IdleCtx, Selection};
use serde::Serialize;

/// haltpoll.c's module parameters (`/sys/module/haltpoll/parameters/`), with their
/// defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HaltpollParams {
    /// `guest_halt_poll_ns` (200000): the largest polling window.
    pub guest_halt_poll_ns: u32,
    /// `guest_halt_poll_shrink` (2): the divisor applied when halts are long; 0 resets the
    /// window to 0.
    pub guest_halt_poll_shrink: u32,
    /// `guest_halt_poll_grow` (2): the multiplier applied when halts are short.
    pub guest_halt_poll_grow: u32,
    /// `guest_halt_poll_grow_start` (50000): the first non-zero window; a window shrunk
    /// below it drops to 0.
    pub guest_halt_poll_grow_start: u32,
    /// `guest_halt_poll_allow_shrink` (true).
    pub guest_halt_poll_allow_shrink: bool,
}

impl Default for HaltpollParams {
    fn default() -> HaltpollParams {
        HaltpollParams {
            guest_halt_poll_ns: 200_000,
            guest_halt_poll_shrink: 2,
            guest_halt_poll_grow: 2,
            guest_halt_poll_grow_start: 50_000,
            guest_halt_poll_allow_shrink: true,
        }
    }
}

/// `haltpoll_select()` (haltpoll.c, 6.12.117): poll (state 0) unless the last poll ran out
/// its window without a wakeup or the window is 0, in which case halt (state 1) and allow
/// the tick to stop.
pub(crate) fn haltpoll_select(dev: &DevState, ctx: &IdleCtx) -> Selection {
    let sel = |idx: usize, stop_tick: bool| Selection {
        idx,
        stop_tick,
        sleep_length_queried: false,
    };
    if ctx.table().is_empty() || ctx.latency_req_ns == 0 {
        return sel(0, false);
    }
    if dev.poll_limit_ns == 0 {
        return sel(1, true);
    }
    // The last state was the poll: halt if nothing woke the CPU within the window.
    if dev.last_state_idx == 0 && dev.poll_time_limit {
        return sel(1, true);
    }
    // Otherwise poll, again after a poll or first after a halt.
    sel(0, false)
}

/// `adjust_poll_limit()` (haltpoll.c, 6.12.117): grow the window when the CPU halted for
/// longer than the window but no longer than `guest_halt_poll_ns` (polling that long would
/// have caught the wakeup), shrink it when the halt was longer than that. The new window is
/// an unsigned int, as in the kernel.
pub fn adjust_poll_limit(params: &HaltpollParams, poll_limit_ns: &mut u64, block_ns: u64) {
    let max_ns = u64::from(params.guest_halt_poll_ns);
    if block_ns > *poll_limit_ns && block_ns <= max_ns {
        let mut val = poll_limit_ns.wrapping_mul(u64::from(params.guest_halt_poll_grow)) as u32;
        if val < params.guest_halt_poll_grow_start {
            val = params.guest_halt_poll_grow_start;
        }
        if val > params.guest_halt_poll_ns {
            val = params.guest_halt_poll_ns;
        }
        *poll_limit_ns = u64::from(val);
    } else if block_ns > max_ns && params.guest_halt_poll_allow_shrink {
        // A divisor of 0 resets the window; a window shrunk below the starting one stops
        // polling altogether.
        let val = match (*poll_limit_ns as u32).checked_div(params.guest_halt_poll_shrink) {
            Some(v) if v >= params.guest_halt_poll_grow_start => v,
            _ => 0,
        };
        *poll_limit_ns = u64::from(val);
    }
}

/// `haltpoll_reflect()` (haltpoll.c, 6.12.117): remember the entered state and, after a
/// halt, adjust the window to how long the halt lasted.
pub(crate) fn haltpoll_reflect(params: &HaltpollParams, dev: &mut DevState, idx: usize) {
    dev.last_state_idx = idx as i32;
    if idx != 0 {
        adjust_poll_limit(params, &mut dev.poll_limit_ns, dev.last_residency_ns);
    }
}
