//! Rendering a finished run: the readable summary and the `--json` document.
//!
//! Both are functions of the run's inputs and results only (no wall-clock time, no host
//! names), so the same inputs give the same bytes.

mod cgroups;
mod cpufreq;
mod cpuidle;
mod json;
mod memory;
pub mod metrics;
mod placement;
mod summary;

pub use cgroups::{cgroup_rows, CgroupRow};
pub use json::{to_json, JSON_SCHEMA_VERSION};
pub use memory::locality_totals;
pub use summary::{kernel_line, summary};

use fairsim_engine::metrics::CpuMetrics;
use fairsim_workloads::run::RunResult;

/// Machine-wide totals derived from the per-CPU metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// CPU-ns available (CPUs x elapsed).
    pub cpu_ns: u64,
    /// Task time.
    pub task_ns: u64,
    /// Kernel overhead.
    pub overhead_ns: u64,
    /// Context switches.
    pub switches: u64,
    /// Task migrations (sum of `se.nr_migrations`).
    pub migrations: u64,
    /// The tasks' user time, as time(1) splits busy time.
    pub user_ns: u64,
    /// The tasks' system time: their system calls and the kernel work done while they ran.
    pub sys_ns: u64,
    /// Kernel work done for no task (idle, or inside `schedule()` after a block).
    pub no_task_kernel_ns: u64,
}

/// Sums the metrics of `r`.
pub fn totals(r: &RunResult) -> Totals {
    let w = &r.outcome;
    let elapsed = w.window_ns();
    let mut t = Totals {
        cpu_ns: elapsed * w.cpus().len() as u64,
        ..Totals::default()
    };
    for c in &w.metrics().cpus {
        t.task_ns += c.task_ns;
        t.overhead_ns += c.overhead_total();
        t.switches += c.switches;
        t.no_task_kernel_ns += c.no_task_kernel_ns;
    }
    for m in &w.metrics().tasks {
        t.user_ns += m.user_ns;
        t.sys_ns += m.sys_ns;
    }
    t.migrations = w.sched().tasks.iter().map(|x| x.se.nr_migrations).sum();
    t
}

/// Idle time of a CPU over `elapsed` ns.
pub fn idle_ns(c: &CpuMetrics, elapsed: u64) -> u64 {
    elapsed.saturating_sub(c.task_ns + c.overhead_total())
}
