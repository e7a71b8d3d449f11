//! `enum group_type`, `struct sg_lb_stats` and the classification helpers fair.c shares
//! between the load balancer (`update_sg_lb_stats`) and the slow wakeup path
//! (`update_sg_wakeup_stats`).

use std::sync::atomic::Ordering;

use fairsim_topology::{GroupId, SchedDomains};

/// `enum group_type` (fair.c), in 6.12 order: the order is the pulling priority, and
/// groups are compared with `<` and `>`, lowest priority first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GroupType {
    /// `group_has_spare`: the group can run more tasks.
    #[default]
    HasSpare = 0,
    /// `group_fully_busy`: fully used, but the tasks do not compete for more cycles.
    FullyBusy = 1,
    /// `group_misfit_task`: a task does not fit its CPU's capacity.
    MisfitTask = 2,
    /// `group_smt_balance`: a fully busy SMT group whose task could move to an idle core.
    SmtBalance = 3,
    /// `group_asym_packing`: a higher-priority CPU is available (`SD_ASYM_PACKING`).
    AsymPacking = 4,
    /// `group_imbalanced`: affinity kept an earlier balance from evening the load.
    Imbalanced = 5,
    /// `group_overloaded`: more tasks than the group can serve.
    Overloaded = 6,
}

impl GroupType {
    /// The kernel's enumerator name.
    pub fn name(self) -> &'static str {
        match self {
            GroupType::HasSpare => "group_has_spare",
            GroupType::FullyBusy => "group_fully_busy",
            GroupType::MisfitTask => "group_misfit_task",
            GroupType::SmtBalance => "group_smt_balance",
            GroupType::AsymPacking => "group_asym_packing",
            GroupType::Imbalanced => "group_imbalanced",
            GroupType::Overloaded => "group_overloaded",
        }
    }
}

/// `struct sg_lb_stats` (fair.c): the statistics of one sched_group (without the
/// `CONFIG_NUMA_BALANCING` counters, which fairsim does not model).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SgLbStats {
    /// `avg_load`: group load scaled by the group's capacity.
    pub avg_load: u64,
    /// `group_load`: total load of the group's CPUs.
    pub group_load: u64,
    /// `group_capacity`.
    pub group_capacity: u64,
    /// `group_util`: total utilization.
    pub group_util: u64,
    /// `group_runnable`: total runnable average.
    pub group_runnable: u64,
    /// `sum_nr_running`: tasks of every class.
    pub sum_nr_running: u32,
    /// `sum_h_nr_running`: CFS tasks.
    pub sum_h_nr_running: u32,
    /// `idle_cpus`.
    pub idle_cpus: u32,
    /// `group_weight`.
    pub group_weight: u32,
    /// `group_type`.
    pub group_type: GroupType,
    /// `group_asym_packing`: tasks should move to the preferred CPU.
    pub group_asym_packing: u32,
    /// `group_smt_balance`: a task on a busy SMT core should move.
    pub group_smt_balance: u32,
    /// `group_misfit_task_load`: a CPU has a task too big for it.
    pub group_misfit_task_load: u64,
}

/// `group_has_capacity(imbalance_pct, sgs)` (fair.c): fewer tasks than CPUs, or the
/// utilization leaves a margin of `imbalance_pct` and the runnable average does not
/// show contention.
pub fn group_has_capacity(imbalance_pct: u32, sgs: &SgLbStats) -> bool {
    let pct = u64::from(imbalance_pct);
    if sgs.sum_nr_running < sgs.group_weight {
        return true;
    }
    if sgs.group_capacity * pct < sgs.group_runnable * 100 {
        return false;
    }
    if sgs.group_capacity * 100 > sgs.group_util * pct {
        return true;
    }
    false
}

/// `group_is_overloaded(imbalance_pct, sgs)` (fair.c): more tasks than CPUs and either
/// the utilization or the runnable average exceeds the capacity by the margin. It is not
/// `!group_has_capacity`: a group with exactly one task per CPU is neither.
pub fn group_is_overloaded(imbalance_pct: u32, sgs: &SgLbStats) -> bool {
    let pct = u64::from(imbalance_pct);
    if sgs.sum_nr_running <= sgs.group_weight {
        return false;
    }
    if sgs.group_capacity * 100 < sgs.group_util * pct {
        return true;
    }
    if sgs.group_capacity * pct < sgs.group_runnable * 100 {
        return true;
    }
    false
}

/// `sg_imbalanced(group)` (fair.c): the group's capacity object carries the imbalance
/// flag a child-level balance left.
pub fn sg_imbalanced(topo: &SchedDomains, group: GroupId) -> bool {
    topo.group_sgc(group).imbalance.load(Ordering::Relaxed) != 0
}

/// `group_classify(imbalance_pct, group, sgs)` (fair.c), with `sg_imbalanced(group)`
/// passed in as `imbalanced`. The checks run in the kernel's order.
pub fn group_classify(imbalance_pct: u32, imbalanced: bool, sgs: &SgLbStats) -> GroupType {
    if group_is_overloaded(imbalance_pct, sgs) {
        return GroupType::Overloaded;
    }
    if imbalanced {
        return GroupType::Imbalanced;
    }
    if sgs.group_asym_packing != 0 {
        return GroupType::AsymPacking;
    }
    if sgs.group_smt_balance != 0 {
        return GroupType::SmtBalance;
    }
    if sgs.group_misfit_task_load != 0 {
        return GroupType::MisfitTask;
    }
    if !group_has_capacity(imbalance_pct, sgs) {
        return GroupType::FullyBusy;
    }
    GroupType::HasSpare
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sgs(nr: u32, weight: u32, cap: u64, util: u64, runnable: u64) -> SgLbStats {
        SgLbStats {
            sum_nr_running: nr,
            group_weight: weight,
            group_capacity: cap,
            group_util: util,
            group_runnable: runnable,
            ..SgLbStats::default()
        }
    }

    #[test]
    fn order_is_pulling_priority() {
        assert!(GroupType::HasSpare < GroupType::FullyBusy);
        assert!(GroupType::MisfitTask < GroupType::SmtBalance);
        assert!(GroupType::AsymPacking < GroupType::Imbalanced);
        assert!(GroupType::Imbalanced < GroupType::Overloaded);
        assert_eq!(GroupType::Overloaded as u32, 6);
    }

    #[test]
    fn classify_follows_the_thresholds() {
        // Fewer tasks than CPUs: spare whatever the utilization.
        assert_eq!(
            group_classify(117, false, &sgs(1, 2, 2048, 2048, 2048)),
            GroupType::HasSpare
        );
        // Two tasks on two CPUs at 90% util: 2048*100 = 204800 > 1843*117 = 215631 is
        // false, so the group is fully busy but not overloaded (nr == weight).
        assert_eq!(
            group_classify(117, false, &sgs(2, 2, 2048, 1843, 1843)),
            GroupType::FullyBusy
        );
        // One more task than CPUs and util above capacity/1.17: overloaded.
        assert_eq!(
            group_classify(117, false, &sgs(3, 2, 2048, 1800, 1800)),
            GroupType::Overloaded
        );
        // One more task than CPUs but util and runnable low: not overloaded; it has
        // capacity since 2048*100 > 1000*117.
        assert_eq!(
            group_classify(117, false, &sgs(3, 2, 2048, 1000, 1000)),
            GroupType::HasSpare
        );
        // Runnable above capacity*1.17 alone makes it overloaded.
        assert_eq!(
            group_classify(117, false, &sgs(3, 2, 2048, 1000, 2400)),
            GroupType::Overloaded
        );
        // The imbalanced flag ranks below overloaded only.
        assert_eq!(
            group_classify(117, true, &sgs(1, 2, 2048, 0, 0)),
            GroupType::Imbalanced
        );
        let mut m = sgs(1, 2, 2048, 0, 0);
        m.group_misfit_task_load = 1;
        assert_eq!(group_classify(117, false, &m), GroupType::MisfitTask);
    }
}
