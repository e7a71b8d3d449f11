//! cyclictest: the timer threads' absolute sleeps and their measurement, and the main
//! thread's poll of the run's end.

use super::Step;
use crate::event::Tid;
use crate::workloads::CyclicStep;
use crate::world::World;

impl World {
    /// `CyclicSleep`: a timer thread's `clock_nanosleep` to its next cycle, measured when
    /// it wakes.
    #[inline]
    pub(super) fn op_cyclic_sleep(&mut self, cpu: usize, now: u64, at: u64, t: Tid) -> Step {
        let w = self.tasks[t].workload;
        let k = (t - self.workloads[w].tasks.0).saturating_sub(1);
        if self.tasks[t].timer_fired {
            self.tasks[t].timer_fired = false;
            // The measurement window opens at `warmup`; `window_start`
            // reads 0 until then, so it cannot tell a warm-up cycle.
            let counted = at >= self.config.warmup;
            self.workloads[w].cyclic.woke(k, at, cpu, counted);
            self.tasks[t].pc += 1;
            return Step::Next;
        }
        if self.tasks[t].tokens > 0 {
            // main's pthread_kill(SIGTERM): clock_nanosleep returns EINTR and
            // timerthread leaves its loop without measuring.
            self.exit_current(cpu, now, t);
            return Step::Stop;
        }
        if self.tasks[t].timer.is_some() {
            // Woken before its instant by something else: sleep on.
            self.tasks[t].waiting_sem = true;
            self.block_and_schedule(cpu, now, t);
            return Step::Stop;
        }
        match self.workloads[w].cyclic.sleep(k, now) {
            CyclicStep::Exit => {
                self.exit_current(cpu, now, t);
                Step::Stop
            }
            CyclicStep::Until(next) if next > now => {
                self.arm_timer(cpu, t, now, next - now);
                // A post (main's signal) wakes the sleeper, as a signal
                // interrupts clock_nanosleep.
                self.tasks[t].waiting_sem = true;
                self.block_and_schedule(cpu, now, t);
                Step::Stop
            }
            CyclicStep::Until(_) => {
                // The instant has passed: the sleep returns at once.
                let counted = now >= self.config.warmup;
                self.workloads[w].cyclic.woke(k, now, cpu, counted);
                self.tasks[t].pc += 1;
                Step::Next
            }
        }
    }

    /// `CyclicPoll`: main leaves its loop (to `after`) once the run's end has come.
    #[inline]
    pub(super) fn op_cyclic_poll(&mut self, t: Tid, after: usize) -> Step {
        let w = self.tasks[t].workload;
        if self.workloads[w].cyclic.poll() {
            self.tasks[t].loops.pop();
            self.tasks[t].pc = after;
        } else {
            self.tasks[t].pc += 1;
        }
        Step::Next
    }
}
