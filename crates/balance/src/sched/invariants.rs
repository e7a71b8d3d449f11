//! The runqueue invariants that tests and `--check-invariants` verify after every step.

use super::*;

impl Sched {
    /// Checks the runqueue invariants: every task is current on one CPU, queued on
    /// exactly one runqueue, or blocked; counters match the queues. Returns a description
    /// of the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
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
                    idle += u32::from(self.tasks[c].policy == Policy::Idle);
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
            // Only 6.12's enqueue counts SCHED_IDLE tasks; the eras run none.
            if idle != rq.cfs.idle_h_nr_running {
                return Err(format!(
                    "cpu{}: {idle} SCHED_IDLE tasks queued but idle_h_nr_running {}",
                    rq.cpu, rq.cfs.idle_h_nr_running
                ));
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
