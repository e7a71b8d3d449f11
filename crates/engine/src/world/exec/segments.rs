//! Run segments: work at the CPU's capacity and frequency, as the task's user or system
//! time, and spinning until a deadline.

use super::Step;
use crate::event::Tid;
use crate::program::SysCost;
use crate::world::cpu::SegKind;
use crate::world::World;

impl World {
    /// `Run`/`RunSys`: starts a segment of `work` units, as system time with `sys`. A
    /// segment a preemption cut short resumes from what the task saved, not afresh.
    #[inline(always)]
    pub(super) fn op_run(&mut self, cpu: usize, now: u64, t: Tid, work: u64, sys: bool) -> Step {
        let kind = self.tasks[t].saved.take().unwrap_or(SegKind::Work {
            left: work.saturating_mul(1024),
        });
        self.start_seg(cpu, now, t, kind, sys);
        Step::Stop
    }

    /// `RunSysCost`: a system-time segment whose work the cost table gives (exec, exit).
    #[inline]
    pub(super) fn op_run_sys_cost(&mut self, cpu: usize, now: u64, t: Tid, cost: SysCost) -> Step {
        let work = cost.of(&self.config.cost);
        self.op_run(cpu, now, t, work, true)
    }

    /// `Spin`: busy-waits until `dur` after the CPU is free; a preempted spin keeps its
    /// deadline.
    #[inline]
    pub(super) fn op_spin(&mut self, cpu: usize, now: u64, at: u64, t: Tid, dur: u64) -> Step {
        let kind = self.tasks[t]
            .saved
            .take()
            .unwrap_or(SegKind::Spin { deadline: at + dur });
        self.start_seg(cpu, now, t, kind, false);
        Step::Stop
    }
}
