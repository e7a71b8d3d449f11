//! Load balancing, ported from Linux 6.12.117's fair.c: `sched_balance_rq` (the former
//! `load_balance`) with its statistics, busiest-group and busiest-queue choice, imbalance
//! calculation and task migration; the periodic, newidle and nohz triggers; and the seed-000
//! ILB features (`ILB_SNAPSHOT`, `ILB_UTIL`, `ILB_FAST`, `lb_sg_scan`).
//!
//! The state the kernel keeps in `struct sched_domain` and `struct rq` for balancing lives
//! in [`LbState`]: per-domain runtime fields in [`SdRuntime`] (indexed like
//! `SchedDomains::domains`), per-CPU fields in [`RqLb`], and the root-domain and nohz
//! globals.

pub mod balancer;
pub mod detach;
pub mod env;
pub mod era;
pub mod find;
pub mod host;
pub mod jiffies;
pub mod legacy_state;
pub mod newidle;
pub mod nohz;
pub mod periodic;
pub mod rng;
pub mod rq_balance;
pub mod sd_stats;
pub mod v3_9;
pub mod v4_15;
pub mod v4_5;
pub mod v6_5;
pub mod view;

pub use env::{LbEnv, MigrationType};
pub use jiffies::msecs_to_jiffies;
pub use newidle::{NewidleBalance, NewidleStep};
pub use rng::PrandomState;
pub use view::{CfsSignals, LbRead, ScanCounters};

/// The runtime fields of one `struct sched_domain` that balancing reads and writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SdRuntime {
    /// `sd->balance_interval` in ms.
    pub balance_interval: u64,
    /// `sd->nr_balance_failed`.
    pub nr_balance_failed: u32,
    /// `sd->last_balance` in jiffies.
    pub last_balance: u64,
    /// `sd->max_newidle_lb_cost` in ns.
    pub max_newidle_lb_cost: u64,
    /// `sd->last_decay_max_lb_cost` in jiffies.
    pub last_decay_max_lb_cost: u64,
    /// `sd->newidle_call` (NI_RANDOM).
    pub newidle_call: u32,
    /// `sd->newidle_success` (NI_RANDOM).
    pub newidle_success: u32,
    /// `sd->newidle_ratio` (NI_RANDOM): success per 1024 calls.
    pub newidle_ratio: u32,
    /// `sd->newidle_stamp` (NI_RATE): `sched_clock()` when the ratio was last refreshed.
    pub newidle_stamp: u64,
    /// `sd->nohz_idle`: the CPU counted itself out of `nr_busy_cpus`.
    pub nohz_idle: bool,
    /// `sd->avg_scan_cost` in ns (Linux 4.15/4.16's SIS_PROP, `select/v4_15_sis.rs`): the
    /// running average of `select_idle_cpu`'s scan time on this LLC domain.
    pub avg_scan_cost: u64,
}

/// The balancing fields of one `struct rq`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RqLb {
    /// `rq->idle_balance`: the CPU was idle at its last tick.
    pub idle_balance: bool,
    /// `rq->active_balance`: an active balance is queued on this CPU.
    pub active_balance: bool,
    /// `rq->push_cpu`: where the active balance pushes to.
    pub push_cpu: usize,
    /// `rq->has_blocked_load`.
    pub has_blocked_load: bool,
    /// `rq->last_blocked_load_update_tick` in jiffies.
    pub last_blocked_load_update_tick: u64,
    /// `rq->nohz_tick_stopped`.
    pub nohz_tick_stopped: bool,
    /// `nohz_flags(cpu)`: kick flags for the idle load balancer.
    pub nohz_flags: u32,
    /// `rq->nohz_idle_balance`: flags of the nohz balance this CPU must run.
    pub nohz_idle_balance: u32,
    /// `rq->wake_stamp` in jiffies (Linux 6.5's SIS_PROP, `select/v6_5_select.rs`).
    pub wake_stamp: u64,
    /// `rq->wake_avg_idle` in ns (Linux 6.5's SIS_PROP): the idle time a wakeup scan may
    /// spend.
    pub wake_avg_idle: u64,
}

/// `struct nohz` (fair.c): the idle-CPU bookkeeping of NO_HZ_COMMON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NohzState {
    /// `nohz.idle_cpus_mask`.
    pub idle_cpus: fairsim_topology::CpuMask,
    /// `nohz.nr_cpus`.
    pub nr_cpus: u32,
    /// `nohz.has_blocked`.
    pub has_blocked: bool,
    /// `nohz.needs_update`.
    pub needs_update: bool,
    /// `nohz.next_balance` in jiffies.
    pub next_balance: u64,
    /// `nohz.next_blocked` in jiffies.
    pub next_blocked: u64,
}

/// Everything balancing keeps besides the runqueues and domains themselves.
#[derive(Debug, Clone)]
pub struct LbState {
    /// Per-domain runtime fields, indexed like `SchedDomains::domains`.
    pub sd: Vec<SdRuntime>,
    /// Per-CPU balancing fields.
    pub rq: Vec<RqLb>,
    /// `rd->overloaded` of each root domain (indexed like `SchedDomains::root_domains`,
    /// so by `CpuDomains::root_domain`): some CPU of it has more than one runnable task.
    /// With exclusive cpuset partitions each partition is a root domain of its own, and
    /// one partition's overload lets no other partition's newidle balance proceed.
    pub rd_overloaded: Vec<bool>,
    /// `rd->overutilized` of each root domain, indexed like `rd_overloaded`.
    pub rd_overutilized: Vec<bool>,
    /// `max_load_balance_interval` in jiffies: `HZ * online CPUs / 10`.
    pub max_load_balance_interval: u64,
    /// `sched_balance_running`: an `SD_SERIALIZE` balance is in progress.
    pub balance_running: bool,
    /// `nohz`.
    pub nohz: NohzState,
    /// `sched_rnd_state`: each CPU's prandom state for NI_RANDOM.
    pub rnd: Vec<PrandomState>,
    /// Linux 3.9's balancing state, present when LEGACY_LB is on.
    pub legacy: Option<v3_9::LegacyLbState>,
}

/// `NOHZ_BALANCE_KICK`.
pub const NOHZ_BALANCE_KICK: u32 = 0x1;
/// `NOHZ_STATS_KICK`.
pub const NOHZ_STATS_KICK: u32 = 0x2;
/// `NOHZ_NEWILB_KICK`.
pub const NOHZ_NEWILB_KICK: u32 = 0x4;
/// `NOHZ_NEXT_KICK`.
pub const NOHZ_NEXT_KICK: u32 = 0x8;
/// `NOHZ_KICK_MASK`.
pub const NOHZ_KICK_MASK: u32 = NOHZ_BALANCE_KICK | NOHZ_STATS_KICK | NOHZ_NEXT_KICK;

impl LbState {
    /// The state `sd_init` and `sched_init` leave, for `topo` on a machine with `hz`, built
    /// at `jiffies` and `sched_clock` (ns), and a simulation `seed` for the per-CPU random
    /// states.
    pub fn new(
        topo: &fairsim_topology::SchedDomains,
        hz: u64,
        jiffies: u64,
        sched_clock: u64,
        seed: u64,
    ) -> LbState {
        let n = topo.nr_cpus;
        let nr_rds = topo.root_domains.len().max(1);
        let sd = topo
            .domains
            .iter()
            .map(|d| SdRuntime {
                balance_interval: u64::from(d.span_weight),
                nr_balance_failed: 0,
                last_balance: jiffies,
                max_newidle_lb_cost: 0,
                last_decay_max_lb_cost: jiffies,
                // 50% success rate, as sd_init starts proportional newidle balance.
                newidle_call: 512,
                newidle_success: 256,
                newidle_ratio: 512,
                newidle_stamp: sched_clock,
                nohz_idle: false,
                avg_scan_cost: 0,
            })
            .collect();
        LbState {
            sd,
            // sched_init: wake_avg_idle starts at avg_idle's initial value.
            rq: vec![
                RqLb {
                    wake_stamp: jiffies,
                    wake_avg_idle: 2 * crate::rq::SYSCTL_SCHED_MIGRATION_COST,
                    ..RqLb::default()
                };
                n
            ],
            rd_overloaded: vec![false; nr_rds],
            rd_overutilized: vec![false; nr_rds],
            max_load_balance_interval: (hz * n as u64 / 10).max(1),
            balance_running: false,
            nohz: NohzState {
                idle_cpus: fairsim_topology::CpuMask::new(n),
                nr_cpus: 0,
                has_blocked: false,
                needs_update: false,
                next_balance: jiffies,
                next_blocked: jiffies,
            },
            rnd: (0..n)
                .map(|cpu| {
                    PrandomState::seeded(seed ^ (cpu as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                })
                .collect(),
            legacy: None,
        }
    }
}

impl LbState {
    /// `cpu_rq(cpu)->rd->overloaded` (`is_rd_overloaded`).
    pub fn is_rd_overloaded(&self, topo: &fairsim_topology::SchedDomains, cpu: usize) -> bool {
        self.rd_overloaded
            .get(topo.root_domain_of(cpu))
            .copied()
            .unwrap_or(false)
    }

    /// Mirrors `set_rd_overloaded(cpu_rq(cpu)->rd, status)`: writes the flag of `cpu`'s
    /// own root domain only.
    pub fn set_rd_overloaded(
        &mut self,
        topo: &fairsim_topology::SchedDomains,
        cpu: usize,
        status: bool,
    ) {
        if let Some(flag) = self.rd_overloaded.get_mut(topo.root_domain_of(cpu)) {
            *flag = status;
        }
    }
}
