//! Linux 6.5's `select_task_rq_fair` (being ported: until then 6.12's runs).

use crate::sched::Sched;
use crate::task::TaskId;

impl Sched {
    /// `select_task_rq_fair` of Linux 6.5.
    pub(crate) fn select_task_rq_fair_v6_5(
        &mut self,
        p: TaskId,
        prev_cpu: usize,
        wake_flags: u32,
        this_cpu: usize,
        now: u64,
    ) -> usize {
        self.select_task_rq_fair_v6_12(p, prev_cpu, wake_flags, this_cpu, now)
    }
}
