//! Which task is current on each CPU as a trace's records go by, for the `pid` every
//! ftrace event carries (the task that was running when the CPU logged it).

use super::record::{Record, Trace, TraceEvent};

/// Follows the `sched_switch` stream from [`Trace::initial`].
#[derive(Debug, Clone)]
pub struct CurrentTasks {
    cur: Vec<u32>,
}

impl CurrentTasks {
    /// Every CPU's task when the window opened (idle for a CPU `initial` does not name).
    pub fn new(trace: &Trace) -> Self {
        let mut cur = trace.initial.clone();
        cur.resize(cpu_slots(trace), 0);
        Self { cur }
    }

    /// The task current on `rec.cpu` when it logged `rec`; a switch makes its `next` the
    /// current task for the records after it.
    pub fn observe(&mut self, rec: &Record) -> u32 {
        let cpu = rec.cpu as usize;
        if cpu >= self.cur.len() {
            // Records name CPUs below `Trace::cpus`; growing keeps a malformed trace
            // printable instead of panicking.
            self.cur.resize(cpu + 1, 0);
        }
        let now = self.cur[cpu];
        if let TraceEvent::Switch { next, .. } = rec.event {
            self.cur[cpu] = next;
        }
        now
    }
}

/// The number of per-CPU slots a writer needs: the machine's CPUs, or more if a record or
/// `initial` names a higher CPU.
pub fn cpu_slots(trace: &Trace) -> usize {
    let from_records = trace
        .records
        .iter()
        .map(|r| r.cpu as usize + 1)
        .max()
        .unwrap_or(0);
    (trace.cpus as usize)
        .max(trace.initial.len())
        .max(from_records)
}
