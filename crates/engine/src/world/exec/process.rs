//! Processes: forking the task's children, exec with the exec balance, and exit.

use super::Step;
use crate::event::Tid;
use crate::profile::Ctx;
use crate::world::{RtState, World};

impl World {
    /// `ForkChildren`: forks the next child and comes back to fork the one after, until
    /// all are forked.
    #[inline(never)]
    pub(super) fn op_fork_children(&mut self, cpu: usize, now: u64, t: Tid) -> Step {
        let (_, end) = self.tasks[t].children;
        let c = self.tasks[t].next_child;
        if c >= end {
            self.tasks[t].pc += 1;
            return Step::Next;
        }
        self.tasks[t].next_child += 1;
        self.fork_task(c, cpu, now);
        Step::Next
    }

    /// `ForkNext`: forks the next child, if one is left.
    #[inline(never)]
    pub(super) fn op_fork_next(&mut self, cpu: usize, now: u64, t: Tid) -> Step {
        let (_, end) = self.tasks[t].children;
        let c = self.tasks[t].next_child;
        self.tasks[t].pc += 1;
        if c < end {
            self.tasks[t].next_child += 1;
            self.fork_task(c, cpu, now);
        }
        Step::Next
    }

    /// `Exec`: the exec balance, which may move the task to another CPU.
    #[inline(never)]
    pub(super) fn op_exec(&mut self, cpu: usize, now: u64, t: Tid) -> Step {
        self.tasks[t].pc += 1;
        self.metrics.tasks[t].execs += 1;
        // The new image is faulted in where the task runs after the exec
        // balance: here, or on the CPU the stopper moves it to, which sets
        // its home when the task starts there.
        self.tasks[t].home_node = None;
        if self.sched_exec(cpu, now) {
            return Step::Stop;
        }
        self.tasks[t].home_node = Some(self.locality.cpu_node[cpu]);
        Step::Next
    }

    /// `Exit`: the task exits.
    #[inline(never)]
    pub(super) fn op_exit(&mut self, cpu: usize, now: u64, t: Tid) -> Step {
        self.exit_current(cpu, now, t);
        Step::Stop
    }

    /// The current task exits: its parent is posted (a `wait()`ing parent wakes), the
    /// scheduler forgets it and the CPU picks another task.
    pub(super) fn exit_current(&mut self, cpu: usize, now: u64, t: Tid) {
        // do_exit's trace_sched_process_exit comes before exit_notify wakes the parent.
        self.trace_exit(cpu, now, t);
        if let Some(p) = self.tasks[t].parent {
            self.post(p, cpu, now);
        }
        self.sched.exit_current(cpu, now);
        self.charge_sched_work(cpu, now, Ctx::Exit);
        self.tasks[t].state = RtState::Exited;
        self.cancel_timer(t);
        self.live_tasks -= 1;
        self.metrics.tasks[t].exited_at = Some(now);
        self.schedule_cpu(cpu, now);
    }
}
