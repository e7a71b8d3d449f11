//! Linux 4.5's slow placement path: `find_idlest_group` and `find_idlest_cpu`, and the
//! balance loop of 4.5's `select_task_rq_fair` that descends through them, beside 3.9's
//! ([`super::v3_9_find_idlest`]), 4.15's ([`super::v4_15_find_idlest`]) and 6.12's
//! ([`super::slow_path`]).
//!
//! # Source
//!
//! `kernel/sched/fair.c` of **Linux 4.5.0**, the tree `github:arthur-lucena/linux-4.5-hw-so`
//! at `f21e75bf` (Makefile 4.5.0): `weighted_cpuload` 4481-4484, `source_load` /
//! `target_load` 4570-4594, `capacity_of` 4596-4599, `find_idlest_group` 4869-4920,
//! `find_idlest_cpu` 4926-4969, the loop in `select_task_rq_fair` (5063-5142);
//! `kernel/sched/core.c` `idle_cpu` 3670 and `sd_init` 6532-6627 (every level's
//! `forkexec_idx` and `wake_idx` are 0; `imbalance_pct` 110 for SMT, 117 for
//! LLC-sharing levels, 125 above, NUMA included).
//!
//! # 4.5 against the neighbouring ports
//!
//! None of the existing ports is 4.5's, so 4.5's own is here:
//!
//! - **3.9's** `find_idlest_group` is 4.5's line for line except that 4.5 takes `sd_flag`
//!   and picks the load index itself (3.9's caller passes it), divides by the group's
//!   `sgc->capacity` where 3.9 divides by `sgp->power`, and reads `weighted_cpuload()` as
//!   the runnable load average where 3.9 reads `rq->load.weight`. 3.9's
//!   `find_idlest_cpu` takes the least loaded allowed CPU (-1 when none); 4.5's first
//!   prefers an idle CPU (the shallowest idle state, then the latest `idle_stamp`) and
//!   falls back to the least loaded busy one, starting from `this_cpu`, so it never
//!   returns -1. The port in [`super::v3_9_find_idlest`] also reads the 3.9 balancer's
//!   `cpu_load[]` and `sgp->power`, which only exist under LEGACY_LB.
//! - **4.15's** `find_idlest_group` adds what 4.5 lacks: the spare-capacity test
//!   (`capacity_spare_wake`, skipped for forks), the separate runnable and blocked
//!   (`avg_load`) sums with the `imbalance` margin in load units, and the early return of
//!   the local group when the remote one is not lighter. 4.15's `find_idlest_group_cpu`
//!   is 4.5's `find_idlest_cpu` plus the one-CPU-group shortcut; 4.15's `find_idlest_cpu`
//!   wrapper adds the caller's `sync_entity_load_avg` and the "no allowed CPU in `sd`:
//!   `prev_cpu`" return, neither of which 4.5 has.
//!
//! # 4.5's values on 6.12's runqueues
//!
//! - **Loads.** With both load indexes 0, `source_load` and `target_load` return
//!   `weighted_cpuload()` whatever LB_BIAS says, so no `cpu_load[]` history is needed.
//!   `weighted_cpuload()` is the root cfs_rq's `runnable_load_avg`, which 4.5 keeps as
//!   the sum of its queued entities' `load_avg`, decayed with the cfs_rq; fairsim
//!   rebuilds it with [`Sched::weighted_cpuload_v4_15`] (each queued, non-delayed task's
//!   `se.avg` brought forward on a copy to the cfs_rq's `last_update_time`, summed).
//! - **Capacities.** `capacity_of` and `sgc->capacity` are read from the balancer the
//!   machine runs ([`Sched::capacity_of_sel_v4_5`]): an era balancer's own state when it
//!   keeps one (`lb.legacy`), else 6.12's `rq->cpu_capacity` and `sgc->capacity`. 4.5
//!   gave an SMT thread `smt_gain / span_weight` (589 of 1024 for two threads) where 6.12
//!   gives 1024; on 6.12's values every group of an SMT machine is larger by the same
//!   factor, so the comparisons between groups of one level keep their outcome up to the
//!   rounding of the division.
//! - **`imbalance_pct`** is 4.5's, recomputed from the domain's flags by
//!   [`imbalance_pct_v4_15`] (4.15's `sd_init` sets the same three values as 4.5's).
//! - **Idle CPUs** are 4.5's `idle_cpu()` ([`Sched::idle_cpu_v4_5`]); the idle-state
//!   tie-break reads `SchedParams::cpuidle_exit_latency_us` and `rq->idle_stamp` as the
//!   4.15 port does (one exit latency for every idle CPU, so `idle_stamp` decides).
//! - **Group order.** 4.5 walks `sd->groups`, a circular list in the order of the groups'
//!   first CPUs, from the group holding `this_cpu`; ties (`avg_load < min_load` keeps the
//!   first) go to the earlier group in that order, so the walk re-sorts 6.12's list.
//!
//! # Cost
//!
//! Each group summed counts one group visit and each CPU read one CPU visit, as the other
//! slow paths count them.

use fairsim_pelt::SCHED_CAPACITY_SCALE;
use fairsim_topology::{GroupId, SdFlags, SdId};

use crate::sched::Sched;
use crate::select::v4_15_find_idlest::imbalance_pct_v4_15;
use crate::task::TaskId;

impl Sched {
    /// `capacity_of(cpu)`, `rq->cpu_capacity`, as the running balancer keeps it: the
    /// era balancer's (`cpu_power` of [`crate::lb::v3_9::LegacyLbState`], which holds
    /// `cpu_capacity` under its 3.9 name) when it keeps one, else 6.12's.
    pub fn capacity_of_sel_v4_5(&self, cpu: usize) -> u64 {
        match &self.lb.legacy {
            Some(st) => st.cpu_power[cpu],
            None => self.capacity_of(cpu),
        }
    }

    /// `group->sgc->capacity` of `group`, from the same balancer as
    /// [`Sched::capacity_of_sel_v4_5`].
    fn group_capacity_sel_v4_5(&self, group: GroupId) -> u64 {
        match &self.lb.legacy {
            Some(st) => st.sgp_power[self.topo.group(group).sgc],
            None => self.topo.group_sgc(group).capacity(),
        }
    }

    /// The groups of `sd` in the order Linux 4.5 links them (`build_sched_groups`: by
    /// first CPU, circular), starting from `sd->groups`, the group holding the domain's
    /// own CPU.
    pub(crate) fn groups_in_v4_5_order(&self, sd: SdId) -> Vec<GroupId> {
        let groups = &self.topo.domain(sd).groups;
        let mut list = groups.to_vec();
        list.sort_by_key(|&g| self.topo.group(g).span.first());
        if let Some(pos) = groups
            .first()
            .and_then(|first| list.iter().position(|g| g == first))
        {
            list.rotate_left(pos);
        }
        list
    }

    /// `find_idlest_group(sd, p, this_cpu, sd_flag)` of Linux 4.5 (kernel/sched/fair.c):
    /// the remote group with the least load per capacity, unless the local group's is
    /// within half of `imbalance_pct` of it (`None` keeps the task local). The local
    /// group's CPUs are read with `source_load` and the others' with `target_load`, at
    /// `wake_idx` for `SD_BALANCE_WAKE` and `forkexec_idx` otherwise; both indexes are 0
    /// in 4.5, so every read is `weighted_cpuload()`.
    pub fn find_idlest_group_v4_5(
        &self,
        sd: SdId,
        p: TaskId,
        this_cpu: usize,
        _sd_flag: SdFlags,
    ) -> Option<GroupId> {
        let d = self.topo.domain(sd);
        let allowed = &self.tasks[p].cpus_allowed;
        let imbalance = 100 + (u64::from(imbalance_pct_v4_15(d.flags)) - 100) / 2;
        let mut idlest: Option<GroupId> = None;
        let mut min_load = u64::MAX;
        let mut this_load = 0u64;

        for group in self.groups_in_v4_5_order(sd) {
            let span = &self.topo.group(group).span;
            // A group with no CPU the task may use is skipped.
            if !span.intersects(allowed) {
                continue;
            }
            self.count_group_visit();
            let local_group = span.test(this_cpu);
            let mut avg_load = 0u64;
            for i in span.iter() {
                self.count_cpu_visit();
                // source_load (local) and target_load (remote) at index 0 are both
                // weighted_cpuload: the bias toward the local group needs a history.
                avg_load += self.weighted_cpuload_v4_15(i);
            }
            // Adjust by the relative capacity of the group.
            avg_load = avg_load * SCHED_CAPACITY_SCALE / self.group_capacity_sel_v4_5(group);
            if local_group {
                this_load = avg_load;
            } else if avg_load < min_load {
                min_load = avg_load;
                idlest = Some(group);
            }
        }

        // min_load is still ULONG_MAX when no remote group was found; idlest is then None.
        let idlest = idlest?;
        if 100 * this_load < imbalance * min_load {
            return None;
        }
        Some(idlest)
    }

    /// `find_idlest_cpu(group, p, this_cpu)` of Linux 4.5 (kernel/sched/fair.c): among
    /// the group's CPUs that the task may use, the idle one (4.5's `idle_cpu`) in the
    /// shallowest idle state, on equal states (or without a cpuidle driver) the most
    /// recently idled; if none is idle, the busy CPU with the least `weighted_cpuload()`,
    /// `this_cpu` winning a tie; `this_cpu` when the loop finds nothing.
    pub fn find_idlest_cpu_v4_5(&self, group: GroupId, p: TaskId, this_cpu: usize) -> usize {
        let mut min_load = u64::MAX;
        let mut min_exit_latency = u32::MAX;
        let mut latest_idle_timestamp = 0u64;
        let mut least_loaded_cpu = this_cpu;
        let mut shallowest_idle_cpu: Option<usize> = None;
        let span = &self.topo.group(group).span;
        for i in span.and(&self.tasks[p].cpus_allowed).iter() {
            self.count_cpu_visit();
            if self.idle_cpu_v4_5(i) {
                let idle = self.params.cpuidle_exit_latency_us;
                let stamp = self.rqs[i].idle_stamp;
                match idle {
                    // The shallowest idle state wins whatever the idle timestamp.
                    Some(lat) if lat < min_exit_latency => {
                        min_exit_latency = lat;
                        latest_idle_timestamp = stamp;
                        shallowest_idle_cpu = Some(i);
                    }
                    // Same state, or no cpuidle state: the most recently idled CPU may
                    // have the warmer cache.
                    _ if (idle.is_none() || idle == Some(min_exit_latency))
                        && stamp > latest_idle_timestamp =>
                    {
                        latest_idle_timestamp = stamp;
                        shallowest_idle_cpu = Some(i);
                    }
                    _ => {}
                }
            } else if shallowest_idle_cpu.is_none() {
                let load = self.weighted_cpuload_v4_15(i);
                if load < min_load || (load == min_load && i == this_cpu) {
                    min_load = load;
                    least_loaded_cpu = i;
                }
            }
        }
        shallowest_idle_cpu.unwrap_or(least_loaded_cpu)
    }

    /// The balance loop of Linux 4.5's `select_task_rq_fair` (kernel/sched/fair.c) from
    /// `sd`, the highest of `cpu`'s domains with `sd_flag`, starting from `new_cpu` (4.5's
    /// `prev_cpu`): at each level with the flag, the idlest group's idlest CPU; when that
    /// moves the task, continue in the new CPU's domains below this level's weight, else
    /// in the child. A level whose local group wins leaves `new_cpu` as it was.
    pub fn find_idlest_loop_v4_5(
        &self,
        sd: SdId,
        p: TaskId,
        cpu: usize,
        new_cpu: usize,
        sd_flag: SdFlags,
    ) -> usize {
        let mut cpu = cpu;
        let mut new_cpu = new_cpu;
        let mut sd = Some(sd);
        while let Some(cur) = sd {
            let d = self.topo.domain(cur);
            if !d.flags.intersects(sd_flag) {
                sd = d.child;
                continue;
            }
            let Some(group) = self.find_idlest_group_v4_5(cur, p, cpu, sd_flag) else {
                sd = d.child;
                continue;
            };
            new_cpu = self.find_idlest_cpu_v4_5(group, p, cpu);
            if new_cpu == cpu {
                // Now try balancing at a lower domain level of cpu.
                sd = d.child;
                continue;
            }
            // Now try balancing at a lower domain level of new_cpu.
            cpu = new_cpu;
            sd = self.lower_domain_with(cpu, d.span_weight, sd_flag);
        }
        new_cpu
    }
}
