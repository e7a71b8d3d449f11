//! `DurHist`: the wall-clock durations race mode times (each `update_sd_lb_stats` call),
//! kept in a fixed log-linear histogram instead of one entry per call, so that a race of
//! an hour takes the memory of a race of a second.
//!
//! Values below 32 ns are exact; above, each power of two is split into 32 equal buckets,
//! so a percentile is within 1/32 (3%) of the true value, well inside the run-to-run
//! spread of wall-clock timings on a shared host. The count, sum (for the mean) and
//! maximum are exact.

/// Sub-buckets per power of two (and the exact range below it).
const SUB: u32 = 32;
/// log2(SUB).
const SUB_BITS: u32 = 5;
/// Buckets for every `u32`: the exact range, then 27 powers of two of `SUB` each.
const BUCKETS: usize = (SUB * (32 - SUB_BITS + 1)) as usize;

/// A histogram of durations in ns; allocates its buckets on the first sample.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DurHist {
    counts: Vec<u32>,
    n: u64,
    sum: u64,
    max: u32,
}

/// The bucket of `v`.
fn bucket(v: u32) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 31 - v.leading_zeros();
    let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
    ((e - SUB_BITS + 1) * SUB + sub) as usize
}

/// The smallest value of bucket `i`, and the bucket's width.
fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u32;
    if i < SUB {
        return (u64::from(i), 1);
    }
    let e = i / SUB + SUB_BITS - 1;
    let sub = i % SUB;
    let width = 1u64 << (e - SUB_BITS);
    ((u64::from(SUB + sub)) * width, width)
}

impl DurHist {
    /// Records one duration.
    pub fn record(&mut self, ns: u32) {
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS];
        }
        let b = &mut self.counts[bucket(ns)];
        *b = b.saturating_add(1);
        self.n += 1;
        self.sum = self.sum.saturating_add(u64::from(ns));
        self.max = self.max.max(ns);
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &DurHist) {
        if other.counts.is_empty() {
            return;
        }
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS];
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a = a.saturating_add(*b);
        }
        self.n += other.n;
        self.sum = self.sum.saturating_add(other.sum);
        self.max = self.max.max(other.max);
    }

    /// Samples recorded.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether no sample was recorded.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Exact mean.
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// Exact maximum.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// The nearest-rank `q`-th percentile (`ceil(n * q / 100)`-th smallest sample),
    /// reported as the middle of its bucket and never above the maximum.
    pub fn percentile(&self, q: u64) -> u32 {
        if self.n == 0 {
            return 0;
        }
        let rank = (self.n * q).div_ceil(100).clamp(1, self.n);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                let (low, width) = bucket_range(i);
                let mid = low + (width - 1) / 2;
                return u32::try_from(mid).unwrap_or(u32::MAX).min(self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut last = 0;
        for v in (0..5000u32).chain([u32::MAX / 2, u32::MAX - 1, u32::MAX]) {
            let b = bucket(v);
            assert!(b < BUCKETS, "{v}");
            assert!(b >= last, "{v}");
            last = b;
            let (low, width) = bucket_range(b);
            assert!(
                low <= u64::from(v) && u64::from(v) < low + width,
                "{v}: {low}+{width}"
            );
        }
    }

    #[test]
    fn percentiles_are_within_a_thirty_second_of_the_sorted_samples() {
        let mut h = DurHist::default();
        let mut v: Vec<u32> = (0..10_000u32).map(|i| (i * 7919) % 100_000 + 40).collect();
        for &x in &v {
            h.record(x);
        }
        v.sort_unstable();
        for q in [50, 90, 99] {
            let exact = v[(v.len() * q as usize).div_ceil(100) - 1];
            let got = h.percentile(q);
            assert!(
                got.abs_diff(exact) <= exact / 32 + 1,
                "p{q}: {got} vs {exact}"
            );
        }
        assert_eq!(h.max(), *v.last().unwrap());
        assert_eq!(h.len(), 10_000);
        let mut other = DurHist::default();
        other.record(1);
        h.merge(&other);
        assert_eq!(h.len(), 10_001);
    }
}
