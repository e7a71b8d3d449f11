//! What a trace holds: the tasks that appear in it and the events in time order, each
//! stamped with the CPU that logged it, as the kernel's per-CPU ftrace buffers do.
//!
//! The scheduler events carry the fields of the 6.12 tracepoints of the same name
//! (`include/trace/events/sched.h`, `include/trace/events/power.h`); fairsim's own
//! balancing and EAS events have no kernel trace event and become Perfetto track events
//! and `fairsim_*` lines in the text format, apart from the root domain's overutilized
//! flag, which prints as the `sched_overutilized` event of the sched_tp module that LISA
//! loads to expose the kernel's bare tracepoint. CFS bandwidth control has no tracepoint
//! in 6.12 at all: its throttles, unthrottles and refills are fairsim's own too.
//!
//! The load-tracking events (`PeltCfs`, `PeltSe`, `UtilEstCfs`, `UtilEstSe`,
//! `CpuCapacity`) are the sched_tp module's on the bare tracepoints of the same names; a
//! run records them only when asked (`TraceConfig::pelt`).

/// A task's `prev_state` as `sched_switch` reports it (`__trace_sched_switch_state`):
/// the state the task left the CPU in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevState {
    /// Left the CPU runnable without being preempted (`R`, 0): the idle task, or a
    /// stopper's target.
    Running,
    /// Preempted (`R+`: `__schedule(SM_PREEMPT)` reports `TASK_REPORT_MAX` = 256).
    Preempted,
    /// Blocked in an interruptible sleep (`S`, `TASK_INTERRUPTIBLE` = 1).
    Sleeping,
    /// Exited and reaped at once (`X`: a thread, whose `exit_state` is `EXIT_DEAD`; the
    /// tracepoint reports `1 << 4` = 16).
    Dead,
    /// Exited and left for its parent's `wait` (`Z`: a process, `EXIT_ZOMBIE`; the
    /// tracepoint reports `1 << 5` = 32).
    Zombie,
}

impl PrevState {
    /// The value of the tracepoint's `prev_state` field.
    pub fn bits(self) -> i64 {
        match self {
            PrevState::Running => 0,
            PrevState::Preempted => 256,
            PrevState::Sleeping => 1,
            PrevState::Dead => 16,
            PrevState::Zombie => 32,
        }
    }

    /// The letter `sched_switch`'s text format prints.
    pub fn letter(self) -> &'static str {
        match self {
            PrevState::Running => "R",
            PrevState::Preempted => "R+",
            PrevState::Sleeping => "S",
            PrevState::Dead => "X",
            PrevState::Zombie => "Z",
        }
    }
}

/// Which balance a [`TraceEvent::Balance`] was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BalanceKind {
    /// `sched_balance_newidle` inside `schedule()`, one domain level.
    Newidle,
    /// `sched_balance_domains` from the balance softirq, one domain level, busy or idle.
    Periodic,
    /// A nohz idle balance run on behalf of an idle CPU.
    NohzIdle,
}

impl BalanceKind {
    /// Name in outputs.
    pub fn name(self) -> &'static str {
        match self {
            BalanceKind::Newidle => "newidle",
            BalanceKind::Periodic => "periodic",
            BalanceKind::NohzIdle => "nohz_idle",
        }
    }
}

/// One traced event. Task fields are pids (see [`TaskInfo`]); pid 0 is the CPU's idle
/// task (`swapper/N`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceEvent {
    /// `sched_switch`: the CPU stops running `prev` and starts `next`.
    Switch {
        /// The task leaving the CPU (0: idle).
        prev: u32,
        /// Its state.
        prev_state: PrevState,
        /// The task taking the CPU (0: idle).
        next: u32,
    },
    /// `sched_waking`, on the waker's CPU, when `try_to_wake_up` has chosen the CPU.
    Waking {
        /// The woken task.
        pid: u32,
        /// The CPU it will run on.
        target_cpu: u32,
    },
    /// `sched_wakeup`, on the target CPU, when the task is enqueued there.
    Wakeup {
        /// The woken task.
        pid: u32,
        /// The CPU it was enqueued on.
        target_cpu: u32,
    },
    /// `sched_wakeup_new`: a forked task's first enqueue (`wake_up_new_task`).
    WakeupNew {
        /// The new task.
        pid: u32,
        /// The CPU the fork balance chose.
        target_cpu: u32,
    },
    /// `sched_migrate_task`: `set_task_cpu` moved the task to another CPU.
    Migrate {
        /// The task.
        pid: u32,
        /// Its CPU before.
        orig_cpu: u32,
        /// Its CPU after.
        dest_cpu: u32,
    },
    /// `sched_process_fork`.
    Fork {
        /// The forking task (0 for a workload's first task, which the launcher forks).
        parent: u32,
        /// The child.
        child: u32,
    },
    /// `sched_process_exit`.
    Exit {
        /// The exiting task.
        pid: u32,
    },
    /// `cpu_idle`: the CPU enters idle state `state` (an index into its idle states), or
    /// leaves idle with `state` = [`CPU_IDLE_EXIT`].
    CpuIdle {
        /// The state index, or [`CPU_IDLE_EXIT`].
        state: u32,
    },
    /// `cpu_frequency`: the CPU's clock changed (kHz).
    CpuFrequency {
        /// The new frequency in kHz.
        khz: u32,
    },
    /// A load balance at one domain level (no kernel tracepoint: fairsim's own), lasting
    /// `dur` ns from the record's time.
    Balance {
        /// Newidle, periodic or nohz idle.
        kind: BalanceKind,
        /// Index into [`Trace::levels`].
        level: u32,
        /// Groups whose statistics the balance read.
        groups: u32,
        /// Tasks it moved to this CPU.
        pulled: u32,
        /// How long it took, ns.
        dur: u64,
    },
    /// Spinning on another CPU's runqueue lock (fairsim's own), `dur` ns from the
    /// record's time.
    LockSpin {
        /// The CPU whose runqueue lock was contended.
        rq: u32,
        /// How long the spin lasted, ns.
        dur: u64,
    },
    /// `sched_overutilized_tp(rd, overutilized)`: `set_rd_overutilized` wrote the root
    /// domain's flag (every call, as the tracepoint fires; no trace event in the kernel
    /// itself, the sched_tp module's `sched_overutilized` prints it).
    Overutilized {
        /// Index into [`Trace::root_domains`].
        rd: u32,
        /// The value written.
        overutilized: bool,
    },
    /// A wakeup placed by `find_energy_efficient_cpu` (fairsim's own), logged on the
    /// waking CPU.
    Feec {
        /// The task woken.
        pid: u32,
        /// Its previous CPU.
        prev_cpu: u32,
        /// The CPU chosen, or -1 when EAS left the wakeup to the usual path.
        dst_cpu: i32,
    },
    /// `throttle_cfs_rq` (fairsim's own): a group's runqueue on the record's CPU ran out
    /// of runtime and left the hierarchy with its tasks.
    CfsThrottle {
        /// Index into [`Trace::cgroups`].
        group: u32,
        /// The tasks it took off the CPU (`h_nr_queued`).
        h_nr_queued: u32,
        /// `runtime_remaining`, at most 0.
        runtime_remaining: i64,
        /// The group's pool (`cfs_b->runtime`), ns.
        pool: u64,
    },
    /// `unthrottle_cfs_rq` (fairsim's own): the runqueue on the record's CPU is back.
    CfsUnthrottle {
        /// Index into [`Trace::cgroups`].
        group: u32,
        /// The tasks that come back (`h_nr_queued`).
        h_nr_queued: u32,
        /// What it added to the group's `throttled_usec`, ns.
        throttled_ns: u64,
        /// The group's pool once this runqueue was paid, ns.
        pool: u64,
    },
    /// `do_sched_cfs_period_timer` refilled a group's pool (fairsim's own), logged on
    /// the CPU its period timer fires on.
    CfsRefill {
        /// Index into [`Trace::cgroups`].
        group: u32,
        /// Runqueues throttled when it ran.
        throttled: u32,
        /// The pool after the refill (`cfs_b->runtime`), ns.
        runtime: u64,
        /// Periods counted (`nr_periods` grows by this).
        periods: u64,
    },
    /// `sched_pelt_cfs` (the sched_tp module's event on the bare tracepoint
    /// `pelt_cfs_tp`): a cfs_rq's PELT signals after an update that crossed a period, an
    /// attach or a detach. Logged on the runqueue's CPU, which is its `cpu` field.
    PeltCfs {
        /// Index into [`Trace::cgroups`] (0, `/`, for the CPU's root runqueue).
        group: u32,
        /// `avg.load_avg`.
        load: u32,
        /// `avg.runnable_avg`.
        runnable: u32,
        /// `avg.util_avg`.
        util: u32,
        /// `avg.last_update_time` (the runqueue's PELT clock, ns).
        update_time: u64,
    },
    /// `sched_pelt_se` (on `pelt_se_tp`): a task entity's PELT signals after an update
    /// that crossed a period; its `path` is `(null)`, as the module prints for a task.
    PeltSe {
        /// The task.
        pid: u32,
        /// `avg.load_avg`.
        load: u32,
        /// `avg.runnable_avg`.
        runnable: u32,
        /// `avg.util_avg`.
        util: u32,
        /// `avg.last_update_time` (PELT clock, ns).
        update_time: u64,
    },
    /// `sched_util_est_cfs` (on `sched_util_est_cfs_tp`): `util_est_enqueue` or
    /// `util_est_dequeue` changed the root runqueue's estimate.
    UtilEstCfs {
        /// Index into [`Trace::cgroups`] (0, `/`).
        group: u32,
        /// `avg.util_avg`.
        util: u32,
        /// `avg.util_est`: the sum of the queued tasks' estimates.
        util_est: u32,
    },
    /// `sched_util_est_se` (on `sched_util_est_se_tp`): `util_est_update` took a
    /// sample of a task that went to sleep.
    UtilEstSe {
        /// The task.
        pid: u32,
        /// `avg.util_avg`.
        util: u32,
        /// `avg.util_est` without the `UTIL_AVG_UNCHANGED` flag.
        util_est: u32,
    },
    /// `sched_cpu_capacity` (on `sched_cpu_capacity_tp`): `update_cpu_capacity` set the
    /// CPU's `cpu_capacity`.
    CpuCapacity {
        /// `rq->cpu_capacity`.
        capacity: u32,
        /// `arch_scale_cpu_capacity(cpu)`.
        capacity_orig: u32,
        /// `capacity_orig` scaled by the CPU's current frequency
        /// (`arch_scale_freq_capacity`).
        capacity_curr: u32,
    },
}

impl TraceEvent {
    /// Whether this is one of the sched_tp load-tracking events that a run records only
    /// under `--trace-events pelt` ([`crate::TraceConfig::pelt`]).
    pub fn is_load_tracking(&self) -> bool {
        matches!(
            self,
            TraceEvent::PeltCfs { .. }
                | TraceEvent::PeltSe { .. }
                | TraceEvent::UtilEstCfs { .. }
                | TraceEvent::UtilEstSe { .. }
                | TraceEvent::CpuCapacity { .. }
        )
    }
}

/// `PWR_EVENT_EXIT`: the `state` of a `cpu_idle` event that leaves idle.
pub const CPU_IDLE_EXIT: u32 = u32::MAX;

/// One event at `ts` ns, logged on `cpu`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Emulated time, ns.
    pub ts: u64,
    /// The CPU whose buffer holds the event.
    pub cpu: u32,
    /// The event.
    pub event: TraceEvent,
}

/// A task as traces name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskInfo {
    /// Its pid (thread id); pids start at 1, 0 is the idle task.
    pub pid: u32,
    /// Its process (thread group leader's pid); equal to `pid` for a process.
    pub tgid: u32,
    /// Its parent process's pid (0: the launcher).
    pub ppid: u32,
    /// `comm`, at most 15 bytes as the kernel keeps it.
    pub comm: String,
    /// `prio` as the tracepoints report it (120 + nice for a fair task).
    pub prio: i32,
}

/// A finished trace: every task that appears, the domain level names the balance events
/// refer to, and the records sorted by time (ties in the order they were logged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// CPUs of the machine.
    pub cpus: u32,
    /// The traced window `[start, end)` in ns.
    pub window: (u64, u64),
    /// Tasks by increasing pid (only those forked before the window's end).
    pub tasks: Vec<TaskInfo>,
    /// Domain level names (`SMT`, `MC`, `PKG`, `NUMA`, ...), by level index.
    pub levels: Vec<String>,
    /// Each root domain's span in the kernel's hex format (`%*pb`), by root domain index.
    pub root_domains: Vec<String>,
    /// Each task group's path (`/` first), by group index; empty when the run had none.
    pub cgroups: Vec<String>,
    /// The pid running on each CPU when the window opened (0: idle), so that events
    /// before a CPU's first switch know their current task.
    pub initial: Vec<u32>,
    /// Events.
    pub records: Vec<Record>,
}

impl Trace {
    /// The task with `pid`, if any (pids are dense from 1).
    pub fn task(&self, pid: u32) -> Option<&TaskInfo> {
        let i = self.tasks.partition_point(|t| t.pid < pid);
        self.tasks.get(i).filter(|t| t.pid == pid)
    }

    /// Root domain `rd`'s span in the kernel's hex format (`?` for an index the trace
    /// does not hold), as `sched_overutilized` prints it.
    pub fn root_domain_span(&self, rd: u32) -> &str {
        self.root_domains
            .get(rd as usize)
            .map_or("?", String::as_str)
    }

    /// `comm` of `pid` as the tracepoints print it, `swapper/N` for the idle task of CPU N.
    pub fn comm(&self, pid: u32, cpu: u32) -> String {
        if pid == 0 {
            return format!("swapper/{cpu}");
        }
        self.task(pid)
            .map(|t| t.comm.clone())
            .unwrap_or_else(|| format!("<{pid}>"))
    }

    /// The path of task group `group`, or `?` for an index outside the table.
    pub fn cgroup(&self, group: u32) -> &str {
        self.cgroups.get(group as usize).map_or("?", String::as_str)
    }

    /// The path the sched_tp module prints for the runqueue of task group `group`:
    /// `cgroup_path` of its group, `/` for a CPU's root runqueue (also when the run
    /// declared no groups and [`Trace::cgroups`] is empty).
    pub fn cfs_rq_path(&self, group: u32) -> &str {
        if group == 0 && self.cgroups.is_empty() {
            return "/";
        }
        self.cgroup(group)
    }

    /// `prio` of `pid` (120 for the idle task, as the tracepoints report it).
    pub fn prio(&self, pid: u32) -> i32 {
        self.task(pid).map(|t| t.prio).unwrap_or(120)
    }
}

/// Newidle balancing over time per domain level, counted in buckets of `bucket_ns` from
/// `start_ns` (the plots' newidle series): `balances[level][bucket]` is the number of
/// newidle balances at that level that began in the bucket (`lb_count` growth), and
/// `groups[level][bucket]` the groups they scanned (`lb_sg_scan` growth).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewidleSeries {
    /// Start of the first bucket, ns.
    pub start_ns: u64,
    /// Bucket width, ns.
    pub bucket_ns: u64,
    /// Domain level names, by level index.
    pub levels: Vec<String>,
    /// Balances per level and bucket.
    pub balances: Vec<Vec<u64>>,
    /// Groups scanned per level and bucket.
    pub groups: Vec<Vec<u64>>,
}
