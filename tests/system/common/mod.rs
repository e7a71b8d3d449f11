//! Helpers shared by the engine's integration tests.

#![allow(dead_code)]

use fairsim_des::time::MS;
use fairsim_engine::WorldConfig;
use fairsim_topology::source::preset;
use fairsim_topology::BuildOptions;
use fairsim_workloads::run::{RunSpec, DEFAULT_MEMORY_BUDGET};
use fairsim_workloads::WorkloadSpec;

/// A spec for `workloads` on preset `machine`, running `ms` milliseconds.
pub(crate) fn spec(machine: &str, workloads: &[&str], ms: u64, seed: u64) -> RunSpec {
    let config = WorldConfig {
        duration: ms * MS,
        seed,
        ..WorldConfig::default()
    };
    RunSpec {
        cpusets: Vec::new(),
        machine: preset(machine).unwrap().into(),
        build: BuildOptions::default(),
        workloads: workloads
            .iter()
            .map(|w| WorkloadSpec::parse(w).unwrap())
            .collect(),
        config,
        memory_budget: DEFAULT_MEMORY_BUDGET,
    }
}

/// The proptest configuration of the fuzz passes: `default_cases` cases (CI's short pass)
/// unless `FAIRSIM_FUZZ_CASES` says otherwise, a fixed generator seed unless
/// `FAIRSIM_FUZZ_SEED` gives another (so that CI's pass is the same every time and a long
/// pass can explore new ground), no regression files, and at most `shrink` shrink steps
/// (a shrunk failure is what makes it readable).
pub(crate) fn fuzz_config(default_cases: u32, shrink: u32) -> proptest::test_runner::Config {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    proptest::test_runner::Config {
        cases: env("FAIRSIM_FUZZ_CASES").map_or(default_cases, |c| c as u32),
        max_shrink_iters: shrink,
        failure_persistence: None,
        rng_seed: proptest::test_runner::RngSeed::Fixed(env("FAIRSIM_FUZZ_SEED").unwrap_or(16)),
        ..proptest::test_runner::Config::default()
    }
}
