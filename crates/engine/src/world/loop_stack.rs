//! The counters of a task's open loops.

/// Remaining iterations of a task's open loops, innermost on top.
///
/// The innermost counter, the one every `LoopEnd` reads and decrements, lives in the
/// task's record; the outer ones, touched only when an inner loop opens or closes, go to
/// a vector. A plain vector put every `LoopEnd` behind a pointer to a separate allocation:
/// a cache miss on each round of a hackbench sender's or receiver's loop. The stack
/// takes the 24 bytes the vector took, so the task record's first line keeps its fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoopStack {
    /// The innermost counter, when `depth > 0`.
    top: u64,
    /// Open loops.
    depth: u32,
    /// The counters of the loops around the innermost one, outermost first (boxed, so
    /// that a task without nested loops keeps a null pointer here, and the stack its 24
    /// bytes: a bare vector would take 24 of its own).
    #[allow(clippy::box_collection)]
    outer: Option<Box<Vec<u64>>>,
}

impl LoopStack {
    /// Opens a loop of `left` iterations inside the open ones.
    pub fn push(&mut self, left: u64) {
        if self.depth > 0 {
            self.outer.get_or_insert_default().push(self.top);
        }
        self.top = left;
        self.depth += 1;
    }

    /// Closes the innermost loop.
    pub fn pop(&mut self) -> Option<u64> {
        if self.depth == 0 {
            return None;
        }
        let left = self.top;
        self.depth -= 1;
        if self.depth > 0 {
            self.top = self
                .outer
                .as_mut()
                .and_then(|o| o.pop())
                .unwrap_or_default();
        }
        Some(left)
    }

    /// The innermost counter.
    pub fn last_mut(&mut self) -> Option<&mut u64> {
        (self.depth > 0).then_some(&mut self.top)
    }

    /// The innermost counter, read only: the iterations left in the innermost open loop,
    /// the one under way included (a report uses it to count finished iterations).
    pub fn innermost(&self) -> Option<u64> {
        (self.depth > 0).then_some(self.top)
    }

    /// Open loops.
    pub fn len(&self) -> usize {
        self.depth as usize
    }

    /// Whether no loop is open.
    pub fn is_empty(&self) -> bool {
        self.depth == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Knuth's MMIX linear congruential step, the high bits as the draw: a test's own
    /// reproducible sequence.
    fn lcg(x: &mut u64) -> u64 {
        *x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *x >> 33
    }

    #[test]
    fn takes_no_more_room_than_a_vector() {
        assert_eq!(
            std::mem::size_of::<LoopStack>(),
            std::mem::size_of::<Vec<u64>>()
        );
    }

    #[test]
    fn behaves_as_a_vector_used_as_a_stack() {
        let mut s = LoopStack::default();
        let mut v: Vec<u64> = Vec::new();
        let mut x = 5u64;
        for _ in 0..10_000 {
            lcg(&mut x);
            match (x >> 60) % 4 {
                0 | 1 => {
                    s.push(x >> 40);
                    v.push(x >> 40);
                }
                2 => assert_eq!(s.pop(), v.pop()),
                _ => {
                    if let (Some(a), Some(b)) = (s.last_mut(), v.last_mut()) {
                        *a -= 1;
                        *b -= 1;
                    }
                    assert_eq!(s.last_mut().is_none(), v.last_mut().is_none());
                }
            }
            assert_eq!(s.len(), v.len());
            assert_eq!(s.is_empty(), v.is_empty());
        }
    }
}
