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
    /// The watchdog fired: threads did not start or stop in time. That follows from the
    /// options (a watchdog shorter than a spin, too few threads for the host), not from a
    /// bug, so the text names the options to change.
    #[error("race watchdog: {0}; allowed: a longer --watchdog, more --threads (fewer CPUs per thread) or a shorter --run")]
    Watchdog(String),
    /// Race mode broke an invariant (a bug): a driving thread panicked, or the world was
    /// still shared after every thread finished.
    #[error("invariant violated: {0}")]
    Invariant(String),
}

impl RaceError {
    /// Whether the fault is race mode's own (a broken invariant) rather than its input's,
    /// which decides the command's exit status.
    pub fn is_internal(&self) -> bool {
        matches!(self, RaceError::Invariant(_))
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
