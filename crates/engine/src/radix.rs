//! A radix heap: the event queue's priority queue, for keys that never go below the last
//! one popped.
//!
//! Virtual time never goes backwards and every event is scheduled at or after the
//! current instant with a sequence number larger than any before it, so the queue's
//! (time, sequence) keys are monotone: each new key is larger than the last key popped.
//! A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest
//! path problem", JACM 1990) exploits that: an entry sits in the bucket of the highest
//! bit in which its key differs from the last popped key, and only the lowest non-empty
//! bucket is ever sorted out, by moving its entries to lower buckets. Each entry moves
//! at most once per bit, and most pops take the one entry of bucket 0. It pops exactly
//! the order a binary heap does (keys are unique), with less work per event for the
//! engine's mix (a few hundred pending events, most of them due within microseconds).
//!
//! A key below the last popped one (an engine bug that schedules into the past) is kept
//! apart and popped first, so that the world still sees time go backwards and says so.

/// A min-priority queue of `(key, value)` pairs with unique, monotone keys.
#[derive(Debug, Clone)]
pub(crate) struct RadixHeap {
    /// The last key popped: every pending key is above it (or in `past`).
    last: u128,
    /// `buckets[0]` holds the entry equal to `last` once found; `buckets[i]` for i >= 1
    /// the entries whose highest bit differing from `last` is bit i - 1.
    buckets: Vec<Vec<(u128, u32)>>,
    /// Bit i set when `buckets[i + 1]` is not empty (bucket 0 is checked directly).
    nonempty: u128,
    /// Entries pushed below `last` (never, unless the engine schedules into the past).
    past: Vec<(u128, u32)>,
    /// A spare buffer, so that sorting out a bucket allocates nothing.
    spare: Vec<(u128, u32)>,
    len: usize,
}

impl Default for RadixHeap {
    fn default() -> Self {
        RadixHeap {
            last: 0,
            buckets: (0..=128).map(|_| Vec::new()).collect(),
            nonempty: 0,
            past: Vec::new(),
            spare: Vec::new(),
            len: 0,
        }
    }
}

/// The bucket of `key` relative to `last` (`key >= last`).
fn bucket(last: u128, key: u128) -> usize {
    let diff = key ^ last;
    if diff == 0 {
        0
    } else {
        128 - diff.leading_zeros() as usize
    }
}

impl RadixHeap {
    /// Pending entries.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn put(&mut self, key: u128, value: u32) {
        let b = bucket(self.last, key);
        self.buckets[b].push((key, value));
        if b > 0 {
            self.nonempty |= 1u128 << (b - 1);
        }
    }

    /// Adds `value` with `key`.
    pub(crate) fn push(&mut self, key: u128, value: u32) {
        self.len += 1;
        if key < self.last {
            self.past.push((key, value));
        } else {
            self.put(key, value);
        }
    }

    /// Moves the smallest key into bucket 0 (sorting out the lowest non-empty bucket),
    /// unless it is already there. Returns false when the heap holds nothing above
    /// `last`.
    fn settle(&mut self) -> bool {
        if !self.buckets[0].is_empty() {
            return true;
        }
        if self.nonempty == 0 {
            return false;
        }
        let b = self.nonempty.trailing_zeros() as usize + 1;
        self.nonempty &= !(1u128 << (b - 1));
        let mut entries = std::mem::replace(&mut self.buckets[b], std::mem::take(&mut self.spare));
        let min = entries.iter().map(|e| e.0).min().unwrap_or(self.last);
        self.last = min;
        for &(k, v) in &entries {
            // Every entry of bucket b agrees with the new minimum above bit b - 1, so
            // it lands in a bucket below b.
            self.put(k, v);
        }
        entries.clear();
        self.spare = entries;
        true
    }

    /// Removes the entry with the smallest key.
    pub(crate) fn pop(&mut self) -> Option<(u128, u32)> {
        if !self.past.is_empty() {
            let i = (0..self.past.len()).min_by_key(|&i| self.past[i].0)?;
            self.len -= 1;
            return Some(self.past.swap_remove(i));
        }
        if !self.settle() {
            return None;
        }
        self.len -= 1;
        // Keys are unique, so bucket 0 holds exactly the one entry equal to `last`.
        self.buckets[0].pop()
    }

    /// The smallest key, sorting out a bucket if needed.
    pub(crate) fn peek(&mut self) -> Option<u128> {
        if let Some(k) = self.past.iter().map(|e| e.0).min() {
            return Some(k);
        }
        if !self.settle() {
            return None;
        }
        self.buckets[0].last().map(|e| e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// A small deterministic generator for the test's event mix.
    fn lcg(x: &mut u64) -> u64 {
        *x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *x >> 33
    }

    #[test]
    fn pops_in_the_order_a_binary_heap_does() {
        let mut r = RadixHeap::default();
        let mut h = BinaryHeap::new();
        let mut x = 7u64;
        let mut seq = 0u64;
        let mut now = 0u64;
        for round in 0..200_000u32 {
            // Mostly near-future events, some at the same instant, a few far ahead.
            let pushes = (lcg(&mut x) % 3) as u32;
            for _ in 0..pushes {
                let dt = match lcg(&mut x) % 10 {
                    0 => 0,
                    1..=6 => lcg(&mut x) % 5_000,
                    7 | 8 => lcg(&mut x) % 4_000_000,
                    _ => lcg(&mut x) % 10_000_000_000,
                };
                let key = (u128::from(now + dt) << 64) | u128::from(seq);
                seq += 1;
                r.push(key, round);
                h.push(Reverse((key, round)));
            }
            if lcg(&mut x) % 2 == 0 {
                let a = r.pop();
                let b = h.pop().map(|Reverse(e)| e);
                assert_eq!(a, b, "round {round}");
                if let Some((k, _)) = a {
                    now = (k >> 64) as u64;
                }
            }
            assert_eq!(r.len(), h.len());
            assert_eq!(r.peek(), h.peek().map(|Reverse(e)| e.0));
        }
        while let Some(Reverse(e)) = h.pop() {
            assert_eq!(r.pop(), Some(e));
        }
        assert_eq!(r.pop(), None);
        assert_eq!(r.len(), 0);
    }

    #[test]
    fn a_key_in_the_past_comes_out_first() {
        let mut r = RadixHeap::default();
        r.push(10 << 64, 0);
        r.push(20 << 64, 1);
        assert_eq!(r.pop(), Some((10 << 64, 0)));
        r.push(5 << 64, 2);
        assert_eq!(r.peek(), Some(5 << 64));
        assert_eq!(r.pop(), Some((5 << 64, 2)));
        assert_eq!(r.pop(), Some((20 << 64, 1)));
        assert_eq!(r.pop(), None);
    }
}
