//! schedstat counters, as `struct rq` and `struct sched_domain` hold them under
//! `CONFIG_SCHEDSTATS` (kernel/sched/sched.h, include/linux/sched/topology.h), and the
//! `enum cpu_idle_type` that indexes the load-balance ones.

/// `enum cpu_idle_type` in 6.12 order: the schedstat v16 block order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CpuIdleType {
    /// `__CPU_NOT_IDLE`: the balancing CPU is busy.
    NotIdle = 0,
    /// `CPU_IDLE`: the balancing CPU is idle (periodic or nohz balance).
    Idle = 1,
    /// `CPU_NEWLY_IDLE`: the CPU is about to go idle.
    NewlyIdle = 2,
}

impl CpuIdleType {
    /// All types in enum order.
    pub const ALL: [CpuIdleType; 3] = [
        CpuIdleType::NotIdle,
        CpuIdleType::Idle,
        CpuIdleType::NewlyIdle,
    ];

    /// The kernel's name, as seed 000's listings print it.
    pub fn name(self) -> &'static str {
        match self {
            CpuIdleType::NotIdle => "CPU_NOT_IDLE",
            CpuIdleType::Idle => "CPU_IDLE",
            CpuIdleType::NewlyIdle => "CPU_NEWLY_IDLE",
        }
    }
}

/// Per-runqueue schedstat counters (`show_schedstat`'s `cpu<N>` line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RqSchedstat {
    /// `rq->yld_count`: sched_yield() calls.
    pub yld_count: u64,
    /// `rq->sched_count`: schedule() calls.
    pub sched_count: u64,
    /// `rq->sched_goidle`: schedule() calls that left the CPU idle.
    pub sched_goidle: u64,
    /// `rq->ttwu_count`: wakeups issued by this CPU.
    pub ttwu_count: u64,
    /// `rq->ttwu_local`: wakeups issued by this CPU for a task that runs on it.
    pub ttwu_local: u64,
    /// `rq->rq_cpu_time`: ns tasks ran on this CPU.
    pub rq_cpu_time: u64,
    /// `rq->rq_sched_info.run_delay`: ns tasks waited on this runqueue.
    pub run_delay: u64,
    /// `rq->rq_sched_info.pcount`: timeslices run on this CPU.
    pub pcount: u64,
    /// fairsim's own, not in `show_schedstat`: calls of the newidle balance
    /// (`sched_balance_newidle`, `idle_balance`) on this CPU, those its early exits (the
    /// `rd->overloaded` and `avg_idle` gate, a pending wakeup) ended included. The
    /// domains' `lb_count[CPU_NEWLY_IDLE]` counts only what got past them, so the time
    /// the calls took is divided by this.
    pub newidle_calls: u64,
    /// fairsim's own: newidle calls stopped at the entry gate because the root domain
    /// was not overloaded (`!this_rq->rd->overloaded`).
    pub newidle_gate_not_overloaded: u64,
    /// fairsim's own: newidle calls stopped at the entry gate because the CPU's
    /// `avg_idle` was below the first domain's `max_newidle_lb_cost` (3.9 to 4.5:
    /// `sysctl_sched_migration_cost`) while the root domain was overloaded.
    pub newidle_gate_avg_idle: u64,
}

/// Which half of the newidle balance's entry gate stopped a call, for the counters of
/// [`RqSchedstat`] that tell the two apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewidleGate {
    /// `!this_rq->rd->overloaded`.
    NotOverloaded,
    /// `this_rq->avg_idle` below the cost the gate compares it with.
    AvgIdle,
}

/// Per-domain schedstat counters (`show_schedstat`'s `domain<N>` line), indexed by
/// [`CpuIdleType`] where the kernel uses `[CPU_MAX_IDLE_TYPES]` arrays.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SdSchedstat {
    /// `lb_count`: sched_balance_rq() calls.
    pub lb_count: [u64; 3],
    /// `lb_balanced`: calls that found the domain balanced.
    pub lb_balanced: [u64; 3],
    /// `lb_failed`: calls that moved nothing.
    pub lb_failed: [u64; 3],
    /// `lb_imbalance` for `migrate_load` (v17 `lb_imbalance_load`).
    pub lb_imbalance_load: [u64; 3],
    /// `lb_imbalance` for `migrate_util`.
    pub lb_imbalance_util: [u64; 3],
    /// `lb_imbalance` for `migrate_task`.
    pub lb_imbalance_task: [u64; 3],
    /// `lb_imbalance` for `migrate_misfit`.
    pub lb_imbalance_misfit: [u64; 3],
    /// `lb_gained`: tasks pulled.
    pub lb_gained: [u64; 3],
    /// `lb_hot_gained`: cache-hot tasks pulled anyway.
    pub lb_hot_gained: [u64; 3],
    /// `lb_nobusyq`: no busiest runqueue in the busiest group.
    pub lb_nobusyq: [u64; 3],
    /// `lb_nobusyg`: no busiest group.
    pub lb_nobusyg: [u64; 3],
    /// Seed 000 patch 7/7 `lb_sg_scan`: groups scanned by update_sd_lb_stats().
    pub lb_sg_scan: [u64; 3],
    /// `alb_count`: active balances attempted.
    pub alb_count: u64,
    /// `alb_failed`.
    pub alb_failed: u64,
    /// `alb_pushed`.
    pub alb_pushed: u64,
    /// `sbe_count` (never incremented by the kernel; kept for the layout).
    pub sbe_count: u64,
    /// `sbe_balanced` (never incremented).
    pub sbe_balanced: u64,
    /// `sbe_pushed` (never incremented).
    pub sbe_pushed: u64,
    /// `sbf_count` (never incremented).
    pub sbf_count: u64,
    /// `sbf_balanced` (never incremented).
    pub sbf_balanced: u64,
    /// `sbf_pushed` (never incremented).
    pub sbf_pushed: u64,
    /// `ttwu_wake_remote`: wakeups of a task last on another CPU of this domain.
    pub ttwu_wake_remote: u64,
    /// `ttwu_move_affine`: wake_affine() pulled the wakee to the waker's CPU.
    pub ttwu_move_affine: u64,
    /// `ttwu_move_balance` (never incremented).
    pub ttwu_move_balance: u64,
}

impl SdSchedstat {
    /// The 6.12 single `lb_imbalance` counter: the sum of the four migration types.
    pub fn lb_imbalance(&self, itype: CpuIdleType) -> u64 {
        let i = itype as usize;
        self.lb_imbalance_load[i]
            + self.lb_imbalance_util[i]
            + self.lb_imbalance_task[i]
            + self.lb_imbalance_misfit[i]
    }
}
