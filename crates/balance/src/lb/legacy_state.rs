//! The state Linux 3.9's balancer and the 4.5 to 4.16 ports keep beside 6.12's
//! ([`LegacyLbState`]: `cpu_load[]`, `cpu_power`, the groups' power) and the per-domain
//! parameters of those eras' initializers ([`SdParamsV3_9`]).
//!
//! `LbState` holds this state while the balancers of [`crate::lb::v3_9`],
//! [`crate::lb::v4_5`] and [`crate::lb::v4_15`] run on it; it sits apart from their `Sched`
//! methods so that the scheduler's state can name it without importing them.

use fairsim_topology::limits::SCHED_POWER_SCALE;
use fairsim_topology::{SchedDomains, SdFlags};

use crate::lb::balancer::Balancer;

/// `CPU_LOAD_IDX_MAX` of Linux 3.9.
pub const CPU_LOAD_IDX_MAX: usize = 5;

/// `SCHED_LOAD_SCALE` of Linux 3.9 (`SCHED_LOAD_RESOLUTION` is 0 there).
pub const SCHED_LOAD_SCALE: u64 = 1024;

/// The fields of one `struct sched_domain` that the initializers of 3.9 (`SD_*_INIT`,
/// `sd_numa_init`) and of 4.5 to 4.16 (`sd_init`) set and 6.12's `sd_init` sets
/// differently or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdParamsV3_9 {
    /// `min_interval` in ms.
    pub min_interval: u64,
    /// `max_interval` in ms.
    pub max_interval: u64,
    /// `busy_factor`.
    pub busy_factor: u64,
    /// `imbalance_pct`.
    pub imbalance_pct: u64,
    /// `cache_nice_tries`.
    pub cache_nice_tries: u32,
    /// `busy_idx`.
    pub busy_idx: usize,
    /// `idle_idx`.
    pub idle_idx: usize,
    /// `newidle_idx`.
    pub newidle_idx: usize,
    /// `wake_idx`.
    pub wake_idx: usize,
    /// `forkexec_idx`.
    pub forkexec_idx: usize,
    /// `smt_gain` (SMT levels: 1178, 15%).
    pub smt_gain: u64,
    /// The initial `balance_interval` in ms.
    pub balance_interval: u64,
    /// `SD_SHARE_CPUPOWER` (`SD_SHARE_CPUCAPACITY` from 3.16).
    pub share_cpupower: bool,
    /// `SD_SHARE_PKG_RESOURCES`.
    pub share_pkg_resources: bool,
    /// `SD_PREFER_SIBLING`.
    pub prefer_sibling: bool,
    /// `SD_SERIALIZE`.
    pub serialize: bool,
    /// `SD_ASYM_CPUCAPACITY` (4.15's `update_sd_pick_busiest` reads it). 4.15 and 4.16 have
    /// the flag but no architecture of theirs sets it (the topology flags an arch may pass
    /// to `sd_init` include it; none does, and its automatic detection came in 4.20), so
    /// every domain built here has it clear; the tests set it to exercise the code.
    pub asym_cpucapacity: bool,
}

impl SdParamsV3_9 {
    /// The initializer `balancer`'s kernel ran for a domain with 6.12 `flags` spanning
    /// `span_weight` CPUs (for a NUMA level, the weight of the node mask `sd_numa_init` /
    /// `sd_init` reads, which is its span): 3.9's `SD_*_INIT` or 4.x's `sd_init`.
    pub fn for_domain(balancer: Balancer, flags: SdFlags, span_weight: u64) -> SdParamsV3_9 {
        match balancer {
            Balancer::V4_5 | Balancer::V4_15 => Self::sd_init_v4(balancer, flags, span_weight),
            Balancer::V3_9 | Balancer::V6_12 | Balancer::V6_5 => {
                Self::for_domain_v3_9(flags, span_weight)
            }
        }
    }

    /// `sd_init(tl, cpu)` of Linux 4.5 (kernel/sched/core.c) and 4.15 (topology.c): every
    /// level starts from the same values scaled by its weight (intervals, busy factor 32,
    /// `imbalance_pct` 125, no cache-nice tries, every load index 0), then an SMT level
    /// prefers siblings with a 110% margin and the SMT gain, an LLC level gets 117% with
    /// `busy_idx` 2 (and, in 4.15 only, `SD_PREFER_SIBLING`), a NUMA level is serialised
    /// with `busy_idx` 3 and `idle_idx` 2, and any other level prefers siblings with
    /// `busy_idx` 2 and `idle_idx` 1.
    fn sd_init_v4(balancer: Balancer, flags: SdFlags, w: u64) -> SdParamsV3_9 {
        let base = SdParamsV3_9 {
            min_interval: w,
            max_interval: 2 * w,
            busy_factor: 32,
            imbalance_pct: 125,
            cache_nice_tries: 0,
            busy_idx: 0,
            idle_idx: 0,
            newidle_idx: 0,
            wake_idx: 0,
            forkexec_idx: 0,
            smt_gain: 0,
            balance_interval: w,
            share_cpupower: flags.contains(SdFlags::SHARE_CPUCAPACITY),
            share_pkg_resources: flags.contains(SdFlags::SHARE_LLC),
            prefer_sibling: false,
            serialize: false,
            asym_cpucapacity: false,
        };
        if flags.contains(SdFlags::SHARE_CPUCAPACITY) {
            SdParamsV3_9 {
                prefer_sibling: true,
                imbalance_pct: 110,
                smt_gain: 1178,
                ..base
            }
        } else if flags.contains(SdFlags::SHARE_LLC) {
            SdParamsV3_9 {
                imbalance_pct: 117,
                cache_nice_tries: 1,
                busy_idx: 2,
                prefer_sibling: balancer == Balancer::V4_15,
                ..base
            }
        } else if flags.contains(SdFlags::NUMA) {
            SdParamsV3_9 {
                cache_nice_tries: 2,
                busy_idx: 3,
                idle_idx: 2,
                serialize: true,
                ..base
            }
        } else {
            SdParamsV3_9 {
                prefer_sibling: true,
                cache_nice_tries: 1,
                busy_idx: 2,
                idle_idx: 1,
                ..base
            }
        }
    }

    /// The 3.9 initializer for a domain (`SD_SIBLING_INIT`, `SD_MC_INIT`, `SD_CPU_INIT`,
    /// `sd_numa_init`).
    fn for_domain_v3_9(flags: SdFlags, span_weight: u64) -> SdParamsV3_9 {
        let base = SdParamsV3_9 {
            min_interval: 1,
            max_interval: 4,
            busy_factor: 64,
            imbalance_pct: 125,
            cache_nice_tries: 1,
            busy_idx: 2,
            idle_idx: 0,
            newidle_idx: 0,
            wake_idx: 0,
            forkexec_idx: 0,
            smt_gain: 0,
            balance_interval: 1,
            share_cpupower: false,
            share_pkg_resources: false,
            prefer_sibling: false,
            serialize: false,
            asym_cpucapacity: false,
        };
        if flags.contains(SdFlags::NUMA) {
            // sd_numa_init: intervals scale with the node mask's weight.
            SdParamsV3_9 {
                min_interval: span_weight,
                max_interval: 2 * span_weight,
                busy_factor: 32,
                cache_nice_tries: 2,
                busy_idx: 3,
                idle_idx: 2,
                balance_interval: span_weight,
                serialize: true,
                ..base
            }
        } else if flags.contains(SdFlags::SHARE_CPUCAPACITY) {
            // SD_SIBLING_INIT.
            SdParamsV3_9 {
                max_interval: 2,
                imbalance_pct: 110,
                cache_nice_tries: 0,
                busy_idx: 0,
                smt_gain: 1178,
                share_cpupower: true,
                share_pkg_resources: true,
                ..base
            }
        } else if flags.contains(SdFlags::SHARE_LLC) {
            // SD_MC_INIT.
            SdParamsV3_9 {
                share_pkg_resources: true,
                ..base
            }
        } else {
            // SD_CPU_INIT.
            SdParamsV3_9 {
                idle_idx: 1,
                prefer_sibling: true,
                ..base
            }
        }
    }
}

/// What 3.9 kept for balancing that 6.12 does not: per-domain parameters, per-runqueue
/// `cpu_power` and `cpu_load[]`, and per-group `struct sched_group_power` (indexed like
/// 6.12's shared `sched_group_capacity`, which replaced it). 4.5 to 4.16 keep the same
/// under their capacity names: `cpu_power` is `rq->cpu_capacity`, `sgp_power` is
/// `sgc->capacity`, and they add `rq->cpu_capacity_orig` and (4.15) `sgc->min_capacity`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyLbState {
    /// The balancer this state belongs to.
    pub balancer: Balancer,
    /// Per-domain 3.9 parameters, indexed like `SchedDomains::domains`.
    pub sd: Vec<SdParamsV3_9>,
    /// `rq->cpu_power` (`rq->cpu_capacity` from 3.16).
    pub cpu_power: Vec<u64>,
    /// `rq->cpu_capacity_orig` of 4.x: the CPU's capacity before the RT share.
    pub cpu_capacity_orig: Vec<u64>,
    /// `rq->cpu_load[]`.
    pub cpu_load: Vec<[u64; CPU_LOAD_IDX_MAX]>,
    /// `rq->last_load_update_tick` in jiffies.
    pub last_load_update_tick: Vec<u64>,
    /// `NOHZ_IDLE` of `nohz_flags(cpu)`: the CPU counted itself out of `nr_busy_cpus`.
    pub nohz_idle: Vec<bool>,
    /// `NOHZ_BALANCE_KICK` of `nohz_flags(cpu)`.
    pub nohz_kick: Vec<bool>,
    /// `sgp->power`, per `sched_group_capacity` id (`sgc->capacity` in 4.x).
    pub sgp_power: Vec<u64>,
    /// `sgp->power_orig` (3.9 only).
    pub sgp_power_orig: Vec<u64>,
    /// `sgc->min_capacity` (4.15 and 4.16).
    pub sgc_min_capacity: Vec<u64>,
    /// `sgp->next_update` in jiffies.
    pub sgp_next_update: Vec<u64>,
    /// `sgp->nr_busy_cpus`.
    pub sgp_nr_busy: Vec<i32>,
    /// `sd->next_decay_max_lb_cost` of 4.x in jiffies, per domain.
    pub next_decay_max_lb_cost: Vec<u64>,
}

impl LegacyLbState {
    /// The state `build_sched_domains` leaves for `balancer` and `topo`: parameters per
    /// domain, `cpu_load[]` at zero, and each group's power at its default until
    /// [`crate::Sched::init_legacy_lb`] sets it as `init_sched_groups_power` (3.9) or
    /// `init_sched_groups_capacity` (4.x) does.
    pub fn new(topo: &SchedDomains, jiffies: u64, balancer: Balancer) -> LegacyLbState {
        let n = topo.nr_cpus;
        let sd = topo
            .domains
            .iter()
            .map(|d| SdParamsV3_9::for_domain(balancer, d.flags, u64::from(d.span_weight)))
            .collect();
        let nsgc = topo.sgcs.len();
        LegacyLbState {
            balancer,
            sd,
            cpu_power: vec![SCHED_POWER_SCALE; n],
            cpu_capacity_orig: vec![SCHED_POWER_SCALE; n],
            cpu_load: vec![[0; CPU_LOAD_IDX_MAX]; n],
            last_load_update_tick: vec![jiffies; n],
            nohz_idle: vec![false; n],
            nohz_kick: vec![false; n],
            sgp_power: vec![SCHED_POWER_SCALE; nsgc],
            sgp_power_orig: vec![SCHED_POWER_SCALE; nsgc],
            sgc_min_capacity: vec![SCHED_POWER_SCALE; nsgc],
            sgp_next_update: vec![jiffies; nsgc],
            sgp_nr_busy: vec![0; nsgc],
            next_decay_max_lb_cost: vec![jiffies; topo.domains.len()],
        }
    }
}
