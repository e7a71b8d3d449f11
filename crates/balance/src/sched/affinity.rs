//! `sched_setaffinity` for a task of the fair class: Linux 6.12's
//! `__set_cpus_allowed_ptr` -> `__set_cpus_allowed_ptr_locked` -> `affine_move_task`, with
//! the stopper's `migration_cpu_stop` -> `__migrate_task` -> `move_queued_task` when the
//! task must leave its CPU.
//!
//! CPU hotplug is not modelled, so `cpu_active_mask` is every CPU of the machine, and no
//! fairsim task disables migration, so the `SCA_MIGRATE_*` and pending-request paths of
//! `affine_move_task` never apply.

use fairsim_topology::CpuMask;

use super::*;

/// What [`Sched::set_cpus_allowed_ptr`] did to the task's placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AffineMove {
    /// The mask equals the old one (`cpumask_equal` -> `goto out`): nothing changed.
    Unchanged,
    /// The mask changed and the task may stay where it is (or it is blocked, and its
    /// next wakeup chooses among the new CPUs).
    Stays,
    /// The task was running on a CPU outside the mask: the stopper of `from` preempted
    /// it and moved it to `to` (`stop_one_cpu(migration_cpu_stop)`).
    Stopper {
        /// The CPU it ran on.
        from: usize,
        /// Where it is queued now.
        to: usize,
    },
    /// The task was queued, not running, on a CPU outside the mask: it was moved at once
    /// under the runqueue lock (`move_queued_task`).
    Queued {
        /// The CPU it was queued on.
        from: usize,
        /// Where it is queued now.
        to: usize,
    },
}

impl Sched {
    /// `cpumask_any_and_distribute(cpu_active_mask, mask)` (lib/cpumask.c) called on
    /// `this_cpu`: the first CPU of `mask` after the one this CPU returned last time,
    /// wrapping around; each CPU keeps its own previous answer (the per-CPU
    /// `distribute_cpu_mask_prev`, 0 at boot, so the first answer skips CPU 0 when the
    /// mask holds another). `None` when the mask is empty.
    pub fn cpumask_any_and_distribute(&mut self, mask: &CpuMask, this_cpu: usize) -> Option<usize> {
        let n = self.nr_cpus();
        let prev = self.distribute_prev.get(this_cpu).copied().unwrap_or(0);
        let next = mask
            .next_from(prev + 1)
            .filter(|&c| c < n)
            .or_else(|| mask.first().filter(|&c| c < n))?;
        if let Some(p) = self.distribute_prev.get_mut(this_cpu) {
            *p = next;
        }
        Some(next)
    }

    /// `__set_cpus_allowed_ptr(p, mask)` as `sched_setaffinity` calls it from `this_cpu`
    /// at `now`: an unchanged mask returns at once; otherwise the destination is chosen
    /// with [`Sched::cpumask_any_and_distribute`] before anything changes, the new mask is
    /// set (`__do_set_cpus_allowed`, with `set_task_max_allowed_capacity`), and
    /// `affine_move_task` moves the task only when its CPU left the mask: a running task
    /// through the stopper of its CPU, a queued one directly. A mask with no CPU of the
    /// machine is refused (`-EINVAL`) and leaves the task as it was (`None`).
    pub fn set_cpus_allowed_ptr(
        &mut self,
        p: TaskId,
        mask: &CpuMask,
        this_cpu: usize,
        now: u64,
    ) -> Option<AffineMove> {
        if self.tasks[p].cpus_allowed == *mask {
            return Some(AffineMove::Unchanged);
        }
        let dest = self.cpumask_any_and_distribute(mask, this_cpu)?;
        self.set_now(now);
        self.set_cpus_allowed(p, mask.clone());
        let from = self.tasks[p].cpu;
        if mask.test(from) {
            return Some(AffineMove::Stays);
        }
        if self.rqs[from].curr == Some(p) {
            // migration_cpu_stop on `from`: the stopper preempts the task, and
            // __migrate_task finds it queued (put back by the preemption) and moves it.
            self.update_rq_clock(from, now);
            self.preempt_current_for_stopper(from);
            self.move_queued_task(from, p, dest, now);
            return Some(AffineMove::Stopper { from, to: dest });
        }
        if self.tasks[p].on_rq_queued() {
            self.update_rq_clock(from, now);
            self.move_queued_task(from, p, dest, now);
            return Some(AffineMove::Queued { from, to: dest });
        }
        // Blocked: its next wakeup's select_task_rq chooses an allowed CPU.
        Some(AffineMove::Stays)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn four_cpus() -> Sched {
        use fairsim_topology::source::{parse_spec, SpecOptions};
        use fairsim_topology::{build_sched_domains, Arch, BuildOptions};
        let m = parse_spec(&SpecOptions::new("4", Arch::Arm64)).unwrap();
        let topo = build_sched_domains(&m, BuildOptions::default()).unwrap();
        Sched::new(m, topo, SchedParams::default())
    }

    /// A task forked onto CPU 0 only, current there, and a second one queued behind it.
    fn two_on_cpu0(s: &mut Sched) -> (TaskId, TaskId) {
        let only0 = CpuMask::single(4, 0);
        let a = s.create_task("a", 0, Some(only0.clone()), 0);
        s.wake_up_new_task_select(a, 0, 1_000);
        s.wake_up_new_task_activate(a, 1_000);
        assert_eq!(s.schedule(0, 2_000), Some(a));
        let b = s.create_task("b", 0, Some(only0), 0);
        s.wake_up_new_task_select(b, 0, 3_000);
        s.wake_up_new_task_activate(b, 3_000);
        (a, b)
    }

    #[test]
    fn a_running_task_off_its_new_mask_is_moved_by_the_stopper() {
        let mut s = four_cpus();
        let (a, _) = two_on_cpu0(&mut s);
        let to3 = CpuMask::single(4, 3);
        let moved = s.set_cpus_allowed_ptr(a, &to3, 0, 10_000);
        assert_eq!(moved, Some(AffineMove::Stopper { from: 0, to: 3 }));
        assert_eq!((s.tasks[a].cpu, s.rqs[0].curr), (3, None));
        assert!(s.tasks[a].on_rq_queued() && s.rqs[0].need_resched);
        assert_eq!(s.take_work().tasks_moved, 1);
        s.check_invariants().unwrap();
        // The same mask again is `cpumask_equal`: nothing happens.
        assert_eq!(
            s.set_cpus_allowed_ptr(a, &to3, 0, 11_000),
            Some(AffineMove::Unchanged)
        );
    }

    #[test]
    fn a_queued_task_is_moved_and_one_still_allowed_stays() {
        let mut s = four_cpus();
        let (a, b) = two_on_cpu0(&mut s);
        let moved = s.set_cpus_allowed_ptr(b, &CpuMask::from_cpus(4, [1, 2]), 0, 10_000);
        // cpumask_any_and_distribute from CPU 0's first call: the first CPU after 0.
        assert_eq!(moved, Some(AffineMove::Queued { from: 0, to: 1 }));
        assert_eq!(s.rqs[0].curr, Some(a));
        s.check_invariants().unwrap();
        let widened = s.set_cpus_allowed_ptr(a, &CpuMask::full(4), 0, 11_000);
        assert_eq!(widened, Some(AffineMove::Stays));
        assert_eq!(s.tasks[a].nr_cpus_allowed, 4);
        assert_eq!(s.set_cpus_allowed_ptr(a, &CpuMask::new(4), 0, 12_000), None);
        assert_eq!(
            s.tasks[a].nr_cpus_allowed, 4,
            "an empty mask changes nothing"
        );
    }

    #[test]
    fn distribute_skips_zero_first_and_wraps() {
        let mut s = four_cpus();
        let all = CpuMask::full(4);
        assert_eq!(s.cpumask_any_and_distribute(&all, 0), Some(1));
        assert_eq!(s.cpumask_any_and_distribute(&all, 0), Some(2));
        // Another CPU keeps its own previous answer.
        assert_eq!(s.cpumask_any_and_distribute(&all, 1), Some(1));
        let low = CpuMask::from_cpus(4, [0, 1]);
        assert_eq!(s.cpumask_any_and_distribute(&low, 0), Some(0));
        assert_eq!(s.cpumask_any_and_distribute(&CpuMask::new(4), 0), None);
    }
}
