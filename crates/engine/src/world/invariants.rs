//! The world's invariants, checked after every event with `check_invariants`: the
//! scheduler's own, and the engine's view of them.

use crate::error::{EngineError, InvariantError};

use super::{RtState, World};

impl World {
    /// Checks the scheduler's invariants and the engine's view of them: each CPU's current
    /// task is the scheduler's, no task is current on two CPUs, blocked and exited tasks
    /// are not current, and virtual time is within the run.
    pub fn check_invariants(&self) -> Result<(), EngineError> {
        self.sched
            .check_invariants()
            .map_err(InvariantError::Sched)?;
        let mut current = vec![false; self.tasks.len()];
        for (cpu, c) in self.cpus.iter().enumerate() {
            let sched_curr = self.sched.rqs[cpu].curr.map(|s| self.by_sched_id[s]);
            if c.curr != sched_curr {
                return Err(InvariantError::CurrDiffers {
                    cpu,
                    engine: c.curr,
                    sched: sched_curr,
                }
                .into());
            }
            if let Some(t) = c.curr {
                if current[t] {
                    return Err(InvariantError::CurrentTwice { task: t }.into());
                }
                current[t] = true;
                // Inside schedule(), a task that just blocked stays current while the
                // newidle balance runs.
                if self.tasks[t].state != RtState::Runnable && c.newidle.is_none() {
                    return Err(InvariantError::RunsNotRunnable {
                        cpu,
                        task: t,
                        state: self.tasks[t].state.name(),
                    }
                    .into());
                }
            }
            if let Some(seg) = &c.seg {
                if Some(seg.task()) != c.curr {
                    return Err(InvariantError::SegmentNotCurrent {
                        cpu,
                        task: seg.task(),
                        curr: c.curr,
                    }
                    .into());
                }
            }
        }
        for (t, rt) in self.tasks.iter().enumerate() {
            if let Some(s) = rt.sched_id {
                let st = &self.sched.tasks[s];
                if rt.state == RtState::Runnable && !st.se.on_rq {
                    return Err(InvariantError::RunnableNotQueued { task: t }.into());
                }
                if st.se.on_rq && !st.allowed_on(st.cpu) {
                    return Err(InvariantError::QueuedDisallowed {
                        task: t,
                        cpu: st.cpu,
                    }
                    .into());
                }
            }
        }
        if self.now.0 > self.config.duration {
            return Err(InvariantError::BeyondRun.into());
        }
        Ok(())
    }
}
