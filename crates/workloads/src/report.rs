//! What a workload hands back after a run, the same shape for every tool so that the
//! run and the output layer need not know which tool ran.

/// What a workload prints and reports after a run.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadReport {
    /// The tool-style text.
    pub text: String,
    /// Results for `--json`.
    pub json: serde_json::Value,
    /// Whether the workload ran to completion (always true for endless workloads).
    pub finished: bool,
}
