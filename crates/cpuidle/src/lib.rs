//! CPU idle states and the cpuidle framework of Linux 6.12.117, without a clock of its own.
//!
//! - [`states`]: `struct cpuidle_state` (name, exit latency, target residency, the
//!   polling and timer-stop flags) and the per-CPU tables of a machine.
//! - [`tables`]: the tables fairsim ships, ported from the kernel's cpuidle drivers
//!   (intel_idle, cpuidle-big_little, cpuidle-haltpoll) plus fairsim's `flat` table.
//! - [`parse`]: the `--idle-states` option (a preset, or an explicit list of states, and
//!   states to disable).
//! - [`device`]: the per-CPU `struct cpuidle_device` ([`CpuidleDevice`]): selection through
//!   the governor, the entry/exit statistics of `cpuidle_enter_state`, reflect, and
//!   `cpuidle_poll_time`. Its module documentation is the engine's integration guide.
//! - [`governor`]: the menu, teo and haltpoll governors of 6.12.117.
//! - [`governor_api`]: what the device and the governors exchange (the select inputs and
//!   answer, the device fields a governor reads, the shared constants), below both.
//!
//! The crate is pure: the engine says when a CPU goes idle, how far away its next timer
//! is and when it woke up; the governors answer with a state and a tick decision.

pub mod device;
pub mod governor;
pub mod governor_api;
pub mod parse;
pub mod states;
pub mod tables;

pub use device::{CpuidleDevice, StateUsage};
pub use governor::{HaltpollParams, MenuDevice, TeoBin, TeoCpu};
pub use governor_api::{
    tick_nsec, GovernorKind, IdleCtx, Selection, KTIME_MAX, PM_QOS_DEFAULT_LATENCY_REQ_NS,
};
pub use parse::{parse_idle_states, parse_idle_states_with, IdleSpecError};
pub use states::{IdleState, IdleStates, IdleTable};
pub use tables::{flat, machine_default, preset, FLAT_DEFAULT_EXIT_NS, PRESETS};
