//! `struct lb_env`, `enum migration_type`, the `LBF_*` flags and `struct sd_lb_stats`.

use fairsim_topology::{CpuMask, GroupId, SdId};

use crate::group_type::SgLbStats;
use crate::stats::CpuIdleType;
use crate::task::TaskId;

/// `enum migration_type`: what the imbalance counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MigrationType {
    /// `migrate_load`: weighted load.
    #[default]
    Load,
    /// `migrate_util`: utilization.
    Util,
    /// `migrate_task`: a number of tasks.
    Task,
    /// `migrate_misfit`: one misfit task.
    Misfit,
}

/// `LBF_ALL_PINNED`: every task examined was pinned away from the destination.
pub const LBF_ALL_PINNED: u32 = 0x01;
/// `LBF_NEED_BREAK`: `loop_break` reached; drop the lock and continue.
pub const LBF_NEED_BREAK: u32 = 0x02;
/// `LBF_DST_PINNED`: a task could go to another CPU of the destination group.
pub const LBF_DST_PINNED: u32 = 0x04;
/// `LBF_SOME_PINNED`: some task was pinned.
pub const LBF_SOME_PINNED: u32 = 0x08;
/// `LBF_ACTIVE_LB`: an active balance is moving a running task's successor.
pub const LBF_ACTIVE_LB: u32 = 0x10;

/// `SCHED_NR_MIGRATE_BREAK`.
pub const SCHED_NR_MIGRATE_BREAK: u32 = 32;

/// `struct lb_env`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LbEnv {
    /// `sd`.
    pub sd: SdId,
    /// `src_cpu` (the busiest CPU once found).
    pub src_cpu: usize,
    /// `dst_cpu`.
    pub dst_cpu: usize,
    /// `dst_core_idle`: every SMT sibling of `dst_cpu` is idle.
    pub dst_core_idle: bool,
    /// `dst_grpmask`: balance mask of the destination's group.
    pub dst_grpmask: CpuMask,
    /// `new_dst_cpu`.
    pub new_dst_cpu: usize,
    /// `idle`.
    pub idle: CpuIdleType,
    /// `imbalance`, in the unit of `migration_type`.
    pub imbalance: i64,
    /// `cpus`: CPUs still eligible in this balance.
    pub cpus: CpuMask,
    /// `flags` (`LBF_*`).
    pub flags: u32,
    /// `loop`.
    pub loop_: u32,
    /// `loop_break`.
    pub loop_break: u32,
    /// `loop_max`.
    pub loop_max: u32,
    /// `migration_type`.
    pub migration_type: MigrationType,
    /// `tasks`: detached tasks waiting to be attached.
    pub tasks: Vec<TaskId>,
}

/// `struct sd_lb_stats`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SdLbStats {
    /// `busiest`.
    pub busiest: Option<GroupId>,
    /// `local`.
    pub local: Option<GroupId>,
    /// `total_load`.
    pub total_load: u64,
    /// `total_capacity`.
    pub total_capacity: u64,
    /// `avg_load`.
    pub avg_load: u64,
    /// `prefer_sibling`.
    pub prefer_sibling: bool,
    /// `busiest_stat`.
    pub busiest_stat: SgLbStats,
    /// `local_stat`.
    pub local_stat: SgLbStats,
}

impl SdLbStats {
    /// `init_sd_lb_stats`: the busiest statistics start with `idle_cpus = UINT_MAX` so
    /// that any candidate with fewer idle CPUs wins the has-spare comparison.
    pub fn new() -> SdLbStats {
        let mut s = SdLbStats::default();
        s.busiest_stat.idle_cpus = u32::MAX;
        s
    }
}

/// What the scan phase found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanOutcome {
    /// `should_we_balance` said another CPU balances this domain.
    NotThisCpu,
    /// No busiest group (`lb_nobusyg`).
    NoBusyGroup,
    /// A busiest group but no runqueue in it (`lb_nobusyq`).
    NoBusyQueue,
    /// A busiest group whose runqueue is not chosen yet. `sched_balance_find_src_rq`
    /// reads the group's runqueues after `update_sd_lb_stats` has read every group, so in
    /// virtual time it runs once the group scan's cost has elapsed, on the state as it is
    /// then ([`crate::lb::rq_balance::BalanceAct::lb_resolve_src_rq`]): a CPU that had two tasks when its group
    /// was read may have one by then, and the balance ends `lb_nobusyq`, as the kernel's
    /// does, rather than failing to detach.
    BusiestGroup(GroupId),
    /// Pull from this CPU.
    Busiest(usize),
}

/// The scan phase's result, carried to the act phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LbScan {
    /// The balancing environment.
    pub env: LbEnv,
    /// What was found.
    pub outcome: ScanOutcome,
}

/// The act phase's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LbResult {
    /// Tasks moved (`ld_moved`).
    pub moved: u32,
    /// `*continue_balancing`.
    pub continue_balancing: bool,
    /// An active balance was queued on this busiest CPU.
    pub active_balance: Option<usize>,
}
