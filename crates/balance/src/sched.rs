//! `Sched`: every runqueue and task of the emulated machine, and the fair class's entry
//! points as kernel/sched/core.c calls them: fork, wakeup, block, schedule, tick, migrate.
//!
//! The engine owns time and decides when things happen; each call here takes its `now`
//! (ns since the start of the emulation) and performs what the kernel does at that
//! instant, with the kernel's order of updates. Costs of doing so are the engine's business.

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
use crate::task::{OnRq, SchedEntity, SchedInfo, Task, TaskId, TaskState};
use crate::weight::{scale_load_down, LoadWeight};

/// Offset added to the engine's time to make the kernel clocks: the emulated machine has
/// been up ~1 s, so no clock reads 0 (PELT treats `last_update_time == 0` as "detached").
/// It is a multiple of the 1024 * 1024 ns PELT period, so engine time 0 starts a period.
pub const BOOT_CLOCK_OFFSET: u64 = 1 << 30;

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
    /// Seed for the per-CPU random states (`sched_rng`).
    pub seed: u64,
    /// Exit latency in us of the idle state idle CPUs are in (`idle_get_state`), `None`
    /// without a cpuidle driver. Default 1: intel_idle's C1 on Sapphire Rapids, with deeper
    /// states disabled as in seed 000's setup.
    pub cpuidle_exit_latency_us: Option<u32>,
}

impl Default for SchedParams {
    fn default() -> Self {
        SchedParams {
            features: Features::default(),
            hz: 250,
            util_est: UtilEstMode::V6_12,
            migration_cost: SYSCTL_SCHED_MIGRATION_COST,
            nr_migrate: 32,
            seed: 0,
            cpuidle_exit_latency_us: Some(1),
        }
    }
}

/// `sysctl_sched_base_slice` for `ncpus` online CPUs: 0.7 ms x (1 + ilog2(min(ncpus, 8))),
/// `SCHED_TUNABLESCALING_LOG` as `update_sysctl` sets it.
pub fn base_slice_for(ncpus: usize) -> u64 {
    let cpus = ncpus.clamp(1, 8) as u64;
    let factor = 1 + u64::from(63 - cpus.leading_zeros());
    700_000 * factor
}

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
    /// `detach_tasks`, the stopper's `double_lock_balance`), in order, so that the engine
    /// can hold them for the time the work under them takes.
    pub rq_locks: Vec<usize>,
}

/// The scheduler state of the whole machine.
#[derive(Debug, Clone)]
pub struct Sched {
    /// The machine.
    pub machine: Machine,
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
    /// CPUs and groups read by code that only borrows the state (the wakeup path); folded
    /// into [`SchedWork`] by [`Sched::take_work`].
    visits: std::cell::Cell<(u64, u64)>,
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
    pub fn new(machine: Machine, topo: SchedDomains, params: SchedParams) -> Sched {
        let n = machine.nr_cpus();
        let hz = u64::from(params.hz.max(1));
        let tick_nsec = (1_000_000_000 + hz / 2) / hz;
        let rqs = (0..n)
            .map(|cpu| Rq::new(cpu, topo.cpus[cpu].cpu_capacity, BOOT_CLOCK_OFFSET))
            .collect();
        let fair = FairParams {
            features: params.features,
            base_slice: base_slice_for(n),
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
            sd_stats,
            tick_nsec,
            work: SchedWork::default(),
            lb,
            now: 0,
            pending_active_balance: Vec::new(),
            resched_list: Vec::new(),
            visits: std::cell::Cell::new((0, 0)),
        };
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

    /// Returns the work counters accumulated since the last call and resets them.
    pub fn take_work(&mut self) -> SchedWork {
        let (cpus, groups) = self.visits.take();
        self.work.cpus_visited += cpus;
        self.work.groups_visited += groups;
        std::mem::take(&mut self.work)
    }

    /// Counts a CPU whose runqueue a balance on `from` read, split by distance.
    pub(crate) fn count_balance_visit(&mut self, from: usize, cpu: usize) {
        self.work.cpus_visited += 1;
        if self.machine.cpus[from].node != self.machine.cpus[cpu].node {
            self.work.cpus_visited_remote_node += 1;
        } else if !self.cpus_share_cache(from, cpu) {
            self.work.cpus_visited_remote_llc += 1;
        }
    }

    /// Counts one CPU whose runqueue an idle-CPU search read (for the cost model).
    pub(crate) fn count_cpu_visit(&self) {
        let (c, g) = self.visits.get();
        self.visits.set((c + 1, g));
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

    fn clocks(&self, cpu: usize) -> RqClocks {
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
            se: SchedEntity {
                load,
                deadline: 0,
                vruntime: 0,
                vlag: 0,
                slice: self.fair.base_slice,
                on_rq: false,
                sched_delayed: false,
                rel_deadline: false,
                custom_slice: false,
                exec_start: 0,
                sum_exec_runtime: 0,
                prev_sum_exec_runtime: 0,
                nr_migrations: 0,
                avg,
                run_node: None,
            },
            sched_info: SchedInfo::default(),
            max_allowed_capacity,
        });
        id
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
        let cfs_avg = self.rqs[cpu].cfs.avg.avg;
        post_init_entity_util_avg(&mut self.tasks[p].se.avg, &cfs_avg, cap, weight);
        self.activate_task(cpu, p, qflags::INITIAL);
        self.wakeup_preempt(cpu, p, wf::FORK);
        self.rqs[cpu].need_resched
    }

    /// `activate_task(rq, p, flags)`.
    pub fn activate_task(&mut self, cpu: usize, p: TaskId, mut flags: u32) {
        if self.tasks[p].on_rq_migrating() {
            flags |= qflags::MIGRATED;
        }
        self.enqueue_task(cpu, p, flags);
        self.tasks[p].on_rq = OnRq::Queued;
    }

    /// `deactivate_task(rq, p, flags)`: dequeue for a migration.
    pub fn deactivate_task(&mut self, cpu: usize, p: TaskId, flags: u32) {
        self.tasks[p].on_rq = OnRq::Migrating;
        self.dequeue_task(cpu, p, flags);
    }

    /// `enqueue_task(rq, p, flags)` (core.c) with `enqueue_task_fair`.
    fn enqueue_task(&mut self, cpu: usize, p: TaskId, flags: u32) {
        if flags & qflags::SAVE_RESTORE == 0 {
            // sched_info_enqueue
            let clock = self.rqs[cpu].clock;
            let si = &mut self.tasks[p].sched_info;
            if si.last_queued == 0 {
                si.last_queued = clock;
            }
        }
        self.enqueue_task_fair(cpu, p, flags);
    }

    /// `enqueue_task_fair(rq, p, flags)` for the flat hierarchy.
    fn enqueue_task_fair(&mut self, cpu: usize, p: TaskId, flags: u32) {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let task_new = flags & qflags::SLEEP_WAKEUP == 0;
        {
            let t = &self.tasks[p];
            if !(t.se.sched_delayed && (t.on_rq_migrating() || flags & qflags::SAVE_RESTORE != 0)) {
                util_est_enqueue(&mut self.rqs[cpu].cfs.avg.avg, &t.se.avg, fair.util_est);
            }
        }
        let rq = &mut self.rqs[cpu];
        if flags & qflags::DELAYED != 0 {
            requeue_delayed_entity(&mut rq.cfs, &mut self.tasks, p, clocks, &fair);
            return;
        }
        let h_nr_delayed = u32::from(task_new && self.tasks[p].se.sched_delayed);
        if self.tasks[p].se.on_rq {
            if self.tasks[p].se.sched_delayed {
                requeue_delayed_entity(&mut rq.cfs, &mut self.tasks, p, clocks, &fair);
            }
        } else {
            let upd = enqueue_entity(&mut rq.cfs, &mut self.tasks, p, flags, clocks, &fair);
            if upd.resched {
                rq.need_resched = true;
            }
            rq.cfs_tasks_add(p);
            if h_nr_delayed == 0 {
                rq.cfs.h_nr_runnable += 1;
            }
            rq.cfs.h_nr_queued += 1;
            rq.cfs.h_nr_delayed += h_nr_delayed;
        }
        // add_nr_running: a second runnable task makes the root domain overloaded.
        rq.nr_running += 1;
        if rq.nr_running == 2 {
            self.lb.rd_overloaded = true;
        }
    }

    /// `dequeue_task(rq, p, flags)` (core.c) with `dequeue_task_fair`. Returns false when
    /// the dequeue was delayed (the task stays queued, `sched_delayed`).
    fn dequeue_task(&mut self, cpu: usize, p: TaskId, flags: u32) -> bool {
        if flags & qflags::SAVE_RESTORE == 0 {
            // sched_info_dequeue
            let clock = self.rqs[cpu].clock;
            let si = &mut self.tasks[p].sched_info;
            if si.last_queued != 0 {
                let delta = clock - si.last_queued;
                si.last_queued = 0;
                si.run_delay += delta;
                self.rqs[cpu].stats.run_delay += delta;
            }
        }
        let fair = self.fair;
        let sleep = flags & qflags::SLEEP_WAKEUP != 0;
        {
            let t = &self.tasks[p];
            if !(t.se.sched_delayed && (t.on_rq_migrating() || flags & qflags::SAVE_RESTORE != 0)) {
                util_est_dequeue(&mut self.rqs[cpu].cfs.avg.avg, &t.se.avg, fair.util_est);
            }
        }
        let cap = self.rqs[cpu].capacity_orig;
        util_est_update(&mut self.tasks[p].se.avg, sleep, cap, fair.util_est);
        self.dequeue_entities(cpu, p, flags) >= 0
    }

    /// `dequeue_entities(rq, &p->se, flags)` for the flat hierarchy.
    fn dequeue_entities(&mut self, cpu: usize, p: TaskId, flags: u32) -> i32 {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let task_sleep = flags & qflags::SLEEP_WAKEUP != 0;
        let task_delayed = flags & qflags::DELAYED != 0;
        let h_nr_delayed =
            u32::from(!task_sleep && !task_delayed && self.tasks[p].se.sched_delayed);
        let rq = &mut self.rqs[cpu];
        let (done, upd) = dequeue_entity(&mut rq.cfs, &mut self.tasks, p, flags, clocks, &fair);
        if upd.resched {
            rq.need_resched = true;
        }
        if !done {
            return -1;
        }
        rq.cfs_tasks_del(p);
        if h_nr_delayed == 0 {
            rq.cfs.h_nr_runnable -= 1;
        }
        rq.cfs.h_nr_queued -= 1;
        rq.cfs.h_nr_delayed -= h_nr_delayed;
        // sub_nr_running
        rq.nr_running -= 1;
        if task_delayed {
            // __block_task
            self.tasks[p].on_rq = OnRq::No;
        }
        if rq.cfs.nr_running == 0 {
            // update_idle_cfs_rq_clock_pelt: nothing to do without bandwidth throttling.
        }
        1
    }

    /// `wakeup_preempt(rq, p, flags)`: an idle CPU always reschedules; a busy one asks the
    /// fair class (`check_preempt_wakeup_fair`).
    pub fn wakeup_preempt(&mut self, cpu: usize, p: TaskId, wake_flags: u32) {
        match self.rqs[cpu].curr {
            None => self.resched_curr(cpu),
            Some(curr) => self.check_preempt_wakeup_fair(cpu, curr, p, wake_flags),
        }
    }

    /// `check_preempt_wakeup_fair(rq, p, wake_flags)`.
    fn check_preempt_wakeup_fair(&mut self, cpu: usize, curr: TaskId, p: TaskId, wake_flags: u32) {
        if curr == p {
            return;
        }
        let feat = self.fair.features;
        if feat.has(Feature::NEXT_BUDDY)
            && wake_flags & wf::FORK == 0
            && !self.tasks[p].se.sched_delayed
        {
            self.rqs[cpu].cfs.next = Some(p);
        }
        if self.rqs[cpu].need_resched {
            return;
        }
        if !feat.has(Feature::WAKEUP_PREEMPTION) {
            return;
        }
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let rq = &mut self.rqs[cpu];
        let upd = update_curr(&mut rq.cfs, &mut self.tasks, clocks, &fair);
        if upd.resched {
            rq.need_resched = true;
        }
        if do_preempt_short(&rq.cfs, &self.tasks, p, curr, feat) {
            cancel_protect_slice(&mut self.tasks[curr]);
        }
        if rq.cfs.pick_eevdf(&self.tasks, feat) == Some(p) {
            self.resched_curr(cpu);
        }
    }

    /// The wakeup side of `try_to_wake_up(p)` run on `this_cpu`: a delayed (still queued)
    /// task is requeued in place (`ttwu_runnable`); otherwise the CPU is selected
    /// (`select_task_rq`, `set_task_cpu`) and the schedstat wakeup counters are charged.
    pub fn try_to_wake_up(
        &mut self,
        p: TaskId,
        this_cpu: usize,
        wake_flags: u32,
        now: u64,
    ) -> WakeDecision {
        let mut wake_flags = wake_flags | wf::TTWU;
        if self.tasks[p].state != TaskState::Sleeping {
            return WakeDecision::NotSleeping;
        }
        if self.tasks[p].on_rq != OnRq::No {
            // ttwu_runnable: the dequeue was delayed; requeue on the same rq.
            let cpu = self.tasks[p].cpu;
            self.update_rq_clock(cpu, now);
            if self.tasks[p].se.sched_delayed {
                self.enqueue_task(cpu, p, qflags::DELAYED);
            }
            if self.rqs[cpu].curr != Some(p) {
                self.wakeup_preempt(cpu, p, wake_flags);
            }
            self.tasks[p].state = TaskState::Running;
            self.ttwu_stat(p, cpu, this_cpu, wake_flags);
            return WakeDecision::Runnable {
                cpu,
                preempt: self.rqs[cpu].need_resched,
            };
        }
        if self.tasks[p].on_cpu {
            // The task blocked but its CPU is still inside schedule() (a newidle balance
            // runs with it as prev): the wakeup goes to that CPU's wake list, to be
            // activated there once schedule() is done (the kernel's on_cpu path of
            // ttwu_queue_wakelist; its spin-wait alternative is not modelled).
            let cpu = self.tasks[p].cpu;
            self.rqs[cpu].ttwu_pending += 1;
            self.ttwu_stat(p, cpu, this_cpu, wake_flags);
            return WakeDecision::Enqueue {
                cpu,
                wake_flags,
                via_wakelist: true,
            };
        }
        let prev = self.tasks[p].wake_cpu;
        let cpu = self.select_task_rq(p, prev, &mut wake_flags, this_cpu, now);
        if self.tasks[p].cpu != cpu {
            wake_flags |= wf::MIGRATED;
            self.set_task_cpu(p, cpu);
        }
        let via_wakelist =
            self.fair.features.has(Feature::TTWU_QUEUE) && self.ttwu_queue_cond(p, cpu, this_cpu);
        if via_wakelist {
            self.rqs[cpu].ttwu_pending += 1;
        }
        self.ttwu_stat(p, cpu, this_cpu, wake_flags);
        WakeDecision::Enqueue {
            cpu,
            wake_flags,
            via_wakelist,
        }
    }

    /// `ttwu_queue_cond(p, cpu)`: queue on the target's wake list when it does not share
    /// the waker's cache or is idle.
    fn ttwu_queue_cond(&self, p: TaskId, cpu: usize, this_cpu: usize) -> bool {
        if !self.tasks[p].allowed_on(cpu) {
            return false;
        }
        if !self.cpus_share_cache(this_cpu, cpu) {
            return true;
        }
        if cpu == this_cpu {
            return false;
        }
        self.rqs[cpu].nr_running == 0
    }

    /// `cpus_share_cache(a, b)`: same LLC id.
    pub fn cpus_share_cache(&self, a: usize, b: usize) -> bool {
        a == b || self.topo.cpus[a].sd_llc_id == self.topo.cpus[b].sd_llc_id
    }

    /// `ttwu_stat(p, cpu, wake_flags)` charged to the waking CPU.
    fn ttwu_stat(&mut self, _p: TaskId, cpu: usize, this_cpu: usize, _wake_flags: u32) {
        if cpu == this_cpu {
            self.rqs[this_cpu].stats.ttwu_local += 1;
        } else {
            let sd = self
                .topo
                .domains_of(this_cpu)
                .find(|&sd| self.topo.domain(sd).span.test(cpu));
            if let Some(sd) = sd {
                self.sd_stats[sd].ttwu_wake_remote += 1;
            }
        }
        self.rqs[this_cpu].stats.ttwu_count += 1;
    }

    /// `ttwu_do_activate(rq, p, wake_flags)` on the selected CPU when the wakeup arrives
    /// there: enqueue, check preemption, and fold the idle time into `avg_idle`. Returns
    /// whether the CPU must reschedule.
    pub fn ttwu_do_activate(
        &mut self,
        p: TaskId,
        wake_flags: u32,
        via_wakelist: bool,
        now: u64,
    ) -> bool {
        let cpu = self.tasks[p].cpu;
        if via_wakelist {
            self.rqs[cpu].ttwu_pending = self.rqs[cpu].ttwu_pending.saturating_sub(1);
        }
        self.update_rq_clock(cpu, now);
        let mut en = qflags::SLEEP_WAKEUP;
        if wake_flags & wf::MIGRATED != 0 {
            en |= qflags::MIGRATED;
        }
        self.activate_task(cpu, p, en);
        self.wakeup_preempt(cpu, p, wake_flags);
        self.tasks[p].state = TaskState::Running;
        let rq = &mut self.rqs[cpu];
        if rq.idle_stamp != 0 {
            let delta = rq.clock - rq.idle_stamp;
            let max = 2 * rq.max_idle_balance_cost;
            update_avg(&mut rq.avg_idle, delta);
            if rq.avg_idle > max {
                rq.avg_idle = max;
            }
            rq.idle_stamp = 0;
        }
        rq.need_resched
    }

    /// `set_task_cpu(p, new_cpu)` with `migrate_task_rq_fair`: a sleeping task's load leaves
    /// its old cfs_rq through the removed-load path; it will attach at its next enqueue.
    pub fn set_task_cpu(&mut self, p: TaskId, new_cpu: usize) {
        let old = self.tasks[p].cpu;
        if old == new_cpu {
            return;
        }
        if !self.tasks[p].on_rq_migrating() {
            let weight = scale_load_down(self.tasks[p].se.load.weight);
            let se_avg: &mut SchedAvg = &mut self.tasks[p].se.avg;
            remove_entity_load_avg(&mut self.rqs[old].cfs.avg, se_avg, weight);
        }
        self.tasks[p].se.avg.last_update_time = 0;
        self.tasks[p].se.nr_migrations += 1;
        self.tasks[p].cpu = new_cpu;
        self.tasks[p].wake_cpu = new_cpu;
    }

    /// `block_task` for the current task of `cpu` going to sleep (from `__schedule`):
    /// dequeue with `DEQUEUE_SLEEP`; the dequeue may be delayed.
    pub fn block_current(&mut self, cpu: usize, now: u64) {
        let Some(p) = self.rqs[cpu].curr else {
            return;
        };
        self.update_rq_clock(cpu, now);
        self.tasks[p].state = TaskState::Sleeping;
        if self.dequeue_task(cpu, p, qflags::SLEEP_WAKEUP) {
            self.tasks[p].on_rq = OnRq::No;
        }
    }

    /// The current task of `cpu` exits (`do_task_dead`): it blocks for good, and a delayed
    /// dequeue is finished at once (`task_dead_fair`).
    pub fn exit_current(&mut self, cpu: usize, now: u64) {
        let Some(p) = self.rqs[cpu].curr else {
            return;
        };
        self.block_current(cpu, now);
        self.tasks[p].state = TaskState::Dead;
        if self.tasks[p].se.sched_delayed {
            self.dequeue_task(cpu, p, qflags::SLEEP_WAKEUP | qflags::DELAYED);
        }
    }

    /// `__schedule` on `cpu` after the previous task has blocked or been preempted: put the
    /// previous task back, pick the next (`pick_next_task_fair`, dequeuing delayed
    /// entities it meets, running a newidle balance when nothing is left), switch, and
    /// account schedstat and `sched_info`. Returns the new current task, `None` for idle.
    /// The newidle balance runs at this one instant (no modelled cost); an engine that
    /// models its cost uses [`Sched::schedule_stepped`].
    pub fn schedule(&mut self, cpu: usize, now: u64) -> Option<TaskId> {
        match self.schedule_inner(cpu, now, true) {
            PickOutcome::Next(n) => n,
            PickOutcome::Newidle => None,
        }
    }

    /// `__schedule` for an engine that steps newidle balances: like [`Sched::schedule`],
    /// but stops with [`PickOutcome::Newidle`] where the kernel would balance.
    pub fn schedule_stepped(&mut self, cpu: usize, now: u64) -> PickOutcome {
        self.schedule_inner(cpu, now, false)
    }

    fn schedule_inner(&mut self, cpu: usize, now: u64, inline_newidle: bool) -> PickOutcome {
        self.set_now(now);
        self.update_rq_clock(cpu, now);
        self.rqs[cpu].stats.sched_count += 1;
        let prev = self.rqs[cpu].curr;
        loop {
            if let Some(p) = self.pick_task_fair(cpu) {
                self.switch_fair(cpu, prev, p);
                return PickOutcome::Next(Some(p));
            }
            if !inline_newidle {
                return PickOutcome::Newidle;
            }
            // The newidle balance runs with prev still current; a pull makes the fair
            // class pick again.
            if self.sched_balance_newidle_inline(cpu, now) > 0 {
                continue;
            }
            self.switch_to_idle(cpu, prev);
            return PickOutcome::Next(None);
        }
    }

    /// The rest of `__schedule` after a stepped newidle balance that returned `pulled`:
    /// pick again if something arrived, else switch to idle.
    pub fn schedule_after_newidle(&mut self, cpu: usize, pulled: i32, now: u64) -> Option<TaskId> {
        self.set_now(now);
        self.update_rq_clock(cpu, now);
        let prev = self.rqs[cpu].curr;
        if pulled != 0 {
            if let Some(p) = self.pick_task_fair(cpu) {
                self.switch_fair(cpu, prev, p);
                return Some(p);
            }
        }
        self.switch_to_idle(cpu, prev);
        None
    }

    /// The fair-class half of `pick_next_task_fair` once `p` is picked: put the previous
    /// entity back and make `p` current, then `context_switch`'s accounting.
    fn switch_fair(&mut self, cpu: usize, prev: Option<TaskId>, p: TaskId) {
        if prev != Some(p) {
            if let Some(pv) = prev {
                if self.rqs[cpu].cfs.curr == Some(pv) {
                    self.put_prev_task_fair(cpu, pv);
                }
            }
            self.set_next_task_fair(cpu, p);
        }
        self.finish_switch(cpu, prev, Some(p));
    }

    /// The idle class is picked: put the previous fair entity back, then switch.
    fn switch_to_idle(&mut self, cpu: usize, prev: Option<TaskId>) {
        if let Some(pv) = prev {
            if self.rqs[cpu].cfs.curr == Some(pv) {
                self.put_prev_task_fair(cpu, pv);
            }
        }
        self.finish_switch(cpu, prev, None);
    }

    /// Accounting of a switch from `prev` to `next` (`context_switch`, `sched_info_switch`),
    /// and, when going idle, `set_next_task_idle`'s PELT sync, `update_idle_core` and the
    /// nohz tick stop.
    fn finish_switch(&mut self, cpu: usize, prev: Option<TaskId>, next: Option<TaskId>) {
        self.rqs[cpu].need_resched = false;
        if prev != next {
            self.rqs[cpu].nr_switches += 1;
            self.sched_info_switch(cpu, prev, next);
            if let Some(pv) = prev {
                self.tasks[pv].on_cpu = false;
            }
            if let Some(nx) = next {
                self.tasks[nx].on_cpu = true;
            }
            self.rqs[cpu].curr = next;
        }
        if next.is_none() {
            // pick_next_task_idle -> set_next_task_idle
            self.rqs[cpu].stats.sched_goidle += 1;
            // update_idle_core: tell the LLC when a whole core became idle.
            self.update_idle_core(cpu);
            let util_sum = self.rqs[cpu].cfs.avg.avg.util_sum;
            self.rqs[cpu].pelt.update_idle_rq_clock_pelt(util_sum);
            // Whether the idle loop stops the tick (and calls nohz_balance_enter_idle) is
            // the engine's decision: it depends on the CPU's next timer.
        }
    }

    /// `sched_info_switch(rq, prev, next)`.
    fn sched_info_switch(&mut self, cpu: usize, prev: Option<TaskId>, next: Option<TaskId>) {
        let clock = self.rqs[cpu].clock;
        if let Some(pv) = prev {
            // sched_info_depart
            let delta = clock - self.tasks[pv].sched_info.last_arrival;
            self.rqs[cpu].stats.rq_cpu_time += delta;
            if self.tasks[pv].state == TaskState::Running {
                let si = &mut self.tasks[pv].sched_info;
                if si.last_queued == 0 {
                    si.last_queued = clock;
                }
            }
        }
        if let Some(nx) = next {
            // sched_info_arrive
            let si = &mut self.tasks[nx].sched_info;
            let delta = if si.last_queued != 0 {
                clock - si.last_queued
            } else {
                0
            };
            si.last_queued = 0;
            si.run_delay += delta;
            si.last_arrival = clock;
            si.pcount += 1;
            self.rqs[cpu].stats.run_delay += delta;
            self.rqs[cpu].stats.pcount += 1;
        }
    }

    /// `pick_task_fair(rq)`.
    fn pick_task_fair(&mut self, cpu: usize) -> Option<TaskId> {
        loop {
            let clocks = self.clocks(cpu);
            let fair = self.fair;
            let rq = &mut self.rqs[cpu];
            if rq.cfs.nr_running == 0 {
                return None;
            }
            if let Some(c) = rq.cfs.curr {
                if self.tasks[c].se.on_rq {
                    let upd = update_curr(&mut rq.cfs, &mut self.tasks, clocks, &fair);
                    if upd.resched {
                        rq.need_resched = true;
                    }
                }
            }
            // pick_next_entity
            if fair.features.has(Feature::PICK_BUDDY) {
                if let Some(nx) = rq.cfs.next {
                    if rq.cfs.entity_eligible(&self.tasks, nx) {
                        return Some(nx);
                    }
                }
            }
            let se = rq.cfs.pick_eevdf(&self.tasks, fair.features)?;
            if self.tasks[se].se.sched_delayed {
                self.dequeue_entities(cpu, se, qflags::SLEEP_WAKEUP | qflags::DELAYED);
                continue;
            }
            return Some(se);
        }
    }

    /// `put_prev_task_fair(rq, prev)`.
    fn put_prev_task_fair(&mut self, cpu: usize, p: TaskId) {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let rq = &mut self.rqs[cpu];
        let upd = put_prev_entity(&mut rq.cfs, &mut self.tasks, p, clocks, &fair);
        if upd.resched {
            rq.need_resched = true;
        }
    }

    /// `set_next_task_fair(rq, p, true)`: the task becomes current and moves to the front
    /// of `cfs_tasks`.
    fn set_next_task_fair(&mut self, cpu: usize, p: TaskId) {
        let clocks = self.clocks(cpu);
        let fair = self.fair;
        let rq = &mut self.rqs[cpu];
        set_next_entity(&mut rq.cfs, &mut self.tasks, p, clocks, &fair);
        if self.tasks[p].se.on_rq {
            rq.cfs_tasks_move_front(p);
        }
        self.update_misfit_status(Some(p), cpu);
    }

    /// `sched_tick()` on `cpu`: `update_rq_clock`, then `task_tick_fair` for the current
    /// task. Returns whether the CPU must reschedule.
    pub fn tick(&mut self, cpu: usize, now: u64) -> bool {
        self.set_now(now);
        self.update_rq_clock(cpu, now);
        if let Some(curr) = self.rqs[cpu].curr {
            let clocks = self.clocks(cpu);
            let fair = self.fair;
            let rq = &mut self.rqs[cpu];
            let upd = entity_tick(&mut rq.cfs, &mut self.tasks, curr, clocks, &fair);
            if upd.resched {
                rq.need_resched = true;
            }
            self.update_misfit_status(Some(curr), cpu);
        }
        // sched_tick: remember whether the CPU was idle for the balance softirq.
        self.lb.rq[cpu].idle_balance = self.rqs[cpu].idle_cpu();
        self.rqs[cpu].need_resched
    }

    /// The stopper thread preempts `cpu`'s current task for an active balance: the task is
    /// put back in the tree (it may now be migrated) and the CPU must reschedule.
    pub(crate) fn preempt_current_for_stopper(&mut self, cpu: usize) {
        if let Some(curr) = self.rqs[cpu].curr {
            if self.rqs[cpu].cfs.curr == Some(curr) {
                self.put_prev_task_fair(cpu, curr);
            }
            self.tasks[curr].on_cpu = false;
            self.sched_info_switch(cpu, Some(curr), None);
            self.rqs[cpu].curr = None;
            self.rqs[cpu].nr_switches += 1;
        }
        self.rqs[cpu].need_resched = true;
    }

    /// Checks the runqueue invariants: every task is current on one CPU, queued on
    /// exactly one runqueue, or blocked; counters match the queues. Returns a description
    /// of the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut seen = vec![0u32; self.tasks.len()];
        for rq in &self.rqs {
            let mut queued = 0u32;
            let mut delayed = 0u32;
            for &p in rq.cfs.timeline.values() {
                seen[p] += 1;
                queued += 1;
                delayed += u32::from(self.tasks[p].se.sched_delayed);
                if self.tasks[p].cpu != rq.cpu {
                    return Err(format!(
                        "task {p} queued on cpu{} but task_cpu is {}",
                        rq.cpu, self.tasks[p].cpu
                    ));
                }
            }
            if let Some(c) = rq.cfs.curr {
                if self.tasks[c].se.on_rq {
                    seen[c] += 1;
                    queued += 1;
                    delayed += u32::from(self.tasks[c].se.sched_delayed);
                }
            }
            if let Some(c) = rq.curr {
                if self.tasks[c].cpu != rq.cpu {
                    return Err(format!(
                        "cpu{} runs task {c} whose task_cpu is {}",
                        rq.cpu, self.tasks[c].cpu
                    ));
                }
            }
            if queued != rq.cfs.nr_running
                || queued != rq.nr_running
                || queued != rq.cfs.h_nr_queued
            {
                return Err(format!(
                    "cpu{}: {queued} queued but nr_running {} cfs.nr_running {} h_nr_queued {}",
                    rq.cpu, rq.nr_running, rq.cfs.nr_running, rq.cfs.h_nr_queued
                ));
            }
            if delayed != rq.cfs.h_nr_delayed || queued - delayed != rq.cfs.h_nr_runnable {
                return Err(format!("cpu{}: delayed/runnable counts off", rq.cpu));
            }
            if rq.cfs_tasks.len() as u32 != queued {
                return Err(format!(
                    "cpu{}: cfs_tasks has {} entries for {queued} queued",
                    rq.cpu,
                    rq.cfs_tasks.len()
                ));
            }
        }
        for (p, t) in self.tasks.iter().enumerate() {
            let expect = u32::from(t.se.on_rq);
            if seen[p] != expect {
                return Err(format!(
                    "task {p} found queued {} times, se.on_rq={}",
                    seen[p], t.se.on_rq
                ));
            }
            if t.state == TaskState::Running && !t.se.on_rq {
                return Err(format!("task {p} is TASK_RUNNING but not queued"));
            }
            if t.se.on_rq && !t.allowed_on(t.cpu) {
                return Err(format!("task {p} queued on disallowed cpu{}", t.cpu));
            }
        }
        Ok(())
    }
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
        UtilEstMode::Legacy { .. } => UtilEstMode::Legacy {
            fastup: params.features.has(Feature::UTIL_EST_FASTUP),
        },
        m => m,
    }
}
