//! `struct cpuidle_state` and the tables a cpuidle driver registers
//! (include/linux/cpuidle.h).

use serde::Serialize;

/// One idle state as a cpuidle driver registers it (`struct cpuidle_state`), with
/// latencies in nanoseconds as `exit_latency_ns` and `target_residency_ns` hold them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdleState {
    /// `name`, as `/sys/devices/system/cpu/cpuN/cpuidle/stateK/name` prints it (`POLL`,
    /// `C1`, `C1E`, `C6`, `WFI`, ...).
    pub name: String,
    /// `exit_latency_ns`: the worst-case time from the wakeup event to running code.
    pub exit_latency_ns: u64,
    /// `target_residency_ns`: the shortest stay for which the state saves energy.
    pub target_residency_ns: u64,
    /// `CPUIDLE_FLAG_POLLING`: the state spins on `need_resched` (state 0 on x86).
    pub polling: bool,
    /// `CPUIDLE_FLAG_TIMER_STOP`: the local timer stops in this state.
    pub timer_stop: bool,
    /// Disabled, as `stateK/disable` or the driver's `CPUIDLE_FLAG_OFF` leave it: the
    /// governors skip it.
    pub disabled: bool,
}

impl IdleState {
    /// An enabled state named `name`, neither polling nor stopping the timer.
    pub fn new(name: &str, exit_latency_ns: u64, target_residency_ns: u64) -> IdleState {
        IdleState {
            name: name.to_string(),
            exit_latency_ns,
            target_residency_ns,
            polling: false,
            timer_stop: false,
            disabled: false,
        }
    }
}

/// Nanoseconds per microsecond, the kernel's `NSEC_PER_USEC`.
pub(crate) const NSEC_PER_USEC: u64 = 1_000;

/// The `POLL` state `cpuidle_poll_state_init` puts in state 0 (drivers/cpuidle/
/// poll_state.c): exit latency and target residency 0, `CPUIDLE_FLAG_POLLING`.
pub(crate) fn poll_state() -> IdleState {
    IdleState {
        name: "POLL".to_string(),
        exit_latency_ns: 0,
        target_residency_ns: 0,
        polling: true,
        timer_stop: false,
        disabled: false,
    }
}

/// A non-polling, enabled state from a driver's microsecond values.
pub(crate) fn state_us(name: &str, exit_us: u64, target_us: u64, timer_stop: bool) -> IdleState {
    IdleState {
        name: name.to_string(),
        exit_latency_ns: exit_us * NSEC_PER_USEC,
        target_residency_ns: target_us * NSEC_PER_USEC,
        polling: false,
        timer_stop,
        disabled: false,
    }
}

/// The state table of one cpuidle driver (`struct cpuidle_driver`): state 0 first, the
/// deepest last, exit latencies and residencies non-decreasing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdleTable {
    /// The driver's name as `/sys/devices/system/cpu/cpuidle/current_driver` prints it
    /// (`intel_idle`, `haltpoll`, `big_little_idle`, ...).
    pub driver: String,
    /// Where the table comes from (the kernel table it ports, or `--idle-states`).
    pub source: String,
    /// The states, state 0 first.
    pub states: Vec<IdleState>,
}

/// A machine's idle states: one table per kind of CPU (big.LITTLE parts register one
/// driver per cluster type) and the table each CPU uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdleStates {
    /// The distinct tables.
    pub tables: Vec<IdleTable>,
    /// `cpu_table[cpu]`: the index in `tables` of `cpu`'s table.
    pub cpu_table: Vec<usize>,
}

impl IdleStates {
    /// Every CPU of an `nr_cpus` machine uses `table`.
    pub fn uniform(table: IdleTable, nr_cpus: usize) -> IdleStates {
        IdleStates {
            tables: vec![table],
            cpu_table: vec![0; nr_cpus],
        }
    }

    /// The table `cpu` uses.
    pub fn table_of(&self, cpu: usize) -> &IdleTable {
        &self.tables[self.cpu_table[cpu]]
    }
}
