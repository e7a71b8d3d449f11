//! The per-CPU `struct cpuidle_device` and what the cpuidle core does with it around a
//! governor: `cpuidle_select`, the statistics of `cpuidle_enter_state`, `cpuidle_reflect`
//! and `cpuidle_poll_time` (drivers/cpuidle/cpuidle.c, Linux 6.12.117).
//!
//! # How the idle loop drives a [`CpuidleDevice`]
//!
//! `cpuidle_idle_call` (kernel/sched/idle.c, 6.12.117) does, for a CPU with a cpuidle driver
//! of more than one state and outside s2idle and forced idle:
//!
//! 1. `stop_tick = true`, then `next_state = cpuidle_select(drv, dev, &stop_tick)`:
//!    [`CpuidleDevice::select`] with an [`IdleCtx`]. The governor may leave `stop_tick`
//!    true or clear it ([`Selection::stop_tick`]).
//! 2. `tick_nohz_idle_stop_tick()` if `stop_tick` or the tick is already stopped, else
//!    `tick_nohz_idle_retain_tick()`: the engine's business.
//! 3. `call_cpuidle`: if a reschedule is already pending the state is not entered, the
//!    device's `last_residency_ns` becomes 0 and the governor is not told
//!    ([`CpuidleDevice::cancel`]). Otherwise `cpuidle_enter_state` notes the start time
//!    ([`CpuidleDevice::enter`]), the CPU sleeps until a wakeup, the driver pays the exit
//!    latency, and the end time is taken when the CPU runs again
//!    ([`CpuidleDevice::exit`], which also does `cpuidle_reflect`). A polling state ends
//!    itself after [`CpuidleDevice::poll_time_ns`] (`poll_idle` then sets
//!    `dev->poll_time_limit`).
//! 4. `do_idle` loops back to step 1 while no task is runnable.
//!
//! With one state or none, 6.12.117's `cpuidle_idle_call` skips the governor and enters
//! state 0; the engine should do the same rather than call [`CpuidleDevice::select`].

use crate::governor::{Governor, HaltpollParams, MenuDevice, TeoCpu};
use crate::governor_api::{
    DevState, GovernorKind, IdleCtx, Selection, CPUIDLE_STATE_MAX, NSEC_PER_USEC,
};
use crate::states::IdleState;
use serde::Serialize;

/// `CPUIDLE_POLL_MIN` (drivers/cpuidle/cpuidle.c): a deeper state's target residency below
/// this does not bound the polling time.
pub const CPUIDLE_POLL_MIN_NS: u64 = 10_000;

/// One state's statistics (`struct cpuidle_state_usage`), as
/// `/sys/devices/system/cpu/cpuN/cpuidle/stateK/{usage,time,above,below,rejected}` show
/// them (`time` is [`StateUsage::time_us`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StateUsage {
    /// `usage`: the number of entries.
    pub usage: u64,
    /// `time_ns`: the time spent in the state, entry to exit, exit latency included.
    pub time_ns: u64,
    /// `above`: entries that lasted less than the target residency while a shallower state
    /// was enabled (the state was too deep).
    pub above: u64,
    /// `below`: entries that, less the exit latency, lasted at least the target residency
    /// of the next enabled deeper state (the state was too shallow).
    pub below: u64,
    /// `rejected`: entries the driver refused.
    pub rejected: u64,
}

impl StateUsage {
    /// The sysfs `time` attribute: `time_ns` in microseconds (`div_u64(time_ns,
    /// NSEC_PER_USEC)`).
    pub fn time_us(&self) -> u64 {
        self.time_ns / NSEC_PER_USEC
    }
}

/// A state entered and not yet left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entered {
    idx: usize,
    time_start_ns: u64,
}

/// One CPU's `struct cpuidle_device` together with its governor's per-CPU data: the
/// selection, the entry/exit statistics, the reflect step and the polling time limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuidleDevice {
    gov: Governor,
    dev: DevState,
    usage: Vec<StateUsage>,
    entered: Option<Entered>,
}

impl CpuidleDevice {
    /// A registered and enabled device for a driver of `nr_states` states (at most
    /// [`CPUIDLE_STATE_MAX`]): `__cpuidle_device_init` zeroes the statistics, then the
    /// governor's `->enable()` (`menu_enable_device`, `teo_enable_device`,
    /// `haltpoll_enable_device`) sets up its data. Haltpoll starts with its module
    /// parameters' defaults ([`CpuidleDevice::with_haltpoll_params`]).
    pub fn new(kind: GovernorKind, nr_states: usize) -> CpuidleDevice {
        CpuidleDevice {
            gov: Governor::new(kind),
            dev: DevState::default(),
            usage: vec![StateUsage::default(); nr_states.min(CPUIDLE_STATE_MAX)],
            entered: None,
        }
    }

    /// The same device with haltpoll's module parameters set to `params`; other governors
    /// ignore them.
    pub fn with_haltpoll_params(mut self, params: HaltpollParams) -> CpuidleDevice {
        if let Governor::Haltpoll(p) = &mut self.gov {
            *p = params;
        }
        self
    }

    /// The governor running on the device.
    pub fn kind(&self) -> GovernorKind {
        self.gov.kind()
    }

    /// `cpuidle_select()` (drivers/cpuidle/cpuidle.c, 6.12.117): the governor's
    /// `->select()`, which first folds the previous idle period into its data (menu's
    /// `menu_update`, teo's `teo_update`). The index is always inside `ctx.states` when that
    /// is not empty (haltpoll answers state 1 without looking at the table, which 6.12.117
    /// never lets it do with fewer than two states).
    pub fn select(&mut self, ctx: &IdleCtx) -> Selection {
        let mut sel = self.gov.select(&mut self.dev, ctx);
        let n = ctx.table().len();
        if n > 0 && sel.idx >= n {
            sel.idx = n - 1;
        }
        sel
    }

    /// The start of `cpuidle_enter_state()` (drivers/cpuidle/cpuidle.c, 6.12.117): the CPU
    /// enters state `idx` at `now_ns` (`time_start`). The engine handles the broadcast-timer
    /// fallback of `CPUIDLE_FLAG_TIMER_STOP` states itself, by entering the state it falls
    /// back to.
    pub fn enter(&mut self, idx: usize, now_ns: u64) {
        self.entered = Some(Entered {
            idx,
            time_start_ns: now_ns,
        });
    }

    /// The end of `cpuidle_enter_state()` and then `cpuidle_reflect()`
    /// (drivers/cpuidle/cpuidle.c, 6.12.117). `now_ns` is `time_end`: the CPU runs again,
    /// the exit latency paid, so `last_residency_ns` is the raw `time_end - time_start`
    /// (menu and the `below` statistic take the exit latency off themselves).
    /// `tick_wakeup` is `tick_nohz_idle_got_tick()`: the tick handler ran during this idle
    /// period. `poll_time_limit` is what `poll_idle` leaves in `dev->poll_time_limit` when
    /// the entered state is a polling one: true if it stopped on its time limit. The
    /// reflect step reads the clock at `now_ns` too (teo's `local_clock()`). Without a
    /// preceding [`CpuidleDevice::enter`] nothing happens.
    pub fn exit(
        &mut self,
        states: &[IdleState],
        now_ns: u64,
        tick_wakeup: bool,
        poll_time_limit: bool,
    ) {
        let Some(entered) = self.entered.take() else {
            return;
        };
        let states = &states[..states.len().min(CPUIDLE_STATE_MAX)];
        let idx = entered.idx;
        let Some(state) = states.get(idx) else {
            return;
        };
        // poll_idle() clears the flag on entry and sets it on the time limit; no other state
        // touches it, so a deeper state leaves the last polling value in place.
        if state.polling {
            self.dev.poll_time_limit = poll_time_limit;
        }
        // ktime_sub(time_end, time_start): a clock that went backwards would make the
        // kernel's difference negative; it is taken as 0 here.
        let diff = now_ns.saturating_sub(entered.time_start_ns);
        let delay = state.exit_latency_ns;
        self.dev.last_residency_ns = diff;
        if let Some(u) = self.usage.get_mut(idx) {
            u.time_ns = u.time_ns.wrapping_add(diff);
            u.usage = u.usage.wrapping_add(1);
        }
        if diff < state.target_residency_ns {
            // Too deep only if a shallower state could have been used instead.
            if states[..idx].iter().any(|s| !s.disabled) {
                if let Some(u) = self.usage.get_mut(idx) {
                    u.above = u.above.wrapping_add(1);
                }
            }
        } else if diff > delay {
            // Too shallow if the next enabled deeper state would have paid off.
            if let Some(deeper) = states[idx + 1..].iter().find(|s| !s.disabled) {
                if diff - delay >= deeper.target_residency_ns {
                    if let Some(u) = self.usage.get_mut(idx) {
                        u.below = u.below.wrapping_add(1);
                    }
                }
            }
        }
        // cpuidle_reflect() calls ->reflect() for every entered state (index >= 0).
        self.gov.reflect(&mut self.dev, idx, now_ns, tick_wakeup);
    }

    /// `call_cpuidle()` (kernel/sched/idle.c, 6.12.117) finding a reschedule already
    /// pending after the selection: the state is not entered, `last_residency_ns` becomes
    /// 0 and the governor is not told (`cpuidle_reflect` sees a negative index). Menu reads
    /// this at its next selection as an unusable interval.
    pub fn cancel(&mut self) {
        self.entered = None;
        self.dev.last_residency_ns = 0;
    }

    /// `cpuidle_enter_state()` (drivers/cpuidle/cpuidle.c, 6.12.117) when the driver's
    /// `->enter()` refuses state `idx`: `last_residency_ns` becomes 0, the state's
    /// `rejected` count grows, and the governor is not told.
    pub fn reject(&mut self, idx: usize) {
        self.entered = None;
        self.dev.last_residency_ns = 0;
        if let Some(u) = self.usage.get_mut(idx) {
            u.rejected = u.rejected.wrapping_add(1);
        }
    }

    /// `cpuidle_poll_time()` (drivers/cpuidle/cpuidle.c, 6.12.117): how long the polling
    /// state may spin. The cached `poll_limit_ns` if set (haltpoll sets it); otherwise the
    /// target residency of the first enabled state after state 0 whose residency is at
    /// least [`CPUIDLE_POLL_MIN_NS`], capped at `TICK_NSEC / 16`, which is then cached.
    pub fn poll_time_ns(&mut self, states: &[IdleState], tick_nsec: u64) -> u64 {
        if self.dev.poll_limit_ns != 0 {
            return self.dev.poll_limit_ns;
        }
        let poll_max = tick_nsec / 16;
        let states = &states[..states.len().min(CPUIDLE_STATE_MAX)];
        let limit_ns = states
            .iter()
            .skip(1)
            .filter(|s| !s.disabled)
            .map(|s| s.target_residency_ns)
            .find(|&r| r >= CPUIDLE_POLL_MIN_NS)
            .map_or(poll_max, |r| r.min(poll_max));
        self.dev.poll_limit_ns = limit_ns;
        limit_ns
    }

    /// `cpuidle_state_store()` (drivers/cpuidle/sysfs.c, 6.12.117): writing any state
    /// attribute, such as `disable`, drops the polling time cache.
    pub fn reset_poll_limit(&mut self) {
        self.dev.poll_limit_ns = 0;
    }

    /// The per-state statistics, state 0 first.
    pub fn usage(&self) -> &[StateUsage] {
        &self.usage
    }

    /// `dev->last_residency_ns`.
    pub fn last_residency_ns(&self) -> u64 {
        self.dev.last_residency_ns
    }

    /// `dev->last_state_idx` (-1 once teo has folded it in).
    pub fn last_state_idx(&self) -> i32 {
        self.dev.last_state_idx
    }

    /// `dev->poll_limit_ns`: 0 until `cpuidle_poll_time` or haltpoll sets it.
    pub fn poll_limit_ns(&self) -> u64 {
        self.dev.poll_limit_ns
    }

    /// `dev->poll_time_limit`.
    pub fn poll_time_limit(&self) -> bool {
        self.dev.poll_time_limit
    }

    /// Menu's per-CPU data, when menu runs on the device.
    pub fn menu(&self) -> Option<&MenuDevice> {
        match &self.gov {
            Governor::Menu(m) => Some(m),
            _ => None,
        }
    }

    /// Teo's per-CPU data, when teo runs on the device.
    pub fn teo(&self) -> Option<&TeoCpu> {
        match &self.gov {
            Governor::Teo(t) => Some(t),
            _ => None,
        }
    }

    /// Haltpoll's module parameters, when haltpoll runs on the device.
    pub fn haltpoll_params(&self) -> Option<&HaltpollParams> {
        match &self.gov {
            Governor::Haltpoll(p) => Some(p),
            _ => None,
        }
    }
}
