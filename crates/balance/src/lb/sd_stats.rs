//! Group and domain statistics for load balancing: `update_sg_lb_stats`,
//! `update_sd_pick_busiest`, `update_sd_lb_stats`, with the seed-000 ILB features
//! (`ILB_SNAPSHOT`'s `ilb_save_stats`, `ILB_UTIL`'s `update_ilb_group_scan` and scan
//! depth, `ILB_FAST`'s `can_pull_busiest`) and patch 7/7's `lb_sg_scan` counter.

use std::sync::atomic::Ordering;

use fairsim_topology::{GroupId, SdFlags};

use crate::cpu_util::capacity_greater;
use crate::features::Feature;
use crate::group_type::{group_classify, sg_imbalanced, GroupType, SgLbStats};
use crate::lb::env::{LbEnv, SdLbStats};
use crate::lb::view::{LbRead, ScanCounters};
use crate::sched::Sched;
use crate::select::idle_scan::update_idle_cpu_scan;
use crate::stats::CpuIdleType;

/// `SCHED_CAPACITY_SCALE`.
const SCALE: u64 = 1024;

/// The group and domain statistics, for any [`LbRead`] view of the machine.
pub trait GroupStats: LbRead {
    /// `sched_group_asym(env, sgs, group)`.
    fn sched_group_asym(&self, env: &LbEnv, sgs: &SgLbStats, g: GroupId) -> bool {
        let grp = self.topo().group(g);
        if grp.flags.contains(SdFlags::SHARE_CPUCAPACITY) && sgs.group_weight - sgs.idle_cpus != 1 {
            return false;
        }
        match grp.asym_prefer_cpu {
            Some(pref) => self.sched_asym(env.sd, env.dst_cpu, pref),
            None => false,
        }
    }

    /// `update_sg_lb_stats(env, sds, group, sgs, &sg_overloaded, &sg_overutilized)`.
    /// Returns the statistics and `sg_overloaded`: some CPU of the group runs more than
    /// one task or, on an asymmetric domain, a misfit task.
    fn update_sg_lb_stats(
        &self,
        c: &mut ScanCounters,
        env: &LbEnv,
        local: Option<GroupId>,
        g: GroupId,
    ) -> (SgLbStats, bool) {
        let mut sgs = SgLbStats::default();
        let mut overloaded = false;
        let local_group = local == Some(g);
        let sd = env.sd;
        let asym_cap = self
            .topo()
            .domain(sd)
            .flags
            .contains(SdFlags::ASYM_CPUCAPACITY);
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
                overloaded = true;
            }
            if self.cpu_overutilized(i) {
                c.sg_overutilized = true;
            }
            if nr_running == 0 && self.idle_cpu(i) {
                sgs.idle_cpus += 1;
                continue;
            }
            if local_group {
                continue;
            }
            if asym_cap {
                // A misfit task overloads the domain as a second task would: at the
                // root this keeps rd->overloaded set, so newidle balance on a bigger
                // CPU goes looking for it.
                if sgs.group_misfit_task_load < self.misfit_task_load(i) {
                    sgs.group_misfit_task_load = self.misfit_task_load(i);
                    overloaded = true;
                }
            } else if env.idle != CpuIdleType::NotIdle
                && self.sched_reduced_capacity(i, sd)
                && sgs.group_misfit_task_load < load
            {
                sgs.group_misfit_task_load = load;
            }
        }
        c.groups_visited += 1;
        let grp = self.topo().group(g);
        sgs.group_capacity = self.topo().group_sgc(g).capacity();
        sgs.group_weight = grp.group_weight;
        if !local_group
            && env.idle != CpuIdleType::NotIdle
            && sgs.sum_h_nr_running != 0
            && self.sched_group_asym(env, &sgs, g)
        {
            sgs.group_asym_packing = 1;
        }
        // smt_balance(env, sgs, group)
        if !local_group
            && env.idle != CpuIdleType::NotIdle
            && grp.flags.contains(SdFlags::SHARE_CPUCAPACITY)
            && sgs.sum_h_nr_running > 1
        {
            sgs.group_smt_balance = 1;
        }
        let pct = self.topo().domain(sd).imbalance_pct;
        sgs.group_type = group_classify(pct, sg_imbalanced(self.topo(), g), &sgs);
        if sgs.group_type == GroupType::Overloaded {
            sgs.avg_load = sgs.group_load * SCALE / sgs.group_capacity.max(1);
        }
        (sgs, overloaded)
    }

    /// `update_sd_pick_busiest(env, sds, sg, sgs)`: whether `sg` replaces the busiest group
    /// found so far, with the kernel's tie-breaks for each group type.
    fn update_sd_pick_busiest(
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
        let sd_flags = self.topo().domain(env.sd).flags;
        let sgc = self.topo().group_sgc(sg);
        let (_, min_cap, max_cap) = sgc.capacities();
        let dst_cap = self.capacity_of(env.dst_cpu);
        // Do not pull a misfit task to a CPU that is not bigger, not fully idle, or whose
        // own group is busy.
        if sd_flags.contains(SdFlags::ASYM_CPUCAPACITY)
            && sgs.group_type == GroupType::MisfitTask
            && (!env.dst_core_idle
                || !capacity_greater(dst_cap, max_cap)
                || sds.local_stat.group_type != GroupType::HasSpare)
        {
            return false;
        }
        // Do not pull from bigger CPUs that are not overloaded.
        if sd_flags.contains(SdFlags::ASYM_CPUCAPACITY)
            && sgs.group_type <= GroupType::FullyBusy
            && capacity_greater(min_cap, dst_cap)
        {
            return false;
        }
        if sgs.group_type > busiest.group_type {
            return true;
        }
        if sgs.group_type < busiest.group_type {
            return false;
        }
        let busiest_g = sds.busiest;
        let busiest_smt = busiest_g
            .map(|b| {
                self.topo()
                    .group(b)
                    .flags
                    .contains(SdFlags::SHARE_CPUCAPACITY)
            })
            .unwrap_or(false);
        let has_spare = |sgs: &SgLbStats| -> bool {
            if sgs.idle_cpus > busiest.idle_cpus {
                return false;
            }
            !(sgs.idle_cpus == busiest.idle_cpus && sgs.sum_nr_running <= busiest.sum_nr_running)
        };
        match sgs.group_type {
            GroupType::Overloaded => sgs.avg_load > busiest.avg_load,
            GroupType::Imbalanced => false,
            GroupType::AsymPacking => match (
                busiest_g.and_then(|b| self.topo().group(b).asym_prefer_cpu),
                self.topo().group(sg).asym_prefer_cpu,
            ) {
                (Some(a), Some(b)) => self.sched_asym_prefer(a, b),
                _ => false,
            },
            GroupType::MisfitTask => sgs.group_misfit_task_load > busiest.group_misfit_task_load,
            GroupType::SmtBalance if sgs.idle_cpus != 0 || busiest.idle_cpus != 0 => has_spare(sgs),
            GroupType::SmtBalance | GroupType::FullyBusy => {
                // Prefer the group with the higher average load; on a tie keep an SMT
                // busiest group, whose sibling may be busy for reasons load hides.
                if sgs.avg_load < busiest.avg_load {
                    return false;
                }
                !(sgs.avg_load == busiest.avg_load && busiest_smt)
            }
            GroupType::HasSpare => {
                // smt_vs_nonsmt_groups: between an SMT and a non-SMT group, prefer to pull
                // from the SMT group unless it runs at most one task.
                if let Some(b) = busiest_g {
                    let sg_smt = self
                        .topo()
                        .group(sg)
                        .flags
                        .contains(SdFlags::SHARE_CPUCAPACITY);
                    let b_smt = self
                        .topo()
                        .group(b)
                        .flags
                        .contains(SdFlags::SHARE_CPUCAPACITY);
                    if sg_smt != b_smt {
                        return !(sg_smt && sgs.sum_h_nr_running <= 1);
                    }
                }
                has_spare(sgs)
            }
        }
    }

    /// `update_sd_lb_stats(env, sds)`: walk the domain's groups from the local one,
    /// computing each group's statistics and keeping the busiest; then the root-domain
    /// overload flag, SIS_UTIL's scan depth, and the seed-000 snapshot/scan-depth
    /// bookkeeping. With `ILB_UTIL` or `ILB_FAST` a newly idle CPU may stop early and
    /// borrow the totals of the last periodic balance.
    fn update_sd_lb_stats(&self, c: &mut ScanCounters, env: &mut LbEnv) -> SdLbStats {
        let t0 = self.scan_clock();
        let mut sds = SdLbStats::new();
        let sd = env.sd;
        let feat = self.features();
        let shared = self.topo().domain(sd).shared;
        env.dst_core_idle = !self.sched_smt_active() || self.is_core_idle(env.dst_cpu);
        let snapshot_cap = shared
            .map(|s| self.topo().shared[s].total_capacity.load(Ordering::Relaxed))
            .unwrap_or(0);
        let mut ilb_can_load =
            env.idle == CpuIdleType::NewlyIdle && shared.is_some() && snapshot_cap != 0;
        let mut nr_sg_scan: i32 = match shared {
            Some(s) if feat.has(Feature::ILB_UTIL) && ilb_can_load => {
                self.topo().shared[s].nr_sg_scan.load(Ordering::Relaxed)
            }
            _ => 0,
        };
        let mut sum_util = 0u64;
        let mut sg_overloaded = false;
        c.sg_overutilized = false;
        let mut jumped = false;
        for &g in &self.topo().domain(sd).groups {
            let local_group = self.topo().group(g).span.test(env.dst_cpu);
            if local_group {
                sds.local = Some(g);
                let next_update = self.topo().group_sgc(g).next_update.load(Ordering::Relaxed);
                let jiffies = self.jiffies();
                if env.idle != CpuIdleType::NewlyIdle || jiffies >= next_update {
                    self.update_group_capacity(sd, env.dst_cpu);
                }
            }
            let (sgs, ovl) = self.update_sg_lb_stats(c, env, sds.local, g);
            sg_overloaded |= ovl;
            if local_group {
                sds.local_stat = sgs;
            } else {
                // Seed 000 patch 7/7: count every non-local group scanned.
                c.sg_scan += 1;
                if self.update_sd_pick_busiest(env, &sds, g, &sgs) {
                    sds.busiest = Some(g);
                    sds.busiest_stat = sgs;
                    if feat.has(Feature::ILB_FAST)
                        && ilb_can_load
                        && can_pull_busiest(&sds.local_stat, &sgs)
                    {
                        jumped = true;
                        break;
                    }
                }
                if feat.has(Feature::ILB_UTIL) && ilb_can_load {
                    nr_sg_scan -= 1;
                    if nr_sg_scan <= 0 {
                        jumped = true;
                        break;
                    }
                }
            }
            sds.total_load += sgs.group_load;
            sds.total_capacity += sgs.group_capacity;
            sum_util += sgs.group_util;
        }
        if !jumped {
            ilb_can_load = false;
        }
        if ilb_can_load {
            if let Some(s) = shared {
                sds.total_load = self.topo().shared[s].total_load.load(Ordering::Relaxed);
                sds.total_capacity = self.topo().shared[s].total_capacity.load(Ordering::Relaxed);
            }
        }
        if let Some(b) = sds.busiest {
            sds.prefer_sibling = self.topo().group(b).flags.contains(SdFlags::PREFER_SIBLING);
        }
        if self.topo().domain(sd).parent.is_none() {
            c.rd_overloaded = Some(sg_overloaded);
            c.rd_overutilized = Some(c.sg_overutilized);
        } else if c.sg_overutilized {
            c.rd_overutilized = Some(true);
        }
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

    /// Seed 000 `update_ilb_group_scan`: the periodic balance sets the scan depth newidle
    /// balances will use, `nr_groups * (1 - sum_util / (span_weight * 1024))`.
    fn update_ilb_group_scan(&self, sd: fairsim_topology::SdId, shared: usize, sum_util: u64) {
        if !self.features().has(Feature::ILB_UTIL) {
            return;
        }
        let d = self.topo().domain(sd);
        let nr_groups = d.nr_groups() as u64;
        let tmp = u64::from(d.span_weight) * SCALE;
        let nr_scan = nr_groups.wrapping_sub(nr_groups * sum_util / tmp.max(1));
        let nr_scan = nr_scan as i32;
        let cell = &self.topo().shared[shared].nr_sg_scan;
        if cell.load(Ordering::Relaxed) != nr_scan {
            cell.store(nr_scan, Ordering::Relaxed);
        }
    }

    /// Seed 000 `ilb_save_stats`: the periodic balance stores the domain's totals.
    fn ilb_save_stats(&self, shared: usize, sds: &SdLbStats) {
        if !self.features().has(Feature::ILB_SNAPSHOT) {
            return;
        }
        let sh = &self.topo().shared[shared];
        if sh.total_load.load(Ordering::Relaxed) != sds.total_load {
            sh.total_load.store(sds.total_load, Ordering::Relaxed);
        }
        if sh.total_capacity.load(Ordering::Relaxed) != sds.total_capacity {
            sh.total_capacity
                .store(sds.total_capacity, Ordering::Relaxed);
        }
    }

    /// `update_group_capacity(sd, cpu)` at run time: the local group's capacity is
    /// refreshed from its CPUs or child groups, and its next update is scheduled
    /// `balance_interval` ahead.
    fn update_group_capacity(&self, sd: fairsim_topology::SdId, cpu: usize) {
        let d = self.topo().domain(sd);
        let head = d.groups[0];
        let interval = super::msecs_to_jiffies(self.balance_interval(sd), self.hz())
            .clamp(1, self.max_load_balance_interval());
        let jiffies = self.jiffies();
        let sgc_id = self.topo().group(head).sgc;
        self.topo().sgcs[sgc_id]
            .next_update
            .store(jiffies + interval, Ordering::Relaxed);
        let (cap, min, max) = match d.child {
            None => {
                // update_cpu_capacity: the CPU's capacity (no RT, irq or thermal pressure
                // in fairsim, so `rq->cpu_capacity` as it stands) and its tracepoint.
                let c = self.capacity_of(cpu).max(1);
                self.trace_cpu_capacity(cpu);
                (c, c, c)
            }
            Some(child) => {
                let cd = self.topo().domain(child);
                let mut cap = 0u64;
                let mut min = u64::MAX;
                let mut max = 0u64;
                if cd.flags.contains(SdFlags::OVERLAP) {
                    for c in self.topo().group(head).span.iter() {
                        let cc = self.capacity_of(c);
                        cap += cc;
                        min = min.min(cc);
                        max = max.max(cc);
                    }
                } else {
                    for &g in &cd.groups {
                        let (c, lo, hi) = self.topo().group_sgc(g).capacities();
                        cap += c;
                        min = min.min(lo);
                        max = max.max(hi);
                    }
                }
                (cap, min, max)
            }
        };
        let sgc = &self.topo().sgcs[sgc_id];
        sgc.capacity.store(cap, Ordering::Relaxed);
        sgc.min_capacity.store(min, Ordering::Relaxed);
        sgc.max_capacity.store(max, Ordering::Relaxed);
    }
}

impl<T: LbRead + ?Sized> GroupStats for T {}

impl Sched {
    /// Folds what a scan did into the engine's work counters, the root domain's overload
    /// flag and the domain's `lb_sg_scan`.
    pub(crate) fn fold_scan(
        &mut self,
        sd: fairsim_topology::SdId,
        itype: CpuIdleType,
        c: ScanCounters,
    ) {
        self.work.cpus_visited += c.cpus_visited;
        self.work.cpus_visited_remote_llc += c.cpus_visited_remote_llc;
        self.work.cpus_visited_remote_node += c.cpus_visited_remote_node;
        self.work.groups_visited += c.groups_visited;
        self.sd_stats[sd].lb_sg_scan[itype as usize] += c.sg_scan;
        if let Some(o) = c.rd_overloaded {
            // The scan was of the top domain of the domain's own CPU, whose root domain
            // is the one `set_rd_overloaded(env->dst_rq->rd, ...)` writes.
            let cpu = self.topo.domain(sd).cpu;
            self.lb.set_rd_overloaded(&self.topo, cpu, o);
        }
        if let Some(o) = c.rd_overutilized {
            let cpu = self.topo.domain(sd).cpu;
            self.set_rd_overutilized(cpu, o);
        }
    }

    /// [`GroupStats::update_sd_lb_stats`] on this machine, its counters folded in.
    pub fn update_sd_lb_stats(&mut self, env: &mut LbEnv) -> SdLbStats {
        let mut c = ScanCounters::default();
        let sds = GroupStats::update_sd_lb_stats(&*self, &mut c, env);
        self.fold_scan(env.sd, env.idle, c);
        sds
    }
}

/// Seed 000 `can_pull_busiest(local, busiest)` (`ILB_FAST`): with an idle-ish local group,
/// a candidate that has fewer idle CPUs (or as many and more tasks) is good enough.
pub fn can_pull_busiest(local: &SgLbStats, busiest: &SgLbStats) -> bool {
    if local.group_type != GroupType::HasSpare {
        return false;
    }
    if busiest.idle_cpus > local.idle_cpus {
        return false;
    }
    !(busiest.idle_cpus == local.idle_cpus && busiest.sum_nr_running <= local.sum_nr_running)
}
