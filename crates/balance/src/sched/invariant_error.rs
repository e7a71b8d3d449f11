//! `InvariantError`, a leaf that the invariant checks of `invariants.rs` and of the task
//! groups (`group/invariants.rs`) both return.

/// The first runqueue invariant [`Sched::check_invariants`] found broken (a bug in the
/// scheduler), with the CPU, task, group and counts it concerns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvariantError {
    /// A queued task's `task_cpu` is not the CPU whose runqueue holds it.
    #[error("task {task} queued on cpu{cpu} but task_cpu is {task_cpu}")]
    QueuedElsewhere {
        /// The task.
        task: usize,
        /// The CPU whose runqueue holds it.
        cpu: usize,
        /// Its `task_cpu`.
        task_cpu: usize,
    },
    /// A CPU's current task has another `task_cpu`.
    #[error("cpu{cpu} runs task {task} whose task_cpu is {task_cpu}")]
    CurrElsewhere {
        /// The CPU.
        cpu: usize,
        /// Its current task.
        task: usize,
        /// The task's `task_cpu`.
        task_cpu: usize,
    },
    /// A CPU's running counts do not match the tasks queued on it.
    #[error("cpu{cpu}: {queued} queued but nr_running {nr_running} cfs.nr_running {cfs_nr_running} h_nr_queued {h_nr_queued}")]
    NrRunning {
        /// The CPU.
        cpu: usize,
        /// Tasks queued.
        queued: u32,
        /// `rq->nr_running`.
        nr_running: u32,
        /// `cfs_rq->nr_running`.
        cfs_nr_running: u32,
        /// `cfs_rq->h_nr_queued`.
        h_nr_queued: u32,
    },
    /// A CPU's delayed or runnable counts do not match its queue.
    #[error("cpu{cpu}: delayed/runnable counts off")]
    DelayedRunnable {
        /// The CPU.
        cpu: usize,
    },
    /// A CPU's `idle_h_nr_running` does not count its queued SCHED_IDLE tasks.
    #[error("cpu{cpu}: {idle} SCHED_IDLE tasks queued but idle_h_nr_running {idle_h_nr_running}")]
    IdleCount {
        /// The CPU.
        cpu: usize,
        /// SCHED_IDLE tasks queued.
        idle: u32,
        /// `cfs_rq->idle_h_nr_running`.
        idle_h_nr_running: u32,
    },
    /// A CPU's `cfs_tasks` list does not hold its queued tasks.
    #[error("cpu{cpu}: cfs_tasks has {entries} entries for {queued} queued")]
    CfsTasks {
        /// The CPU.
        cpu: usize,
        /// Entries of `cfs_tasks`.
        entries: usize,
        /// Tasks queued.
        queued: u32,
    },
    /// A task is queued another number of times than its `se.on_rq` says.
    #[error("task {task} found queued {times} times, se.on_rq={on_rq}")]
    QueuedTimes {
        /// The task.
        task: usize,
        /// How often it was found queued.
        times: u32,
        /// Its `se.on_rq`.
        on_rq: bool,
    },
    /// A TASK_RUNNING task is not queued.
    #[error("task {task} is TASK_RUNNING but not queued")]
    RunningNotQueued {
        /// The task.
        task: usize,
    },
    /// A task is queued on a CPU its affinity does not allow.
    #[error("task {task} queued on disallowed cpu{cpu}")]
    Disallowed {
        /// The task.
        task: usize,
        /// The CPU.
        cpu: usize,
    },
    /// With task groups: a CPU's `nr_running` does not count the tasks in its hierarchy.
    #[error("cpu{cpu}: {queued} tasks queued in the hierarchy but nr_running {nr_running}")]
    HierNrRunning {
        /// The CPU.
        cpu: usize,
        /// Tasks queued in the hierarchy.
        queued: u32,
        /// `rq->nr_running`.
        nr_running: u32,
    },
    /// With task groups: a CPU's `cfs_tasks` does not hold its queued and throttled tasks.
    #[error(
        "cpu{cpu}: cfs_tasks has {entries} entries for {queued} queued and {throttled} throttled"
    )]
    HierCfsTasks {
        /// The CPU.
        cpu: usize,
        /// Entries of `cfs_tasks`.
        entries: usize,
        /// Tasks queued in the hierarchy.
        queued: u32,
        /// Tasks on throttled group runqueues.
        throttled: u32,
    },
    /// With task groups: an entity is queued on a runqueue that is not its own.
    #[error("cpu{cpu}: entity {entity:#x} queued on the wrong runqueue")]
    WrongRunqueue {
        /// The CPU.
        cpu: usize,
        /// The entity (a task, or a group's with the group bit).
        entity: usize,
    },
    /// With task groups: a runqueue's `nr_running` or load does not match its entities.
    #[error("cpu{cpu} group {tg}: {entities} entities of weight {weight} but nr_running {nr_running} load {load}")]
    GroupLoad {
        /// The CPU.
        cpu: usize,
        /// The task group.
        tg: crate::task::GroupId,
        /// Entities queued.
        entities: u32,
        /// Their weight.
        weight: u64,
        /// `cfs_rq->nr_running`.
        nr_running: u32,
        /// `cfs_rq->load.weight`.
        load: u64,
    },
    /// With task groups: a runqueue's hierarchical counts do not match what it holds.
    #[error("cpu{cpu} group {tg}: holds {queued} tasks ({delayed} delayed, {idle} idle) but h_nr_queued {h_nr_queued} h_nr_delayed {h_nr_delayed} h_nr_runnable {h_nr_runnable} idle_h_nr_running {idle_h_nr_running}")]
    GroupCounts {
        /// The CPU.
        cpu: usize,
        /// The task group.
        tg: crate::task::GroupId,
        /// Tasks held.
        queued: u32,
        /// Delayed tasks held.
        delayed: u32,
        /// SCHED_IDLE tasks (or tasks of idle groups) held.
        idle: u32,
        /// `cfs_rq->h_nr_queued`.
        h_nr_queued: u32,
        /// `cfs_rq->h_nr_delayed`.
        h_nr_delayed: u32,
        /// `cfs_rq->h_nr_runnable`.
        h_nr_runnable: u32,
        /// `cfs_rq->idle_h_nr_running`.
        idle_h_nr_running: u32,
    },
}
