//! schbench's latency histogram (from fio's "plat" buckets), so that percentiles are
//! computed exactly as the tool computes them: values below 512 us are exact, larger ones
//! fall into 256 buckets per power of two and are reported as the bucket's middle.

/// Bits of precision per power-of-two group.
const PLAT_BITS: u32 = 8;
/// Buckets per group.
const PLAT_VAL: u32 = 1 << PLAT_BITS;
/// Groups.
const PLAT_GROUP_NR: u32 = 19;
/// Total buckets.
const PLAT_NR: usize = (PLAT_GROUP_NR * PLAT_VAL) as usize;

/// schbench's reported percentiles; the fifth (99.0) is starred.
pub const PLIST: [f64; 7] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9];
/// Index of the starred percentile.
pub const PLIST_P99: usize = 4;
/// Latencies above this count as "Over" (schbench's `max_us`).
pub const MAX_US: u32 = 50_000;

/// One `struct stats`: histogram, sample count, min, max and outliers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatStats {
    plat: Vec<u32>,
    /// Samples recorded.
    pub nr_samples: u64,
    /// Largest sample.
    pub max: u32,
    /// Smallest sample (`u32::MAX` while empty).
    pub min: u32,
    /// Samples above [`MAX_US`].
    pub over: u32,
}

impl Default for PlatStats {
    fn default() -> Self {
        PlatStats {
            plat: vec![0; PLAT_NR],
            nr_samples: 0,
            max: 0,
            min: u32::MAX,
            over: 0,
        }
    }
}

fn val_to_idx(val: u32) -> usize {
    let msb = if val == 0 {
        0
    } else {
        31 - val.leading_zeros()
    };
    if msb <= PLAT_BITS {
        return val as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = (error_bits + 1) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (val >> error_bits);
    ((base + offset) as usize).min(PLAT_NR - 1)
}

fn idx_to_val(idx: usize) -> u32 {
    let idx = idx as u32;
    if idx < (PLAT_VAL << 1) {
        return idx;
    }
    let error_bits = (idx >> PLAT_BITS) - 1;
    let base = 1u32 << (error_bits + PLAT_BITS);
    let k = idx % PLAT_VAL;
    // schbench computes base + (k + 0.5) * 2^error_bits in floating point and truncates.
    base + ((2 * k + 1) << error_bits) / 2
}

impl PlatStats {
    /// `add_lat`: records one latency in microseconds.
    pub fn add(&mut self, us: u32) {
        self.max = self.max.max(us);
        self.min = self.min.min(us);
        if us > MAX_US {
            self.over += 1;
        }
        self.plat[val_to_idx(us)] += 1;
        self.nr_samples += 1;
    }

    /// `combine_stats`: folds `other` into `self`.
    pub fn combine(&mut self, other: &PlatStats) {
        for (a, b) in self.plat.iter_mut().zip(&other.plat) {
            *a += b;
        }
        self.nr_samples += other.nr_samples;
        self.over += other.over;
        self.max = self.max.max(other.max);
        self.min = self.min.min(other.min);
    }

    /// `calc_percentiles`: the bucket value of each percentile of [`PLIST`] (empty when no
    /// sample was recorded, as schbench then prints no table).
    pub fn percentiles(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(PLIST.len());
        if self.nr_samples == 0 {
            return out;
        }
        let nr = self.nr_samples as f64;
        let mut sum = 0u64;
        let mut j = 0;
        for (i, &n) in self.plat.iter().enumerate() {
            sum += u64::from(n);
            while j < PLIST.len() && sum as f64 >= PLIST[j] / 100.0 * nr {
                out.push(idx_to_val(i));
                j += 1;
            }
            if j == PLIST.len() {
                break;
            }
        }
        out
    }

    /// `show_latencies` of schbench 2016: the table it prints on stderr.
    pub fn show_latencies(&self) -> String {
        let mut s = String::new();
        let vals = self.percentiles();
        if !vals.is_empty() {
            s.push_str("Latency percentiles (usec)\n");
            for (i, v) in vals.iter().enumerate() {
                let star = if i == PLIST_P99 { "*" } else { "" };
                s.push_str(&format!("\t{star}{:2.4}th: {v}\n", PLIST[i]));
            }
        }
        let min = if self.nr_samples == 0 { 0 } else { self.min };
        s.push_str(&format!(
            "\tOver={}, min={}, max={}\n",
            self.over, min, self.max
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact_and_large_ones_bucketed() {
        for v in [0, 1, 255, 511] {
            assert_eq!(idx_to_val(val_to_idx(v)), v);
        }
        // 10000 us: msb 13, 5 error bits, buckets of 32 us reported at their middle.
        let v = idx_to_val(val_to_idx(10_000));
        assert!((9_984..10_016).contains(&v), "{v}");
        assert_eq!(val_to_idx(u32::MAX), PLAT_NR - 1);
    }

    #[test]
    fn table_layout_matches_schbench() {
        let mut s = PlatStats::default();
        for us in 1..=100 {
            s.add(us);
        }
        s.add(60_000);
        let text = s.show_latencies();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Latency percentiles (usec)");
        assert_eq!(lines[1], "\t50.0000th: 51");
        assert_eq!(lines[5], "\t*99.0000th: 100");
        assert_eq!(lines[8], "\tOver=1, min=1, max=60000");
        assert_eq!(lines.len(), 9);
    }
}
