//! `sched_rng()`: each CPU's `struct rnd_state`, drawn with `prandom_u32_state` (the
//! four-component Tausworthe generator of lib/random32.c). The kernel seeds it from the
//! boot entropy pool; fairsim seeds it from the simulation's seed, so runs repeat.

/// `struct rnd_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrandomState {
    s: [u32; 4],
}

/// `TAUSWORTHE(s, a, b, c, d)`.
fn tausworthe(s: u32, a: u32, b: u32, c: u32, d: u32) -> u32 {
    ((s & c) << d) ^ (((s << a) ^ s) >> b)
}

impl PrandomState {
    /// `prandom_seed_state(state, seed)` followed by the generator's warm-up: the seed is
    /// folded to 32 bits (`(seed >> 32) ^ (seed << 10) ^ seed`) and each component gets it,
    /// raised above the component's minimum.
    pub fn seeded(seed: u64) -> PrandomState {
        let i = ((seed >> 32) ^ (seed << 10) ^ seed) as u32;
        let lift = |x: u32, m: u32| if x < m { x + m } else { x };
        let mut st = PrandomState {
            s: [lift(i, 2), lift(i, 8), lift(i, 16), lift(i, 128)],
        };
        for _ in 0..10 {
            st.next_u32();
        }
        st
    }

    /// `prandom_u32_state(state)`.
    pub fn next_u32(&mut self) -> u32 {
        self.s[0] = tausworthe(self.s[0], 6, 13, 4_294_967_294, 18);
        self.s[1] = tausworthe(self.s[1], 2, 27, 4_294_967_288, 2);
        self.s[2] = tausworthe(self.s[2], 13, 21, 4_294_967_280, 7);
        self.s[3] = tausworthe(self.s[3], 3, 12, 4_294_967_168, 13);
        self.s[0] ^ self.s[1] ^ self.s[2] ^ self.s[3]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_roughly_uniform() {
        let mut a = PrandomState::seeded(42);
        let mut b = PrandomState::seeded(42);
        let mut buckets = [0u32; 4];
        for _ in 0..4000 {
            let x = a.next_u32();
            assert_eq!(x, b.next_u32());
            buckets[(x % 1024 / 256) as usize] += 1;
        }
        for c in buckets {
            assert!((800..1200).contains(&c), "{buckets:?}");
        }
        assert_ne!(
            PrandomState::seeded(1).next_u32(),
            PrandomState::seeded(2).next_u32()
        );
    }
}
