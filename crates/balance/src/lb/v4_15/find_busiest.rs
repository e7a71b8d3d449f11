//! What 4.15 changed in `update_sd_pick_busiest` (kernel/sched/fair.c of
//! `sndrzt/linux-4.15` @ 6ea06264; 4.16.13 is the same): on a domain with
//! `SD_ASYM_CPUCAPACITY`, a candidate group that runs at most one task per CPU and whose
//! CPUs are bigger than the local group's (`group_smaller_cpu_capacity(sds->local, sg)`) is
//! not picked, because moving its tasks to smaller CPUs would lose throughput. The other
//! 4.15 differences in the busiest-group search sit at their places in
//! [`crate::lb::v4_5::find_busiest`].

use fairsim_topology::GroupId;

use crate::lb::env::LbEnv;
use crate::lb::v4_5::find_busiest::{SdLbStatsV4_5, SgLbStatsV4_5};
use crate::sched::Sched;

/// `capacity_margin` of 4.15: about 20% (1280/1024).
pub const CAPACITY_MARGIN: u64 = 1280;

impl Sched {
    /// `group_smaller_cpu_capacity(sg, ref)`: `sg`'s smallest CPU is smaller than `ref`'s
    /// by more than `capacity_margin`.
    pub fn group_smaller_cpu_capacity_v4_15(&self, sg: GroupId, reference: GroupId) -> bool {
        let st = self.legacy();
        let min = |g: GroupId| st.sgc_min_capacity[self.topo.group(g).sgc];
        min(sg) * CAPACITY_MARGIN < min(reference) * 1024
    }

    /// The clause 4.15 put in `update_sd_pick_busiest` after the class and `avg_load`
    /// tests: true when the candidate `sg` is kept, not picked, because the domain has
    /// asymmetric capacities, `sg` runs at most one task per CPU and the local group's
    /// CPUs are smaller than its own.
    pub fn asym_cap_keeps_group_v4_15(
        &self,
        env: &LbEnv,
        sds: &SdLbStatsV4_5,
        sg: GroupId,
        sgs: &SgLbStatsV4_5,
    ) -> bool {
        if !self.legacy().sd[env.sd].asym_cpucapacity {
            return false;
        }
        let Some(local) = sds.local else {
            return false;
        };
        sgs.sum_nr_running <= sgs.group_weight && self.group_smaller_cpu_capacity_v4_15(local, sg)
    }
}
