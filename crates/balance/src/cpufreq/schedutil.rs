//! The schedutil governor, ported from Linux 6.12's `kernel/sched/cpufreq_schedutil.c`
//! with the 6.12.y stable fixes that change its logic (`sugov_update_next_freq` as
//! "cpufreq/sched: Fix the usage of CPUFREQ_NEED_UPDATE_LIMITS" left it).
//!
//! What is modelled: `sugov_update_single_freq` for one-CPU policies (with the
//! `sugov_hold_freq` rule that keeps a busy CPU's frequency from dropping) and
//! `sugov_update_shared` / `sugov_next_freq_shared` for shared ones; the rate limit
//! (`sugov_should_update_freq`); `sugov_get_util` on `cpu_util_cfs_boost` through
//! `effective_cpu_util` and `sugov_effective_cpu_perf` (the 1.25 headroom of
//! `map_util_perf`); `get_next_freq` with `map_util_freq`, the `cached_raw_freq`
//! shortcut and `cpufreq_driver_resolve_freq`; iowait boosting; and the slow path of a
//! driver without fast switching (cpufreq-dt): `sugov_deferred_update` sets
//! `work_in_progress` and queues the irq_work, and `sugov_work` (run by the engine when
//! the governor's kthread gets to it) takes `next_freq` and clears the flag.
//!
//! What has no counterpart in fairsim and is constant here: no RT or deadline tasks
//! (`cpu_util_rt`, `cpu_util_dl`, `cpu_bw_dl` are 0, so `ignore_dl_rate_limit` never
//! fires), no IRQ time accounting (`cpu_util_irq` 0), no utilization clamps (min 0, max
//! the capacity), no sched_ext, and no policy limit changes after the governor started
//! (`limits_changed` is set once, by the `sugov_limits` call that follows
//! `sugov_start`). `cpufreq_this_cpu_can_update` holds for every CPU, as cpufreq-dt sets
//! `dvfs_possible_from_any_cpu`.

use super::sugov_state::{map_util_freq, sugov_effective_cpu_perf};
use super::table::Relation;
use super::Cpufreq;
use crate::sched::Sched;

impl Sched {
    /// `effective_cpu_util(cpu, util_cfs, &min, &max)` (fair.c) without IRQ time, RT or
    /// deadline utilization: `(util, min, max)` = (`util_cfs` capped at the capacity, the
    /// runqueue's minimum clamp, its maximum clamp capped at the capacity). Without clamps
    /// in use the runqueue's are their initial 0 and 1024.
    pub fn effective_cpu_util(&self, cpu: usize, util_cfs: u64) -> (u64, u64, u64) {
        use crate::uclamp::ClampId;
        let scale = self.arch_scale_cpu_capacity(cpu);
        let min = self.uclamp_rq_get(cpu, ClampId::Min);
        let max = scale.min(self.uclamp_rq_get(cpu, ClampId::Max));
        let util = util_cfs;
        if util >= scale {
            return (scale, min, max);
        }
        (util.min(scale), min, max)
    }

    /// `cpu_util_cfs_boost(cpu)` (fair.c): `cpu_util(cpu, NULL, -1, 1)`, the root
    /// cfs_rq's utilization raised to its runnable average and, with `UTIL_EST`, to its
    /// util_est.
    pub fn cpu_util_cfs_boost(&self, cpu: usize) -> u64 {
        self.cpu_util(cpu, None, None, true)
    }
}

impl Cpufreq {
    /// `sugov_should_update_freq(sg_policy, time)`.
    pub(super) fn sugov_should_update_freq(&mut self, policy: usize, time: u64) -> bool {
        let sg = self.policies[policy].sugov_mut();
        if sg.limits_changed {
            sg.limits_changed = false;
            sg.need_freq_update = true;
            return true;
        }
        let delta_ns = time as i64 - sg.last_freq_update_time as i64;
        delta_ns >= sg.freq_update_delay_ns as i64
    }

    /// `sugov_update_next_freq(sg_policy, time, next_freq)`, in the form 6.12.y carries
    /// after the `CPUFREQ_NEED_UPDATE_LIMITS` fix: after a limits change, an unchanged
    /// frequency is not sent again (cpufreq-dt does not ask for it).
    fn sugov_update_next_freq(&mut self, policy: usize, time: u64, next_freq: u32) -> bool {
        let sg = self.policies[policy].sugov_mut();
        if sg.need_freq_update {
            sg.need_freq_update = false;
            if sg.next_freq == next_freq {
                return false;
            }
        } else if sg.next_freq == next_freq {
            return false;
        }
        sg.next_freq = next_freq;
        sg.last_freq_update_time = time;
        true
    }

    /// `sugov_deferred_update(sg_policy)`: the slow path queues the governor's irq_work
    /// once; later requests only move `next_freq` until the work starts.
    pub(super) fn sugov_deferred_update(&mut self, policy: usize, time: u64) {
        let sg = self.policies[policy].sugov_mut();
        if !sg.work_in_progress {
            sg.work_in_progress = true;
            self.requests.push((policy, time));
        }
    }

    /// `get_next_freq(sg_policy, util, max)`: `map_util_freq` against the reference
    /// frequency (`get_capacity_ref_freq`: `arch_scale_freq_ref`, the policy's
    /// `cpuinfo.max_freq`, as arm64's `capacity_freq_ref` is), the cached answer when
    /// the raw frequency did not move, else `cpufreq_driver_resolve_freq`
    /// (`CPUFREQ_RELATION_LE`).
    pub(super) fn get_next_freq(&mut self, policy: usize, util: u64, max: u64) -> u32 {
        let p = &mut self.policies[policy];
        let freq = u64::from(p.cpuinfo_max);
        // The kernel keeps the result in an unsigned int.
        let freq = map_util_freq(util, freq, max) as u32;
        let (min_f, max_f) = (p.min, p.max);
        let sg = p.sugov_mut();
        if freq == sg.cached_raw_freq && !sg.need_freq_update {
            return sg.next_freq;
        }
        sg.cached_raw_freq = freq;
        p.table.resolve(freq, Relation::Le, min_f, max_f)
    }

    /// `sugov_get_util(sg_cpu, boost)`: the CPU's performance request from its CFS
    /// utilization, raised to the iowait `boost`.
    fn sugov_get_util(&mut self, s: &Sched, cpu: usize, boost: u64) {
        let util = s.cpu_util_cfs_boost(cpu);
        let (util, min, max) = s.effective_cpu_util(cpu, util);
        let util = util.max(boost);
        let sg_cpu = &mut self.sg_cpu[cpu];
        sg_cpu.bw_min = min;
        sg_cpu.util = sugov_effective_cpu_perf(util, min, max);
    }

    /// `sugov_hold_freq(sg_cpu)` (CONFIG_NO_HZ_COMMON): the CPU has not stopped its tick
    /// in idle since the last check (`tick_nohz_get_idle_calls_cpu` unchanged), so a
    /// lower frequency would likely be premature.
    pub(super) fn sugov_hold_freq(&mut self, cpu: usize) -> bool {
        let idle_calls = self.idle_calls[cpu];
        let sg_cpu = &mut self.sg_cpu[cpu];
        let ret = idle_calls == sg_cpu.saved_idle_calls;
        sg_cpu.saved_idle_calls = idle_calls;
        ret
    }

    /// `sugov_update_single_common(sg_cpu, time, max_cap, flags)`.
    fn sugov_update_single_common(
        &mut self,
        s: &Sched,
        cpu: usize,
        time: u64,
        max_cap: u64,
        flags: u32,
    ) -> bool {
        self.sg_cpu[cpu].iowait_boost(time, flags, s.tick_nsec);
        self.sg_cpu[cpu].last_update = time;
        let policy = self.policy_of[cpu];
        if !self.sugov_should_update_freq(policy, time) {
            return false;
        }
        let boost = self.sg_cpu[cpu].iowait_apply(time, max_cap, s.tick_nsec);
        self.sugov_get_util(s, cpu, boost);
        true
    }

    /// `sugov_update_single_freq(hook, time, flags)`: the hook of a one-CPU policy.
    pub(super) fn sugov_update_single_freq(
        &mut self,
        s: &Sched,
        cpu: usize,
        time: u64,
        flags: u32,
    ) {
        let policy = self.policy_of[cpu];
        let cached_freq = self.policies[policy].sugov_mut().cached_raw_freq;
        let max_cap = s.arch_scale_cpu_capacity(cpu);
        if !self.sugov_update_single_common(s, cpu, time, max_cap, flags) {
            return;
        }
        let mut next_f = self.get_next_freq(policy, self.sg_cpu[cpu].util, max_cap);
        let (prev_next, need_update) = {
            let sg = self.policies[policy].sugov_mut();
            (sg.next_freq, sg.need_freq_update)
        };
        // The kernel evaluates sugov_hold_freq first, so its saved_idle_calls moves on
        // every update that gets this far.
        if self.sugov_hold_freq(cpu) && next_f < prev_next && !need_update {
            next_f = prev_next;
            self.policies[policy].sugov_mut().cached_raw_freq = cached_freq;
        }
        if !self.sugov_update_next_freq(policy, time, next_f) {
            return;
        }
        self.sugov_deferred_update(policy, time);
    }

    /// `sugov_next_freq_shared(sg_cpu, time)`: the highest request of the policy's CPUs,
    /// each read as it stands (no other CPU's signals are updated), against the
    /// capacity of the CPU whose update runs.
    fn sugov_next_freq_shared(&mut self, s: &Sched, cpu: usize, time: u64) -> u32 {
        let policy = self.policy_of[cpu];
        let max_cap = s.arch_scale_cpu_capacity(cpu);
        let mut util = 0;
        let cpus: Vec<usize> = self.policies[policy].cpus.iter().collect();
        for j in cpus {
            let boost = self.sg_cpu[j].iowait_apply(time, max_cap, s.tick_nsec);
            self.sugov_get_util(s, j, boost);
            util = util.max(self.sg_cpu[j].util);
        }
        self.get_next_freq(policy, util, max_cap)
    }

    /// `sugov_update_shared(hook, time, flags)`: the hook of a policy of several CPUs.
    pub(super) fn sugov_update_shared(&mut self, s: &Sched, cpu: usize, time: u64, flags: u32) {
        self.sg_cpu[cpu].iowait_boost(time, flags, s.tick_nsec);
        self.sg_cpu[cpu].last_update = time;
        let policy = self.policy_of[cpu];
        if self.sugov_should_update_freq(policy, time) {
            let next_f = self.sugov_next_freq_shared(s, cpu, time);
            if !self.sugov_update_next_freq(policy, time, next_f) {
                return;
            }
            self.sugov_deferred_update(policy, time);
        }
    }

    /// `sugov_work(work)`: the governor's kthread takes `next_freq` and clears
    /// `work_in_progress`; the caller then asks the driver for it with
    /// `CPUFREQ_RELATION_L`.
    pub fn sugov_work(&mut self, policy: usize) -> u32 {
        let sg = self.policies[policy].sugov_mut();
        sg.work_in_progress = false;
        sg.next_freq
    }
}
