//! Linux 4.5's `wake_affine(sd, p, sync)` with `effective_load`, beside 6.12's
//! [`super::wake_affine`].
//!
//! # Source
//!
//! `kernel/sched/fair.c` of **Linux 4.5.0** (`github:arthur-lucena/linux-4.5-hw-so` at
//! `f21e75bf`): `record_wakee` 4618-4634, `task_waking_fair` 4636-4656, `effective_load`
//! 4709-4763 (`CONFIG_FAIR_GROUP_SCHED`) and 4766-4769 (without), `wake_wide` 4785-4796,
//! `wake_affine` 4798-4862; `kernel/sched/core.c` `sd_init` (`wake_idx` 0 at every level).
//!
//! # What 4.5 computes
//!
//! `load = source_load(prev, wake_idx)` and `this_load = target_load(this, wake_idx)`;
//! `wake_idx` is 0 at every level, so both are `weighted_cpuload()`, the root cfs_rq's
//! `runnable_load_avg`, rebuilt here by [`Sched::weighted_cpuload_v4_15`] (the queued,
//! non-delayed tasks' `se.avg.load_avg`, each decayed on a copy to the cfs_rq's
//! `last_update_time`, summed; the wakee is asleep and not in `prev`'s sum). A sync
//! wakeup subtracts the waker's `se.avg.load_avg` from `this_load` (as last updated: 4.5
//! does not sync it first). Then `this_eff_load = 100 * capacity_of(prev)` and
//! `prev_eff_load = (100 + (imbalance_pct - 100) / 2) * capacity_of(this)`; when
//! `this_load > 0` they are multiplied by `this_load + p->se.avg.load_avg` and `load`.
//! Affine when `this_eff_load <= prev_eff_load`, counting `ttwu_move_affine` on `sd`
//! (fairsim keeps no per-task `nr_wakeups_affine*` counters).
//!
//! `effective_load(tg, cpu, wl, wg)` with `CONFIG_FAIR_GROUP_SCHED` returns `wl` at once
//! for a task of the root group (`!tg->parent`), and fairsim has no task groups, so the
//! four calls add `-weight(current)`, `0`, `+weight(p)` and `0`, the values the
//! non-group build's `return wl;` gives too.
//!
//! # Against 6.12's `wake_affine`
//!
//! 6.12 first asks `wake_affine_idle` (an idle waking CPU, a sync waker alone on its CPU,
//! an idle previous CPU), which 4.5 does not have; 6.12's `wake_affine_weight` reads
//! `cpu_load()` (blocked load included) and `task_h_load`, returns the waker's CPU at
//! once when the waker carries more than its CPU's load, takes the wakee out of the
//! previous CPU's load, adds 1 to `prev_eff_load` under `sync`, always multiplies by the
//! loads, and is affine on `<`. 4.5 multiplies only when `this_load > 0`, so a sync
//! wakeup whose waker carries the whole of its CPU's runnable load goes affine whenever
//! the capacities allow it (always on a symmetric machine).
//!
//! # Values on 6.12's runqueues
//!
//! `imbalance_pct` is 4.5's (110 SMT, 117 LLC, 125 above), recomputed from the domain's
//! flags. `capacity_of` is the running balancer's `rq->cpu_capacity`
//! ([`Sched::capacity_of_sel_v4_5`]): an era balancer's own when it keeps one, else
//! 6.12's, which gives an SMT thread 1024 where 4.5 gave 589; that cancels out here (both
//! sides carry one CPU's capacity, and every CPU of an SMT machine has the same).
//!
//! # `record_wakee`
//!
//! 4.5 calls `record_wakee(p)` from `task_waking_fair()`, which `try_to_wake_up()` runs
//! for every wakeup of a sleeping task before `select_task_rq()`, including tasks pinned
//! to one CPU (whose `select_task_rq_fair` is not called) and tasks still `on_cpu`
//! (4.5 waits until the CPU is done with them, then selects). fairsim calls it first in
//! 4.5's `select_task_rq_fair` ([`super::v4_5_select`]), so its order relative to
//! `wake_wide` is 4.5's, but a waker's wakeups of pinned tasks, and those that fairsim
//! sends to the previous CPU's wake list while the task is still `on_cpu`, do not count
//! as flips. The body (halve `wakee_flips` once per `HZ`, count a flip per new wakee) and
//! `wake_wide` (`sd_llc_size` of the waking CPU as the factor; slave flips `>= factor`
//! and master `>= slave * factor`) are 6.12's, line for line, so 6.12's functions run.

use fairsim_topology::SdId;

use crate::sched::Sched;
use crate::select::v4_15_find_idlest::imbalance_pct_v4_15;
use crate::task::TaskId;

impl Sched {
    /// `wake_affine(sd, p, sync)` of Linux 4.5 (kernel/sched/fair.c) for a wakeup of `p`
    /// (last on `prev_cpu`, `task_cpu(p)`) run on `this_cpu`: whether the waker's CPU is
    /// near enough in load, weighted by capacity with half of `sd`'s imbalance margin,
    /// to take the task. Counts `ttwu_move_affine` on `sd` when it is.
    pub fn wake_affine_v4_5(
        &mut self,
        sd: SdId,
        p: TaskId,
        this_cpu: usize,
        prev_cpu: usize,
        sync: bool,
    ) -> bool {
        // wake_idx is 0: source_load and target_load are weighted_cpuload.
        let load = self.weighted_cpuload_v4_15(prev_cpu) as i64;
        let mut this_load = self.weighted_cpuload_v4_15(this_cpu) as i64;

        if sync {
            // The waker is about to sleep: take its whole load off this CPU. For a task
            // of the root group effective_load() returns its `wl` argument, so this CPU
            // loses the waker's load and the previous CPU's load is unchanged (`wl` 0).
            let weight = self
                .current_of(this_cpu)
                .map_or(0, |c| self.tasks[c].se.avg.load_avg) as i64;
            this_load -= weight;
        }

        let weight = self.tasks[p].se.avg.load_avg as i64;

        // With this CPU's load at or below 0 (idle, or emptied by the sync above) only the
        // capacities are compared.
        let pct = i64::from(imbalance_pct_v4_15(self.topo.domain(sd).flags));
        let mut this_eff_load = 100 * self.capacity_of_sel_v4_5(prev_cpu) as i64;
        let mut prev_eff_load =
            (100 + (pct - 100) / 2) * self.capacity_of_sel_v4_5(this_cpu) as i64;
        if this_load > 0 {
            // effective_load(tg, this, w, w) adds the wakee; effective_load(tg, prev, 0,
            // w) adds nothing.
            this_eff_load *= this_load + weight;
            prev_eff_load *= load;
        }

        let balanced = this_eff_load <= prev_eff_load;
        if !balanced {
            return false;
        }
        self.sd_stats[sd].ttwu_move_affine += 1;
        true
    }
}
