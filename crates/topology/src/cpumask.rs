//! `CpuMask`: a fixed-width CPU bitmap, the counterpart of the kernel's `struct cpumask`.
//!
//! Every mask of one machine has the same width (the machine's CPU count), so masks compare
//! and combine directly. Iteration is always in increasing CPU order, which is what makes the
//! builder's group order and every output deterministic.

use std::fmt;

/// Largest CPU count accepted anywhere: Debian's `CONFIG_NR_CPUS` for x86-64 and arm64.
pub const NR_CPUS_MAX: usize = 8192;

/// A set of CPUs in `0..nbits`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuMask {
    nbits: usize,
    words: Vec<u64>,
}

impl CpuMask {
    /// An empty mask able to hold CPUs `0..nbits`.
    pub fn new(nbits: usize) -> Self {
        CpuMask {
            nbits,
            words: vec![0; nbits.div_ceil(64)],
        }
    }

    /// A mask holding every CPU in `0..nbits` (the kernel's `cpu_possible_mask`).
    pub fn full(nbits: usize) -> Self {
        let mut m = Self::new(nbits);
        for cpu in 0..nbits {
            m.set(cpu);
        }
        m
    }

    /// A mask holding exactly `cpu` (`cpumask_of`).
    pub fn single(nbits: usize, cpu: usize) -> Self {
        let mut m = Self::new(nbits);
        m.set(cpu);
        m
    }

    /// A mask of the given CPUs; CPUs at or above `nbits` are ignored.
    pub fn from_cpus(nbits: usize, cpus: impl IntoIterator<Item = usize>) -> Self {
        let mut m = Self::new(nbits);
        for c in cpus {
            if c < nbits {
                m.set(c);
            }
        }
        m
    }

    /// Width of the mask: the number of CPU slots, not the number of CPUs set.
    pub fn nbits(&self) -> usize {
        self.nbits
    }

    /// Adds `cpu` (`cpumask_set_cpu`). Panics are impossible: out-of-range CPUs are ignored.
    pub fn set(&mut self, cpu: usize) {
        if cpu < self.nbits {
            self.words[cpu / 64] |= 1u64 << (cpu % 64);
        }
    }

    /// Removes `cpu` (`cpumask_clear_cpu`).
    pub fn clear(&mut self, cpu: usize) {
        if cpu < self.nbits {
            self.words[cpu / 64] &= !(1u64 << (cpu % 64));
        }
    }

    /// Whether `cpu` is in the mask (`cpumask_test_cpu`).
    pub fn test(&self, cpu: usize) -> bool {
        cpu < self.nbits && self.words[cpu / 64] & (1u64 << (cpu % 64)) != 0
    }

    /// Number of CPUs in the mask (`cpumask_weight`).
    pub fn weight(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Number of CPUs in the words `words` of the mask: its weight when they hold every
    /// CPU of it ([`CpuMask::word_range`]), at the cost of those words alone.
    pub fn weight_in(&self, words: std::ops::Range<usize>) -> usize {
        self.words
            .get(words)
            .map_or(0, |w| w.iter().map(|w| w.count_ones() as usize).sum())
    }

    /// Whether no CPU is set (`cpumask_empty`).
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Lowest CPU in the mask (`cpumask_first`), or `None` when empty.
    pub fn first(&self) -> Option<usize> {
        self.words
            .iter()
            .enumerate()
            .find(|(_, &w)| w != 0)
            .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
    }

    /// Lowest CPU at or above `from` (`cpumask_next(from - 1)`).
    pub fn next_from(&self, from: usize) -> Option<usize> {
        if from >= self.nbits {
            return None;
        }
        let mut wi = from / 64;
        let mut w = self.words[wi] & (!0u64 << (from % 64));
        loop {
            if w != 0 {
                return Some(wi * 64 + w.trailing_zeros() as usize);
            }
            wi += 1;
            if wi >= self.words.len() {
                return None;
            }
            w = self.words[wi];
        }
    }

    /// Lowest CPU at or above `from` that is in `self` but not in `other`
    /// (`cpumask_next_andnot(from - 1)`), a word at a time.
    pub fn next_andnot_from(&self, other: &CpuMask, from: usize) -> Option<usize> {
        if from >= self.nbits {
            return None;
        }
        let word = |i: usize| self.words[i] & !other.words.get(i).copied().unwrap_or(0);
        let mut wi = from / 64;
        let mut w = word(wi) & (!0u64 << (from % 64));
        loop {
            if w != 0 {
                return Some(wi * 64 + w.trailing_zeros() as usize);
            }
            wi += 1;
            if wi >= self.words.len() {
                return None;
            }
            w = word(wi);
        }
    }

    /// CPUs in increasing order (`for_each_cpu`), a word at a time.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        WordBits::new(0, self.words.len(), |i| self.words[i])
    }

    /// CPUs in both masks, in increasing order (`for_each_cpu_and`): the intersection is
    /// walked a word at a time, not built, so that a scan allocates nothing.
    pub fn iter_and<'a>(&'a self, other: &'a CpuMask) -> impl Iterator<Item = usize> + 'a {
        self.iter_and_in(other, (0, self.words.len() as u32))
    }

    /// [`Self::iter_and`] over the words `words` (first, one past the last) only: the
    /// same CPUs when `self` has none outside them, as a group's `span_words` says of its
    /// span. On a machine of thousands of CPUs a small group's walk then costs its own
    /// words, not the whole mask's.
    pub fn iter_and_in<'a>(
        &'a self,
        other: &'a CpuMask,
        words: (u32, u32),
    ) -> impl Iterator<Item = usize> + 'a {
        let end = (words.1 as usize).min(self.words.len());
        WordBits::new(words.0 as usize, end, |i| {
            self.words[i] & other.words.get(i).copied().unwrap_or(0)
        })
    }

    /// Number of CPUs in both masks (`cpumask_weight_and`).
    pub fn weight_and(&self, other: &CpuMask) -> usize {
        self.words
            .iter()
            .zip(other.words.iter().chain(std::iter::repeat(&0)))
            .map(|(a, b)| (a & b).count_ones() as usize)
            .sum()
    }

    /// CPUs starting at `start` and wrapping around (`for_each_cpu_wrap`): the order in
    /// which the kernel builds a CPU's group list, so that its own group comes first.
    ///
    /// Each half starts its scan at its first word rather than filtering the whole mask,
    /// so a walk costs the CPUs it returns plus the words it skips.
    pub fn iter_wrap(&self, start: usize) -> impl Iterator<Item = usize> + '_ {
        let start = if start >= self.nbits { 0 } else { start };
        let mut next = self.next_from(start);
        let mut wrapped = false;
        std::iter::from_fn(move || loop {
            match next {
                Some(cur) if !wrapped || cur < start => {
                    next = self.next_from(cur + 1);
                    return Some(cur);
                }
                Some(_) => return None,
                None if !wrapped => {
                    wrapped = true;
                    next = self.next_from(0);
                }
                None => return None,
            }
        })
    }

    /// The range of word indices that holds every set CPU, empty for an empty mask; lets
    /// a caller merge a small mask into a wide one without touching the other words.
    pub(crate) fn word_range(&self) -> std::ops::Range<usize> {
        let lo = self.words.iter().position(|&w| w != 0);
        let hi = self.words.iter().rposition(|&w| w != 0);
        match (lo, hi) {
            (Some(lo), Some(hi)) => lo..hi + 1,
            _ => 0..0,
        }
    }

    /// `cpumask_or` into self restricted to the words `range` (from [`Self::word_range`]
    /// of `other`): the same result as [`Self::or_with`] when `other` has no CPU outside
    /// those words.
    pub(crate) fn or_with_words(&mut self, other: &CpuMask, range: std::ops::Range<usize>) {
        let hi = range.end.min(self.words.len()).min(other.words.len());
        let lo = range.start.min(hi);
        for (a, b) in self.words[lo..hi].iter_mut().zip(&other.words[lo..hi]) {
            *a |= b;
        }
    }

    /// `cpumask_andnot` into self restricted to the words `range` (from
    /// [`Self::word_range`] of `other`): the same result as [`Self::andnot_with`] when
    /// `other` has no CPU outside those words.
    pub(crate) fn andnot_with_words(&mut self, other: &CpuMask, range: std::ops::Range<usize>) {
        let hi = range.end.min(self.words.len()).min(other.words.len());
        let lo = range.start.min(hi);
        for (a, b) in self.words[lo..hi].iter_mut().zip(&other.words[lo..hi]) {
            *a &= !b;
        }
    }

    /// Whether every CPU of `self` is in `other` (`cpumask_subset`).
    pub fn is_subset(&self, other: &CpuMask) -> bool {
        self.words
            .iter()
            .zip(other.words.iter().chain(std::iter::repeat(&0)))
            .all(|(a, b)| a & !b == 0)
    }

    /// Whether the masks share a CPU (`cpumask_intersects`).
    pub fn intersects(&self, other: &CpuMask) -> bool {
        self.words
            .iter()
            .zip(other.words.iter())
            .any(|(a, b)| a & b != 0)
    }

    /// Adds every CPU of `other` (`cpumask_or` into self).
    pub fn or_with(&mut self, other: &CpuMask) {
        for (a, b) in self.words.iter_mut().zip(other.words.iter()) {
            *a |= b;
        }
    }

    /// Keeps only CPUs also in `other` (`cpumask_and` into self).
    pub fn and_with(&mut self, other: &CpuMask) {
        for (i, a) in self.words.iter_mut().enumerate() {
            *a &= other.words.get(i).copied().unwrap_or(0);
        }
    }

    /// Removes every CPU of `other` (`cpumask_andnot` into self).
    pub fn andnot_with(&mut self, other: &CpuMask) {
        for (a, b) in self.words.iter_mut().zip(other.words.iter()) {
            *a &= !b;
        }
    }

    /// The intersection of two masks.
    pub fn and(&self, other: &CpuMask) -> CpuMask {
        let mut m = self.clone();
        m.and_with(other);
        m
    }

    /// The union of two masks.
    pub fn or(&self, other: &CpuMask) -> CpuMask {
        let mut m = self.clone();
        m.or_with(other);
        m
    }

    /// Formats as a CPU list (`%*pbl`): `0-3,8-11`; an empty mask is the empty string.
    pub fn to_list(&self) -> String {
        let mut out = String::new();
        let mut cpus = self.iter().peekable();
        while let Some(lo) = cpus.next() {
            let mut hi = lo;
            while cpus.peek() == Some(&(hi + 1)) {
                hi += 1;
                cpus.next();
            }
            if !out.is_empty() {
                out.push(',');
            }
            if hi == lo {
                out.push_str(&lo.to_string());
            } else {
                out.push_str(&format!("{lo}-{hi}"));
            }
        }
        out
    }

    /// Formats as the kernel's hex bitmap (`%*pb`): 32-bit words, most significant first,
    /// comma-separated, the first word without leading zeros beyond the mask width.
    pub fn to_hex(&self) -> String {
        let nwords32 = self.nbits.div_ceil(32).max(1);
        let mut chunks = Vec::with_capacity(nwords32);
        for i in (0..nwords32).rev() {
            let w64 = self.words.get(i / 2).copied().unwrap_or(0);
            let w32 = if i % 2 == 0 {
                w64 as u32
            } else {
                (w64 >> 32) as u32
            };
            let bits_in_chunk = (self.nbits - i * 32).clamp(1, 32);
            if i == nwords32 - 1 {
                let digits = bits_in_chunk.div_ceil(4);
                chunks.push(format!("{w32:0digits$x}"));
            } else {
                chunks.push(format!("{w32:08x}"));
            }
        }
        chunks.join(",")
    }

    /// Parses a CPU list such as `0-3,8-11` or `5` (sysfs `cpulist` files, `-numa cpus=`).
    /// Whitespace around items is ignored; an empty string is an empty mask.
    pub fn parse_list(nbits: usize, text: &str) -> Result<CpuMask, CpuListError> {
        let mut m = CpuMask::new(nbits);
        for item in text.trim().split(',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (lo, hi) = match item.split_once('-') {
                Some((a, b)) => (parse_cpu(a)?, parse_cpu(b)?),
                None => {
                    let c = parse_cpu(item)?;
                    (c, c)
                }
            };
            if lo > hi {
                return Err(CpuListError::Backwards {
                    got: item.to_string(),
                });
            }
            if hi >= nbits {
                return Err(CpuListError::OutOfRange {
                    cpu: hi,
                    last: nbits.saturating_sub(1),
                });
            }
            for c in lo..=hi {
                m.set(c);
            }
        }
        Ok(m)
    }
}

fn parse_cpu(s: &str) -> Result<usize, CpuListError> {
    s.trim().parse::<usize>().map_err(|_| CpuListError::NotCpu {
        got: s.trim().to_string(),
    })
}

/// Why a CPU list ([`CpuMask::parse_list`], [`crate::partition::parse_cpulist`]) was
/// refused. Typed so that callers can tell the cases apart; each message is the reason
/// alone, which callers put in parentheses after the option and the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    /// An item that is not a CPU number (nor `N` where the kernel's patterns allow it).
    #[error("'{got}' is not a CPU number")]
    NotCpu {
        /// The item as given.
        got: String,
    },
    /// A range `A-B` with `A` above `B`.
    #[error("range '{got}' runs backwards")]
    Backwards {
        /// The range as given.
        got: String,
    },
    /// A CPU at or above the mask's width.
    #[error("CPU {cpu} is out of range 0-{last}")]
    OutOfRange {
        /// The CPU named.
        cpu: usize,
        /// The last CPU of the mask.
        last: usize,
    },
    /// A `A-B:USED` pattern without its `/GROUP`.
    #[error("'{got}' has a pattern without '/GROUP'")]
    PatternWithoutGroup {
        /// The item as given.
        got: String,
    },
    /// A `USED/GROUP` pattern with `GROUP` 0 or `USED` above it.
    #[error("'{got}' needs USED/GROUP with GROUP above 0 and USED at most GROUP")]
    BadPattern {
        /// The item as given.
        got: String,
    },
}

impl fmt::Debug for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuMask({})", self.to_list())
    }
}

impl fmt::Display for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_list())
    }
}

/// The set bits of a sequence of words, lowest first: the iteration under
/// [`CpuMask::iter`] and [`CpuMask::iter_and`], which clears each bit it returns rather
/// than searching the mask again from the last CPU.
struct WordBits<F> {
    word: F,
    end: usize,
    index: usize,
    bits: u64,
}

impl<F: Fn(usize) -> u64> WordBits<F> {
    /// The set bits of words `start..end`.
    fn new(start: usize, end: usize, word: F) -> Self {
        let bits = if start < end { word(start) } else { 0 };
        WordBits {
            word,
            end,
            index: start,
            bits,
        }
    }
}

impl<F: Fn(usize) -> u64> Iterator for WordBits<F> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.index += 1;
            if self.index >= self.end {
                return None;
            }
            self.bits = (self.word)(self.index);
        }
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.index * 64 + bit)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn iter_and_and_weight_and_agree_with_the_built_intersection() {
        let a = CpuMask::parse_list(300, "0-5,63-65,127,128,200-299").unwrap();
        let b = CpuMask::parse_list(300, "3-70,128-250,299").unwrap();
        let built: Vec<usize> = a.and(&b).iter().collect();
        assert_eq!(a.iter_and(&b).collect::<Vec<_>>(), built);
        assert_eq!(a.weight_and(&b), built.len());
        assert_eq!(
            a.iter().collect::<Vec<_>>(),
            (0..300).filter(|&c| a.test(c)).collect::<Vec<_>>()
        );
        let empty = CpuMask::new(300);
        assert_eq!(empty.iter().next(), None);
        assert_eq!(a.iter_and(&empty).next(), None);
        assert_eq!(CpuMask::new(0).iter().next(), None);
        // Restricted to the words that hold a's CPUs, the walk is the same.
        let r = a.word_range();
        let words = (r.start as u32, r.end as u32);
        assert_eq!(a.iter_and_in(&b, words).collect::<Vec<_>>(), built);
        let high = CpuMask::parse_list(300, "200-299").unwrap();
        let r = high.word_range();
        assert_eq!(r, 3..5);
        assert_eq!(
            high.iter_and_in(&b, (3, 5)).collect::<Vec<_>>(),
            high.and(&b).iter().collect::<Vec<_>>()
        );
        assert_eq!(high.iter_and_in(&b, (0, 0)).next(), None);
    }

    use super::*;

    #[test]
    fn list_formatting_matches_kernel_pbl() {
        let m = CpuMask::from_cpus(16, [0, 1, 2, 3, 5, 12, 13, 14, 15]);
        assert_eq!(m.to_list(), "0-3,5,12-15");
        assert_eq!(CpuMask::new(8).to_list(), "");
        assert_eq!(CpuMask::parse_list(16, "0-3,5,12-15").unwrap(), m);
    }

    #[test]
    fn hex_formatting_matches_kernel_pb() {
        // /proc/schedstat on a 16-CPU machine prints domain spans as 4 hex digits.
        let m = CpuMask::from_cpus(16, 0..8);
        assert_eq!(m.to_hex(), "00ff");
        // 40 CPUs: a 2-digit high word then a full 32-bit word.
        let m = CpuMask::from_cpus(40, [0, 39]);
        assert_eq!(m.to_hex(), "80,00000001");
    }

    #[test]
    fn wrap_iteration_starts_at_cpu() {
        let m = CpuMask::from_cpus(8, [0, 2, 4, 6]);
        let order: Vec<_> = m.iter_wrap(3).collect();
        assert_eq!(order, vec![4, 6, 0, 2]);
        assert_eq!(m.iter_wrap(4).collect::<Vec<_>>(), vec![4, 6, 0, 2]);
        assert_eq!(m.iter_wrap(0).collect::<Vec<_>>(), vec![0, 2, 4, 6]);
        assert_eq!(m.iter_wrap(7).collect::<Vec<_>>(), vec![0, 2, 4, 6]);
        assert_eq!(m.iter_wrap(99).collect::<Vec<_>>(), vec![0, 2, 4, 6]);
        assert_eq!(CpuMask::new(8).iter_wrap(3).count(), 0);
        // Across word boundaries, as on machines of more than 64 CPUs.
        let w = CpuMask::from_cpus(200, [1, 63, 64, 130, 199]);
        assert_eq!(
            w.iter_wrap(64).collect::<Vec<_>>(),
            vec![64, 130, 199, 1, 63]
        );
        assert_eq!(w.word_range(), 0..4);
        assert_eq!(CpuMask::from_cpus(200, [130]).word_range(), 2..3);
        assert_eq!(CpuMask::new(200).word_range(), 0..0);
    }

    #[test]
    fn parse_rejects_bad_lists() {
        assert!(CpuMask::parse_list(4, "0-7").is_err());
        assert!(CpuMask::parse_list(8, "3-1").is_err());
        assert!(CpuMask::parse_list(8, "a").is_err());
    }

    #[test]
    fn set_algebra() {
        let a = CpuMask::from_cpus(70, [1, 65]);
        let b = CpuMask::from_cpus(70, [1, 2, 65, 66]);
        assert!(a.is_subset(&b));
        assert!(!b.is_subset(&a));
        assert!(a.intersects(&b));
        assert_eq!(a.first(), Some(1));
        assert_eq!(b.next_from(3), Some(65));
        assert_eq!(b.next_andnot_from(&a, 0), Some(2));
        assert_eq!(b.next_andnot_from(&a, 3), Some(66));
        assert_eq!(b.next_andnot_from(&b, 0), None);
        assert_eq!(b.next_andnot_from(&a, 70), None);
        assert_eq!(b.weight(), 4);
    }
}
