//! The tools' own operations: a task calls its workload's model ([`crate::hook`]) and the
//! world does what the model answers, in its own generic terms.

use super::Step;
use crate::event::Tid;
use crate::hook::{HookAct, HookCx, SleepAct, WorkloadModel};
use crate::world::World;

impl World {
    /// Calls `f` on the model of task `t`'s workload with the task's view of the world,
    /// `at` being the instant of the operation; `None` for a workload without a model,
    /// which only a workload generator's bug can give a hook operation.
    fn with_model<R>(
        &mut self,
        cpu: usize,
        now: u64,
        at: u64,
        t: Tid,
        f: impl FnOnce(&mut dyn WorkloadModel, &mut HookCx<'_>) -> R,
    ) -> Option<R> {
        let w = self.tasks[t].workload;
        let epoch = self.tasks[t]
            .parent
            .and_then(|p| self.tasks[p].marks[0])
            .unwrap_or(0);
        let freq_khz = self.cur_khz(cpu);
        let warmup = self.config.warmup;
        let rt = &mut self.workloads[w];
        let me = t - rt.tasks.0;
        debug_assert!(
            rt.model.is_some(),
            "a hook operation in a workload without a model"
        );
        let model = rt.model.as_deref_mut()?;
        let mut cx = HookCx {
            me,
            cpu,
            at,
            now,
            warmup,
            freq_khz,
            rng: &mut rt.rng,
            epoch,
        };
        Some(f(model, &mut cx))
    }

    /// `Hook`: the model's operation `call`, then what it answers.
    #[inline(never)]
    pub(super) fn op_hook(&mut self, cpu: usize, now: u64, at: u64, t: Tid, call: u32) -> Step {
        let act = self.with_model(cpu, now, at, t, |m, cx| m.hook(call, cx));
        match act.unwrap_or(HookAct::Next) {
            HookAct::Next => {
                self.tasks[t].pc += 1;
                Step::Next
            }
            HookAct::SetAffinity(mask) => {
                self.tasks[t].pc += 1;
                if self.set_affinity(cpu, now, t, mask) {
                    Step::Stop
                } else {
                    Step::Next
                }
            }
            HookAct::LeaveLoop { after } => {
                self.tasks[t].loops.pop();
                self.tasks[t].pc = after;
                Step::Next
            }
            HookAct::Exchange { request, response } => {
                self.tasks[t].pc += 1;
                self.set_exchange(t, request, response);
                Step::Next
            }
        }
    }

    /// `HookSleep`: sleeps on an absolute timer until the instant the model names, and
    /// tells the model when the timer has fired.
    #[inline(never)]
    pub(super) fn op_hook_sleep(
        &mut self,
        cpu: usize,
        now: u64,
        at: u64,
        t: Tid,
        call: u32,
        interruptible: bool,
    ) -> Step {
        if self.tasks[t].timer_fired {
            self.tasks[t].timer_fired = false;
            self.with_model(cpu, now, at, t, |m, cx| m.woke(call, cx));
            self.tasks[t].pc += 1;
            return Step::Next;
        }
        if interruptible && self.tasks[t].tokens > 0 {
            // A signal (a post) interrupts the sleep: `clock_nanosleep` returns EINTR and
            // the thread leaves its loop without measuring.
            self.exit_current(cpu, now, t);
            return Step::Stop;
        }
        if self.tasks[t].timer.is_some() {
            // Woken before its instant by something else: sleep on.
            if interruptible {
                self.tasks[t].waiting_sem = true;
            }
            self.block_and_schedule(cpu, now, t);
            return Step::Stop;
        }
        let act = self.with_model(cpu, now, at, t, |m, cx| m.sleep(call, cx));
        match act.unwrap_or(SleepAct::Return) {
            SleepAct::Exit => {
                self.exit_current(cpu, now, t);
                Step::Stop
            }
            SleepAct::Until(until) if until > now => {
                self.arm_timer(cpu, t, now, until - now);
                // A post wakes an interruptible sleeper, as a signal interrupts
                // `clock_nanosleep`.
                if interruptible {
                    self.tasks[t].waiting_sem = true;
                }
                self.block_and_schedule(cpu, now, t);
                Step::Stop
            }
            SleepAct::Until(_) | SleepAct::Return => {
                self.tasks[t].pc += 1;
                Step::Next
            }
        }
    }
}
