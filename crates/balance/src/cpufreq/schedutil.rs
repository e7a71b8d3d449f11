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

use super::table::Relation;
use super::Cpufreq;
use crate::sched::Sched;

/// `IOWAIT_BOOST_MIN`: `SCHED_CAPACITY_SCALE / 8`.
pub const IOWAIT_BOOST_MIN: u32 = 1024 / 8;

/// `SCHED_CPUFREQ_IOWAIT`: the enqueued task waited for I/O.
pub const SCHED_CPUFREQ_IOWAIT: u32 = 1;

/// `struct sugov_policy`: the governor's state of one policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SugovPolicy {
    /// `tunables->rate_limit_us`.
    pub rate_limit_us: u64,
    /// `last_freq_update_time` (rq clock, ns).
    pub last_freq_update_time: u64,
    /// `freq_update_delay_ns`: the rate limit in ns.
    pub freq_update_delay_ns: u64,
    /// `next_freq` (kHz): the frequency last asked of the driver.
    pub next_freq: u32,
    /// `cached_raw_freq` (kHz): the unresolved frequency `next_freq` came from.
    pub cached_raw_freq: u32,
    /// `work_in_progress`: a slow-path update is queued and its work has not started.
    pub work_in_progress: bool,
    /// `limits_changed`.
    pub limits_changed: bool,
    /// `need_freq_update`.
    pub need_freq_update: bool,
}

impl SugovPolicy {
    /// `sugov_start()` followed by the `sugov_limits()` call `cpufreq_start_governor`
    /// makes: everything zero, the rate limit from the tunable, and `limits_changed` set,
    /// so that the first update is not rate limited. `need_freq_update` starts false:
    /// cpufreq-dt does not set `CPUFREQ_NEED_UPDATE_LIMITS`.
    pub fn start(rate_limit_us: u64) -> SugovPolicy {
        SugovPolicy {
            rate_limit_us,
            last_freq_update_time: 0,
            freq_update_delay_ns: rate_limit_us * 1000,
            next_freq: 0,
            cached_raw_freq: 0,
            work_in_progress: false,
            limits_changed: true,
            need_freq_update: false,
        }
    }
}

/// `struct sugov_cpu`: the governor's state of one CPU (zeroed by `sugov_start`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SugovCpu {
    /// `iowait_boost_pending`.
    pub iowait_boost_pending: bool,
    /// `iowait_boost`, on the capacity scale.
    pub iowait_boost: u32,
    /// `last_update` (rq clock, ns).
    pub last_update: u64,
    /// `util`: the CPU's last computed performance request.
    pub util: u64,
    /// `bw_min`: the minimum performance (`effective_cpu_util`'s `min`).
    pub bw_min: u64,
    /// `saved_idle_calls`: `tick_nohz_get_idle_calls_cpu` at the last check.
    pub saved_idle_calls: u64,
}

/// `map_util_perf(util)`: the 25% headroom, `util + util / 4`.
pub fn map_util_perf(util: u64) -> u64 {
    util + (util >> 2)
}

/// `map_util_freq(util, freq, cap)`: `freq * util / cap`.
pub fn map_util_freq(util: u64, freq: u64, cap: u64) -> u64 {
    freq * util / cap
}

/// `sugov_effective_cpu_perf(cpu, actual, min, max)`: the utilization with its headroom,
/// no more than `max` and no less than `min`.
pub fn sugov_effective_cpu_perf(actual: u64, min: u64, max: u64) -> u64 {
    let actual = map_util_perf(actual);
    let max = if actual < max { actual } else { max };
    min.max(max)
}

impl SugovCpu {
    /// `sugov_iowait_reset()`: after more than a tick without an update, the boost
    /// restarts from `IOWAIT_BOOST_MIN` (if this update asks for one) or stops.
    fn iowait_reset(&mut self, time: u64, set_iowait_boost: bool, tick_nsec: u64) -> bool {
        let delta_ns = time as i64 - self.last_update as i64;
        if delta_ns <= tick_nsec as i64 {
            return false;
        }
        self.iowait_boost = if set_iowait_boost {
            IOWAIT_BOOST_MIN
        } else {
            0
        };
        self.iowait_boost_pending = set_iowait_boost;
        true
    }

    /// `sugov_iowait_boost()`: a wakeup from I/O doubles the boost (from
    /// `IOWAIT_BOOST_MIN` up to 1024), once per request.
    pub fn iowait_boost(&mut self, time: u64, flags: u32, tick_nsec: u64) {
        let set_iowait_boost = flags & SCHED_CPUFREQ_IOWAIT != 0;
        if self.iowait_boost != 0 && self.iowait_reset(time, set_iowait_boost, tick_nsec) {
            return;
        }
        if !set_iowait_boost {
            return;
        }
        if self.iowait_boost_pending {
            return;
        }
        self.iowait_boost_pending = true;
        if self.iowait_boost != 0 {
            self.iowait_boost = (self.iowait_boost << 1).min(1024);
            return;
        }
        self.iowait_boost = IOWAIT_BOOST_MIN;
    }

    /// `sugov_iowait_apply()`: the boost on the capacity scale of a CPU of capacity
    /// `max_cap`, halved at each update that did not ask for one, dropped below
    /// `IOWAIT_BOOST_MIN`.
    pub fn iowait_apply(&mut self, time: u64, max_cap: u64, tick_nsec: u64) -> u64 {
        if self.iowait_boost == 0 {
            return 0;
        }
        if self.iowait_reset(time, false, tick_nsec) {
            return 0;
        }
        if !self.iowait_boost_pending {
            self.iowait_boost >>= 1;
            if self.iowait_boost < IOWAIT_BOOST_MIN {
                self.iowait_boost = 0;
                return 0;
            }
        }
        self.iowait_boost_pending = false;
        (u64::from(self.iowait_boost) * max_cap) >> 10
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headroom_and_frequency_mapping() {
        // util 400 of 1024: 400 + 100 = 500, then 1800000 * 500 / 1024 = 878906 kHz.
        let perf = sugov_effective_cpu_perf(400, 0, 1024);
        assert_eq!(perf, 500);
        assert_eq!(map_util_freq(perf, 1_800_000, 1024), 878_906);
        // The headroom never asks for more than the capacity.
        assert_eq!(sugov_effective_cpu_perf(900, 0, 1024), 1024);
        assert_eq!(sugov_effective_cpu_perf(0, 0, 1024), 0);
    }

    #[test]
    fn iowait_boost_doubles_per_request_and_decays() {
        let tick = 4_000_000;
        let mut c = SugovCpu::default();
        c.iowait_boost(1_000, SCHED_CPUFREQ_IOWAIT, tick);
        assert_eq!((c.iowait_boost, c.iowait_boost_pending), (128, true));
        c.last_update = 1_000;
        // Applying consumes the pending request: 128 * 381 >> 10 = 47.
        assert_eq!(c.iowait_apply(2_000, 381, tick), 47);
        c.iowait_boost(3_000, SCHED_CPUFREQ_IOWAIT, tick);
        assert_eq!(c.iowait_boost, 256);
        c.last_update = 3_000;
        assert_eq!(c.iowait_apply(4_000, 1024, tick), 256);
        // No request: halved, then dropped below IOWAIT_BOOST_MIN.
        assert_eq!(c.iowait_apply(5_000, 1024, tick), 128);
        assert_eq!(c.iowait_apply(6_000, 1024, tick), 0);
        // More than a tick after the last update, a boost restarts from the minimum.
        c.iowait_boost = 512;
        c.iowait_boost(3_000 + tick + 1, SCHED_CPUFREQ_IOWAIT, tick);
        assert_eq!((c.iowait_boost, c.iowait_boost_pending), (128, true));
    }
}
