//! `sched_balance_rq` (was `load_balance`), split at the point where the kernel stops
//! reading statistics and starts moving tasks, so that the engine can let virtual time
//! pass in between: [`BalanceAct::sched_balance_rq_scan`] runs `should_we_balance`, picks
//! the busiest group and runqueue; [`BalanceAct::sched_balance_rq_act`] detaches and
//! attaches tasks against the state of that later instant and does the bookkeeping. Also
//! `should_we_balance`, `need_active_balance` and `active_load_balance_cpu_stop`.
//!
//! This is 6.12's code only. Where another kernel's balancer differs (Linux 6.5's in
//! `lb/v6_5`), the choice is made at the era entry points of [`crate::lb::era`], which
//! implement [`BalanceAct::lb_rescan`] and [`BalanceAct::sched_balance_rq_act`]: the era
//! modules build on this one, and this one names none of them.

use std::sync::atomic::Ordering;

use fairsim_topology::{CpuMask, SdFlags, SdId};

use crate::lb::detach::MoveTasks;
use crate::lb::env::{
    LbEnv, MigrationType, LBF_ACTIVE_LB, LBF_ALL_PINNED, LBF_DST_PINNED, LBF_NEED_BREAK,
    LBF_SOME_PINNED, SCHED_NR_MIGRATE_BREAK,
};
use crate::lb::find::SrcSelect;
use crate::lb::host::BalanceHost;
use crate::lb::view::{LbRead, ScanCounters};
use crate::sched::Sched;
use crate::stats::CpuIdleType;
use crate::stats::SdSchedstat;

pub use crate::lb::env::{LbResult, LbScan, ScanOutcome};
use crate::task::TaskId;

/// `MAX_PINNED_INTERVAL` in ms.
const MAX_PINNED_INTERVAL: u64 = 512;

impl LbScan {
    /// The runqueue whose lock the act phase will take: the busiest CPU, when it still has
    /// more than one task (`sched_balance_rq` reads `busiest->nr_running` before
    /// `rq_lock_irqsave(busiest)`), so that an engine can make the act wait for the lock.
    pub fn lock_target<V: LbRead + ?Sized>(&self, v: &V) -> Option<usize> {
        match self.outcome {
            ScanOutcome::Busiest(b) if v.rq_nr_running(b) > 1 => Some(b),
            _ => None,
        }
    }
}

/// The scan half of load balancing, for any [`LbRead`] view of the machine.
pub trait BalanceScan: SrcSelect {
    /// `should_we_balance(env)`: only one CPU of the local group balances a domain: the
    /// first idle core's CPU, else the first idle SMT CPU, else the group's balance CPU.
    /// A newly idle CPU always may, unless it got work meanwhile.
    fn should_we_balance(&self, env: &LbEnv) -> bool {
        if !env.cpus.test(env.dst_cpu) {
            return false;
        }
        if env.idle == CpuIdleType::NewlyIdle {
            return self.rq_nr_running(env.dst_cpu) == 0 && !self.rq_ttwu_pending(env.dst_cpu);
        }
        let sd = self.topo().domain(env.sd);
        let head = sd.groups[0];
        let mut swb_cpus = self.topo().group_sgc(head).balance_mask.clone();
        let mut idle_smt: Option<usize> = None;
        let candidates: Vec<usize> = swb_cpus.and(&env.cpus).iter().collect();
        for cpu in candidates {
            if !swb_cpus.test(cpu) || !self.idle_cpu(cpu) {
                continue;
            }
            // Prefer a CPU of a fully idle core; remember the first idle SMT CPU.
            if !sd.flags.contains(SdFlags::SHARE_CPUCAPACITY) && !self.is_core_idle(cpu) {
                if idle_smt.is_none() {
                    idle_smt = Some(cpu);
                }
                swb_cpus.andnot_with(&self.machine().cpus[cpu].smt_siblings);
                continue;
            }
            return cpu == env.dst_cpu;
        }
        if let Some(c) = idle_smt {
            return c == env.dst_cpu;
        }
        self.topo().group_sgc(head).balance_cpu() == env.dst_cpu
    }

    /// The environment `sched_balance_rq` starts with.
    fn lb_env(&self, this_cpu: usize, sd: SdId, idle: CpuIdleType) -> LbEnv {
        let d = self.topo().domain(sd);
        LbEnv {
            sd,
            src_cpu: this_cpu,
            dst_cpu: this_cpu,
            dst_core_idle: false,
            dst_grpmask: self.topo().group_sgc(d.groups[0]).balance_mask.clone(),
            new_dst_cpu: this_cpu,
            idle,
            imbalance: 0,
            // cpu_active_mask is every CPU: fairsim has no hotplug.
            cpus: d.span.clone(),
            flags: 0,
            loop_: 0,
            loop_break: SCHED_NR_MIGRATE_BREAK,
            loop_max: 0,
            migration_type: MigrationType::Load,
            tasks: Vec::new(),
        }
    }

    /// `redo:` of `sched_balance_rq`: the scan with an existing environment.
    fn lb_scan_from(&self, c: &mut ScanCounters, mut env: LbEnv) -> LbScan {
        if !self.should_we_balance(&env) {
            return LbScan {
                env,
                outcome: ScanOutcome::NotThisCpu,
            };
        }
        let Some(group) = self.sched_balance_find_src_group(c, &mut env) else {
            return LbScan {
                env,
                outcome: ScanOutcome::NoBusyGroup,
            };
        };
        LbScan {
            env,
            outcome: ScanOutcome::BusiestGroup(group),
        }
    }
}

impl<T: LbRead + ?Sized> BalanceScan for T {}

impl SdSchedstat {
    /// Counts what a scan of this domain found: `lb_nobusyg`, `lb_nobusyq`, or the
    /// imbalance by migration type.
    pub fn count_scan(&mut self, scan: &LbScan) {
        let itype = scan.env.idle as usize;
        match scan.outcome {
            ScanOutcome::NotThisCpu | ScanOutcome::BusiestGroup(_) => {}
            ScanOutcome::NoBusyGroup => self.lb_nobusyg[itype] += 1,
            ScanOutcome::NoBusyQueue => self.lb_nobusyq[itype] += 1,
            ScanOutcome::Busiest(_) => {
                let imb = scan.env.imbalance.max(0) as u64;
                match scan.env.migration_type {
                    MigrationType::Load => self.lb_imbalance_load[itype] += imb,
                    MigrationType::Util => self.lb_imbalance_util[itype] += imb,
                    MigrationType::Task => self.lb_imbalance_task[itype] += imb,
                    MigrationType::Misfit => self.lb_imbalance_misfit[itype] += imb,
                }
            }
        }
    }
}

/// The act half of load balancing and the whole `sched_balance_rq`, for any
/// [`BalanceHost`]: 6.12's code, with the two methods where a run's kernel chooses its
/// own code (`lb_rescan`, `sched_balance_rq_act`) declared here and implemented at the
/// era entry points ([`crate::lb::era`]), which an era's traits may extend without this
/// module naming them.
pub trait BalanceAct: BalanceHost {
    /// The scan half of `sched_balance_rq(this_cpu, this_rq, sd, idle)`: counts the call,
    /// asks `should_we_balance`, and finds the busiest group and runqueue with the
    /// imbalance to move, reading the state as it is at `now`.
    fn sched_balance_rq_scan(
        &mut self,
        this_cpu: usize,
        sd: SdId,
        idle: CpuIdleType,
        now: u64,
    ) -> LbScan {
        self.set_now(now);
        if self.balancer().has_cpu_load() {
            if let Some(scan) = self.legacy_lb_scan(this_cpu, sd, idle, now) {
                return scan;
            }
        }
        let itype = idle as usize;
        self.sd_stats_mut(sd).lb_count[itype] += 1;
        let env = self.lb_env(this_cpu, sd, idle);
        self.lb_rescan(env)
    }

    /// `redo:` of the run's kernel's `sched_balance_rq` (or `load_balance`): the scan with
    /// its counters folded in. An era entry point: [`crate::lb::era`] implements it for
    /// every host, choosing [`BalanceAct::lb_rescan_v6_12`] or an era's own (Linux 6.5's
    /// in `lb/v6_5`), so that this 6.12 module does not import the era modules.
    fn lb_rescan(&mut self, env: LbEnv) -> LbScan;

    /// `redo:` of 6.12's `sched_balance_rq`: [`BalanceScan::lb_scan_from`] with its
    /// counters folded in.
    fn lb_rescan_v6_12(&mut self, env: LbEnv) -> LbScan {
        let mut c = ScanCounters::default();
        let scan = BalanceScan::lb_scan_from(&*self, &mut c, env);
        self.lb_fold_scan(c, &scan);
        scan
    }

    /// The end of a `redo:` scan, whichever kernel's scan it was: folds the scan's
    /// counters into the domain's schedstats and counts what the scan found
    /// ([`SdSchedstat::count_scan`]), so that every era's rescan counts alike.
    fn lb_fold_scan(&mut self, c: ScanCounters, scan: &LbScan) {
        self.fold_scan(scan.env.sd, scan.env.idle, c);
        self.sd_stats_mut(scan.env.sd).count_scan(scan);
    }

    /// `sched_balance_find_src_rq` for a scan that found a busiest group, on the state as
    /// it is now: sets the busiest runqueue (or `lb_nobusyq`) and counts the outcome. A
    /// scan already resolved is left as it is.
    fn lb_resolve_src_rq(&mut self, scan: &mut LbScan) {
        let ScanOutcome::BusiestGroup(group) = scan.outcome else {
            return;
        };
        let mut c = ScanCounters::default();
        scan.outcome = match self.sched_balance_find_src_rq(&mut c, &scan.env, group) {
            Some(b) => {
                scan.env.src_cpu = b;
                ScanOutcome::Busiest(b)
            }
            None => ScanOutcome::NoBusyQueue,
        };
        self.fold_scan(scan.env.sd, scan.env.idle, c);
        self.sd_stats_mut(scan.env.sd).count_scan(scan);
    }

    /// The act half of `sched_balance_rq`: detach tasks from the busiest runqueue as it is
    /// at `now` (another CPU may have emptied it since the scan), attach them, handle
    /// pinned tasks, queue an active balance when the kernel would, and update
    /// `nr_balance_failed` and `balance_interval`. An era entry point: [`crate::lb::era`]
    /// implements it for every host, choosing [`BalanceAct::sched_balance_rq_act_v6_12`]
    /// or an era's own act half (Linux 6.5's `load_balance` in `lb/v6_5`).
    fn sched_balance_rq_act(&mut self, scan: LbScan, now: u64) -> LbResult;

    /// The act half of 6.12's `sched_balance_rq` (LEGACY_LB's goes through the host).
    fn sched_balance_rq_act_v6_12(&mut self, scan: LbScan, now: u64) -> LbResult {
        let mut scan = if self.balancer().has_cpu_load() {
            match self.legacy_lb_act(scan, now) {
                Ok(r) => return r,
                Err(scan) => *scan,
            }
        } else {
            scan
        };
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
                    // Another CPU balances this domain and the ones above.
                    let mut r = self.lb_out_balanced(&env);
                    r.continue_balancing = false;
                    return r;
                }
                ScanOutcome::NoBusyGroup | ScanOutcome::NoBusyQueue => {
                    return self.lb_out_balanced(&env);
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
            env.flags |= LBF_ALL_PINNED;
            if self.rq_nr_running(busiest) > 1 {
                env.loop_max = self.nr_migrate().min(self.rq_nr_running(busiest));
                loop {
                    self.lock_src_rq(busiest, now);
                    let cur = self.detach_tasks(&mut env);
                    self.unlock_src_rq(busiest);
                    if cur != 0 {
                        self.attach_tasks(&mut env, now);
                        ld_moved += cur;
                    }
                    if env.flags & LBF_NEED_BREAK != 0 {
                        env.flags &= !LBF_NEED_BREAK;
                        continue;
                    }
                    if env.flags & LBF_DST_PINNED != 0 && env.imbalance > 0 {
                        // Try the other CPU of our group the pinned task may use.
                        env.cpus.clear(env.dst_cpu);
                        env.dst_cpu = env.new_dst_cpu;
                        env.flags &= !LBF_DST_PINNED;
                        env.loop_ = 0;
                        env.loop_break = SCHED_NR_MIGRATE_BREAK;
                        continue;
                    }
                    break;
                }
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
                    if !env.cpus.is_subset(&env.dst_grpmask) {
                        env.loop_ = 0;
                        env.loop_break = SCHED_NR_MIGRATE_BREAK;
                        let again = self.lb_rescan(env);
                        env = again.env;
                        outcome = again.outcome;
                        continue;
                    }
                    // out_all_pinned
                    self.sd_stats_mut(sd).lb_balanced[itype] += 1;
                    self.sd_rt_mut(sd).nr_balance_failed = 0;
                    return self.lb_out_one_pinned(&env);
                }
            }
            break;
        }
        let busiest = env.src_cpu;
        if ld_moved == 0 {
            self.sd_stats_mut(sd).lb_failed[itype] += 1;
            if env.idle != CpuIdleType::NewlyIdle && env.migration_type != MigrationType::Misfit {
                self.sd_rt_mut(sd).nr_balance_failed += 1;
            }
            if self.need_active_balance(&env) {
                self.lock_src_rq_raw(busiest);
                let curr_allowed = self.src_curr_allowed_on(busiest, this_cpu);
                if !curr_allowed {
                    self.unlock_src_rq(busiest);
                    return self.lb_out_one_pinned(&env);
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

    /// `out_balanced:` of `sched_balance_rq`: clear the parent group's imbalance flag
    /// (unless everything was pinned), count the balanced outcome, reset failures, and
    /// back off.
    fn lb_out_balanced(&mut self, env: &LbEnv) -> LbResult {
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
        self.lb_out_one_pinned(env)
    }

    /// `out_one_pinned:`: back off the balance interval, except for newly idle and
    /// misfit balancing.
    fn lb_out_one_pinned(&mut self, env: &LbEnv) -> LbResult {
        let sd = env.sd;
        if env.idle != CpuIdleType::NewlyIdle && env.migration_type != MigrationType::Misfit {
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

    /// `need_active_balance(env)`: a running task must be pushed by the busiest CPU itself
    /// (asym packing, repeated failures, reduced capacity, or a misfit task).
    fn need_active_balance(&self, env: &LbEnv) -> bool {
        let sd = self.topo().domain(env.sd);
        // asym_active_balance
        if env.idle != CpuIdleType::NotIdle
            && self.sched_use_asym_prio(env.sd, env.dst_cpu)
            && (self.sched_asym_prefer(env.dst_cpu, env.src_cpu)
                || !self.sched_use_asym_prio(env.sd, env.src_cpu))
        {
            return true;
        }
        // imbalanced_active_balance
        if env.migration_type == MigrationType::Task
            && self.sd_rt(env.sd).nr_balance_failed > sd.cache_nice_tries + 2
        {
            return true;
        }
        if env.idle != CpuIdleType::NotIdle
            && self.rq_h_nr_queued(env.src_cpu) == 1
            && self.check_cpu_capacity(env.src_cpu, env.sd)
            && self.capacity_of(env.src_cpu) * u64::from(sd.imbalance_pct)
                < self.capacity_of(env.dst_cpu) * 100
        {
            return true;
        }
        env.migration_type == MigrationType::Misfit
    }

    /// `sched_balance_rq(this_cpu, this_rq, sd, idle, &continue_balancing)` in one go:
    /// scan and act at the same instant.
    fn sched_balance_rq(
        &mut self,
        this_cpu: usize,
        sd: SdId,
        idle: CpuIdleType,
        now: u64,
    ) -> LbResult {
        let scan = self.sched_balance_rq_scan(this_cpu, sd, idle, now);
        self.sched_balance_rq_act(scan, now)
    }
}

// The blanket `impl<T: BalanceHost + ?Sized> BalanceAct for T` is in `lb/era.rs`: it
// supplies the era entry points (`lb_rescan`, `sched_balance_rq_act`), the only methods
// here that choose between kernels.

impl Sched {
    /// `active_load_balance_cpu_stop` of 6.12 running on `busiest_cpu`: the stopper
    /// preempts the current task, pushes one task to the CPU that asked, and returns it.
    pub(crate) fn active_load_balance_cpu_stop_v6_12(
        &mut self,
        busiest_cpu: usize,
        now: u64,
    ) -> Option<TaskId> {
        self.set_now(now);
        let target = self.lb.rq[busiest_cpu].push_cpu;
        let mut moved = None;
        // "Is there any task to move?" The kernel tests `nr_running <= 1` with the stopper
        // itself queued (stop class) and counted; fairsim's stopper is not a task, so one
        // fair task is enough: a lone misfit or a lone task on a reduced-capacity CPU is
        // exactly what active balancing pushes.
        if self.lb.rq[busiest_cpu].active_balance
            && self.rqs[busiest_cpu].nr_running >= 1
            && target != busiest_cpu
        {
            let sd = self
                .topo
                .domains_of(target)
                .find(|&d| self.topo.domain(d).span.test(busiest_cpu));
            if let Some(sd) = sd {
                // The stopper holds its own rq's lock throughout; attach_one_task then
                // takes the target's (6.12 never holds both), which the engine charges.
                self.work.rq_locks.push(target);
                self.update_rq_clock(busiest_cpu, now);
                // The stopper runs: the current task is put back in the tree and may move.
                self.preempt_current_for_stopper(busiest_cpu);
                let mut env = self.lb_env(target, sd, CpuIdleType::Idle);
                env.src_cpu = busiest_cpu;
                env.flags = LBF_ACTIVE_LB;
                env.cpus = CpuMask::full(self.nr_cpus());
                self.sd_stats[sd].alb_count += 1;
                match self.detach_one_task(&mut env) {
                    Some(p) => {
                        self.sd_stats[sd].alb_pushed += 1;
                        self.lb.sd[sd].nr_balance_failed = 0;
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
