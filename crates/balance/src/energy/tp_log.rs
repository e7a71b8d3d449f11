//! The scheduler's side of EAS's tracepoint log ([`super::tp`]): turning it on, draining
//! it, and the calls that log `sched_overutilized_tp` and each
//! `find_energy_efficient_cpu` decision. They write `Sched`, so they sit apart from the
//! record type, which `Eas` holds without importing the scheduler.

use super::tp::EasTracepoint;
use crate::sched::Sched;
use crate::task::TaskId;

impl Sched {
    /// Starts keeping [`EasTracepoint`]s (the engine's tracer drains them).
    pub fn enable_eas_tracepoints(&mut self) {
        self.eas.tp.get_or_insert_with(Vec::new);
    }

    /// The tracepoints logged since the last call, oldest first.
    pub fn take_eas_tracepoints(&mut self) -> Vec<EasTracepoint> {
        self.eas.tp.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Whether tracepoints are waiting to be taken (cheap enough for every event).
    pub fn has_eas_tracepoints(&self) -> bool {
        self.eas.tp.as_ref().is_some_and(|v| !v.is_empty())
    }

    /// Logs `sched_overutilized_tp` when a tracer listens.
    pub(crate) fn trace_overutilized(&mut self, cpu: usize, rd: usize, flag: bool) {
        if let Some(tp) = self.eas.tp.as_mut() {
            tp.push(EasTracepoint::Overutilized {
                cpu,
                rd,
                overutilized: flag,
            });
        }
    }

    /// Counts a `find_energy_efficient_cpu` call and its answer, and logs it when a
    /// tracer listens.
    pub(crate) fn note_feec(
        &mut self,
        p: TaskId,
        this_cpu: usize,
        prev_cpu: usize,
        target: Option<usize>,
    ) {
        self.eas.stats.feec_calls += 1;
        if let Some(c) = target {
            self.eas.stats.feec_placed += 1;
            self.eas.stats.feec_moved += u64::from(c != prev_cpu);
        }
        if let Some(tp) = self.eas.tp.as_mut() {
            tp.push(EasTracepoint::Feec {
                cpu: this_cpu,
                p,
                prev_cpu,
                target,
            });
        }
    }
}
