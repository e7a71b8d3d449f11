//! What the cpuidle core and its governors exchange: the constants of
//! include/linux/cpuidle.h and drivers/cpuidle/governors/gov.h they share, the inputs of a
//! governor's `->select()` ([`IdleCtx`]) and its answer ([`Selection`]), which governor
//! runs ([`GovernorKind`]), and the fields of `struct cpuidle_device` a governor reads and
//! writes ([`DevState`]).
//!
//! This module sits below both [`crate::device`] and [`crate::governor`], and imports
//! nothing from the crate but the driver's state table ([`crate::states`]), so that the
//! device can hold a governor and the governors can read the device's fields without
//! either module importing the other.

use crate::states::IdleState;
use serde::Serialize;

/// `NSEC_PER_USEC`.
pub const NSEC_PER_USEC: u64 = 1_000;

/// `KTIME_MAX` (include/linux/time64.h): the largest `ktime_t`, used by the governors as
/// "no timer".
pub const KTIME_MAX: u64 = i64::MAX as u64;

/// `CPUIDLE_STATE_MAX` (include/linux/cpuidle.h): a driver registers at most this many
/// states, so states past it are ignored here as the kernel never sees them.
pub const CPUIDLE_STATE_MAX: usize = 10;

/// What `cpuidle_governor_latency_req()` (drivers/cpuidle/governor.c) returns with no PM QoS
/// request anywhere: the smaller of the device's resume latency (`PM_QOS_LATENCY_ANY`,
/// `S32_MAX` us) and the CPU latency default (`PM_QOS_CPU_LATENCY_DEFAULT_VALUE`,
/// 2000 s), in nanoseconds.
pub const PM_QOS_DEFAULT_LATENCY_REQ_NS: u64 = 2_000 * 1_000_000 * NSEC_PER_USEC;

/// `RESIDENCY_THRESHOLD_NS` (drivers/cpuidle/governors/gov.h): below this predicted idle
/// duration (or target residency, for teo) the governors do without the sleep length,
/// whose computation is costly.
pub const RESIDENCY_THRESHOLD_NS: u64 = 15 * NSEC_PER_USEC;

/// `TICK_NSEC` (include/vdso/jiffies.h) for a kernel built with `CONFIG_HZ=hz`:
/// `(NSEC_PER_SEC + HZ/2) / HZ`, so 4 000 000 for Debian's HZ=250. A zero `hz` yields 0.
pub const fn tick_nsec(hz: u64) -> u64 {
    if hz == 0 {
        return 0;
    }
    (1_000_000_000 + hz / 2) / hz
}

/// What the idle loop knows when it asks the governor: the inputs of `menu_select`,
/// `teo_select` and `haltpoll_select`. The governor queries the sleep length only when
/// the kernel's would ([`Selection::sleep_length_queried`]).
#[derive(Debug, Clone, Copy)]
pub struct IdleCtx<'a> {
    /// The CPU's driver table; a state's `disabled` flag stands for
    /// `dev->states_usage[i].disable`.
    pub states: &'a [IdleState],
    /// `local_clock()` at selection, which teo keeps to measure the time until reflect.
    pub now_ns: u64,
    /// `tick_nohz_get_sleep_length()`: the time from idle entry to the next timer event if
    /// the tick were stopped. The kernel returns `delta_tick_ns` instead when the tick
    /// cannot be stopped or when a timer is due within one tick period while the tick is
    /// still running. A value above [`KTIME_MAX`] (such as `u64::MAX` for "no timer") is
    /// read as [`KTIME_MAX`]; an already expired timer (negative in the kernel) is passed
    /// as 0.
    pub sleep_length_ns: u64,
    /// The value `tick_nohz_get_sleep_length()` stores in `*delta_next`: the time to the
    /// clock event device's next event, that is the next tick while it runs.
    pub delta_tick_ns: u64,
    /// `tick_nohz_tick_stopped()`: the tick was stopped in an earlier round of `do_idle`.
    pub tick_stopped: bool,
    /// `cpuidle_governor_latency_req(cpu)`; [`PM_QOS_DEFAULT_LATENCY_REQ_NS`] without a
    /// PM QoS request, 0 forbids everything but state 0.
    pub latency_req_ns: u64,
    /// `TICK_NSEC` for the configured HZ ([`tick_nsec`]).
    pub tick_nsec: u64,
}

impl<'a> IdleCtx<'a> {
    /// A context with no timer pending, the next tick one period away, the tick running
    /// and no latency constraint, at time 0; set the fields that differ.
    pub fn new(states: &'a [IdleState], tick_nsec: u64) -> IdleCtx<'a> {
        IdleCtx {
            states,
            now_ns: 0,
            sleep_length_ns: KTIME_MAX,
            delta_tick_ns: tick_nsec,
            tick_stopped: false,
            latency_req_ns: PM_QOS_DEFAULT_LATENCY_REQ_NS,
            tick_nsec,
        }
    }

    /// The driver's states as the governors see them: at most [`CPUIDLE_STATE_MAX`].
    pub(crate) fn table(&self) -> &'a [IdleState] {
        &self.states[..self.states.len().min(CPUIDLE_STATE_MAX)]
    }

    /// `tick_nohz_get_sleep_length(&delta_tick)` as `ktime_t` values, both at most
    /// [`KTIME_MAX`] so that they stay non-negative when the kernel's signed arithmetic
    /// applies.
    pub(crate) fn sleep_length(&self) -> (u64, u64) {
        (
            self.sleep_length_ns.min(KTIME_MAX),
            self.delta_tick_ns.min(KTIME_MAX),
        )
    }
}

/// The governor's answer: the state to enter and whether the tick may be stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Selection {
    /// The index of the state to enter.
    pub idx: usize,
    /// `*stop_tick` after `->select()`: false asks for `tick_nohz_idle_retain_tick()`
    /// (unless the tick is already stopped, which `cpuidle_idle_call` then keeps stopped).
    pub stop_tick: bool,
    /// Whether the governor called `tick_nohz_get_sleep_length()`, which menu and teo skip
    /// when their recent history already predicts a short idle period (the query's cost is
    /// the reason they do).
    pub sleep_length_queried: bool,
}

/// The governor that runs on the device (`cpuidle_curr_governor`). `none` (no cpuidle
/// driver: `default_idle_call`) is the engine's, not a governor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum GovernorKind {
    /// drivers/cpuidle/governors/menu.c.
    Menu,
    /// drivers/cpuidle/governors/teo.c.
    Teo,
    /// drivers/cpuidle/governors/haltpoll.c, for the cpuidle-haltpoll driver of KVM guests.
    Haltpoll,
}

/// The fields of `struct cpuidle_device` that the core and the governors read and write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DevState {
    /// `last_state_idx`: set by the governors' `->reflect()`; teo writes -1 once it has used
    /// it. The device is zero-initialised in the kernel, so it starts at 0.
    pub(crate) last_state_idx: i32,
    /// `last_residency_ns`: the last entry's duration, 0 after a refused entry.
    pub(crate) last_residency_ns: u64,
    /// `poll_limit_ns`: the polling time cache of `cpuidle_poll_time`, which haltpoll
    /// drives.
    pub(crate) poll_limit_ns: u64,
    /// `poll_time_limit`: the polling state ended on its time limit, not on a wakeup.
    pub(crate) poll_time_limit: bool,
}
