//! The program's own control flow: loops, marks and the timed break out of a loop.

use super::Step;
use crate::event::Tid;
use crate::world::World;

impl World {
    /// `Mark`: notes the instant in slot `slot` for a later `BreakAfter`.
    #[inline(never)]
    pub(super) fn op_mark(&mut self, at: u64, t: Tid, slot: usize) -> Step {
        self.tasks[t].marks[slot.min(1)] = Some(at);
        self.tasks[t].pc += 1;
        Step::Next
    }

    /// `LoopBegin`: opens a loop of `times` rounds, or endless without.
    #[inline(never)]
    pub(super) fn op_loop_begin(&mut self, t: Tid, times: Option<u64>) -> Step {
        self.tasks[t].loops.push(times.unwrap_or(u64::MAX));
        self.tasks[t].pc += 1;
        Step::Next
    }

    /// `LoopEnd`: goes back to the body after `begin` while rounds are left.
    #[inline(always)]
    pub(super) fn op_loop_end(&mut self, t: Tid, begin: usize) -> Step {
        let task = &mut self.tasks[t];
        let left = task.loops.last_mut().expect("loop stack");
        if *left == u64::MAX {
            task.pc = begin + 1;
        } else if *left > 1 {
            *left -= 1;
            task.pc = begin + 1;
        } else {
            task.loops.pop();
            task.pc += 1;
        }
        Step::Next
    }

    /// `BreakAfter`: leaves the loop (to `after`) once `dur` has passed since the mark in
    /// `slot`, keeping the loop's counter open with `keep_count`.
    #[inline(never)]
    pub(super) fn op_break_after(
        &mut self,
        at: u64,
        t: Tid,
        slot: usize,
        dur: u64,
        after: usize,
        keep_count: bool,
    ) -> Step {
        let since = self.tasks[t].marks[slot.min(1)].unwrap_or(at);
        if at >= since.saturating_add(dur) {
            if !keep_count {
                self.tasks[t].loops.pop();
            }
            self.tasks[t].pc = after;
        } else {
            self.tasks[t].pc += 1;
        }
        Step::Next
    }
}
