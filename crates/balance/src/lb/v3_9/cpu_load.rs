//! `rq->cpu_load[]` of Linux 3.9 (kernel/sched/core.c): a per-runqueue history of the CPU
//! load at five decay rates, updated every tick and caught up after tickless idle, and the
//! biased reads of it that the balancer makes (`source_load`, `target_load`).
//!
//! 4.5 (kernel/sched/fair.c) and 4.15/4.16 (fair.c) keep the same history with the same
//! tables, reads and callers; what differs is the load fed in (`weighted_cpuload` is
//! PELT's `cfs_rq->runnable_load_avg` from 3.11 on) and, in 4.15, the update itself
//! (`cpu_load_update` subtracts the decayed load the tick stopped with, in
//! [`crate::lb::v4_15::cpu_load`]). 4.5's `__update_cpu_load` has the `active` argument
//! for NO_HZ_FULL only: with `active` 1 (the tick) and one pending update it is 3.9's
//! update, and with `active` 0 (the nohz paths) it is 3.9's too, so 4.5 runs this file's.

use crate::features::Feature;
use crate::lb::era::Balancer;
use crate::lb::v3_9::CPU_LOAD_IDX_MAX;
use crate::sched::Sched;
use crate::weight::scale_load_down;

/// `DEGRADE_SHIFT`: the degrade factors are on a 128-point scale.
const DEGRADE_SHIFT: u32 = 7;

/// `degrade_zero_ticks[idx]`: after this many missed ticks the load at `idx` is taken as 0.
const DEGRADE_ZERO_TICKS: [u64; CPU_LOAD_IDX_MAX] = [0, 8, 32, 64, 128];

/// `degrade_factor[idx][j]`: the decay of load index `idx` over `2^j` missed ticks, in
/// 128ths. 3.9's row 2 has seven initialisers for eight columns; the eighth is 0.
const DEGRADE_FACTOR: [[u64; DEGRADE_SHIFT as usize + 1]; CPU_LOAD_IDX_MAX] = [
    [0, 0, 0, 0, 0, 0, 0, 0],
    [64, 32, 8, 0, 0, 0, 0, 0],
    [96, 72, 40, 12, 1, 0, 0, 0],
    [112, 98, 75, 43, 15, 1, 0, 0],
    [120, 112, 98, 76, 45, 16, 2, 0],
];

/// `decay_load_missed(load, missed_updates, idx)`: `load` decayed as if `missed_updates`
/// ticks had each added a load of 0, using the power-of-two factor table.
pub fn decay_load_missed(mut load: u64, mut missed_updates: u64, idx: usize) -> u64 {
    if missed_updates == 0 {
        return load;
    }
    if missed_updates >= DEGRADE_ZERO_TICKS[idx] {
        return 0;
    }
    if idx == 1 {
        return load >> missed_updates;
    }
    let mut j = 0;
    while missed_updates != 0 {
        if missed_updates % 2 == 1 {
            load = (load * DEGRADE_FACTOR[idx][j]) >> DEGRADE_SHIFT;
        }
        missed_updates >>= 1;
        j += 1;
    }
    load
}

/// `__update_cpu_load(this_rq, this_load, pending_updates)` on one `cpu_load[]` array:
/// index 0 takes the new load, index `i` moves `1/2^i` of the way to it after decaying
/// over the missed updates, rounding up while the load grows.
pub fn update_cpu_load_array(
    cpu_load: &mut [u64; CPU_LOAD_IDX_MAX],
    this_load: u64,
    pending_updates: u64,
) {
    cpu_load[0] = this_load;
    let mut scale = 2u64;
    for (i, slot) in cpu_load.iter_mut().enumerate().skip(1) {
        let old_load = decay_load_missed(*slot, pending_updates.saturating_sub(1), i);
        let mut new_load = this_load;
        // Round up the averaging division if load is increasing, so that a load of 10
        // does not stay at 9 forever.
        if new_load > old_load {
            new_load += scale - 1;
        }
        *slot = (old_load * (scale - 1) + new_load) >> i;
        scale += scale;
    }
}

impl Sched {
    /// `weighted_cpuload(cpu)` of Linux 3.9: `rq->load.weight`, the 10-bit weights of the
    /// tasks queued on `cpu` (6.12's delayed entities left out); with LB_RUNNABLE_AVG,
    /// 3.11's `cfs.runnable_load_avg`. Under 4.5's and 4.15's balancers it is theirs,
    /// `cfs_rq_runnable_load_avg(&rq->cfs)` (4.15's `weighted_cpuload(rq)`).
    pub fn weighted_cpuload_v3_9(&self, cpu: usize) -> u64 {
        self.count_cpu_visit();
        self.rq_load_v3_9(cpu)
    }

    /// [`Sched::weighted_cpuload_v3_9`] read by the CPU itself (the tick's and the nohz
    /// paths' `cpu_load[]` updates): its own runqueue, not a remote read the scan cost
    /// model counts.
    pub(crate) fn rq_load_v3_9(&self, cpu: usize) -> u64 {
        let pelt = match self.balancer() {
            Balancer::V4_5 | Balancer::V4_15 => true,
            Balancer::V3_9 | Balancer::V6_12 | Balancer::V6_5 => {
                self.fair.features.has(Feature::LB_RUNNABLE_AVG)
            }
        };
        if pelt {
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

    /// `source_load(cpu, type)`: a low guess of a migration source's load, the smaller of
    /// the load now and its history at index `type - 1` (LB_BIAS).
    pub fn source_load_v3_9(&self, cpu: usize, idx: usize) -> u64 {
        let total = self.weighted_cpuload_v3_9(cpu);
        if idx == 0 || !self.fair.features.has(Feature::LB_BIAS) {
            return total;
        }
        self.legacy().cpu_load[cpu][idx - 1].min(total)
    }

    /// `target_load(cpu, type)`: a high guess of a migration target's load.
    pub fn target_load_v3_9(&self, cpu: usize, idx: usize) -> u64 {
        let total = self.weighted_cpuload_v3_9(cpu);
        if idx == 0 || !self.fair.features.has(Feature::LB_BIAS) {
            return total;
        }
        self.legacy().cpu_load[cpu][idx - 1].max(total)
    }

    /// `cpu_avg_load_per_task(cpu)`: the CPU's load divided by its tasks (with
    /// LB_RUNNABLE_AVG, the runnable average divided by them, as 3.11 does).
    pub fn cpu_avg_load_per_task_v3_9(&self, cpu: usize) -> u64 {
        let nr = self.nr_running_v3_9(cpu);
        if nr == 0 {
            return 0;
        }
        self.weighted_cpuload_v3_9(cpu) / nr
    }

    /// `update_cpu_load_active(this_rq)` from the tick: one update with the load now (4.15's
    /// `cpu_load_update_active` takes its periodic branch, as a tick that fires has not
    /// been stopped).
    pub fn update_cpu_load_active_v3_9(&mut self, cpu: usize) {
        let jiffies = self.jiffies_now();
        self.legacy_mut().last_load_update_tick[cpu] = jiffies;
        let load = self.rq_load_v3_9(cpu);
        self.update_cpu_load_v3_9(cpu, load, 1);
    }

    /// `update_idle_cpu_load(this_rq)` from the nohz idle balance: catch up the ticks an
    /// idle CPU missed, unless it has load or is up to date (4.15's `cpu_load_update_idle`
    /// is the same test and update).
    pub fn update_idle_cpu_load_v3_9(&mut self, cpu: usize) {
        let curr = self.jiffies_now();
        let load = self.rq_load_v3_9(cpu);
        let last = self.legacy().last_load_update_tick[cpu];
        if load != 0 || curr == last {
            return;
        }
        self.legacy_mut().last_load_update_tick[cpu] = curr;
        self.update_cpu_load_v3_9(cpu, load, curr - last);
    }

    /// `update_cpu_load_nohz()` from `tick_nohz_idle_exit` on `cpu` (4.5's
    /// `update_cpu_load_nohz(0)`): the ticks missed while idle count as load 0 (whatever
    /// remote wakeups queued meanwhile).
    pub fn update_cpu_load_nohz_v3_9(&mut self, cpu: usize) {
        let curr = self.jiffies_now();
        let last = self.legacy().last_load_update_tick[cpu];
        if curr == last {
            return;
        }
        self.legacy_mut().last_load_update_tick[cpu] = curr;
        self.update_cpu_load_v3_9(cpu, 0, curr - last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idx1_halves_per_missed_tick_and_the_table_decays_the_others() {
        assert_eq!(decay_load_missed(1024, 3, 1), 128);
        // idx 2 over 8 ticks: row 2, column 3 = 12/128 (3^8/4^8 = 0.100).
        assert_eq!(decay_load_missed(1280, 8, 2), 120);
        // 5 = 4 + 1: columns 2 and 0 of row 3.
        assert_eq!(
            decay_load_missed(1024, 5, 3),
            (((1024 * 112) >> 7) * 75) >> 7
        );
        assert_eq!(decay_load_missed(1024, 128, 4), 0);
        assert_eq!(decay_load_missed(1024, 0, 4), 1024);
    }

    #[test]
    fn a_steady_load_is_reached_with_rounding_up() {
        let mut a = [0u64; CPU_LOAD_IDX_MAX];
        for _ in 0..200 {
            update_cpu_load_array(&mut a, 1024, 1);
        }
        assert_eq!(a, [1024; CPU_LOAD_IDX_MAX]);
        // One update of a CPU that just went busy: index i gets (0 * (2^i - 1) + 1024 +
        // 2^i - 1) >> i.
        let mut b = [0u64; CPU_LOAD_IDX_MAX];
        update_cpu_load_array(&mut b, 1024, 1);
        assert_eq!(b, [1024, 512, 256, 128, 64]);
        // Falling: no rounding.
        update_cpu_load_array(&mut b, 0, 1);
        assert_eq!(b, [0, 256, 192, 112, 60]);
    }
}
