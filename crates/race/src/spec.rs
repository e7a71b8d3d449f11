//! What defines a race run ([`RaceSpec`]) and the ranges race mode accepts
//! ([`validate`]). A leaf that the runner and the report both read, so that neither
//! imports the other's items for it.

use fairsim_balance::SchedParams;
use fairsim_topology::{BuildOptions, Machine};

use crate::error::{invalid, RaceError};
use crate::step::TokenProgram;

/// Where the tokens start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// All on CPU 0, as if one launcher had forked them without fork balancing: the
    /// balancers must spread them, and every idle CPU races for CPU 0's lock at first.
    Cpu0,
    /// Token `i` on CPU `i % nr_cpus`.
    Spread,
}

/// Everything that defines a race run.
#[derive(Debug, Clone)]
pub struct RaceSpec {
    /// The machine (symmetric capacities).
    pub machine: Machine,
    /// Sched-domain build options.
    pub build: BuildOptions,
    /// Features, HZ, util_est, migration cost, nr_migrate and the seed of `sched_rng`.
    pub params: SchedParams,
    /// Tokens.
    pub tasks: usize,
    /// OS threads; each drives the CPUs `k, k + threads, ...`.
    pub threads: usize,
    /// Wall-clock run length in ns.
    pub duration_ns: u64,
    /// What each token does.
    pub program: TokenProgram,
    /// Where tokens start.
    pub placement: Placement,
    /// How long after the run's end (`duration_ns` after the threads start) a thread may
    /// take to stop before the run fails; starting the threads counts against it too.
    pub watchdog_ns: u64,
}

/// The most tokens a race run takes.
pub const MAX_RACE_TASKS: usize = 1 << 16;
/// The longest race run (wall clock).
pub const MAX_RACE_DURATION: u64 = 3600 * 1_000_000_000;

/// Checks a spec's ranges.
pub fn validate(spec: &RaceSpec) -> Result<(), RaceError> {
    let n = spec.machine.nr_cpus();
    if n == 0 {
        return Err(RaceError::NoCpus);
    }
    let kernel = spec.params.features.kernel();
    if !matches!(
        kernel,
        fairsim_balance::Kernel::V6_12 | fairsim_balance::Kernel::V6_5
    ) {
        // Race mode's per-thread contexts run 6.12's and 6.5's balancers; the older
        // kernels' keep state (cpu_load[], their capacities) that only the engine's
        // machine has.
        return Err(invalid(
            "--kernel",
            kernel.name(),
            "6.12 or 6.5 (race mode runs those kernels' load balancers; the older kernels' are not ported to race mode)",
        ));
    }
    if spec
        .params
        .features
        .has(fairsim_balance::features::Feature::LEGACY_LB)
    {
        // The race mode's per-thread contexts run 6.12's balancer only.
        return Err(invalid(
            "--features",
            "LEGACY_LB",
            "features of 6.12's balancer (the race mode does not run Linux 3.9's)",
        ));
    }
    if spec.threads == 0 || spec.threads > n {
        return Err(invalid(
            "--threads",
            spec.threads,
            &format!("1 to the CPU count ({n})"),
        ));
    }
    if spec.tasks == 0 || spec.tasks > MAX_RACE_TASKS {
        return Err(invalid(
            "--tasks",
            spec.tasks,
            &format!("1 to {MAX_RACE_TASKS}"),
        ));
    }
    if spec.duration_ns == 0 || spec.duration_ns > MAX_RACE_DURATION {
        return Err(invalid(
            "--duration",
            format!("{}ns", spec.duration_ns),
            "more than 0, at most 1h",
        ));
    }
    let caps = &spec.machine.cpus;
    if caps.iter().any(|c| c.capacity != caps[0].capacity) {
        return Err(invalid(
            "machine",
            &spec.machine.name,
            "a machine whose CPUs all have the same capacity (race mode does not run misfit migration)",
        ));
    }
    if spec.program.spin_ns == 0 || spec.program.spin_ns > 1_000_000_000 {
        return Err(invalid(
            "--run",
            format!("{}ns", spec.program.spin_ns),
            "more than 0, at most 1s",
        ));
    }
    if spec.program.sleep_ns > 1_000_000_000 {
        return Err(invalid(
            "--sleep",
            format!("{}ns", spec.program.sleep_ns),
            "at most 1s",
        ));
    }
    Ok(())
}
