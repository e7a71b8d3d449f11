//! Linux 3.9's `load_balance` (split, like 6.12's, into a scan and an act phase so that
//! the engine can let the scan's time pass), `move_tasks` with `can_migrate_task` and
//! `task_hot`, `need_active_balance` and `active_load_balance_cpu_stop`.

use fairsim_topology::{CpuMask, SdId};

use crate::features::Feature;
use crate::lb::env::{
    LbEnv, LbResult, LbScan, MigrationType, ScanOutcome, LBF_ALL_PINNED, LBF_NEED_BREAK,
    LBF_SOME_PINNED, SCHED_NR_MIGRATE_BREAK,
};
use crate::lb::v3_9::find_busiest::BusiestGroupV3_9;
use crate::sched::Sched;
use crate::stats::CpuIdleType;
use crate::task::TaskId;
use crate::weight::scale_load_down;

/// `MAX_PINNED_INTERVAL` in ms.
const MAX_PINNED_INTERVAL: u64 = 512;

impl Sched {
    /// `task_h_load(p)` without group scheduling: the task's weight, or with
    /// LB_RUNNABLE_AVG its runnable load average (3.11's `se.avg.load_avg_contrib`).
    pub fn task_h_load_v3_9(&self, p: TaskId) -> u64 {
        let se = &self.tasks[p].se;
        if self.fair.features.has(Feature::LB_RUNNABLE_AVG) {
            se.avg.load_avg
        } else {
            scale_load_down(se.load.weight)
        }
    }

    /// `task_hot(p, now, sd)` of 3.9: the next buddy of a busy balancing CPU, or a task
    /// that ran within `sysctl_sched_migration_cost` (3.9 has no `last` buddy to test
    /// here: EEVDF keeps only `next`; nor does it exempt SMT domains as 6.12 does).
    fn task_hot_v3_9(&self, p: TaskId, env: &LbEnv) -> bool {
        let src = &self.rqs[env.src_cpu];
        if self.fair.features.has(Feature::CACHE_HOT_BUDDY)
            && self.rqs[env.dst_cpu].nr_running != 0
            && src.cfs.next == Some(p)
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

    /// `can_migrate_task(p, env)` of 3.9: affinity (remembering another CPU of the local
    /// group the task may use), not running, and not cache hot unless balancing keeps
    /// failing. An active balance's environment has no group mask (`None`).
    fn can_migrate_task_v3_9(&mut self, p: TaskId, env: &mut LbEnv, grpmask: bool) -> bool {
        self.work.tasks_examined += 1;
        if !self.tasks[p].allowed_on(env.dst_cpu) {
            if !grpmask || env.flags & LBF_SOME_PINNED != 0 {
                return false;
            }
            let first = env
                .dst_grpmask
                .iter()
                .find(|&c| self.tasks[p].allowed_on(c));
            if let Some(c) = first {
                env.flags |= LBF_SOME_PINNED;
                env.new_dst_cpu = c;
            }
            return false;
        }
        env.flags &= !LBF_ALL_PINNED;
        if self.rqs[env.src_cpu].curr == Some(p) {
            return false;
        }
        let hot = self.task_hot_v3_9(p, env);
        let tries = self.legacy().sd[env.sd].cache_nice_tries;
        if !hot || self.lb.sd[env.sd].nr_balance_failed > tries {
            if hot {
                self.sd_stats[env.sd].lb_hot_gained[env.idle as usize] += 1;
            }
            return true;
        }
        false
    }

    /// `move_task(p, env)`: dequeue from the source, retarget, enqueue on the
    /// destination and check preemption, both runqueues locked.
    fn move_task_v3_9(&mut self, p: TaskId, env: &LbEnv, now: u64) {
        self.deactivate_task(env.src_cpu, p, 0);
        self.set_task_cpu(p, env.dst_cpu);
        self.work.tasks_moved += 1;
        self.update_rq_clock(env.dst_cpu, now);
        self.attach_task(env.dst_cpu, p);
    }

    /// `move_tasks(env)`: from the head of the source's task list, move tasks whose load
    /// fits twice into the imbalance (with seed 002's 2/2, any task when the balancing
    /// CPU is idle) until the imbalance is covered. Returns how many moved.
    fn move_tasks_v3_9(&mut self, env: &mut LbEnv, now: u64) -> u32 {
        if env.imbalance <= 0 {
            return 0;
        }
        let src = env.src_cpu;
        let idle_pull = self.fair.features.has(Feature::LB_IDLE_PULL_MULTI)
            && matches!(env.idle, CpuIdleType::Idle | CpuIdleType::NewlyIdle);
        let mut pulled = 0u32;
        while let Some(&p) = self.rqs[src].cfs_tasks.first() {
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
            let load = self.task_h_load_v3_9(p);
            let failed = self.lb.sd[env.sd].nr_balance_failed;
            let skip = (self.fair.features.has(Feature::LB_MIN) && load < 16 && failed == 0)
                || ((load / 2) as i64 > env.imbalance && !idle_pull)
                || !self.can_migrate_task_v3_9(p, env, true);
            if skip {
                // list_move_tail: the task goes to the end of the list.
                let rq = &mut self.rqs[src];
                rq.cfs_tasks.remove(0);
                rq.cfs_tasks.push(p);
                continue;
            }
            self.move_task_v3_9(p, env, now);
            pulled += 1;
            env.imbalance -= load as i64;
            // 3.9's TC2 configuration (vexpress_defconfig) is not CONFIG_PREEMPT, so a
            // newly idle CPU does not stop at the first task.
            if env.imbalance <= 0 {
                break;
            }
        }
        self.sd_stats[env.sd].lb_gained[env.idle as usize] += u64::from(pulled);
        pulled
    }

    /// The environment 3.9's `load_balance` starts with: the local group's CPUs as
    /// `dst_grpmask`, every CPU eligible.
    fn lb_env_v3_9(&self, this_cpu: usize, sd: SdId, idle: CpuIdleType) -> LbEnv {
        let d = self.topo.domain(sd);
        LbEnv {
            sd,
            src_cpu: this_cpu,
            dst_cpu: this_cpu,
            dst_core_idle: false,
            dst_grpmask: self.topo.group(d.groups[0]).span.clone(),
            new_dst_cpu: this_cpu,
            idle,
            imbalance: 0,
            cpus: CpuMask::full(self.nr_cpus()),
            flags: 0,
            loop_: 0,
            loop_break: SCHED_NR_MIGRATE_BREAK,
            loop_max: 0,
            migration_type: MigrationType::Load,
            tasks: Vec::new(),
        }
    }

    /// The scan half of 3.9's `load_balance(this_cpu, this_rq, sd, idle, balance)`:
    /// counts the call, finds the busiest group and runqueue, and counts what was found.
    pub fn load_balance_scan_v3_9(
        &mut self,
        this_cpu: usize,
        sd: SdId,
        idle: CpuIdleType,
        now: u64,
    ) -> LbScan {
        self.set_now(now);
        self.sd_stats[sd].lb_count[idle as usize] += 1;
        let env = self.lb_env_v3_9(this_cpu, sd, idle);
        self.load_balance_redo_v3_9(env)
    }

    /// `redo:` of 3.9's `load_balance`.
    fn load_balance_redo_v3_9(&mut self, mut env: LbEnv) -> LbScan {
        let itype = env.idle as usize;
        let sd = env.sd;
        let outcome = match self.find_busiest_group_v3_9(&mut env) {
            BusiestGroupV3_9::NotThisCpu => ScanOutcome::NotThisCpu,
            BusiestGroupV3_9::Balanced => {
                self.sd_stats[sd].lb_nobusyg[itype] += 1;
                ScanOutcome::NoBusyGroup
            }
            BusiestGroupV3_9::Busiest(group) => match self.find_busiest_queue_v3_9(&env, group) {
                None => {
                    self.sd_stats[sd].lb_nobusyq[itype] += 1;
                    ScanOutcome::NoBusyQueue
                }
                Some(b) => {
                    // 3.9 has one lb_imbalance counter; it is schedstat's load column.
                    self.sd_stats[sd].lb_imbalance_load[itype] += env.imbalance.max(0) as u64;
                    env.src_cpu = b;
                    ScanOutcome::Busiest(b)
                }
            },
        };
        LbScan { env, outcome }
    }

    /// The act half of 3.9's `load_balance`: move tasks from the busiest runqueue as it is
    /// at `now`, retry other local CPUs for pinned tasks and other runqueues when all were
    /// pinned, queue an active balance after repeated failures (or, with seed 002's 1/2,
    /// towards a more powerful CPU), and keep `nr_balance_failed` and `balance_interval`.
    pub fn load_balance_act_v3_9(&mut self, scan: LbScan, now: u64) -> LbResult {
        self.set_now(now);
        let LbScan {
            mut env,
            mut outcome,
        } = scan;
        let sd = env.sd;
        let itype = env.idle as usize;
        let this_cpu = env.dst_cpu;
        let max_lb_iterations = env.dst_grpmask.weight() as u32;
        let mut ld_moved = 0u32;
        let mut lb_iterations = 1u32;
        let busiest = loop {
            let busiest = match outcome {
                ScanOutcome::NotThisCpu => {
                    let mut r = self.lb_out_balanced_v3_9(&env);
                    r.continue_balancing = false;
                    return r;
                }
                ScanOutcome::Busiest(b) => b,
                _ => return self.lb_out_balanced_v3_9(&env),
            };
            if self.nr_running_v3_9(busiest) > 1 {
                env.flags |= LBF_ALL_PINNED;
                env.src_cpu = busiest;
                env.loop_max =
                    (self.params.nr_migrate as u64).min(self.nr_running_v3_9(busiest)) as u32;
                loop {
                    self.update_rq_clock(busiest, now);
                    self.work.rq_locks.push(busiest);
                    let cur = self.move_tasks_v3_9(&mut env, now);
                    ld_moved += cur;
                    if env.flags & LBF_NEED_BREAK != 0 {
                        env.flags &= !LBF_NEED_BREAK;
                        continue;
                    }
                    // Tasks pinned away from us may go to another CPU of our group.
                    if env.flags & LBF_SOME_PINNED != 0
                        && env.imbalance > 0
                        && lb_iterations < max_lb_iterations
                    {
                        lb_iterations += 1;
                        env.dst_cpu = env.new_dst_cpu;
                        env.flags &= !LBF_SOME_PINNED;
                        env.loop_ = 0;
                        env.loop_break = SCHED_NR_MIGRATE_BREAK;
                        continue;
                    }
                    if env.flags & LBF_SOME_PINNED != 0 && env.imbalance > 0 {
                        // lb_iterations++ < max_lb_iterations failed: it still counts.
                        lb_iterations += 1;
                    }
                    break;
                }
                if env.flags & LBF_ALL_PINNED != 0 {
                    // Every task here was pinned: look elsewhere, at this instant.
                    env.cpus.clear(busiest);
                    if !env.cpus.is_empty() {
                        env.loop_ = 0;
                        env.loop_break = SCHED_NR_MIGRATE_BREAK;
                        let again = self.load_balance_redo_v3_9(env);
                        env = again.env;
                        outcome = again.outcome;
                        continue;
                    }
                    return self.lb_out_balanced_v3_9(&env);
                }
            }
            break busiest;
        };
        let mut active_balance = None;
        if ld_moved == 0 {
            self.sd_stats[sd].lb_failed[itype] += 1;
            // Only periodic balancing counts failures: frequent newidle balances would
            // otherwise force cache-hot migrations and active balances.
            if env.idle != CpuIdleType::NewlyIdle {
                self.lb.sd[sd].nr_balance_failed += 1;
            }
            env.src_cpu = busiest;
            if self.need_active_balance_v3_9(&env) {
                let allowed = self.rqs[busiest]
                    .curr
                    .is_none_or(|c| self.tasks[c].allowed_on(this_cpu));
                if !allowed {
                    env.flags |= LBF_ALL_PINNED;
                    return self.lb_out_one_pinned_v3_9(&env);
                }
                let rq = &mut self.lb.rq[busiest];
                if !rq.active_balance {
                    rq.active_balance = true;
                    rq.push_cpu = this_cpu;
                    active_balance = Some(busiest);
                }
                // Active balancing was kicked: reset the failure counter.
                self.lb.sd[sd].nr_balance_failed = self.legacy().sd[sd].cache_nice_tries + 1;
            }
        } else {
            self.lb.sd[sd].nr_balance_failed = 0;
        }
        let p = self.legacy().sd[sd];
        let rt = &mut self.lb.sd[sd];
        if active_balance.is_none() {
            // We were unbalanced: reset the balancing interval.
            rt.balance_interval = p.min_interval;
        } else if rt.balance_interval < p.max_interval {
            // An active balance has begun: start to back off.
            rt.balance_interval *= 2;
        }
        LbResult {
            moved: ld_moved,
            continue_balancing: true,
            active_balance,
        }
    }

    /// `out_balanced:` of 3.9's `load_balance` (also where `*balance == 0` leads).
    fn lb_out_balanced_v3_9(&mut self, env: &LbEnv) -> LbResult {
        self.sd_stats[env.sd].lb_balanced[env.idle as usize] += 1;
        self.lb.sd[env.sd].nr_balance_failed = 0;
        self.lb_out_one_pinned_v3_9(env)
    }

    /// `out_one_pinned:`: tune up the balancing interval (3.9 does so for newly idle
    /// balances too).
    fn lb_out_one_pinned_v3_9(&mut self, env: &LbEnv) -> LbResult {
        let max = self.legacy().sd[env.sd].max_interval;
        let rt = &mut self.lb.sd[env.sd];
        if (env.flags & LBF_ALL_PINNED != 0 && rt.balance_interval < MAX_PINNED_INTERVAL)
            || rt.balance_interval < max
        {
            rt.balance_interval *= 2;
        }
        LbResult {
            moved: 0,
            continue_balancing: true,
            active_balance: None,
        }
    }

    /// `need_active_balance(env)` of 3.9: after more than `cache_nice_tries + 2`
    /// failures; with seed 002's 1/2, also when the destination is more powerful by the
    /// domain's imbalance margin.
    fn need_active_balance_v3_9(&self, env: &LbEnv) -> bool {
        let p = &self.legacy().sd[env.sd];
        if self.fair.features.has(Feature::LB_FORCE_BETTER_CPU)
            && self.power_of_v3_9(env.src_cpu) * p.imbalance_pct
                < self.power_of_v3_9(env.dst_cpu) * 100
        {
            return true;
        }
        self.lb.sd[env.sd].nr_balance_failed > p.cache_nice_tries + 2
    }

    /// `active_load_balance_cpu_stop` of 3.9 on `busiest_cpu`: the stopper preempts the
    /// current task and moves one task (`move_one_task`, which applies the cache-hot test
    /// as an idle balance would) to the CPU that asked.
    pub fn active_load_balance_cpu_stop_v3_9(
        &mut self,
        busiest_cpu: usize,
        now: u64,
    ) -> Option<TaskId> {
        self.set_now(now);
        let target = self.lb.rq[busiest_cpu].push_cpu;
        let mut moved = None;
        // "Is there any task to move?" 3.9 tests nr_running <= 1 with the stopper itself
        // counted; fairsim's stopper is not a task, so one queued task is enough.
        if self.lb.rq[busiest_cpu].active_balance
            && self.nr_running_v3_9(busiest_cpu) >= 1
            && target != busiest_cpu
        {
            let sd = self
                .topo
                .domains_of(target)
                .find(|&d| self.topo.domain(d).span.test(busiest_cpu));
            if let Some(sd) = sd {
                self.work.rq_locks.push(target);
                self.update_rq_clock(busiest_cpu, now);
                self.preempt_current_for_stopper(busiest_cpu);
                let mut env = self.lb_env_v3_9(target, sd, CpuIdleType::Idle);
                env.src_cpu = busiest_cpu;
                self.sd_stats[sd].alb_count += 1;
                // move_one_task: the first task of the list that may move.
                let tasks = self.rqs[busiest_cpu].cfs_tasks.clone();
                for p in tasks {
                    if self.can_migrate_task_v3_9(p, &mut env, false) {
                        self.move_task_v3_9(p, &env, now);
                        self.sd_stats[sd].lb_gained[CpuIdleType::Idle as usize] += 1;
                        moved = Some(p);
                        break;
                    }
                }
                if moved.is_some() {
                    self.sd_stats[sd].alb_pushed += 1;
                } else {
                    self.sd_stats[sd].alb_failed += 1;
                }
            }
        }
        self.lb.rq[busiest_cpu].active_balance = false;
        moved
    }
}
