//! The slow placement path for fork, exec and `SD_BALANCE_WAKE` wakeups:
//! `sched_balance_find_dst_cpu` descends the domains, `sched_balance_find_dst_group`
//! compares the groups of one domain with `update_sg_wakeup_stats`, and
//! `sched_balance_find_dst_group_cpu` picks a CPU in the chosen group (fair.c).

use fairsim_topology::{GroupId, SdFlags, SdId};

use crate::features::Feature;
use crate::group_type::{group_classify, sg_imbalanced, GroupType, SgLbStats};
use crate::sched::Sched;
use crate::task::TaskId;
use crate::weight::{scale_load_down, NICE_0_LOAD};

/// `NUMA_IMBALANCE_MIN` (fair.c): a pair of communicating tasks may stay on one node.
pub const NUMA_IMBALANCE_MIN: i64 = 2;

/// `adjust_numa_imbalance(imbalance, dst_running, imb_numa_nr)` (fair.c): below
/// `imb_numa_nr` running tasks on the destination, an imbalance of up to
/// `NUMA_IMBALANCE_MIN` is allowed (returns 0); otherwise the imbalance stands.
pub fn adjust_numa_imbalance(imbalance: i64, dst_running: i64, imb_numa_nr: i64) -> i64 {
    if dst_running > imb_numa_nr {
        return imbalance;
    }
    if imbalance <= NUMA_IMBALANCE_MIN {
        return 0;
    }
    imbalance
}

impl Sched {
    /// The highest domain of `cpu` below `weight` CPUs that has `sd_flag`: where the
    /// descent of `find_idlest_cpu` (every version from 3.9 to 6.12's
    /// `sched_balance_find_dst_cpu`) goes on after moving to a CPU of the chosen group.
    pub(crate) fn lower_domain_with(
        &self,
        cpu: usize,
        weight: u32,
        sd_flag: SdFlags,
    ) -> Option<SdId> {
        let mut sd = None;
        for tmp in self.topo.domains_of(cpu) {
            let t = self.topo.domain(tmp);
            if weight <= t.span_weight {
                break;
            }
            if t.flags.intersects(sd_flag) {
                sd = Some(tmp);
            }
        }
        sd
    }

    /// `task_running_on_cpu(cpu, p)` (fair.c): 1 if `p` is queued on `cpu` and counted
    /// in its signals.
    fn task_running_on_cpu(&self, cpu: usize, p: TaskId) -> u32 {
        let t = &self.tasks[p];
        if cpu != t.cpu || t.se.avg.last_update_time == 0 {
            return 0;
        }
        u32::from(t.on_rq_queued())
    }

    /// `idle_cpu_without(cpu, p)` (fair.c): `cpu` would be idle without `p`, given that
    /// its `nr_running` without `p` is already known to be 0.
    fn idle_cpu_without(&self, cpu: usize, p: TaskId) -> bool {
        let rq = &self.rqs[cpu];
        if rq.curr.is_some_and(|c| c != p) {
            return false;
        }
        rq.ttwu_pending == 0
    }

    /// `update_sg_wakeup_stats(sd, group, sgs, p)` (fair.c): the group's statistics over
    /// the CPUs `p` may use, with `p`'s own contribution taken out, classified with
    /// `group_classify`; `avg_load` only for fully busy or overloaded groups.
    pub fn update_sg_wakeup_stats(&self, sd: SdId, group: GroupId, p: TaskId) -> SgLbStats {
        let d = self.topo.domain(sd);
        let g = self.topo.group(group);
        let asym = d.flags.contains(SdFlags::ASYM_CPUCAPACITY);
        let mut sgs = SgLbStats::default();
        // Assume the task fits no CPU of the group until one is found.
        if asym {
            sgs.group_misfit_task_load = 1;
        }
        self.count_group_visit();
        for i in g
            .span
            .iter_and_in(&self.tasks[p].cpus_allowed, g.span_words)
        {
            self.count_cpu_visit();
            let rq = &self.rqs[i];
            sgs.group_load += self.cpu_load_without(i, p);
            sgs.group_util += self.cpu_util_without(i, p);
            sgs.group_runnable += self.cpu_runnable_without(i, p);
            let local = self.task_running_on_cpu(i, p);
            sgs.sum_h_nr_running += rq.cfs.h_nr_queued.wrapping_sub(local);
            let nr_running = rq.nr_running.wrapping_sub(local);
            sgs.sum_nr_running += nr_running;
            if nr_running == 0 && self.idle_cpu_without(i, p) {
                sgs.idle_cpus += 1;
            }
            if asym && sgs.group_misfit_task_load != 0 && self.task_fits_cpu(p, i) {
                sgs.group_misfit_task_load = 0;
            }
        }
        sgs.group_capacity = self.topo.group_sgc(group).capacity();
        sgs.group_weight = g.group_weight;
        sgs.group_type = group_classify(d.imbalance_pct, sg_imbalanced(&self.topo, group), &sgs);
        if matches!(sgs.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
            sgs.avg_load = (sgs.group_load * 1024) / sgs.group_capacity.max(1);
        }
        sgs
    }

    /// `update_pick_idlest(idlest, idlest_sgs, group, sgs)` (fair.c): whether `group`
    /// is idler than the best so far: a lower type, or on equal type the lower avg_load
    /// (busy groups), the higher max capacity (misfit), or more idle CPUs then the lower
    /// utilization (spare).
    fn update_pick_idlest(
        &self,
        idlest: Option<GroupId>,
        idlest_sgs: &SgLbStats,
        group: GroupId,
        sgs: &SgLbStats,
    ) -> bool {
        if sgs.group_type < idlest_sgs.group_type {
            return true;
        }
        if sgs.group_type > idlest_sgs.group_type {
            return false;
        }
        match sgs.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => {
                if idlest_sgs.avg_load <= sgs.avg_load {
                    return false;
                }
            }
            // Not used by the slow wakeup path.
            GroupType::Imbalanced | GroupType::AsymPacking | GroupType::SmtBalance => return false,
            GroupType::MisfitTask => {
                let idlest_max = idlest.map_or(0, |g| self.topo.group_sgc(g).capacities().2);
                if idlest_max >= self.topo.group_sgc(group).capacities().2 {
                    return false;
                }
            }
            GroupType::HasSpare => {
                if idlest_sgs.idle_cpus > sgs.idle_cpus {
                    return false;
                }
                if idlest_sgs.idle_cpus == sgs.idle_cpus && idlest_sgs.group_util <= sgs.group_util
                {
                    return false;
                }
            }
        }
        true
    }

    /// `sched_balance_find_dst_group(sd, p, this_cpu)` (fair.c): the idlest group of `sd`
    /// other than the local one, if moving `p` there beats staying local; `None` keeps
    /// the task in the local group. On NUMA domains a group with spare capacity stays
    /// local while the imbalance is within `imb_numa_nr` (`adjust_numa_imbalance`), and a
    /// busy one while the idlest is not lighter by the `imbalance_pct` margin. Both NUMA
    /// rules are on with FIND_IDLEST_NUMA (the default, as in 6.12.117); off, the groups
    /// of a NUMA domain are compared as any others.
    ///
    /// fairsim models no NUMA faults, so `p->numa_preferred_nid` is always
    /// `NUMA_NO_NODE` and the preferred-node checks never fire.
    pub fn sched_balance_find_dst_group(
        &self,
        sd: SdId,
        p: TaskId,
        this_cpu: usize,
    ) -> Option<GroupId> {
        let d = self.topo.domain(sd);
        let allowed = &self.tasks[p].cpus_allowed;
        let mut idlest: Option<GroupId> = None;
        let mut local: Option<GroupId> = None;
        let mut local_sgs = SgLbStats::default();
        let mut idlest_sgs = SgLbStats {
            avg_load: u64::from(u32::MAX),
            group_type: GroupType::Overloaded,
            ..SgLbStats::default()
        };

        for &group in &d.groups {
            let span = &self.topo.group(group).span;
            // Skip groups the task may not run in (cookies always match).
            if !span.intersects(allowed) {
                continue;
            }
            let local_group = span.test(this_cpu);
            let sgs = self.update_sg_wakeup_stats(sd, group, p);
            if local_group {
                local = Some(group);
                local_sgs = sgs;
            } else if self.update_pick_idlest(idlest, &idlest_sgs, group, &sgs) {
                idlest = Some(group);
                idlest_sgs = sgs;
            }
        }

        // No group to push to.
        let idlest = idlest?;
        // The local group was skipped because of affinity.
        let Some(local) = local else {
            return Some(idlest);
        };
        // Both NUMA keep-local rules descend from seed 004's patch; NO_FIND_IDLEST_NUMA
        // shows 6.12 without them.
        let numa_keep_local =
            d.flags.contains(SdFlags::NUMA) && self.fair.features.has(Feature::FIND_IDLEST_NUMA);
        // A local group idler than the idlest keeps the task; a busier one pushes it.
        if local_sgs.group_type < idlest_sgs.group_type {
            return None;
        }
        if local_sgs.group_type > idlest_sgs.group_type {
            return Some(idlest);
        }

        match local_sgs.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => {
                // Allowed imbalance, in load units.
                let imbalance =
                    scale_load_down(NICE_0_LOAD) * u64::from(d.imbalance_pct - 100) / 100;
                // Across NUMA nodes the remote load is penalised: prefer staying local
                // (seed 004's clause, FIND_IDLEST_NUMA).
                if numa_keep_local && idlest_sgs.avg_load + imbalance >= local_sgs.avg_load {
                    return None;
                }
                if idlest_sgs.avg_load >= local_sgs.avg_load + imbalance {
                    return None;
                }
                if 100 * local_sgs.avg_load <= u64::from(d.imbalance_pct) * idlest_sgs.avg_load {
                    return None;
                }
            }
            GroupType::Imbalanced | GroupType::AsymPacking | GroupType::SmtBalance => return None,
            GroupType::MisfitTask => {
                let local_max = self.topo.group_sgc(local).capacities().2;
                let idlest_max = self.topo.group_sgc(idlest).capacities().2;
                if local_max >= idlest_max {
                    return None;
                }
            }
            GroupType::HasSpare => {
                // The successor of seed 004's clause (FIND_IDLEST_NUMA): forgive a small
                // idle-CPU imbalance across nodes while few tasks run locally.
                if numa_keep_local {
                    // p->nr_cpus_allowed is always below NR_CPUS (8192 on Debian), so the
                    // kernel always bounds imb_numa_nr by the allowed CPUs of the local
                    // group.
                    let local_allowed = self.topo.group(local).span.weight_and(allowed) as i64;
                    let imb_numa_nr = local_allowed.min(i64::from(d.imb_numa_nr));
                    let imbalance =
                        (i64::from(local_sgs.idle_cpus) - i64::from(idlest_sgs.idle_cpus)).abs();
                    let dst_running = i64::from(local_sgs.sum_nr_running) + 1;
                    if adjust_numa_imbalance(imbalance, dst_running, imb_numa_nr) == 0 {
                        return None;
                    }
                }
                // Prefer the group with more idle CPUs: more chances to run at once.
                if local_sgs.idle_cpus >= idlest_sgs.idle_cpus {
                    return None;
                }
            }
        }
        Some(idlest)
    }

    /// `sched_balance_find_dst_group_cpu(group, p, this_cpu)` (fair.c): a SCHED_IDLE CPU
    /// at once; else the idle CPU with the shallowest idle state, on a tie the most
    /// recently idled (`idle_stamp`); else the least loaded CPU, `this_cpu` by default.
    ///
    /// Idle CPUs sit in the idle state `SchedParams::cpuidle_exit_latency_us` describes (a
    /// machine with a cpuidle driver, as intel_idle on servers); with `None` there is no
    /// driver (`idle_get_state` is NULL, as in many guests) and the choice is by
    /// `idle_stamp` alone, so an idle CPU whose stamp is 0 is never chosen.
    pub fn sched_balance_find_dst_group_cpu(
        &self,
        group: GroupId,
        p: TaskId,
        this_cpu: usize,
    ) -> usize {
        let g = self.topo.group(group);
        if g.group_weight == 1 {
            return g.span.first().unwrap_or(this_cpu);
        }
        let mut min_load = u64::MAX;
        let mut latest_idle_timestamp = 0u64;
        let mut least_loaded_cpu = this_cpu;
        let mut shallowest_idle_cpu: Option<usize> = None;
        let mut min_exit_latency = u32::MAX;
        for i in g
            .span
            .iter_and_in(&self.tasks[p].cpus_allowed, g.span_words)
        {
            self.count_cpu_visit();
            let rq = &self.rqs[i];
            if rq.sched_idle_rq() {
                return i;
            }
            if rq.available_idle_cpu() {
                let idle = self.params.cpuidle_exit_latency_us;
                match idle {
                    // The shallowest idle state wins whatever the idle timestamp.
                    Some(lat) if lat < min_exit_latency => {
                        min_exit_latency = lat;
                        latest_idle_timestamp = rq.idle_stamp;
                        shallowest_idle_cpu = Some(i);
                    }
                    // Same state (or no driver): the most recently idled CPU.
                    _ if (idle.is_none() || idle == Some(min_exit_latency))
                        && rq.idle_stamp > latest_idle_timestamp =>
                    {
                        latest_idle_timestamp = rq.idle_stamp;
                        shallowest_idle_cpu = Some(i);
                    }
                    _ => {}
                }
            } else if shallowest_idle_cpu.is_none() {
                let load = self.cpu_load(i);
                if load < min_load {
                    min_load = load;
                    least_loaded_cpu = i;
                }
            }
        }
        shallowest_idle_cpu.unwrap_or(least_loaded_cpu)
    }

    /// `sched_balance_find_dst_cpu(sd, p, cpu, prev_cpu, sd_flag)` (fair.c): from `sd`
    /// down, find the idlest group and its idlest CPU; when that moves the task, continue
    /// in the new CPU's domains below the current level; when it does not, try the child.
    pub fn sched_balance_find_dst_cpu(
        &mut self,
        sd: SdId,
        p: TaskId,
        cpu: usize,
        prev_cpu: usize,
        sd_flag: SdFlags,
    ) -> usize {
        let mut cpu = cpu;
        let mut new_cpu = cpu;
        if !self
            .topo
            .domain(sd)
            .span
            .intersects(&self.tasks[p].cpus_allowed)
        {
            return prev_cpu;
        }
        // cpu_util_without needs the task's utilization synced to its cfs_rq.
        if !sd_flag.intersects(SdFlags::BALANCE_FORK) {
            self.sync_entity_load_avg(p);
        }
        let mut sd = Some(sd);
        while let Some(cur) = sd {
            let d = self.topo.domain(cur);
            if !d.flags.intersects(sd_flag) {
                sd = d.child;
                continue;
            }
            let Some(group) = self.sched_balance_find_dst_group(cur, p, cpu) else {
                sd = d.child;
                continue;
            };
            new_cpu = self.sched_balance_find_dst_group_cpu(group, p, cpu);
            if new_cpu == cpu {
                // Try a lower level of `cpu`.
                sd = d.child;
                continue;
            }
            // Try the levels of `new_cpu` below this one.
            cpu = new_cpu;
            sd = self.lower_domain_with(cpu, d.span_weight, sd_flag);
        }
        new_cpu
    }
}
