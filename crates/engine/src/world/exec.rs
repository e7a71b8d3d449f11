//! The program interpreter: the current task of a CPU executes its operations.
//!
//! `exec` decodes the task's next operation and hands it to the method of its concept, one
//! sibling module each: run segments (`segments.rs`), sleeping and waking (`sync.rs`),
//! the tools' own operations through their workload's model (`hook.rs`), pipes and
//! loopback sockets (`io.rs`), fork, exec and exit (`process.rs`) and the program's own
//! control flow (`control.rs`).

mod control;
mod hook;
mod io;
mod process;
mod segments;
mod sync;

use crate::program::{DurSpec, Op, Target};
use fairsim_des::time::US;

use super::World;
use crate::event::Tid;

/// Operations a task may execute back to back without yielding to the event loop; a
/// program that loops without running, sleeping or blocking is cut off here so that the
/// emulation cannot hang. This budget is per call: a loop that goes through the event
/// loop at every round (a zero-length sleep with zero costs) starts each call afresh, and
/// the world's per-instant event bound (`progress.rs`) stops that one.
const MAX_INSTANT_OPS: u32 = 10_000;

/// What the interpreter does after one operation. Each operation's method says it, so
/// that `exec` keeps the loop's control flow in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The task goes on to the operation its program counter now names.
    Next,
    /// The task started a run segment, blocked, exited or left the CPU: the interpreter
    /// returns to the event loop.
    Stop,
}

impl World {
    /// Draws a duration.
    pub(super) fn draw(&mut self, t: Tid, d: DurSpec) -> u64 {
        match d {
            DurSpec::Fixed(ns) => ns,
            DurSpec::JitterUs {
                base_us,
                max_jitter_us,
            } => {
                let w = self.tasks[t].workload;
                let j = if max_jitter_us > 0 {
                    self.workloads[w].rng.below(max_jitter_us)
                } else {
                    0
                };
                (base_us + j) * US
            }
        }
    }

    fn target(&self, t: Tid, to: Target) -> Option<Tid> {
        match to {
            Target::Parent => self.tasks[t].parent,
            Target::Task(x) => Some(x),
        }
    }

    /// Runs the current task of `cpu` from its program counter until it starts a run
    /// segment, blocks, exits, yields to kernel work or is preempted.
    pub(crate) fn exec(&mut self, cpu: usize, now: u64) {
        let mut budget = MAX_INSTANT_OPS;
        loop {
            let c = &self.cpus[cpu];
            let Some(t) = c.curr else {
                return;
            };
            let kernel_until = c.kernel_until;
            if self.sched.rqs[cpu].need_resched {
                self.schedule_cpu(cpu, now);
                return;
            }
            // While the CPU finishes kernel work, the task can only do what touches no
            // other task: those operations run at the instant the CPU becomes free
            // (`at`); anything else waits for a `Continue` at that instant.
            let at = now.max(kernel_until);
            let task = &self.tasks[t];
            let op = self.programs[task.prog].ops.get(task.pc).copied();
            if at > now && !op.is_some_and(|op| self.op_is_local(t, op)) {
                self.post_continue(cpu, now);
                return;
            }
            budget -= 1;
            if budget == 0 {
                // A runaway program: give the CPU a tick's worth of rest before going on.
                // Kernel work already queued beyond that rest is kept: the rest starts
                // from now, not from the end of that work, and must not shorten it.
                let until = (now + self.sched.tick_nsec).max(kernel_until);
                self.cpus[cpu].kernel_until = until;
                self.post_continue(cpu, now);
                return;
            }
            let Some(op) = op else {
                self.exit_current(cpu, now, t);
                return;
            };
            if self.exec_op(cpu, now, at, t, op) == Step::Stop {
                return;
            }
        }
    }

    /// Executes one operation of task `t`, the current task of `cpu`, at `now` (`at` when
    /// the CPU's kernel work ends first), by the method of its concept.
    #[inline(always)]
    fn exec_op(&mut self, cpu: usize, now: u64, at: u64, t: Tid, op: Op) -> Step {
        match op {
            Op::Run { work } => self.op_run(cpu, now, t, work, false),
            Op::RunSys { work } => self.op_run(cpu, now, t, work, true),
            Op::RunSysCost { cost } => self.op_run_sys_cost(cpu, now, t, cost),
            Op::Spin { dur } => self.op_spin(cpu, now, at, t, dur),
            Op::Sleep { dur } => self.op_sleep(cpu, now, t, dur),
            Op::Hook { call, .. } => self.op_hook(cpu, now, at, t, call),
            Op::HookSleep {
                call,
                interruptible,
            } => self.op_hook_sleep(cpu, now, at, t, call, interruptible),
            Op::Wait { timeout } => self.op_wait(cpu, now, t, timeout),
            Op::ClearTokens => self.op_clear_tokens(t),
            Op::Post { to } => self.op_post(cpu, now, t, to),
            Op::PostChildren => self.op_post_children(cpu, now, t),
            Op::ListAdd { to } => self.op_list_add(t, to),
            Op::WakeList => self.op_wake_list(cpu, now, t),
            Op::RecordLatency { hist } => self.op_record_latency(at, t, hist),
            Op::PipeWrite { pipe, bytes } => self.op_pipe_write(cpu, now, t, pipe, bytes),
            Op::PipeRead { pipe, bytes } => self.op_pipe_read(cpu, now, t, pipe, bytes),
            Op::ForkChildren => self.op_fork_children(cpu, now, t),
            Op::ForkNext => self.op_fork_next(cpu, now, t),
            Op::Exec => self.op_exec(cpu, now, t),
            Op::Mark { slot } => self.op_mark(at, t, slot),
            Op::LoopBegin { times } => self.op_loop_begin(t, times),
            Op::LoopEnd { begin } => self.op_loop_end(t, begin),
            Op::Exit => self.op_exit(cpu, now, t),
            Op::NetSend { sock, size } => self.op_net_send(cpu, now, t, sock, size),
            Op::NetRecv { sock, calls, trunc } => self.op_net_recv(cpu, now, t, sock, calls, trunc),
            Op::NetClose { sock } => self.op_net_close(cpu, now, t, sock),
            Op::BreakAfter {
                slot,
                dur,
                after,
                keep_count,
            } => self.op_break_after(at, t, slot, dur, after, keep_count),
        }
    }

    /// Whether `op`, executed now by task `t`, affects only `t` itself, so that it may run
    /// while its CPU still finishes kernel work: starting a run segment (which begins when
    /// the CPU is free), loop bookkeeping, marks, latency records, and completing a sleep
    /// or a wait whose wakeup already came.
    fn op_is_local(&self, t: Tid, op: Op) -> bool {
        let task = &self.tasks[t];
        match op {
            Op::Run { .. }
            | Op::RunSys { .. }
            | Op::RunSysCost { .. }
            | Op::Spin { .. }
            | Op::ClearTokens
            | Op::Mark { .. }
            | Op::LoopBegin { .. }
            | Op::LoopEnd { .. }
            | Op::RecordLatency { .. }
            | Op::BreakAfter { .. } => true,
            Op::Hook { local, .. } => local,
            Op::Sleep { .. } | Op::HookSleep { .. } => task.timer_fired,
            Op::Wait { .. } => task.tokens > 0 || task.timer_fired,
            _ => false,
        }
    }
}
