//! Linux 4.15 and 4.16's waker/wakee affinity: `wake_cap`, `wake_affine` with its
//! `wake_affine_idle` and `wake_affine_weight` halves (kernel/sched/fair.c), beside
//! 6.12's [`super::wake_affine`]. `record_wakee` and `wake_wide` are 6.12's functions:
//! their bodies are the same in 4.15, 4.16 and 6.12 (see [`super::v4_15_select`]).
//!
//! # Sources
//!
//! - **Linux 4.15.0**: `github:sndrzt/linux-4.15` @ `6ea06264`, `kernel/sched/fair.c`
//!   lines 5607-5766 (`target_load`, `capacity_of`, `record_wakee`, `wake_wide`,
//!   `wake_affine_idle`, `wake_affine_weight`, `wake_affine`) and 6280-6303 (`wake_cap`,
//!   with `capacity_margin = 1280` at line 134); `kernel/sched/topology.c` `sd_init`
//!   (1072-1190: `wake_idx` is 0 at every level) and `build_sched_domains` (1695:
//!   `rd->max_cpu_capacity`).
//! - **Linux 4.16.13**: `github:lizuobin/linux-4.16.13_tiny4412` @ `92bab218`,
//!   `kernel/sched/fair.c` lines 5683-5772.
//!
//! # 4.15 against 4.16
//!
//! - `wake_affine_idle`: 4.15 takes five arguments `(sd, p, this_cpu, prev_cpu, sync)`,
//!   reads only `this_cpu` and `sync`, and says yes when the waking CPU is idle, whatever
//!   the cache. 4.16 takes `(this_cpu, prev_cpu, sync)` and returns a CPU: an idle
//!   waking CPU counts only when it shares the cache with the previous CPU, and then an
//!   idle previous CPU is kept (`prev_cpu`) rather than pulling to the waker's; else
//!   `nr_cpumask_bits` (no decision). The sync test (`nr_running == 1`) is the same.
//! - `wake_affine_weight`: the same arithmetic; 4.15 returns a bool, 4.16 `this_cpu` or
//!   `nr_cpumask_bits`.
//! - `wake_affine(sd, p, prev_cpu, sync)` keeps four arguments in both (this CPU is
//!   `smp_processor_id()` inside). 4.15 returns a bool and the caller takes `cpu` on yes;
//!   4.16 returns the CPU, `prev_cpu` when neither half decided. 4.16 counts
//!   `ttwu_move_affine` whenever a half decided, so also when `wake_affine_idle` kept an
//!   idle previous CPU; 4.15 counts it when the wakee moves to the waker's CPU.
//!
//! # 4.15/4.16 against 6.12
//!
//! - **Loads.** `wake_affine_weight` reads `target_load(this_cpu, sd->wake_idx)` and
//!   `source_load(prev_cpu, sd->wake_idx)`. 4.15's `sd_init` sets `wake_idx` to 0 at
//!   every level, and at index 0 both are `weighted_cpuload()`, the root cfs_rq's
//!   `runnable_load_avg`, rebuilt from 6.12's runqueues by
//!   [`Sched::weighted_cpuload_v4_15`]. 6.12 reads `cpu_load()`, blocked load included.
//!   Both subtract `task_h_load(p)` from the previous CPU's load; 6.12's `cpu_load()`
//!   still holds the sleeping task's blocked load, 4.15's runnable load does not, so in
//!   4.15 `prev_eff_load` can go below 0, and then WA_WEIGHT never pulls (the waking
//!   side is never negative).
//! - **Threshold.** 4.15/4.16 are affine on `this_eff_load <= prev_eff_load`; 6.12 on
//!   `<`, with `prev_eff_load + 1` under sync.
//! - **`imbalance_pct`.** WA_BIAS's margin is `100 + (imbalance_pct - 100) / 2` with
//!   4.15's `imbalance_pct` (110 SMT, 117 LLC, 125 above: [`imbalance_pct_v4_15`]); 6.12
//!   gives 117 above the LLC.
//! - **`wake_affine_idle`.** 6.12 also keeps an idle previous CPU when the waking CPU is
//!   busy (the last test of 6.12's), and subtracts delayed-dequeue entities from
//!   `nr_running`; 4.16 has neither, 4.15 neither nor the cache test.
//! - **`wake_cap`.** 4.15 and 4.16 drop `want_affine` when the task does not fit the
//!   smaller of the waking and previous CPUs' original capacities by the 1280/1024
//!   margin, unless every capacity of the root domain is within 1/8 of the largest.
//!   6.12 has no `wake_cap` (its asymmetric path is `select_idle_capacity`).
//! - **Idleness.** 4.15/4.16 test `idle_cpu()`; 6.12 `available_idle_cpu()`. fairsim
//!   has no preempted vCPUs, so both are [`crate::rq::Rq::idle_cpu`].

use fairsim_topology::SdId;

use crate::features::Feature;
use crate::kernel::Kernel;
use crate::lb::view::LbRead;
use crate::sched::Sched;
use crate::select::v4_15_find_idlest::imbalance_pct_v4_15;
use crate::task::TaskId;

/// `capacity_margin` of Linux 4.15 and 4.16 (kernel/sched/fair.c): a task fits a CPU when
/// its utilization times 1280 is below the capacity times 1024 (about 80%).
pub const CAPACITY_MARGIN_V4_15: u64 = 1280;

impl Sched {
    /// `wake_cap(p, cpu, prev_cpu)` of Linux 4.15 and 4.16 (kernel/sched/fair.c): true
    /// when the task does not fit the smaller original capacity of the waking and
    /// previous CPUs, so that `wake_affine` is not tried. Returns false at once when that
    /// smaller capacity is within 1/8 of the root domain's largest (`max_cpu_capacity`);
    /// otherwise syncs the task's utilization to its previous CPU first.
    ///
    /// Without the `sched_asym_cpucapacity` key fairsim's topology found a single original
    /// capacity in every root domain, so `cpu`'s own capacity is its root domain's largest
    /// and the walk over the root domain is not needed.
    pub fn wake_cap_v4_15(&mut self, p: TaskId, cpu: usize, prev_cpu: usize) -> bool {
        let min_cap = self
            .arch_scale_cpu_capacity(prev_cpu)
            .min(self.arch_scale_cpu_capacity(cpu)) as i64;
        let max_cap = if self.sched_asym_cpucap_active() {
            self.topo.rd_max_cpu_capacity(self.topo.root_domain_of(cpu)) as i64
        } else {
            self.arch_scale_cpu_capacity(cpu) as i64
        };
        // The smallest capacity is close to the largest: no need to abort wake_affine.
        if max_cap - min_cap < max_cap >> 3 {
            return false;
        }
        // The task's utilization is compared with a capacity, so bring it up to date.
        self.sync_entity_load_avg(p);
        (min_cap as u64) * 1024 < self.task_util(p) * CAPACITY_MARGIN_V4_15
    }

    /// `wake_affine_idle(sd, p, this_cpu, prev_cpu, sync)` of Linux 4.15 (kernel/sched/
    /// fair.c): affine when the waking CPU is idle (4.15's `idle_cpu`: a wakeup from an
    /// interrupt), or on a sync wakeup when the waker is the only task on its CPU. The
    /// previous CPU and the domain are not read.
    pub fn wake_affine_idle_v4_15(&self, this_cpu: usize, sync: bool) -> bool {
        if self.rqs[this_cpu].idle_cpu() {
            return true;
        }
        sync && self.rqs[this_cpu].nr_running == 1
    }

    /// `wake_affine_idle(this_cpu, prev_cpu, sync)` of Linux 4.16 (kernel/sched/fair.c):
    /// an idle waking CPU that shares the cache with the previous CPU gives the previous
    /// CPU if that is idle too (no migration), else the waking CPU; a sync wakeup from a
    /// waker alone on its CPU gives the waking CPU; otherwise `None` (the kernel's
    /// `nr_cpumask_bits`, no decision). An idle waking CPU in another LLC decides nothing,
    /// so that interrupts do not pull every task to their node.
    pub fn wake_affine_idle_v4_16(
        &self,
        this_cpu: usize,
        prev_cpu: usize,
        sync: bool,
    ) -> Option<usize> {
        if self.rqs[this_cpu].idle_cpu() && self.cpus_share_cache(this_cpu, prev_cpu) {
            return Some(if self.rqs[prev_cpu].idle_cpu() {
                prev_cpu
            } else {
                this_cpu
            });
        }
        if sync && self.rqs[this_cpu].nr_running == 1 {
            return Some(this_cpu);
        }
        None
    }

    /// `wake_affine_weight(sd, p, this_cpu, prev_cpu, sync)` of Linux 4.15 (the same
    /// arithmetic in 4.16, which returns `this_cpu` for true; kernel/sched/fair.c).
    ///
    /// The loads are `target_load(this_cpu, 0)` and `source_load(prev_cpu, 0)`, both
    /// [`Sched::weighted_cpuload_v4_15`] (4.15's `wake_idx` is 0 everywhere). With
    /// `sync`, a waker whose `task_h_load` exceeds its CPU's load makes the wakeup affine
    /// at once; otherwise the waker's load is taken out. Then
    /// `this = (load(this) + task_h_load(p)) [* 100] * capacity_of(prev)` against
    /// `prev = (load(prev) - task_h_load(p)) [* (100 + (imbalance_pct - 100) / 2)] *
    /// capacity_of(this)`, the bracketed factors under WA_BIAS, in signed 64-bit as the
    /// kernel's `s64`; affine when `this <= prev`.
    pub fn wake_affine_weight_v4_15(
        &self,
        sd: SdId,
        p: TaskId,
        this_cpu: usize,
        prev_cpu: usize,
        sync: bool,
    ) -> bool {
        let bias = self.fair.features.has(Feature::WA_BIAS);
        let mut this_eff_load = self.weighted_cpuload_v4_15(this_cpu) as i64;
        let mut prev_eff_load = self.weighted_cpuload_v4_15(prev_cpu) as i64;

        if sync {
            // The waker is about to sleep: its load will leave this CPU.
            let current_load = self.current_of(this_cpu).map_or(0, |c| self.task_h_load(c));
            // The kernel compares an unsigned long with the s64: unsigned comparison.
            if current_load > this_eff_load as u64 {
                return true;
            }
            this_eff_load -= current_load as i64;
        }

        let task_load = self.task_h_load(p) as i64;
        this_eff_load += task_load;
        if bias {
            this_eff_load *= 100;
        }
        this_eff_load *= self.capacity_of(prev_cpu) as i64;

        prev_eff_load -= task_load;
        if bias {
            let pct = i64::from(imbalance_pct_v4_15(self.topo.domain(sd).flags));
            prev_eff_load *= 100 + (pct - 100) / 2;
        }
        prev_eff_load *= self.capacity_of(this_cpu) as i64;

        this_eff_load <= prev_eff_load
    }

    /// `wake_affine(sd, p, prev_cpu, sync)` of Linux 4.15 and 4.16 (kernel/sched/fair.c)
    /// run on `this_cpu`, returning the CPU the caller takes as `new_cpu`.
    ///
    /// 4.15: WA_IDLE's then WA_WEIGHT's yes/no; on yes `this_cpu` and one
    /// `ttwu_move_affine` on `sd`, else `prev_cpu`. 4.16: WA_IDLE's CPU, else WA_WEIGHT's;
    /// no decision gives `prev_cpu`, a decision is returned and counted in
    /// `ttwu_move_affine` even when it is the idle previous CPU.
    pub fn wake_affine_v4_15(
        &mut self,
        sd: SdId,
        p: TaskId,
        this_cpu: usize,
        prev_cpu: usize,
        sync: bool,
    ) -> usize {
        let idle = self.fair.features.has(Feature::WA_IDLE);
        let weight = self.fair.features.has(Feature::WA_WEIGHT);
        if self.fair.features.kernel() == Kernel::V4_16 {
            let mut target = None;
            if idle {
                target = self.wake_affine_idle_v4_16(this_cpu, prev_cpu, sync);
            }
            if weight && target.is_none() {
                target = self
                    .wake_affine_weight_v4_15(sd, p, this_cpu, prev_cpu, sync)
                    .then_some(this_cpu);
            }
            let Some(target) = target else {
                return prev_cpu;
            };
            self.sd_stats[sd].ttwu_move_affine += 1;
            return target;
        }

        let mut affine = false;
        if idle {
            affine = self.wake_affine_idle_v4_15(this_cpu, sync);
        }
        if weight && !affine {
            affine = self.wake_affine_weight_v4_15(sd, p, this_cpu, prev_cpu, sync);
        }
        if !affine {
            return prev_cpu;
        }
        self.sd_stats[sd].ttwu_move_affine += 1;
        this_cpu
    }
}
