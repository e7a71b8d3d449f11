//! The balancer's hierarchical load: `update_cfs_rq_h_load` and `task_h_load`
//! (Linux 6.12.117, `CONFIG_FAIR_GROUP_SCHED`).

use crate::task::TaskId;
use crate::Sched;

use super::CfsRef;

impl Sched {
    /// `update_cfs_rq_h_load(cfs_rq)`: each runqueue's share of its CPU's root load,
    /// computed top-down from the root (`h_load` = the root's `load_avg`) through each
    /// group entity's part of its parent's load, `h_load * se.load_avg / (load_avg + 1)`.
    /// Cached per jiffy: the walk up stops at the first runqueue already computed in this
    /// jiffy, and a runqueue computed in this jiffy is not recomputed.
    fn update_cfs_rq_h_load(&self, c: CfsRef, cpu: usize) {
        let now = self.jiffies_now();
        if self.h_cfs(c).last_h_load_update.get() == now {
            return;
        }
        // The entities from this runqueue's group entity up: the kernel's h_load_next
        // links, kept here as a list.
        let mut path = Vec::new();
        let mut top = c;
        let mut se = match c {
            CfsRef::Root(_) => None,
            CfsRef::Group(i) => Some(super::GROUP_SE_BIT | i),
        };
        let mut reached_root = true;
        while let Some(s) = se {
            let pc = self.h_cfs_of(s, cpu);
            path.push(s);
            top = pc;
            if self.h_cfs(pc).last_h_load_update.get() == now {
                reached_root = false;
                break;
            }
            se = self.h_parent(s, cpu);
        }
        if reached_root {
            let root = self.h_cfs(top);
            root.h_load.set(root.avg.avg.load_avg);
            root.last_h_load_update.set(now);
        }
        let mut cfs = top;
        for &s in path.iter().rev() {
            let parent = self.h_cfs(cfs);
            let se_load = self.groups.se[s & !super::GROUP_SE_BIT].avg.load_avg;
            let load = parent.h_load.get() * se_load / (parent.avg.avg.load_avg + 1);
            cfs = CfsRef::Group(s & !super::GROUP_SE_BIT);
            let child = self.h_cfs(cfs);
            child.h_load.set(load);
            child.last_h_load_update.set(now);
        }
    }

    /// `task_h_load(p)` with groups: the task's share of its runqueue's hierarchical load.
    pub(crate) fn task_h_load_hier(&self, p: TaskId) -> u64 {
        let cpu = self.tasks[p].cpu;
        let c = self.h_cfs_of(p, cpu);
        self.update_cfs_rq_h_load(c, cpu);
        let cfs = self.h_cfs(c);
        self.tasks[p].se.avg.load_avg * cfs.h_load.get() / (cfs.avg.avg.load_avg + 1)
    }
}
