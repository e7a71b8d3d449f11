//! `cpu_power` of Linux 3.9 (kernel/sched/fair.c): `update_cpu_power` and
//! `update_group_power`, which 6.12 renamed to capacity, with 3.9's arithmetic.

use fairsim_topology::{GroupId, SdFlags, SdId};

use crate::lb::msecs_to_jiffies;
use crate::sched::Sched;
use fairsim_topology::limits::{SCHED_POWER_SCALE, SCHED_POWER_SHIFT};

impl Sched {
    /// `power_of(cpu)`: `rq->cpu_power`.
    pub fn power_of_v3_9(&self, cpu: usize) -> u64 {
        self.legacy().cpu_power[cpu]
    }

    /// `sgp->power` of group `g`.
    pub fn group_power_v3_9(&self, g: GroupId) -> u64 {
        self.legacy().sgp_power[self.topo.group(g).sgc]
    }

    /// `scale_rt_power(cpu)`: the share of the last `sched_avg_period` left to fair tasks,
    /// out of 1024. fairsim runs no RT task and accounts no IRQ time, so `rt_avg` is 0
    /// and `available / (total >> 10)` is 1024 for any `total` of a period (half a
    /// second) or more.
    fn scale_rt_power_v3_9(&self, _cpu: usize) -> u64 {
        SCHED_POWER_SCALE
    }

    /// `update_cpu_power(sd, cpu)`: the CPU's power from the SMT gain of its lowest
    /// domain, `arch_scale_freq_power` (ARCH_POWER is on in 3.9) and the RT share; sets
    /// `rq->cpu_power` and its group's `power`/`power_orig`.
    fn update_cpu_power_v3_9(&mut self, sd: SdId, cpu: usize) {
        let d = self.topo.domain(sd);
        let weight = u64::from(d.span_weight);
        let p = self.legacy().sd[sd];
        let mut power = SCHED_POWER_SCALE;
        if p.share_cpupower && weight > 1 {
            // default_scale_smt_power: arm's 3.9 code has no arch_scale_smt_power of its
            // own, nor does x86 use one (its version is under #if 0).
            power *= p.smt_gain / weight;
            power >>= SCHED_POWER_SHIFT;
        }
        let sgc = self.topo.group(d.groups[0]).sgc;
        self.legacy_mut().sgp_power_orig[sgc] = power;
        power *= self.machine.arch_cpu_power(cpu);
        power >>= SCHED_POWER_SHIFT;
        power *= self.scale_rt_power_v3_9(cpu);
        power >>= SCHED_POWER_SHIFT;
        if power == 0 {
            power = 1;
        }
        let st = self.legacy_mut();
        st.cpu_power[cpu] = power;
        st.sgp_power[sgc] = power;
    }

    /// `update_group_power(sd, cpu)`: the power of `cpu`'s group at `sd`, from the CPU
    /// itself at the lowest level, else from the child's groups (or, below an overlapping
    /// level, from the CPUs); also sets when it may next be refreshed.
    pub fn update_group_power_v3_9(&mut self, sd: SdId, cpu: usize) {
        let head = self.topo.domain(sd).groups[0];
        let child = self.topo.domain(sd).child;
        let sgc = self.topo.group(head).sgc;
        let interval = msecs_to_jiffies(self.lb.sd[sd].balance_interval, u64::from(self.params.hz))
            .clamp(1, self.lb.max_load_balance_interval.max(1));
        let next = self.jiffies_now() + interval;
        self.legacy_mut().sgp_next_update[sgc] = next;
        let Some(child) = child else {
            self.update_cpu_power_v3_9(sd, cpu);
            return;
        };
        let power: u64 = if self.topo.domain(child).flags.contains(SdFlags::OVERLAP) {
            // SD_OVERLAP children cannot be assumed to span the group: sum its CPUs.
            self.topo
                .group(head)
                .span
                .iter()
                .map(|c| self.power_of_v3_9(c))
                .sum()
        } else {
            self.topo
                .domain(child)
                .groups
                .iter()
                .map(|&g| self.group_power_v3_9(g))
                .sum()
        };
        let st = self.legacy_mut();
        st.sgp_power[sgc] = power;
        st.sgp_power_orig[sgc] = power;
    }

    /// `fix_small_capacity(sd, group)`: an SMT group keeps a capacity of one task while
    /// about 90% of its original power is left.
    pub fn fix_small_capacity_v3_9(&self, sd: SdId, g: GroupId) -> u64 {
        if !self.legacy().sd[sd].share_cpupower {
            return 0;
        }
        let sgc = self.topo.group(g).sgc;
        let st = self.legacy();
        u64::from(st.sgp_power[sgc] * 32 > st.sgp_power_orig[sgc] * 29)
    }
}

/// `DIV_ROUND_CLOSEST(power, SCHED_POWER_SCALE)`: a group's power as a number of tasks.
pub fn div_round_closest(x: u64, d: u64) -> u64 {
    (x + d / 2) / d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The posting's TC2 powers as group capacities: the A15 pair (2 x 1441) counts as 3
    /// tasks, the A7 trio (3 x 606) as 2.
    #[test]
    fn tc2_group_capacity_rounds_to_three_and_two() {
        assert_eq!(div_round_closest(2 * 1441, SCHED_POWER_SCALE), 3);
        assert_eq!(div_round_closest(3 * 606, SCHED_POWER_SCALE), 2);
        assert_eq!(div_round_closest(606, SCHED_POWER_SCALE), 1);
        assert_eq!(div_round_closest(511, SCHED_POWER_SCALE), 0);
    }
}
