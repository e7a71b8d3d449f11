//! Helpers shared by the engine's integration tests.

#![allow(dead_code)]

use fairsim_engine::run::{RunSpec, DEFAULT_MEMORY_BUDGET};
use fairsim_engine::time::MS;
use fairsim_engine::{WorkloadSpec, WorldConfig};
use fairsim_topology::source::preset;
use fairsim_topology::BuildOptions;

/// A spec for `workloads` on preset `machine`, running `ms` milliseconds.
pub fn spec(machine: &str, workloads: &[&str], ms: u64, seed: u64) -> RunSpec {
    let config = WorldConfig {
        duration: ms * MS,
        seed,
        ..WorldConfig::default()
    };
    RunSpec {
        machine: preset(machine).unwrap(),
        build: BuildOptions::default(),
        workloads: workloads
            .iter()
            .map(|w| WorkloadSpec::parse(w).unwrap())
            .collect(),
        config,
        memory_budget: DEFAULT_MEMORY_BUDGET,
    }
}
