//! Errors of race mode: a spec it cannot run, a run whose threads missed their stop, and
//! a broken invariant. Each variant's text is the one `fairsim race` has always printed,
//! so that moving race mode out of the engine changed no message.

/// Everything that can go wrong when setting up or running a race.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RaceError {
    /// The machine has no CPUs.
    #[error("machine: no CPUs; allowed: at least one CPU")]
    NoCpus,
    /// A spec's value is out of the range race mode runs.
    #[error("{field}: invalid value '{got}'; allowed: {allowed}")]
    Invalid {
        /// The option.
        field: String,
        /// What was given.
        got: String,
        /// What is allowed.
        allowed: String,
    },
    /// The watchdog fired at the start: starting the threads took longer than the run
    /// and `--watchdog`. That follows from the options (a watchdog shorter than a spin,
    /// too few threads for the host), not from a bug, so the text names the options to
    /// change; so do [`RaceError::StopTimeout`]'s.
    #[error("race watchdog: starting the threads took longer than the run and --watchdog together ({limit:.3} s): {started} of {threads} had started; allowed: a longer --watchdog, more --threads (fewer CPUs per thread) or a shorter --run",
        limit = *limit_ns as f64 / 1e9)]
    StartTimeout {
        /// The run and the watchdog together (ns).
        limit_ns: u64,
        /// Threads started by then.
        started: usize,
        /// Threads asked for.
        threads: usize,
    },
    /// The watchdog fired at the end: threads did not stop within `--watchdog` of the
    /// run's end.
    #[error("race watchdog: {n} of {threads} threads did not stop within --watchdog {watchdog:.3} s of the run's end at {end:.3} s: {list}; allowed: a longer --watchdog, more --threads (fewer CPUs per thread) or a shorter --run",
        n = stuck.len(), watchdog = *watchdog_ns as f64 / 1e9, end = *duration_ns as f64 / 1e9,
        list = stuck.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    StopTimeout {
        /// The threads that did not stop.
        stuck: Vec<StuckThread>,
        /// Threads of the run.
        threads: usize,
        /// `--watchdog` (ns).
        watchdog_ns: u64,
        /// The run's length (ns).
        duration_ns: u64,
    },
    /// Race mode broke an invariant (a bug): a driving thread panicked.
    #[error("invariant violated: race: a driving thread panicked")]
    ThreadPanicked,
    /// Race mode broke an invariant (a bug): the world was still shared after every
    /// thread finished.
    #[error("invariant violated: race: the world is still shared after every thread finished")]
    WorldShared,
}

/// A thread the watchdog found still running after the run's end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StuckThread {
    /// It finished no step.
    #[error("thread {thread} (no step finished)")]
    NoStep {
        /// The thread.
        thread: usize,
    },
    /// Its last step finished this long after the start.
    #[error("thread {thread} (last step at {at:.3} s)", at = *last_ns as f64 / 1e9)]
    LastStep {
        /// The thread.
        thread: usize,
        /// When its last step finished, after the start (ns).
        last_ns: u64,
    },
}

impl RaceError {
    /// Whether the fault is race mode's own (a broken invariant) rather than its input's,
    /// which decides the command's exit status.
    pub fn is_internal(&self) -> bool {
        matches!(self, RaceError::ThreadPanicked | RaceError::WorldShared)
    }
}

/// The error for `field` given `got` where `allowed` is what race mode accepts.
pub(crate) fn invalid(field: &str, got: impl ToString, allowed: &str) -> RaceError {
    RaceError::Invalid {
        field: field.into(),
        got: got.to_string(),
        allowed: allowed.into(),
    }
}
