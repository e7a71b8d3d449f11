//! What load tracking shows a tracer: the bare tracepoints 6.12.117 fires on PELT and
//! util_est updates and on `update_cpu_capacity`, which the sched_tp module turns into
//! the `sched_pelt_cfs`, `sched_pelt_se`, `sched_util_est_cfs`, `sched_util_est_se` and
//! `sched_cpu_capacity` trace events that LISA's load-tracking analysis reads.
//!
//! Where 6.12.117 fires them, and where fairsim logs them:
//! - `pelt_se_tp(se)` in `__update_load_avg_se` and `__update_load_avg_blocked_se`
//!   (pelt.c) when the update crossed a period ([`fairsim_pelt::update_crosses_period`]):
//!   a task's entity in `update_load_avg` (the flat hierarchy) and in
//!   `sync_entity_load_avg`/`remove_entity_load_avg` (a sleeping task decayed).
//! - `pelt_cfs_tp(cfs_rq)` in `__update_load_avg_cfs_rq` when it crossed a period, and at
//!   the end of `attach_entity_load_avg` and `detach_entity_load_avg` (fair.c): the root
//!   runqueue in `update_load_avg` (flat) and in `update_blocked_averages`.
//! - `sched_util_est_cfs_tp(cfs_rq)` at the end of `util_est_enqueue` and
//!   `util_est_dequeue` (with UTIL_EST on), `sched_util_est_se_tp(&p->se)` at the end of
//!   `util_est_update` when it took a sample (not on its early returns).
//! - `sched_cpu_capacity_tp(rq)` in `update_cpu_capacity`, each time it sets
//!   `rq->cpu_capacity`.
//!
//! With task groups, `update_load_avg`'s tracepoints are logged where they concern the
//! CPU's root runqueue: a task queued there, and the root's own signals (after a group
//! entity's update too); the root runqueue keeps them until the scheduler moves them into
//! its log (`Sched::pelt_tp_drain`, after each entity operation, blocked-average update
//! and bandwidth throttle or unthrottle).
//!
//! Not logged: the PELT signals of group runqueues and group entities (a task inside a
//! group, its group's runqueue and the group's entity), and the
//! `propagate_entity_load_avg` pair; and `pelt_rt_tp`, `pelt_dl_tp`, `pelt_irq_tp` and
//! `pelt_hw_tp`, whose signals fairsim does not track (no RT or deadline tasks, no irq
//! time, no hardware pressure).
//!
//! The log is off unless the engine asks for it (`--trace-events pelt`); it only observes,
//! and the cost model charges nothing for it (a tracepoint's own cost is outside the
//! model, as for every other tracepoint).

use std::cell::RefCell;

use fairsim_pelt::{SchedAvg, UTIL_AVG_UNCHANGED};

use crate::task::{GroupId, TaskId};

/// The `struct sched_avg` fields the PELT events print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeltSignals {
    /// `load_avg`.
    pub load: u64,
    /// `runnable_avg`.
    pub runnable: u64,
    /// `util_avg`.
    pub util: u64,
    /// `last_update_time` (PELT clock, ns).
    pub update_time: u64,
}

impl PeltSignals {
    /// The signals of `avg` as the tracepoint reads them.
    pub fn of(avg: &SchedAvg) -> Self {
        PeltSignals {
            load: avg.load_avg,
            runnable: avg.runnable_avg,
            util: avg.util_avg,
            update_time: avg.last_update_time,
        }
    }
}

/// One load-tracking tracepoint; the engine stamps it with the time of the event that
/// made it, on the CPU of the runqueue it is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeltTracepoint {
    /// `pelt_cfs_tp(cfs_rq)`.
    Cfs {
        /// The runqueue's group (0: the CPU's root runqueue).
        group: GroupId,
        /// Its signals after the update.
        sig: PeltSignals,
    },
    /// `pelt_se_tp(se)` of a task's entity.
    Se {
        /// The task.
        task: TaskId,
        /// Its signals after the update.
        sig: PeltSignals,
    },
    /// `sched_util_est_cfs_tp(cfs_rq)`.
    UtilEstCfs {
        /// The runqueue's group (0: root).
        group: GroupId,
        /// `avg.util_avg`.
        util: u64,
        /// `avg.util_est`.
        util_est: u32,
    },
    /// `sched_util_est_se_tp(&p->se)`.
    UtilEstSe {
        /// The task.
        task: TaskId,
        /// `avg.util_avg`.
        util: u64,
        /// `avg.util_est & ~UTIL_AVG_UNCHANGED`.
        util_est: u32,
    },
    /// `sched_cpu_capacity_tp(rq)`.
    CpuCapacity {
        /// `rq->cpu_capacity`.
        capacity: u64,
        /// `arch_scale_cpu_capacity(cpu)`.
        capacity_orig: u64,
        /// `cap_scale(capacity_orig, arch_scale_freq_capacity(cpu))`.
        capacity_curr: u64,
    },
}

impl PeltTracepoint {
    /// `sched_util_est_se_tp(&p->se)` of a task whose averages are `avg`.
    pub fn util_est_se(task: TaskId, avg: &SchedAvg) -> Self {
        PeltTracepoint::UtilEstSe {
            task,
            util: avg.util_avg,
            util_est: avg.util_est & !UTIL_AVG_UNCHANGED,
        }
    }

    /// `sched_util_est_cfs_tp(cfs_rq)` of the root runqueue whose averages are `avg`.
    pub fn util_est_cfs(avg: &SchedAvg) -> Self {
        PeltTracepoint::UtilEstCfs {
            group: 0,
            util: avg.util_avg,
            util_est: avg.util_est,
        }
    }
}

/// The scheduler's log of load-tracking tracepoints, each with the CPU it is about;
/// `None` inside while no tracer listens. Code that only borrows the scheduler (the load
/// balancer's capacity update) logs through the cell.
#[derive(Debug, Clone, Default)]
pub struct PeltTpLog {
    log: RefCell<Option<Vec<(usize, PeltTracepoint)>>>,
}

impl PeltTpLog {
    /// Starts keeping tracepoints.
    pub fn enable(&mut self) {
        self.log.get_mut().get_or_insert_with(Vec::new);
    }

    /// Whether a tracer listens.
    #[inline]
    pub fn on(&self) -> bool {
        self.log.borrow().is_some()
    }

    /// Logs `tp` about `cpu` when a tracer listens.
    #[inline]
    pub fn push(&self, cpu: usize, tp: PeltTracepoint) {
        if let Some(v) = self.log.borrow_mut().as_mut() {
            v.push((cpu, tp));
        }
    }

    /// Logs every tracepoint of `tps` about `cpu`, in order, when a tracer listens.
    pub fn extend(&self, cpu: usize, tps: impl IntoIterator<Item = PeltTracepoint>) {
        if let Some(v) = self.log.borrow_mut().as_mut() {
            v.extend(tps.into_iter().map(|tp| (cpu, tp)));
        }
    }

    /// Whether tracepoints wait to be taken (cheap enough for every event).
    pub fn pending(&self) -> bool {
        self.log.borrow().as_ref().is_some_and(|v| !v.is_empty())
    }

    /// The tracepoints logged since the last call, oldest first.
    pub fn take(&mut self) -> Vec<(usize, PeltTracepoint)> {
        self.log
            .get_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }
}
