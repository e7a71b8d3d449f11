//! Linux 3.9's load balancer (LEGACY_LB), with seed 002's comparison on top of it:
//! Alex Shi's runnable-load-average balancing (LB_RUNNABLE_AVG) and the posting's two
//! patches (LB_FORCE_BETTER_CPU, 1/2, and LB_IDLE_PULL_MULTI, 2/2).
//!
//! # Sources
//!
//! - **Linux 3.9.6**: `github:opennetworklinux/linux-3.9.6` (Makefile 3.9.6, "Black Squirrel
//!   Wakeup Call"); no 3.9.0 or 3.9-rc2 tree is in the index. Read: `kernel/sched/fair.c`
//!   (`weighted_cpuload` .. `cpu_avg_load_per_task` 2898-2950, `find_idlest_group` /
//!   `find_idlest_cpu` 3177-3250, `select_task_rq_fair` 3306-3405, `lb_env` 3795-3826,
//!   `task_hot` .. `move_tasks` 3839-4057, `sd_lb_stats` .. `find_busiest_queue`
//!   4181-4958, `need_active_balance` .. `active_load_balance_cpu_stop` 4965-5338, the
//!   nohz code and `rebalance_domains` .. `trigger_load_balance` 5340-5692);
//!   `kernel/sched/core.c` (`decay_load_missed`, `__update_cpu_load`,
//!   `update_idle_cpu_load`, `update_cpu_load_nohz`, `update_cpu_load_active` 2415-2590,
//!   `init_sched_groups_power` 5925-5941, `sd_numa_init` 6110-6153);
//!   `include/linux/topology.h` (`SD_SIBLING_INIT`, `SD_MC_INIT`, `SD_CPU_INIT`);
//!   `arch/arm/kernel/topology.c` (`cpu_scale`, ported in
//!   `fairsim_topology::source::arm_v3_9`). The seed's kernels are 3.9-rc2; the 3.9
//!   stable fixes up to 3.9.6 touch none of the functions ported here as far as the
//!   3.9.6 tree's code and the seed's patch context (hunks at the same lines) show.
//! - **Alex Shi's series** (the seed's `lkml.org/lkml/2013/1/25/767`) is not in the index;
//!   its load-balance part was merged for **Linux 3.11** (`github:PKUCloud/samsara-linux-3.11`,
//!   Makefile 3.11.0, read `weighted_cpuload`, `cpu_avg_load_per_task`, `task_h_load`
//!   and `update_cpu_load_active`). LB_RUNNABLE_AVG takes exactly those four changes onto
//!   3.9: the CPU load is `cfs_rq->runnable_load_avg` instead of `rq->load.weight`, the
//!   per-task load in `move_tasks` is `se.avg.load_avg_contrib`, and `cpu_load[]` is fed
//!   with the runnable average. The rest of the 18-patch posting (power-aware policies,
//!   `select_task_rq_fair` rework, `sched_balance_policy` sysfs) is not ported.
//! - **Seed 002's patches**: read in `../shared/seeds/002_f302c838ec9ebf43.txt`, applied
//!   at the hunks' places: 1/2 in `update_sg_lb_stats` (the `overloaded_cpu` test),
//!   `find_busiest_queue` (the `overloaded` fallback), `need_active_balance` and
//!   `nohz_kick_needed`; 2/2 in `move_tasks`, `update_sg_lb_stats` and
//!   `fix_small_imbalance`.
//!
//! # 3.9 on 6.12's machine
//!
//! - **Domains.** The topology stays 6.12's (same spans and groups; on TC2 MC is the
//!   cluster and 6.12's PKG is 3.9's CPU level). Each domain's 3.9 parameters come from the
//!   initializer 3.9 used for that kind of level ([`SdParamsV3_9::for_domain`]): an SMT
//!   level (`SD_SHARE_CPUCAPACITY`) from `SD_SIBLING_INIT`, an LLC level from `SD_MC_INIT`,
//!   other non-NUMA levels from `SD_CPU_INIT`, NUMA levels from `sd_numa_init`. They set
//!   `load_idx` per idle type, `imbalance_pct`, the intervals, `busy_factor`,
//!   `cache_nice_tries`, `smt_gain`, and 3.9's `SD_PREFER_SIBLING` (on `SD_CPU_INIT`
//!   levels only) and `SD_SERIALIZE` (NUMA).
//! - **Loads.** `weighted_cpuload` is `rq->load.weight`: the weights (at 3.9's 10-bit
//!   resolution) of the tasks queued on the CPU, current included; 6.12's delayed-dequeue
//!   entities are sleeping tasks that 3.9 had dequeued and are left out, and so are they
//!   from `nr_running`. With LB_RUNNABLE_AVG it is the runnable load average rebuilt as
//!   for Linux 4.15 ([`crate::sched::Sched::weighted_cpuload_v4_15`]): 3.11's signal
//!   (`runnable_avg_sum * weight / (runnable_avg_period + 1)` per entity) and 6.12's PELT
//!   `load_avg` differ in their accrual details but converge to the same value for a
//!   task that runs or waits all the time.
//! - **`cpu_load[]`** is kept per runqueue as 3.9 does, from the tick
//!   (`update_cpu_load_active`), the nohz idle exit (`update_cpu_load_nohz`) and the nohz
//!   idle balance (`update_idle_cpu_load`), in [`cpu_load`].
//! - **`cpu_power`** is `arch_scale_freq_power` (the machine's 3.9 `cpu_scale`,
//!   [`fairsim_topology::Machine::arch_cpu_power`]) times the SMT gain, times
//!   `scale_rt_power`, which is 1024 on a machine without RT or IRQ time, in [`power`].
//! - **What stays 6.12's**: the wakeup path (`wake_affine`, `select_idle_sibling`, or
//!   4.5's with LEGACY_SIS, which is 3.9's apart from the checks listed in
//!   [`crate::select::v4_5_sis`]), the pick (EEVDF, not 3.9's CFS), PELT, and `cfs_tasks`
//!   order (3.9 added enqueued tasks at the head and never moved a picked task to the
//!   front; under LEGACY_LB the pick does not move it either).
//! - **Not ported**: `SD_ASYM_PACKING` (`check_asym_packing` and its
//!   `need_active_balance` case; 3.9 set it only on POWER7 SMT), group scheduling
//!   (`task_h_load` is the task's own load, as without `CONFIG_FAIR_GROUP_SCHED`), CPU
//!   hotplug (`cpu_active_mask` is every CPU).
//!
//! # Shared with 4.5 to 4.16
//!
//! Linux 4.5's and 4.15's balancers ([`crate::lb::v4_5`], [`crate::lb::v4_15`]) keep
//! what 3.9 kept, so they run on this module's state ([`LegacyLbState`], its
//! `balancer` saying whose it is) and on the functions of it that they did not change:
//! the `cpu_load[]` history and its reads ([`cpu_load`], whose `weighted_cpuload` is PELT's
//! runnable load under them), `idle_cpu`, `get_sd_load_idx`, `trigger_load_balance`,
//! `nohz_balancer_kick` and the kick IPI ([`triggers`]). Their domains' parameters come
//! from 4.x's `sd_init` ([`SdParamsV3_9::for_domain`] with the era). What they changed is
//! in their own modules, and reaches them through `lb/era.rs` and the era dispatches
//! here (`update_group_power_era`, the `nohz_kick_needed` of `trigger_load_balance`,
//! 4.15's `cpu_load_update`).

pub mod balance;
pub mod cpu_load;
pub mod find_busiest;
pub mod power;
pub mod triggers;

use fairsim_topology::SdId;

use crate::lb::era::Balancer;
use crate::sched::Sched;

/// The 3.9 balancers' state and constants, defined in [`crate::lb::legacy_state`] (which
/// `LbState` names without importing this module's `Sched` methods) and named here too.
pub use crate::lb::legacy_state::{
    LegacyLbState, SdParamsV3_9, CPU_LOAD_IDX_MAX, SCHED_LOAD_SCALE,
};

impl Sched {
    /// The 3.9 (or 4.x) state; only called on paths of the balancers that keep it.
    pub(crate) fn legacy(&self) -> &LegacyLbState {
        self.lb
            .legacy
            .as_ref()
            .expect("the cpu_load[] state exists whenever its balancer runs")
    }

    /// The 3.9 (or 4.x) state, mutable.
    pub(crate) fn legacy_mut(&mut self) -> &mut LegacyLbState {
        self.lb
            .legacy
            .as_mut()
            .expect("the cpu_load[] state exists whenever its balancer runs")
    }

    /// `update_group_power` (3.9) or `update_group_capacity` (4.x) of `cpu`'s group at
    /// `sd`.
    pub fn update_group_power_era(&mut self, sd: SdId, cpu: usize) {
        match self.balancer() {
            Balancer::V4_5 | Balancer::V4_15 => self.update_group_capacity_v4_5(sd, cpu),
            Balancer::V3_9 | Balancer::V6_12 | Balancer::V6_5 => {
                self.update_group_power_v3_9(sd, cpu)
            }
        }
    }

    /// Sets up the state when LEGACY_LB is on or the kernel is 4.5 to 4.16: the era's
    /// initial `balance_interval` per domain, each group's power as `update_group_power`
    /// (3.9) or `update_group_capacity` (4.x) leaves it, and `nr_busy_cpus` at each
    /// group's weight (`init_sched_groups_power` / `init_sched_groups_capacity`).
    ///
    /// 3.9 initialises groups CPU by CPU, bottom-up, from zeroed `sched_group_power`
    /// objects, so a parent group first sums children not yet set (on TC2 the A15 cluster
    /// starts at 1441, not 2882) until its balance CPU refreshes it at its first balance.
    /// fairsim's machine has been up and balancing for a while: the powers are set level
    /// by level, so every group starts at the value of its first refresh.
    pub(crate) fn init_legacy_lb(&mut self) {
        let jiffies = self.jiffies_now();
        let st = LegacyLbState::new(&self.topo, jiffies, self.balancer());
        for (i, p) in st.sd.iter().enumerate() {
            self.lb.sd[i].balance_interval = p.balance_interval;
        }
        self.lb.legacy = Some(st);
        let per_cpu: Vec<Vec<_>> = (0..self.nr_cpus())
            .map(|cpu| self.topo.domains_of(cpu).collect())
            .collect();
        let depth = per_cpu.iter().map(Vec::len).max().unwrap_or(0);
        for level in 0..depth {
            for (cpu, domains) in per_cpu.iter().enumerate() {
                let Some(&sd) = domains.get(level) else {
                    continue;
                };
                let head = self.topo.domain(sd).groups[0];
                // Only the group's balance CPU initialises its power.
                if self.topo.group_sgc(head).balance_cpu() != cpu {
                    continue;
                }
                self.update_group_power_era(sd, cpu);
                let sgc = self.topo.group(head).sgc;
                let w = self.topo.group(head).group_weight as i32;
                self.legacy_mut().sgp_nr_busy[sgc] = w;
            }
        }
    }

    /// `rq->nr_running` as 3.9 to 4.16 count it: the queued tasks without 6.12's delayed
    /// ones (there is no RT task, so it is also `rq->cfs.h_nr_running`).
    pub fn nr_running_v3_9(&self, cpu: usize) -> u64 {
        let rq = &self.rqs[cpu];
        u64::from(rq.nr_running.saturating_sub(rq.cfs.h_nr_delayed))
    }
}
