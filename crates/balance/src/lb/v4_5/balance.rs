//! Linux 4.5's `load_balance` (split, like 6.12's, into a scan and an act phase so that
//! the engine can let the scan's time pass), `need_active_balance` and
//! `active_load_balance_cpu_stop`, with 4.15's differences at their places.
//!
//! Differences from 3.9's `load_balance` ([`crate::lb::v3_9::balance`]):
//! `should_we_balance` decides who balances before any statistics; a pinned task may be
//! moved to another CPU of the local group (`LBF_DST_PINNED`, that CPU leaving
//! `env->cpus`); affinity that kept load from moving marks the parent level's group
//! imbalanced (`sgc->imbalance`), which a balanced outcome clears; a newly idle CPU, or
//! an idle one whose source runs a single task on a capacity reduced by RT or IRQ time,
//! may ask for an active balance.
//!
//! 4.15 (`Balancer::V4_15`): `env->cpus` starts as the domain's span rather than every
//! active CPU, and an all-pinned source is retried only while CPUs outside the local
//! group remain; the stopper resets `nr_balance_failed` after a push (4.5 leaves it at
//! `cache_nice_tries + 1`).

use std::sync::atomic::Ordering;

use fairsim_topology::{CpuMask, SdId};

use crate::lb::env::{
    LbEnv, LbResult, LbScan, MigrationType, ScanOutcome, LBF_ALL_PINNED, LBF_DST_PINNED,
    LBF_NEED_BREAK, LBF_SOME_PINNED, SCHED_NR_MIGRATE_BREAK,
};
use crate::lb::era::Balancer;
use crate::lb::v4_5::find_busiest::BusiestGroupV4_5;
use crate::sched::Sched;
use crate::stats::CpuIdleType;
use crate::task::TaskId;

/// `MAX_PINNED_INTERVAL` in ms.
const MAX_PINNED_INTERVAL: u64 = 512;

impl Sched {
    /// The environment 4.5's `load_balance` starts with: the local group's CPUs as
    /// `dst_grpmask` (which `can_migrate_task` ignores for a newly idle balance) and
    /// every CPU eligible (4.15: the domain's CPUs).
    pub fn lb_env_v4_5(&self, this_cpu: usize, sd: SdId, idle: CpuIdleType) -> LbEnv {
        let d = self.topo.domain(sd);
        let cpus = match self.balancer() {
            Balancer::V4_15 => d.span.clone(),
            _ => CpuMask::full(self.nr_cpus()),
        };
        LbEnv {
            sd,
            src_cpu: this_cpu,
            dst_cpu: this_cpu,
            dst_core_idle: false,
            dst_grpmask: self.topo.group(d.groups[0]).span.clone(),
            new_dst_cpu: this_cpu,
            idle,
            imbalance: 0,
            cpus,
            flags: 0,
            loop_: 0,
            loop_break: SCHED_NR_MIGRATE_BREAK,
            loop_max: 0,
            migration_type: MigrationType::Load,
            tasks: Vec::new(),
        }
    }

    /// The scan half of 4.5's `load_balance(this_cpu, this_rq, sd, idle,
    /// continue_balancing)`: counts the call, asks `should_we_balance`, finds the busiest
    /// group and runqueue, and counts what was found.
    pub fn load_balance_scan_v4_5(
        &mut self,
        this_cpu: usize,
        sd: SdId,
        idle: CpuIdleType,
        now: u64,
    ) -> LbScan {
        self.set_now(now);
        self.sd_stats[sd].lb_count[idle as usize] += 1;
        let env = self.lb_env_v4_5(this_cpu, sd, idle);
        self.load_balance_redo_v4_5(env)
    }

    /// `redo:` of 4.5's `load_balance`.
    fn load_balance_redo_v4_5(&mut self, mut env: LbEnv) -> LbScan {
        let itype = env.idle as usize;
        let sd = env.sd;
        if !self.should_we_balance_v4_5(&env) {
            return LbScan {
                env,
                outcome: ScanOutcome::NotThisCpu,
            };
        }
        let outcome = match self.find_busiest_group_v4_5(&mut env) {
            BusiestGroupV4_5::Balanced => {
                self.sd_stats[sd].lb_nobusyg[itype] += 1;
                ScanOutcome::NoBusyGroup
            }
            BusiestGroupV4_5::Busiest(group) => match self.find_busiest_queue_v4_5(&env, group) {
                None => {
                    self.sd_stats[sd].lb_nobusyq[itype] += 1;
                    ScanOutcome::NoBusyQueue
                }
                Some(b) => {
                    // 4.x has one lb_imbalance counter; it is schedstat's load column.
                    self.sd_stats[sd].lb_imbalance_load[itype] += env.imbalance.max(0) as u64;
                    env.src_cpu = b;
                    ScanOutcome::Busiest(b)
                }
            },
        };
        LbScan { env, outcome }
    }

    /// The act half of 4.5's `load_balance`: detach tasks from the busiest runqueue as it
    /// is at `now` and attach them, retry another local CPU for pinned tasks and other
    /// runqueues when all were pinned, mark the parent group imbalanced when affinity
    /// kept load back, queue an active balance when it is needed, and keep
    /// `nr_balance_failed` and `balance_interval`.
    pub fn load_balance_act_v4_5(&mut self, scan: LbScan, now: u64) -> LbResult {
        self.set_now(now);
        let LbScan {
            mut env,
            mut outcome,
        } = scan;
        let sd = env.sd;
        let itype = env.idle as usize;
        let this_cpu = env.dst_cpu;
        let sd_parent = self.topo.domain(sd).parent;
        let mut ld_moved;
        let busiest = loop {
            let busiest = match outcome {
                ScanOutcome::NotThisCpu => {
                    let mut r = self.lb_out_balanced_v4_5(&env);
                    r.continue_balancing = false;
                    return r;
                }
                ScanOutcome::Busiest(b) => b,
                _ => return self.lb_out_balanced_v4_5(&env),
            };
            env.src_cpu = busiest;
            ld_moved = 0;
            if self.nr_running_v3_9(busiest) > 1 {
                // Attempt to move tasks; with one task the group stays imbalanced and
                // ld_moved stays zero.
                env.flags |= LBF_ALL_PINNED;
                env.loop_max =
                    (self.params.nr_migrate as u64).min(self.nr_running_v3_9(busiest)) as u32;
                loop {
                    self.update_rq_clock(busiest, now);
                    self.work.rq_locks.push(busiest);
                    let cur = self.detach_tasks_v4_5(&mut env);
                    if cur != 0 {
                        self.attach_tasks(&mut env, now);
                        ld_moved += cur;
                    }
                    if env.flags & LBF_NEED_BREAK != 0 {
                        env.flags &= !LBF_NEED_BREAK;
                        continue;
                    }
                    // Tasks pinned away from us may go to another CPU of our group.
                    if env.flags & LBF_DST_PINNED != 0 && env.imbalance > 0 {
                        env.cpus.clear(env.dst_cpu);
                        env.dst_cpu = env.new_dst_cpu;
                        env.flags &= !LBF_DST_PINNED;
                        env.loop_ = 0;
                        env.loop_break = SCHED_NR_MIGRATE_BREAK;
                        continue;
                    }
                    break;
                }
                // Affinity kept us from reaching balance: tell the level above.
                if let Some(parent) = sd_parent {
                    if env.flags & LBF_SOME_PINNED != 0 && env.imbalance > 0 {
                        let head = self.topo.domain(parent).groups[0];
                        self.topo
                            .group_sgc(head)
                            .imbalance
                            .store(1, Ordering::Relaxed);
                    }
                }
                // Every task here was pinned: look elsewhere, at this instant.
                if env.flags & LBF_ALL_PINNED != 0 {
                    env.cpus.clear(busiest);
                    let retry = match self.balancer() {
                        Balancer::V4_15 => !env.cpus.is_subset(&env.dst_grpmask),
                        _ => !env.cpus.is_empty(),
                    };
                    if retry {
                        env.loop_ = 0;
                        env.loop_break = SCHED_NR_MIGRATE_BREAK;
                        let again = self.load_balance_redo_v4_5(env);
                        env = again.env;
                        outcome = again.outcome;
                        continue;
                    }
                    return self.lb_out_all_pinned_v4_5(&env);
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
            if self.need_active_balance_v4_5(&env) {
                // The running task must be allowed here, or the stopper cannot push it.
                let allowed = self.rqs[busiest]
                    .curr
                    .is_none_or(|c| self.tasks[c].allowed_on(this_cpu));
                if !allowed {
                    env.flags |= LBF_ALL_PINNED;
                    return self.lb_out_one_pinned_v4_5(&env);
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

    /// `out_balanced:` of 4.5's `load_balance`: balance was reached, perhaps despite
    /// affinity, so the parent level's group is no longer imbalanced.
    fn lb_out_balanced_v4_5(&mut self, env: &LbEnv) -> LbResult {
        if let Some(parent) = self.topo.domain(env.sd).parent {
            let head = self.topo.domain(parent).groups[0];
            let flag = &self.topo.group_sgc(head).imbalance;
            if flag.load(Ordering::Relaxed) != 0 {
                flag.store(0, Ordering::Relaxed);
            }
        }
        self.lb_out_all_pinned_v4_5(env)
    }

    /// `out_all_pinned:`: balanced because everything is pinned at this level; the
    /// imbalance flag stays for the parent level to act on.
    fn lb_out_all_pinned_v4_5(&mut self, env: &LbEnv) -> LbResult {
        self.sd_stats[env.sd].lb_balanced[env.idle as usize] += 1;
        self.lb.sd[env.sd].nr_balance_failed = 0;
        self.lb_out_one_pinned_v4_5(env)
    }

    /// `out_one_pinned:`: tune up the balancing interval (newly idle balances too, as in
    /// 3.9).
    fn lb_out_one_pinned_v4_5(&mut self, env: &LbEnv) -> LbResult {
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

    /// `need_active_balance(env)` of 4.5: an idle destination and a source whose single
    /// task runs on a capacity reduced below the destination's (by `imbalance_pct`), or
    /// more than `cache_nice_tries + 2` failures (`SD_ASYM_PACKING` is not modelled).
    pub fn need_active_balance_v4_5(&self, env: &LbEnv) -> bool {
        let p = &self.legacy().sd[env.sd];
        if env.idle != CpuIdleType::NotIdle
            && self.nr_running_v3_9(env.src_cpu) == 1
            && self.check_cpu_capacity_v4_5(env.src_cpu, env.sd)
            && self.capacity_of_v4_5(env.src_cpu) * p.imbalance_pct
                < self.capacity_of_v4_5(env.dst_cpu) * 100
        {
            return true;
        }
        self.lb.sd[env.sd].nr_balance_failed > p.cache_nice_tries + 2
    }

    /// `active_load_balance_cpu_stop` of 4.5 on `busiest_cpu`: the stopper preempts the
    /// current task and moves one task (`detach_one_task`, as an idle balance) to the CPU
    /// that asked, through the lowest domain spanning both.
    pub fn active_load_balance_cpu_stop_v4_5(
        &mut self,
        busiest_cpu: usize,
        now: u64,
    ) -> Option<TaskId> {
        self.set_now(now);
        let target = self.lb.rq[busiest_cpu].push_cpu;
        let mut moved = None;
        // "Is there any task to move?" 4.5 tests nr_running <= 1 with the stopper itself
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
                self.update_rq_clock(busiest_cpu, now);
                self.preempt_current_for_stopper(busiest_cpu);
                let mut env = self.lb_env_v4_5(target, sd, CpuIdleType::Idle);
                env.src_cpu = busiest_cpu;
                self.sd_stats[sd].alb_count += 1;
                match self.detach_one_task_v4_5(&mut env) {
                    Some(p) => {
                        self.sd_stats[sd].alb_pushed += 1;
                        if self.balancer() == Balancer::V4_15 {
                            // Active balancing done: reset the failure counter.
                            self.lb.sd[sd].nr_balance_failed = 0;
                        }
                        // attach_one_task takes the target's lock once the source's is
                        // dropped.
                        self.work.rq_locks.push(target);
                        self.update_rq_clock(target, now);
                        self.attach_task(target, p);
                        moved = Some(p);
                    }
                    None => self.sd_stats[sd].alb_failed += 1,
                }
            }
        }
        self.lb.rq[busiest_cpu].active_balance = false;
        moved
    }
}
