//! Linux 6.5.0's group statistics and busiest-group choice: `update_sg_lb_stats`,
//! `update_sd_pick_busiest`, `update_sd_lb_stats` (with seed 000's ILB hunks as posted on
//! 6.5-rc2), `find_busiest_group`, `calculate_imbalance` and `should_we_balance`; items
//! 13 to 17 of the list in [`super`].

use std::sync::atomic::Ordering;

use fairsim_topology::{GroupId, SdFlags};

use crate::cpu_util::capacity_greater;
use crate::features::Feature;
use crate::group_type::{group_classify, sg_imbalanced, GroupType, SgLbStats};
use crate::lb::env::{LbEnv, LbScan, MigrationType, ScanOutcome, SdLbStats};
use crate::lb::sd_stats::{can_pull_busiest, GroupStats};
use crate::lb::view::{LbRead, ScanCounters};
use crate::select::idle_scan::update_idle_cpu_scan;
use crate::select::slow_path::adjust_numa_imbalance;
use crate::stats::CpuIdleType;

/// `SCHED_CAPACITY_SCALE`.
const SCALE: u64 = 1024;

/// `lsub_positive(a, b)`: subtract without going below zero.
fn lsub_positive(a: &mut i64, b: i64) {
    *a -= (*a).min(b);
}

/// Linux 6.5's statistics and busiest-group choice, for any [`LbRead`] view of the
/// machine (the engine's `Sched`; race mode's hosts could run them too).
pub trait StatsV6_5: GroupStats {
    /// `sched_asym(env, sds, sgs, group)` of 6.5: the whole local core must be idle where
    /// that applies, an SMT group counts only with one busy thread, and the destination
    /// must have a higher priority than the group's preferred CPU. The caller has tested
    /// `SD_ASYM_PACKING`.
    fn sched_asym_v6_5(&self, env: &LbEnv, sgs: &SgLbStats, g: GroupId) -> bool {
        if !self.sched_use_asym_prio(env.sd, env.dst_cpu) {
            return false;
        }
        let grp = self.topo().group(g);
        if grp.flags.contains(SdFlags::SHARE_CPUCAPACITY) && sgs.group_weight - sgs.idle_cpus != 1 {
            return false;
        }
        match grp.asym_prefer_cpu {
            Some(pref) => self.sched_asym_prefer(env.dst_cpu, pref),
            None => false,
        }
    }

    /// `update_sg_lb_stats(env, sds, group, sgs, &sg_status)` of Linux 6.5: 6.12's sums
    /// (a misfit task sets `SG_OVERLOAD` as 6.12's sets `sg_overloaded`), but there is no
    /// `smt_balance()`, so `group_smt_balance` stays 0 and `group_classify` never answers
    /// `group_smt_balance`. Returns the statistics and `SG_OVERLOAD`.
    fn update_sg_lb_stats_v6_5(
        &self,
        c: &mut ScanCounters,
        env: &LbEnv,
        local: Option<GroupId>,
        g: GroupId,
    ) -> (SgLbStats, bool) {
        let mut sgs = SgLbStats::default();
        let mut overload = false;
        let local_group = local == Some(g);
        let sd = env.sd;
        let sd_flags = self.topo().domain(sd).flags;
        let group = self.topo().group(g);
        for i in group.span.iter_and_in(&env.cpus, group.span_words) {
            self.count_balance_visit(c, env.dst_cpu, i);
            let load = self.cpu_load(i);
            sgs.group_load += load;
            sgs.group_util += self.cpu_util_cfs(i);
            sgs.group_runnable += self.cpu_runnable(i);
            sgs.sum_h_nr_running += self.rq_h_nr_queued(i);
            let nr_running = self.rq_nr_running(i);
            sgs.sum_nr_running += nr_running;
            if nr_running > 1 {
                overload = true;
            }
            // 6.5's cpu_overutilized has no sched_energy_enabled() test, but the flag it
            // raises is read only with EAS on, so 6.12's (false without EAS) is the same.
            if self.cpu_overutilized(i) {
                c.sg_overutilized = true;
            }
            if nr_running == 0 && self.idle_cpu(i) {
                sgs.idle_cpus += 1;
                // Idle CPUs cannot have a misfit task.
                continue;
            }
            if local_group {
                continue;
            }
            if sd_flags.contains(SdFlags::ASYM_CPUCAPACITY) {
                if sgs.group_misfit_task_load < self.misfit_task_load(i) {
                    sgs.group_misfit_task_load = self.misfit_task_load(i);
                    overload = true;
                }
            } else if env.idle != CpuIdleType::NotIdle
                && self.sched_reduced_capacity(i, sd)
                && sgs.group_misfit_task_load < load
            {
                // A task running on a CPU whose capacity others took.
                sgs.group_misfit_task_load = load;
            }
        }
        c.groups_visited += 1;
        sgs.group_capacity = self.topo().group_sgc(g).capacity();
        sgs.group_weight = self.topo().group(g).group_weight;
        if !local_group
            && sd_flags.contains(SdFlags::ASYM_PACKING)
            && env.idle != CpuIdleType::NotIdle
            && sgs.sum_h_nr_running != 0
            && self.sched_asym_v6_5(env, &sgs, g)
        {
            sgs.group_asym_packing = 1;
        }
        let pct = self.topo().domain(sd).imbalance_pct;
        sgs.group_type = group_classify(pct, sg_imbalanced(self.topo(), g), &sgs);
        if sgs.group_type == GroupType::Overloaded {
            sgs.avg_load = sgs.group_load * SCALE / sgs.group_capacity.max(1);
        }
        (sgs, overload)
    }

    /// `update_sd_pick_busiest(env, sds, sg, sgs)` of Linux 6.5: the same-type tie-breaks
    /// without 6.12's `group_smt_balance` and SMT-versus-non-SMT rules, and the test that
    /// keeps a little CPU from pulling off bigger ones made last, only for a group that
    /// did not already win on its type.
    fn update_sd_pick_busiest_v6_5(
        &self,
        env: &LbEnv,
        sds: &SdLbStats,
        sg: GroupId,
        sgs: &SgLbStats,
    ) -> bool {
        let busiest = &sds.busiest_stat;
        if sgs.sum_h_nr_running == 0 {
            return false;
        }
        let asym_cap = self
            .topo()
            .domain(env.sd)
            .flags
            .contains(SdFlags::ASYM_CPUCAPACITY);
        let (_, min_cap, max_cap) = self.topo().group_sgc(sg).capacities();
        let dst_cap = self.capacity_of(env.dst_cpu);
        // A misfit task is only worth pulling to a bigger CPU whose group has room.
        if asym_cap
            && sgs.group_type == GroupType::MisfitTask
            && (!capacity_greater(dst_cap, max_cap)
                || sds.local_stat.group_type != GroupType::HasSpare)
        {
            return false;
        }
        if sgs.group_type > busiest.group_type {
            return true;
        }
        if sgs.group_type < busiest.group_type {
            return false;
        }
        let wins = match sgs.group_type {
            GroupType::Overloaded => sgs.avg_load > busiest.avg_load,
            // The first imbalanced group stays: there is no way to rank them.
            GroupType::Imbalanced => return false,
            // Move work off the group whose preferred CPU has the lower priority.
            GroupType::AsymPacking => match (
                self.topo().group(sg).asym_prefer_cpu,
                sds.busiest
                    .and_then(|b| self.topo().group(b).asym_prefer_cpu),
            ) {
                (Some(a), Some(b)) => !self.sched_asym_prefer(a, b),
                _ => false,
            },
            GroupType::MisfitTask => sgs.group_misfit_task_load >= busiest.group_misfit_task_load,
            GroupType::FullyBusy => {
                // avg_load is not computed for fully busy groups, so the loads tie at 0:
                // an SMT busiest group stays (SMT groups need more help), any other
                // gives way to the later group.
                let busiest_smt = sds.busiest.is_some_and(|b| {
                    self.topo()
                        .group(b)
                        .flags
                        .contains(SdFlags::SHARE_CPUCAPACITY)
                });
                !(sgs.avg_load < busiest.avg_load
                    || (sgs.avg_load == busiest.avg_load && busiest_smt))
            }
            GroupType::HasSpare => {
                // Fewer idle CPUs, or as many and more tasks.
                !(sgs.idle_cpus > busiest.idle_cpus
                    || (sgs.idle_cpus == busiest.idle_cpus
                        && sgs.sum_nr_running <= busiest.sum_nr_running))
            }
            // 6.5 never classifies a group so (item 14 of the module list).
            GroupType::SmtBalance => return false,
        };
        if !wins {
            return false;
        }
        // One task per CPU at most, on bigger CPUs: moving them to a smaller one would
        // cost throughput.
        !(asym_cap && sgs.group_type <= GroupType::FullyBusy && capacity_greater(min_cap, dst_cap))
    }

    /// `update_sd_lb_stats(env, sds)` of Linux 6.5 with seed 000's patches: each group's
    /// statistics from the local one on, the busiest kept; a newly idle CPU with the
    /// snapshot of the last periodic balance may stop early under ILB_UTIL (scan depth)
    /// or ILB_FAST (a group it can pull from) and borrow that snapshot's totals; then
    /// `prefer_sibling`, the root domain's overload flag, SIS_UTIL's scan depth, and the
    /// periodic balance's ILB bookkeeping. Patch 7/7's `lb_sg_scan` counts every
    /// non-local group read.
    fn update_sd_lb_stats_v6_5(&self, c: &mut ScanCounters, env: &LbEnv) -> SdLbStats {
        let t0 = self.scan_clock();
        let mut sds = SdLbStats::new();
        let sd = env.sd;
        let feat = self.features();
        let shared = self.topo().domain(sd).shared;
        // Only a newly idle CPU loads the snapshot, and only once one was saved.
        let mut ilb_can_load = env.idle == CpuIdleType::NewlyIdle
            && shared
                .is_some_and(|s| self.topo().shared[s].total_capacity.load(Ordering::Relaxed) != 0);
        let mut nr_sg_scan: i32 = match shared {
            Some(s) if feat.has(Feature::ILB_UTIL) && ilb_can_load => {
                self.topo().shared[s].nr_sg_scan.load(Ordering::Relaxed)
            }
            _ => 0,
        };
        let mut sum_util = 0u64;
        let mut overload = false;
        let mut load_snapshot = false;
        c.sg_overutilized = false;
        for &g in &self.topo().domain(sd).groups {
            let local_group = self.topo().group(g).span.test(env.dst_cpu);
            if local_group {
                sds.local = Some(g);
                let next_update = self.topo().group_sgc(g).next_update.load(Ordering::Relaxed);
                if env.idle != CpuIdleType::NewlyIdle || self.jiffies() >= next_update {
                    self.update_group_capacity(sd, env.dst_cpu);
                }
            }
            let (sgs, ovl) = self.update_sg_lb_stats_v6_5(c, env, sds.local, g);
            overload |= ovl;
            if local_group {
                sds.local_stat = sgs;
            } else {
                c.sg_scan += 1;
                if self.update_sd_pick_busiest_v6_5(env, &sds, g, &sgs) {
                    sds.busiest = Some(g);
                    sds.busiest_stat = sgs;
                    if feat.has(Feature::ILB_FAST)
                        && ilb_can_load
                        && can_pull_busiest(&sds.local_stat, &sgs)
                    {
                        load_snapshot = true;
                        break;
                    }
                }
                if feat.has(Feature::ILB_UTIL) && ilb_can_load {
                    nr_sg_scan -= 1;
                    if nr_sg_scan <= 0 {
                        load_snapshot = true;
                        break;
                    }
                }
            }
            sds.total_load += sgs.group_load;
            sds.total_capacity += sgs.group_capacity;
            sum_util += sgs.group_util;
        }
        // A full walk does not borrow the snapshot.
        ilb_can_load &= load_snapshot;
        if ilb_can_load {
            if let Some(s) = shared {
                sds.total_load = self.topo().shared[s].total_load.load(Ordering::Relaxed);
                sds.total_capacity = self.topo().shared[s].total_capacity.load(Ordering::Relaxed);
            }
        }
        // The flags of a group are those of its child domain.
        if let Some(b) = sds.busiest {
            sds.prefer_sibling = self.topo().group(b).flags.contains(SdFlags::PREFER_SIBLING);
        }
        // At the root the statistics set or clear the overutilized state (the tipping
        // point); below it they only set it.
        if self.topo().domain(sd).parent.is_none() {
            c.rd_overloaded = Some(overload);
            c.rd_overutilized = Some(c.sg_overutilized);
        } else if c.sg_overutilized {
            c.rd_overutilized = Some(true);
        }
        // update_idle_cpu_scan's own early returns: newly idle balances, SIS_UTIL off, a
        // domain other than the LLC.
        if env.idle != CpuIdleType::NewlyIdle
            && feat.has(Feature::SIS_UTIL)
            && self.topo().domain(sd).span_weight as usize
                == self.topo().cpus[env.dst_cpu].sd_llc_size
        {
            update_idle_cpu_scan(self, sd, sum_util);
        }
        if env.idle != CpuIdleType::NewlyIdle {
            if let Some(s) = shared {
                self.update_ilb_group_scan(sd, s, sum_util);
                self.ilb_save_stats(s, &sds);
            }
        }
        c.sd_lb_stats_calls += 1;
        c.sd_lb_stats_ns += self.scan_clock().saturating_sub(t0);
        sds
    }

    /// `calculate_imbalance(env, sds)` of Linux 6.5: 6.12's branches without
    /// `group_smt_balance`, and with `prefer_sibling` (or single-CPU groups) asking for
    /// the plain difference in running tasks, whoever balances.
    fn calculate_imbalance_v6_5(&self, env: &mut LbEnv, sds: &mut SdLbStats) {
        let busiest = sds.busiest_stat;
        let local = sds.local_stat;
        let d = self.topo().domain(env.sd);
        if busiest.group_type == GroupType::MisfitTask {
            if d.flags.contains(SdFlags::ASYM_CPUCAPACITY) {
                // Set imbalance to allow the misfit task to be balanced.
                env.migration_type = MigrationType::Misfit;
                env.imbalance = 1;
            } else {
                // A task on a CPU with reduced capacity: move it as load.
                env.migration_type = MigrationType::Load;
                env.imbalance = busiest.group_misfit_task_load as i64;
            }
            return;
        }
        if busiest.group_type == GroupType::AsymPacking {
            // Move every task to the preferred CPUs.
            env.migration_type = MigrationType::Task;
            env.imbalance = i64::from(busiest.sum_h_nr_running);
            return;
        }
        if busiest.group_type == GroupType::Imbalanced {
            // Group-wide averages do not hold with affinity: move one task at a time.
            env.migration_type = MigrationType::Task;
            env.imbalance = 1;
            return;
        }
        if local.group_type == GroupType::HasSpare {
            if busiest.group_type > GroupType::FullyBusy && !d.flags.contains(SdFlags::SHARE_LLC) {
                // Fill the local group's spare capacity from an overloaded group.
                env.migration_type = MigrationType::Util;
                env.imbalance =
                    (local.group_capacity.max(local.group_util) - local.group_util) as i64;
                // A waiting task is worth pulling even when the spare capacity is nil.
                if env.idle != CpuIdleType::NotIdle && env.imbalance == 0 {
                    env.migration_type = MigrationType::Task;
                    env.imbalance = 1;
                }
                return;
            }
            env.migration_type = MigrationType::Task;
            if busiest.group_weight == 1 || sds.prefer_sibling {
                // Spread the running tasks evenly over the groups.
                let mut nr_diff = i64::from(busiest.sum_nr_running);
                lsub_positive(&mut nr_diff, i64::from(local.sum_nr_running));
                env.imbalance = nr_diff;
            } else {
                // Without overload, even out the number of idle CPUs.
                env.imbalance = (i64::from(local.idle_cpus) - i64::from(busiest.idle_cpus)).max(0);
            }
            if d.flags.contains(SdFlags::NUMA) {
                env.imbalance = adjust_numa_imbalance(
                    env.imbalance,
                    i64::from(local.sum_nr_running) + 1,
                    i64::from(d.imb_numa_nr),
                );
            }
            // The number of tasks to move to restore balance.
            env.imbalance >>= 1;
            return;
        }
        if local.group_type < GroupType::Overloaded {
            // The local group will be overloaded: the average loads decide.
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
        // Bring both groups towards the domain's average load, no further.
        env.migration_type = MigrationType::Load;
        let a = busiest
            .avg_load
            .wrapping_sub(sds.avg_load)
            .wrapping_mul(busiest.group_capacity);
        let b = sds
            .avg_load
            .wrapping_sub(sds.local_stat.avg_load)
            .wrapping_mul(local.group_capacity);
        env.imbalance = (a.min(b) / SCALE) as i64;
    }

    /// `find_busiest_group(env)` of Linux 6.5: the busiest group if pulling from it helps,
    /// with `env.imbalance` set; `None` when the domain is balanced.
    fn find_busiest_group_v6_5(&self, c: &mut ScanCounters, env: &mut LbEnv) -> Option<GroupId> {
        let mut sds = self.update_sd_lb_stats_v6_5(c, env);
        let Some(busiest_g) = sds.busiest else {
            env.imbalance = 0;
            return None;
        };
        let busiest = sds.busiest_stat;
        // Misfit tasks go regardless of load; otherwise, with EAS on, a root domain
        // with perf domains that is not overutilized keeps EAS's placement. Asym
        // packing and imbalanced groups bypass the load checks.
        if busiest.group_type != GroupType::MisfitTask && self.rd_eas_balanced(env.dst_cpu) {
            env.imbalance = 0;
            return None;
        }
        let force = matches!(
            busiest.group_type,
            GroupType::MisfitTask | GroupType::AsymPacking | GroupType::Imbalanced
        );
        if !force && !self.worth_pulling_v6_5(env, &mut sds) {
            env.imbalance = 0;
            return None;
        }
        self.calculate_imbalance_v6_5(env, &mut sds);
        (env.imbalance != 0).then_some(busiest_g)
    }

    /// The load checks of 6.5's `find_busiest_group` between its forced cases and
    /// `force_balance`: false for `out_balanced`.
    fn worth_pulling_v6_5(&self, env: &LbEnv, sds: &mut SdLbStats) -> bool {
        let busiest = sds.busiest_stat;
        let local = sds.local_stat;
        // The local group is busier than the busiest one.
        if local.group_type > busiest.group_type {
            return false;
        }
        if local.group_type == GroupType::Overloaded {
            // Overloaded groups compare average loads, with imbalance_pct's margin.
            if local.avg_load >= busiest.avg_load {
                return false;
            }
            sds.avg_load = sds.total_load * SCALE / sds.total_capacity.max(1);
            if local.avg_load >= sds.avg_load {
                return false;
            }
            let pct = u64::from(self.topo().domain(env.sd).imbalance_pct);
            if 100 * busiest.avg_load <= pct * local.avg_load {
                return false;
            }
        }
        // Move excess tasks to a sibling domain of the busiest group's child.
        if sds.prefer_sibling
            && local.group_type == GroupType::HasSpare
            && busiest.sum_nr_running > local.sum_nr_running + 1
        {
            return true;
        }
        if busiest.group_type != GroupType::Overloaded {
            // A busy CPU leaves a group that is not overloaded to an idle one.
            if env.idle == CpuIdleType::NotIdle {
                return false;
            }
            // A difference of one idle CPU would only move the imbalance.
            if busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
                return false;
            }
            // The busiest group has no task waiting to run.
            if busiest.sum_h_nr_running == 1 {
                return false;
            }
        }
        true
    }

    /// `should_we_balance(env)` of Linux 6.5: a newly idle CPU balances unless it got a
    /// task or a wakeup; otherwise the first idle CPU of the local group's balance mask,
    /// or the group's balance CPU when none is idle. 6.12's preference for a CPU of an
    /// idle core is not there.
    fn should_we_balance_v6_5(&self, env: &LbEnv) -> bool {
        if !env.cpus.test(env.dst_cpu) {
            return false;
        }
        if env.idle == CpuIdleType::NewlyIdle {
            return self.rq_nr_running(env.dst_cpu) == 0 && !self.rq_ttwu_pending(env.dst_cpu);
        }
        let head = self.topo().domain(env.sd).groups[0];
        let sgc = self.topo().group_sgc(head);
        match sgc
            .balance_mask
            .iter_and(&env.cpus)
            .find(|&cpu| self.idle_cpu(cpu))
        {
            Some(cpu) => cpu == env.dst_cpu,
            None => sgc.balance_cpu() == env.dst_cpu,
        }
    }

    /// `redo:` of 6.5's `load_balance` up to `find_busiest_group`: the scan half, whose
    /// runqueue search ([`crate::lb::find::SrcSelect::sched_balance_find_src_rq`], the
    /// same as 6.5's `find_busiest_queue`) follows once the scan's time has passed.
    fn lb_scan_from_v6_5(&self, c: &mut ScanCounters, mut env: LbEnv) -> LbScan {
        let outcome = if !self.should_we_balance_v6_5(&env) {
            ScanOutcome::NotThisCpu
        } else {
            match self.find_busiest_group_v6_5(c, &mut env) {
                Some(g) => ScanOutcome::BusiestGroup(g),
                None => ScanOutcome::NoBusyGroup,
            }
        };
        LbScan { env, outcome }
    }
}

impl<T: LbRead + ?Sized> StatsV6_5 for T {}
