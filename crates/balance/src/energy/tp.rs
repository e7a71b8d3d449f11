//! What EAS shows a tracer: the root domain's overutilized flag as the kernel's bare
//! tracepoint `sched_overutilized_tp(rd, overutilized)` reports it, and each
//! `find_energy_efficient_cpu` decision of a wakeup.
//!
//! 6.12.117's `set_rd_overutilized` fires `sched_overutilized_tp` on every call, so a
//! root-level load balance that finds the domain still balanced reports `0` again; the
//! log keeps every call as the tracepoint would. `find_energy_efficient_cpu` has no
//! tracepoint of its own (its `compute_energy` fires `sched_compute_energy_tp` once per
//! candidate); fairsim logs one record per call with the CPU it chose, which is what
//! a reader of the trace asks first.
//!
//! The log is off unless the engine asks for it (a run with a trace), so a run without
//! a trace keeps nothing; it only observes and never changes a decision.

use crate::task::TaskId;

/// One EAS event; the engine stamps it with the time of the event that made it, as it
/// stamps `sched_migrate_task`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EasTracepoint {
    /// `set_rd_overutilized(rd, flag)` called on `cpu`'s behalf.
    Overutilized {
        /// The CPU whose runqueue (or balance) made the call.
        cpu: usize,
        /// The root domain (index into `SchedDomains::root_domains`).
        rd: usize,
        /// The value written.
        overutilized: bool,
    },
    /// A wakeup `select_task_rq_fair` handed to `find_energy_efficient_cpu`.
    Feec {
        /// The waking CPU (`smp_processor_id()`).
        cpu: usize,
        /// The task woken.
        p: TaskId,
        /// Its previous CPU.
        prev_cpu: usize,
        /// The CPU EAS chose, or `None` when it returned -1 and the wakeup went on to
        /// the usual path.
        target: Option<usize>,
    },
}
