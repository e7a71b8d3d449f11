//! Wakeup, fork and exec placement: `select_task_rq_fair` and its helpers.

use crate::sched::Sched;
use crate::task::TaskId;

impl Sched {
    /// `select_task_rq_fair(p, prev_cpu, wake_flags)` run on `this_cpu`.
    pub fn select_task_rq_fair(
        &mut self,
        _p: TaskId,
        prev_cpu: usize,
        _wake_flags: u32,
        _this_cpu: usize,
        _now: u64,
    ) -> usize {
        prev_cpu
    }
}

impl Sched {
    /// `update_idle_core(rq)`: when `cpu` goes idle and every SMT sibling is idle too, mark
    /// the LLC as having an idle core (`set_idle_cores`).
    pub fn update_idle_core(&mut self, _cpu: usize) {}
}
