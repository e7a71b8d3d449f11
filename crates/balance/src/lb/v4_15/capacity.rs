//! What 4.15 added to capacity tracking (kernel/sched/fair.c of `sndrzt/linux-4.15` @
//! 6ea06264; 4.16.13 is the same): each group's `min_capacity`, the smallest capacity of
//! its CPUs, which `group_smaller_cpu_capacity` ([`crate::lb::v4_15::find_busiest`])
//! compares. The rest is 4.5's ([`crate::lb::v4_5::capacity`]).

use fairsim_topology::GroupId;

use crate::sched::Sched;

impl Sched {
    /// `sgc->min_capacity` of a group made of `parts` (the child domain's groups, or each
    /// CPU's lowest group below an overlapping level), as 4.15's `update_group_capacity`
    /// computes it. Below an overlapping level 4.15 takes the minimum of the running sum
    /// of capacities rather than of each CPU's capacity, which is the first CPU's
    /// capacity; that is what it computes, so that is what this returns.
    pub fn group_min_capacity_v4_15(&self, parts: &[GroupId], overlap: bool) -> u64 {
        let st = self.legacy();
        let mut min = u64::MAX;
        let mut capacity = 0u64;
        for &g in parts {
            let sgc = self.topo.group(g).sgc;
            capacity += st.sgp_power[sgc];
            min = if overlap {
                min.min(capacity)
            } else {
                min.min(st.sgc_min_capacity[sgc])
            };
        }
        min
    }
}
