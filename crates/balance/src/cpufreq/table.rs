//! A policy's frequency table and the energy model's view of it: the lookups of
//! `include/linux/cpufreq.h` (`cpufreq_frequency_table_target` and the ascending-table
//! finders, with `CPUFREQ_RELATION_E`'s skipping of inefficient frequencies) and the
//! performance states of `kernel/power/energy_model.c` (`em_create_perf_table`,
//! `em_init_performance`, `em_compute_costs`), as Linux 6.12 has them.
//!
//! cpufreq-dt builds the table from the OPPs in increasing frequency
//! (`dev_pm_opp_init_cpufreq_table`), so every table here is sorted ascending
//! (`CPUFREQ_TABLE_SORTED_ASCENDING`) with unique frequencies; the descending and unsorted
//! finders are not needed.

/// `CPUFREQ_RELATION_*`: which table entry a target frequency maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// `CPUFREQ_RELATION_L`: the lowest frequency at or above the target.
    L,
    /// `CPUFREQ_RELATION_H`: the highest frequency at or below the target.
    H,
    /// `CPUFREQ_RELATION_LE`: as `L`, skipping inefficient frequencies when the policy
    /// has efficiencies (`cpufreq_driver_resolve_freq`'s relation in 6.12).
    Le,
}

/// One performance state of a CPU's energy model (`struct em_perf_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmPerfState {
    /// Frequency in kHz.
    pub frequency: u32,
    /// Active power in micro-watts.
    pub power: u64,
    /// `performance`: the CPU capacity at this frequency, `max_cap * f / f_max`.
    pub performance: u64,
    /// `cost`: `power * 10 / performance`, the energy per unit of work.
    pub cost: u64,
    /// `EM_PERF_STATE_INEFFICIENT`: a faster state costs no more per unit of work.
    pub inefficient: bool,
}

/// A policy's `freq_table` with the flags the energy model sets on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreqTable {
    /// Frequencies in kHz, strictly increasing.
    pub freqs: Vec<u32>,
    /// `CPUFREQ_INEFFICIENT_FREQ` per entry.
    pub inefficient: Vec<bool>,
    /// `policy->efficiencies_available`: some entry was marked inefficient.
    pub efficiencies_available: bool,
}

impl FreqTable {
    /// A table of `freqs` (strictly increasing) with no inefficiency marked.
    pub fn new(freqs: Vec<u32>) -> FreqTable {
        let n = freqs.len();
        FreqTable {
            freqs,
            inefficient: vec![false; n],
            efficiencies_available: false,
        }
    }

    /// `em_cpufreq_update_efficiencies()`: marks the energy model's inefficient states in
    /// the table (`cpufreq_table_set_inefficient`), which makes efficiencies available
    /// when at least one is marked.
    pub fn set_inefficiencies(&mut self, em: &[EmPerfState]) {
        for st in em.iter().filter(|s| s.inefficient) {
            if let Some(i) = self.freqs.iter().position(|&f| f == st.frequency) {
                self.inefficient[i] = true;
                self.efficiencies_available = true;
            }
        }
    }

    /// The entries a lookup may return: every entry, or only the efficient ones
    /// (`cpufreq_for_each_efficient_entry_idx`).
    fn entries(&self, efficiencies: bool) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.freqs
            .iter()
            .copied()
            .enumerate()
            .filter(move |&(i, _)| !(efficiencies && self.inefficient[i]))
    }

    /// `cpufreq_table_find_index_al()`: the lowest entry at or above `target`, else the
    /// highest entry (-1 in the kernel for an empty walk, `None` here).
    fn find_index_al(&self, target: u32, efficiencies: bool) -> Option<usize> {
        let mut best = None;
        for (idx, freq) in self.entries(efficiencies) {
            if freq >= target {
                return Some(idx);
            }
            best = Some(idx);
        }
        best
    }

    /// `cpufreq_table_find_index_ah()`: the highest entry at or below `target`, else the
    /// lowest entry.
    fn find_index_ah(&self, target: u32, efficiencies: bool) -> Option<usize> {
        let mut best = None;
        for (idx, freq) in self.entries(efficiencies) {
            if freq == target {
                return Some(idx);
            }
            if freq < target {
                best = Some(idx);
                continue;
            }
            return Some(best.unwrap_or(idx));
        }
        best
    }

    /// `cpufreq_frequency_table_target(policy, target, relation)` on an ascending table
    /// with the policy's limits `min..=max`: the target is clamped to the limits
    /// (`cpufreq_table_find_index_l/h`), the finder walks the efficient entries when
    /// the relation asks for them and the policy has them, and falls back to every
    /// entry when the efficient choice lies outside the limits (`cpufreq_is_in_limits`).
    pub fn target_index(&self, target: u32, relation: Relation, min: u32, max: u32) -> usize {
        let mut efficiencies = self.efficiencies_available && relation == Relation::Le;
        let target = target.clamp(min, max);
        loop {
            let idx = match relation {
                Relation::L | Relation::Le => self.find_index_al(target, efficiencies),
                Relation::H => self.find_index_ah(target, efficiencies),
            };
            let in_limits = idx.is_some_and(|i| (min..=max).contains(&self.freqs[i]));
            if !in_limits && efficiencies {
                efficiencies = false;
                continue;
            }
            return idx.unwrap_or(0);
        }
    }

    /// `__resolve_freq(policy, target, relation)`: the table frequency a target maps to
    /// under the policy's limits.
    pub fn resolve(&self, target: u32, relation: Relation, min: u32, max: u32) -> u32 {
        self.freqs[self.target_index(target, relation, min, max)]
    }

    /// The index of `freq` in the table (`freq_table_get_index` of the stats).
    pub fn index_of(&self, freq: u32) -> Option<usize> {
        self.freqs.iter().position(|&f| f == freq)
    }
}

/// `em_create_perf_table()` for a CPU of capacity `max_cap` whose OPPs run at `freqs`
/// (kHz, increasing) with `power` (uW): `em_init_performance` gives each state the
/// capacity it delivers, `max_cap * f / f_max` (integer), and `em_compute_costs` walks
/// down from the fastest state, marking a state inefficient when its cost
/// (`power * 10 / performance`) is not below the cheapest faster one's. `None` when a
/// state's performance is 0 (a division the kernel would fault on; not a real table).
pub fn em_create_perf_table(
    freqs: &[u32],
    power: &[u64],
    max_cap: u64,
) -> Option<Vec<EmPerfState>> {
    let fmax = u64::from(*freqs.last()?);
    let mut table: Vec<EmPerfState> = freqs
        .iter()
        .zip(power)
        .map(|(&f, &p)| EmPerfState {
            frequency: f,
            power: p,
            performance: max_cap * u64::from(f) / fmax,
            cost: 0,
            inefficient: false,
        })
        .collect();
    let mut prev_cost = u64::MAX;
    for st in table.iter_mut().rev() {
        if st.performance == 0 {
            return None;
        }
        st.cost = st.power * 10 / st.performance;
        if st.cost >= prev_cost {
            st.inefficient = true;
        } else {
            prev_cost = st.cost;
        }
    }
    Some(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a53() -> FreqTable {
        FreqTable::new(vec![
            408_000, 600_000, 816_000, 1_008_000, 1_200_000, 1_416_000,
        ])
    }

    #[test]
    fn relation_l_is_the_lowest_at_or_above() {
        let t = a53();
        let (lo, hi) = (408_000, 1_416_000);
        assert_eq!(t.resolve(600_000, Relation::L, lo, hi), 600_000);
        assert_eq!(t.resolve(600_001, Relation::L, lo, hi), 816_000);
        assert_eq!(t.resolve(1, Relation::L, lo, hi), 408_000);
        assert_eq!(t.resolve(2_000_000, Relation::L, lo, hi), 1_416_000);
        assert_eq!(t.resolve(900_000, Relation::H, lo, hi), 816_000);
        assert_eq!(t.resolve(1, Relation::H, lo, hi), 408_000);
        // A policy limited to 816 MHz clamps the target first.
        assert_eq!(t.resolve(1_300_000, Relation::L, lo, 816_000), 816_000);
    }

    #[test]
    fn rk3399_little_em_marks_408_mhz_inefficient() {
        // rk3399's A53 OPPs with coefficient 100 and capacity 381: 408 MHz and 600 MHz
        // share 825 mV, so 408 MHz costs more per unit of work (2547 against 2536).
        let freqs = [408_000, 600_000, 816_000, 1_008_000, 1_200_000, 1_416_000];
        let power = [27_769, 40_837, 58_956, 86_247, 120_000, 179_212];
        let em = em_create_perf_table(&freqs, &power, 381).unwrap();
        assert_eq!(em[0].performance, 109);
        assert_eq!(em[0].cost, 2547);
        assert_eq!(em[1].cost, 2536);
        assert!(em[0].inefficient && !em[1].inefficient && !em[5].inefficient);
        let mut t = a53();
        t.set_inefficiencies(&em);
        assert!(t.efficiencies_available);
        let (lo, hi) = (408_000, 1_416_000);
        // schedutil's RELATION_LE skips 408 MHz; plain L does not.
        assert_eq!(t.resolve(300_000, Relation::Le, lo, hi), 600_000);
        assert_eq!(t.resolve(300_000, Relation::L, lo, hi), 408_000);
        // A policy pinned to 408 MHz falls back to the inefficient entry.
        assert_eq!(t.resolve(300_000, Relation::Le, lo, 408_000), 408_000);
    }
}
