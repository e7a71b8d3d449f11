//! The group runqueues' part of `__update_blocked_fair` (Linux 6.12.117): each group
//! runqueue of a CPU decays its blocked load, passes it to the group's load and
//! propagates pending changes to its entity's parent runqueue, children before parents.

use fairsim_pelt::{update_cfs_rq_load_avg, CfsRqInputs};

use crate::cfs_rq::{update_load_avg, TG};
use crate::weight::scale_load_down;
use crate::Sched;

use super::{CfsRef, GROUP_SE_BIT};

impl Sched {
    /// Walks `cpu`'s group runqueues bottom-up (the kernel's leaf list; here every group
    /// in reverse creation order, which puts each child before its parent) before the
    /// root's own update. Returns whether any of them still has blocked load to decay
    /// (`cfs_rq_has_blocked`). The kernel drops fully decayed runqueues from its list;
    /// walking them too changes nothing, as their sums are zero.
    pub(crate) fn update_blocked_groups(&mut self, cpu: usize) -> bool {
        let mut has_blocked = false;
        for g in (1..self.groups.tgs.len()).rev() {
            let i = self.groups.idx(g, cpu);
            // A throttled hierarchy is off the leaf list (tg_throttle_down): its load
            // stays frozen until it is unthrottled.
            if self.groups.cfs[i].bw.throttle_count != 0 {
                continue;
            }
            let bw = &self.groups.cfs[i].bw;
            let now_pelt = self.rqs[cpu]
                .pelt
                .rq_clock_pelt()
                .wrapping_sub(bw.throttled_clock_pelt_time);
            let clock = self.rqs[cpu].clock;
            {
                let cfs = &mut self.groups.cfs[i];
                let inp = CfsRqInputs {
                    load: scale_load_down(cfs.load.weight),
                    runnable: u64::from(cfs.h_nr_runnable),
                    running: cfs.curr.is_some(),
                };
                self.work.pelt_cfs_rq_updates += 1;
                if update_cfs_rq_load_avg(now_pelt, &mut cfs.avg, inp) {
                    super::shares::update_tg_load_avg(&mut self.groups.tgs[g], cfs, clock);
                }
            }
            // skip_blocked_update: an entity with no load or utilisation and nothing to
            // propagate needs no decay.
            let se = &self.groups.se[i];
            let skip =
                se.avg.load_avg == 0 && se.avg.util_avg == 0 && !self.groups.cfs[i].avg.propagate;
            if !skip {
                let id = GROUP_SE_BIT | i;
                let c = self.h_cfs_of(id, cpu);
                self.h_update_entity(c, id, cpu);
            }
            let a = &self.groups.cfs[i].avg.avg;
            has_blocked |= a.load_avg != 0 || a.util_avg != 0 || a.runnable_avg != 0;
        }
        has_blocked
    }

    /// `update_load_avg(cfs_rq_of(se), se, UPDATE_TG)` for a group entity on `cpu`.
    fn h_update_entity(&mut self, c: CfsRef, id: usize, cpu: usize) {
        self.h_op(c, cpu, |cfs, h, clocks, fair| {
            update_load_avg(cfs, h, id, clocks, TG, fair)
        });
    }
}
