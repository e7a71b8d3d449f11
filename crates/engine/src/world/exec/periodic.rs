//! rt-app's periodic passes: the absolute-timer sleep between passes, the pass's end and
//! clock readings, and its thread affinity changes.

use super::Step;
use crate::event::Tid;
use crate::program::RtPoint;
use crate::workloads::PassEnd;
use crate::world::World;

impl World {
    /// `SleepUntil`: sleeps on the pass clock's absolute timer until the next period.
    #[inline]
    pub(super) fn op_sleep_until(
        &mut self,
        cpu: usize,
        now: u64,
        at: u64,
        t: Tid,
        clock: usize,
        period: u64,
    ) -> Step {
        let w = self.tasks[t].workload;
        let me = t - self.workloads[w].tasks.0;
        if self.tasks[t].timer_fired {
            self.tasks[t].timer_fired = false;
            self.workloads[w].periodic.woke(me, at);
            self.tasks[t].pc += 1;
            return Step::Next;
        }
        if self.tasks[t].timer.is_some() {
            // Woken before its instant by something else: sleep on.
            self.block_and_schedule(cpu, now, t);
            return Step::Stop;
        }
        match self.workloads[w].periodic.timer(me, clock, period, now) {
            Some(until) => {
                self.arm_timer(cpu, t, now, until - now);
                self.block_and_schedule(cpu, now, t);
                Step::Stop
            }
            None => {
                self.tasks[t].pc += 1;
                Step::Next
            }
        }
    }

    /// `PhaseEnd`: records a pass of phase `row`, counted inside the measurement window.
    #[inline]
    pub(super) fn op_phase_end(&mut self, cpu: usize, at: u64, t: Tid, row: usize) -> Step {
        let w = self.tasks[t].workload;
        let me = t - self.workloads[w].tasks.0;
        // As for cyclictest (`cyclic.rs`): `window_start` reads 0 until the window
        // opens, so a pass is counted by the warm-up's end itself.
        let counted = at >= self.config.warmup;
        let end = PassEnd {
            at,
            cpu: cpu as u32,
            freq_khz: self.cur_khz(cpu),
        };
        self.workloads[w].periodic.phase_end(me, row, counted, end);
        self.tasks[t].pc += 1;
        Step::Next
    }

    /// `RtStamp`: a clock reading around a pass or its run events.
    #[inline]
    pub(super) fn op_rt_stamp(&mut self, at: u64, t: Tid, point: RtPoint) -> Step {
        let w = self.tasks[t].workload;
        let me = t - self.workloads[w].tasks.0;
        self.workloads[w].periodic.stamp(me, point, at);
        self.tasks[t].pc += 1;
        Step::Next
    }

    /// `SetAffinity`: `set_thread_affinity` at the start of a pass, when the set changes;
    /// the task stops here if the change moves it off this CPU.
    #[inline]
    pub(super) fn op_set_affinity(&mut self, cpu: usize, now: u64, t: Tid, set: usize) -> Step {
        self.tasks[t].pc += 1;
        let w = self.tasks[t].workload;
        let me = t - self.workloads[w].tasks.0;
        if let Some(mask) = self.workloads[w].periodic.affinity_change(me, set) {
            if self.set_affinity(cpu, now, t, mask) {
                return Step::Stop;
            }
        }
        Step::Next
    }
}
