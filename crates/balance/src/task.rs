//! Tasks as the fair class sees them: the parts of `struct task_struct` and
//! `struct sched_entity` that placement, EEVDF and balancing read.
//!
//! Without task groups every task's entity sits directly on its CPU's root cfs_rq; with
//! them ([`crate::group`]) on its group's runqueue on that CPU.

use fairsim_pelt::SchedAvg;
use fairsim_topology::CpuMask;

use crate::weight::LoadWeight;

/// Index of a task group in [`crate::group::TaskGroups`]; 0 is the root task group.
pub type GroupId = usize;

/// `root_task_group`.
pub const ROOT_GROUP: GroupId = 0;

/// Index of a task in [`crate::Sched::tasks`].
pub type TaskId = usize;

/// `p->__state` for the states the emulator needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaskState {
    /// `TASK_NEW`: forked, not yet woken by `wake_up_new_task`.
    New,
    /// `TASK_RUNNING`: running or runnable.
    Running,
    /// `TASK_INTERRUPTIBLE`: sleeping (it may still be queued while its dequeue is delayed).
    Sleeping,
    /// `TASK_DEAD`.
    Dead,
}

/// `p->on_rq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OnRq {
    /// 0: not on a runqueue.
    No,
    /// `TASK_ON_RQ_QUEUED`.
    Queued,
    /// `TASK_ON_RQ_MIGRATING`: being moved between runqueues by the load balancer.
    Migrating,
}

/// `struct sched_entity` of a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedEntity {
    /// `se->load`.
    pub load: LoadWeight,
    /// `se->deadline`: virtual deadline (EEVDF).
    pub deadline: u64,
    /// `se->vruntime`.
    pub vruntime: u64,
    /// `se->vlag`: lag kept across a dequeue; also the slice-protection stash while running.
    pub vlag: i64,
    /// `se->slice`: the request size in ns.
    pub slice: u64,
    /// `se->on_rq`: queued on its cfs_rq (current or in the tree).
    pub on_rq: bool,
    /// `se->sched_delayed`: dequeue deferred until the entity is eligible or picked.
    pub sched_delayed: bool,
    /// `se->rel_deadline`: `deadline` holds a relative value across a migration.
    pub rel_deadline: bool,
    /// `se->custom_slice`.
    pub custom_slice: bool,
    /// `se->exec_start`: clock_task when it last started running (0 once migrated).
    pub exec_start: u64,
    /// `se->sum_exec_runtime`.
    pub sum_exec_runtime: u64,
    /// `se->prev_sum_exec_runtime`: `sum_exec_runtime` when last picked.
    pub prev_sum_exec_runtime: u64,
    /// `se->nr_migrations`.
    pub nr_migrations: u64,
    /// `se->avg`: PELT signals and util_est.
    pub avg: SchedAvg,
    /// Key of the entity in its cfs_rq's timeline while it is in the tree.
    pub(crate) run_node: Option<(i64, u64)>,
}

impl SchedEntity {
    /// A new entity of weight `load` with request `slice`, never queued, with the given
    /// PELT start.
    pub fn new(load: LoadWeight, slice: u64, avg: SchedAvg) -> SchedEntity {
        SchedEntity {
            load,
            deadline: 0,
            vruntime: 0,
            vlag: 0,
            slice,
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
        }
    }
}

/// `struct sched_info`: run-delay accounting (`CONFIG_SCHED_INFO`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedInfo {
    /// `pcount`: times the task got a CPU.
    pub pcount: u64,
    /// `run_delay`: ns spent waiting on a runqueue.
    pub run_delay: u64,
    /// `last_arrival`: rq clock when it last got a CPU.
    pub last_arrival: u64,
    /// `last_queued`: rq clock when it was queued, 0 when not waiting.
    pub last_queued: u64,
}

/// A fair task's scheduling policy (`p->policy`): `SCHED_NORMAL`, `SCHED_BATCH` or
/// `SCHED_IDLE`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Policy {
    /// `SCHED_NORMAL` (`SCHED_OTHER`).
    #[default]
    Normal,
    /// `SCHED_BATCH`: weighted by nice like a normal task, but its wakeups never preempt.
    Batch,
    /// `SCHED_IDLE`: weight 3 whatever its nice; it never preempts on wakeup and any
    /// other fair task's wakeup preempts it; a CPU running only such tasks counts as idle
    /// to wakeup placement (`sched_idle_cpu`) and the periodic balance.
    Idle,
}

impl Policy {
    /// The name `chrt` and outputs use.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Normal => "normal",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
        }
    }
}

/// The scheduler's view of one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// Its id (index in the task table).
    pub id: TaskId,
    /// `p->comm`-like label for outputs.
    pub name: String,
    /// Nice level, -20..=19.
    pub nice: i32,
    /// `p->policy` (the fair class's three).
    pub policy: Policy,
    /// `p->__state`.
    pub state: TaskState,
    /// `p->on_rq`.
    pub on_rq: OnRq,
    /// `p->on_cpu`: it is the current task of its CPU.
    pub on_cpu: bool,
    /// `task_cpu(p)`.
    pub cpu: usize,
    /// `p->wake_cpu`.
    pub wake_cpu: usize,
    /// `p->cpus_ptr`.
    pub cpus_allowed: CpuMask,
    /// `p->nr_cpus_allowed`.
    pub nr_cpus_allowed: usize,
    /// `p->recent_used_cpu`.
    pub recent_used_cpu: usize,
    /// `p->last_wakee`.
    pub last_wakee: Option<TaskId>,
    /// `p->wakee_flips`.
    pub wakee_flips: u32,
    /// `p->wakee_flip_decay_ts` in jiffies.
    pub wakee_flip_decay_ts: u64,
    /// `p->se`.
    pub se: SchedEntity,
    /// `p->sched_info`.
    pub sched_info: SchedInfo,
    /// `p->max_allowed_capacity`.
    pub max_allowed_capacity: u64,
    /// `p->in_iowait`: the task sleeps in `io_schedule()`, so its wakeup's enqueue asks
    /// cpufreq for an iowait boost. No fairsim workload waits for I/O yet.
    pub in_iowait: bool,
    /// uclamp: the requested and effective clamps ([`crate::uclamp`]).
    pub uclamp: crate::uclamp::TaskUclamp,
}

impl Task {
    /// Whether the task can run on `cpu` (`cpumask_test_cpu(cpu, p->cpus_ptr)`).
    pub fn allowed_on(&self, cpu: usize) -> bool {
        self.cpus_allowed.test(cpu)
    }

    /// `task_on_rq_queued(p)`.
    pub fn on_rq_queued(&self) -> bool {
        self.on_rq == OnRq::Queued
    }

    /// `task_on_rq_migrating(p)`.
    pub fn on_rq_migrating(&self) -> bool {
        self.on_rq == OnRq::Migrating
    }
}
