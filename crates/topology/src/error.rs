//! Errors of the topology crate. Each message is one line that names the offending field
//! and says what is allowed, because the CLI prints it as is.

use std::fmt::Display;

/// Why a machine description was rejected.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum TopologyError {
    /// A field had a value outside what is allowed.
    #[error("{field}: invalid value '{got}'; allowed: {allowed}")]
    Invalid {
        /// The field, as the user wrote it (`--smp cores`, `numa-distance[0][1]`, ...).
        field: String,
        /// What was given.
        got: String,
        /// What would have been accepted.
        allowed: String,
    },
    /// Fields that are valid alone but contradict each other: the field where the
    /// contradiction shows, and what contradicts it.
    #[error("{field}: {detail}")]
    Inconsistent {
        /// The field (`nodes`, `cpu3 node`, `--cpuset`), as the user wrote it.
        field: String,
        /// What contradicts what, and what is allowed.
        detail: String,
    },
    /// Sibling masks that are not equivalence classes.
    #[error("cpu{cpu} {kind} '{mask}' differs from cpu{other}'s '{theirs}'; siblings must list the same CPUs")]
    SiblingsDiffer {
        /// The CPU.
        cpu: usize,
        /// The sibling mask (`thread_siblings`, ...).
        kind: String,
        /// Its mask.
        mask: String,
        /// A sibling.
        other: usize,
        /// The sibling's mask.
        theirs: String,
    },
    /// SMT siblings outside the CPU's package.
    #[error("cpu{cpu} thread_siblings '{smt}' are not all in its package '{package}'")]
    SmtOutsidePackage {
        /// The CPU.
        cpu: usize,
        /// Its `thread_siblings`.
        smt: String,
        /// Its package's CPUs.
        package: String,
    },
    /// A file or directory could not be read.
    #[error("{path}: {reason}")]
    Io {
        /// The path that failed.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// Building the machine's sched domains would need more memory than allowed.
    #[error(
        "--machine: the sched domains of {cpus} CPUs in {nodes} NUMA node(s) with {levels} \
         topology levels need about {need_mib} MiB, more than the {budget_mib} MiB budget; \
         allowed: fewer CPUs, nodes or distinct NUMA distances (or raise --memory-budget)"
    )]
    TooBig {
        /// CPUs of the machine.
        cpus: usize,
        /// NUMA nodes of the machine.
        nodes: usize,
        /// Levels before degenerate removal: the architecture's, NODE and one NUMA level
        /// per distinct distance.
        levels: usize,
        /// Estimated need, in MiB, rounded up.
        need_mib: u64,
        /// The budget, in MiB.
        budget_mib: u64,
    },
    /// A file could not be parsed.
    #[error("{path}: {reason}")]
    Parse {
        /// The file.
        path: String,
        /// What is wrong, with the field when known.
        reason: String,
    },
}

impl TopologyError {
    /// Builds an `Invalid` error.
    pub fn invalid(field: &str, got: impl Display, allowed: &str) -> Self {
        TopologyError::Invalid {
            field: field.to_string(),
            got: got.to_string(),
            allowed: allowed.to_string(),
        }
    }
}
