//! CPU and group capacity of Linux 4.5 (kernel/sched/fair.c): `update_cpu_capacity`,
//! `update_group_capacity`, `check_cpu_capacity` and the reads `capacity_of`,
//! `capacity_orig_of` and `cpu_util`. 3.9 called these "power" (`update_cpu_power`,
//! `power_of`); the state is 3.9's ([`crate::lb::v3_9::LegacyLbState`]), under its 4.x
//! names.
//!
//! Differences from 3.9's `update_cpu_power`: the SMT gain and the architecture's scale
//! are one value, `arch_scale_cpu_capacity(sd, cpu)` (an architecture that defines it,
//! ARM here, returns its `cpu_scale` and no SMT gain; the default returns
//! `smt_gain / span_weight` on an SMT domain and 1024 elsewhere); it is kept as
//! `cpu_capacity_orig`; and there is no `power_orig` (`fix_small_capacity` went in 3.19).
//! 4.15 adds `sgc->min_capacity` ([`crate::lb::v4_15::capacity`]).

use fairsim_topology::{GroupId, SdFlags, SdId};

use crate::lb::era::Balancer;
use crate::lb::msecs_to_jiffies;
use crate::sched::Sched;
use fairsim_topology::limits::{SCHED_POWER_SCALE, SCHED_POWER_SHIFT};

impl Sched {
    /// `capacity_of(cpu)`: `rq->cpu_capacity`.
    pub fn capacity_of_v4_5(&self, cpu: usize) -> u64 {
        self.legacy().cpu_power[cpu]
    }

    /// `capacity_orig_of(cpu)`: `rq->cpu_capacity_orig`.
    pub fn capacity_orig_of_v4_5(&self, cpu: usize) -> u64 {
        self.legacy().cpu_capacity_orig[cpu]
    }

    /// `sg->sgc->capacity` of group `g`.
    pub fn group_capacity_v4_5(&self, g: GroupId) -> u64 {
        self.legacy().sgp_power[self.topo.group(g).sgc]
    }

    /// `cpu_util(cpu)` of 4.5 (4.15's is the same): the root cfs_rq's `util_avg`, at most
    /// the CPU's original capacity. The signal is fairsim's PELT (6.12's arithmetic).
    pub fn cpu_util_v4_5(&self, cpu: usize) -> u64 {
        let util = self.rqs[cpu].cfs.avg.avg.util_avg;
        util.min(self.capacity_orig_of_v4_5(cpu))
    }

    /// `arch_scale_cpu_capacity(sd, cpu)` as the era's kernel has it for this machine.
    /// 4.5: ARM's `cpu_scale` from the device tree's `clock-frequency` and the efficiency
    /// table (the machine's `cpu_power`, 3.9's arithmetic, which 4.5's arm topology.c
    /// keeps), else the generic default. 4.15: ARM's `cpu_scale` from
    /// `capacity-dmips-mhz` scaled by each CPU's maximum frequency
    /// (drivers/base/arch_topology.c, the machine's capacities, as 6.12's), which only a
    /// machine with different capacities has; else the default. The default gives an SMT
    /// domain's CPUs `smt_gain / span_weight` (589 for two threads) and others 1024.
    pub fn arch_scale_cpu_capacity_v4_5(&self, sd: SdId, cpu: usize) -> u64 {
        let arch = match self.balancer() {
            Balancer::V4_15 => self
                .machine
                .is_asymmetric()
                .then(|| u64::from(self.machine.cpus[cpu].capacity)),
            _ => self
                .machine
                .cpu_power
                .is_some()
                .then(|| self.machine.arch_cpu_power(cpu)),
        };
        if let Some(c) = arch {
            return c;
        }
        let d = self.topo.domain(sd);
        let p = self.legacy().sd[sd];
        if d.flags.contains(SdFlags::SHARE_CPUCAPACITY) && d.span_weight > 1 {
            return p.smt_gain / u64::from(d.span_weight);
        }
        SCHED_POWER_SCALE
    }

    /// `scale_rt_capacity(cpu)`: the share of the last `sched_avg_period` left to fair
    /// tasks. fairsim runs no RT task and accounts no IRQ time, so `rt_avg` is 0 and the
    /// share is all of `SCHED_CAPACITY_SCALE`.
    fn scale_rt_capacity_v4_5(&self, _cpu: usize) -> u64 {
        SCHED_POWER_SCALE
    }

    /// `update_cpu_capacity(sd, cpu)`: the CPU's original capacity, scaled by the RT
    /// share, as `rq->cpu_capacity` and the capacity of its group at the lowest domain
    /// (with 4.15, also the group's `min_capacity`).
    fn update_cpu_capacity_v4_5(&mut self, sd: SdId, cpu: usize) {
        let mut capacity = self.arch_scale_cpu_capacity_v4_5(sd, cpu);
        self.legacy_mut().cpu_capacity_orig[cpu] = capacity;
        capacity *= self.scale_rt_capacity_v4_5(cpu);
        capacity >>= SCHED_POWER_SHIFT;
        if capacity == 0 {
            capacity = 1;
        }
        let sgc = self.topo.group(self.topo.domain(sd).groups[0]).sgc;
        let v4_15 = self.balancer() == Balancer::V4_15;
        let st = self.legacy_mut();
        st.cpu_power[cpu] = capacity;
        st.sgp_power[sgc] = capacity;
        if v4_15 {
            st.sgc_min_capacity[sgc] = capacity;
        }
    }

    /// `update_group_capacity(sd, cpu)`: the capacity of `cpu`'s group at `sd`, from the
    /// CPU itself at the lowest level, else the sum of the child domain's groups (below
    /// an overlapping level, of each CPU's lowest group); also when it may next be
    /// refreshed. 4.15 also keeps the smallest capacity of the group's parts
    /// ([`Sched::group_min_capacity_v4_15`]).
    pub fn update_group_capacity_v4_5(&mut self, sd: SdId, cpu: usize) {
        let head = self.topo.domain(sd).groups[0];
        let child = self.topo.domain(sd).child;
        let sgc = self.topo.group(head).sgc;
        let interval = msecs_to_jiffies(self.lb.sd[sd].balance_interval, u64::from(self.params.hz))
            .clamp(1, self.lb.max_load_balance_interval.max(1));
        let next = self.jiffies_now() + interval;
        self.legacy_mut().sgp_next_update[sgc] = next;
        let Some(child) = child else {
            self.update_cpu_capacity_v4_5(sd, cpu);
            return;
        };
        let parts: Vec<GroupId> = if self.topo.domain(child).flags.contains(SdFlags::OVERLAP) {
            // SD_OVERLAP children cannot be assumed to span the group: each CPU's lowest
            // group, which is the CPU itself.
            self.topo
                .group(head)
                .span
                .iter()
                .filter_map(|c| self.topo.cpus[c].sd)
                .map(|low| self.topo.domain(low).groups[0])
                .collect()
        } else {
            self.topo.domain(child).groups.to_vec()
        };
        let capacity: u64 = parts.iter().map(|&g| self.group_capacity_v4_5(g)).sum();
        self.legacy_mut().sgp_power[sgc] = capacity;
        if self.balancer() == Balancer::V4_15 {
            let overlap = self.topo.domain(child).flags.contains(SdFlags::OVERLAP);
            let min = self.group_min_capacity_v4_15(&parts, overlap);
            self.legacy_mut().sgc_min_capacity[sgc] = min;
        }
    }

    /// `check_cpu_capacity(rq, sd)`: the CPU's capacity is noticeably reduced (by the
    /// domain's `imbalance_pct`) from its original by RT or IRQ activity. Never, here.
    pub fn check_cpu_capacity_v4_5(&self, cpu: usize, sd: SdId) -> bool {
        self.capacity_of_v4_5(cpu) * self.legacy().sd[sd].imbalance_pct
            < self.capacity_orig_of_v4_5(cpu) * 100
    }
}
