//! Linux 4.5's task migration for balancing (kernel/sched/fair.c): `task_hot`,
//! `can_migrate_task`, `detach_tasks` and `detach_one_task`; `attach_tasks` and
//! `attach_one_task` are 6.12's, which do the same (lock the destination, enqueue, check
//! preemption, last detached first).
//!
//! Differences from 3.9's `move_tasks` ([`crate::lb::v3_9::balance`]): tasks are detached
//! under the source's lock and attached after it is dropped; `can_migrate_task` runs
//! before the load tests (so a hot task's forced migration is counted even when its load
//! then keeps it); a pinned task may be retried on another CPU of the local group only
//! outside newly idle and active balancing, chosen among `env->cpus` (`LBF_DST_PINNED`);
//! a busy source is never emptied by an idle balance (`nr_running <= 1` stops it);
//! `task_hot` counts the `last` buddy as hot too, and the load is PELT's
//! (`task_h_load` is `se.avg.load_avg` without group scheduling).
//!
//! 4.15 walks the list from its tail (the least recently picked task, its pick moving
//! tasks to the head) and rotates a rejected task to the head; 4.5 walks from the head
//! (the most recently enqueued) and rotates to the tail (pick does not reorder the list in
//! 4.5). `detach_one_task` walks the same way round. Neither kernel's configuration
//! for the seeds' machines is assumed `CONFIG_PREEMPT` (distribution x86 kernels are
//! voluntary-preemption), so a newly idle balance does not stop at its first task.
//!
//! Not modelled: `SCHED_IDLE` tasks (never hot in 4.x; fairsim has no such policy),
//! `sysctl_sched_migration_cost = -1` (always hot), throttled group pairs, and 4.15's
//! NUMA locality test (`migrate_degrades_locality`, only with NUMA balancing).

use crate::features::Feature;
use crate::lb::env::{
    LbEnv, LBF_ALL_PINNED, LBF_DST_PINNED, LBF_NEED_BREAK, LBF_SOME_PINNED, SCHED_NR_MIGRATE_BREAK,
};
use crate::lb::era::Balancer;
use crate::sched::Sched;
use crate::stats::CpuIdleType;
use crate::task::TaskId;

impl Sched {
    /// `task_h_load(p)` of 4.5 without group scheduling: `p->se.avg.load_avg`.
    pub fn task_h_load_v4_5(&self, p: TaskId) -> u64 {
        self.tasks[p].se.avg.load_avg
    }

    /// `task_hot(p, env)` of 4.5: the next or last buddy of the source when the
    /// destination is busy, or a task that ran within `sysctl_sched_migration_cost`.
    pub fn task_hot_v4_5(&self, p: TaskId, env: &LbEnv) -> bool {
        let src = &self.rqs[env.src_cpu];
        if self.fair.features.has(Feature::CACHE_HOT_BUDDY)
            && self.nr_running_v3_9(env.dst_cpu) != 0
            && (src.cfs.next == Some(p) || src.cfs.last == Some(p))
        {
            return true;
        }
        let cost = self.params.migration_cost;
        // `sysctl_sched_migration_cost == -1`: the unsigned int written as -1 makes every
        // task hot.
        if cost == crate::rq::MIGRATION_COST_ALWAYS_HOT {
            return true;
        }
        if cost == 0 {
            return false;
        }
        let delta = src.clock_task() as i64 - self.tasks[p].se.exec_start as i64;
        delta < cost as i64
    }

    /// `can_migrate_task(p, env)` of 4.5: affinity (for a periodic balance, remembering a
    /// CPU of the local group among `env->cpus` the task may use), not running, and not
    /// cache hot unless balancing has failed more than `cache_nice_tries` times. `grpmask`
    /// is false where 4.5 has no `dst_grpmask` (active balance); a newly idle balance has
    /// none either (4.5 clears it, 4.15 tests `CPU_NEWLY_IDLE`).
    pub fn can_migrate_task_v4_5(&mut self, p: TaskId, env: &mut LbEnv, grpmask: bool) -> bool {
        self.work.tasks_examined += 1;
        if !self.tasks[p].allowed_on(env.dst_cpu) {
            env.flags |= LBF_SOME_PINNED;
            if !grpmask || env.idle == CpuIdleType::NewlyIdle || env.flags & LBF_DST_PINNED != 0 {
                return false;
            }
            let first = env
                .dst_grpmask
                .and(&env.cpus)
                .iter()
                .find(|&c| self.tasks[p].allowed_on(c));
            if let Some(c) = first {
                env.flags |= LBF_DST_PINNED;
                env.new_dst_cpu = c;
            }
            return false;
        }
        // At least one task could run on the destination.
        env.flags &= !LBF_ALL_PINNED;
        if self.rqs[env.src_cpu].curr == Some(p) {
            return false;
        }
        let hot = self.task_hot_v4_5(p, env);
        let tries = self.legacy().sd[env.sd].cache_nice_tries;
        if !hot || self.lb.sd[env.sd].nr_balance_failed > tries {
            if hot {
                self.sd_stats[env.sd].lb_hot_gained[env.idle as usize] += 1;
            }
            return true;
        }
        false
    }

    /// `detach_task(p, env)`: dequeue from the source as migrating and retarget.
    fn detach_task_v4_5(&mut self, p: TaskId, env: &LbEnv) {
        self.deactivate_task(env.src_cpu, p, 0);
        self.set_task_cpu(p, env.dst_cpu);
        self.work.tasks_moved += 1;
    }

    /// The task `detach_tasks` looks at next: the list's head in 4.5, its tail in 4.15.
    fn lb_next_task_v4_5(&self, src: usize) -> Option<TaskId> {
        let tasks = &self.rqs[src].cfs_tasks;
        match self.balancer() {
            Balancer::V4_15 => tasks.last().copied(),
            _ => tasks.first().copied(),
        }
    }

    /// `goto next` of `detach_tasks`: 4.5's `list_move_tail` of the head, 4.15's
    /// `list_move` of the tail to the head.
    fn lb_skip_task_v4_5(&mut self, src: usize) {
        let v4_15 = self.balancer() == Balancer::V4_15;
        let rq = &mut self.rqs[src];
        if v4_15 {
            if let Some(p) = rq.cfs_tasks.pop() {
                rq.cfs_tasks.insert(0, p);
            }
        } else if !rq.cfs_tasks.is_empty() {
            let p = rq.cfs_tasks.remove(0);
            rq.cfs_tasks.push(p);
        }
    }

    /// `detach_tasks(env)` of 4.5: walk the source's tasks, detaching those that may move
    /// and whose load fits twice into the imbalance, until it is covered. Returns how
    /// many were detached (they wait in `env.tasks`).
    pub fn detach_tasks_v4_5(&mut self, env: &mut LbEnv) -> u32 {
        if env.imbalance <= 0 {
            return 0;
        }
        let src = env.src_cpu;
        let mut detached = 0u32;
        while let Some(p) = self.lb_next_task_v4_5(src) {
            // Do not steal all: the source would then be treated likewise.
            if env.idle != CpuIdleType::NotIdle && self.nr_running_v3_9(src) <= 1 {
                break;
            }
            env.loop_ += 1;
            // We have more or less seen every task there is.
            if env.loop_ > env.loop_max {
                break;
            }
            // Take a breather every sched_nr_migrate_break tasks.
            if env.loop_ > env.loop_break {
                env.loop_break += SCHED_NR_MIGRATE_BREAK;
                env.flags |= LBF_NEED_BREAK;
                break;
            }
            let take = self.can_migrate_task_v4_5(p, env, true) && {
                let load = self.task_h_load_v4_5(p);
                let failed = self.lb.sd[env.sd].nr_balance_failed;
                let tiny = self.fair.features.has(Feature::LB_MIN) && load < 16 && failed == 0;
                !tiny && (load / 2) as i64 <= env.imbalance
            };
            if !take {
                self.lb_skip_task_v4_5(src);
                continue;
            }
            let load = self.task_h_load_v4_5(p);
            self.detach_task_v4_5(p, env);
            env.tasks.push(p);
            detached += 1;
            env.imbalance -= load as i64;
            // Only up to the prescribed amount of weighted load.
            if env.imbalance <= 0 {
                break;
            }
        }
        self.sd_stats[env.sd].lb_gained[env.idle as usize] += u64::from(detached);
        detached
    }

    /// `detach_one_task(env)` for active balance: the first task (4.5 from the head, 4.15
    /// from the tail) that may move.
    pub fn detach_one_task_v4_5(&mut self, env: &mut LbEnv) -> Option<TaskId> {
        let mut tasks = self.rqs[env.src_cpu].cfs_tasks.clone();
        if self.balancer() == Balancer::V4_15 {
            tasks.reverse();
        }
        for p in tasks {
            if !self.can_migrate_task_v4_5(p, env, false) {
                continue;
            }
            self.detach_task_v4_5(p, env);
            self.sd_stats[env.sd].lb_gained[env.idle as usize] += 1;
            return Some(p);
        }
        None
    }
}
