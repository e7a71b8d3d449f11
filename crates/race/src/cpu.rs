//! One emulated CPU as its driving thread sees it: its own balancing state (its domains'
//! runtime fields and schedstat counters, `next_balance`, its `sched_rng`) and the shared
//! world. [`CpuCtx`] implements the balance crate's [`LbRead`], [`MoveTasks`] and
//! [`BalanceHost`], so `sched_balance_newidle`, `sched_balance_rq` and
//! `sched_balance_domains` run here as the same code the virtual-time engine runs.
//!
//! Locking follows the kernel's newidle and periodic paths: `detach_tasks` runs under the
//! busiest runqueue's lock only, `attach_tasks` under the destination's only, and no path
//! holds two runqueue locks at once (the kernel's double locks belong to active balancing
//! and migration, which race mode does not run).

use std::sync::atomic::Ordering;
use std::time::Instant;

use fairsim_balance::lb::{LbEnv, PrandomState, SdRuntime};
use fairsim_balance::{
    BalanceHost, CfsSignals, CpuIdleType, Features, LbRead, MoveTasks, ScanCounters, SdSchedstat,
    TaskId, BOOT_CLOCK_OFFSET,
};
use fairsim_pelt::UtilEstMode;
use fairsim_topology::{Machine, SchedDomains, SdId};

use super::hist::DurHist;
use super::rq::{Locked, RaceRq, Token};
use super::sync::{AtomicBool, AtomicU64, AtomicUsize};

/// What every thread shares: the machine, its domains (whose `sched_group_capacity` and
/// `sched_domain_shared` fields are atomics), the runqueues and the root-domain flags.
#[derive(Debug)]
pub struct RaceWorld {
    /// The machine.
    pub machine: Machine,
    /// Its sched domains.
    pub topo: SchedDomains,
    /// `sched_features`.
    pub features: Features,
    /// The util_est form in use (off when `UTIL_EST` is).
    pub util_est: UtilEstMode,
    /// CONFIG_HZ.
    pub hz: u64,
    /// `TICK_NSEC`.
    pub tick_nsec: u64,
    /// `max_load_balance_interval`.
    pub max_load_balance_interval: u64,
    /// `sysctl_sched_migration_cost`.
    pub migration_cost: u64,
    /// `sysctl_sched_nr_migrate`.
    pub nr_migrate: u32,
    /// `sched_smt_active()`, fixed for the run.
    pub smt_active: bool,
    /// The runqueues.
    pub rqs: Vec<RaceRq>,
    /// `rd->overloaded`.
    pub rd_overloaded: AtomicBool,
    /// `sched_balance_running` (SD_SERIALIZE).
    pub balance_running: AtomicBool,
    /// Failed `atomic_try_cmpxchg_acquire` on `sched_balance_running`.
    pub serialize_failed: AtomicU64,
    /// The CPU on whose timers each token sleeps (`usize::MAX` while it is runnable).
    pub asleep_on: Vec<AtomicUsize>,
    /// The driving threads, to wake one whose CPU got a token (the wakeup IPI).
    pub threads: std::sync::OnceLock<Vec<std::thread::Thread>>,
    /// When the run started.
    pub start: Instant,
    /// Set when the run's time is up.
    pub stop: AtomicBool,
}

impl RaceWorld {
    /// Nanoseconds since the run started.
    pub fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Wakes the thread that drives `cpu` if it waits idle.
    pub fn kick(&self, cpu: usize) {
        if let Some(ts) = self.threads.get() {
            if !ts.is_empty() {
                ts[cpu % ts.len()].unpark();
            }
        }
    }
}

/// What one emulated CPU measured.
#[derive(Debug, Clone, Default)]
pub struct CpuStats {
    /// `sched_balance_newidle` calls (every time the CPU ran out of tokens).
    pub newidle_calls: u64,
    /// Of those, the ones that passed the `rd->overloaded` and `avg_idle` gates.
    pub newidle_balances: u64,
    /// Of those, the ones that pulled a token.
    pub newidle_pulled: u64,
    /// Wall ns spent inside `sched_balance_newidle` (all calls).
    pub newidle_ns: u64,
    /// Wall ns of the `update_sd_lb_stats` calls of newidle balances.
    pub sd_lb_stats_newidle_ns: DurHist,
    /// Wall ns of the `update_sd_lb_stats` calls of periodic balances.
    pub sd_lb_stats_periodic_ns: DurHist,
    /// Periodic `sched_balance_domains` runs.
    pub periodic_runs: u64,
    /// Active balances the balancer wanted (race mode has no stopper to run them).
    pub active_wanted: u64,
    /// Completed run/sleep loops of the tokens this CPU ran.
    pub loops: u64,
    /// Tokens given the CPU (`pcount`).
    pub picks: u64,
    /// Wakeups this CPU made (`ttwu_count`): its timers' and partner wakeups.
    pub wakeups: u64,
    /// Of those, onto this CPU itself (`ttwu_local`).
    pub wakeups_local: u64,
    /// Newidle balances that left the CPU idle (`sched_goidle`).
    pub goidle: u64,
    /// Wall ns the CPU's tokens spun.
    pub busy_ns: u64,
    /// Partner wakeups this CPU made (`--pattern pairs`).
    pub partner_wakeups: u64,
    /// Locks taken while another was held: a broken lock protocol (must stay 0).
    pub nested_locks: u64,
}

/// One emulated CPU driven by a thread.
pub struct CpuCtx<'w> {
    pub(super) w: &'w RaceWorld,
    /// This CPU.
    pub cpu: usize,
    pub(super) now: u64,
    /// (domain, runtime fields, schedstat) of each of this CPU's domains, bottom up.
    pub(super) sds: Vec<(SdId, SdRuntime, SdSchedstat)>,
    /// Where a lookup of a domain that is not this CPU's lands (never, by construction).
    spare: (SdRuntime, SdSchedstat),
    rnd: PrandomState,
    pub(super) next_balance: u64,
    pub(super) locked: Option<Locked<'w>>,
    pub(super) in_flight: Vec<(TaskId, Token)>,
    /// Measurements.
    pub stats: CpuStats,
}

impl<'w> CpuCtx<'w> {
    /// `cpu`'s context with its domains' initial runtime fields from `sd_rt` (indexed like
    /// `topo.domains`) and its random state.
    pub fn new(w: &'w RaceWorld, cpu: usize, sd_rt: &[SdRuntime], rnd: PrandomState) -> Self {
        let sds = w
            .topo
            .domains_of(cpu)
            .map(|sd| (sd, sd_rt[sd].clone(), SdSchedstat::default()))
            .collect();
        let spare = (SdRuntime::default(), SdSchedstat::default());
        CpuCtx {
            w,
            cpu,
            now: 0,
            sds,
            spare,
            rnd,
            next_balance: 0,
            locked: None,
            in_flight: Vec::new(),
            stats: CpuStats::default(),
        }
    }

    /// The kernel clock for race time `now`.
    pub fn kclock(now: u64) -> u64 {
        now + BOOT_CLOCK_OFFSET
    }

    /// Locks `cpu`'s runqueue, counting a lock taken while another is held.
    pub(super) fn lock(&mut self, cpu: usize) -> Locked<'w> {
        if self.locked.is_some() {
            self.stats.nested_locks += 1;
        }
        self.w.rqs[cpu].lock()
    }

    fn sd_index(&self, sd: SdId) -> Option<usize> {
        self.sds.iter().position(|e| e.0 == sd)
    }

    /// Tokens this CPU has detached and not yet attached (between `detach_tasks` and
    /// `attach_tasks`; none once a balance has returned).
    pub fn in_flight(&self) -> Vec<TaskId> {
        self.in_flight.iter().map(|e| e.0).collect()
    }

    /// This CPU's schedstat counters by domain.
    pub fn schedstats(&self) -> impl Iterator<Item = (SdId, &SdSchedstat)> {
        self.sds.iter().map(|e| (e.0, &e.2))
    }
}

impl LbRead for CpuCtx<'_> {
    fn topo(&self) -> &SchedDomains {
        &self.w.topo
    }
    fn machine(&self) -> &Machine {
        &self.w.machine
    }
    fn features(&self) -> Features {
        self.w.features
    }
    fn util_est_enabled(&self) -> bool {
        self.w.util_est.enabled()
    }
    fn jiffies(&self) -> u64 {
        Self::kclock(self.now) / self.w.tick_nsec
    }
    fn max_load_balance_interval(&self) -> u64 {
        self.w.max_load_balance_interval
    }
    fn hz(&self) -> u64 {
        self.w.hz
    }
    fn balance_interval(&self, sd: SdId) -> u64 {
        self.sd_rt(sd).balance_interval
    }
    fn rq_nr_running(&self, cpu: usize) -> u32 {
        self.w.rqs[cpu].nr_running.load(Ordering::Relaxed)
    }
    fn rq_h_nr_queued(&self, cpu: usize) -> u32 {
        self.rq_nr_running(cpu)
    }
    fn rq_ttwu_pending(&self, _cpu: usize) -> bool {
        // Wakeups enqueue under the target's lock at once; there is no wake list.
        false
    }
    fn idle_cpu(&self, cpu: usize) -> bool {
        self.w.rqs[cpu].idle.load(Ordering::Relaxed)
    }
    fn cfs_signals(&self, cpu: usize) -> CfsSignals {
        let rq = &self.w.rqs[cpu];
        CfsSignals {
            load_avg: rq.load_avg.load(Ordering::Relaxed),
            runnable_avg: rq.runnable_avg.load(Ordering::Relaxed),
            util_avg: rq.util_avg.load(Ordering::Relaxed),
            util_est: rq.util_est.load(Ordering::Relaxed),
        }
    }
    fn misfit_task_load(&self, _cpu: usize) -> u64 {
        // Race mode runs symmetric machines only: no task is misfit.
        0
    }
    fn capacity_of(&self, cpu: usize) -> u64 {
        self.w.rqs[cpu].cpu_capacity
    }
    fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64 {
        self.w.rqs[cpu].cpu_capacity
    }
    fn sched_smt_active(&self) -> bool {
        self.w.smt_active
    }
    fn scan_clock(&self) -> u64 {
        self.w.now_ns()
    }
}

impl MoveTasks for CpuCtx<'_> {
    fn mv_topo(&self) -> &SchedDomains {
        &self.w.topo
    }
    fn mv_features(&self) -> Features {
        self.w.features
    }
    fn migration_cost(&self) -> u64 {
        self.w.migration_cost
    }
    fn nr_balance_failed(&self, sd: SdId) -> u32 {
        self.sd_rt(sd).nr_balance_failed
    }
    fn src_nr_running(&self, _src: usize) -> u32 {
        self.locked.as_ref().map_or(0, |g| g.nr_running())
    }
    fn src_tasks_tail(&self, _src: usize) -> Option<TaskId> {
        self.locked.as_ref()?.cfs_tasks.last().copied()
    }
    fn src_tasks(&self, _src: usize) -> Vec<TaskId> {
        self.locked
            .as_ref()
            .map_or_else(Vec::new, |g| g.cfs_tasks.clone())
    }
    fn src_tasks_rotate_tail(&mut self, _src: usize) {
        if let Some(g) = self.locked.as_mut() {
            if let Some(p) = g.cfs_tasks.pop() {
                g.cfs_tasks.insert(0, p);
            }
        }
    }
    fn src_clock_task(&self, _src: usize) -> u64 {
        self.locked.as_ref().map_or(0, |g| g.clock)
    }
    fn src_cfs_next(&self, _src: usize, _p: TaskId) -> Option<TaskId> {
        // Tokens never set the next buddy.
        None
    }
    fn src_task_running(&self, _src: usize, p: TaskId) -> bool {
        self.locked.as_ref().is_some_and(|g| g.curr == Some(p))
    }
    fn dst_nr_running(&self, dst: usize) -> u32 {
        self.rq_nr_running(dst)
    }
    fn task_allowed_on(&self, _p: TaskId, _cpu: usize) -> bool {
        true
    }
    fn task_exec_start(&self, p: TaskId) -> u64 {
        self.locked
            .as_ref()
            .and_then(|g| g.tokens.get(&p))
            .map_or(0, |t| t.exec_start)
    }
    fn mv_task_h_load(&self, p: TaskId) -> u64 {
        // task_h_load without task groups is the task's own load_avg.
        self.locked
            .as_ref()
            .and_then(|g| g.tokens.get(&p))
            .map_or(0, |t| t.avg.load_avg)
    }
    fn mv_task_util_est(&self, p: TaskId) -> u64 {
        let ue = self.w.util_est;
        self.locked
            .as_ref()
            .and_then(|g| g.tokens.get(&p))
            .map_or(0, |t| fairsim_pelt::util_est::task_util_est(&t.avg, ue))
    }
    fn mv_task_fits_cpu(&self, _p: TaskId, _cpu: usize) -> bool {
        true
    }
    fn mv_task_idle_policy(&self, _p: TaskId) -> bool {
        // Race mode's tokens are all SCHED_NORMAL.
        false
    }
    fn detach_task_from(&mut self, p: TaskId, _env: &LbEnv) {
        let ue = self.w.util_est;
        if let Some(g) = self.locked.as_mut() {
            if let Some(t) = g.dequeue(p, true, ue) {
                self.in_flight.push((p, t));
            }
        }
    }
    fn count_examined(&mut self) {}
    fn count_gained(&mut self, sd: SdId, itype: CpuIdleType, n: u64, hot: bool) {
        let s = self.sd_stats_mut(sd);
        if hot {
            s.lb_hot_gained[itype as usize] += n;
        } else {
            s.lb_gained[itype as usize] += n;
        }
    }
}

impl BalanceHost for CpuCtx<'_> {
    fn set_now(&mut self, now: u64) {
        self.now = self.now.max(now);
    }
    /// 6.12's balancer, or 6.5's where `--kernel 6.5` asks: both are written over these
    /// traits (the older kernels' keep per-CPU state only the engine's machine has, and
    /// `validate` refuses them).
    fn balancer(&self) -> fairsim_balance::lb::era::Balancer {
        use fairsim_balance::lb::era::Balancer;
        match Balancer::for_features(self.w.features) {
            Balancer::V6_5 => Balancer::V6_5,
            _ => Balancer::V6_12,
        }
    }
    fn sched_clock(&self) -> u64 {
        Self::kclock(self.now)
    }
    fn sd_rt(&self, sd: SdId) -> &SdRuntime {
        match self.sd_index(sd) {
            Some(i) => &self.sds[i].1,
            None => &self.spare.0,
        }
    }
    fn sd_rt_mut(&mut self, sd: SdId) -> &mut SdRuntime {
        match self.sd_index(sd) {
            Some(i) => &mut self.sds[i].1,
            None => &mut self.spare.0,
        }
    }
    fn sd_stats_mut(&mut self, sd: SdId) -> &mut SdSchedstat {
        match self.sd_index(sd) {
            Some(i) => &mut self.sds[i].2,
            None => &mut self.spare.1,
        }
    }
    fn fold_scan(&mut self, sd: SdId, itype: CpuIdleType, c: ScanCounters) {
        self.sd_stats_mut(sd).lb_sg_scan[itype as usize] += c.sg_scan;
        if let Some(o) = c.rd_overloaded {
            self.w.rd_overloaded.store(o, Ordering::Relaxed);
        }
        if let Some(mean) = c.sd_lb_stats_ns.checked_div(c.sd_lb_stats_calls) {
            let ns = u32::try_from(mean).unwrap_or(u32::MAX);
            let v = if itype == CpuIdleType::NewlyIdle {
                &mut self.stats.sd_lb_stats_newidle_ns
            } else {
                &mut self.stats.sd_lb_stats_periodic_ns
            };
            v.record(ns);
        }
    }
    fn nr_migrate(&self) -> u32 {
        self.w.nr_migrate
    }
    fn lock_src_rq(&mut self, src: usize, now: u64) {
        let mut g = self.lock(src);
        g.update_clock(Self::kclock(now));
        self.locked = Some(g);
    }
    fn lock_src_rq_raw(&mut self, src: usize) {
        let g = self.lock(src);
        self.locked = Some(g);
    }
    fn unlock_src_rq(&mut self, _src: usize) {
        self.locked = None;
    }
    fn attach_tasks(&mut self, env: &mut LbEnv, now: u64) {
        let ue = self.w.util_est;
        let mut g = self.lock(env.dst_cpu);
        g.update_clock(Self::kclock(now));
        // env->tasks is a list_add stack: the last task detached attaches first.
        for p in std::mem::take(&mut env.tasks).into_iter().rev() {
            if let Some(i) = self.in_flight.iter().position(|e| e.0 == p) {
                let (p, t) = self.in_flight.swap_remove(i);
                g.enqueue(p, t, ue);
            }
        }
        if g.nr_running() >= 2 {
            self.w.rd_overloaded.store(true, Ordering::Relaxed);
        }
    }
    fn src_curr_allowed_on(&self, _src: usize, _cpu: usize) -> bool {
        true
    }
    fn queue_active_balance(&mut self, _busiest: usize, _this_cpu: usize) -> bool {
        self.stats.active_wanted += 1;
        false
    }
    fn rd_overloaded(&self, _cpu: usize) -> bool {
        // Race mode builds the whole machine as one root domain, so one flag serves all.
        self.w.rd_overloaded.load(Ordering::Relaxed)
    }
    fn avg_idle(&self, cpu: usize) -> u64 {
        self.w.rqs[cpu].avg_idle.load(Ordering::Relaxed)
    }
    fn next_random(&mut self, _cpu: usize) -> u32 {
        self.rnd.next_u32()
    }
    fn newidle_enter(&mut self, _cpu: usize) {
        // update_misfit_status(NULL): nothing is misfit on a symmetric machine.
    }
    fn set_idle_stamp(&mut self, cpu: usize) {
        let mut g = self.lock(cpu);
        g.idle_stamp = g.clock;
    }
    fn update_blocked_averages(&mut self, cpu: usize, now: u64) {
        let mut g = self.lock(cpu);
        g.update_clock(Self::kclock(now));
        g.update_blocked();
    }
    fn max_idle_balance_cost(&self, cpu: usize) -> u64 {
        self.w.rqs[cpu]
            .max_idle_balance_cost
            .load(Ordering::Relaxed)
    }
    fn set_max_idle_balance_cost(&mut self, cpu: usize, v: u64) {
        self.lock(cpu).max_idle_balance_cost = v;
    }
    fn rq_next_balance(&self, _cpu: usize) -> u64 {
        self.next_balance
    }
    fn set_rq_next_balance(&mut self, _cpu: usize, v: u64) {
        self.next_balance = v;
    }
    fn clear_idle_stamp(&mut self, cpu: usize) {
        self.lock(cpu).idle_stamp = 0;
    }
    fn nohz_newidle_balance(&mut self, _cpu: usize) {
        // Race mode CPUs keep their tick (nohz=off): they balance for themselves.
    }
    fn try_serialize(&mut self) -> bool {
        let ok = self
            .w
            .balance_running
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        if !ok {
            self.w.serialize_failed.fetch_add(1, Ordering::Relaxed);
        }
        ok
    }
    fn end_serialize(&mut self) {
        self.w.balance_running.store(false, Ordering::Release);
    }
    fn push_active_balance(&mut self, _busiest: usize) {}
}
