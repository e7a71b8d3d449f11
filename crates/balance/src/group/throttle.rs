//! Throttling and unthrottling a group runqueue (Linux 6.12.117's `throttle_cfs_rq`,
//! `unthrottle_cfs_rq`, `tg_throttle_down`/`tg_unthrottle_up`, `check_enqueue_throttle`
//! and `check_cfs_rq_runtime`): a throttled runqueue's entity leaves its parent with all
//! the tasks below it, which stay queued where they are until the quota comes back.

use crate::cfs_rq::{dequeue_entity, enqueue_entity, qflags, update_load_avg, NONE, TG};
use crate::entities::Entities;
use crate::Sched;

use super::{bandwidth, CfsRef, GroupId, GROUP_SE_BIT};

impl Sched {
    /// `cfs_rq_throttled(cfs_rq)`.
    pub(crate) fn h_throttled(&self, c: CfsRef) -> bool {
        match c {
            CfsRef::Root(_) => false,
            CfsRef::Group(i) => self.groups.cfs[i].bw.throttled,
        }
    }

    /// `throttled_hierarchy(cfs_rq)`: it or an ancestor is throttled.
    pub(crate) fn h_throttled_hierarchy(&self, c: CfsRef) -> bool {
        match c {
            CfsRef::Root(_) => false,
            CfsRef::Group(i) => self.groups.cfs[i].bw.throttle_count != 0,
        }
    }

    /// Group `g` and its descendants (`walk_tg_tree_from`), parents first.
    fn subtree(&self, g: GroupId) -> Vec<GroupId> {
        (g..self.groups.tgs.len())
            .filter(|&h| self.groups.ancestry(h).any(|a| a == g))
            .collect()
    }

    /// `tg_throttle_down` over the subtree: each runqueue's PELT clock stops at its first
    /// throttling level, and its own throttled time starts if it has entities.
    fn tg_throttle_down(&mut self, g: GroupId, cpu: usize) {
        let pelt = self.rqs[cpu].pelt.rq_clock_pelt();
        let clock = self.rqs[cpu].clock;
        for h in self.subtree(g) {
            let i = self.groups.idx(h, cpu);
            let cfs = &mut self.groups.cfs[i];
            if cfs.bw.throttle_count == 0 {
                cfs.bw.throttled_clock_pelt = pelt;
                if cfs.nr_running != 0 {
                    cfs.bw.throttled_clock_self = clock;
                }
            }
            cfs.bw.throttle_count += 1;
        }
    }

    /// `tg_unthrottle_up` over the subtree: the PELT clock resumes less the throttled
    /// time, and the own throttled time is added up.
    fn tg_unthrottle_up(&mut self, g: GroupId, cpu: usize) {
        let pelt = self.rqs[cpu].pelt.rq_clock_pelt();
        let clock = self.rqs[cpu].clock;
        for h in self.subtree(g).into_iter().rev() {
            let i = self.groups.idx(h, cpu);
            let bw = &mut self.groups.cfs[i].bw;
            bw.throttle_count -= 1;
            if bw.throttle_count == 0 {
                bw.throttled_clock_pelt_time += pelt.wrapping_sub(bw.throttled_clock_pelt);
                if bw.throttled_clock_self != 0 {
                    let delta = clock.saturating_sub(bw.throttled_clock_self);
                    bw.throttled_clock_self = 0;
                    bw.throttled_clock_self_time += delta;
                }
            }
        }
    }

    /// `throttle_cfs_rq(cfs_rq)` for group runqueue `i`: unless 1 ns of runtime can still
    /// be had, the runqueue joins its group's throttled list, its subtree's clocks stop,
    /// and its entity leaves the hierarchy with the tasks below it (counted off every
    /// ancestor and the CPU). Returns whether it was throttled.
    pub(crate) fn throttle_cfs_rq(&mut self, i: usize) -> bool {
        let (g, cpu) = self.groups.group_cpu_of(i);
        let now = self.rqs[cpu].clock;
        {
            let groups = &mut self.groups;
            let b = &mut groups.tgs[g].bw;
            let bw = &mut groups.cfs[i].bw;
            if bandwidth::assign_runtime(b, g, cpu, bw, 1, now, &mut groups.timer_arms) {
                return false;
            }
            b.throttled.push(i);
        }
        self.tg_throttle_down(g, cpu);
        let cfs = &self.groups.cfs[i];
        let (queued, runnable, mut idle, delayed) = (
            cfs.h_nr_queued as i32,
            cfs.h_nr_runnable as i32,
            cfs.idle_h_nr_running as i32,
            cfs.h_nr_delayed as i32,
        );
        let mut se = Some(GROUP_SE_BIT | i);
        let mut reached_root = true;
        while let Some(s) = se {
            let qc = self.h_cfs_of(s, cpu);
            if !self.h_on_rq(s) {
                reached_root = false;
                se = None;
                break;
            }
            let mut flags = qflags::SLEEP_WAKEUP | qflags::SPECIAL;
            if self.h_delayed(s) {
                flags |= qflags::DELAYED;
            }
            let (_, upd) = self.h_op(qc, cpu, |cfs, h, clocks, fair| {
                dequeue_entity(cfs, h, s, flags, clocks, fair)
            });
            if upd.resched {
                self.rqs[cpu].need_resched = true;
            }
            if self.h_se_is_idle(s) {
                idle = self.groups.cfs[i].h_nr_queued as i32;
            }
            self.h_count(qc, -queued, -runnable, -delayed, -idle);
            se = self.h_parent(s, cpu);
            if self.h_cfs(qc).load.weight != 0 {
                break;
            }
        }
        while let Some(s) = se {
            let qc = self.h_cfs_of(s, cpu);
            if !self.h_on_rq(s) {
                reached_root = false;
                break;
            }
            self.h_op(qc, cpu, |cfs, h, clocks, fair| {
                update_load_avg(cfs, h, s, clocks, NONE, fair);
                h.se_update_runnable(s);
            });
            if self.h_se_is_idle(s) {
                idle = self.groups.cfs[i].h_nr_queued as i32;
            }
            self.h_count(qc, -queued, -runnable, -delayed, -idle);
            se = self.h_parent(s, cpu);
        }
        if reached_root {
            // sub_nr_running
            self.rqs[cpu].nr_running -= queued as u32;
        }
        let cfs = &mut self.groups.cfs[i];
        cfs.bw.throttled = true;
        if cfs.nr_running != 0 {
            cfs.bw.throttled_clock = now;
        }
        self.pelt_tp_drain(cpu);
        self.trace_throttle(i);
        true
    }

    /// `unthrottle_cfs_rq(cfs_rq)` for group runqueue `i`: its throttled time is
    /// counted, its subtree's clocks resume, and its entity and the tasks below it
    /// rejoin the hierarchy up to the first throttled ancestor; an idle CPU that now has
    /// work reschedules.
    pub(crate) fn unthrottle_cfs_rq(&mut self, i: usize) {
        let (g, cpu) = self.groups.group_cpu_of(i);
        let now = self.rqs[cpu].clock;
        self.groups.cfs[i].bw.throttled = false;
        let tc = std::mem::take(&mut self.groups.cfs[i].bw.throttled_clock);
        let throttled_ns = if tc != 0 { now.saturating_sub(tc) } else { 0 };
        self.groups.tgs[g].bw.throttled_time += throttled_ns;
        self.trace_unthrottle(i, throttled_ns);
        self.groups.tgs[g].bw.throttled.retain(|&x| x != i);
        self.tg_unthrottle_up(g, cpu);
        self.unthrottle_requeue(i, cpu);
        self.pelt_tp_drain(cpu);
        if self.rqs[cpu].curr.is_none() && self.rqs[cpu].cfs.nr_running != 0 {
            self.resched_curr(cpu);
        }
    }

    /// The requeue half of `unthrottle_cfs_rq`: the runqueue's entity and the tasks below
    /// it rejoin the hierarchy, up to the first throttled ancestor (which ends the walk
    /// before the CPU counts them).
    fn unthrottle_requeue(&mut self, i: usize, cpu: usize) {
        let cfs = &self.groups.cfs[i];
        if cfs.load.weight == 0 {
            return;
        }
        let (queued, runnable, mut idle, delayed) = (
            cfs.h_nr_queued as i32,
            cfs.h_nr_runnable as i32,
            cfs.idle_h_nr_running as i32,
            cfs.h_nr_delayed as i32,
        );
        let mut se = Some(GROUP_SE_BIT | i);
        while let Some(s) = se {
            let qc = self.h_cfs_of(s, cpu);
            if self.h_delayed(s) {
                self.h_op(qc, cpu, |cfs, h, clocks, fair| {
                    dequeue_entity(
                        cfs,
                        h,
                        s,
                        qflags::SLEEP_WAKEUP | qflags::DELAYED,
                        clocks,
                        fair,
                    )
                });
            } else if self.h_on_rq(s) {
                break;
            }
            self.h_enqueue_entity(qc, s, qflags::SLEEP_WAKEUP, cpu);
            if self.h_se_is_idle(s) {
                idle = self.groups.cfs[i].h_nr_queued as i32;
            }
            self.h_count(qc, queued, runnable, delayed, idle);
            if self.h_throttled(qc) {
                return;
            }
            se = self.h_parent(s, cpu);
        }
        while let Some(s) = se {
            let qc = self.h_cfs_of(s, cpu);
            self.h_op(qc, cpu, |cfs, h, clocks, fair| {
                update_load_avg(cfs, h, s, clocks, TG, fair);
                h.se_update_runnable(s);
            });
            if self.h_se_is_idle(s) {
                idle = self.groups.cfs[i].h_nr_queued as i32;
            }
            self.h_count(qc, queued, runnable, delayed, idle);
            if self.h_throttled(qc) {
                return;
            }
            se = self.h_parent(s, cpu);
        }
        self.add_nr_running(cpu, queued as u32);
    }

    /// `add_nr_running(rq, count)`: a CPU that now has two or more tasks makes its root
    /// domain overloaded.
    pub(crate) fn add_nr_running(&mut self, cpu: usize, count: u32) {
        let rq = &mut self.rqs[cpu];
        let prev = rq.nr_running;
        rq.nr_running += count;
        if prev < 2 && rq.nr_running >= 2 {
            self.lb.set_rd_overloaded(&self.topo, cpu, true);
        }
    }

    /// `enqueue_entity(cfs_rq, se, flags)` on runqueue `c` of `cpu` with what the kernel
    /// does at its end for the first entity of a group runqueue: `check_enqueue_throttle`
    /// and, inside a throttled hierarchy, the start of its throttled time.
    pub(crate) fn h_enqueue_entity(&mut self, c: CfsRef, s: usize, flags: u32, cpu: usize) {
        let upd = self.h_op(c, cpu, |cfs, h, clocks, fair| {
            enqueue_entity(cfs, h, s, flags, clocks, fair)
        });
        if upd.resched {
            self.rqs[cpu].need_resched = true;
        }
        let CfsRef::Group(i) = c else {
            return;
        };
        if self.groups.cfs[i].nr_running != 1 {
            return;
        }
        self.check_enqueue_throttle(i);
        let clock = self.rqs[cpu].clock;
        let bw = &mut self.groups.cfs[i].bw;
        if bw.throttle_count != 0 {
            if bw.throttled && bw.throttled_clock == 0 {
                bw.throttled_clock = clock;
            }
            if bw.throttled_clock_self == 0 {
                bw.throttled_clock_self = clock;
            }
        }
    }

    /// `check_enqueue_throttle(cfs_rq)`: a group runqueue that wakes up with its runtime
    /// spent is throttled at once, before it can run.
    fn check_enqueue_throttle(&mut self, i: usize) {
        let cfs = &self.groups.cfs[i];
        if !cfs.bw.runtime_enabled || cfs.curr.is_some() || cfs.bw.throttled {
            return;
        }
        let (_, cpu) = self.groups.group_cpu_of(i);
        self.account_cfs_rq_runtime(CfsRef::Group(i), cpu, 0);
        if self.groups.cfs[i].bw.runtime_remaining <= 0 {
            self.throttle_cfs_rq(i);
        }
    }

    /// `account_cfs_rq_runtime(cfs_rq, delta)` outside `update_curr`.
    pub(crate) fn account_cfs_rq_runtime(&mut self, c: CfsRef, cpu: usize, delta: u64) {
        if !self.h_cfs(c).bw.runtime_enabled {
            return;
        }
        self.h_op(c, cpu, |cfs, h, _, _| h.account_runtime(cfs, delta));
    }

    /// `check_cfs_rq_runtime(cfs_rq)`: a runqueue that has spent its runtime is throttled
    /// (true), also when it already was.
    pub(crate) fn check_cfs_rq_runtime(&mut self, c: CfsRef) -> bool {
        let CfsRef::Group(i) = c else {
            return false;
        };
        let bw = &self.groups.cfs[i].bw;
        if !bw.runtime_enabled || bw.runtime_remaining > 0 {
            return false;
        }
        if bw.throttled {
            return true;
        }
        self.throttle_cfs_rq(i)
    }

    /// `throttled_lb_pair(task_group(p), src, dst)`: a task whose group is throttled on
    /// either CPU stays where it is.
    pub(crate) fn throttled_lb_pair(&self, p: crate::task::TaskId, src: usize, dst: usize) -> bool {
        let g = self.groups.group_of(p);
        if g == super::ROOT_GROUP {
            return false;
        }
        self.groups.cfs[self.groups.idx(g, src)].bw.throttle_count != 0
            || self.groups.cfs[self.groups.idx(g, dst)].bw.throttle_count != 0
    }
}
