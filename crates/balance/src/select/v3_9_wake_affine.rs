//! Linux 3.9's `wake_affine(sd, p, sync)` with `effective_load`, beside 4.5's
//! ([`super::v4_5_wake_affine`]) and 6.12's ([`super::wake_affine`]).
//!
//! # Source
//!
//! `kernel/sched/fair.c` of **Linux 3.9.0** (`github:Red54/loongson1-linux-3.9` at
//! `2694001c`, Makefile 3.9.0; its sched files are those of the 3.9.6 tree the 3.9
//! balancer port read): `weighted_cpuload` 2898-2901, `source_load` 2910-2919,
//! `target_load` 2925-2934, `power_of` 2936-2939, `cpu_avg_load_per_task` 2941-2950,
//! `effective_load` 3025-3079 (`CONFIG_FAIR_GROUP_SCHED`) and 3082 (without),
//! `wake_affine` 3090-3171; `include/linux/topology.h` (`SD_SIBLING_INIT`, `SD_MC_INIT`,
//! `SD_CPU_INIT`) and `sd_numa_init` in `kernel/sched/core.c`: `wake_idx` is 0 at every
//! level.
//!
//! # What 3.9 computes
//!
//! `load = source_load(prev, wake_idx)` and `this_load = target_load(this, wake_idx)`.
//! A sync wakeup subtracts the waker's `se.load.weight` from `this_load`
//! (`effective_load` of the root group returns its `wl`: fairsim has no task groups).
//! When `this_load > 0`, `100 * power_of(prev) * (this_load + weight(p))` is compared
//! with `(100 + (imbalance_pct - 100) / 2) * power_of(this) * load`, affine on `<=`;
//! otherwise the wakeup is balanced. A sync and balanced wakeup is affine at once,
//! without counting `ttwu_move_affine`. Otherwise it is affine, counting
//! `ttwu_move_affine`, when balanced, or when this CPU is no busier than the previous
//! one and `this_load + target_load(prev)` fits in one task's share of this CPU
//! (`cpu_avg_load_per_task(this)`), a sum the kernel makes in unsigned 64 bits.
//!
//! # Against 4.5 and 6.12
//!
//! 4.5 has no sync shortcut and no `tl_per_task` clause, compares `capacity_of` instead
//! of `power_of`, multiplies the capacities in even when `this_load <= 0`, and reads the
//! runnable load average and the tasks' `se.avg.load_avg` where 3.9 reads the queued
//! weights (`rq->load.weight`, `se.load.weight`). 6.12 differs as listed in
//! [`super::v4_5_wake_affine`].
//!
//! # Values on fairsim's runqueues
//!
//! - **`weighted_cpuload`** is `rq->load.weight`, the 10-bit weights of the tasks queued
//!   on the CPU, the running one included and 6.12's delayed-dequeue entities left out
//!   (they are sleeping tasks 3.9 had dequeued), as the 3.9 balancer port reads it. With
//!   LB_RUNNABLE_AVG (Alex Shi's series as merged for 3.11) it is the runnable load
//!   average, [`Sched::weighted_cpuload_v4_15`], and `cpu_avg_load_per_task` divides that
//!   average (3.11's); 3.11's `wake_affine` still weighs the tasks by `se.load.weight`.
//! - **`power_of`** is `rq->cpu_power` as the 3.9 balancer keeps it (TC2: 1441 on an
//!   A15, 606 on an A7; 589 for each of two SMT threads).
//! - **`imbalance_pct` and `wake_idx`** are the 3.9 initializers' ([`SdParamsV3_9`]:
//!   110 for SMT, 125 for MC, CPU and NUMA levels). With `wake_idx` 0 the `cpu_load[]`
//!   history is not read; the LB_BIAS reads of it are ported for a non-zero index.
//! - These loads are read without counting CPU visits for the cost model, as 6.12's
//!   `wake_affine` reads its loads: a few remote runqueue fields, not a scan.
//!
//! [`SdParamsV3_9`]: crate::lb::v3_9::SdParamsV3_9

use fairsim_topology::SdId;

use crate::features::Feature;
use crate::sched::Sched;
use crate::task::TaskId;
use crate::weight::scale_load_down;

impl Sched {
    /// `weighted_cpuload(cpu)` of Linux 3.9 as `wake_affine` reads it: `rq->load.weight`
    /// (with LB_RUNNABLE_AVG, 3.11's `cfs.runnable_load_avg`), the value the 3.9
    /// balancer's own reader gives, without a CPU visit for the cost model.
    fn wa_cpuload_v3_9(&self, cpu: usize) -> u64 {
        if self.fair.features.has(Feature::LB_RUNNABLE_AVG) {
            return self.weighted_cpuload_v4_15(cpu);
        }
        self.rqs[cpu]
            .cfs_tasks
            .iter()
            .map(|&t| &self.tasks[t].se)
            .filter(|se| se.on_rq && !se.sched_delayed)
            .map(|se| scale_load_down(se.load.weight))
            .sum()
    }

    /// `source_load(cpu, type)` of Linux 3.9 for `wake_affine`: the load now, or the
    /// smaller of it and `cpu_load[type - 1]` (LB_BIAS).
    fn wa_source_load_v3_9(&self, cpu: usize, idx: usize) -> u64 {
        let total = self.wa_cpuload_v3_9(cpu);
        if idx == 0 || !self.fair.features.has(Feature::LB_BIAS) {
            return total;
        }
        self.legacy().cpu_load[cpu][idx - 1].min(total)
    }

    /// `target_load(cpu, type)` of Linux 3.9 for `wake_affine`: the load now, or the
    /// larger of it and `cpu_load[type - 1]` (LB_BIAS).
    fn wa_target_load_v3_9(&self, cpu: usize, idx: usize) -> u64 {
        let total = self.wa_cpuload_v3_9(cpu);
        if idx == 0 || !self.fair.features.has(Feature::LB_BIAS) {
            return total;
        }
        self.legacy().cpu_load[cpu][idx - 1].max(total)
    }

    /// `cpu_avg_load_per_task(cpu)` of Linux 3.9 for `wake_affine`: the CPU's load over
    /// its running tasks, 0 when it has none.
    fn wa_avg_load_per_task_v3_9(&self, cpu: usize) -> u64 {
        let nr = self.nr_running_v3_9(cpu);
        if nr == 0 {
            return 0;
        }
        self.wa_cpuload_v3_9(cpu) / nr
    }

    /// `wake_affine(sd, p, sync)` of Linux 3.9 (kernel/sched/fair.c) for a wakeup of `p`
    /// (last on `prev_cpu`, `task_cpu(p)`) run on `this_cpu`, `sync` for `WF_SYNC`:
    /// whether the waking CPU should take the task. Counts `ttwu_move_affine` on `sd` unless the
    /// sync shortcut answers.
    pub fn wake_affine_v3_9(
        &mut self,
        sd: SdId,
        p: TaskId,
        this_cpu: usize,
        prev_cpu: usize,
        sync: bool,
    ) -> bool {
        let params = self.legacy().sd[sd];
        let idx = params.wake_idx;
        let load = self.wa_source_load_v3_9(prev_cpu, idx) as i64;
        let mut this_load = self.wa_target_load_v3_9(this_cpu, idx) as i64;

        if sync {
            // Subtract the (maximum possible) effect of the waker, which is about to
            // sleep: effective_load of the root group is `wl`, so this CPU loses the
            // waker's weight and the previous CPU's load is unchanged.
            let weight = self
                .current_of(this_cpu)
                .map_or(0, |c| scale_load_down(self.tasks[c].se.load.weight))
                as i64;
            this_load -= weight;
        }

        let weight = scale_load_down(self.tasks[p].se.load.weight) as i64;

        // When this CPU is idle, or emptied by the sync above, there is always an
        // imbalance and nothing to do about it: that counts as balanced.
        let balanced = if this_load > 0 {
            let pct = params.imbalance_pct as i64;
            let this_eff_load = 100 * self.power_of_v3_9(prev_cpu) as i64 * (this_load + weight);
            let prev_eff_load =
                (100 + (pct - 100) / 2) * self.power_of_v3_9(this_cpu) as i64 * load;
            this_eff_load <= prev_eff_load
        } else {
            true
        };

        // A waker that will sleep soon attracts the wakee.
        if sync && balanced {
            return true;
        }

        let tl_per_task = self.wa_avg_load_per_task_v3_9(this_cpu);
        // `this_load + target_load(prev)` mixes s64 and unsigned long: the kernel adds and
        // compares them as unsigned 64-bit numbers.
        let prev_target = self.wa_target_load_v3_9(prev_cpu, idx);
        if balanced
            || (this_load <= load && (this_load as u64).wrapping_add(prev_target) <= tl_per_task)
        {
            // The domain has SD_WAKE_AFFINE, the task is cache cold in it, and there is
            // no bad imbalance.
            self.sd_stats[sd].ttwu_move_affine += 1;
            return true;
        }
        false
    }
}
