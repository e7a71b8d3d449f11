//! The program interpreter: the current task of a CPU executes its operations.

use crate::program::{DurSpec, Op, Target};
use crate::time::US;
use crate::workloads::{CyclicStep, PassEnd};

use super::cpu::SegKind;
use super::net::NetRecvStep;
use super::{RtState, World};
use crate::event::Tid;
use crate::profile::Ctx;

/// Operations a task may execute back to back without yielding to the event loop; a
/// program that loops without running, sleeping or blocking is cut off here so that the
/// emulation cannot hang. This budget is per call: a loop that goes through the event
/// loop at every round (a zero-length sleep with zero costs) starts each call afresh, and
/// the world's per-instant event bound (`progress.rs`) stops that one.
const MAX_INSTANT_OPS: u32 = 10_000;

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
            let Some(t) = self.cpus[cpu].curr else {
                return;
            };
            if self.sched.rqs[cpu].need_resched {
                self.schedule_cpu(cpu, now);
                return;
            }
            // While the CPU finishes kernel work, the task can only do what touches no
            // other task: those operations run at the instant the CPU becomes free
            // (`at`); anything else waits for a `Continue` at that instant.
            let at = now.max(self.cpus[cpu].kernel_until);
            let prog = self.tasks[t].prog;
            let pc = self.tasks[t].pc;
            let op = self.programs[prog].ops.get(pc).copied();
            if at > now && !op.is_some_and(|op| self.op_is_local(t, op)) {
                self.post_continue(cpu, now);
                return;
            }
            budget -= 1;
            if budget == 0 {
                // A runaway program: give the CPU a tick's worth of rest before going on.
                // Kernel work already queued beyond that rest is kept: the rest starts
                // from now, not from the end of that work, and must not shorten it.
                let until = (now + self.sched.tick_nsec).max(self.cpus[cpu].kernel_until);
                self.cpus[cpu].kernel_until = until;
                self.post_continue(cpu, now);
                return;
            }
            let Some(op) = op else {
                self.exit_current(cpu, now, t);
                return;
            };
            match op {
                Op::Run { work } | Op::RunSys { work } => {
                    let kind = self.tasks[t].saved.take().unwrap_or(SegKind::Work {
                        left: work.saturating_mul(1024),
                    });
                    self.start_seg(cpu, now, t, kind, op.is_sys());
                    return;
                }
                Op::RunSysCost { cost } => {
                    let work = cost.of(&self.config.cost);
                    let kind = self.tasks[t].saved.take().unwrap_or(SegKind::Work {
                        left: work.saturating_mul(1024),
                    });
                    self.start_seg(cpu, now, t, kind, true);
                    return;
                }
                Op::Spin { dur } => {
                    let kind = self.tasks[t]
                        .saved
                        .take()
                        .unwrap_or(SegKind::Spin { deadline: at + dur });
                    self.start_seg(cpu, now, t, kind, false);
                    return;
                }
                Op::Sleep { dur } => {
                    if self.tasks[t].timer_fired {
                        self.tasks[t].timer_fired = false;
                        self.tasks[t].pc += 1;
                        continue;
                    }
                    let d = self.draw(t, dur);
                    self.arm_timer(cpu, t, now, d);
                    self.block_and_schedule(cpu, now, t);
                    return;
                }
                Op::SleepUntil { clock, period } => {
                    let w = self.tasks[t].workload;
                    let me = t - self.workloads[w].tasks.0;
                    if self.tasks[t].timer_fired {
                        self.tasks[t].timer_fired = false;
                        self.workloads[w].periodic.woke(me, at);
                        self.tasks[t].pc += 1;
                        continue;
                    }
                    if self.tasks[t].timer.is_some() {
                        // Woken before its instant by something else: sleep on.
                        self.block_and_schedule(cpu, now, t);
                        return;
                    }
                    match self.workloads[w].periodic.timer(me, clock, period, now) {
                        Some(until) => {
                            self.arm_timer(cpu, t, now, until - now);
                            self.block_and_schedule(cpu, now, t);
                            return;
                        }
                        None => self.tasks[t].pc += 1,
                    }
                }
                Op::PhaseEnd { row } => {
                    let w = self.tasks[t].workload;
                    let me = t - self.workloads[w].tasks.0;
                    // As for cyclictest below: `window_start` reads 0 until the window
                    // opens, so a pass is counted by the warm-up's end itself.
                    let counted = at >= self.config.warmup;
                    let end = PassEnd {
                        at,
                        cpu: cpu as u32,
                        freq_khz: self.cur_khz(cpu),
                    };
                    self.workloads[w].periodic.phase_end(me, row, counted, end);
                    self.tasks[t].pc += 1;
                }
                Op::RtStamp { point } => {
                    let w = self.tasks[t].workload;
                    let me = t - self.workloads[w].tasks.0;
                    self.workloads[w].periodic.stamp(me, point, at);
                    self.tasks[t].pc += 1;
                }
                Op::SetAffinity { set } => {
                    self.tasks[t].pc += 1;
                    let w = self.tasks[t].workload;
                    let me = t - self.workloads[w].tasks.0;
                    if let Some(mask) = self.workloads[w].periodic.affinity_change(me, set) {
                        if self.set_affinity(cpu, now, t, mask) {
                            return;
                        }
                    }
                }
                Op::CyclicSleep => {
                    let w = self.tasks[t].workload;
                    let k = (t - self.workloads[w].tasks.0).saturating_sub(1);
                    if self.tasks[t].timer_fired {
                        self.tasks[t].timer_fired = false;
                        // The measurement window opens at `warmup`; `window_start`
                        // reads 0 until then, so it cannot tell a warm-up cycle.
                        let counted = at >= self.config.warmup;
                        self.workloads[w].cyclic.woke(k, at, cpu, counted);
                        self.tasks[t].pc += 1;
                        continue;
                    }
                    if self.tasks[t].tokens > 0 {
                        // main's pthread_kill(SIGTERM): clock_nanosleep returns EINTR and
                        // timerthread leaves its loop without measuring.
                        self.exit_current(cpu, now, t);
                        return;
                    }
                    if self.tasks[t].timer.is_some() {
                        // Woken before its instant by something else: sleep on.
                        self.tasks[t].waiting_sem = true;
                        self.block_and_schedule(cpu, now, t);
                        return;
                    }
                    match self.workloads[w].cyclic.sleep(k, now) {
                        CyclicStep::Exit => {
                            self.exit_current(cpu, now, t);
                            return;
                        }
                        CyclicStep::Until(next) if next > now => {
                            self.arm_timer(cpu, t, now, next - now);
                            // A post (main's signal) wakes the sleeper, as a signal
                            // interrupts clock_nanosleep.
                            self.tasks[t].waiting_sem = true;
                            self.block_and_schedule(cpu, now, t);
                            return;
                        }
                        CyclicStep::Until(_) => {
                            // The instant has passed: the sleep returns at once.
                            let counted = now >= self.config.warmup;
                            self.workloads[w].cyclic.woke(k, now, cpu, counted);
                            self.tasks[t].pc += 1;
                        }
                    }
                }
                Op::CyclicPoll { after } => {
                    let w = self.tasks[t].workload;
                    if self.workloads[w].cyclic.poll() {
                        self.tasks[t].loops.pop();
                        self.tasks[t].pc = after;
                    } else {
                        self.tasks[t].pc += 1;
                    }
                }
                Op::Wait { timeout } => {
                    if self.tasks[t].tokens > 0 {
                        self.tasks[t].tokens -= 1;
                        self.cancel_timer(t);
                        self.tasks[t].timer_fired = false;
                        self.tasks[t].waiting_sem = false;
                        self.tasks[t].pc += 1;
                        continue;
                    }
                    if self.tasks[t].timer_fired {
                        self.tasks[t].timer_fired = false;
                        self.tasks[t].waiting_sem = false;
                        self.tasks[t].pc += 1;
                        continue;
                    }
                    if let Some(d) = timeout {
                        if self.tasks[t].timer.is_none() {
                            let d = self.draw(t, d);
                            self.arm_timer(cpu, t, now, d);
                        }
                    }
                    self.tasks[t].waiting_sem = true;
                    self.block_and_schedule(cpu, now, t);
                    return;
                }
                Op::ClearTokens => {
                    self.tasks[t].tokens = 0;
                    self.tasks[t].pc += 1;
                }
                Op::Post { to } => {
                    self.tasks[t].pc += 1;
                    if let Some(x) = self.target(t, to) {
                        self.post(x, cpu, now);
                    }
                }
                Op::PostChildren => {
                    self.tasks[t].pc += 1;
                    let (a, b) = self.tasks[t].children;
                    for x in a..b {
                        self.post(x, cpu, now);
                    }
                }
                Op::ListAdd { to } => {
                    self.tasks[t].pc += 1;
                    if let Some(x) = self.target(t, to) {
                        self.tasks[x].list.push(t);
                    }
                }
                Op::WakeList => {
                    self.tasks[t].pc += 1;
                    let list = std::mem::take(&mut self.tasks[t].list);
                    // xlist_add prepends, so the splice walks the newest entry first.
                    for &x in list.iter().rev() {
                        self.tasks[x].stamp = now;
                    }
                    for &x in list.iter().rev() {
                        self.post(x, cpu, now);
                    }
                }
                Op::RecordLatency { hist } => {
                    self.tasks[t].pc += 1;
                    // gettimeofday() has microsecond resolution; schbench records
                    // positive deltas only.
                    let us = at / US - self.tasks[t].stamp / US;
                    if us > 0 {
                        let w = self.tasks[t].workload;
                        self.workloads[w].record(hist, us);
                    }
                }
                Op::PipeWrite { pipe, bytes } => {
                    let p = self.tasks[t].pipe_base + pipe;
                    if !self.pipe_write(cpu, now, t, p, bytes) {
                        self.block_and_schedule(cpu, now, t);
                        return;
                    }
                    self.tasks[t].pc += 1;
                }
                Op::PipeRead { pipe, bytes } => {
                    let p = self.tasks[t].pipe_base + pipe;
                    if !self.pipe_read(cpu, now, t, p, bytes) {
                        self.block_and_schedule(cpu, now, t);
                        return;
                    }
                    self.tasks[t].pc += 1;
                }
                Op::ForkChildren => {
                    let (_, end) = self.tasks[t].children;
                    let c = self.tasks[t].next_child;
                    if c >= end {
                        self.tasks[t].pc += 1;
                        continue;
                    }
                    self.tasks[t].next_child += 1;
                    self.fork_task(c, cpu, now);
                }
                Op::ForkNext => {
                    let (_, end) = self.tasks[t].children;
                    let c = self.tasks[t].next_child;
                    self.tasks[t].pc += 1;
                    if c < end {
                        self.tasks[t].next_child += 1;
                        self.fork_task(c, cpu, now);
                    }
                }
                Op::Exec => {
                    self.tasks[t].pc += 1;
                    self.metrics.tasks[t].execs += 1;
                    // The new image is faulted in where the task runs after the exec
                    // balance: here, or on the CPU the stopper moves it to, which sets
                    // its home when the task starts there.
                    self.tasks[t].home_node = None;
                    if self.sched_exec(cpu, now) {
                        return;
                    }
                    self.tasks[t].home_node = Some(self.locality.cpu_node[cpu]);
                }
                Op::Mark { slot } => {
                    self.tasks[t].marks[slot.min(1)] = Some(at);
                    self.tasks[t].pc += 1;
                }
                Op::LoopBegin { times } => {
                    self.tasks[t].loops.push(times.unwrap_or(u64::MAX));
                    self.tasks[t].pc += 1;
                }
                Op::LoopEnd { begin } => {
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
                }
                Op::Exit => {
                    self.exit_current(cpu, now, t);
                    return;
                }
                Op::NetSend { sock, size } => {
                    if !self.net_send(cpu, now, t, sock, size) {
                        self.block_and_schedule(cpu, now, t);
                        return;
                    }
                    self.tasks[t].pc += 1;
                }
                Op::NetRecv { sock, calls, trunc } => {
                    match self.net_recv(cpu, now, t, sock, calls, trunc) {
                        NetRecvStep::Got => self.tasks[t].pc += 1,
                        NetRecvStep::Wait => {
                            self.block_and_schedule(cpu, now, t);
                            return;
                        }
                        NetRecvStep::Eof => {
                            self.exit_current(cpu, now, t);
                            return;
                        }
                    }
                }
                Op::NetClose { sock } => {
                    self.tasks[t].pc += 1;
                    self.net_close(cpu, now, t, sock);
                }
                Op::NetExchange => {
                    self.tasks[t].pc += 1;
                    self.net_exchange(t, at);
                }
                Op::BreakAfter {
                    slot,
                    dur,
                    after,
                    keep_count,
                } => {
                    let since = self.tasks[t].marks[slot.min(1)].unwrap_or(at);
                    if at >= since.saturating_add(dur) {
                        if !keep_count {
                            self.tasks[t].loops.pop();
                        }
                        self.tasks[t].pc = after;
                    } else {
                        self.tasks[t].pc += 1;
                    }
                }
            }
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
            | Op::PhaseEnd { .. }
            | Op::RtStamp { .. }
            | Op::NetExchange
            | Op::BreakAfter { .. } => true,
            Op::Sleep { .. } | Op::SleepUntil { .. } | Op::CyclicSleep => task.timer_fired,
            Op::Wait { .. } => task.tokens > 0 || task.timer_fired,
            _ => false,
        }
    }

    /// The current task exits: its parent is posted (a `wait()`ing parent wakes), the
    /// scheduler forgets it and the CPU picks another task.
    fn exit_current(&mut self, cpu: usize, now: u64, t: Tid) {
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
