//! Moving tasks: `can_migrate_task` with `task_hot`, `detach_task`, `detach_tasks`,
//! `detach_one_task`, and the attach side.
//!
//! The walk over the busiest runqueue's tasks is written once, over [`MoveTasks`]: what
//! `detach_tasks` reads of the source runqueue (whose lock the caller holds) and of the
//! tasks on it. The engine's [`Sched`] and the race mode's locked runqueues implement it.

use fairsim_topology::{SchedDomains, SdFlags, SdId};

use crate::features::{Feature, Features};
use crate::lb::env::{
    LbEnv, MigrationType, LBF_ACTIVE_LB, LBF_ALL_PINNED, LBF_DST_PINNED, LBF_NEED_BREAK,
    LBF_SOME_PINNED, SCHED_NR_MIGRATE_BREAK,
};
use crate::sched::Sched;
use crate::stats::CpuIdleType;
use crate::task::TaskId;

/// `shr_bound(val, shift)`: `val >> shift` with the shift capped below the word size.
fn shr_bound(val: u64, shift: u32) -> u64 {
    val >> shift.min(63)
}

/// What `detach_tasks` reads and changes: the source runqueue `env.src_cpu` (locked by
/// the caller), the tasks queued on it, and the destination's `nr_running` (a lockless
/// read, as `task_hot`'s buddy test makes it).
pub trait MoveTasks {
    /// The sched domains.
    fn mv_topo(&self) -> &SchedDomains;
    /// `sched_features`.
    fn mv_features(&self) -> Features;
    /// `sysctl_sched_migration_cost` in ns.
    fn migration_cost(&self) -> u64;
    /// `sd->nr_balance_failed` of the balancing CPU's domain.
    fn nr_balance_failed(&self, sd: SdId) -> u32;
    /// `rq->nr_running` of the locked source.
    fn src_nr_running(&self, src: usize) -> u32;
    /// The tail of the source's `cfs_tasks` (its least recently run queued task).
    fn src_tasks_tail(&self, src: usize) -> Option<TaskId>;
    /// The source's `cfs_tasks`, head first.
    fn src_tasks(&self, src: usize) -> Vec<TaskId>;
    /// `list_move(&p->se.group_node, &env->src_rq->cfs_tasks)` of the tail task.
    fn src_tasks_rotate_tail(&mut self, src: usize);
    /// `rq_clock_task(src)`.
    fn src_clock_task(&self, src: usize) -> u64;
    /// `throttled_lb_pair(task_group(p), src, dst)`: the task's group is throttled on
    /// either CPU (CFS bandwidth control; never without task groups).
    fn throttled_lb_pair(&self, _p: TaskId, _src: usize, _dst: usize) -> bool {
        false
    }
    /// `cfs_rq_of(&p->se)->next` on the source: the next buddy of the runqueue task `p`
    /// is queued on (the source CPU's own without task groups).
    fn src_cfs_next(&self, src: usize, p: TaskId) -> Option<TaskId>;
    /// `cfs_rq->last` of the source: the CFS kernels' last buddy (Linux 6.5's `task_hot`
    /// reads it); EEVDF has none.
    fn src_cfs_last(&self, _src: usize) -> Option<TaskId> {
        None
    }
    /// `task_on_cpu(src, p)`: `p` runs there now.
    fn src_task_running(&self, src: usize, p: TaskId) -> bool;
    /// `rq->nr_running` of the destination (read without its lock).
    fn dst_nr_running(&self, dst: usize) -> u32;
    /// `cpumask_test_cpu(cpu, p->cpus_ptr)`.
    fn task_allowed_on(&self, p: TaskId, cpu: usize) -> bool;
    /// `p->se.exec_start`.
    fn task_exec_start(&self, p: TaskId) -> u64;
    /// `task_h_load(p)`.
    fn mv_task_h_load(&self, p: TaskId) -> u64;
    /// `task_util_est(p)`.
    fn mv_task_util_est(&self, p: TaskId) -> u64;
    /// `task_fits_cpu(p, cpu)`.
    fn mv_task_fits_cpu(&self, p: TaskId, cpu: usize) -> bool;
    /// `task_has_idle_policy(p)`: the task is SCHED_IDLE.
    fn mv_task_idle_policy(&self, p: TaskId) -> bool;
    /// `detach_task`'s state change: `deactivate_task(src, p, DEQUEUE_NOCLOCK)` and
    /// `set_task_cpu(p, dst)`.
    fn detach_task_from(&mut self, p: TaskId, env: &LbEnv);
    /// Counts one task examined (`can_migrate_task`), for the cost model.
    fn count_examined(&mut self);
    /// Adds to the domain's `lb_gained` (`hot`: `lb_hot_gained`) for `itype`.
    fn count_gained(&mut self, sd: SdId, itype: CpuIdleType, n: u64, hot: bool);

    /// `task_hot(p, env)`: the task ran on its CPU within `sysctl_sched_migration_cost`
    /// (or is the next buddy of a busy destination), so its cache is probably warm.
    fn task_hot(&self, p: TaskId, env: &LbEnv) -> bool {
        // A SCHED_IDLE task's cache is never worth keeping it where it is.
        if self.mv_task_idle_policy(p) {
            return false;
        }
        if self
            .mv_topo()
            .domain(env.sd)
            .flags
            .contains(SdFlags::SHARE_CPUCAPACITY)
        {
            return false;
        }
        if self.mv_features().has(Feature::CACHE_HOT_BUDDY)
            && self.dst_nr_running(env.dst_cpu) != 0
            && self.src_cfs_next(env.src_cpu, p) == Some(p)
        {
            return true;
        }
        let cost = self.migration_cost();
        // `sysctl_sched_migration_cost == -1`: the unsigned int written as -1 makes every
        // task hot.
        if cost == crate::rq::MIGRATION_COST_ALWAYS_HOT {
            return true;
        }
        if cost == 0 {
            return false;
        }
        let delta = self.src_clock_task(env.src_cpu) as i64 - self.task_exec_start(p) as i64;
        delta < cost as i64
    }

    /// `can_migrate_task(p, env)`: affinity (noting where a pinned task could go
    /// instead), not running, and not cache hot unless balancing keeps failing. Returns
    /// (allowed, task was hot).
    fn can_migrate_task(&mut self, p: TaskId, env: &mut LbEnv) -> (bool, bool) {
        self.count_examined();
        if self.throttled_lb_pair(p, env.src_cpu, env.dst_cpu) {
            return (false, false);
        }
        if !self.task_allowed_on(p, env.dst_cpu) {
            env.flags |= LBF_SOME_PINNED;
            if env.idle == CpuIdleType::NewlyIdle
                || env.flags & (LBF_DST_PINNED | LBF_ACTIVE_LB) != 0
            {
                return (false, false);
            }
            // Remember another CPU of the destination group this task may run on.
            let candidates = env.dst_grpmask.and(&env.cpus);
            if let Some(cpu) = candidates.iter().find(|&c| self.task_allowed_on(p, c)) {
                env.flags |= LBF_DST_PINNED;
                env.new_dst_cpu = cpu;
            }
            return (false, false);
        }
        env.flags &= !LBF_ALL_PINNED;
        if self.src_task_running(env.src_cpu, p) {
            return (false, false);
        }
        if env.flags & LBF_ACTIVE_LB != 0 {
            return (true, false);
        }
        let hot = self.task_hot(p, env);
        let failed = self.nr_balance_failed(env.sd);
        if !hot || failed > self.mv_topo().domain(env.sd).cache_nice_tries {
            return (true, hot);
        }
        (false, hot)
    }

    /// `detach_task(p, env)`: dequeue from the source as migrating and retarget to the
    /// destination CPU.
    fn detach_task(&mut self, p: TaskId, env: &LbEnv, hot: bool) {
        if hot {
            self.count_gained(env.sd, env.idle, 1, true);
        }
        self.detach_task_from(p, env);
    }

    /// `detach_tasks(env)`: walk the source's tasks from the least recently run, detaching
    /// those that may move until the imbalance is covered. Returns how many were detached
    /// (they wait in `env.tasks`).
    fn detach_tasks(&mut self, env: &mut LbEnv) -> u32 {
        let src = env.src_cpu;
        if self.src_nr_running(src) <= 1 {
            env.flags &= !LBF_ALL_PINNED;
            return 0;
        }
        if env.imbalance <= 0 {
            return 0;
        }
        let mut detached = 0;
        // The walk ends through loop_max (at most the source's nr_running), as rejected
        // tasks rotate to the front of cfs_tasks.
        while let Some(p) = self.src_tasks_tail(src) {
            if env.idle != CpuIdleType::NotIdle && self.src_nr_running(src) <= 1 {
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
            let (ok, hot) = self.can_migrate_task(p, env);
            let mut take = ok;
            if ok {
                let failed = self.nr_balance_failed(env.sd);
                match env.migration_type {
                    MigrationType::Load => {
                        let load = self.mv_task_h_load(p).max(1);
                        // LB_MIN skips tiny loads until balancing starts failing.
                        let tiny =
                            self.mv_features().has(Feature::LB_MIN) && load < 16 && failed == 0;
                        if tiny || shr_bound(load, failed) as i64 > env.imbalance {
                            take = false;
                        } else {
                            env.imbalance -= load as i64;
                        }
                    }
                    MigrationType::Util => {
                        let util = self.mv_task_util_est(p);
                        if shr_bound(util, failed) as i64 > env.imbalance {
                            take = false;
                        } else {
                            env.imbalance -= util as i64;
                        }
                    }
                    MigrationType::Task => env.imbalance -= 1,
                    MigrationType::Misfit => {
                        if self.mv_task_fits_cpu(p, src) {
                            take = false;
                        } else {
                            env.imbalance = 0;
                        }
                    }
                }
            }
            if !take {
                // list_move to the head: the next iteration sees the previous task.
                self.src_tasks_rotate_tail(src);
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
        self.count_gained(env.sd, env.idle, u64::from(detached), false);
        detached
    }

    /// `detach_one_task(env)` for active balance: the first task that may move.
    fn detach_one_task(&mut self, env: &mut LbEnv) -> Option<TaskId> {
        let tasks = self.src_tasks(env.src_cpu);
        for p in tasks.into_iter().rev() {
            let (ok, hot) = self.can_migrate_task(p, env);
            if !ok {
                continue;
            }
            self.detach_task(p, env, hot);
            // detach_one_task counts the gain under CPU_IDLE, whatever env->idle is.
            self.count_gained(env.sd, CpuIdleType::Idle, 1, false);
            return Some(p);
        }
        None
    }
}

/// The engine's machine: the source runqueue is one of `Sched::rqs`.
impl MoveTasks for Sched {
    fn mv_topo(&self) -> &SchedDomains {
        &self.topo
    }
    fn mv_features(&self) -> Features {
        self.fair.features
    }
    fn migration_cost(&self) -> u64 {
        self.params.migration_cost
    }
    fn nr_balance_failed(&self, sd: SdId) -> u32 {
        self.lb.sd[sd].nr_balance_failed
    }
    fn src_nr_running(&self, src: usize) -> u32 {
        self.rqs[src].nr_running
    }
    fn src_tasks_tail(&self, src: usize) -> Option<TaskId> {
        self.rqs[src].cfs_tasks.last().copied()
    }
    fn src_tasks(&self, src: usize) -> Vec<TaskId> {
        self.rqs[src].cfs_tasks.clone()
    }
    fn src_tasks_rotate_tail(&mut self, src: usize) {
        let rq = &mut self.rqs[src];
        if let Some(p) = rq.cfs_tasks.pop() {
            rq.cfs_tasks.insert(0, p);
        }
    }
    fn src_clock_task(&self, src: usize) -> u64 {
        self.rqs[src].clock_task()
    }
    fn throttled_lb_pair(&self, p: TaskId, src: usize, dst: usize) -> bool {
        self.groups.active() && Sched::throttled_lb_pair(self, p, src, dst)
    }
    fn src_cfs_next(&self, src: usize, p: TaskId) -> Option<TaskId> {
        if self.groups.active() {
            return self.h_cfs(self.h_cfs_of(p, src)).next;
        }
        self.rqs[src].cfs.next
    }
    fn src_cfs_last(&self, src: usize) -> Option<TaskId> {
        self.rqs[src].cfs.last
    }
    fn src_task_running(&self, src: usize, p: TaskId) -> bool {
        self.rqs[src].curr == Some(p)
    }
    fn dst_nr_running(&self, dst: usize) -> u32 {
        self.rqs[dst].nr_running
    }
    fn task_allowed_on(&self, p: TaskId, cpu: usize) -> bool {
        self.tasks[p].allowed_on(cpu)
    }
    fn task_exec_start(&self, p: TaskId) -> u64 {
        self.tasks[p].se.exec_start
    }
    fn mv_task_h_load(&self, p: TaskId) -> u64 {
        self.task_h_load(p)
    }
    fn mv_task_util_est(&self, p: TaskId) -> u64 {
        self.task_util_est(p)
    }
    fn mv_task_fits_cpu(&self, p: TaskId, cpu: usize) -> bool {
        self.task_fits_cpu(p, cpu)
    }
    fn mv_task_idle_policy(&self, p: TaskId) -> bool {
        self.tasks[p].policy == crate::task::Policy::Idle
    }
    fn detach_task_from(&mut self, p: TaskId, env: &LbEnv) {
        self.deactivate_task(env.src_cpu, p, 0);
        self.set_task_cpu(p, env.dst_cpu);
        self.work.tasks_moved += 1;
    }
    fn count_examined(&mut self) {
        self.work.tasks_examined += 1;
    }
    fn count_gained(&mut self, sd: SdId, itype: CpuIdleType, n: u64, hot: bool) {
        let s = &mut self.sd_stats[sd];
        if hot {
            s.lb_hot_gained[itype as usize] += n;
        } else {
            s.lb_gained[itype as usize] += n;
        }
    }
}

impl Sched {
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
