//! The entity store of a machine with task groups: tasks' entities and the groups'
//! per-CPU entities behind one id space (a group entity's id has [`GROUP_SE_BIT`] set).

use fairsim_pelt::CfsRqAvg;

use super::{GroupId, TaskGroups, GROUP_SE_BIT, ROOT_GROUP};
use crate::cfs_rq::CfsRq;
use crate::entities::Entities;
use crate::task::{SchedEntity, Task};
use crate::weight::scale_load_down;

/// The step from a group to its parent's runqueue, kept with [`CfsRef`] (rather than
/// with the rest of `TaskGroups`' methods in [`super`]) so that the groups' data does
/// not import the store.
impl TaskGroups {
    /// The runqueue a group's entity on `cpu` is queued on (`cfs_rq_of(tg->se[cpu])`):
    /// its parent group's runqueue there.
    pub(crate) fn parent_cfs(&self, g: GroupId, cpu: usize) -> CfsRef {
        CfsRef::of_group(self, self.tgs[g].parent.unwrap_or(ROOT_GROUP), cpu)
    }
}

/// Which runqueue: a CPU's root (`rq->cfs`) or a group's on some CPU (an index into
/// [`TaskGroups`]' per-CPU arrays).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CfsRef {
    /// `&cpu_rq(cpu)->cfs`.
    Root(usize),
    /// `tg->cfs_rq[cpu]` at this index.
    Group(usize),
}

impl CfsRef {
    /// Group `g`'s runqueue on `cpu` (the CPU's own for the root group).
    pub(crate) fn of_group(groups: &TaskGroups, g: GroupId, cpu: usize) -> CfsRef {
        if g == ROOT_GROUP {
            CfsRef::Root(cpu)
        } else {
            CfsRef::Group(groups.idx(g, cpu))
        }
    }
}

/// Tasks and task groups as one entity store, with what the group hooks read: the
/// clock `update_tg_load_avg` rate-limits by (`sched_clock_cpu`, here the runqueue's
/// clock) and the entities whose `next` buddy marks were cleared.
///
/// The group runqueues are borrowed around a hole: the one the operation runs on is
/// passed to it separately, and the hooks only read the runqueues of group entities
/// queued on it, which are its children.
pub(crate) struct Hier<'a> {
    pub(crate) tasks: &'a mut [Task],
    pub(crate) se: &'a mut [SchedEntity],
    pub(crate) meta: &'a mut [super::GroupSeMeta],
    pub(crate) tgs: &'a mut [super::TaskGroup],
    pub(crate) timer_arms: &'a mut Vec<super::BwTimer>,
    /// Group runqueues before the hole.
    pub(crate) cfs_lo: &'a mut [CfsRq],
    /// Group runqueues after the hole.
    pub(crate) cfs_hi: &'a mut [CfsRq],
    /// The index of the runqueue operated on (`usize::MAX` for a CPU's root).
    pub(crate) hole: usize,
    pub(crate) clock: u64,
    /// The CPU whose runqueue the operation runs on.
    pub(crate) cpu: usize,
    pub(crate) cleared_next: &'a mut Vec<usize>,
    /// A runqueue under bandwidth control ran out with an entity running: the CPU must
    /// reschedule (`resched_curr` in `__account_cfs_rq_runtime`).
    pub(crate) bw_resched: bool,
}

impl Hier<'_> {
    /// Group runqueue `i` (never the hole).
    fn gcfs(&mut self, i: usize) -> &mut CfsRq {
        if i < self.hole {
            &mut self.cfs_lo[i]
        } else {
            &mut self.cfs_hi[i - self.hole - 1]
        }
    }

    /// Group runqueue `i` (never the hole), to read.
    fn gcfs_ref(&self, i: usize) -> &CfsRq {
        if i < self.hole {
            &self.cfs_lo[i]
        } else {
            &self.cfs_hi[i - self.hole - 1]
        }
    }
}

impl Entities for Hier<'_> {
    const GROUPS: bool = true;

    #[inline]
    fn se(&self, id: usize) -> &SchedEntity {
        if id & GROUP_SE_BIT != 0 {
            &self.se[id & !GROUP_SE_BIT]
        } else {
            &self.tasks[id].se
        }
    }

    #[inline]
    fn se_mut(&mut self, id: usize) -> &mut SchedEntity {
        if id & GROUP_SE_BIT != 0 {
            &mut self.se[id & !GROUP_SE_BIT]
        } else {
            &mut self.tasks[id].se
        }
    }

    fn migrating(&self, id: usize) -> bool {
        id & GROUP_SE_BIT == 0 && self.tasks[id].on_rq_migrating()
    }

    fn se_runnable(&self, id: usize) -> u64 {
        if id & GROUP_SE_BIT != 0 {
            self.meta[id & !GROUP_SE_BIT].runnable_weight
        } else {
            let se = &self.tasks[id].se;
            u64::from(se.on_rq && !se.sched_delayed)
        }
    }

    fn is_task(&self, id: usize) -> bool {
        id & GROUP_SE_BIT == 0
    }

    fn propagate(&mut self, id: usize, cfs: &mut CfsRqAvg) -> bool {
        if id & GROUP_SE_BIT == 0 {
            return false;
        }
        let i = id & !GROUP_SE_BIT;
        let se_weight = scale_load_down(self.se[i].load.weight);
        let gcfs = if i < self.hole {
            &mut self.cfs_lo[i]
        } else {
            &mut self.cfs_hi[i - self.hole - 1]
        };
        let se = &mut self.se[i];
        let gcfs_load = scale_load_down(gcfs.load.weight);
        fairsim_pelt::propagate_entity_load_avg(
            cfs,
            &mut se.avg,
            se_weight,
            &mut gcfs.avg,
            gcfs_load,
        )
    }

    fn se_update_runnable(&mut self, id: usize) {
        if id & GROUP_SE_BIT != 0 {
            let i = id & !GROUP_SE_BIT;
            let runnable = u64::from(self.gcfs(i).h_nr_runnable);
            self.meta[i].runnable_weight = runnable;
        }
    }

    fn update_tg_load_avg(&mut self, cfs: &mut CfsRq) {
        super::shares::update_tg_load_avg(&mut self.tgs[cfs.tg], cfs, self.clock);
    }

    fn account_runtime(&mut self, cfs: &mut CfsRq, delta: u64) {
        self.bw_resched |= super::runtime::account_runtime(
            self.tgs,
            self.timer_arms,
            cfs,
            self.cpu,
            delta,
            self.clock,
        );
    }

    fn return_runtime(&mut self, cfs: &mut CfsRq) {
        super::runtime::return_runtime(self.tgs, self.timer_arms, cfs, self.clock);
    }

    fn next_cleared(&mut self, id: usize) {
        self.cleared_next.push(id);
    }

    fn group_shares(&self, id: usize) -> Option<u64> {
        if id & GROUP_SE_BIT == 0 {
            return None;
        }
        let i = id & !GROUP_SE_BIT;
        let gcfs = self.gcfs_ref(i);
        // An empty group keeps its weight (DELAY_DEQUEUE), and so does a throttled one.
        if gcfs.load.weight == 0 || gcfs.bw.throttle_count != 0 {
            return None;
        }
        Some(super::shares::calc_group_shares(&self.tgs[gcfs.tg], gcfs))
    }
}
