//! CPUs: run segments, charging kernel work, the scheduler tick and `schedule()`.

use fairsim_balance::PickOutcome;

use crate::event::{Event, Tid};
use crate::metrics::CpuMetrics;
use crate::noise::Noise;
use crate::profile::{Ctx, Leaf, Site};
use fairsim_des::time::Time;

use super::cpu_state::Seg;
use super::{RateMemo, RtState, World};

/// The segment kind lives in `cpu_state` with the rest of a CPU's state; the exec
/// interpreter's segments still name it by this module's path.
pub(super) use super::cpu_state::SegKind;

impl World {
    /// Work units `task` does per ns on `cpu`: the CPU's capacity scaled by its
    /// frequency, or, when the machine gives the task's workload kind a speed of its own
    /// ([`crate::speed`]), that speed scaled by the frequency. The scheduler's capacities
    /// stay as they are either way.
    fn rate(&self, cpu: usize, task: Tid) -> u64 {
        let rq = &self.sched.rqs[cpu];
        let speed = self
            .speeds
            .get(self.tasks[task].workload)
            .and_then(Option::as_ref)
            .and_then(|row| row.get(cpu).copied())
            .unwrap_or(rq.capacity_orig);
        let rate = (speed * rq.freq_capacity / 1024).max(1);
        let task = &self.tasks[task];
        match (task.home_node, self.mem.get(task.workload).copied()) {
            (Some(home), Some(mem)) if mem > 0 => self.locality.scale_rate(rate, cpu, home, mem),
            _ => rate,
        }
    }

    /// Task `t` starts running on `cpu`: counts a move across nodes, and gives a task
    /// without a home node (just forked, or just exec'd) the one its memory will be
    /// first touched on ([`crate::memory`]): this CPU's node, or its process's for a
    /// thread.
    fn settle_home(&mut self, t: Tid, cpu: usize) {
        let node = self.locality.cpu_node[cpu];
        if let Some(prev) = self.tasks[t].last_cpu {
            if self.locality.cpu_node[prev] != node {
                self.metrics.tasks[t].node_migrations += 1;
            }
        }
        if self.tasks[t].home_node.is_none() {
            let process = match (self.tasks[t].thread, self.tasks[t].parent) {
                (true, Some(p)) => self.tasks[p].home_node,
                _ => None,
            };
            self.tasks[t].home_node = Some(process.unwrap_or(node));
        }
    }

    /// Time at which `seg` completes on `cpu`.
    fn seg_end(&self, seg: &Seg) -> u64 {
        match seg.kind() {
            SegKind::Work { left } => seg.resume_at + left.div_ceil(seg.rate),
            SegKind::Spin { deadline } => deadline.max(seg.resume_at),
        }
    }

    /// Accounts the progress of the active segment up to `t`.
    ///
    /// Inlined: the end of every run segment calls it, and as a call it cost a sixth of
    /// its own instructions in saving and restoring registers.
    #[inline(always)]
    pub(super) fn advance_seg(&mut self, cpu: usize, t: u64) {
        let c = &mut self.cpus[cpu];
        let curr = c.curr;
        let Some(seg) = &mut c.seg else {
            return;
        };
        if t <= seg.resume_at {
            return;
        }
        let ran = t - seg.resume_at;
        if !seg.spin {
            seg.value = seg.value.saturating_sub(ran.saturating_mul(seg.rate));
        }
        seg.resume_at = t;
        let (sys, away) = (seg.sys, seg.away);
        let cm = &mut self.metrics.cpus[cpu];
        cm.task_ns += ran;
        if let Some(x) = curr {
            if away {
                cm.remote_ns += ran;
            }
            let m = &mut self.metrics.tasks[x];
            m.cpu_ns.add(cpu, ran);
            if sys {
                m.sys_ns += ran;
            } else {
                m.user_ns += ran;
            }
            if away {
                m.off_node_ns += ran;
            }
        }
    }

    /// The task whose system time kernel work charged on `cpu` now is: the current task
    /// while it is runnable. Work inside `schedule()` after the current task blocked or
    /// exited (the pick, a newidle balance, the switch) is no task's, as that task's
    /// runtime stopped at its dequeue; so is work on an idle CPU.
    fn kernel_owner(&self, cpu: usize) -> Option<Tid> {
        self.cpus[cpu]
            .curr
            .filter(|&t| self.tasks[t].state == RtState::Runnable)
    }

    /// `account_process_tick` under `CONFIG_TICK_CPU_ACCOUNTING`: the tick that arrives at
    /// `now` samples the current task in user mode when it is in a user run segment with
    /// no kernel work in progress on its CPU, and in kernel mode otherwise.
    fn account_tick(&mut self, cpu: usize, now: u64) {
        let Some(t) = self.kernel_owner(cpu) else {
            return;
        };
        let user = self.cpus[cpu].kernel_until <= now
            && self.cpus[cpu]
                .seg
                .is_some_and(|s| s.task() == t && s.resume_at <= now && !s.sys);
        let m = &mut self.metrics.tasks[t];
        if user {
            m.user_ticks += 1;
        } else {
            m.sys_ticks += 1;
        }
    }

    /// Re-times the active segment of `cpu` after its rate changed (a new frequency
    /// scale): its progress up to the change must already be accounted
    /// (`advance_seg`); the end is computed again from what is left at the new
    /// rate, and the old end event goes stale.
    pub(super) fn retime_seg(&mut self, cpu: usize) {
        if let Some(mut seg) = self.cpus[cpu].seg {
            seg.rate = self.memo_rate(cpu, seg.task());
            self.cpus[cpu].seg = Some(seg);
            self.cpus[cpu].gen += 1;
            let end = self.seg_end(&seg);
            let gen = self.cpus[cpu].gen;
            self.queue.push(Time(end), Event::SegmentEnd { cpu, gen });
        }
    }

    /// [`World::rate`] through the task's memo: the rate depends, besides what is fixed
    /// for the run, only on the CPU, its frequency scale and the task's home node. The
    /// memo's hit is inlined into every segment's start; a miss takes the call.
    #[inline(always)]
    fn memo_rate(&mut self, cpu: usize, task: Tid) -> u64 {
        let freq_capacity = self.sched.rqs[cpu].freq_capacity;
        let tr = &self.tasks[task];
        if let Some(m) = tr.rate_memo {
            if m.cpu == cpu && m.freq_capacity == freq_capacity && m.home_node == tr.home_node {
                return m.rate;
            }
        }
        self.memo_rate_miss(cpu, task, freq_capacity)
    }

    /// [`World::memo_rate`]'s miss: computes the rate and remembers it.
    #[cold]
    #[inline(never)]
    fn memo_rate_miss(&mut self, cpu: usize, task: Tid, freq_capacity: u64) -> u64 {
        let home_node = self.tasks[task].home_node;
        let rate = self.rate(cpu, task);
        self.tasks[task].rate_memo = Some(RateMemo {
            cpu,
            freq_capacity,
            home_node,
            rate,
        });
        rate
    }

    /// Starts (or resumes) a run segment of the current task at `now`: `sys` when the
    /// operation at its program counter is system time (known to the caller, which has
    /// just read that operation). Inlined into the interpreter's run operations, which
    /// start most segments.
    #[inline(always)]
    pub(super) fn start_seg(&mut self, cpu: usize, now: u64, task: Tid, kind: SegKind, sys: bool) {
        let resume_at = now.max(self.cpus[cpu].kernel_until);
        let node = self.locality.cpu_node[cpu];
        let rate = self.memo_rate(cpu, task);
        let away = self.tasks[task].home_node.is_some_and(|h| h != node);
        let seg = Seg::new(task, resume_at, kind, rate, sys, away);
        let c = &mut self.cpus[cpu];
        c.seg = Some(seg);
        c.gen += 1;
        let gen = c.gen;
        let end = self.seg_end(&seg);
        self.queue.push(Time(end), Event::SegmentEnd { cpu, gen });
    }

    /// The active segment is complete: the task moves to its next operation.
    pub(super) fn segment_end(&mut self, cpu: usize, now: u64) {
        self.advance_seg(cpu, now);
        let Some(seg) = self.cpus[cpu].seg.take() else {
            return;
        };
        let t = seg.task();
        self.tasks[t].saved = None;
        self.tasks[t].pc += 1;
        self.exec(cpu, now);
    }

    /// Stops the active segment at `now` (for the stopper of an active balance).
    pub(super) fn pause_seg_pub(&mut self, cpu: usize, now: u64) {
        self.pause_seg(cpu, now);
    }

    /// Stops the active segment at `now`, saving its progress in the task.
    fn pause_seg(&mut self, cpu: usize, now: u64) {
        self.advance_seg(cpu, now);
        if let Some(seg) = self.cpus[cpu].seg.take() {
            self.tasks[seg.task()].saved = Some(seg.kind());
        }
        self.cpus[cpu].gen += 1;
    }

    /// Charges `cost` ns (the cost table's mean) of kernel work at `site` to `cpu` at
    /// `now`: the CPU does it after any kernel work already queued, and the running
    /// segment (if any) makes no progress meanwhile.
    #[inline]
    pub(crate) fn charge(&mut self, cpu: usize, now: u64, cost: u64, site: Site) {
        // Many callers charge nothing (a price of 0, or no work done): they skip the call.
        if cost != 0 {
            self.charge_parts(cpu, now, &[(cost, site)]);
        }
    }

    /// Charges several pieces of work done back to back as one stretch of kernel time,
    /// each attributed to its own site. With noise on, each piece's duration is drawn
    /// around its mean; a lock spin is a wait, not work, and is charged as it is.
    pub(crate) fn charge_parts(&mut self, cpu: usize, now: u64, parts: &[(u64, Site)]) {
        let noise = &mut self.noise;
        let m = &mut self.metrics.cpus[cpu];
        let mut cost = 0;
        for &(mean, site) in parts {
            cost += draw_part(noise, m, mean, site);
        }
        self.charge_stretch(cpu, now, cost);
    }

    /// The CPU time of a stretch of kernel work of `cost` ns whose parts
    /// [`draw_part`] has counted: the system time of the task it is done for (or of no
    /// task), and the CPU busy with it after any kernel work already queued, the running
    /// segment (if any) making no progress meanwhile.
    #[inline]
    fn charge_stretch(&mut self, cpu: usize, now: u64, cost: u64) {
        if cost == 0 {
            return;
        }
        match self.kernel_owner(cpu) {
            Some(t) => self.metrics.tasks[t].sys_ns += cost,
            None => self.metrics.cpus[cpu].no_task_kernel_ns += cost,
        }
        let start = now.max(self.cpus[cpu].kernel_until);
        self.advance_seg(cpu, start);
        let until = start + cost;
        let c = &mut self.cpus[cpu];
        c.kernel_until = until;
        if let Some(mut seg) = c.seg {
            seg.resume_at = until;
            c.seg = Some(seg);
            c.gen += 1;
            let gen = c.gen;
            let end = self.seg_end(&seg);
            self.queue.push(Time(end), Event::SegmentEnd { cpu, gen });
        }
    }

    /// Turns the work the scheduler reports for its last call, made in context `ctx`,
    /// into CPU time on `cpu`.
    ///
    /// The counters are read where the scheduler keeps them ([`Sched::fold_work`]) and
    /// each piece is drawn and counted as it is read, in the order of the pieces of one
    /// stretch: moving the record out and building a list of the pieces first cost about
    /// a tenth of seed 000's engine instructions.
    ///
    /// [`Sched::fold_work`]: fairsim_balance::Sched::fold_work
    pub(crate) fn charge_sched_work(&mut self, cpu: usize, now: u64, ctx: Ctx) {
        if !self.sched.has_work() {
            // Most scheduler calls do no scanning or moving: nothing to charge.
            return;
        }
        let w = self.sched.fold_work();
        // Every price is read by reference: the cost table is a few hundred bytes, and
        // copying it on every call cost about 0.5% of a run's instructions.
        let c = &self.config.cost;
        let noise = &mut self.noise;
        let m = &mut self.metrics.cpus[cpu];
        // A balance reads each CPU's load statistics; the wakeup and fork paths only
        // whether it is idle.
        let per_cpu = if ctx.balances() {
            c.lb_scan_per_cpu
        } else {
            c.idle_scan_per_cpu
        };
        let cpus = w.cpus_visited * per_cpu
            + w.cpus_visited_remote_llc * c.scan_remote_llc
            + w.cpus_visited_remote_node * c.scan_remote_node;
        // One stretch, its pieces in this order (the noise is drawn in it). The moves
        // follow the scan in the same stretch of kernel time: charged in one call, their
        // noise is drawn after the scan's, as it was when they were charged on their own
        // right after it. The pieces are written out one by one: a loop over an array of
        // them cost seed 000's scenario 37 instructions per event more (cachegrind).
        let mut cost = draw_part(noise, m, cpus, Site::new(ctx, Leaf::ScanCpus));
        cost += draw_part(
            noise,
            m,
            w.groups_visited * c.group_scan,
            Site::new(ctx, Leaf::ScanGroups),
        );
        cost += draw_part(
            noise,
            m,
            w.tasks_examined * c.task_examine,
            Site::new(ctx, Leaf::Examine),
        );
        cost += draw_part(
            noise,
            m,
            w.pelt_se_updates * c.pelt_update_se,
            Site::new(ctx, Leaf::PeltSe),
        );
        cost += draw_part(
            noise,
            m,
            w.pelt_cfs_rq_updates * c.pelt_update_cfs_rq,
            Site::new(ctx, Leaf::PeltCfsRq),
        );
        cost += draw_part(
            noise,
            m,
            w.util_est_enqueues * c.util_est_enqueue,
            Site::new(ctx, Leaf::UtilEstEnqueue),
        );
        cost += draw_part(
            noise,
            m,
            w.util_est_dequeues * c.util_est_dequeue,
            Site::new(ctx, Leaf::UtilEstDequeue),
        );
        cost += draw_part(
            noise,
            m,
            w.util_est_updates * c.util_est_update,
            Site::new(ctx, Leaf::UtilEstUpdate),
        );
        cost += draw_part(
            noise,
            m,
            w.tasks_moved * c.migration,
            Site::new(ctx, Leaf::Move),
        );
        // The detach work happened under each lock the balance took; a lock the engine
        // already took for this CPU before the act (a newidle step waiting its turn) is
        // only extended.
        let hold =
            c.remote_rq_lock + w.tasks_examined * c.task_examine + w.tasks_moved * c.rq_enqueue;
        let locks = w.rq_locks.len() as u64 * c.remote_rq_lock;
        let (cpus_visited, groups_visited) = (w.cpus_visited, w.groups_visited);
        let rq_locks = if w.rq_locks.is_empty() {
            None
        } else {
            Some(self.sched.take_work_locks())
        };
        self.sched.clear_work();
        self.charge_stretch(cpu, now, cost);
        if let Some(rq_locks) = rq_locks {
            for &rq in &rq_locks {
                if self.cpus[cpu].act_lock == Some(rq) {
                    self.extend_rq_lock(rq, hold);
                } else {
                    self.rq_lock(cpu, rq, now, hold, ctx);
                }
            }
            self.sched.recycle_work_locks(rq_locks);
        }
        self.charge(cpu, now, locks, Site::new(ctx, Leaf::Lock));
        self.metrics.cpus_visited += cpus_visited;
        self.metrics.groups_visited += groups_visited;
    }

    /// Whether the CPU sits in the idle loop (no task, no kernel work in progress).
    pub(super) fn cpu_idle_at(&self, cpu: usize, now: u64) -> bool {
        self.cpus[cpu].curr.is_none() && self.cpus[cpu].kernel_until <= now
    }

    /// An interrupt arrives on `cpu`: an idle CPU first leaves its idle state, paying the
    /// state's exit latency (the flat `idle_exit` without a cpuidle driver).
    pub(super) fn interrupt_entry(&mut self, cpu: usize, now: u64) {
        self.interrupt_entry_by(cpu, now, false);
    }

    /// [`World::interrupt_entry`], saying whether the interrupt is the tick
    /// (`tick_nohz_idle_got_tick`, which the menu governor reads).
    pub(super) fn interrupt_entry_by(&mut self, cpu: usize, now: u64, tick: bool) {
        if self.idle.devices.is_empty() {
            if self.cpu_idle_at(cpu, now) {
                self.cpuidle_exit(cpu, now, tick);
            }
        } else {
            self.cpuidle_exit(cpu, now, tick);
        }
    }

    /// Schedules a `Continue` for the current task when the CPU's kernel work is done.
    pub(super) fn post_continue(&mut self, cpu: usize, now: u64) {
        if self.cpus[cpu].continue_pending || self.cpus[cpu].seg.is_some() {
            return;
        }
        self.cpus[cpu].continue_pending = true;
        let at = now.max(self.cpus[cpu].kernel_until);
        let gen = self.cpus[cpu].gen;
        self.queue.push(Time(at), Event::Continue { cpu, gen });
    }

    /// `__schedule()` on `cpu` at `now`: the current task (already blocked, exiting or
    /// preempted) is put back or left, the scheduler picks the next one, and the CPU pays
    /// the context switch before the next task runs.
    pub(crate) fn schedule_cpu(&mut self, cpu: usize, now: u64) {
        if self.cpus[cpu].newidle.is_some() {
            // Already inside schedule(): the newidle balance's end picks what arrived.
            return;
        }
        self.pause_seg(cpu, now);
        self.cpus[cpu].continue_pending = false;
        let prev = self.cpus[cpu].curr;
        match self.sched.schedule_stepped(cpu, now) {
            PickOutcome::Next(next_sid) => {
                self.charge_sched_work(cpu, now, Ctx::Pick);
                self.complete_switch(cpu, prev, next_sid, now);
            }
            PickOutcome::Newidle => {
                self.charge_sched_work(cpu, now, Ctx::Pick);
                self.start_newidle(cpu, prev, now);
            }
        }
    }

    /// The end of `__schedule()` once the next task is known: the context switch, the tick
    /// and the first operations of the next task, or the idle entry.
    pub(super) fn complete_switch(
        &mut self,
        cpu: usize,
        prev: Option<Tid>,
        next_sid: Option<fairsim_balance::TaskId>,
        now: u64,
    ) {
        let next = next_sid.map(|s| self.by_sched_id[s]);
        if prev.is_none() && next.is_some() && !self.cpus[cpu].tick_on {
            // do_idle leaves the idle loop: tick_nohz_idle_exit restarts the stopped tick
            // before schedule_idle() switches to the woken task (and 3.9 catches up the
            // CPU's cpu_load[] for the ticks it missed).
            self.sched.tick_nohz_idle_exit(cpu, now);
            self.charge(
                cpu,
                now,
                self.config.cost.tick_restart,
                Site::fixed(Ctx::TickRestart),
            );
        }
        // A stopper that moved the CPU's task away and leaves it idle switches to idle
        // in the trace, though the engine counts no switch (idle to idle).
        self.trace_switch(cpu, now.max(self.cpus[cpu].kernel_until), prev, next);
        if prev != next {
            // __schedule holds the rq lock from the pick until finish_task_switch, after
            // switch_to, so the whole switch is under it.
            self.rq_lock(
                cpu,
                cpu,
                now,
                self.config.cost.context_switch,
                Ctx::Schedule,
            );
            self.charge(
                cpu,
                now,
                self.config.cost.context_switch,
                Site::fixed(Ctx::Schedule),
            );
            self.metrics.cpus[cpu].switches += 1;
            if let Some(p) = prev {
                self.tasks[p].last_cpu = Some(cpu);
            }
        }
        self.cpus[cpu].curr = next;
        match next {
            None => {
                self.enter_idle(cpu, now);
            }
            Some(t) => {
                if self.idle.cstate[cpu].is_some() {
                    // need_resched seen without an interrupt (a polling idle CPU): the
                    // state still ends before the task runs.
                    self.cpuidle_exit(cpu, now, false);
                }
                let starts = now.max(self.cpus[cpu].kernel_until);
                if let Some(w) = self.tasks[t].woken_at.take() {
                    self.metrics.record_wakeup_latency(t, cpu, starts - w);
                }
                self.settle_home(t, cpu);
                self.tasks[t].last_cpu = Some(cpu);
                if !self.cpus[cpu].tick_on {
                    self.arm_tick(cpu, now);
                }
                self.exec(cpu, now);
            }
        }
    }

    /// Arms the tick at the next jiffy boundary (ticks of all CPUs are aligned, as with
    /// the default `sched_skew_tick=0`).
    fn arm_tick(&mut self, cpu: usize, now: u64) {
        self.cpus[cpu].tick_on = true;
        if self.cpus[cpu].tick_queued {
            return;
        }
        let period = self.sched.tick_nsec;
        let next = (now / period + 1) * period;
        self.cpus[cpu].tick_queued = true;
        let gen = self.cpus[cpu].tick_gen;
        self.queue.push(Time(next), Event::Tick { cpu, gen });
    }

    /// `do_idle` on a CPU that found nothing to run: a round of the idle loop (the
    /// governor's state and tick decision), then the idle balance a CPU entering idle
    /// runs (`nohz_run_idle_balance`).
    fn enter_idle(&mut self, cpu: usize, now: u64) {
        self.idle_loop_round(cpu, now);
        self.balance_on_idle(cpu, now);
    }

    /// One round of `do_idle`'s loop: `cpuidle_idle_call` picks the state and says
    /// whether the tick stops (see [`super::idle`]); without a cpuidle driver the tick
    /// always stops (see [`super::Cpuidle`]). A stopped tick makes the CPU join the nohz
    /// idle CPUs (`nohz_balance_enter_idle`); a tick already queued for it finds the CPU
    /// idle and ends. A retained tick keeps firing and each tick is another round.
    pub(super) fn idle_loop_round(&mut self, cpu: usize, now: u64) {
        let stop_tick = self.cpuidle_enter(cpu, now);
        if stop_tick {
            self.cpus[cpu].tick_on = false;
            self.sched.cpufreq_idle_stop_tick(cpu);
            self.sched.nohz_balance_enter_idle(cpu);
        } else if !self.cpus[cpu].tick_on {
            self.arm_tick(cpu, now);
        }
    }

    /// The scheduler tick (`sched_tick` and `sched_balance_trigger`), on a busy CPU or on
    /// an idle one whose tick was not stopped.
    pub(super) fn tick(&mut self, cpu: usize, now: u64) {
        self.cpus[cpu].tick_queued = false;
        if self.cpus[cpu].newidle.is_some() {
            // Interrupts are off inside schedule(): the tick is lost, the next one comes.
            self.cpus[cpu].tick_on = false;
            return;
        }
        if !self.cpus[cpu].tick_on {
            return;
        }
        let idle = self.cpus[cpu].curr.is_none();
        if idle {
            self.interrupt_entry_by(cpu, now, true);
        }
        self.account_tick(cpu, now);
        // sched_tick's update_curr and task_tick run under the rq lock.
        self.rq_lock(cpu, cpu, now, self.config.cost.tick, Ctx::Tick);
        self.charge(cpu, now, self.config.cost.tick, Site::fixed(Ctx::Tick));
        if self.next_due_timer(cpu, now).is_some() {
            // Other expired hrtimers of this interrupt run their callbacks one by one.
            let at = now.max(self.cpus[cpu].kernel_until);
            self.queue.push(Time(at), Event::TimerHandler { cpu });
        }
        self.sched.tick(cpu, now);
        self.charge_sched_work(cpu, now, Ctx::Tick);
        self.balance_tick(cpu, now);
        if self.sched.rqs[cpu].need_resched
            || (self.cpus[cpu].curr.is_none() && self.sched.rqs[cpu].nr_running > 0)
        {
            // The tick's update_rq_clock ran as the interrupt began; __schedule() runs
            // only after the tick handler, its softirq and the interrupt's exit, and its
            // own update_rq_clock stamps the next task's exec_start from that later
            // clock. Picking at the tick's own instant would let the next slice's
            // delta_exec land on the slice to the nanosecond at a later tick.
            let at = now.max(self.cpus[cpu].kernel_until);
            self.schedule_cpu(cpu, at);
        } else if self.cpus[cpu].curr.is_none() {
            // Back to the idle loop: decide again whether the tick keeps running.
            self.enter_idle(cpu, now);
        }
        if self.cpus[cpu].tick_on && !self.cpus[cpu].tick_queued {
            let period = self.sched.tick_nsec;
            let gen = self.cpus[cpu].tick_gen;
            self.cpus[cpu].tick_queued = true;
            self.queue
                .push(Time((now / period + 1) * period), Event::Tick { cpu, gen });
        }
    }

    /// Makes `cpu` reschedule after a decision taken on `from` at `now`: at once when the
    /// CPU is the one deciding or idle (polling idle notices `need_resched` without an
    /// IPI), else after a reschedule IPI.
    pub(super) fn kick(&mut self, cpu: usize, from: usize, now: u64) {
        if cpu == from {
            return; // The running code reschedules at its next preemption point.
        }
        if self.cpus[cpu].curr.is_none() {
            self.interrupt_entry(cpu, now);
            self.schedule_cpu(cpu, now);
        } else {
            let at = now + self.config.cost.ipi_latency;
            self.queue.push(Time(at), Event::Resched { cpu });
        }
    }

    /// Marks task state after a block and reschedules the CPU.
    pub(super) fn block_and_schedule(&mut self, cpu: usize, now: u64, t: Tid) {
        self.sched.block_current(cpu, now);
        self.charge_sched_work(cpu, now, Ctx::Pick);
        self.tasks[t].state = RtState::Blocked;
        self.schedule_cpu(cpu, now);
    }
}

/// One piece of a stretch of kernel work of mean `mean` at `site`: its duration, drawn
/// around the mean with noise on (a lock spin is a wait, not work, and stays as it is),
/// counted in the CPU's overhead and site times. A piece of 0 ns draws nothing.
#[inline(always)]
fn draw_part(noise: &mut Noise, m: &mut CpuMetrics, mean: u64, site: Site) -> u64 {
    if mean == 0 {
        return 0;
    }
    let d = if site.leaf == Leaf::Spin {
        mean
    } else {
        noise.work(mean)
    };
    m.overhead_total_ns += d;
    m.site_ns[site.index()] += d;
    d
}
