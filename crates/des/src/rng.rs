//! The world's one seeded random number generator and the sub-seeds derived from it.
//!
//! ChaCha8 is used by name (not `StdRng`, whose algorithm may change between releases), so
//! a seed gives the same stream on every platform and every build. Workloads get their own
//! streams, derived from the world seed and their index, so adding a workload does not
//! change the draws of the others.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

/// The default seed when the user gives none.
pub const DEFAULT_SEED: u64 = 42;

/// A deterministic random stream.
#[derive(Debug, Clone)]
pub struct SimRng(ChaCha8Rng);

impl SimRng {
    /// The stream for `seed`.
    pub fn new(seed: u64) -> Self {
        SimRng(ChaCha8Rng::seed_from_u64(seed))
    }

    /// A sub-stream for consumer number `index` (a workload), independent of how many
    /// draws this stream has made.
    pub fn derive(seed: u64, index: u64) -> Self {
        // SplitMix64 finalizer over (seed, index): distinct, well-mixed sub-seeds.
        let mut z = seed ^ index.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        SimRng::new(z)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A value in `0..bound` (`bound` > 0), by rejection so that it is unbiased.
    pub fn below(&mut self, bound: u64) -> u64 {
        assert!(bound > 0, "below(0)");
        let zone = u64::MAX - (u64::MAX % bound) - 1;
        loop {
            let v = self.next_u64();
            if v <= zone {
                return v % bound;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_derived_streams_differ() {
        let a: Vec<u64> = (0..4).map(|_| SimRng::new(7).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = SimRng::derive(7, 0);
        let mut y = SimRng::derive(7, 1);
        assert_ne!(x.next_u64(), y.next_u64());
        let mut r = SimRng::new(1);
        assert!((0..1000).all(|_| r.below(10) < 10));
    }
}
