//! Load, runnable and utilization readings of CPUs and tasks, as fair.c's placement and
//! balancing code reads them: `cpu_load`, `cpu_runnable`, `cpu_util` and their `_without`
//! variants, `task_h_load`, `util_fits_cpu` and the capacity comparisons.
//!
//! Everything here only reads the scheduler state, so the wakeup path and the load
//! balancer share the same code.

use fairsim_pelt::util_est::task_util_est_only;
use fairsim_pelt::{scale_load_down, SCHED_CAPACITY_SCALE};

use crate::sched::Sched;
use crate::task::TaskId;

/// The default clamps, defined with the clamp types in [`crate::uclamp`] (which `Task` and
/// `Rq` hold) and named here too, where the placement code has always found them.
pub use crate::uclamp::{UCLAMP_MAX_DEFAULT, UCLAMP_MIN_DEFAULT};

/// `fits_capacity(cap, max)` (fair.c): `cap` fits in `max` with a 20% margin, i.e.
/// `cap * 1280 < max * 1024`.
#[inline]
pub fn fits_capacity(cap: u64, max: u64) -> bool {
    cap * 1280 < max * 1024
}

/// `capacity_greater(cap1, cap2)` (fair.c): `cap1` exceeds `cap2` by about 5%, i.e.
/// `cap1 * 1024 > cap2 * 1078`.
#[inline]
pub fn capacity_greater(cap1: u64, cap2: u64) -> bool {
    cap1 * 1024 > cap2 * 1078
}

impl Sched {
    /// `capacity_of(cpu)` (fair.c): `rq->cpu_capacity`, the capacity left to CFS tasks.
    #[inline]
    pub fn capacity_of(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cpu_capacity
    }

    /// `arch_scale_cpu_capacity(cpu)`: the CPU's original capacity.
    #[inline]
    pub fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64 {
        self.rqs[cpu].capacity_orig
    }

    /// `get_actual_cpu_capacity(cpu)` (fair.c): the original capacity minus the larger of
    /// the hardware (thermal) and cpufreq pressures. fairsim models neither pressure, so
    /// both are 0.
    #[inline]
    pub fn get_actual_cpu_capacity(&self, cpu: usize) -> u64 {
        let hw_load_avg = 0u64;
        let cpufreq_pressure = 0u64;
        self.arch_scale_cpu_capacity(cpu) - hw_load_avg.max(cpufreq_pressure)
    }

    /// `cpu_load(rq)` (fair.c): the root cfs_rq's `load_avg`.
    #[inline]
    pub fn cpu_load(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cfs.avg.avg.load_avg
    }

    /// `cpu_runnable(rq)` (fair.c): the root cfs_rq's `runnable_avg`.
    #[inline]
    pub fn cpu_runnable(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cfs.avg.avg.runnable_avg
    }

    /// Whether `p` contributes to `cpu`'s signals: the test `cpu_load_without`,
    /// `cpu_runnable_without` and `cpu_util_without` open with ("task has no
    /// contribution or is new").
    #[inline]
    fn task_contributes_to(&self, cpu: usize, p: TaskId) -> bool {
        let t = &self.tasks[p];
        t.cpu == cpu && t.se.avg.last_update_time != 0
    }

    /// `cpu_load_without(rq, p)` (fair.c): `cpu`'s load with `p`'s hierarchical load
    /// taken out when `p` contributes to it.
    pub fn cpu_load_without(&self, cpu: usize, p: TaskId) -> u64 {
        if !self.task_contributes_to(cpu, p) {
            return self.cpu_load(cpu);
        }
        // The kernel reads the load into an `unsigned int` before subtracting.
        let load = self.rqs[cpu].cfs.avg.avg.load_avg as u32 as u64;
        load.saturating_sub(self.task_h_load(p))
    }

    /// `cpu_runnable_without(rq, p)` (fair.c): `cpu`'s runnable average with `p`'s taken
    /// out when `p` contributes to it.
    pub fn cpu_runnable_without(&self, cpu: usize, p: TaskId) -> u64 {
        if !self.task_contributes_to(cpu, p) {
            return self.cpu_runnable(cpu);
        }
        let runnable = self.rqs[cpu].cfs.avg.avg.runnable_avg as u32 as u64;
        runnable.saturating_sub(self.tasks[p].se.avg.runnable_avg)
    }

    /// `task_h_load(p)` (fair.c, `CONFIG_FAIR_GROUP_SCHED`): the task's share of its root
    /// cfs_rq's hierarchical load, `load_avg * h_load / (cfs load_avg + 1)`. For a task of
    /// the root group `h_load` is the root cfs_rq's own `load_avg`
    /// (`update_cfs_rq_h_load`), taken here as current; the kernel refreshes it at most
    /// once a jiffy, which fairsim does not model (the root cfs_rq keeps no `h_load`).
    pub fn task_h_load(&self, p: TaskId) -> u64 {
        if self.groups.active() {
            return self.task_h_load_hier(p);
        }
        let t = &self.tasks[p];
        let cfs_load = self.rqs[t.cpu].cfs.avg.avg.load_avg;
        let h_load = cfs_load;
        (t.se.avg.load_avg * h_load) / (cfs_load + 1)
    }

    /// `task_util(p)` (fair.c): the task's `util_avg`.
    #[inline]
    pub fn task_util(&self, p: TaskId) -> u64 {
        self.tasks[p].se.avg.util_avg
    }

    /// `_task_util_est(p)` (fair.c): the task's util_est without the
    /// `UTIL_AVG_UNCHANGED` flag.
    #[inline]
    pub fn task_util_est_only(&self, p: TaskId) -> u64 {
        u64::from(task_util_est_only(
            &self.tasks[p].se.avg,
            self.fair.util_est,
        ))
    }

    /// `task_util_est(p)` (fair.c): `max(task_util(p), _task_util_est(p))`.
    #[inline]
    pub fn task_util_est(&self, p: TaskId) -> u64 {
        self.task_util(p).max(self.task_util_est_only(p))
    }

    /// `cpu_util(cpu, p, dst_cpu, boost)` (fair.c): the CFS utilization of `cpu`, as it
    /// would be if `p` moved to `dst_cpu` (`None` is the kernel's -1: `p` leaves `cpu`),
    /// optionally boosted by the runnable average, raised to the util_est sum with
    /// `UTIL_EST`, and capped at the CPU's original capacity.
    ///
    /// The kernel's `current == p` test (exec balancing, where `p` runs on the waking CPU)
    /// is `p->on_cpu` here: a running task is current on its own CPU, and
    /// `select_task_rq` only looks at a running task from that CPU.
    pub fn cpu_util(
        &self,
        cpu: usize,
        p: Option<TaskId>,
        dst_cpu: Option<usize>,
        boost: bool,
    ) -> u64 {
        let cfs = &self.rqs[cpu].cfs.avg.avg;
        let task = p.map(|p| &self.tasks[p]);
        let add_task = task.is_some_and(|t| t.cpu != cpu && dst_cpu == Some(cpu));
        let sub_task = task.is_some_and(|t| t.cpu == cpu && dst_cpu != Some(cpu));
        let mut util = cfs.util_avg;
        if let Some(t) = task {
            if add_task {
                util += t.se.avg.util_avg;
            } else if sub_task {
                util = util.saturating_sub(t.se.avg.util_avg);
            }
        }
        if boost {
            let mut runnable = cfs.runnable_avg;
            if let Some(t) = task {
                if add_task {
                    runnable += t.se.avg.runnable_avg;
                } else if sub_task {
                    runnable = runnable.saturating_sub(t.se.avg.runnable_avg);
                }
            }
            util = util.max(runnable);
        }
        if self.fair.util_est.enabled() {
            let mut util_est = u64::from(cfs.util_est);
            if let (Some(p), Some(t)) = (p, task) {
                // During a wakeup p is not enqueued and must be added on its destination;
                // during exec it is enqueued (or current) and must be taken out.
                if dst_cpu == Some(cpu) {
                    util_est += self.task_util_est_only(p);
                } else if t.on_rq_queued() || t.on_cpu {
                    util_est = util_est.saturating_sub(self.task_util_est_only(p));
                }
            }
            util = util.max(util_est);
        }
        util.min(self.arch_scale_cpu_capacity(cpu))
    }

    /// `cpu_util_without(cpu, p)` (fair.c): `cpu`'s utilization with `p`'s contribution
    /// taken out when `p` contributes to it.
    pub fn cpu_util_without(&self, cpu: usize, p: TaskId) -> u64 {
        let p = self.task_contributes_to(cpu, p).then_some(p);
        self.cpu_util(cpu, p, None, false)
    }

    /// `util_fits_cpu(util, uclamp_min, uclamp_max, cpu)` (fair.c): 1 if `util` fits
    /// `capacity_of(cpu)` with the 20% margin (or the clamps force a fit), 0 if not, and
    /// -1 if it fits but the CPU cannot deliver the boost `uclamp_min` asks for.
    pub fn util_fits_cpu(&self, util: u64, uclamp_min: u64, uclamp_max: u64, cpu: usize) -> i32 {
        let mut fits = fits_capacity(util, self.capacity_of(cpu));
        if !self.uclamp_is_used() {
            return i32::from(fits);
        }
        // The clamps compare with the original capacity: only the real utilization is
        // measured against the capacity left after pressure.
        let capacity_orig = self.arch_scale_cpu_capacity(cpu);
        let max_at_top =
            capacity_orig == SCHED_CAPACITY_SCALE && uclamp_max == SCHED_CAPACITY_SCALE;
        let uclamp_max_fits = !max_at_top && uclamp_max <= capacity_orig;
        fits = fits || uclamp_max_fits;
        let uclamp_min = uclamp_min.min(uclamp_max);
        if fits && util < uclamp_min && uclamp_min > self.get_actual_cpu_capacity(cpu) {
            return -1;
        }
        i32::from(fits)
    }

    /// `task_fits_cpu(p, cpu)` (fair.c): `p`'s estimated utilization fully fits `cpu`,
    /// with its effective clamps.
    pub fn task_fits_cpu(&self, p: TaskId, cpu: usize) -> bool {
        use crate::uclamp::ClampId;
        self.util_fits_cpu(
            self.task_util_est(p),
            self.uclamp_eff_value(p, ClampId::Min),
            self.uclamp_eff_value(p, ClampId::Max),
            cpu,
        ) > 0
    }

    /// `sync_entity_load_avg(&p->se)` (fair.c): decay a dequeued task's averages up to its
    /// cfs_rq's `last_update_time`.
    pub fn sync_entity_load_avg(&mut self, p: TaskId) {
        let cpu = self.tasks[p].cpu;
        let weight = scale_load_down(self.tasks[p].se.load.weight);
        let traced = self.pelt_tp.on();
        let cfs = match self.h_cfs_of(p, cpu) {
            crate::group::CfsRef::Root(cpu) => &self.rqs[cpu].cfs.avg,
            crate::group::CfsRef::Group(i) => &self.groups.cfs[i].avg,
        };
        let se = &mut self.tasks[p].se.avg;
        let fires = traced && fairsim_pelt::update_crosses_period(cfs.avg.last_update_time, se);
        fairsim_pelt::sync_entity_load_avg(cfs, se, weight);
        if fires {
            // pelt_se_tp in __update_load_avg_blocked_se, on the task's CPU.
            let sig = crate::pelt_tp::PeltSignals::of(se);
            self.pelt_tp
                .push(cpu, crate::pelt_tp::PeltTracepoint::Se { task: p, sig });
        }
    }
}
