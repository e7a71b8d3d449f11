//! `drivers/cpufreq/cpufreq_stats.c` (Linux 6.12): per policy, the time spent at each
//! frequency and the number of transitions, as `cpufreq/stats/time_in_state` and
//! `total_trans` print them.
//!
//! Times are kept in ns of the clock the caller passes (the engine's virtual time), as
//! the kernel keeps them in `local_clock()` ns; `time_in_state` prints them in USER_HZ
//! ticks of 10 ms (`nsec_to_clock_t`). A reset (`stats/reset`) opens the measurement
//! window.

/// `NSEC_PER_SEC / USER_HZ`: `nsec_to_clock_t`'s divisor with USER_HZ 100.
pub const NSEC_PER_CLOCK_T: u64 = 10_000_000;

/// `struct cpufreq_stats` of one policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpufreqStats {
    /// `freq_table`: the policy's valid, unique frequencies in table order.
    pub freq_table: Vec<u32>,
    /// `time_in_state` in ns, per frequency, up to `last_time`.
    pub time_in_state: Vec<u64>,
    /// `trans_table`: transitions from row to column.
    pub trans_table: Vec<Vec<u64>>,
    /// `total_trans`.
    pub total_trans: u64,
    /// `last_index`: the frequency the policy runs at.
    pub last_index: usize,
    /// `last_time`: when `time_in_state` was last brought up to date.
    pub last_time: u64,
}

impl CpufreqStats {
    /// `cpufreq_stats_create_table()` for a policy running at `freq_table[cur]` at `now`.
    pub fn new(freq_table: Vec<u32>, cur: usize, now: u64) -> CpufreqStats {
        let n = freq_table.len();
        CpufreqStats {
            freq_table,
            time_in_state: vec![0; n],
            trans_table: vec![vec![0; n]; n],
            total_trans: 0,
            last_index: cur,
            last_time: now,
        }
    }

    /// `cpufreq_stats_update(stats, last_time)`: the time since `last_time` goes to the
    /// current frequency.
    fn update(&mut self, now: u64) {
        self.time_in_state[self.last_index] += now.saturating_sub(self.last_time);
        self.last_time = now;
    }

    /// `cpufreq_stats_record_transition(policy, new_freq)` at `now`: a change to another
    /// frequency of the table closes the old frequency's time and counts a transition;
    /// a "change" to the same frequency counts nothing.
    pub fn record_transition(&mut self, new_freq: u32, now: u64) {
        let Some(new_index) = self.freq_table.iter().position(|&f| f == new_freq) else {
            return;
        };
        if new_index == self.last_index {
            return;
        }
        self.update(now);
        self.trans_table[self.last_index][new_index] += 1;
        self.last_index = new_index;
        self.total_trans += 1;
    }

    /// `cpufreq_stats_reset_table()` at `now` (a write to `stats/reset`): every counter
    /// starts again from zero.
    pub fn reset(&mut self, now: u64) {
        for t in &mut self.time_in_state {
            *t = 0;
        }
        for row in &mut self.trans_table {
            for c in row {
                *c = 0;
            }
        }
        self.total_trans = 0;
        self.last_time = now;
    }

    /// The time at each frequency in ns as a read at `now` sees it (`show_time_in_state`
    /// adds the running frequency's time since `last_time`).
    pub fn time_in_state_ns(&self, now: u64) -> Vec<(u32, u64)> {
        self.freq_table
            .iter()
            .enumerate()
            .map(|(i, &f)| {
                let mut t = self.time_in_state[i];
                if i == self.last_index {
                    t += now.saturating_sub(self.last_time);
                }
                (f, t)
            })
            .collect()
    }

    /// `show_time_in_state()` at `now`: one `"%u %llu\n"` line per frequency, the time in
    /// 10 ms units.
    pub fn show_time_in_state(&self, now: u64) -> String {
        self.time_in_state_ns(now)
            .iter()
            .map(|(f, t)| format!("{f} {}\n", t / NSEC_PER_CLOCK_T))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_in_state_reads_like_sysfs() {
        let mut s = CpufreqStats::new(vec![408_000, 600_000, 816_000], 2, 0);
        s.record_transition(408_000, 25_000_000);
        s.record_transition(408_000, 30_000_000);
        s.record_transition(600_000, 40_000_000);
        assert_eq!(s.total_trans, 2);
        assert_eq!(s.trans_table[2][0], 1);
        assert_eq!(
            s.show_time_in_state(59_999_999),
            "408000 1\n600000 1\n816000 2\n"
        );
        s.reset(100_000_000);
        assert_eq!(s.total_trans, 0);
        assert_eq!(
            s.time_in_state_ns(130_000_000),
            vec![(408_000, 0), (600_000, 30_000_000), (816_000, 0)]
        );
    }
}
