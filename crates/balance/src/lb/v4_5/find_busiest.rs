//! Linux 4.5's `find_busiest_group` and its helpers (`update_sg_lb_stats`,
//! `group_has_capacity`, `group_is_overloaded`, `group_classify`,
//! `update_sd_pick_busiest`, `update_sd_lb_stats`, `fix_small_imbalance`,
//! `calculate_imbalance`), `find_busiest_queue` and `should_we_balance`, from
//! kernel/sched/fair.c of `arthur-lucena/linux-4.5-hw-so` @ f21e75bf. 4.15 and 4.16 run
//! the same functions with the differences [`crate::lb::v4_15`] lists, each at its place
//! below under `Balancer::V4_15`.
//!
//! Differences from 3.9 ([`crate::lb::v3_9::find_busiest`]) that decide outcomes:
//! - a group is classified (`enum group_type`: other < imbalanced < overloaded) and the
//!   busiest is the highest class first, then the highest `avg_load`; "overloaded" is
//!   more tasks than CPUs with the group's utilization above its capacity by
//!   `imbalance_pct` (`group_is_overloaded`), "imbalanced" is the parent-level flag a
//!   balance left when affinity kept it from moving load (`sgc->imbalance`), replacing
//!   3.9's min/max spread test;
//! - capacity is the group's capacity, not a count of tasks: `group_has_capacity` (fewer
//!   tasks than CPUs, or utilization below capacity by `imbalance_pct`) replaces 3.9's
//!   `DIV_ROUND_CLOSEST(power, 1024) > nr_running`;
//! - the balance CPU is chosen by `should_we_balance` before the statistics, and the local
//!   group's capacity is refreshed before its statistics are read;
//! - `calculate_imbalance` limits the pull by the load above capacity only when both
//!   groups are overloaded, and `find_busiest_queue` compares loads scaled by each CPU's
//!   capacity by cross-multiplication, skipping a lone task heavier than the imbalance
//!   unless its CPU's capacity is reduced (`check_cpu_capacity`).
//!
//! Not ported: `SD_ASYM_PACKING` (`check_asym_packing` and its branch of
//! `update_sd_pick_busiest`; set on POWER7 SMT, and on x86 ITMT from 4.10) and NUMA
//! balancing's `fbq_type` (without `CONFIG_NUMA_BALANCING` every runqueue qualifies).
//! Loads are unsigned longs; the subtractions the kernel guards are guarded here too.

use std::sync::atomic::Ordering;

use fairsim_topology::limits::SCHED_POWER_SCALE;
use fairsim_topology::GroupId;

use crate::lb::env::LbEnv;
use crate::lb::era::Balancer;
use crate::lb::v3_9::SCHED_LOAD_SCALE;
use crate::sched::Sched;
use crate::stats::CpuIdleType;

/// `enum group_type` of 4.5 to 4.16, in its order (a higher type is busier).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum GroupTypeV4_5 {
    /// `group_other`.
    #[default]
    Other,
    /// `group_imbalanced`.
    Imbalanced,
    /// `group_overloaded`.
    Overloaded,
}

/// `struct sg_lb_stats` of 4.5 (without the NUMA-balancing counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SgLbStatsV4_5 {
    /// `avg_load`: the group's load per 1024 of capacity.
    pub avg_load: u64,
    /// `group_load`: the biased loads of its CPUs.
    pub group_load: u64,
    /// `sum_weighted_load`: the unbiased loads.
    pub sum_weighted_load: u64,
    /// `load_per_task`.
    pub load_per_task: u64,
    /// `group_capacity`: `sgc->capacity`.
    pub group_capacity: u64,
    /// `group_util`: the sum of `cpu_util`.
    pub group_util: u64,
    /// `sum_nr_running`: the CFS tasks (`cfs.h_nr_running`).
    pub sum_nr_running: u64,
    /// `idle_cpus`.
    pub idle_cpus: u64,
    /// `group_weight`.
    pub group_weight: u64,
    /// `group_type`.
    pub group_type: GroupTypeV4_5,
    /// `group_no_capacity`.
    pub group_no_capacity: bool,
}

/// `struct sd_lb_stats` of 4.5.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SdLbStatsV4_5 {
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
    /// `busiest_stat`.
    pub busiest_stat: SgLbStatsV4_5,
    /// `local_stat`.
    pub local_stat: SgLbStatsV4_5,
}

/// `group_has_capacity(env, sgs)`: fewer tasks than CPUs, or utilization below the
/// capacity by the domain's `imbalance_pct`.
pub fn group_has_capacity(imbalance_pct: u64, sgs: &SgLbStatsV4_5) -> bool {
    if sgs.sum_nr_running < sgs.group_weight {
        return true;
    }
    sgs.group_capacity * 100 > sgs.group_util * imbalance_pct
}

/// `group_is_overloaded(env, sgs)`: more tasks than CPUs and utilization above the
/// capacity by the domain's `imbalance_pct`.
pub fn group_is_overloaded(imbalance_pct: u64, sgs: &SgLbStatsV4_5) -> bool {
    if sgs.sum_nr_running <= sgs.group_weight {
        return false;
    }
    sgs.group_capacity * 100 < sgs.group_util * imbalance_pct
}

/// `group_classify(group, sgs)`: overloaded, else imbalanced if the group's
/// `sgc->imbalance` is set, else other.
pub fn group_classify(sg_imbalanced: bool, sgs: &SgLbStatsV4_5) -> GroupTypeV4_5 {
    if sgs.group_no_capacity {
        return GroupTypeV4_5::Overloaded;
    }
    if sg_imbalanced {
        return GroupTypeV4_5::Imbalanced;
    }
    GroupTypeV4_5::Other
}

/// What `find_busiest_group` of 4.5 concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusiestGroupV4_5 {
    /// No imbalance worth moving (`out_balanced`).
    Balanced,
    /// This group, with `env.imbalance` set.
    Busiest(GroupId),
}

impl Sched {
    /// `sg_imbalanced(group)`: `group->sgc->imbalance`.
    fn sg_imbalanced_v4_5(&self, g: GroupId) -> bool {
        self.topo.group_sgc(g).imbalance.load(Ordering::Relaxed) != 0
    }

    /// `should_we_balance(env)` of 4.5: any CPU may balance newly idle; otherwise the
    /// first idle CPU of the local group's balance mask, or the group's balance CPU, does
    /// it for this level and those above. 4.15 first checks that the balancing CPU is
    /// one of `env->cpus` (hotplug), which it always is here.
    pub fn should_we_balance_v4_5(&self, env: &LbEnv) -> bool {
        if env.idle == CpuIdleType::NewlyIdle {
            return true;
        }
        let head = self.topo.domain(env.sd).groups[0];
        let sgc = self.topo.group_sgc(head);
        let first_idle = sgc
            .balance_mask
            .and(&env.cpus)
            .iter()
            .find(|&c| self.idle_cpu_v3_9(c));
        first_idle.unwrap_or_else(|| sgc.balance_cpu()) == env.dst_cpu
    }

    /// `update_sg_lb_stats(env, group, load_idx, local_group, sgs, overload)`: the
    /// group's loads (biased up for the local group, down for the others), utilization,
    /// tasks and idle CPUs, then its capacity, `avg_load` and class. Sets `*overload`
    /// when a CPU runs more than one task.
    pub fn update_sg_lb_stats_v4_5(
        &self,
        env: &LbEnv,
        group: GroupId,
        load_idx: usize,
        local_group: bool,
        overload: &mut bool,
    ) -> SgLbStatsV4_5 {
        self.count_group_visit();
        let mut sgs = SgLbStatsV4_5::default();
        let cpus: Vec<usize> = self.topo.group(group).span.and(&env.cpus).iter().collect();
        for i in cpus {
            let load = if local_group {
                self.target_load_v3_9(i, load_idx)
            } else {
                self.source_load_v3_9(i, load_idx)
            };
            sgs.group_load += load;
            sgs.group_util += self.cpu_util_v4_5(i);
            let nr_running = self.nr_running_v3_9(i);
            sgs.sum_nr_running += nr_running;
            if nr_running > 1 {
                *overload = true;
            }
            sgs.sum_weighted_load += self.weighted_cpuload_v3_9(i);
            if nr_running == 0 && self.idle_cpu_v3_9(i) {
                sgs.idle_cpus += 1;
            }
        }
        // Adjust by the relative capacity of the group.
        sgs.group_capacity = self.group_capacity_v4_5(group);
        sgs.avg_load = (sgs.group_load * SCHED_POWER_SCALE) / sgs.group_capacity;
        if let Some(per_task) = sgs.sum_weighted_load.checked_div(sgs.sum_nr_running) {
            sgs.load_per_task = per_task;
        }
        sgs.group_weight = u64::from(self.topo.group(group).group_weight);
        let pct = self.legacy().sd[env.sd].imbalance_pct;
        sgs.group_no_capacity = group_is_overloaded(pct, &sgs);
        sgs.group_type = group_classify(self.sg_imbalanced_v4_5(group), &sgs);
        sgs
    }

    /// `update_sd_pick_busiest(env, sds, sg, sgs)` of 4.5: the higher class wins, then,
    /// within a class, the higher `avg_load` (`SD_ASYM_PACKING` is not modelled). 4.15
    /// first keeps a group of at most one task per CPU whose CPUs are bigger than the
    /// local group's on an `SD_ASYM_CPUCAPACITY` domain
    /// ([`Sched::asym_cap_keeps_group_v4_15`]).
    pub fn update_sd_pick_busiest_v4_5(
        &self,
        env: &LbEnv,
        sds: &SdLbStatsV4_5,
        sg: GroupId,
        sgs: &SgLbStatsV4_5,
    ) -> bool {
        let busiest = &sds.busiest_stat;
        if sgs.group_type > busiest.group_type {
            return true;
        }
        if sgs.group_type < busiest.group_type {
            return false;
        }
        if sgs.avg_load <= busiest.avg_load {
            return false;
        }
        match self.balancer() {
            Balancer::V4_15 => !self.asym_cap_keeps_group_v4_15(env, sds, sg, sgs),
            _ => true,
        }
    }

    /// `update_sd_lb_stats(env, sds)`: every group's statistics (the local group's
    /// capacity refreshed first, at least once per balance interval for a newly idle
    /// balance), the busiest group, the totals, and at the top level the root domain's
    /// overload flag.
    pub fn update_sd_lb_stats_v4_5(&mut self, env: &LbEnv) -> SdLbStatsV4_5 {
        let mut sds = SdLbStatsV4_5::default();
        let d = self.topo.domain(env.sd);
        let prefer_sibling = d.child.is_some_and(|c| self.legacy().sd[c].prefer_sibling);
        let groups = d.groups.to_vec();
        let top = d.parent.is_none();
        let load_idx = self.get_sd_load_idx_v3_9(env.sd, env.idle);
        let pct = self.legacy().sd[env.sd].imbalance_pct;
        let mut overload = false;
        for sg in groups {
            let local_group = self.topo.group(sg).span.test(env.dst_cpu);
            if local_group {
                sds.local = Some(sg);
                let sgc = self.topo.group(sg).sgc;
                if env.idle != CpuIdleType::NewlyIdle
                    || self.jiffies_now() >= self.legacy().sgp_next_update[sgc]
                {
                    self.update_group_capacity_v4_5(env.sd, env.dst_cpu);
                }
            }
            let mut sgs =
                self.update_sg_lb_stats_v4_5(env, sg, load_idx, local_group, &mut overload);
            if local_group {
                sds.local_stat = sgs;
            } else {
                // With a child domain that prefers siblings, a remote group running more
                // tasks than it should (4.5: more than one; 4.15: two more than ours)
                // counts as overloaded, so that its excess moves to a local group with
                // room for it.
                let more = match self.balancer() {
                    Balancer::V4_15 => sgs.sum_nr_running > sds.local_stat.sum_nr_running + 1,
                    _ => sgs.sum_nr_running > 1,
                };
                if prefer_sibling
                    && sds.local.is_some()
                    && group_has_capacity(pct, &sds.local_stat)
                    && more
                {
                    sgs.group_no_capacity = true;
                    sgs.group_type = group_classify(self.sg_imbalanced_v4_5(sg), &sgs);
                }
                if self.update_sd_pick_busiest_v4_5(env, &sds, sg, &sgs) {
                    sds.busiest = Some(sg);
                    sds.busiest_stat = sgs;
                }
            }
            sds.total_load += sgs.group_load;
            sds.total_capacity += sgs.group_capacity;
        }
        if top {
            // The root domain's overload indicator, which the newly idle balance reads.
            self.lb.set_rd_overloaded(&self.topo, env.dst_cpu, overload);
        }
        sds
    }

    /// `find_busiest_group(env)` of 4.5: the busiest group when there is an imbalance
    /// worth moving, with `env.imbalance` set.
    pub fn find_busiest_group_v4_5(&mut self, env: &mut LbEnv) -> BusiestGroupV4_5 {
        let mut sds = self.update_sd_lb_stats_v4_5(env);
        let local = sds.local_stat;
        let busiest_stat = sds.busiest_stat;
        let busiest = match sds.busiest {
            Some(b) if busiest_stat.sum_nr_running != 0 => b,
            _ => {
                env.imbalance = 0;
                return BusiestGroupV4_5::Balanced;
            }
        };
        sds.avg_load = (SCHED_POWER_SCALE * sds.total_load) / sds.total_capacity;
        let pct = self.legacy().sd[env.sd].imbalance_pct;
        // SD_BALANCE_NEWIDLE trumps SMP nice when underutilized (4.15: any idle balance,
        // so that nice levels or asymmetric capacities do not leave the CPU idle).
        let idle_forces = match self.balancer() {
            Balancer::V4_15 => env.idle != CpuIdleType::NotIdle,
            _ => env.idle == CpuIdleType::NewlyIdle,
        };
        let balanced = if busiest_stat.group_type == GroupTypeV4_5::Imbalanced {
            // The averages assume equal groups, which affinity makes untrue.
            false
        } else if idle_forces && group_has_capacity(pct, &local) && busiest_stat.group_no_capacity {
            false
        } else if local.avg_load >= busiest_stat.avg_load || local.avg_load >= sds.avg_load {
            // The local group is busier than the busiest, or above the domain's average.
            true
        } else if env.idle == CpuIdleType::Idle {
            // An idle CPU pulls from a group that is not overloaded only when it has at
            // least two idle CPUs fewer than ours.
            busiest_stat.group_type != GroupTypeV4_5::Overloaded
                && local.idle_cpus <= busiest_stat.idle_cpus + 1
        } else {
            100 * busiest_stat.avg_load <= pct * local.avg_load
        };
        if balanced {
            env.imbalance = 0;
            return BusiestGroupV4_5::Balanced;
        }
        let v4_15 = self.balancer() == Balancer::V4_15;
        let dst_load_per_task = self.cpu_avg_load_per_task_v3_9(env.dst_cpu);
        calculate_imbalance(env, &mut sds, dst_load_per_task, v4_15);
        BusiestGroupV4_5::Busiest(busiest)
    }

    /// `find_busiest_queue(env, group)` of 4.5: the CPU of the group with the highest
    /// load per capacity (cross-multiplied), skipping a CPU whose single task is heavier
    /// than the imbalance unless its capacity is reduced.
    pub fn find_busiest_queue_v4_5(&self, env: &LbEnv, group: GroupId) -> Option<usize> {
        let mut busiest = None;
        let mut busiest_load = 0u64;
        let mut busiest_capacity = 1u64;
        for i in self.topo.group(group).span.and(&env.cpus).iter() {
            let capacity = self.capacity_of_v4_5(i);
            let wl = self.weighted_cpuload_v3_9(i);
            // Compare with the imbalance unscaled by capacity.
            if self.nr_running_v3_9(i) == 1
                && wl as i64 > env.imbalance
                && !self.check_cpu_capacity_v4_5(i, env.sd)
            {
                continue;
            }
            // max(wl_i / capacity_i), by wl_i * capacity_j > wl_j * capacity_i.
            if wl * busiest_capacity > busiest_load * capacity {
                busiest_load = wl;
                busiest_capacity = capacity;
                busiest = Some(i);
            }
        }
        busiest
    }
}

/// `calculate_imbalance(env, sds)` of 4.5 (`v4_15`: 4.15's): the weighted load to move so
/// that neither group crosses the domain's average, limited, when both groups are
/// overloaded, to the busiest group's load above its capacity; below one task's load,
/// [`fix_small_imbalance`] decides. `dst_load_per_task` is
/// `cpu_avg_load_per_task(env->dst_cpu)`.
pub fn calculate_imbalance(
    env: &mut LbEnv,
    sds: &mut SdLbStatsV4_5,
    dst_load_per_task: u64,
    v4_15: bool,
) {
    if sds.busiest_stat.group_type == GroupTypeV4_5::Imbalanced {
        // The group-wide averages cannot ensure equilibrium: use the domain's.
        sds.busiest_stat.load_per_task = sds.busiest_stat.load_per_task.min(sds.avg_load);
    }
    let busiest = sds.busiest_stat;
    let local = sds.local_stat;
    // With SMP nice balancing or unequal capacities the busiest group can be below the
    // average, or the local above it.
    if busiest.avg_load <= sds.avg_load || local.avg_load >= sds.avg_load {
        env.imbalance = 0;
        fix_small_imbalance(env, sds, dst_load_per_task);
        return;
    }
    let mut load_above_capacity = u64::MAX;
    // If there are no idle CPUs, avoid creating some.
    if busiest.group_type == GroupTypeV4_5::Overloaded
        && local.group_type == GroupTypeV4_5::Overloaded
    {
        if v4_15 {
            // 4.15: the excess tasks' capacity, as a load (scale_load_down(NICE_0_LOAD)
            // is 1024 on every architecture).
            load_above_capacity = busiest.sum_nr_running * SCHED_POWER_SCALE;
            if load_above_capacity > busiest.group_capacity {
                load_above_capacity -= busiest.group_capacity;
                load_above_capacity *= SCHED_LOAD_SCALE;
                load_above_capacity /= busiest.group_capacity;
            } else {
                load_above_capacity = u64::MAX;
            }
        } else {
            // 4.5 subtracts a capacity from a count of tasks' loads, unscaled.
            load_above_capacity = busiest.sum_nr_running * SCHED_LOAD_SCALE;
            if load_above_capacity > busiest.group_capacity {
                load_above_capacity -= busiest.group_capacity;
            } else {
                load_above_capacity = u64::MAX;
            }
        }
    }
    // Do not push ourselves above the average, nor the busiest below it.
    let max_pull = (busiest.avg_load - sds.avg_load).min(load_above_capacity);
    let imbalance = (max_pull.wrapping_mul(busiest.group_capacity))
        .min((sds.avg_load - local.avg_load) * local.group_capacity)
        / SCHED_POWER_SCALE;
    env.imbalance = imbalance as i64;
    // Below one task's load nothing may move: see whether moving one task helps.
    if imbalance < busiest.load_per_task {
        fix_small_imbalance(env, sds, dst_load_per_task);
    }
}

/// `fix_small_imbalance(env, sds)` of 4.5 (unchanged to 4.16): move one task when the
/// gap is at least one task's load (two when ours are lighter), or when moving it raises
/// the capacity used (`capa_move > capa_now`).
pub fn fix_small_imbalance(env: &mut LbEnv, sds: &mut SdLbStatsV4_5, dst_load_per_task: u64) {
    let mut imbn = 2u64;
    if sds.local_stat.sum_nr_running == 0 {
        sds.local_stat.load_per_task = dst_load_per_task;
    } else if sds.busiest_stat.load_per_task > sds.local_stat.load_per_task {
        imbn = 1;
    }
    let local = sds.local_stat;
    let busiest = sds.busiest_stat;
    let scaled_busy_load_per_task =
        (busiest.load_per_task * SCHED_POWER_SCALE) / busiest.group_capacity;
    if busiest.avg_load + scaled_busy_load_per_task
        >= local.avg_load + scaled_busy_load_per_task * imbn
    {
        env.imbalance = busiest.load_per_task as i64;
        return;
    }
    // Not enough imbalance to move a task, but moving one may use more capacity.
    let mut capa_now = 0u64;
    capa_now += busiest.group_capacity * busiest.load_per_task.min(busiest.avg_load);
    capa_now += local.group_capacity * local.load_per_task.min(local.avg_load);
    capa_now /= SCHED_POWER_SCALE;

    let mut capa_move = 0u64;
    // The load we would subtract.
    if busiest.avg_load > scaled_busy_load_per_task {
        capa_move += busiest.group_capacity
            * busiest
                .load_per_task
                .min(busiest.avg_load - scaled_busy_load_per_task);
    }
    // The load we would add.
    let tmp =
        if busiest.avg_load * busiest.group_capacity < busiest.load_per_task * SCHED_POWER_SCALE {
            (busiest.avg_load * busiest.group_capacity) / local.group_capacity
        } else {
            (busiest.load_per_task * SCHED_POWER_SCALE) / local.group_capacity
        };
    capa_move += local.group_capacity * local.load_per_task.min(local.avg_load + tmp);
    capa_move /= SCHED_POWER_SCALE;

    // Move if we gain throughput.
    if capa_move > capa_now {
        env.imbalance = busiest.load_per_task as i64;
    }
}
