//! The world in virtual time: events, CPUs executing task programs, workloads, the
//! kernel-overhead cost model, metrics and outputs.
//!
//! A run is a [`run::RunSpec`] (machine, workloads, [`world::WorldConfig`]) turned into a
//! [`world::World`] by [`run::prepare`] and run to its end by [`world::World::run`]. Time
//! is integer nanoseconds ([`time::Time`]); events are one closed enum
//! ([`event::Event`]) in a (time, sequence) queue; tasks execute programs of the
//! behaviour IR ([`program::Op`]) that the workloads ([`workloads`]) compile to; kernel
//! work is charged to the CPU doing it through the [`cost::CostTable`]; every scheduler
//! decision is a call into `fairsim_balance::Sched` at the instant it happens.

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
pub mod output;
pub mod plat;
pub mod profile;
pub mod program;
mod radix;
pub mod resolve;
pub mod run;
pub mod scenario;
pub mod speed;
mod wheel;
pub mod workloads;
pub mod world;

pub use cost::{CostTable, CostTableName};
pub use error::EngineError;
pub use fairsim_balance as balance;
/// The world's seeded random streams, from the discrete-event core, re-exported for the
/// same reason as [`time`].
pub use fairsim_des::rng;
/// Virtual time, from the discrete-event core; re-exported so that `crate::time` paths and
/// the engine's users keep their names.
pub use fairsim_des::time;
pub use noise::NoiseModel;
pub use profile::Profile;
pub use run::{
    check_machine, default_duration, estimate_json_memory, estimate_memory, estimate_run_memory,
    prepare, run, RunResult, RunSpec,
};
pub use time::{parse_duration, Time};
pub use workloads::{Workload, WorkloadSpec};
pub use world::{Cpuidle, TimerExpiry, World, WorldConfig};
