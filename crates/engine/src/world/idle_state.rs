//! The idle loop's state: each CPU's cpuidle device and governor data, the state it sits
//! in, and the counters when the window opened. `idle` runs the loop over it; the state
//! lives apart so that `World`'s fields can name it without depending on that code.

use fairsim_cpuidle::{CpuidleDevice, GovernorKind, IdleStates, StateUsage};

/// The state a CPU sits in: which one and since when (stale events are told apart by
/// [`IdleRt::gen`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CState {
    /// Index in the CPU's state table.
    pub idx: usize,
    /// When the CPU entered it.
    pub since: u64,
}

/// The engine's side of cpuidle: the machine's tables, one device per CPU, and the
/// counters when the measurement window opened.
#[derive(Debug, Clone)]
pub(super) struct IdleRt {
    /// The states of every CPU.
    pub states: IdleStates,
    /// `struct cpuidle_device` and governor data of each CPU; empty without a driver.
    pub devices: Vec<CpuidleDevice>,
    /// Per CPU, the state each CPU is in (`None`: running, in kernel work, or between
    /// two rounds of the idle loop).
    pub cstate: Vec<Option<CState>>,
    /// Per CPU, generation of its idle entries (stale poll-limit and re-entry events).
    pub gen: Vec<u64>,
    /// Per CPU and state, the counters when the window opened.
    pub base: Vec<Vec<StateUsage>>,
}

impl IdleRt {
    /// The idle machinery of `nr_cpus` CPUs with `states` under the governor `kind`
    /// (`None`: no cpuidle driver, so no devices).
    pub(super) fn new(states: IdleStates, kind: Option<GovernorKind>, nr_cpus: usize) -> IdleRt {
        let devices = match kind {
            Some(kind) => (0..nr_cpus)
                .map(|cpu| CpuidleDevice::new(kind, states.table_of(cpu).states.len()))
                .collect(),
            None => Vec::new(),
        };
        let base = devices.iter().map(|d| d.usage().to_vec()).collect();
        IdleRt {
            states,
            devices,
            cstate: vec![None; nr_cpus],
            gen: vec![0; nr_cpus],
            base,
        }
    }

    /// Per CPU and state, the counters since the window opened (what two reads of
    /// `/sys/devices/system/cpu/cpuN/cpuidle/stateK/{usage,time,above,below}` give),
    /// with the residency of a state still in progress at `now` added to its time: sysfs
    /// adds a residency only at the exit, which would hide a CPU that sleeps through the
    /// whole window. That part counts from `window_start` at the earliest.
    pub(super) fn window_usage(&self, now: u64, window_start: u64) -> Vec<Vec<StateUsage>> {
        self.devices
            .iter()
            .zip(&self.base)
            .zip(&self.cstate)
            .map(|((d, b), cs)| {
                let mut u: Vec<StateUsage> = d
                    .usage()
                    .iter()
                    .zip(b)
                    .map(|(now, then)| since(now, then))
                    .collect();
                if let Some(cs) = cs {
                    if let Some(x) = u.get_mut(cs.idx) {
                        x.time_ns += now.saturating_sub(cs.since.max(window_start));
                    }
                }
                u
            })
            .collect()
    }
}

/// The growth of one state's counters from `then` to `now`.
fn since(now: &StateUsage, then: &StateUsage) -> StateUsage {
    StateUsage {
        usage: now.usage - then.usage,
        time_ns: now.time_ns.saturating_sub(then.time_ns),
        above: now.above - then.above,
        below: now.below - then.below,
        rejected: now.rejected - then.rejected,
    }
}
