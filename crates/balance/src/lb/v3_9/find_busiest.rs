//! Linux 3.9's `find_busiest_group` and its helpers (`update_sg_lb_stats`,
//! `update_sd_pick_busiest`, `update_sd_lb_stats`, `fix_small_imbalance`,
//! `calculate_imbalance`) and `find_busiest_queue`, with seed 002's patches under
//! LB_FORCE_BETTER_CPU (1/2) and LB_IDLE_PULL_MULTI (2/2).
//!
//! Loads are unsigned longs in 3.9; the subtractions that can wrap there
//! (`max_load - avg_load` is guarded by its caller, `avg_load - this_load` is not) wrap
//! here the same way.

use fairsim_topology::limits::SCHED_POWER_SCALE;
use fairsim_topology::{GroupId, SdId};

use crate::features::Feature;
use crate::lb::env::LbEnv;
use crate::lb::v3_9::power::div_round_closest;
use crate::lb::v3_9::SCHED_LOAD_SCALE;
use crate::sched::Sched;
use crate::stats::CpuIdleType;

/// `struct sg_lb_stats` of 3.9.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SgLbStatsV3_9 {
    /// `avg_load`: the group's load per 1024 of power.
    pub avg_load: u64,
    /// `group_load`: the biased loads of its CPUs.
    pub group_load: u64,
    /// `sum_nr_running`.
    pub sum_nr_running: u64,
    /// `sum_weighted_load`: the unbiased loads.
    pub sum_weighted_load: u64,
    /// `group_capacity`: the group's power as a number of tasks.
    pub group_capacity: u64,
    /// `idle_cpus`.
    pub idle_cpus: u64,
    /// `group_weight`.
    pub group_weight: u64,
    /// `group_imb`.
    pub group_imb: bool,
    /// `group_has_capacity`.
    pub group_has_capacity: bool,
}

/// `struct sd_lb_stats` of 3.9.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SdLbStatsV3_9 {
    /// `busiest`.
    pub busiest: Option<GroupId>,
    /// `this`: the local group.
    pub this: Option<GroupId>,
    /// `total_load`.
    pub total_load: u64,
    /// `total_pwr`.
    pub total_pwr: u64,
    /// `avg_load`.
    pub avg_load: u64,
    /// `this_load`.
    pub this_load: u64,
    /// `this_load_per_task` (the local group's weighted load until divided).
    pub this_load_per_task: u64,
    /// `this_nr_running`.
    pub this_nr_running: u64,
    /// `this_has_capacity`.
    pub this_has_capacity: bool,
    /// `this_idle_cpus`.
    pub this_idle_cpus: u64,
    /// `busiest_idle_cpus`.
    pub busiest_idle_cpus: u64,
    /// `max_load`: the busiest group's `avg_load`.
    pub max_load: u64,
    /// `busiest_load_per_task` (the busiest group's weighted load until divided).
    pub busiest_load_per_task: u64,
    /// `busiest_nr_running`.
    pub busiest_nr_running: u64,
    /// `busiest_group_capacity`.
    pub busiest_group_capacity: u64,
    /// `busiest_has_capacity`.
    pub busiest_has_capacity: bool,
    /// `busiest_group_weight`.
    pub busiest_group_weight: u64,
    /// `group_imb`: the busiest group is internally imbalanced.
    pub group_imb: bool,
}

/// What `find_busiest_group` of 3.9 concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusiestGroupV3_9 {
    /// `*balance = 0`: another CPU of the local group balances this domain.
    NotThisCpu,
    /// No imbalance worth moving (`out_balanced`).
    Balanced,
    /// This group, with `env.imbalance` set.
    Busiest(GroupId),
}

/// Whether `idle` is `CPU_IDLE` or `CPU_NEWLY_IDLE`, the test both of seed 002's
/// LB_IDLE_PULL_MULTI hunks make.
fn idle_or_newly(idle: CpuIdleType) -> bool {
    matches!(idle, CpuIdleType::Idle | CpuIdleType::NewlyIdle)
}

impl Sched {
    /// `idle_cpu(cpu)` of 3.9: the idle task runs, nothing is queued (6.12's delayed
    /// entities are not), and no remote wakeup is pending.
    pub fn idle_cpu_v3_9(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        rq.curr.is_none() && self.nr_running_v3_9(cpu) == 0 && rq.ttwu_pending == 0
    }

    /// `get_sd_load_idx(sd, idle)`.
    pub fn get_sd_load_idx_v3_9(&self, sd: SdId, idle: CpuIdleType) -> usize {
        let p = &self.legacy().sd[sd];
        match idle {
            CpuIdleType::NotIdle => p.busy_idx,
            CpuIdleType::NewlyIdle => p.newidle_idx,
            CpuIdleType::Idle => p.idle_idx,
        }
    }

    /// `update_sg_lb_stats(env, group, load_idx, local_group, balance, sgs)`. Returns
    /// `None` when the local group's balance CPU is another CPU (`*balance = 0`).
    pub fn update_sg_lb_stats_v3_9(
        &mut self,
        env: &LbEnv,
        group: GroupId,
        load_idx: usize,
        local_group: bool,
    ) -> Option<SgLbStatsV3_9> {
        self.count_group_visit();
        let force_better = self.fair.features.has(Feature::LB_FORCE_BETTER_CPU);
        let mut sgs = SgLbStatsV3_9::default();
        let sgc = self.topo.group_sgc(group);
        let mut balance_cpu = if local_group {
            Some(sgc.balance_cpu())
        } else {
            None
        };
        let balance_mask = sgc.balance_mask.clone();
        let mut first_idle_cpu = false;
        let mut max_cpu_load = 0u64;
        let mut min_cpu_load = u64::MAX;
        let mut max_nr_running = 0u64;
        let mut min_nr_running = u64::MAX;
        let mut overloaded_cpu = false;
        let sd_imbalance_pct = self.legacy().sd[env.sd].imbalance_pct;
        let dst_power = self.power_of_v3_9(env.dst_cpu);
        let cpus: Vec<usize> = self.topo.group(group).span.and(&env.cpus).iter().collect();
        for i in cpus {
            let nr_running = self.nr_running_v3_9(i);
            let load;
            if local_group {
                // Bias balancing toward the CPUs of our domain.
                if self.idle_cpu_v3_9(i) && !first_idle_cpu && balance_mask.test(i) {
                    first_idle_cpu = true;
                    balance_cpu = Some(i);
                }
                load = self.target_load_v3_9(i, load_idx);
            } else {
                load = self.source_load_v3_9(i, load_idx);
                max_cpu_load = max_cpu_load.max(load);
                min_cpu_load = min_cpu_load.min(load);
                max_nr_running = max_nr_running.max(nr_running);
                min_nr_running = min_nr_running.min(nr_running);
                // Seed 002 1/2: a CPU whose load exceeds its power while the destination
                // is more powerful by the imbalance margin.
                if force_better {
                    let power = self.power_of_v3_9(i);
                    if load > power
                        && power * sd_imbalance_pct < dst_power * 100
                        && load > self.target_load_v3_9(env.dst_cpu, load_idx)
                    {
                        overloaded_cpu = true;
                    }
                }
            }
            sgs.group_load += load;
            sgs.sum_nr_running += nr_running;
            sgs.sum_weighted_load += self.weighted_cpuload_v3_9(i);
            if self.idle_cpu_v3_9(i) {
                sgs.idle_cpus += 1;
            }
        }

        // The first idle CPU, or else the group's balance CPU, balances at this level
        // and above; every CPU may do a newly idle balance.
        if local_group {
            if env.idle != CpuIdleType::NewlyIdle {
                if balance_cpu != Some(env.dst_cpu) {
                    return None;
                }
                self.update_group_power_v3_9(env.sd, env.dst_cpu);
            } else {
                let sgc = self.topo.group(group).sgc;
                if self.jiffies_now() >= self.legacy().sgp_next_update[sgc] {
                    self.update_group_power_v3_9(env.sd, env.dst_cpu);
                }
            }
        }

        let power = self.group_power_v3_9(group);
        sgs.avg_load = (sgs.group_load * SCHED_POWER_SCALE) / power;

        // The group is unbalanced when its CPUs' loads differ by a task's weight and their
        // task counts by more than one.
        let avg_load_per_task = sgs
            .sum_weighted_load
            .checked_div(sgs.sum_nr_running)
            .unwrap_or(0);
        if max_cpu_load.wrapping_sub(min_cpu_load) >= avg_load_per_task
            && max_nr_running.wrapping_sub(min_nr_running) > 1
        {
            sgs.group_imb = true;
        }
        // Seed 002 1/2: a CPU's load exceeds its capacity; look for a better CPU.
        if overloaded_cpu {
            sgs.group_imb = true;
        }
        // Seed 002 2/2: when idle, pull from a group with more tasks than CPUs.
        if self.fair.features.has(Feature::LB_IDLE_PULL_MULTI)
            && idle_or_newly(env.idle)
            && u64::from(self.topo.group(group).group_weight) < sgs.sum_nr_running
        {
            sgs.group_imb = true;
        }

        sgs.group_capacity = div_round_closest(power, SCHED_POWER_SCALE);
        if sgs.group_capacity == 0 {
            sgs.group_capacity = self.fix_small_capacity_v3_9(env.sd, group);
        }
        sgs.group_weight = u64::from(self.topo.group(group).group_weight);
        if sgs.group_capacity > sgs.sum_nr_running {
            sgs.group_has_capacity = true;
        }
        Some(sgs)
    }

    /// `update_sd_pick_busiest(env, sds, sg, sgs)`: a group is busier when its average
    /// load is higher and it is over capacity or imbalanced (`SD_ASYM_PACKING` is not
    /// modelled).
    fn update_sd_pick_busiest_v3_9(&self, sds: &SdLbStatsV3_9, sgs: &SgLbStatsV3_9) -> bool {
        if sgs.avg_load <= sds.max_load {
            return false;
        }
        if sgs.sum_nr_running > sgs.group_capacity {
            return true;
        }
        sgs.group_imb
    }

    /// `update_sd_lb_stats(env, balance, sds)`: every group's statistics, the local one
    /// and the busiest. `None` when this CPU is not the one to balance.
    pub fn update_sd_lb_stats_v3_9(&mut self, env: &LbEnv) -> Option<SdLbStatsV3_9> {
        let mut sds = SdLbStatsV3_9::default();
        let d = self.topo.domain(env.sd);
        let prefer_sibling = d.child.is_some_and(|c| self.legacy().sd[c].prefer_sibling);
        let groups = d.groups.to_vec();
        let load_idx = self.get_sd_load_idx_v3_9(env.sd, env.idle);
        for sg in groups {
            let local_group = self.topo.group(sg).span.test(env.dst_cpu);
            let mut sgs = self.update_sg_lb_stats_v3_9(env, sg, load_idx, local_group)?;
            sds.total_load += sgs.group_load;
            sds.total_pwr += self.group_power_v3_9(sg);
            // With a child that prefers siblings, a remote group's capacity drops to one
            // task so its excess moves to a local group that has room for it.
            if prefer_sibling && !local_group && sds.this_has_capacity {
                sgs.group_capacity = sgs.group_capacity.min(1);
            }
            if local_group {
                sds.this_load = sgs.avg_load;
                sds.this = Some(sg);
                sds.this_nr_running = sgs.sum_nr_running;
                sds.this_load_per_task = sgs.sum_weighted_load;
                sds.this_has_capacity = sgs.group_has_capacity;
                sds.this_idle_cpus = sgs.idle_cpus;
            } else if self.update_sd_pick_busiest_v3_9(&sds, &sgs) {
                sds.max_load = sgs.avg_load;
                sds.busiest = Some(sg);
                sds.busiest_nr_running = sgs.sum_nr_running;
                sds.busiest_idle_cpus = sgs.idle_cpus;
                sds.busiest_group_capacity = sgs.group_capacity;
                sds.busiest_load_per_task = sgs.sum_weighted_load;
                sds.busiest_has_capacity = sgs.group_has_capacity;
                sds.busiest_group_weight = sgs.group_weight;
                sds.group_imb = sgs.group_imb;
            }
        }
        Some(sds)
    }

    /// `find_busiest_group(env, balance)`: the busiest group when there is an imbalance
    /// worth moving, with `env.imbalance` set.
    pub fn find_busiest_group_v3_9(&mut self, env: &mut LbEnv) -> BusiestGroupV3_9 {
        let Some(mut sds) = self.update_sd_lb_stats_v3_9(env) else {
            env.imbalance = 0;
            return BusiestGroupV3_9::NotThisCpu;
        };
        let busiest = match sds.busiest {
            Some(b) if sds.busiest_nr_running != 0 => b,
            _ => {
                env.imbalance = 0;
                return BusiestGroupV3_9::Balanced;
            }
        };
        sds.avg_load = (SCHED_POWER_SCALE * sds.total_load) / sds.total_pwr.max(1);
        let balanced = if sds.group_imb {
            // An internally imbalanced group: the checks below assume equal CPUs.
            false
        } else if env.idle == CpuIdleType::NewlyIdle
            && sds.this_has_capacity
            && !sds.busiest_has_capacity
        {
            // SD_BALANCE_NEWIDLE trumps SMP nice when underutilized.
            false
        } else if sds.this_load >= sds.max_load || sds.this_load >= sds.avg_load {
            true
        } else if env.idle == CpuIdleType::Idle {
            // An idle CPU pulls only when the busiest group has more tasks than CPUs or
            // clearly fewer idle CPUs than ours.
            sds.this_idle_cpus <= sds.busiest_idle_cpus + 1
                && sds.busiest_nr_running <= sds.busiest_group_weight
        } else {
            let pct = self.legacy().sd[env.sd].imbalance_pct;
            100 * sds.max_load <= pct * sds.this_load
        };
        if balanced {
            env.imbalance = 0;
            return BusiestGroupV3_9::Balanced;
        }
        self.calculate_imbalance_v3_9(env, &mut sds, busiest);
        BusiestGroupV3_9::Busiest(busiest)
    }

    /// `calculate_imbalance(env, sds)`: the weighted load to move so that neither group
    /// crosses the domain's average, nor the busiest falls below its capacity.
    pub fn calculate_imbalance_v3_9(
        &mut self,
        env: &mut LbEnv,
        sds: &mut SdLbStatsV3_9,
        busiest: GroupId,
    ) {
        let busiest_power = self.group_power_v3_9(busiest);
        let this_power = sds
            .this
            .map_or(SCHED_POWER_SCALE, |g| self.group_power_v3_9(g));
        calculate_imbalance_arith(
            env,
            sds,
            busiest_power,
            this_power,
            self.cpu_avg_load_per_task_v3_9(env.dst_cpu),
            self.fair.features.has(Feature::LB_IDLE_PULL_MULTI),
        );
    }

    /// `find_busiest_queue(env, group)`: the CPU of the group with the highest load per
    /// power, skipping a CPU whose single task is heavier than the imbalance; with
    /// LB_FORCE_BETTER_CPU, a lone task heavier than its CPU's power is the fallback.
    pub fn find_busiest_queue_v3_9(&self, env: &LbEnv, group: GroupId) -> Option<usize> {
        let force_better = self.fair.features.has(Feature::LB_FORCE_BETTER_CPU);
        let mut busiest = None;
        let mut overloaded = None;
        let mut max_load = 0u64;
        let sd_imbalance_pct = self.legacy().sd[env.sd].imbalance_pct;
        let dst_power = self.power_of_v3_9(env.dst_cpu);
        for i in self.topo.group(group).span.iter() {
            let power = self.power_of_v3_9(i);
            let mut capacity = div_round_closest(power, SCHED_POWER_SCALE);
            if capacity == 0 {
                capacity = self.fix_small_capacity_v3_9(env.sd, group);
            }
            if !env.cpus.test(i) {
                continue;
            }
            let nr = self.nr_running_v3_9(i);
            let mut wl = self.weighted_cpuload_v3_9(i);
            // Seed 002 1/2: remember a CPU whose lone task needs more than its power
            // when the destination has more.
            if force_better && nr == 1 {
                let runnable = self.weighted_cpuload_v4_15(i);
                if runnable > power
                    && runnable > self.weighted_cpuload_v4_15(env.dst_cpu)
                    && power * sd_imbalance_pct < dst_power * 100
                {
                    overloaded = Some(i);
                }
            }
            // Compare with the imbalance unscaled by power.
            if capacity != 0 && nr == 1 && wl as i64 > env.imbalance {
                continue;
            }
            // Compare CPUs scaled by power, so load moves off a less capable CPU.
            wl = (wl * SCHED_POWER_SCALE) / power;
            if wl > max_load {
                max_load = wl;
                busiest = Some(i);
            }
        }
        busiest.or(overloaded)
    }
}

/// The arithmetic of `calculate_imbalance` and `fix_small_imbalance` over the domain's
/// statistics, the two groups' powers, the destination's `cpu_avg_load_per_task` and
/// whether seed 002's 2/2 is on; sets `env.imbalance`.
pub fn calculate_imbalance_arith(
    env: &mut LbEnv,
    sds: &mut SdLbStatsV3_9,
    busiest_power: u64,
    this_power: u64,
    dst_avg_load_per_task: u64,
    idle_pull_multi: bool,
) {
    sds.busiest_load_per_task /= sds.busiest_nr_running.max(1);
    if sds.group_imb {
        sds.busiest_load_per_task = sds.busiest_load_per_task.min(sds.avg_load);
    }
    // With SMP nice balancing the busiest group's load can be below the average; then
    // only fix_small_imbalance may find something to move.
    let small = if sds.max_load < sds.avg_load {
        env.imbalance = 0;
        true
    } else {
        let mut load_above_capacity = u64::MAX;
        if !sds.group_imb {
            // Do not pull so many tasks that the busiest group would go idle.
            load_above_capacity = sds
                .busiest_nr_running
                .wrapping_sub(sds.busiest_group_capacity);
            load_above_capacity =
                load_above_capacity.wrapping_mul(SCHED_LOAD_SCALE * SCHED_POWER_SCALE);
            load_above_capacity /= busiest_power;
        }
        let max_pull = (sds.max_load - sds.avg_load).min(load_above_capacity);
        let imb = (max_pull.wrapping_mul(busiest_power)).min(
            sds.avg_load
                .wrapping_sub(sds.this_load)
                .wrapping_mul(this_power),
        ) / SCHED_POWER_SCALE;
        env.imbalance = imb as i64;
        // Below one task's load nothing may move: see whether moving one task helps.
        imb < sds.busiest_load_per_task
    };
    if small {
        fix_small_imbalance_arith(
            env,
            sds,
            busiest_power,
            this_power,
            dst_avg_load_per_task,
            idle_pull_multi,
        );
    }
}

/// `fix_small_imbalance(env, sds)`: move one task when the gap is at least one task's
/// load (two when ours are lighter), or when moving it raises the total throughput
/// (`pwr_move > pwr_now`); with seed 002's 2/2, also when an idle CPU balances and the
/// busiest group runs more tasks than it has CPUs.
pub fn fix_small_imbalance_arith(
    env: &mut LbEnv,
    sds: &mut SdLbStatsV3_9,
    busiest_power: u64,
    this_power: u64,
    dst_avg_load_per_task: u64,
    idle_pull_multi: bool,
) {
    let mut imbn = 2u64;
    match sds.this_load_per_task.checked_div(sds.this_nr_running) {
        Some(per_task) => {
            sds.this_load_per_task = per_task;
            if sds.busiest_load_per_task > per_task {
                imbn = 1;
            }
        }
        None => sds.this_load_per_task = dst_avg_load_per_task,
    }
    let scaled_busy_load_per_task = sds.busiest_load_per_task * SCHED_POWER_SCALE / busiest_power;
    if sds
        .max_load
        .wrapping_sub(sds.this_load)
        .wrapping_add(scaled_busy_load_per_task)
        >= scaled_busy_load_per_task * imbn
    {
        env.imbalance = sds.busiest_load_per_task as i64;
        return;
    }
    // Not enough imbalance to move a task, but moving one may use more CPU power.
    let mut pwr_now = 0u64;
    pwr_now += busiest_power * sds.busiest_load_per_task.min(sds.max_load);
    pwr_now += this_power * sds.this_load_per_task.min(sds.this_load);
    pwr_now /= SCHED_POWER_SCALE;

    let mut pwr_move = 0u64;
    // The load the busiest group would lose.
    let tmp = (sds.busiest_load_per_task * SCHED_POWER_SCALE) / busiest_power;
    if sds.max_load > tmp {
        pwr_move += busiest_power * sds.busiest_load_per_task.min(sds.max_load - tmp);
    }
    // The load the local group would gain.
    let tmp = if sds.max_load * busiest_power < sds.busiest_load_per_task * SCHED_POWER_SCALE {
        (sds.max_load * busiest_power) / this_power
    } else {
        (sds.busiest_load_per_task * SCHED_POWER_SCALE) / this_power
    };
    pwr_move += this_power * sds.this_load_per_task.min(sds.this_load + tmp);
    pwr_move /= SCHED_POWER_SCALE;

    let idle_multi = idle_pull_multi
        && sds.busiest_group_weight < sds.busiest_nr_running
        && idle_or_newly(env.idle);
    if pwr_move > pwr_now || idle_multi {
        env.imbalance = sds.busiest_load_per_task as i64;
    }
}
