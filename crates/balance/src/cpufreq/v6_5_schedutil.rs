//! Linux 6.5.0's utilization readers for frequency and energy, and the schedutil steps
//! that differ from 6.12.117's, read in `github:sndrzt/linux-6.5` @ f5744aac:
//! `kernel/sched/core.c` (`effective_cpu_util(cpu, util_cfs, type, p)` 7407),
//! `kernel/sched/sched.h` (`uclamp_rq_util_with` 3034, `uclamp_rq_is_capped` 3066) and
//! `kernel/sched/cpufreq_schedutil.c` (`sugov_update_next_freq` 95, `get_next_freq` 139,
//! `sugov_get_util` 156, `sugov_iowait_apply` 254, `sugov_update_single_freq` 338,
//! `sugov_next_freq_shared` 415, `sugov_update_shared` 436).
//!
//! What differs from 6.12.117 ([`super::schedutil`]):
//!
//! - `effective_cpu_util` takes a type (`ENERGY_UTIL` or `FREQUENCY_UTIL`) and a task.
//!   For frequency it clamps the CFS utilization with the runqueue's (and the task's)
//!   clamps through `uclamp_rq_util_with` before anything else; 6.12 returns the clamps
//!   as `min`/`max` and `sugov_effective_cpu_perf` applies them after the headroom.
//! - The 25% headroom (`map_util_perf`) is applied by `get_next_freq`, after the iowait
//!   boost, and is not capped at the CPU's capacity; in 6.12 `sugov_effective_cpu_perf`
//!   applies it before the clamps, so a `uclamp_min` asks for exactly its value in 6.12
//!   and for 1.25 times it in 6.5, and a `uclamp_max` caps the frequency request at its
//!   value in 6.12 but at 1.25 times it in 6.5.
//! - The iowait boost is clamped by the runqueue's clamps (`uclamp_rq_util_with(rq,
//!   boost, NULL)`) before it raises the utilization.
//! - A one-CPU policy keeps a busy CPU's frequency only when the runqueue is not capped
//!   by `uclamp_max` (`uclamp_rq_is_capped`), and regardless of `need_freq_update`.
//! - `sugov_update_next_freq`: after a limits change, the frequency is sent again even
//!   when unchanged (cpufreq-dt does not set `CPUFREQ_NEED_UPDATE_LIMITS`, so
//!   `need_freq_update` just clears).
//!
//! The rate limit, the iowait boost's doubling and decay, `sugov_cpu_is_busy` (6.12's
//! `sugov_hold_freq`), the deferred update and `sugov_work` are 6.12's code. fairsim has
//! no RT, deadline or IRQ utilization (0), so `ignore_dl_rate_limit` never fires.

use super::sugov_state::map_util_perf;
use super::Cpufreq;
use crate::sched::Sched;
use crate::task::TaskId;
use crate::uclamp::ClampId;

/// `enum cpu_util_type` (Linux 6.5 `kernel/sched/sched.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuUtilType {
    /// `FREQUENCY_UTIL`: what schedutil and the energy model's frequency choice read.
    Frequency,
    /// `ENERGY_UTIL`: the running time the energy estimate sums.
    Energy,
}

impl Sched {
    /// `uclamp_rq_util_with(rq, util, p)` of Linux 6.5 (`sched.h`): `util` clamped by the
    /// max-aggregated clamps of `cpu`'s runqueue and of `p` (only `p`'s on an idle
    /// runqueue, whose last task's clamps `p` will replace); an inversion answers the
    /// minimum. Unchanged until clamps are in use.
    pub fn uclamp_rq_util_with_v6_5(&self, cpu: usize, util: u64, p: Option<TaskId>) -> u64 {
        if !self.uclamp_is_used() {
            return util;
        }
        let mut min_util = 0;
        let mut max_util = 0;
        let mut rq_too = true;
        if let Some(p) = p {
            min_util = self.uclamp_eff_value(p, ClampId::Min);
            max_util = self.uclamp_eff_value(p, ClampId::Max);
            rq_too = !self.uclamp_rq_is_idle(cpu);
        }
        if rq_too {
            min_util = min_util.max(self.uclamp_rq_get(cpu, ClampId::Min));
            max_util = max_util.max(self.uclamp_rq_get(cpu, ClampId::Max));
        }
        if min_util >= max_util {
            return min_util;
        }
        util.max(min_util).min(max_util)
    }

    /// `uclamp_rq_is_capped(rq)` of Linux 6.5: clamps are in use and the runqueue's CFS
    /// utilization reaches a `uclamp_max` below the scale.
    pub fn uclamp_rq_is_capped_v6_5(&self, cpu: usize) -> bool {
        if !self.uclamp_is_used() {
            return false;
        }
        let rq_util = self.cpu_util(cpu, None, None, false);
        let max_util = self.uclamp_rq_get(cpu, ClampId::Max);
        max_util != fairsim_pelt::SCHED_CAPACITY_SCALE && rq_util >= max_util
    }

    /// `effective_cpu_util(cpu, util_cfs, type, p)` of Linux 6.5 (core.c) without RT,
    /// deadline or IRQ utilization (all 0 in fairsim, so the IRQ scaling leaves the value
    /// as it is): for `Frequency`, `util_cfs` clamped by `uclamp_rq_util_with(rq, util,
    /// p)`; the CPU's capacity once the sum reaches it.
    pub fn effective_cpu_util_v6_5(
        &self,
        cpu: usize,
        util_cfs: u64,
        ty: CpuUtilType,
        p: Option<TaskId>,
    ) -> u64 {
        let max = self.arch_scale_cpu_capacity(cpu);
        // No runnable RT task: the early return for frequency without clamps never runs.
        let irq = 0u64;
        if irq >= max {
            return max;
        }
        let mut util = util_cfs;
        if ty == CpuUtilType::Frequency {
            util = self.uclamp_rq_util_with_v6_5(cpu, util, p);
        }
        let dl_util = 0u64;
        if util + dl_util >= max {
            return max;
        }
        if ty == CpuUtilType::Energy {
            util += dl_util;
        }
        // scale_irq_capacity(util, irq, max) + irq, with irq 0.
        util = util * (max - irq) / max + irq;
        // FREQUENCY_UTIL adds cpu_bw_dl(rq), 0 here.
        max.min(util)
    }
}

impl Cpufreq {
    /// `sugov_get_util(sg_cpu)` of Linux 6.5: `effective_cpu_util(FREQUENCY_UTIL)` of the
    /// boosted CFS utilization, without headroom (`get_next_freq` adds it).
    fn sugov_get_util_v6_5(&mut self, s: &Sched, cpu: usize) {
        let util = s.cpu_util_cfs_boost(cpu);
        let sg_cpu = &mut self.sg_cpu[cpu];
        // sg_cpu->bw_dl = cpu_bw_dl(rq): no deadline tasks.
        sg_cpu.bw_min = 0;
        sg_cpu.util = s.effective_cpu_util_v6_5(cpu, util, super::CpuUtilType::Frequency, None);
    }

    /// `sugov_iowait_apply(sg_cpu, time, max_cap)` of Linux 6.5: the boost (6.12's decay
    /// steps), clamped by the runqueue's clamps, raises `sg_cpu->util`. A boost of 0
    /// means none applies: a live boost is at least `IOWAIT_BOOST_MIN * max_cap / 1024`,
    /// above 0 for every capacity from 8.
    fn sugov_iowait_apply_v6_5(&mut self, s: &Sched, cpu: usize, time: u64, max_cap: u64) {
        let boost = self.sg_cpu[cpu].iowait_apply(time, max_cap, s.tick_nsec);
        if boost == 0 {
            return;
        }
        let boost = s.uclamp_rq_util_with_v6_5(cpu, boost, None);
        let sg_cpu = &mut self.sg_cpu[cpu];
        if sg_cpu.util < boost {
            sg_cpu.util = boost;
        }
    }

    /// `get_next_freq(sg_policy, util, max)` of Linux 6.5: the headroom first
    /// (`map_util_perf`), then 6.12's mapping, cache and resolution.
    fn get_next_freq_v6_5(&mut self, policy: usize, util: u64, max: u64) -> u32 {
        self.get_next_freq(policy, map_util_perf(util), max)
    }

    /// `sugov_update_next_freq(sg_policy, time, next_freq)` of Linux 6.5: after a limits
    /// change the request goes out even if unchanged.
    fn sugov_update_next_freq_v6_5(&mut self, policy: usize, time: u64, next_freq: u32) -> bool {
        let sg = self.policies[policy].sugov_mut();
        if sg.need_freq_update {
            // cpufreq_driver_test_flags(CPUFREQ_NEED_UPDATE_LIMITS): not cpufreq-dt's.
            sg.need_freq_update = false;
        } else if sg.next_freq == next_freq {
            return false;
        }
        sg.next_freq = next_freq;
        sg.last_freq_update_time = time;
        true
    }

    /// `sugov_update_single_freq(hook, time, flags)` of Linux 6.5, the hook of a one-CPU
    /// policy.
    pub(super) fn sugov_update_single_freq_v6_5(
        &mut self,
        s: &Sched,
        cpu: usize,
        time: u64,
        flags: u32,
    ) {
        let policy = self.policy_of[cpu];
        let cached_freq = self.policies[policy].sugov_mut().cached_raw_freq;
        let max_cap = s.arch_scale_cpu_capacity(cpu);
        // sugov_update_single_common.
        self.sg_cpu[cpu].iowait_boost(time, flags, s.tick_nsec);
        self.sg_cpu[cpu].last_update = time;
        if !self.sugov_should_update_freq(policy, time) {
            return;
        }
        self.sugov_get_util_v6_5(s, cpu);
        self.sugov_iowait_apply_v6_5(s, cpu, time, max_cap);

        let mut next_f = self.get_next_freq_v6_5(policy, self.sg_cpu[cpu].util, max_cap);
        let prev_next = self.policies[policy].sugov_mut().next_freq;
        // A busy CPU keeps its frequency unless uclamp_max caps it; the idle-calls check
        // (and its bookkeeping) runs only for an uncapped runqueue.
        if !s.uclamp_rq_is_capped_v6_5(cpu) && self.sugov_hold_freq(cpu) && next_f < prev_next {
            next_f = prev_next;
            self.policies[policy].sugov_mut().cached_raw_freq = cached_freq;
        }
        if !self.sugov_update_next_freq_v6_5(policy, time, next_f) {
            return;
        }
        self.sugov_deferred_update(policy, time);
    }

    /// `sugov_next_freq_shared(sg_cpu, time)` of Linux 6.5: the highest of the policy's
    /// CPUs' requests (each with its iowait boost), against the updating CPU's capacity.
    fn sugov_next_freq_shared_v6_5(&mut self, s: &Sched, cpu: usize, time: u64) -> u32 {
        let policy = self.policy_of[cpu];
        let max_cap = s.arch_scale_cpu_capacity(cpu);
        let mut util = 0;
        let cpus: Vec<usize> = self.policies[policy].cpus.iter().collect();
        for j in cpus {
            self.sugov_get_util_v6_5(s, j);
            self.sugov_iowait_apply_v6_5(s, j, time, max_cap);
            util = util.max(self.sg_cpu[j].util);
        }
        self.get_next_freq_v6_5(policy, util, max_cap)
    }

    /// `sugov_update_shared(hook, time, flags)` of Linux 6.5, the hook of a policy of
    /// several CPUs.
    pub(super) fn sugov_update_shared_v6_5(
        &mut self,
        s: &Sched,
        cpu: usize,
        time: u64,
        flags: u32,
    ) {
        self.sg_cpu[cpu].iowait_boost(time, flags, s.tick_nsec);
        self.sg_cpu[cpu].last_update = time;
        let policy = self.policy_of[cpu];
        if self.sugov_should_update_freq(policy, time) {
            let next_f = self.sugov_next_freq_shared_v6_5(s, cpu, time);
            if !self.sugov_update_next_freq_v6_5(policy, time, next_f) {
                return;
            }
            self.sugov_deferred_update(policy, time);
        }
    }
}
