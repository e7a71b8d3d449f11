//! `Sched`: every runqueue and task of the emulated machine, and the fair class's entry
//! points as kernel/sched/core.c calls them: fork, wakeup, block, schedule, tick, migrate.
//!
//! The engine owns time and decides when things happen; each call here takes its `now`
//! (ns since the start of the emulation) and performs what the kernel does at that
//! instant, with the kernel's order of updates. Costs of doing so are the engine's business.

mod affinity;
pub use affinity::AffineMove;
mod enqueue;
mod invariant_error;
mod invariants;
pub use invariant_error::InvariantError;
mod switch;
mod wakeup;

use std::sync::Arc;

use fairsim_pelt::{
    init_entity_runnable_average, post_init_entity_util_avg, remove_entity_load_avg,
    util_est_dequeue, util_est_enqueue, util_est_update, SchedAvg, UtilEstMode,
};
use fairsim_topology::{Machine, SchedDomains};

use crate::cfs_rq::{
    cancel_protect_slice, dequeue_entity, do_preempt_short, enqueue_entity, entity_tick,
    put_prev_entity, qflags, requeue_delayed_entity, set_next_entity, update_curr, FairParams,
    RqClocks,
};
use crate::features::{Feature, Features};
use crate::rq::{Rq, SYSCTL_SCHED_MIGRATION_COST};
use crate::stats::SdSchedstat;
use crate::task::{OnRq, Policy, SchedEntity, SchedInfo, Task, TaskId, TaskState};
use crate::weight::{scale_load_down, LoadWeight};

/// The offset from the engine's time to the kernel clocks, defined with the runqueue's
/// clocks in [`crate::rq`] (which the task groups' timers read without importing the
/// scheduler) and named here too.
pub use crate::rq::BOOT_CLOCK_OFFSET;

/// `WF_*` wake flags.
pub mod wf {
    /// `WF_EXEC`.
    pub const EXEC: u32 = 0x02;
    /// `WF_FORK`.
    pub const FORK: u32 = 0x04;
    /// `WF_TTWU`.
    pub const TTWU: u32 = 0x08;
    /// `WF_SYNC`: the waker is about to sleep.
    pub const SYNC: u32 = 0x10;
    /// `WF_MIGRATED`.
    pub const MIGRATED: u32 = 0x20;
    /// `WF_RQ_SELECTED`.
    pub const RQ_SELECTED: u32 = 0x80;
}

/// Tunables of the emulated kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedParams {
    /// `sched_features`.
    pub features: Features,
    /// CONFIG_HZ (250 on Debian).
    pub hz: u32,
    /// Which util_est form to run.
    pub util_est: UtilEstMode,
    /// `sysctl_sched_migration_cost` in ns.
    pub migration_cost: u64,
    /// `sysctl_sched_nr_migrate`.
    pub nr_migrate: u32,
    /// Writes to the kernel's sysctl and debugfs tunables (`--sysctl`, `--debugfs`),
    /// applied in order by [`Sched::new`] on top of the boot values: they set
    /// `migration_cost` and `nr_migrate` above, and the fair class's slice and CFS
    /// tunables.
    pub tunables: crate::tunables::Tunables,
    /// Seed for the per-CPU random states (`sched_rng`).
    pub seed: u64,
    /// Exit latency in us of the idle state idle CPUs are in (`idle_get_state`), `None`
    /// without a cpuidle driver. Default 1: intel_idle's C1 on Sapphire Rapids, with deeper
    /// states disabled as in seed 000's setup.
    pub cpuidle_exit_latency_us: Option<u32>,
    /// The engine's `idle_scan_per_cpu` cost in ns: what one CPU read by an idle scan
    /// costs. Linux 4.15's `select_idle_cpu` times its scan into `sd->avg_scan_cost`,
    /// and fairsim's scan takes no virtual time inside the call, so the time is the
    /// visits the engine will charge times this figure. Default: the x86-2020s table's.
    pub idle_scan_per_cpu: u64,
}

impl Default for SchedParams {
    fn default() -> Self {
        SchedParams {
            features: Features::default(),
            hz: 250,
            util_est: UtilEstMode::V6_12,
            migration_cost: SYSCTL_SCHED_MIGRATION_COST,
            nr_migrate: 32,
            tunables: crate::tunables::Tunables::default(),
            seed: 0,
            cpuidle_exit_latency_us: Some(1),
            idle_scan_per_cpu: 40,
        }
    }
}

/// `sysctl_sched_base_slice` for `ncpus` online CPUs, defined with the other sysctls in
/// [`crate::tunables`] (which must not import the scheduler) and named here too.
pub use crate::tunables::base_slice_for;

/// What `try_to_wake_up` decided for a sleeping task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeDecision {
    /// The task was still queued (delayed dequeue) and was requeued in place; nothing more
    /// to do. `preempt` says whether its CPU must reschedule.
    Runnable {
        /// The task's CPU.
        cpu: usize,
        /// `resched_curr` was requested on that CPU.
        preempt: bool,
    },
    /// The task must be enqueued on `cpu` by [`Sched::ttwu_do_activate`].
    Enqueue {
        /// The selected CPU (`set_task_cpu` already applied).
        cpu: usize,
        /// Wake flags to pass on (`WF_MIGRATED` etc.).
        wake_flags: u32,
        /// `ttwu_queue_wakelist` applies: the target CPU enqueues the task itself after an
        /// IPI; until then its `ttwu_pending` keeps it from looking idle.
        via_wakelist: bool,
    },
    /// The task was not sleeping; nothing happened.
    NotSleeping,
}

/// Work done by the scheduler code since the engine last took the counters: what the
/// engine's cost model turns into CPU time (idle-CPU scans, groups and runqueues visited,
/// tasks examined and moved). Balance code adds to it; the engine reads and resets it
/// with [`Sched::take_work`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchedWork {
    /// CPUs whose state was read by an idle-CPU search (`select_idle_*`, find_dst_group_cpu)
    /// or by a balance's statistics, in total.
    pub cpus_visited: u64,
    /// Of `cpus_visited` by balancing, those in another LLC of the same node: their
    /// runqueue cache lines come from a remote cache.
    pub cpus_visited_remote_llc: u64,
    /// Of `cpus_visited` by balancing, those on another NUMA node.
    pub cpus_visited_remote_node: u64,
    /// Sched groups whose statistics were computed (wakeup slow path, load balance).
    pub groups_visited: u64,
    /// Tasks examined for migration (`can_migrate_task`).
    pub tasks_examined: u64,
    /// Tasks moved between runqueues.
    pub tasks_moved: u64,
    /// Remote runqueues whose lock balancing took (`rq_lock(busiest)` around
    /// `detach_tasks`, the target's in the stopper's `attach_one_task`), in order, so that the engine
    /// can hold them for the time the work under them takes.
    pub rq_locks: Vec<usize>,
    /// `__update_load_avg_se` calls made by entity operations (`update_load_avg`).
    pub pelt_se_updates: u64,
    /// `update_cfs_rq_load_avg` calls made by entity operations (`update_load_avg`).
    pub pelt_cfs_rq_updates: u64,
    /// `util_est_enqueue` calls that added a task's estimate (UTIL_EST on).
    pub util_est_enqueues: u64,
    /// `util_est_dequeue` calls that removed a task's estimate (UTIL_EST on).
    pub util_est_dequeues: u64,
    /// `util_est_update` calls that took a new sample: the task slept and its
    /// `util_avg` changed since the last one (`UTIL_AVG_UNCHANGED` clear).
    pub util_est_updates: u64,
}

/// The scheduler state of the whole machine.
#[derive(Debug, Clone)]
pub struct Sched {
    /// The machine.
    pub machine: Arc<Machine>,
    /// Its sched domains.
    pub topo: SchedDomains,
    /// Tunables.
    pub params: SchedParams,
    /// What the entity operations read.
    pub fair: FairParams,
    /// One runqueue per CPU.
    pub rqs: Vec<Rq>,
    /// Every task ever created, by id.
    pub tasks: Vec<Task>,
    /// Task groups (the root alone unless cgroups are declared).
    pub groups: crate::group::TaskGroups,
    /// schedstat counters of each domain, indexed like `topo.domains`.
    pub sd_stats: Vec<SdSchedstat>,
    /// `TICK_NSEC`.
    pub tick_nsec: u64,
    /// Work counters for the engine's cost model.
    pub work: SchedWork,
    /// Load-balancing state (per-domain runtime fields, nohz, root domain flags).
    pub lb: crate::lb::LbState,
    /// Engine time of the latest call, for code that reads `jiffies`.
    pub now: u64,
    /// Active balances queued (`stop_one_cpu_nowait`) on these busiest CPUs; the engine
    /// runs [`Sched::active_load_balance_cpu_stop`] on each.
    pub pending_active_balance: Vec<usize>,
    /// CPUs asked to reschedule since the engine last looked ([`Sched::take_resched`]).
    pub resched_list: Vec<usize>,
    /// When `Some`, every `set_task_cpu` that moves a task appends `(task, from, to)`
    /// here for a tracer to drain (`sched_migrate_task`); `None` (the default) records
    /// nothing.
    pub migration_log: Option<Vec<(TaskId, usize, usize)>>,
    /// The machine's cpufreq policies and governor ([`crate::cpufreq`]), `None` on a
    /// machine without frequency domains (every CPU at its highest frequency).
    pub cpufreq: Option<Box<crate::cpufreq::Cpufreq>>,
    /// Energy-aware scheduling: the perf domains [`Sched::install_cpufreq`] builds, the
    /// overutilized bookkeeping and EAS's counters ([`crate::energy`]).
    pub eas: crate::energy::Eas,
    /// `sched_uclamp_used`: some task was given a clamp, or a uclamp sysctl write changed
    /// a value ([`crate::uclamp`]).
    pub uclamp_used: bool,
    /// `uclamp_default[]`: the system's caps on the minimum and maximum clamps, from
    /// `kernel.sched_util_clamp_min` and `_max` (1024 each at boot).
    pub uclamp_default: [u32; 2],
    /// CPUs and groups read by code that only borrows the state (the wakeup path); folded
    /// into [`SchedWork`] by [`Sched::take_work`].
    visits: std::cell::Cell<(u64, u64)>,
    /// Where wakeups, forks and execs went ([`crate::select::stats`]), over the measured
    /// window.
    pub wake_stats: crate::select::stats::WakeStats,
    /// Per CPU: `distribute_cpu_mask_prev`, the last CPU
    /// [`Sched::cpumask_any_and_distribute`] returned there.
    distribute_prev: Vec<usize>,
    /// `sched_smt_active()`, the kernel's `sched_smt_present` static key: some CPU has an
    /// SMT sibling. The machine does not change under a run, so it is read once here
    /// rather than found again by a walk over every CPU on each wakeup and balance.
    pub(crate) smt_active: bool,
    /// Per CPU, its LLC id (`per_cpu(sd_llc_id)`) and NUMA node, packed together: a
    /// balance reads both of every CPU it scans, and the topology's per-CPU records are
    /// wide.
    pub(crate) llc_node: Vec<(u32, u32)>,
    /// The load-tracking tracepoints for a tracer to drain ([`crate::pelt_tp`]), kept
    /// only after [`PeltTpLog::enable`].
    pub pelt_tp: crate::pelt_tp::PeltTpLog,
}

/// What the pick in `__schedule` led to, for an engine that steps newidle balances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickOutcome {
    /// The switch is done: the new current task, `None` for idle.
    Next(Option<TaskId>),
    /// The fair class is empty: run a newidle balance ([`Sched::newidle_start`]), then
    /// [`Sched::schedule_after_newidle`]. The previous task stays current meanwhile, so
    /// the CPU does not look idle to others, as in the kernel.
    Newidle,
}

impl Sched {
    /// Sets up runqueues for `machine` with its built `topo`.
    pub fn new(
        machine: impl Into<Arc<Machine>>,
        topo: SchedDomains,
        mut params: SchedParams,
    ) -> Sched {
        let machine = machine.into();
        let n = machine.nr_cpus();
        // The tunables as the boot left them on `n` CPUs, then the run's writes.
        let tunables = params.tunables.state(
            params.features.kernel(),
            n,
            params.migration_cost,
            params.nr_migrate,
        );
        params.migration_cost = tunables.migration_cost;
        params.nr_migrate = tunables.nr_migrate;
        let hz = u64::from(params.hz.max(1));
        let tick_nsec = (1_000_000_000 + hz / 2) / hz;
        let rqs = (0..n)
            .map(|cpu| Rq::new(cpu, topo.cpus[cpu].cpu_capacity, BOOT_CLOCK_OFFSET))
            .collect();
        let fair = FairParams {
            features: params.features,
            cfs: tunables.cfs(),
            base_slice: u64::from(tunables.base_slice),
            tick_nsec,
            util_est: effective_util_est(params),
        };
        let sd_stats = vec![SdSchedstat::default(); topo.domains.len()];
        let lb = crate::lb::LbState::new(
            &topo,
            hz,
            Self::kclock(0) / tick_nsec,
            Self::kclock(0),
            params.seed,
        );
        let mut s = Sched {
            machine,
            topo,
            params,
            fair,
            rqs,
            tasks: Vec::new(),
            groups: crate::group::TaskGroups::new(n),
            sd_stats,
            tick_nsec,
            work: SchedWork::default(),
            lb,
            now: 0,
            pending_active_balance: Vec::new(),
            resched_list: Vec::new(),
            migration_log: None,
            cpufreq: None,
            eas: crate::energy::Eas::default(),
            uclamp_used: tunables.uclamp_key,
            uclamp_default: [tunables.uclamp_min, tunables.uclamp_max],
            visits: std::cell::Cell::new((0, 0)),
            wake_stats: crate::select::stats::WakeStats::default(),
            distribute_prev: vec![0; n],
            smt_active: false,
            llc_node: Vec::new(),
            pelt_tp: crate::pelt_tp::PeltTpLog::default(),
        };
        s.llc_node = (0..n)
            .map(|cpu| {
                (
                    s.topo.cpus[cpu].sd_llc_id as u32,
                    s.machine.cpus[cpu].node as u32,
                )
            })
            .collect();
        s.smt_active = s.machine.smt_present();
        s.groups.autogroup_enabled = tunables.autogroup_enabled != 0;
        s.groups.bw_slice = u64::from(tunables.cfs_bandwidth_slice_us) * 1000;
        if crate::lb::era::Balancer::for_features(params.features).has_cpu_load() {
            s.init_legacy_lb();
        }
        // Every CPU starts in the idle loop with its tick stopped.
        for cpu in 0..n {
            s.nohz_balance_enter_idle(cpu);
        }
        // The machine has been up and idle for a while: its periodic balances have set
        // SIS_UTIL's scan depth from an LLC utilization of zero (without this, the first
        // wakeups of a run would scan nothing until the LLC's first periodic balance).
        for cpu in 0..n {
            if let Some(llc) = s.topo.cpus[cpu].sd_llc {
                s.update_idle_cpu_scan(llc, 0);
            }
        }
        s
    }

    /// Sets every schedstat counter (per runqueue and per domain) back to zero, as a
    /// reader that subtracts a snapshot taken now (`schedstat.py -i`) would see them.
    pub fn reset_schedstat(&mut self) {
        for rq in &mut self.rqs {
            rq.stats = crate::stats::RqSchedstat::default();
        }
        for sd in &mut self.sd_stats {
            *sd = crate::stats::SdSchedstat::default();
        }
        self.wake_stats = crate::select::stats::WakeStats::default();
    }

    /// Whether the calls since the last [`Sched::take_work`] did any work the cost model
    /// charges. Most calls do none; the engine asks this first so that those cost it no
    /// copy of the counters.
    #[inline]
    pub fn has_work(&self) -> bool {
        let w = &self.work;
        self.visits.get() != (0, 0)
            || w.cpus_visited != 0
            || w.cpus_visited_remote_llc != 0
            || w.cpus_visited_remote_node != 0
            || w.groups_visited != 0
            || w.tasks_examined != 0
            || w.tasks_moved != 0
            || !w.rq_locks.is_empty()
            || w.pelt_se_updates != 0
            || w.pelt_cfs_rq_updates != 0
            || w.util_est_enqueues != 0
            || w.util_est_dequeues != 0
            || w.util_est_updates != 0
    }

    /// Returns the work counters accumulated since the last call and resets them.
    pub fn take_work(&mut self) -> SchedWork {
        let (cpus, groups) = self.visits.take();
        self.work.cpus_visited += cpus;
        self.work.groups_visited += groups;
        std::mem::take(&mut self.work)
    }

    /// The work counters since the last take or clear, read in place: the same figures
    /// [`Sched::take_work`] returns, without moving them out. The engine reads them this
    /// way on every scheduler call that did work and then calls [`Sched::clear_work`];
    /// moving the whole record out and back cost it a copy of it each time.
    #[inline]
    pub fn fold_work(&mut self) -> &SchedWork {
        let (cpus, groups) = self.visits.take();
        self.work.cpus_visited += cpus;
        self.work.groups_visited += groups;
        &self.work
    }

    /// Sets the work counters back to zero after [`Sched::fold_work`], keeping the lock
    /// list's buffer (which the engine may have taken with [`Sched::take_work_locks`]).
    #[inline]
    pub fn clear_work(&mut self) {
        let mut locks = std::mem::take(&mut self.work.rq_locks);
        locks.clear();
        self.work = SchedWork {
            rq_locks: locks,
            ..SchedWork::default()
        };
    }

    /// The remote runqueues the calls since the last clear locked, taken out of the work
    /// record (give the list back with [`Sched::recycle_work_locks`]).
    #[inline]
    pub fn take_work_locks(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.work.rq_locks)
    }

    /// Gives back a lock list from [`Sched::take_work_locks`] once read, so that its buffer
    /// is reused.
    #[inline]
    pub fn recycle_work_locks(&mut self, mut locks: Vec<usize>) {
        if self.work.rq_locks.capacity() == 0 {
            locks.clear();
            self.work.rq_locks = locks;
        }
    }

    /// The end of every entity operation on `cpu`'s cfs_rq (enqueue, dequeue, put, set,
    /// tick): the PELT updates it made go to the cost model's counters, and the cpufreq
    /// hook runs if the signals changed (`cfs_rq_util_change`).
    pub(crate) fn entity_op_done(&mut self, cpu: usize) {
        self.pelt_tp_drain(cpu);
        let calls = std::mem::take(&mut self.rqs[cpu].cfs.pelt_calls);
        self.work.pelt_se_updates += calls.se;
        self.work.pelt_cfs_rq_updates += calls.cfs_rq;
        self.cfs_rq_util_change(cpu);
    }

    /// Moves the load-tracking tracepoints `cpu`'s root runqueue logged into the
    /// scheduler's log ([`crate::pelt_tp`]): after every entity operation, and after the
    /// blocked-average update and the bandwidth throttles, which update entities outside
    /// one.
    pub(crate) fn pelt_tp_drain(&mut self, cpu: usize) {
        if let Some(tps) = self.rqs[cpu].cfs.pelt_tp.as_deref_mut() {
            if !tps.is_empty() {
                self.pelt_tp.extend(cpu, tps.drain(..));
            }
        }
    }

    /// Starts logging the load-tracking tracepoints ([`crate::pelt_tp`]): the
    /// scheduler's log and each CPU's root runqueue's.
    pub fn enable_pelt_tracepoints(&mut self) {
        self.pelt_tp.enable();
        for rq in &mut self.rqs {
            rq.cfs.pelt_tp.get_or_insert_with(Default::default);
        }
    }

    /// Counts one CPU whose runqueue an idle-CPU search read (for the cost model).
    pub(crate) fn count_cpu_visit(&self) {
        let (c, g) = self.visits.get();
        self.visits.set((c + 1, g));
    }

    /// The CPU visits counted by borrowing code since the engine last took the work: a
    /// call's visits are the difference across it ([`crate::select::stats`]).
    #[inline]
    pub(crate) fn cpus_visited_so_far(&self) -> u64 {
        self.visits.get().0
    }

    /// Counts one sched group whose statistics were computed (for the cost model).
    pub(crate) fn count_group_visit(&self) {
        let (c, g) = self.visits.get();
        self.visits.set((c, g + 1));
    }

    /// The kernel clock value for engine time `now`.
    pub fn kclock(now: u64) -> u64 {
        now + BOOT_CLOCK_OFFSET
    }

    /// `jiffies` at engine time `now`.
    pub fn jiffies(&self, now: u64) -> u64 {
        Self::kclock(now) / self.tick_nsec
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.rqs.len()
    }

    /// `update_rq_clock(cpu_rq(cpu))` at engine time `now`.
    pub fn update_rq_clock(&mut self, cpu: usize, now: u64) {
        self.rqs[cpu].update_rq_clock(Self::kclock(now));
    }

    pub(crate) fn clocks(&self, cpu: usize) -> RqClocks {
        let rq = &self.rqs[cpu];
        RqClocks {
            clock_task: rq.clock_task(),
            clock_pelt: rq.pelt.rq_clock_pelt(),
        }
    }

    /// `resched_curr(rq)`.
    pub fn resched_curr(&mut self, cpu: usize) {
        if !self.rqs[cpu].need_resched {
            self.resched_list.push(cpu);
        }
        self.rqs[cpu].need_resched = true;
    }

    /// CPUs asked to reschedule (`resched_curr`) since the last call, for the engine to
    /// deliver (an IPI to a busy remote CPU, a wakeup of an idle one).
    pub fn take_resched(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.resched_list)
    }

    /// `sched_fork` + `__sched_fork` + `init_entity_runnable_average` for a new task
    /// created on `parent_cpu`, allowed on `cpus_allowed` (every CPU when `None`).
    pub fn create_task(
        &mut self,
        name: &str,
        nice: i32,
        cpus_allowed: Option<fairsim_topology::CpuMask>,
        parent_cpu: usize,
    ) -> TaskId {
        let id = self.tasks.len();
        let n = self.nr_cpus();
        let cpus_allowed = cpus_allowed.unwrap_or_else(|| fairsim_topology::CpuMask::full(n));
        let load = LoadWeight::from_nice(nice);
        let avg = init_entity_runnable_average(true, scale_load_down(load.weight));
        let max_allowed_capacity = cpus_allowed
            .iter()
            .map(|c| self.rqs[c].capacity_orig)
            .max()
            .unwrap_or(1024);
        self.tasks.push(Task {
            id,
            name: name.to_string(),
            nice,
            policy: Policy::Normal,
            state: TaskState::New,
            on_rq: OnRq::No,
            on_cpu: false,
            cpu: parent_cpu,
            wake_cpu: parent_cpu,
            nr_cpus_allowed: cpus_allowed.weight(),
            cpus_allowed,
            recent_used_cpu: parent_cpu,
            last_wakee: None,
            wakee_flips: 0,
            wakee_flip_decay_ts: 0,
            se: SchedEntity::new(load, self.fair.base_slice, avg),
            sched_info: SchedInfo::default(),
            max_allowed_capacity,
            in_iowait: false,
            uclamp: crate::uclamp::TaskUclamp::default(),
        });
        id
    }

    /// Gives the new task `p` the policy it inherits from its launcher (`chrt -i 0` or
    /// `chrt -b 0` before the command: `sched_fork` copies the parent's policy and
    /// `set_load_weight` weighs a SCHED_IDLE task at `WEIGHT_IDLEPRIO`, so the task's
    /// initial `load_avg` is that weight too, as `init_entity_runnable_average` sets it).
    /// Called right after [`Sched::create_task`], before the task is forked. Only 6.12's
    /// fair class reads the policy; the engine refuses it on the eras.
    pub fn set_task_policy(&mut self, p: TaskId, policy: Policy) {
        let t = &mut self.tasks[p];
        t.policy = policy;
        if policy == Policy::Idle {
            t.se.load = LoadWeight::idle_prio();
            t.se.avg = init_entity_runnable_average(true, scale_load_down(t.se.load.weight));
        }
    }

    /// `sched_fork`'s class hook, `task_fork_fair(p)`, run on the parent's CPU at `now`
    /// right after [`Sched::create_task`]. 6.12's only sets
    /// `max_allowed_capacity` (done by `create_task`); CFS kernels place the child's
    /// vruntime here ([`crate::cfs`]).
    pub fn task_fork(&mut self, p: TaskId, parent_cpu: usize, now: u64) {
        if self.fair.features.kernel().is_cfs() {
            self.update_rq_clock(parent_cpu, now);
            self.task_fork_fair_cfs(p, parent_cpu);
        }
    }

    /// `sched_yield()` by the current task of `cpu` at `now`: the class's
    /// `yield_task`. Under EEVDF (6.12's `yield_task_fair`) the task gives up the rest of
    /// its request (its deadline moves a slice on); under CFS it becomes the skip buddy.
    pub fn yield_task(&mut self, cpu: usize, now: u64) {
        self.set_now(now);
        self.update_rq_clock(cpu, now);
        if self.fair.features.kernel().is_cfs() {
            self.yield_task_fair_cfs(cpu);
        } else {
            self.yield_task_fair(cpu);
        }
    }

    /// `set_cpus_allowed_ptr(p, mask)` for a task that is not running on a CPU outside the
    /// new mask: the affinity fields and `set_task_max_allowed_capacity`. (Moving a task off
    /// a newly disallowed CPU, which needs the stopper, is not modelled.)
    pub fn set_cpus_allowed(&mut self, p: TaskId, mask: fairsim_topology::CpuMask) {
        let max_cap = mask
            .iter()
            .map(|c| self.rqs[c].capacity_orig)
            .max()
            .unwrap_or(1024);
        let t = &mut self.tasks[p];
        t.nr_cpus_allowed = mask.weight();
        t.cpus_allowed = mask;
        t.max_allowed_capacity = max_cap;
    }

    /// `select_task_rq(p, cpu, wake_flags)` (core.c): the fair class chooses when the task
    /// may run on several CPUs; a disallowed answer falls back to an allowed CPU.
    pub fn select_task_rq(
        &mut self,
        p: TaskId,
        cpu: usize,
        wake_flags: &mut u32,
        this_cpu: usize,
        now: u64,
    ) -> usize {
        let mut target = if self.tasks[p].nr_cpus_allowed > 1 {
            *wake_flags |= wf::RQ_SELECTED;
            self.select_task_rq_fair(p, cpu, *wake_flags, this_cpu, now)
        } else {
            self.tasks[p].cpus_allowed.first().unwrap_or(cpu)
        };
        if !self.tasks[p].allowed_on(target) {
            // select_fallback_rq: the first allowed CPU on the task's node, else any.
            let node = &self.machine.node_cpus[self.machine.cpus[self.tasks[p].cpu].node];
            target = self.tasks[p]
                .cpus_allowed
                .and(node)
                .first()
                .or_else(|| self.tasks[p].cpus_allowed.first())
                .unwrap_or(target);
        }
        target
    }

    /// First half of `wake_up_new_task(p)` on the parent's CPU `this_cpu`: pick the CPU
    /// (`SD_BALANCE_FORK`) and place the task there (`__set_task_cpu`, no migration).
    pub fn wake_up_new_task_select(&mut self, p: TaskId, this_cpu: usize, now: u64) -> usize {
        self.tasks[p].recent_used_cpu = self.tasks[p].cpu;
        let mut flags = wf::FORK;
        let prev = self.tasks[p].cpu;
        let cpu = self.select_task_rq(p, prev, &mut flags, this_cpu, now);
        self.tasks[p].cpu = cpu;
        self.tasks[p].wake_cpu = cpu;
        cpu
    }

    /// Second half of `wake_up_new_task(p)`: on the chosen rq, initialise utilization and
    /// enqueue with `ENQUEUE_INITIAL`, then check preemption. Returns whether the CPU must
    /// reschedule.
    pub fn wake_up_new_task_activate(&mut self, p: TaskId, now: u64) -> bool {
        let cpu = self.tasks[p].cpu;
        // TASK_RUNNING is set under pi_lock just before; the engine keeps the task in
        // TASK_NEW while the fork's cost elapses.
        self.tasks[p].state = TaskState::Running;
        self.update_rq_clock(cpu, now);
        let cap = self.rqs[cpu].capacity_orig;
        let weight = scale_load_down(self.tasks[p].se.load.weight);
        let cfs_avg = self.h_cfs(self.h_cfs_of(p, cpu)).avg.avg;
        post_init_entity_util_avg(&mut self.tasks[p].se.avg, &cfs_avg, cap, weight);
        self.activate_task(cpu, p, qflags::INITIAL);
        self.wakeup_preempt(cpu, p, wf::FORK);
        self.rqs[cpu].need_resched
    }
}

/// The idle-time fold of `ttwu_do_activate`: a CPU that went idle through a newidle
/// balance (`idle_stamp != 0`) and now gets a task adds the idle period to `avg_idle`,
/// capped at twice `max_idle_balance_cost`, and clears the stamp.
pub fn fold_idle_time(
    avg_idle: &mut u64,
    idle_stamp: &mut u64,
    clock: u64,
    max_idle_balance_cost: u64,
) {
    if *idle_stamp == 0 {
        return;
    }
    let delta = clock - *idle_stamp;
    let max = 2 * max_idle_balance_cost;
    update_avg(avg_idle, delta);
    if *avg_idle > max {
        *avg_idle = max;
    }
    *idle_stamp = 0;
}

/// `update_avg(avg, sample)`: avg += (sample - avg) / 8, in signed arithmetic.
pub fn update_avg(avg: &mut u64, sample: u64) {
    let diff = sample as i64 - *avg as i64;
    *avg = (*avg as i64 + diff / 8) as u64;
}

fn effective_util_est(params: SchedParams) -> UtilEstMode {
    if !params.features.has(Feature::UTIL_EST) {
        return UtilEstMode::Off;
    }
    match params.util_est {
        // The form's own fast-up (`--util-est legacy-fastup`) or the feature write.
        UtilEstMode::Legacy { fastup } => UtilEstMode::Legacy {
            fastup: fastup || params.features.has(Feature::UTIL_EST_FASTUP),
        },
        m => m,
    }
}
