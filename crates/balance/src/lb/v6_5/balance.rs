//! Linux 6.5.0's `load_balance` act half and `redo:` rescan, `detach_tasks`, `can_migrate_task` with
//! `task_hot`, and the misfit bookkeeping (`update_misfit_status`,
//! `check_misfit_status`); items 10 to 12 and 18 of the list in [`super`].
//!
//! The scan half is 6.12's split ([`crate::lb::rq_balance::BalanceAct`]) with 6.5's
//! `should_we_balance` and `find_busiest_group` ([`super::stats`]); the runqueue search
//! after the scan's time is 6.12's `sched_balance_find_src_rq`, which is 6.5's
//! `find_busiest_queue` with its asym-packing test written differently.

use std::sync::atomic::Ordering;

use fairsim_topology::{SdFlags, SdId};

use crate::features::Feature;
use crate::lb::detach::MoveTasks;
use crate::lb::env::{
    LbEnv, LbResult, LbScan, MigrationType, ScanOutcome, LBF_ACTIVE_LB, LBF_ALL_PINNED,
    LBF_DST_PINNED, LBF_NEED_BREAK, LBF_SOME_PINNED, SCHED_NR_MIGRATE_BREAK,
};
use crate::lb::host::BalanceHost;
use crate::lb::rq_balance::BalanceAct;
use crate::lb::v6_5::stats::StatsV6_5;
use crate::lb::view::{LbRead, ScanCounters};
use crate::sched::Sched;
use crate::stats::CpuIdleType;
use crate::task::TaskId;

/// `MAX_PINNED_INTERVAL` in ms.
const MAX_PINNED_INTERVAL: u64 = 512;

/// `shr_bound(val, shift)`: `val >> shift` with the shift capped below the word size.
fn shr_bound(val: u64, shift: u32) -> u64 {
    val >> shift.min(63)
}

/// Linux 6.5's task walk over the locked busiest runqueue, for any [`MoveTasks`].
pub trait MoveTasksV6_5: MoveTasks {
    /// `task_hot(p, env)` of Linux 6.5: as 6.12's, but the cache-hot buddy is the source
    /// cfs_rq's `next` or `last` buddy (CFS still had LAST_BUDDY).
    fn task_hot_v6_5(&self, p: TaskId, env: &LbEnv) -> bool {
        // SMT siblings share their caches.
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
            && (self.src_cfs_next(env.src_cpu, p) == Some(p)
                || self.src_cfs_last(env.src_cpu) == Some(p))
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

    /// `can_migrate_task(p, env)` of Linux 6.5: 6.12's tests (affinity, with the
    /// alternative destination CPU remembered; running; cache hot unless balancing keeps
    /// failing) over 6.5's `task_hot`. Returns (may move, was hot).
    fn can_migrate_task_v6_5(&mut self, p: TaskId, env: &mut LbEnv) -> (bool, bool) {
        self.count_examined();
        if !self.task_allowed_on(p, env.dst_cpu) {
            env.flags |= LBF_SOME_PINNED;
            // No other destination for a newly idle or active balance, nor a second one.
            if env.idle == CpuIdleType::NewlyIdle
                || env.flags & (LBF_DST_PINNED | LBF_ACTIVE_LB) != 0
            {
                return (false, false);
            }
            let candidates = env.dst_grpmask.and(&env.cpus);
            if let Some(cpu) = candidates.iter().find(|&c| self.task_allowed_on(p, c)) {
                env.flags |= LBF_DST_PINNED;
                env.new_dst_cpu = cpu;
            }
            return (false, false);
        }
        // At least one task could run on the destination.
        env.flags &= !LBF_ALL_PINNED;
        if self.src_task_running(env.src_cpu, p) {
            return (false, false);
        }
        if env.flags & LBF_ACTIVE_LB != 0 {
            return (true, false);
        }
        let hot = self.task_hot_v6_5(p, env);
        let failed = self.nr_balance_failed(env.sd);
        if !hot || failed > self.mv_topo().domain(env.sd).cache_nice_tries {
            return (true, hot);
        }
        (false, hot)
    }

    /// `detach_tasks(env)` of Linux 6.5: from the least recently run task, detach those
    /// that may move until the imbalance is covered. Unlike 6.12 the walk goes on past
    /// `loop_max` while every task seen was pinned elsewhere (up to `loop_break`), and a
    /// `migrate_util` imbalance takes a task's whole `util_est` however often balancing
    /// failed.
    fn detach_tasks_v6_5(&mut self, env: &mut LbEnv) -> u32 {
        let src = env.src_cpu;
        // Another CPU emptied the source: no task will be tested.
        if self.src_nr_running(src) <= 1 {
            env.flags &= !LBF_ALL_PINNED;
            return 0;
        }
        if env.imbalance <= 0 {
            return 0;
        }
        let mut detached = 0;
        while let Some(p) = self.src_tasks_tail(src) {
            // Stealing the last task could make the source pull it back.
            if env.idle != CpuIdleType::NotIdle && self.src_nr_running(src) <= 1 {
                break;
            }
            env.loop_ += 1;
            // Every task was seen, unless none could move yet.
            if env.loop_ > env.loop_max && env.flags & LBF_ALL_PINNED == 0 {
                break;
            }
            // A breather every nr_migrate tasks: load_balance drops the lock.
            if env.loop_ > env.loop_break {
                env.loop_break += SCHED_NR_MIGRATE_BREAK;
                env.flags |= LBF_NEED_BREAK;
                break;
            }
            let (ok, hot) = self.can_migrate_task_v6_5(p, env);
            let mut take = ok;
            if ok {
                let failed = self.nr_balance_failed(env.sd);
                match env.migration_type {
                    MigrationType::Load => {
                        // task_h_load() may be 0 with groups: count at least 1.
                        let load = self.mv_task_h_load(p).max(1);
                        let tiny =
                            self.mv_features().has(Feature::LB_MIN) && load < 16 && failed == 0;
                        // Not too much load, unless balancing keeps failing.
                        if tiny || shr_bound(load, failed) as i64 > env.imbalance {
                            take = false;
                        } else {
                            env.imbalance -= load as i64;
                        }
                    }
                    MigrationType::Util => {
                        let util = self.mv_task_util_est(p);
                        if util as i64 > env.imbalance {
                            take = false;
                        } else {
                            env.imbalance -= util as i64;
                        }
                    }
                    MigrationType::Task => env.imbalance -= 1,
                    MigrationType::Misfit => {
                        // Only a task that does not fit its CPU.
                        if self.mv_task_fits_cpu(p, src) {
                            take = false;
                        } else {
                            env.imbalance = 0;
                        }
                    }
                }
            }
            if !take {
                // list_move to the head: the next turn sees the task before it.
                self.src_tasks_rotate_tail(src);
                continue;
            }
            self.detach_task(p, env, hot);
            env.tasks.push(p);
            detached += 1;
            // CONFIG_PREEMPTION: a newly idle balance stops at its first task.
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
}

impl<T: MoveTasks + ?Sized> MoveTasksV6_5 for T {}

/// Linux 6.5's act half of `load_balance`, for any [`BalanceHost`]. The era entry points
/// ([`crate::lb::era`]) select these for `--kernel 6.5`; 6.12's code never calls them.
pub trait BalanceActV6_5: BalanceAct {
    /// `redo:` of Linux 6.5's `load_balance`: [`StatsV6_5::lb_scan_from_v6_5`] (6.5's
    /// `should_we_balance` and `find_busiest_group`) with its counters folded in as 6.12's
    /// rescan folds them.
    fn lb_rescan_v6_5(&mut self, env: LbEnv) -> LbScan {
        let mut c = ScanCounters::default();
        let scan = StatsV6_5::lb_scan_from_v6_5(&*self, &mut c, env);
        self.lb_fold_scan(c, &scan);
        scan
    }

    /// From `more_balance:` of Linux 6.5's `load_balance` to its end, on the state at
    /// `now`: choose the busiest runqueue of a found group, detach and attach, retry
    /// after a breather while tasks are left to try, move to another destination or
    /// rescan when tasks are pinned, then count the failure (misfit failures too), queue
    /// an active balance, and set `balance_interval` (backed off for every balance but a
    /// newly idle one).
    fn load_balance_act_v6_5(&mut self, mut scan: LbScan, now: u64) -> LbResult {
        self.lb_resolve_src_rq(&mut scan);
        let LbScan {
            mut env,
            mut outcome,
        } = scan;
        let sd = env.sd;
        let itype = env.idle as usize;
        let this_cpu = env.dst_cpu;
        let sd_parent = self.topo().domain(sd).parent;
        let mut ld_moved = 0u32;
        let mut active_balance = None;
        loop {
            let busiest = match outcome {
                ScanOutcome::NotThisCpu => {
                    let mut r = self.lb_out_balanced_v6_5(&env);
                    r.continue_balancing = false;
                    return r;
                }
                ScanOutcome::NoBusyGroup | ScanOutcome::NoBusyQueue => {
                    return self.lb_out_balanced_v6_5(&env);
                }
                ScanOutcome::BusiestGroup(_) => {
                    // A redo's rescan: its runqueue search follows at once.
                    let mut again = LbScan { env, outcome };
                    self.lb_resolve_src_rq(&mut again);
                    env = again.env;
                    outcome = again.outcome;
                    continue;
                }
                ScanOutcome::Busiest(b) => b,
            };
            env.src_cpu = busiest;
            // Cleared as soon as a task that may move is found.
            env.flags |= LBF_ALL_PINNED;
            if self.rq_nr_running(busiest) > 1 {
                env.loop_max = self.nr_migrate().min(self.rq_nr_running(busiest));
                // more_balance:
                loop {
                    self.lock_src_rq(busiest, now);
                    let cur = self.detach_tasks_v6_5(&mut env);
                    self.unlock_src_rq(busiest);
                    if cur != 0 {
                        self.attach_tasks(&mut env, now);
                        ld_moved += cur;
                    }
                    if env.flags & LBF_NEED_BREAK != 0 {
                        env.flags &= !LBF_NEED_BREAK;
                        // Stop once as many tasks were tried as the source runs.
                        if env.loop_ < self.rq_nr_running(busiest) {
                            continue;
                        }
                    }
                    if env.flags & LBF_DST_PINNED != 0 && env.imbalance > 0 {
                        // Pinned tasks may go to another CPU of the destination group.
                        env.cpus.clear(env.dst_cpu);
                        env.dst_cpu = env.new_dst_cpu;
                        env.flags &= !LBF_DST_PINNED;
                        env.loop_ = 0;
                        env.loop_break = SCHED_NR_MIGRATE_BREAK;
                        continue;
                    }
                    break;
                }
                // Affinity kept this level from balancing: tell the parent's group.
                if let Some(parent) = sd_parent {
                    if env.flags & LBF_SOME_PINNED != 0 && env.imbalance > 0 {
                        let head = self.topo().domain(parent).groups[0];
                        self.topo()
                            .group_sgc(head)
                            .imbalance
                            .store(1, Ordering::Relaxed);
                    }
                }
                if env.flags & LBF_ALL_PINNED != 0 {
                    env.cpus.clear(busiest);
                    // Go on at this level only if some possible source is outside the
                    // destination group.
                    if !env.cpus.is_subset(&env.dst_grpmask) {
                        env.loop_ = 0;
                        env.loop_break = SCHED_NR_MIGRATE_BREAK;
                        let again = self.lb_rescan(env);
                        env = again.env;
                        outcome = again.outcome;
                        continue;
                    }
                    // out_all_pinned: leave the parent's imbalance flag set.
                    self.sd_stats_mut(sd).lb_balanced[itype] += 1;
                    self.sd_rt_mut(sd).nr_balance_failed = 0;
                    return self.lb_out_one_pinned_v6_5(&env);
                }
            }
            break;
        }
        let busiest = env.src_cpu;
        if ld_moved == 0 {
            self.sd_stats_mut(sd).lb_failed[itype] += 1;
            // Newly idle balances are too frequent to count as failures.
            if env.idle != CpuIdleType::NewlyIdle {
                self.sd_rt_mut(sd).nr_balance_failed += 1;
            }
            if self.need_active_balance(&env) {
                self.lock_src_rq_raw(busiest);
                // The running task must be able to come here.
                if !self.src_curr_allowed_on(busiest, this_cpu) {
                    self.unlock_src_rq(busiest);
                    return self.lb_out_one_pinned_v6_5(&env);
                }
                env.flags &= !LBF_ALL_PINNED;
                if self.queue_active_balance(busiest, this_cpu) {
                    active_balance = Some(busiest);
                }
                self.unlock_src_rq(busiest);
            }
        } else {
            self.sd_rt_mut(sd).nr_balance_failed = 0;
        }
        // Unbalanced: the balancing interval goes back to its minimum.
        if active_balance.is_none() || self.need_active_balance(&env) {
            let min = self.topo().domain(sd).min_interval;
            self.sd_rt_mut(sd).balance_interval = min;
        }
        LbResult {
            moved: ld_moved,
            continue_balancing: true,
            active_balance,
        }
    }

    /// `out_balanced:` of 6.5's `load_balance`: clear the parent group's imbalance flag
    /// unless everything was pinned, count the balanced outcome, reset failures, back off.
    fn lb_out_balanced_v6_5(&mut self, env: &LbEnv) -> LbResult {
        let sd = env.sd;
        if let Some(parent) = self.topo().domain(sd).parent {
            if env.flags & LBF_ALL_PINNED == 0 {
                let head = self.topo().domain(parent).groups[0];
                let flag = &self.topo().group_sgc(head).imbalance;
                if flag.load(Ordering::Relaxed) != 0 {
                    flag.store(0, Ordering::Relaxed);
                }
            }
        }
        self.sd_stats_mut(sd).lb_balanced[env.idle as usize] += 1;
        self.sd_rt_mut(sd).nr_balance_failed = 0;
        self.lb_out_one_pinned_v6_5(env)
    }

    /// `out_one_pinned:` of 6.5's `load_balance`: double the balance interval up to its
    /// maximum (or `MAX_PINNED_INTERVAL` when all was pinned), except for a newly idle
    /// balance, which disregards intervals. 6.5 has no misfit exemption here.
    fn lb_out_one_pinned_v6_5(&mut self, env: &LbEnv) -> LbResult {
        let sd = env.sd;
        if env.idle != CpuIdleType::NewlyIdle {
            let max = self.topo().domain(sd).max_interval;
            let rt = self.sd_rt_mut(sd);
            if (env.flags & LBF_ALL_PINNED != 0 && rt.balance_interval < MAX_PINNED_INTERVAL)
                || rt.balance_interval < max
            {
                rt.balance_interval *= 2;
            }
        }
        LbResult {
            moved: 0,
            continue_balancing: true,
            active_balance: None,
        }
    }

    /// `update_newidle_cost(sd, cost)` of Linux 6.5: keep the largest newidle cost seen
    /// and decay it by 253/256 at most once a second; no success statistics (NI_RANDOM
    /// came later). Returns whether it decayed.
    fn update_newidle_cost_v6_5(&mut self, sd: SdId, cost: u64) -> bool {
        let hz = self.hz();
        let now = self.jiffies();
        let rt = self.sd_rt_mut(sd);
        if cost > rt.max_newidle_lb_cost {
            // Track the maximum, so as not to delay the CPU's next wakeup.
            rt.max_newidle_lb_cost = cost;
            rt.last_decay_max_lb_cost = now;
        } else if now > rt.last_decay_max_lb_cost + hz {
            // About 1% a second, so that an outdated maximum fades.
            rt.max_newidle_lb_cost = rt.max_newidle_lb_cost * 253 / 256;
            rt.last_decay_max_lb_cost = now;
            return true;
        }
        false
    }
}

impl<T: BalanceHost + ?Sized> BalanceActV6_5 for T {}

impl Sched {
    /// `update_misfit_status(p, rq)` of Linux 6.5: on asymmetric machines, the load of a
    /// running task that does not fit `cpu`, even on the biggest CPU it may use (6.12
    /// clears it there); 0 for the idle task or a task pinned to one CPU.
    pub(crate) fn update_misfit_status_v6_5(&mut self, p: Option<TaskId>, cpu: usize) {
        if !self.topo.asym_cpucapacity {
            return;
        }
        self.rqs[cpu].misfit_task_load = match p {
            Some(p) if self.tasks[p].nr_cpus_allowed != 1 && !self.task_fits_cpu(p, cpu) => {
                // Never 0 for a misfit, even if task_h_load() is.
                self.task_h_load(p).max(1)
            }
            _ => 0,
        };
    }

    /// `check_misfit_status(rq, sd)` of Linux 6.5, for `nohz_balancer_kick`: a misfit task
    /// runs on `cpu`, and a bigger CPU exists in its root domain or `cpu` lost capacity
    /// (`sd` is its `sd_asym_cpucapacity`).
    pub(crate) fn check_misfit_status_v6_5(&self, cpu: usize, sd: SdId) -> bool {
        let rd = self.topo.root_domain_of(cpu);
        self.rqs[cpu].misfit_task_load != 0
            && (self.arch_scale_cpu_capacity(cpu) < self.topo.rd_max_cpu_capacity(rd)
                || LbRead::check_cpu_capacity(self, cpu, sd))
    }
}
