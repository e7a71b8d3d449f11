//! schedutil's state and the arithmetic that reads no runqueue (Linux 6.12's
//! `kernel/sched/cpufreq_schedutil.c` and `include/linux/sched/cpufreq.h`): each policy's
//! `struct sugov_policy`, each CPU's `struct sugov_cpu` with its iowait boost, and the
//! utilization-to-frequency mappings.
//!
//! [`super::Cpufreq`] holds this state, and [`super::schedutil`], which reads the
//! scheduler's runqueues, updates it; keeping it here lets the driver side of cpufreq
//! hold the governor's data without importing the scheduler.

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
