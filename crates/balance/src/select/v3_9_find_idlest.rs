//! Linux 3.9's fork and exec placement (LEGACY_LB): `find_idlest_group` and
//! `find_idlest_cpu` with 3.9's loads (`source_load`/`target_load` at the domain's
//! `forkexec_idx`, `weighted_cpuload`), and the descent of `select_task_rq_fair`'s
//! balance loop. Read from the v3.9.6 tree named in [`crate::lb::v3_9`] (fair.c
//! 3177-3250 and 3372-3400).
//!
//! Around it, `select_task_rq_fair` stays 6.12's: 3.9 walked every domain of the CPU
//! looking for the highest one with the balance flag without 6.12's early stop at a
//! domain without it (all of fairsim's fork/exec levels have the flags, so the domain
//! found is the same), and 3.9's wakeup side (`wake_affine` with `effective_load`) is
//! not ported.

use fairsim_topology::limits::SCHED_POWER_SCALE;
use fairsim_topology::{GroupId, SdFlags, SdId};

use crate::sched::Sched;
use crate::task::TaskId;

impl Sched {
    /// `find_idlest_group(sd, p, this_cpu, load_idx)` of 3.9: the least loaded group per
    /// power, unless the local group is within half the domain's imbalance margin of it.
    fn find_idlest_group_v3_9(
        &self,
        sd: SdId,
        p: TaskId,
        this_cpu: usize,
        load_idx: usize,
    ) -> Option<GroupId> {
        let imbalance_pct = self.legacy().sd[sd].imbalance_pct;
        let imbalance = 100 + (imbalance_pct - 100) / 2;
        let mut idlest = None;
        let mut min_load = u64::MAX;
        let mut this_load = 0u64;
        for &group in &self.topo.domain(sd).groups {
            let span = &self.topo.group(group).span;
            if !span.iter().any(|c| self.tasks[p].allowed_on(c)) {
                continue;
            }
            self.count_group_visit();
            let local_group = span.test(this_cpu);
            // Bias balancing toward the CPUs of our domain.
            let sum: u64 = span
                .iter()
                .map(|i| {
                    if local_group {
                        self.source_load_v3_9(i, load_idx)
                    } else {
                        self.target_load_v3_9(i, load_idx)
                    }
                })
                .sum();
            let avg_load = sum * SCHED_POWER_SCALE / self.group_power_v3_9(group);
            if local_group {
                this_load = avg_load;
            } else if avg_load < min_load {
                min_load = avg_load;
                idlest = Some(group);
            }
        }
        let idlest = idlest?;
        if 100 * this_load < imbalance * min_load {
            return None;
        }
        Some(idlest)
    }

    /// `find_idlest_cpu(group, p, this_cpu)` of 3.9: the allowed CPU with the lowest
    /// `weighted_cpuload`, `this_cpu` winning ties.
    fn find_idlest_cpu_in_group_v3_9(
        &self,
        group: GroupId,
        p: TaskId,
        this_cpu: usize,
    ) -> Option<usize> {
        let mut min_load = u64::MAX;
        let mut idlest = None;
        for i in self.topo.group(group).span.iter() {
            if !self.tasks[p].allowed_on(i) {
                continue;
            }
            let load = self.weighted_cpuload_v3_9(i);
            if load < min_load || (load == min_load && i == this_cpu) {
                min_load = load;
                idlest = Some(i);
            }
        }
        idlest
    }

    /// The balance loop of 3.9's `select_task_rq_fair` from domain `sd` (the highest of
    /// `cpu`'s domains with `sd_flag`): at each level the idlest group's idlest CPU, then
    /// down to the next lower level of that CPU.
    pub(crate) fn find_idlest_cpu_v3_9(
        &self,
        sd: SdId,
        p: TaskId,
        cpu: usize,
        prev_cpu: usize,
        sd_flag: SdFlags,
    ) -> usize {
        let mut cpu = cpu;
        let mut new_cpu = if sd_flag.intersects(SdFlags::BALANCE_WAKE) {
            prev_cpu
        } else {
            cpu
        };
        let mut sd = Some(sd);
        while let Some(d) = sd {
            let dom = self.topo.domain(d);
            if !dom.flags.intersects(sd_flag) {
                sd = dom.child;
                continue;
            }
            let params = &self.legacy().sd[d];
            let load_idx = if sd_flag.intersects(SdFlags::BALANCE_WAKE) {
                params.wake_idx
            } else {
                params.forkexec_idx
            };
            let Some(group) = self.find_idlest_group_v3_9(d, p, cpu, load_idx) else {
                sd = dom.child;
                continue;
            };
            match self.find_idlest_cpu_in_group_v3_9(group, p, cpu) {
                None => {
                    sd = dom.child;
                    continue;
                }
                Some(c) if c == cpu => {
                    new_cpu = c;
                    sd = dom.child;
                    continue;
                }
                Some(c) => new_cpu = c,
            }
            // Now balance at a lower domain level of the new CPU.
            cpu = new_cpu;
            sd = self.lower_domain_with(cpu, dom.span_weight, sd_flag);
        }
        new_cpu
    }
}
