//! Choosing what to pull: `sched_balance_find_src_group` (was `find_busiest_group`) with
//! `calculate_imbalance` and `sibling_imbalance`, and `sched_balance_find_src_rq` (was
//! `find_busiest_queue`).

use fairsim_topology::{GroupId, SdFlags};

use crate::cpu_util::capacity_greater;
use crate::group_type::{GroupType, SgLbStats};
use crate::lb::env::{LbEnv, MigrationType, SdLbStats};
use crate::lb::sd_stats::GroupStats;
use crate::lb::view::{LbRead, ScanCounters};
use crate::sched::Sched;
use crate::select::slow_path::adjust_numa_imbalance;
use crate::stats::CpuIdleType;

/// `SCHED_CAPACITY_SCALE`.
const SCALE: u64 = 1024;

/// `lsub_positive(a, b)`: subtract without going below zero.
fn lsub_positive(a: &mut i64, b: i64) {
    *a -= (*a).min(b);
}

/// Choosing the busiest group and runqueue, for any [`LbRead`] view of the machine.
pub trait SrcSelect: GroupStats {
    /// `sibling_imbalance(env, sds, busiest, local)`: how many tasks to move so that both
    /// groups run the same number of tasks per core.
    fn sibling_imbalance(
        &self,
        env: &LbEnv,
        sds: &SdLbStats,
        busiest: &SgLbStats,
        local: &SgLbStats,
    ) -> i64 {
        if env.idle == CpuIdleType::NotIdle || busiest.sum_nr_running == 0 {
            return 0;
        }
        let (Some(bg), Some(lg)) = (sds.busiest, sds.local) else {
            return 0;
        };
        let ncores_busiest = i64::from(self.topo().group(bg).cores);
        let ncores_local = i64::from(self.topo().group(lg).cores);
        if ncores_busiest == ncores_local {
            let mut imbalance = i64::from(busiest.sum_nr_running);
            lsub_positive(&mut imbalance, i64::from(local.sum_nr_running));
            return imbalance;
        }
        // Balance the number of tasks per core, rounding to nearest.
        let mut imbalance = ncores_local * i64::from(busiest.sum_nr_running);
        lsub_positive(
            &mut imbalance,
            ncores_busiest * i64::from(local.sum_nr_running),
        );
        imbalance = 2 * imbalance + ncores_local + ncores_busiest;
        imbalance /= ncores_local + ncores_busiest;
        // Take at least one task when the local group is idle and the busiest has two.
        if imbalance <= 1 && local.sum_nr_running == 0 && busiest.sum_nr_running > 1 {
            imbalance = 2;
        }
        imbalance
    }

    /// `calculate_imbalance(env, sds)`: the migration type and amount to move.
    fn calculate_imbalance(&self, env: &mut LbEnv, sds: &mut SdLbStats) {
        let busiest = sds.busiest_stat;
        let sd_flags = self.topo().domain(env.sd).flags;
        if busiest.group_type == GroupType::MisfitTask {
            if sd_flags.contains(SdFlags::ASYM_CPUCAPACITY) {
                env.migration_type = MigrationType::Misfit;
                env.imbalance = 1;
            } else {
                // A reduced-capacity CPU's single task: move it as load.
                env.migration_type = MigrationType::Load;
                env.imbalance = busiest.group_misfit_task_load as i64;
            }
            return;
        }
        if busiest.group_type == GroupType::AsymPacking {
            env.migration_type = MigrationType::Task;
            env.imbalance = i64::from(busiest.sum_h_nr_running);
            return;
        }
        if busiest.group_type == GroupType::SmtBalance
            || busiest.group_type == GroupType::Imbalanced
        {
            env.migration_type = MigrationType::Task;
            env.imbalance = 1;
            return;
        }
        let local = sds.local_stat;
        if local.group_type == GroupType::HasSpare {
            if busiest.group_type > GroupType::FullyBusy && !sd_flags.contains(SdFlags::SHARE_LLC) {
                // Outside an LLC, fill the local group's spare capacity.
                env.migration_type = MigrationType::Util;
                env.imbalance =
                    (local.group_capacity.max(local.group_util) - local.group_util) as i64;
                if env.idle != CpuIdleType::NotIdle && env.imbalance == 0 {
                    env.migration_type = MigrationType::Task;
                    env.imbalance = 1;
                }
                return;
            }
            if busiest.group_weight == 1 || sds.prefer_sibling {
                env.migration_type = MigrationType::Task;
                env.imbalance = self.sibling_imbalance(env, sds, &busiest, &local);
            } else {
                // Even out the number of idle CPUs.
                env.migration_type = MigrationType::Task;
                env.imbalance = (i64::from(local.idle_cpus) - i64::from(busiest.idle_cpus)).max(0);
            }
            if sd_flags.contains(SdFlags::NUMA) {
                env.imbalance = adjust_numa_imbalance(
                    env.imbalance,
                    i64::from(local.sum_nr_running) + 1,
                    i64::from(self.topo().domain(env.sd).imb_numa_nr),
                );
            }
            // Number of tasks to move to restore balance.
            env.imbalance >>= 1;
            return;
        }
        if local.group_type < GroupType::Overloaded {
            // The local group will be overloaded after pulling: compare average loads.
            sds.local_stat.avg_load = local.group_load * SCALE / local.group_capacity.max(1);
            if sds.local_stat.avg_load >= busiest.avg_load {
                env.imbalance = 0;
                return;
            }
            sds.avg_load = sds.total_load * SCALE / sds.total_capacity.max(1);
            if sds.local_stat.avg_load >= sds.avg_load {
                env.imbalance = 0;
                return;
            }
        }
        // Both groups are or will be overloaded: move load towards the average.
        env.migration_type = MigrationType::Load;
        let local_avg = sds.local_stat.avg_load;
        let a = busiest
            .avg_load
            .wrapping_sub(sds.avg_load)
            .wrapping_mul(busiest.group_capacity);
        let b = sds
            .avg_load
            .wrapping_sub(local_avg)
            .wrapping_mul(local.group_capacity);
        env.imbalance = (a.min(b) / SCALE) as i64;
    }

    /// `sched_balance_find_src_group(env)`: the busiest group if it is worth pulling from,
    /// with `env.imbalance` set; `None` when the domain is balanced. Also returns the
    /// statistics for the caller's bookkeeping.
    fn sched_balance_find_src_group(
        &self,
        c: &mut ScanCounters,
        env: &mut LbEnv,
    ) -> Option<GroupId> {
        let mut sds = self.update_sd_lb_stats(c, env);
        let balanced = |env: &mut LbEnv| {
            env.imbalance = 0;
            None
        };
        let Some(busiest_g) = sds.busiest else {
            return balanced(env);
        };
        let busiest = sds.busiest_stat;
        // Misfit tasks are dealt with whatever EAS thinks; otherwise, while the root
        // domain is not overutilized and has perf domains, EAS's placement stands.
        if busiest.group_type != GroupType::MisfitTask && self.rd_eas_balanced(env.dst_cpu) {
            return balanced(env);
        }
        let force = busiest.group_type == GroupType::MisfitTask
            || busiest.group_type == GroupType::AsymPacking
            || busiest.group_type == GroupType::Imbalanced;
        if !force {
            let local = sds.local_stat;
            if local.group_type > busiest.group_type {
                return balanced(env);
            }
            if local.group_type == GroupType::Overloaded {
                if local.avg_load >= busiest.avg_load {
                    return balanced(env);
                }
                sds.avg_load = sds.total_load * SCALE / sds.total_capacity.max(1);
                if local.avg_load >= sds.avg_load {
                    return balanced(env);
                }
                let pct = u64::from(self.topo().domain(env.sd).imbalance_pct);
                if 100 * busiest.avg_load <= pct * local.avg_load {
                    return balanced(env);
                }
            }
            let sibling_force = sds.prefer_sibling
                && local.group_type == GroupType::HasSpare
                && self.sibling_imbalance(env, &sds, &busiest, &local) > 1;
            if !sibling_force && busiest.group_type != GroupType::Overloaded {
                if env.idle == CpuIdleType::NotIdle {
                    // A busy CPU only pulls from an overloaded group.
                    return balanced(env);
                }
                let smt_vs_nonsmt = sds.local.is_some_and(|l| {
                    self.topo()
                        .group(l)
                        .flags
                        .contains(SdFlags::SHARE_CPUCAPACITY)
                        != self
                            .topo()
                            .group(busiest_g)
                            .flags
                            .contains(SdFlags::SHARE_CPUCAPACITY)
                });
                let smt_force = busiest.group_type == GroupType::SmtBalance && smt_vs_nonsmt;
                if !smt_force {
                    if busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
                        // Not enough difference in idle CPUs to move anything.
                        return balanced(env);
                    }
                    if busiest.sum_h_nr_running == 1 {
                        // The busiest group runs one task: moving it would only move
                        // the imbalance.
                        return balanced(env);
                    }
                }
            }
        }
        self.calculate_imbalance(env, &mut sds);
        if env.imbalance != 0 {
            Some(busiest_g)
        } else {
            None
        }
    }

    /// `sched_balance_find_src_rq(env, group)`: the runqueue of the group to pull from,
    /// by the measure that matches the migration type.
    fn sched_balance_find_src_rq(
        &self,
        c: &mut ScanCounters,
        env: &LbEnv,
        group: GroupId,
    ) -> Option<usize> {
        let mut busiest = None;
        let mut busiest_util = 0u64;
        let mut busiest_load = 0u64;
        let mut busiest_capacity = 1u64;
        let mut busiest_nr = 0u32;
        let sd = env.sd;
        let asym_cap = self
            .topo()
            .domain(sd)
            .flags
            .contains(SdFlags::ASYM_CPUCAPACITY);
        let span = self.topo().group(group).span.and(&env.cpus);
        for i in span.iter() {
            self.count_balance_visit(c, env.dst_cpu, i);
            let nr_running = self.rq_h_nr_queued(i);
            if nr_running == 0 {
                continue;
            }
            let capacity = self.capacity_of(i);
            // Do not pick a CPU that would lead to active balancing from big to little.
            if asym_cap
                && !capacity_greater(self.capacity_of(env.dst_cpu), capacity)
                && nr_running == 1
            {
                continue;
            }
            if self.sched_asym(sd, i, env.dst_cpu) && nr_running == 1 {
                continue;
            }
            match env.migration_type {
                MigrationType::Load => {
                    let load = self.cpu_load(i);
                    if nr_running == 1
                        && load as i64 > env.imbalance
                        && !self.check_cpu_capacity(i, sd)
                    {
                        continue;
                    }
                    // max(load_i / capacity_i) by cross multiplication.
                    if load * busiest_capacity > busiest_load * capacity {
                        busiest_load = load;
                        busiest_capacity = capacity;
                        busiest = Some(i);
                    }
                }
                MigrationType::Util => {
                    let util = self.cpu_util_cfs_boost(i);
                    if nr_running <= 1 {
                        continue;
                    }
                    if busiest_util < util {
                        busiest_util = util;
                        busiest = Some(i);
                    }
                }
                MigrationType::Task => {
                    if busiest_nr < nr_running {
                        busiest_nr = nr_running;
                        busiest = Some(i);
                    }
                }
                MigrationType::Misfit => {
                    if self.misfit_task_load(i) > busiest_load {
                        busiest_load = self.misfit_task_load(i);
                        busiest = Some(i);
                    }
                }
            }
        }
        busiest
    }
}

impl<T: LbRead + ?Sized> SrcSelect for T {}

impl Sched {
    /// [`SrcSelect::sched_balance_find_src_group`] on this machine, its counters folded in.
    pub fn sched_balance_find_src_group(&mut self, env: &mut LbEnv) -> Option<GroupId> {
        let mut c = ScanCounters::default();
        let g = SrcSelect::sched_balance_find_src_group(&*self, &mut c, env);
        self.fold_scan(env.sd, env.idle, c);
        g
    }
}
