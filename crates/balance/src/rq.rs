//! `struct rq`: one CPU's runqueue, its clocks, idle bookkeeping and schedstat counters.

use fairsim_pelt::PeltClock;

use crate::cfs_rq::CfsRq;
use crate::stats::RqSchedstat;
use crate::task::TaskId;

/// Offset added to the engine's time to make the kernel clocks: the emulated machine has
/// been up ~1 s, so no clock reads 0 (PELT treats `last_update_time == 0` as "detached").
/// It is a multiple of the 1024 * 1024 ns PELT period, so engine time 0 starts a period.
pub const BOOT_CLOCK_OFFSET: u64 = 1 << 30;

/// `sysctl_sched_migration_cost`: 0.5 ms, its boot value (`sched_init` sets every
/// runqueue's `avg_idle` and `max_idle_balance_cost` from it before any write; a run's
/// `--sysctl`/`--debugfs` writes reach `SchedParams::migration_cost`).
pub const SYSCTL_SCHED_MIGRATION_COST: u64 = 500_000;

/// `sysctl_sched_migration_cost` written as -1 (`proc_dointvec` into an `unsigned int`,
/// or 4294967295 through debugfs): `task_hot` then calls every task hot.
pub const MIGRATION_COST_ALWAYS_HOT: u64 = u32::MAX as u64;

/// One CPU's runqueue.
///
/// Laid out in declaration order, 64-byte aligned: what a load balance reads of every
/// CPU it scans (`nr_running`, `ttwu_pending`, `curr`, the capacities, the misfit load,
/// and the root cfs_rq's `h_nr_queued` and PELT averages, which lead [`CfsRq`]) fills
/// the first two cache lines, so a scan of many CPUs touches two lines of each instead of
/// five or six scattered over the structure.
#[derive(Debug, Clone, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Rq {
    /// `rq->nr_running` (only fair tasks exist in fairsim).
    pub nr_running: u32,
    /// `rq->ttwu_pending`: wakeups queued on this CPU's wake list, not yet enqueued.
    pub ttwu_pending: u32,
    /// `rq->curr`: `None` while the idle task runs.
    pub curr: Option<TaskId>,
    /// `arch_scale_cpu_capacity(cpu)`.
    pub capacity_orig: u64,
    /// `rq->cpu_capacity` (`capacity_of`).
    pub cpu_capacity: u64,
    /// `rq->misfit_task_load`.
    pub misfit_task_load: u64,
    /// `cpu_of(rq)`.
    pub cpu: usize,
    /// `rq->cfs`.
    pub cfs: CfsRq,
    /// `rq->clock` in ns (`rq_clock`).
    pub clock: u64,
    /// `rq->clock_task`, `clock_pelt` and `lost_idle_time`.
    pub pelt: PeltClock,
    /// `arch_scale_freq_capacity(cpu)`: 1024 at the highest frequency.
    pub freq_capacity: u64,
    /// `rq->avg_idle`.
    pub avg_idle: u64,
    /// `rq->idle_stamp`: clock when the CPU went idle through newidle balance, 0 otherwise.
    pub idle_stamp: u64,
    /// `rq->max_idle_balance_cost`.
    pub max_idle_balance_cost: u64,
    /// `TIF_NEED_RESCHED` on the current task (or the idle task).
    pub need_resched: bool,
    /// `rq->cfs_tasks`: queued fair tasks, most recently run first (detach_tasks walks it
    /// from the back).
    pub cfs_tasks: Vec<TaskId>,
    /// `rq->nr_switches`.
    pub nr_switches: u64,
    /// `rq->next_balance` in jiffies.
    pub next_balance: u64,
    /// schedstat counters.
    pub stats: RqSchedstat,
    /// `rq->uclamp[]` and `UCLAMP_FLAG_IDLE` ([`crate::uclamp`]).
    pub uclamp: crate::uclamp::RqUclamp,
}

impl Rq {
    /// A runqueue as `sched_init` leaves it, with the clocks at `now`.
    pub fn new(cpu: usize, capacity: u64, now: u64) -> Rq {
        Rq {
            cpu,
            nr_running: 0,
            cfs: CfsRq::default(),
            curr: None,
            clock: now,
            pelt: PeltClock::new(now),
            cpu_capacity: capacity,
            capacity_orig: capacity,
            freq_capacity: 1024,
            avg_idle: 2 * SYSCTL_SCHED_MIGRATION_COST,
            idle_stamp: 0,
            max_idle_balance_cost: SYSCTL_SCHED_MIGRATION_COST,
            need_resched: false,
            ttwu_pending: 0,
            cfs_tasks: Vec::new(),
            nr_switches: 0,
            next_balance: 0,
            misfit_task_load: 0,
            stats: RqSchedstat::default(),
            uclamp: crate::uclamp::RqUclamp::default(),
        }
    }

    /// `rq_clock_task(rq)`.
    pub fn clock_task(&self) -> u64 {
        self.pelt.clock_task
    }

    /// `idle_cpu(cpu)`: the idle task runs, nothing is queued and no wakeup is pending.
    pub fn idle_cpu(&self) -> bool {
        self.curr.is_none() && self.nr_running == 0 && self.ttwu_pending == 0
    }

    /// `sched_idle_rq(rq)`: the runqueue has tasks and every one of them is SCHED_IDLE
    /// (only 6.12's enqueue counts them; on the eras this never holds).
    pub fn sched_idle_rq(&self) -> bool {
        self.nr_running == self.cfs.idle_h_nr_running && self.nr_running != 0
    }

    /// `available_idle_cpu(cpu)`: idle and not preempted as a vCPU (never, here).
    pub fn available_idle_cpu(&self) -> bool {
        self.idle_cpu()
    }

    /// `update_rq_clock(rq)` at `now`: the rq, task and PELT clocks advance, PELT time scaled
    /// by capacity and frequency unless the idle task runs.
    pub fn update_rq_clock(&mut self, now: u64) {
        let delta = now.saturating_sub(self.clock);
        if delta == 0 {
            return;
        }
        self.clock = now;
        self.pelt.update_rq_clock_task(
            delta,
            self.curr.is_none(),
            self.capacity_orig,
            self.freq_capacity,
        );
    }

    /// `list_add(&se->group_node, &rq->cfs_tasks)`.
    pub(crate) fn cfs_tasks_add(&mut self, p: TaskId) {
        self.cfs_tasks.insert(0, p);
    }

    /// `list_del_init(&se->group_node)`.
    pub(crate) fn cfs_tasks_del(&mut self, p: TaskId) {
        if let Some(i) = self.cfs_tasks.iter().position(|&t| t == p) {
            self.cfs_tasks.remove(i);
        }
    }

    /// `list_move(&se->group_node, &rq->cfs_tasks)`: most recently run goes first.
    pub(crate) fn cfs_tasks_move_front(&mut self, p: TaskId) {
        self.cfs_tasks_del(p);
        self.cfs_tasks_add(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairsim_pelt::{CfsRqAvg, SchedAvg};
    use std::mem::{align_of, offset_of, size_of};

    /// What a load balance reads of each CPU it scans sits in the runqueue's first two
    /// cache lines (see [`Rq`]); a field moved out of them makes every scan slower.
    #[test]
    fn the_fields_a_balance_scans_fill_the_first_two_cache_lines() {
        assert_eq!(align_of::<Rq>(), 64);
        let first_line = [
            offset_of!(Rq, nr_running) + size_of::<u32>(),
            offset_of!(Rq, ttwu_pending) + size_of::<u32>(),
            offset_of!(Rq, curr) + size_of::<Option<TaskId>>(),
            offset_of!(Rq, capacity_orig) + size_of::<u64>(),
            offset_of!(Rq, cpu_capacity) + size_of::<u64>(),
            offset_of!(Rq, misfit_task_load) + size_of::<u64>(),
            offset_of!(Rq, cfs) + offset_of!(CfsRq, h_nr_queued) + size_of::<u32>(),
        ];
        assert!(first_line.iter().all(|&end| end <= 64), "{first_line:?}");
        let avg = offset_of!(Rq, cfs) + offset_of!(CfsRq, avg) + offset_of!(CfsRqAvg, avg);
        assert_eq!(avg, 64);
        assert!(size_of::<SchedAvg>() <= 64);
    }
}
