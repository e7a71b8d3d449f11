//! The runqueue invariants that tests and `--check-invariants` verify after every step.

use super::*;

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
