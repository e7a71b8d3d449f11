//! A timing wheel in front of a radix heap: the event queue's priority queue.
//!
//! Most of the engine's events are due within microseconds: the end of a system call's run
//! segment, a wakeup's arrival, the next step of a newidle balance, the idle loop's next
//! round. The wheel gives each of them one slot of [`SLOT_NS`] nanoseconds in a ring of
//! [`SLOTS`] slots that covers the next ~65 us, so that scheduling one is an append to a
//! short list and taking the earliest is a scan of an occupancy bitmap from the current
//! slot. Events due further ahead (ticks, long timers, the millisecond run segments of
//! schbench or rt-app) go to a radix heap (`crate::radix`), and each pop takes the
//! earlier of the wheel's first event and the heap's.
//!
//! Within a slot, entries are kept sorted by their whole (time, sequence) key, so the
//! queue pops exactly the order one binary heap would. A new entry almost always sorts
//! last (its sequence number is the largest yet, and most slots hold one time), so the
//! insertion compares with the slot's tail first and walks the list only otherwise.
//!
//! Before this, the radix heap took every event. It moved each entry between buckets two
//! to three times on its way out, and that was about a quarter of all the instructions of
//! seed 000's hackbench; the wheel places each near entry once. A binary heap for the far
//! events instead of the radix heap cost 8% more instructions on seed 001's schbench,
//! whose events are mostly far.
//!
//! An entry whose time is below the last one popped (an engine bug that schedules into
//! the past) still comes out next, so that the world sees time go backwards and says so:
//! in the current slot it sorts first in that slot's list, and in an earlier slot it goes
//! to the radix heap, whose smallest key it then is.

use crate::radix::RadixHeap;

/// Nanoseconds per slot: the engine's events of one instant and its neighbours share a
/// slot, and a slot's list stays short. A power of two, so that the division is a shift.
const SLOT_NS: u64 = 16;
/// Slots in the ring. With [`SLOT_NS`] it covers 65.5 us: a system call, a wakeup, a
/// balance step, an idle state's exit and a short sleep's timer all fall inside it.
const SLOTS: usize = 4096;
const WORDS: usize = SLOTS / 64;
/// No entry (the end of a slot's list, or of the free list).
const NIL: u32 = u32::MAX;

/// One pending entry of the wheel, linked into its slot's list.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u128,
    value: u128,
    next: u32,
}

/// A min-priority queue of `(key, value)` pairs with unique keys whose high 64 bits are a
/// time that the pops never see go backwards (but for the engine bug above).
#[derive(Debug, Clone)]
pub(crate) struct Wheel {
    /// Per slot, the first and last entry of its list (or [`NIL`]).
    heads: Vec<(u32, u32)>,
    /// Bit s of word s / 64 set when slot s holds an entry.
    occupied: [u64; WORDS],
    /// The entries, and the free ones linked from `free`.
    pool: Vec<Entry>,
    free: u32,
    /// Entries in the wheel.
    in_wheel: usize,
    /// The absolute slot (time / [`SLOT_NS`]) of the last key popped: the wheel holds the
    /// entries from it up to [`SLOTS`] - 1 slots beyond, so no two of their absolute
    /// slots share a ring slot.
    cur: u64,
    /// Entries due beyond the wheel's reach, or (an engine bug) before its start.
    far: RadixHeap<u128>,
}

impl Default for Wheel {
    fn default() -> Self {
        Wheel {
            heads: vec![(NIL, NIL); SLOTS],
            occupied: [0; WORDS],
            pool: Vec::new(),
            free: NIL,
            in_wheel: 0,
            cur: 0,
            far: RadixHeap::default(),
        }
    }
}

fn time_of(key: u128) -> u64 {
    (key >> 64) as u64
}

impl Wheel {
    /// Entries pending.
    pub(crate) fn len(&self) -> usize {
        self.in_wheel + self.far.len()
    }

    /// Adds `value` with `key`.
    pub(crate) fn push(&mut self, key: u128, value: u128) {
        let abs = time_of(key) / SLOT_NS;
        match abs.checked_sub(self.cur) {
            Some(ahead) if ahead < SLOTS as u64 - 1 => {
                self.insert(abs as usize % SLOTS, key, value)
            }
            _ => self.far.push(key, value),
        }
    }

    fn alloc(&mut self, key: u128, value: u128) -> u32 {
        let e = Entry {
            key,
            value,
            next: NIL,
        };
        if self.free != NIL {
            let i = self.free;
            self.free = self.pool[i as usize].next;
            self.pool[i as usize] = e;
            i
        } else {
            let i = u32::try_from(self.pool.len()).expect("fewer than 2^32 pending events");
            self.pool.push(e);
            i
        }
    }

    /// Links a new entry into slot `s`'s list at its place by key.
    fn insert(&mut self, s: usize, key: u128, value: u128) {
        let i = self.alloc(key, value);
        self.in_wheel += 1;
        let (head, tail) = self.heads[s];
        if head == NIL {
            self.heads[s] = (i, i);
            self.occupied[s / 64] |= 1 << (s % 64);
            return;
        }
        if self.pool[tail as usize].key < key {
            self.pool[tail as usize].next = i;
            self.heads[s].1 = i;
            return;
        }
        if key < self.pool[head as usize].key {
            self.pool[i as usize].next = head;
            self.heads[s].0 = i;
            return;
        }
        // Somewhere in the middle: after the last entry with a smaller key.
        let mut at = head;
        loop {
            let next = self.pool[at as usize].next;
            if self.pool[next as usize].key > key {
                self.pool[i as usize].next = next;
                self.pool[at as usize].next = i;
                return;
            }
            at = next;
        }
    }

    /// The first occupied ring slot at or after the current one, in ring order.
    fn first_slot(&self) -> usize {
        let start = self.cur as usize % SLOTS;
        let (w0, b0) = (start / 64, start % 64);
        let masked = self.occupied[w0] & (u64::MAX << b0);
        if masked != 0 {
            return w0 * 64 + masked.trailing_zeros() as usize;
        }
        // The words after w0 in ring order, then w0 itself, whose slots below b0 are the
        // ring's far end. A summary word of the non-empty words made this constant time
        // but cost dense runs more than it saved sparse ones (cachegrind: +0.6% on
        // hackbench, -0.8% on schbench).
        for k in 1..=WORDS {
            let w = (w0 + k) % WORDS;
            let bits = self.occupied[w];
            if bits != 0 {
                return w * 64 + bits.trailing_zeros() as usize;
            }
        }
        unreachable!("the wheel holds an entry")
    }

    /// Removes and returns the entry with the smallest key.
    pub(crate) fn pop(&mut self) -> Option<(u128, u128)> {
        let far = self.far.peek();
        if self.in_wheel > 0 {
            let s = self.first_slot();
            let head = self.heads[s].0;
            let e = self.pool[head as usize];
            if far.is_none_or(|k| e.key < k) {
                if e.next == NIL {
                    self.heads[s] = (NIL, NIL);
                    self.occupied[s / 64] &= !(1 << (s % 64));
                } else {
                    self.heads[s].0 = e.next;
                }
                self.pool[head as usize].next = self.free;
                self.free = head;
                self.in_wheel -= 1;
                self.cur = time_of(e.key) / SLOT_NS;
                return Some((e.key, e.value));
            }
        }
        let (key, value) = self.far.pop()?;
        // An entry from the past leaves the wheel's start where it was: the entries
        // already in the wheel are placed relative to it.
        self.cur = self.cur.max(time_of(key) / SLOT_NS);
        Some((key, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::radix::tests::lcg;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Pops in the order a binary heap does, for a mix of delays inside and beyond the
    /// ring, at and just after the current instant, and with sequence numbers out of
    /// order within a time (as the engine never pushes, to exercise the sorted insert).
    #[test]
    fn pops_in_the_order_a_binary_heap_does() {
        let mut w = Wheel::default();
        let mut h = BinaryHeap::new();
        let mut keys = std::collections::BTreeSet::new();
        let mut x = 11u64;
        let mut seq = 0u64;
        let mut now = 0u64;
        for round in 0..300_000u32 {
            for _ in 0..(lcg(&mut x) % 3) {
                let dt = match lcg(&mut x) % 12 {
                    0 => 0,
                    1..=3 => lcg(&mut x) % 40,
                    4..=7 => lcg(&mut x) % 5_000,
                    8 => lcg(&mut x) % 70_000,
                    9 => SLOTS as u64 * SLOT_NS - lcg(&mut x) % 40,
                    10 => lcg(&mut x) % 4_000_000,
                    _ => lcg(&mut x) % 10_000_000_000,
                };
                // Every eighth key due inside the ring takes a sequence number from below
                // the others, for the sorted insert. The radix heap beyond the ring relies
                // on what the engine guarantees: each key pushed for a time comes after
                // those pushed before for it.
                let s = if dt < 60_000 && lcg(&mut x) % 8 == 0 {
                    seq.saturating_sub(lcg(&mut x) % 50) * 2
                } else {
                    seq * 2 + 1
                };
                seq += 1;
                let key = (u128::from(now + dt) << 64) | u128::from(s);
                if !keys.insert(key) {
                    continue;
                }
                w.push(key, u128::from(round));
                h.push(Reverse((key, u128::from(round))));
            }
            if lcg(&mut x) % 2 == 0 {
                let a = w.pop();
                let b = h.pop().map(|Reverse(e)| e);
                assert_eq!(a, b, "round {round}");
                if let Some((k, _)) = a {
                    now = time_of(k);
                }
            }
            assert_eq!(w.len(), h.len());
        }
        while let Some(Reverse(e)) = h.pop() {
            assert_eq!(w.pop(), Some(e));
        }
        assert_eq!(w.pop(), None);
        assert_eq!(w.len(), 0);
    }

    /// A key below the last one popped, in the current slot (999 and 1000 ns share one)
    /// and in an earlier one (5 ns), comes out before the keys that were due.
    #[test]
    fn a_key_in_the_past_comes_out_first() {
        let mut w = Wheel::default();
        w.push(1000 << 64, 0);
        w.push(1010 << 64, 1);
        w.push(2000 << 64, 2);
        assert_eq!(w.pop(), Some((1000 << 64, 0)));
        assert_eq!(999 / SLOT_NS, 1000 / SLOT_NS);
        w.push(999 << 64, 3);
        assert_eq!(w.pop(), Some((999 << 64, 3)));
        w.push(5 << 64, 4);
        assert_eq!(w.pop(), Some((5 << 64, 4)));
        assert_eq!(w.pop(), Some((1010 << 64, 1)));
        assert_eq!(w.pop(), Some((2000 << 64, 2)));
        assert_eq!(w.pop(), None);
    }

    #[test]
    fn entries_are_reused_after_a_storm() {
        let mut w = Wheel::default();
        let mut seq = 0u128;
        for i in 0..100_000u128 {
            w.push((7 << 64) | seq, i);
            seq += 1;
            w.push((7 << 64) | seq, i);
            seq += 1;
            w.pop().unwrap();
            w.pop().unwrap();
        }
        assert_eq!(w.len(), 0);
        assert!(w.pool.len() <= 2, "{}", w.pool.len());
    }
}
