//! A radix heap: the event queue's priority queue for the events due beyond the timing
//! wheel's reach (`crate::wheel`), for keys that never go below the last one popped.
//!
//! Virtual time never goes backwards and every event is scheduled at or after the
//! current instant with a sequence number larger than any before it, so the queue's
//! (time, sequence) keys are monotone: each new key is larger than the last key popped.
//! A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest
//! path problem", JACM 1990) exploits that: an entry sits in the bucket of the highest
//! base-16 digit in which its time differs from the last popped time (one bucket per
//! digit position and value, 256 in all), and only the lowest non-empty bucket is ever
//! sorted out, by moving its entries to lower buckets. Each entry moves at most once per
//! digit of the time; with one bucket per bit instead, the engine's events (due from a
//! microsecond to a few milliseconds ahead) moved about three times each, and the
//! base-16 form takes 2-4% fewer instructions per run (cachegrind, seed 000's scenario
//! and hackbench). Entries of one time keep the order they were pushed in,
//! which is their sequence order, so the heap pops exactly the (time, sequence) order a
//! binary heap does, with less work per event for the engine's mix (a few hundred pending
//! events, many of them at the same instant or within microseconds). Bucketing on the
//! whole 128-bit key instead was slower than the binary heap: entries of one instant
//! differ in their sequence bits and were sorted out again and again.
//!
//! A key below the last popped one (an engine bug that schedules into the past) is kept
//! apart and popped first, so that the world still sees time go backwards and says so.

/// A min-priority queue of `(key, value)` pairs (the value stored inline, so that a pop
/// needs no second lookup) with unique, monotone keys, ordered by
/// the key's high 64 bits (the time) in buckets and by its low 64 bits (the sequence)
/// through insertion order: entries of one time are pushed in increasing sequence, and
/// sorting a bucket out keeps their relative order, so the entries of the minimum time
/// leave bucket 0 first in, first out.
#[derive(Debug, Clone)]
pub(crate) struct RadixHeap<V> {
    /// The time of the last key popped: every pending key's time is at or above it (or
    /// the entry is in `past`).
    last: u64,
    /// The last key popped.
    last_key: u128,
    /// Entries of time `last`, in sequence order, from `head` on.
    now: Vec<(u128, V)>,
    head: usize,
    /// `buckets[16 p + v]` holds the entries whose highest base-16 digit of the time
    /// that differs from `last`'s is digit p, with value v there.
    buckets: Vec<Vec<(u128, V)>>,
    /// Bit i of word i / 64 set when `buckets[i]` is not empty.
    nonempty: [u64; 4],
    /// Entries pushed below the last key popped (never, unless the engine schedules into
    /// the past).
    past: Vec<(u128, V)>,
    /// The smallest key, once a [`RadixHeap::peek`] has found it and until the next pop
    /// (a push only lowers it). A peek must not sort a bucket out as a pop does: that
    /// would move `last` up to the smallest pending time, and the timing wheel in front
    /// of this heap pops events of its own before this heap's next pop, after which keys
    /// below that time may still come.
    min: Option<Option<u128>>,
    len: usize,
}

impl<V> Default for RadixHeap<V> {
    fn default() -> Self {
        RadixHeap {
            last: 0,
            last_key: 0,
            now: Vec::new(),
            head: 0,
            buckets: (0..256).map(|_| Vec::new()).collect(),
            nonempty: [0; 4],
            past: Vec::new(),
            min: None,
            len: 0,
        }
    }
}

fn time_of(key: u128) -> u64 {
    (key >> 64) as u64
}

impl<V: Copy> RadixHeap<V> {
    /// Pending entries.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn put(&mut self, key: u128, value: V) {
        let time = time_of(key);
        let diff = time ^ self.last;
        if diff == 0 {
            self.now.push((key, value));
        } else {
            // The bucket is the highest differing digit and the entry's value there: the
            // entries of a bucket below another's all come first, so only the lowest
            // non-empty bucket is ever sorted out.
            let digit = (63 - diff.leading_zeros() as usize) / 4;
            let b = digit * 16 + ((time >> (4 * digit)) & 15) as usize;
            self.buckets[b].push((key, value));
            self.nonempty[b / 64] |= 1u64 << (b % 64);
        }
    }

    /// The lowest non-empty bucket, if any.
    fn lowest(&self) -> Option<usize> {
        let w = self.nonempty.iter().position(|&w| w != 0)?;
        Some(w * 64 + self.nonempty[w].trailing_zeros() as usize)
    }

    /// Adds `value` with `key` (keys are unique and, but for an engine bug, above the
    /// last key popped).
    pub(crate) fn push(&mut self, key: u128, value: V) {
        self.len += 1;
        if let Some(m) = &mut self.min {
            *m = Some(m.map_or(key, |m| m.min(key)));
        }
        if key < self.last_key {
            self.past.push((key, value));
        } else {
            self.put(key, value);
        }
    }

    /// Makes the entries of the smallest pending time the current ones (sorting out the
    /// lowest non-empty bucket), unless some are left; only `pop` calls it, so that `last`
    /// is always the time of the last key popped and the keys pushed after it are above
    /// it. Returns false when the heap holds nothing at or above `last`.
    fn settle(&mut self) -> bool {
        if self.head < self.now.len() {
            return true;
        }
        self.now.clear();
        self.head = 0;
        let Some(b) = self.lowest() else {
            return false;
        };
        self.nonempty[b / 64] &= !(1u64 << (b % 64));
        let entries = std::mem::take(&mut self.buckets[b]);
        self.last = entries
            .iter()
            .map(|e| time_of(e.0))
            .min()
            .unwrap_or(self.last);
        for &(k, v) in &entries {
            // Every entry of bucket b agrees with the new minimum down to b's digit, so it
            // lands in `now` or a bucket below b, in the order it was pushed.
            self.put(k, v);
        }
        // Give the emptied bucket its allocation back.
        let mut entries = entries;
        entries.clear();
        self.buckets[b] = entries;
        true
    }

    /// The smallest key, without removing its entry: found in the lowest non-empty
    /// bucket without sorting it out, and remembered until the next pop.
    pub(crate) fn peek(&mut self) -> Option<u128> {
        if let Some(m) = self.min {
            return m;
        }
        let m = if !self.past.is_empty() {
            self.past.iter().map(|e| e.0).min()
        } else if self.head < self.now.len() {
            Some(self.now[self.head].0)
        } else {
            self.lowest()
                .and_then(|b| self.buckets[b].iter().map(|e| e.0).min())
        };
        self.min = Some(m);
        m
    }

    /// Removes the entry with the smallest key.
    pub(crate) fn pop(&mut self) -> Option<(u128, V)> {
        self.min = None;
        if !self.past.is_empty() {
            let i = (0..self.past.len()).min_by_key(|&i| self.past[i].0)?;
            self.len -= 1;
            return Some(self.past.swap_remove(i));
        }
        if !self.settle() {
            return None;
        }
        self.len -= 1;
        let e = self.now[self.head];
        self.head += 1;
        self.last_key = e.0;
        // A storm of events at one instant keeps appending to `now` while it is being
        // consumed, so the consumed prefix is dropped once it is half the vector: memory
        // stays proportional to what is pending.
        if self.head >= 1024 && self.head * 2 >= self.now.len() {
            self.now.drain(..self.head);
            self.head = 0;
        }
        Some(e)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// A small deterministic generator for the queue tests' event mix (the wheel's too).
    pub(crate) fn lcg(x: &mut u64) -> u64 {
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
            if lcg(&mut x) % 5 == 0 {
                assert_eq!(r.peek(), h.peek().map(|Reverse(e)| e.0), "round {round}");
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
        }
        while let Some(Reverse(e)) = h.pop() {
            assert_eq!(r.pop(), Some(e));
        }
        assert_eq!(r.pop(), None);
        assert_eq!(r.len(), 0);
    }

    #[test]
    fn a_storm_at_one_instant_keeps_memory_bounded() {
        let mut r = RadixHeap::default();
        let mut seq = 0u128;
        r.push((7 << 64) | seq, 0);
        // Every pop at instant 7 pushes another event at instant 7.
        for i in 0..100_000u32 {
            let (k, _) = r.pop().unwrap();
            assert_eq!(k, (7 << 64) | seq);
            seq += 1;
            r.push((7 << 64) | seq, i);
        }
        assert_eq!(r.len(), 1);
        assert!(r.now.capacity() < 4096, "{}", r.now.capacity());
    }

    #[test]
    fn a_key_in_the_past_comes_out_first() {
        let mut r = RadixHeap::default();
        r.push(10 << 64, 0);
        r.push(20 << 64, 1);
        assert_eq!(r.pop(), Some((10 << 64, 0)));
        r.push(5 << 64, 2);
        assert_eq!(r.pop(), Some((5 << 64, 2)));
        assert_eq!(r.pop(), Some((20 << 64, 1)));
        assert_eq!(r.pop(), None);
    }
}
