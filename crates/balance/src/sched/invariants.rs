//! The runqueue invariants that tests and `--check-invariants` verify after every step.

use super::*;

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

impl Sched {
    /// Checks the runqueue invariants: every task is current on one CPU, queued on
    /// exactly one runqueue, or blocked; counters match the queues. Returns a description
    /// of the first violation.
    pub fn check_invariants(&self) -> Result<(), InvariantError> {
        if self.groups.active() {
            return self.check_invariants_hier();
        }
        let mut seen = vec![0u32; self.tasks.len()];
        for rq in &self.rqs {
            let mut queued = 0u32;
            let mut delayed = 0u32;
            let mut idle = 0u32;
            for &p in rq.cfs.timeline.values() {
                seen[p] += 1;
                queued += 1;
                delayed += u32::from(self.tasks[p].se.sched_delayed);
                idle += u32::from(self.tasks[p].policy == Policy::Idle);
                if self.tasks[p].cpu != rq.cpu {
                    return Err(InvariantError::QueuedElsewhere {
                        task: p,
                        cpu: rq.cpu,
                        task_cpu: self.tasks[p].cpu,
                    });
                }
            }
            if let Some(c) = rq.cfs.curr {
                if self.tasks[c].se.on_rq {
                    seen[c] += 1;
                    queued += 1;
                    delayed += u32::from(self.tasks[c].se.sched_delayed);
                    idle += u32::from(self.tasks[c].policy == Policy::Idle);
                }
            }
            if let Some(c) = rq.curr {
                if self.tasks[c].cpu != rq.cpu {
                    return Err(InvariantError::CurrElsewhere {
                        cpu: rq.cpu,
                        task: c,
                        task_cpu: self.tasks[c].cpu,
                    });
                }
            }
            if queued != rq.cfs.nr_running
                || queued != rq.nr_running
                || queued != rq.cfs.h_nr_queued
            {
                return Err(InvariantError::NrRunning {
                    cpu: rq.cpu,
                    queued,
                    nr_running: rq.nr_running,
                    cfs_nr_running: rq.cfs.nr_running,
                    h_nr_queued: rq.cfs.h_nr_queued,
                });
            }
            if delayed != rq.cfs.h_nr_delayed || queued - delayed != rq.cfs.h_nr_runnable {
                return Err(InvariantError::DelayedRunnable { cpu: rq.cpu });
            }
            // Only 6.12's enqueue counts SCHED_IDLE tasks; the eras run none.
            if idle != rq.cfs.idle_h_nr_running {
                return Err(InvariantError::IdleCount {
                    cpu: rq.cpu,
                    idle,
                    idle_h_nr_running: rq.cfs.idle_h_nr_running,
                });
            }
            if rq.cfs_tasks.len() as u32 != queued {
                return Err(InvariantError::CfsTasks {
                    cpu: rq.cpu,
                    entries: rq.cfs_tasks.len(),
                    queued,
                });
            }
        }
        for (p, t) in self.tasks.iter().enumerate() {
            let expect = u32::from(t.se.on_rq);
            if seen[p] != expect {
                return Err(InvariantError::QueuedTimes {
                    task: p,
                    times: seen[p],
                    on_rq: t.se.on_rq,
                });
            }
            if t.state == TaskState::Running && !t.se.on_rq {
                return Err(InvariantError::RunningNotQueued { task: p });
            }
            if t.se.on_rq && !t.allowed_on(t.cpu) {
                return Err(InvariantError::Disallowed {
                    task: p,
                    cpu: t.cpu,
                });
            }
        }
        Ok(())
    }
}
