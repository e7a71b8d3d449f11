//! The world in virtual time: events, CPUs executing task programs, the kernel-overhead
//! cost model, noise, memory locality, metrics and the profile.
//!
//! A [`world::World`] is built from a machine, its sched domains, a
//! [`world::WorldConfig`] and a [`world::Blueprint`] (tasks, programs, pipes and each
//! workload's runtime state), and run to its end by [`world::World::run`]. Time is
//! integer nanoseconds (`fairsim_des::time::Time`); events are one closed enum ([`event::Event`])
//! in a (time, sequence) queue; tasks execute programs of the behaviour IR
//! ([`program::Op`]), whose tool-specific operations go through one hook
//! ([`hook::WorkloadModel`]); kernel work is charged to the CPU doing it through the
//! [`cost::CostTable`]; every scheduler decision is a call into `fairsim_balance::Sched`
//! at the instant it happens. The tools that compile to the IR, and runs from a
//! specification, are the crate above (`fairsim-workloads`); the output writers are
//! `fairsim-output`.

pub mod autogroup;
pub mod cgroup;
pub mod cost;
pub mod cost_tables;
pub mod error;
pub mod event;
mod event_pack;
pub mod hook;
pub mod memory;
pub mod metrics;
pub mod noise;
pub mod plat;
pub mod profile;
pub mod program;
pub mod tunable;
pub mod world;

pub use cost::{CostTable, CostTableName};
pub use error::{ConfigError, EngineError, InvariantError, ScenarioError, SpecError};
pub use noise::NoiseModel;
pub use profile::Profile;
pub use world::{Cpuidle, Outcome, TimerExpiry, World, WorldConfig};
