//! Sleeping and waking: timed sleeps, semaphore-like waits and posts, and schbench's wake
//! lists with the latency their wakees record.

use super::Step;
use crate::event::Tid;
use crate::program::{DurSpec, Target};
use crate::world::World;
use fairsim_des::time::US;

impl World {
    /// `Sleep`: arms the task's timer and blocks; the fired timer completes the sleep.
    #[inline]
    pub(super) fn op_sleep(&mut self, cpu: usize, now: u64, t: Tid, dur: DurSpec) -> Step {
        if self.tasks[t].timer_fired {
            self.tasks[t].timer_fired = false;
            self.tasks[t].pc += 1;
            return Step::Next;
        }
        let d = self.draw(t, dur);
        self.arm_timer(cpu, t, now, d);
        self.block_and_schedule(cpu, now, t);
        Step::Stop
    }

    /// `Wait`: takes a posted token, or ends on its timeout, or blocks until either comes.
    #[inline]
    pub(super) fn op_wait(
        &mut self,
        cpu: usize,
        now: u64,
        t: Tid,
        timeout: Option<DurSpec>,
    ) -> Step {
        if self.tasks[t].tokens > 0 {
            self.tasks[t].tokens -= 1;
            self.cancel_timer(t);
            self.tasks[t].timer_fired = false;
            self.tasks[t].waiting_sem = false;
            self.tasks[t].pc += 1;
            return Step::Next;
        }
        if self.tasks[t].timer_fired {
            self.tasks[t].timer_fired = false;
            self.tasks[t].waiting_sem = false;
            self.tasks[t].pc += 1;
            return Step::Next;
        }
        if let Some(d) = timeout {
            if self.tasks[t].timer.is_none() {
                let d = self.draw(t, d);
                self.arm_timer(cpu, t, now, d);
            }
        }
        self.tasks[t].waiting_sem = true;
        self.block_and_schedule(cpu, now, t);
        Step::Stop
    }

    /// `ClearTokens`: forgets the posts not yet waited for.
    #[inline(never)]
    pub(super) fn op_clear_tokens(&mut self, t: Tid) -> Step {
        self.tasks[t].tokens = 0;
        self.tasks[t].pc += 1;
        Step::Next
    }

    /// `Post`: posts the target, waking it if it waits.
    #[inline]
    pub(super) fn op_post(&mut self, cpu: usize, now: u64, t: Tid, to: Target) -> Step {
        self.tasks[t].pc += 1;
        if let Some(x) = self.target(t, to) {
            self.post(x, cpu, now);
        }
        Step::Next
    }

    /// `PostChildren`: posts every child, in order.
    #[inline(never)]
    pub(super) fn op_post_children(&mut self, cpu: usize, now: u64, t: Tid) -> Step {
        self.tasks[t].pc += 1;
        let (a, b) = self.tasks[t].children;
        for x in a..b {
            self.post(x, cpu, now);
        }
        Step::Next
    }

    /// `ListAdd`: puts the task on the target's wake list.
    #[inline(never)]
    pub(super) fn op_list_add(&mut self, t: Tid, to: Target) -> Step {
        self.tasks[t].pc += 1;
        if let Some(x) = self.target(t, to) {
            self.tasks[x].list.push(t);
        }
        Step::Next
    }

    /// `WakeList`: stamps and posts every task on the task's wake list.
    #[inline(never)]
    pub(super) fn op_wake_list(&mut self, cpu: usize, now: u64, t: Tid) -> Step {
        self.tasks[t].pc += 1;
        let list = std::mem::take(&mut self.tasks[t].list);
        // xlist_add prepends, so the splice walks the newest entry first.
        for &x in list.iter().rev() {
            self.tasks[x].stamp = now;
        }
        for &x in list.iter().rev() {
            self.post(x, cpu, now);
        }
        Step::Next
    }

    /// `RecordLatency`: records the time since the task's waker stamped it.
    #[inline]
    pub(super) fn op_record_latency(&mut self, at: u64, t: Tid, hist: usize) -> Step {
        self.tasks[t].pc += 1;
        // gettimeofday() has microsecond resolution; schbench records
        // positive deltas only.
        let us = at / US - self.tasks[t].stamp / US;
        if us > 0 {
            let w = self.tasks[t].workload;
            self.workloads[w].record(hist, us);
        }
        Step::Next
    }
}
