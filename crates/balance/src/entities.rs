//! The entities an EEVDF runqueue orders: the store [`crate::cfs_rq`]'s operations read
//! and write `struct sched_entity` through.
//!
//! Without task groups every entity is a task's and the store is the task table; with
//! groups, [`crate::group::Hier`] also holds the groups' entities, and the hooks below do
//! what the kernel does only for group entities (`propagate_entity_load_avg`,
//! `se_update_runnable`, `update_cfs_group`, `update_tg_load_avg`). The flat store's
//! hooks are empty and `GROUPS` is false, so its monomorphised operations are the ones
//! fairsim ran before groups existed.

use fairsim_pelt::CfsRqAvg;

use crate::cfs_rq::CfsRq;
use crate::task::{SchedEntity, Task};

/// A store of scheduling entities, each named by a `usize` id.
pub trait Entities {
    /// Whether the store may hold group entities (false: the hooks are never needed).
    const GROUPS: bool;

    /// The entity `id`.
    fn se(&self, id: usize) -> &SchedEntity;

    /// The entity `id`, to change it.
    fn se_mut(&mut self, id: usize) -> &mut SchedEntity;

    /// `entity_is_task(se) && task_on_rq_migrating(task_of(se))`.
    fn migrating(&self, id: usize) -> bool;

    /// `se_runnable(se)`: a task's `on_rq` unless it is delayed; a group entity's
    /// `runnable_weight`.
    fn se_runnable(&self, id: usize) -> u64 {
        let se = self.se(id);
        u64::from(se.on_rq && !se.sched_delayed)
    }

    /// `entity_is_task(se)`.
    fn is_task(&self, _id: usize) -> bool {
        true
    }

    /// `propagate_entity_load_avg(se)` into the parent runqueue's averages `cfs`: false
    /// for a task.
    fn propagate(&mut self, _id: usize, _cfs: &mut CfsRqAvg) -> bool {
        false
    }

    /// `se_update_runnable(se)`: a group entity's `runnable_weight` follows its runqueue.
    fn se_update_runnable(&mut self, _id: usize) {}

    /// `update_tg_load_avg(cfs_rq)`: a group runqueue's contribution to its group's load.
    fn update_tg_load_avg(&mut self, _cfs: &mut CfsRq) {}

    /// `clear_buddies` cleared `se` as its runqueue's `next`: the hierarchy walk must
    /// clear the ancestors that are their runqueues' `next` too (`__clear_buddies_next`).
    fn next_cleared(&mut self, _id: usize) {}

    /// `__account_cfs_rq_runtime(cfs_rq, delta_exec)`: a runqueue under bandwidth
    /// control pays `delta` of its runtime and asks its group for more when it runs out.
    fn account_runtime(&mut self, _cfs: &mut CfsRq, _delta: u64) {}

    /// `__return_cfs_rq_runtime(cfs_rq)`: an emptied runqueue under bandwidth control
    /// hands its unused runtime (beyond 1 ms) back to its group.
    fn return_runtime(&mut self, _cfs: &mut CfsRq) {}

    /// What `update_cfs_group(se)` would set the entity's weight to
    /// (`calc_group_shares`); `None` for a task, or a group entity whose runqueue is
    /// empty (its weight is kept).
    fn group_shares(&self, _id: usize) -> Option<u64> {
        None
    }
}

impl Entities for [Task] {
    const GROUPS: bool = false;

    #[inline]
    fn se(&self, id: usize) -> &SchedEntity {
        &self[id].se
    }

    #[inline]
    fn se_mut(&mut self, id: usize) -> &mut SchedEntity {
        &mut self[id].se
    }

    #[inline]
    fn migrating(&self, id: usize) -> bool {
        self[id].on_rq_migrating()
    }
}

/// The task table as the scheduler keeps it: the slice's store.
impl Entities for Vec<Task> {
    const GROUPS: bool = false;

    #[inline]
    fn se(&self, id: usize) -> &SchedEntity {
        self.as_slice().se(id)
    }

    #[inline]
    fn se_mut(&mut self, id: usize) -> &mut SchedEntity {
        self.as_mut_slice().se_mut(id)
    }

    #[inline]
    fn migrating(&self, id: usize) -> bool {
        self.as_slice().migrating(id)
    }
}
