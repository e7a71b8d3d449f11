//! Errors of the engine: bad workload specifications, impossible runs, broken invariants.

/// Everything that can go wrong when setting up or running a world.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The machine has no CPUs.
    #[error("machine: no CPUs; allowed: at least one CPU")]
    NoCpus,
    /// A workload specification could not be parsed.
    #[error("--workload: {0}")]
    Workload(String),
    /// No workload was given.
    #[error("--workload: none given; allowed: schbench, hackbench, nanosleep, sysbench-cpu (e.g. --workload schbench:m=2,t=4)")]
    NoWorkload,
    /// A task's affinity mask names no CPU of the machine.
    #[error("workload task {0}: cpus_allowed is empty or names CPUs the machine does not have")]
    BadAffinity(String),
    /// The run would need more memory than the budget.
    #[error("{what}: {tasks} tasks on {cpus} CPUs need about {need_mib} MiB, more than the {budget_mib} MiB budget; allowed: fewer tasks or CPUs (or raise --memory-budget)")]
    TooBig {
        /// What asked for it.
        what: String,
        /// Task count.
        tasks: u64,
        /// CPU count.
        cpus: usize,
        /// Estimated need.
        need_mib: u64,
        /// The budget.
        budget_mib: u64,
    },
    /// A scenario file could not be read or parsed.
    #[error("scenario: {0}")]
    Scenario(String),
    /// A run parameter is out of range.
    #[error("{field}: invalid value '{got}'; allowed: {allowed}")]
    Invalid {
        /// The option.
        field: String,
        /// What was given.
        got: String,
        /// What is allowed.
        allowed: String,
    },
    /// The idle states do not fit the run (a machine file's `idle_states`, or a table
    /// for another number of CPUs).
    #[error("{0}")]
    Config(String),
    /// Virtual time stopped: the world processed more events at one instant than any
    /// run that makes progress does (see `world::progress`).
    #[error("no progress: {events} events at t={at} without virtual time advancing, {queued} events queued; allowed: at most {limit} events at one instant ({per} per task and CPU, at least {min}) and {queue_limit} queued ({qtask} per task and {qcpu} per CPU within what --memory-budget leaves, at least {qmin}); {hint}",
        per = crate::world::EVENTS_PER_ENTITY, min = crate::world::MIN_EVENTS,
        qtask = crate::world::QUEUE_PER_TASK, qcpu = crate::world::QUEUE_PER_CPU,
        qmin = crate::world::MIN_QUEUE)]
    NoProgress {
        /// Events processed at the instant.
        events: u64,
        /// The instant.
        at: crate::time::Time,
        /// The most events allowed at one instant.
        limit: u64,
        /// Events queued.
        queued: u64,
        /// The most events the queue may hold.
        queue_limit: u64,
        /// What probably stopped time (the costs the run set to 0).
        hint: String,
    },
    /// The trace outgrew what the memory budget leaves for it.
    #[error("--trace: {records} events recorded by t={at} fill what the memory budget leaves for the trace; allowed: a shorter --trace-window (e.g. 1s..1.01s) or a larger --memory-budget")]
    TraceTooBig {
        /// Records kept.
        records: u64,
        /// When the budget ran out.
        at: crate::time::Time,
    },
    /// The machine's cpufreq policies cannot start under the governor.
    #[error(transparent)]
    Cpufreq(#[from] fairsim_balance::cpufreq::CpufreqError),
    /// The kernel refuses the `kernel.sched_energy_aware` write on this machine.
    #[error(transparent)]
    EnergyAware(#[from] fairsim_balance::energy::EnergyAwareRefused),
    /// The scheduler or the engine broke an invariant (a bug, reported by checks).
    #[error("invariant violated: {0}")]
    Invariant(String),
}
