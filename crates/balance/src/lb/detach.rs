//! Moving tasks: `can_migrate_task` with `task_hot`, `detach_task`, `detach_tasks`,
//! `detach_one_task`, and the attach side.

use crate::features::Feature;
use crate::lb::env::{
    LbEnv, MigrationType, LBF_ACTIVE_LB, LBF_ALL_PINNED, LBF_DST_PINNED, LBF_NEED_BREAK,
    LBF_SOME_PINNED, SCHED_NR_MIGRATE_BREAK,
};
use crate::sched::Sched;
use crate::stats::CpuIdleType;
use crate::task::TaskId;
use fairsim_topology::SdFlags;

/// `shr_bound(val, shift)`: `val >> shift` with the shift capped below the word size.
fn shr_bound(val: u64, shift: u32) -> u64 {
    val >> shift.min(63)
}

impl Sched {
    /// `task_hot(p, env)`: the task ran on its CPU within `sysctl_sched_migration_cost`
    /// (or is the next buddy of a busy destination), so its cache is probably warm.
    pub fn task_hot(&self, p: TaskId, env: &LbEnv) -> bool {
        if self
            .topo
            .domain(env.sd)
            .flags
            .contains(SdFlags::SHARE_CPUCAPACITY)
        {
            return false;
        }
        let src = &self.rqs[env.src_cpu];
        if self.fair.features.has(Feature::CACHE_HOT_BUDDY)
            && self.rqs[env.dst_cpu].nr_running != 0
            && src.cfs.next == Some(p)
        {
            return true;
        }
        let cost = self.params.migration_cost;
        if cost == 0 {
            return false;
        }
        let delta = src.clock_task() as i64 - self.tasks[p].se.exec_start as i64;
        delta < cost as i64
    }

    /// `can_migrate_task(p, env)`: affinity (noting where a pinned task could go
    /// instead), not running, and not cache hot unless balancing keeps failing. Returns
    /// (allowed, task was hot).
    pub fn can_migrate_task(&mut self, p: TaskId, env: &mut LbEnv) -> (bool, bool) {
        self.work.tasks_examined += 1;
        if !self.tasks[p].allowed_on(env.dst_cpu) {
            env.flags |= LBF_SOME_PINNED;
            if env.idle == CpuIdleType::NewlyIdle
                || env.flags & (LBF_DST_PINNED | LBF_ACTIVE_LB) != 0
            {
                return (false, false);
            }
            // Remember another CPU of the destination group this task may run on.
            let candidates = env.dst_grpmask.and(&env.cpus);
            if let Some(cpu) = candidates.iter().find(|&c| self.tasks[p].allowed_on(c)) {
                env.flags |= LBF_DST_PINNED;
                env.new_dst_cpu = cpu;
            }
            return (false, false);
        }
        env.flags &= !LBF_ALL_PINNED;
        if self.rqs[env.src_cpu].curr == Some(p) {
            return (false, false);
        }
        if env.flags & LBF_ACTIVE_LB != 0 {
            return (true, false);
        }
        let hot = self.task_hot(p, env);
        let failed = self.lb.sd[env.sd].nr_balance_failed;
        if !hot || failed > self.topo.domain(env.sd).cache_nice_tries {
            return (true, hot);
        }
        (false, hot)
    }

    /// `detach_task(p, env)`: dequeue from the source as migrating and retarget to the
    /// destination CPU.
    fn detach_task(&mut self, p: TaskId, env: &LbEnv, hot: bool) {
        if hot {
            self.sd_stats[env.sd].lb_hot_gained[env.idle as usize] += 1;
        }
        self.deactivate_task(env.src_cpu, p, 0);
        self.set_task_cpu(p, env.dst_cpu);
        self.work.tasks_moved += 1;
    }

    /// `detach_tasks(env)`: walk the source's tasks from the least recently run, detaching
    /// those that may move until the imbalance is covered. Returns how many were detached
    /// (they wait in `env.tasks`).
    pub fn detach_tasks(&mut self, env: &mut LbEnv) -> u32 {
        let src = env.src_cpu;
        if self.rqs[src].nr_running <= 1 {
            env.flags &= !LBF_ALL_PINNED;
            return 0;
        }
        if env.imbalance <= 0 {
            return 0;
        }
        let mut detached = 0;
        // The walk ends through loop_max (at most the source's nr_running), as rejected
        // tasks rotate to the front of cfs_tasks.
        while !self.rqs[src].cfs_tasks.is_empty() {
            if env.idle != CpuIdleType::NotIdle && self.rqs[src].nr_running <= 1 {
                break;
            }
            env.loop_ += 1;
            if env.loop_ > env.loop_max {
                break;
            }
            if env.loop_ > env.loop_break {
                env.loop_break += SCHED_NR_MIGRATE_BREAK;
                env.flags |= LBF_NEED_BREAK;
                break;
            }
            let Some(&p) = self.rqs[src].cfs_tasks.last() else {
                break;
            };
            let (ok, hot) = self.can_migrate_task(p, env);
            let mut take = ok;
            if ok {
                let failed = self.lb.sd[env.sd].nr_balance_failed;
                match env.migration_type {
                    MigrationType::Load => {
                        let load = self.task_h_load(p).max(1);
                        // LB_MIN skips tiny loads until balancing starts failing.
                        let tiny =
                            self.fair.features.has(Feature::LB_MIN) && load < 16 && failed == 0;
                        if tiny || shr_bound(load, failed) as i64 > env.imbalance {
                            take = false;
                        } else {
                            env.imbalance -= load as i64;
                        }
                    }
                    MigrationType::Util => {
                        let util = self.task_util_est(p);
                        if shr_bound(util, failed) as i64 > env.imbalance {
                            take = false;
                        } else {
                            env.imbalance -= util as i64;
                        }
                    }
                    MigrationType::Task => env.imbalance -= 1,
                    MigrationType::Misfit => {
                        if self.task_fits_cpu(p, src) {
                            take = false;
                        } else {
                            env.imbalance = 0;
                        }
                    }
                }
            }
            if !take {
                // list_move to the head: the next iteration sees the previous task.
                let rq = &mut self.rqs[src];
                rq.cfs_tasks.pop();
                rq.cfs_tasks.insert(0, p);
                continue;
            }
            self.detach_task(p, env, hot);
            env.tasks.push(p);
            detached += 1;
            // With CONFIG_PREEMPTION (Debian's PREEMPT_DYNAMIC), a newly idle CPU stops at
            // the first task to keep its latency short.
            if env.idle == CpuIdleType::NewlyIdle {
                break;
            }
            if env.imbalance <= 0 {
                break;
            }
        }
        self.sd_stats[env.sd].lb_gained[env.idle as usize] += u64::from(detached);
        detached
    }

    /// `detach_one_task(env)` for active balance: the first task that may move.
    pub fn detach_one_task(&mut self, env: &mut LbEnv) -> Option<TaskId> {
        let tasks: Vec<TaskId> = self.rqs[env.src_cpu]
            .cfs_tasks
            .iter()
            .rev()
            .copied()
            .collect();
        for p in tasks {
            let (ok, hot) = self.can_migrate_task(p, env);
            if !ok {
                continue;
            }
            self.detach_task(p, env, hot);
            // detach_one_task counts the gain under CPU_IDLE, whatever env->idle is.
            self.sd_stats[env.sd].lb_gained[CpuIdleType::Idle as usize] += 1;
            return Some(p);
        }
        None
    }

    /// `attach_task(rq, p)`: enqueue a migrated task on its new CPU and check preemption.
    pub fn attach_task(&mut self, cpu: usize, p: TaskId) {
        self.activate_task(cpu, p, 0);
        self.wakeup_preempt(cpu, p, 0);
    }

    /// `attach_tasks(env)`: attach every detached task to the destination. `env->tasks` is
    /// filled with `list_add` (at the head), so the last task detached attaches first.
    pub fn attach_tasks(&mut self, env: &mut LbEnv, now: u64) {
        self.update_rq_clock(env.dst_cpu, now);
        for p in std::mem::take(&mut env.tasks).into_iter().rev() {
            self.attach_task(env.dst_cpu, p);
        }
    }
}
