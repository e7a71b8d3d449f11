//! CPU idle states and the cpuidle framework of Linux 6.12.117, without a clock of its own.
//!
//! - [`states`]: `struct cpuidle_state` (name, exit latency, target residency, the
//!   polling and timer-stop flags) and the per-CPU tables of a machine.
//!
//! The crate is pure: the engine says when a CPU goes idle, how far away its next timer
//! is and when it woke up; the governors answer with a state and a tick decision.

pub mod states;

pub use states::{IdleState, IdleStates, IdleTable};
