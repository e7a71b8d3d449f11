//! Port of `kernel/sched/fair.c`'s SMP logic: runqueues, EEVDF pick, wakeup placement,
//! load balancing and schedstat counters.
//!
//! The crate owns no clock: every entry point takes "now" from the engine. [`Sched`]
//! holds the runqueues and tasks of the whole machine and exposes the fair class's entry
//! points as kernel/sched/core.c calls them.

/// The kernel release whose fair class this crate ports; older kernels' functions come
/// in as feature toggles (`LEGACY_SIS`, ...) beside it.
pub const KERNEL_VERSION: &str = "6.12.117";

pub mod cfs;
pub mod cfs_rq;
pub mod cpu_util;
pub mod cpufreq;
pub mod energy;
pub mod entities;
pub mod features;
pub mod group;
pub mod group_type;
pub mod kernel;
pub mod lb;
pub mod pelt_tp;
pub mod rq;
pub mod sched;
pub mod schedstat;
pub mod schedstat_read;
pub mod select;
pub mod stats;
pub mod task;
pub mod tunables;
pub mod uclamp;
pub mod weight;

pub use features::{
    feature_conflicts, feature_requires, Domains, Feature, FeatureDecl, FeatureError, Features,
    UnknownFeature, DECLARATIONS,
};
pub use kernel::{CfsTunables, Kernel, UnknownKernel};
pub use lb::detach::MoveTasks;
pub use lb::find::SrcSelect;
pub use lb::host::BalanceHost;
pub use lb::periodic::PeriodicBalance;
pub use lb::rq_balance::BalanceAct;
pub use lb::rq_balance::BalanceScan;
pub use lb::sd_stats::GroupStats;
pub use lb::view::{CfsSignals, LbRead, ScanCounters};
pub use rq::Rq;
pub use sched::{
    base_slice_for, wf, AffineMove, InvariantError, PickOutcome, Sched, SchedParams, SchedWork,
    WakeDecision, BOOT_CLOCK_OFFSET,
};
pub use stats::{CpuIdleType, RqSchedstat, SdSchedstat};
pub use task::{OnRq, Policy, Task, TaskId, TaskState};
pub use tunables::{Place as TunablePlace, TunableError, Tunables};
