//! Wakeups, forks, hrtimers and pipes: the paths by which one task makes another runnable.

use fairsim_balance::lb::LbRead;
use fairsim_balance::{wf, WakeDecision};

use crate::event::{Event, Tid};
use fairsim_des::time::Time;

use super::{RtState, Timer, TimerExpiry, World};
use crate::profile::{Ctx, Leaf, Site};

impl World {
    /// Posts a token to task `x` from `cpu` and wakes it if it waits for one.
    pub(super) fn post(&mut self, x: Tid, cpu: usize, now: u64) {
        if self.tasks[x].state == RtState::Exited {
            return;
        }
        self.tasks[x].tokens = self.tasks[x].tokens.saturating_add(1);
        if self.tasks[x].waiting_sem && self.tasks[x].state == RtState::Blocked {
            self.tasks[x].waiting_sem = false;
            self.wake_task(x, cpu, 0, now);
        }
    }

    /// `try_to_wake_up(p)` run on `this_cpu` at `now`. The CPU is chosen now; the task is
    /// enqueued there once the waker has paid the wakeup and scan costs, and later still
    /// when the wakeup goes through the target's wake list (IPI) or a remote rq lock, so
    /// the chosen CPU may have become busy meanwhile.
    pub(super) fn wake_task(&mut self, x: Tid, this_cpu: usize, wake_flags: u32, now: u64) {
        if self.tasks[x].state != RtState::Blocked {
            return;
        }
        let Some(sid) = self.tasks[x].sched_id else {
            return;
        };
        self.tasks[x].state = RtState::Waking;
        self.tasks[x].woken_at = Some(now);
        self.charge(
            this_cpu,
            now,
            self.config.cost.wakeup,
            Site::fixed(Ctx::Wakeup),
        );
        let prev_cpu = self.sched.tasks[sid].cpu;
        let decision = self.sched.try_to_wake_up(sid, this_cpu, wake_flags, now);
        self.charge_sched_work(this_cpu, now, Ctx::Wakeup);
        match decision {
            WakeDecision::Runnable { cpu, preempt } => {
                self.tasks[x].state = RtState::Runnable;
                self.count_wakeup(cpu, this_cpu);
                // ttwu_runnable: the still-queued task is woken in place, and
                // ttwu_do_wakeup traces sched_wakeup at once.
                self.trace_waking(this_cpu, now, x, prev_cpu);
                self.trace_wakeup(this_cpu, now, x, cpu, false);
                if preempt {
                    self.kick(cpu, this_cpu, now);
                }
            }
            WakeDecision::Enqueue {
                cpu,
                wake_flags,
                via_wakelist,
            } => {
                self.count_wakeup(cpu, this_cpu);
                self.trace_waking(this_cpu, now, x, prev_cpu);
                let cost = self.config.cost;
                let mut at = now.max(self.cpus[this_cpu].kernel_until);
                if via_wakelist {
                    at += cost.ipi_latency;
                } else if cpu != this_cpu {
                    self.charge(
                        this_cpu,
                        now,
                        cost.remote_rq_lock,
                        Site::new(Ctx::Wakeup, Leaf::Lock),
                    );
                    // The enqueue lands once the waker's kernel work, the lock included,
                    // is done. `kernel_until` is only that time when the waker has kernel
                    // work ahead of `now`: a charge of 0 ns leaves an older value behind,
                    // which would put the event in the past.
                    at = now.max(self.cpus[this_cpu].kernel_until);
                }
                self.queue.push(
                    Time(at),
                    Event::WakeArrive {
                        task: x,
                        wake_flags,
                        via_wakelist,
                        from_cpu: this_cpu,
                    },
                );
            }
            WakeDecision::NotSleeping => {
                self.tasks[x].state = RtState::Runnable;
                self.tasks[x].woken_at = None;
            }
        }
    }

    fn count_wakeup(&mut self, cpu: usize, this_cpu: usize) {
        if cpu == this_cpu {
            self.metrics.wakeups_local += 1;
        } else {
            self.metrics.wakeups_remote += 1;
        }
    }

    /// The wakeup reaches its CPU: `ttwu_do_activate` there, then preemption.
    pub(super) fn wake_arrive(
        &mut self,
        x: Tid,
        wake_flags: u32,
        via_wakelist: bool,
        from_cpu: usize,
        now: u64,
    ) {
        let Some(sid) = self.tasks[x].sched_id else {
            return;
        };
        let cpu = self.sched.tasks[sid].cpu;
        let cost = self.config.cost;
        if via_wakelist && self.cpus[cpu].newidle.is_some() {
            // Interrupts are off inside schedule(): the IPI is taken once it is done.
            let at = now.max(self.cpus[cpu].kernel_until).max(now + 1);
            self.queue.push(
                Time(at),
                Event::WakeArrive {
                    task: x,
                    wake_flags,
                    via_wakelist,
                    from_cpu,
                },
            );
            return;
        }
        if via_wakelist {
            self.interrupt_entry(cpu, now);
            self.charge(cpu, now, cost.ipi_handle, Site::fixed(Ctx::WakeListIpi));
        }
        // ttwu_do_activate runs under the target's rq lock: taken by the target itself
        // (sched_ttwu_pending, or a local wakeup) or by the remote waker, which spins if
        // another CPU holds it. The enqueue is applied now even when the waker had to
        // spin; only the spin's cost is charged to it.
        let (locker, ctx) = if via_wakelist {
            (cpu, Ctx::WakeListIpi)
        } else {
            (from_cpu, Ctx::WakeActivate)
        };
        self.rq_lock(locker, cpu, now, cost.rq_enqueue, ctx);
        if wake_flags & wf::MIGRATED != 0 {
            self.charge_migration(x, cpu, now, ctx);
        }
        self.sched
            .ttwu_do_activate(sid, wake_flags, via_wakelist, now);
        self.trace_wakeup(locker, now, x, cpu, false);
        self.charge_sched_work(cpu, now, ctx);
        self.tasks[x].state = RtState::Runnable;
        if self.sched.rqs[cpu].need_resched {
            if via_wakelist || cpu == from_cpu {
                self.schedule_cpu(cpu, now);
            } else {
                self.kick(cpu, from_cpu, now);
            }
        }
    }

    /// The cache refill of a task arriving on `cpu` from another CPU, more across LLCs.
    fn charge_migration(&mut self, x: Tid, cpu: usize, now: u64, ctx: Ctx) {
        let cost = self.config.cost;
        let mut c = cost.migration;
        if let Some(prev) = self.tasks[x].last_cpu {
            if !self.sched.cpus_share_cache(prev, cpu) {
                c += cost.migration_cross_llc;
            }
        }
        self.charge(cpu, now, c, Site::new(ctx, Leaf::Refill));
        self.metrics.cpus[cpu].migrations_in += 1;
    }

    /// Forks task `x` from `cpu` at `now`: the parent pays `copy_process`, and once that is
    /// done `wake_up_new_task` chooses the child's CPU and enqueues it there (see
    /// [`World::new_task_arrive`]).
    pub(super) fn fork_task(&mut self, x: Tid, cpu: usize, now: u64) {
        if self.tasks[x].state != RtState::Unborn {
            return;
        }
        self.charge(cpu, now, self.config.cost.fork, Site::fixed(Ctx::Fork));
        self.trace_fork(cpu, now, x);
        let name = self.tasks[x].name.clone();
        let sid = self.sched.create_task(
            &name,
            self.tasks[x].nice,
            self.tasks[x].cpus_allowed.clone(),
            cpu,
        );
        if self.tasks[x].policy != fairsim_balance::Policy::Normal {
            self.sched.set_task_policy(sid, self.tasks[x].policy);
        }
        // `sched_cgroup_fork`: the child is in its launcher's group before
        // `wake_up_new_task` first enqueues it: its cgroup's, or with
        // kernel.sched_autogroup_enabled=1 and the root cgroup its session's autogroup
        // (`autogroup_task_group`). `prepare` created every group a task names, so the
        // scheduler knows the id.
        let tg = self
            .sched
            .autogroup_task_group(self.tasks[x].cgroup, self.tasks[x].autogroup);
        if tg != fairsim_balance::group::ROOT_GROUP {
            let placed = self.sched.set_task_group(sid, tg);
            debug_assert!(placed.is_ok(), "{placed:?}");
        }
        if let Some((min, max)) = self.tasks[x].uclamp {
            // Every source of clamps (uclamp=, uclampset, rt-app's keys) is parsed with
            // uclamp_validate's rules, so the kernel's checks pass here.
            let accepted = self.sched.sched_setattr_uclamp(sid, min, max);
            debug_assert!(accepted.is_ok(), "{accepted:?}");
        }
        self.sched.task_fork(sid, cpu, now);
        if self.by_sched_id.len() <= sid {
            self.by_sched_id.resize(sid + 1, usize::MAX);
        }
        self.by_sched_id[sid] = x;
        self.tasks[x].sched_id = Some(sid);
        self.tasks[x].state = RtState::Waking;
        self.live_tasks += 1;
        let at = now.max(self.cpus[cpu].kernel_until);
        self.queue.push(
            Time(at),
            Event::NewTaskArrive {
                task: x,
                from_cpu: cpu,
            },
        );
    }

    /// `wake_up_new_task` at the end of the fork: select the child's CPU
    /// (`SD_BALANCE_FORK`) and enqueue it there at once, as the kernel does under the
    /// rq lock. Selecting at the end of `copy_process` matters when a parent forks in a
    /// loop: the previous child has had the fork's duration to run and go to sleep, so
    /// the next selection sees it asleep rather than just enqueued.
    pub(super) fn new_task_arrive(&mut self, x: Tid, from_cpu: usize, now: u64) {
        let Some(sid) = self.tasks[x].sched_id else {
            return;
        };
        self.sched.wake_up_new_task_select(sid, from_cpu, now);
        self.charge_sched_work(from_cpu, now, Ctx::WakeUpNewTask);
        let cpu = self.sched.tasks[sid].cpu;
        self.sched.wake_up_new_task_activate(sid, now);
        self.trace_wakeup(from_cpu, now, x, cpu, true);
        self.charge_sched_work(cpu, now, Ctx::WakeUpNewTask);
        self.tasks[x].state = RtState::Runnable;
        if self.sched.rqs[cpu].need_resched {
            if cpu == from_cpu {
                if self.cpus[cpu].curr.is_none() {
                    self.schedule_cpu(cpu, now);
                }
                // Otherwise the forking task reschedules at its next preemption point.
            } else {
                self.kick(cpu, from_cpu, now);
            }
        }
    }

    /// Arms task `t`'s hrtimer on `cpu` for `d` ns from `now`, with the task's slack.
    pub(super) fn arm_timer(&mut self, cpu: usize, t: Tid, now: u64, d: u64) {
        self.cancel_timer(t);
        let slack = self.config.timer_slack;
        let soft = now + d;
        let hard = match self.config.timer_expiry {
            TimerExpiry::Hard => soft + slack,
            TimerExpiry::Mid => soft + slack / 2,
            TimerExpiry::Soft => soft,
        };
        // An interrupt the engine does not model may run the timer earlier in its slack
        // window (noise); it never fires before its soft expiry.
        let fire = hard - self.noise.timer_early(hard - soft);
        // Each task has at most one armed timer, so its slot is its own index.
        let id = t;
        let gen = self.timers[id].gen + 1;
        self.timers[id] = Timer {
            cpu,
            task: t,
            soft,
            fire,
            armed: true,
            gen,
        };
        self.tasks[t].timer = Some(id);
        self.cpus[cpu].timers.push(id);
        self.queue
            .push(Time(fire), Event::TimerExpire { timer: id, gen });
    }

    /// When timer `id` fires if nothing runs it earlier (its hard expiry as modelled,
    /// less the noise's early firing).
    pub(super) fn timer_fire_time(&self, id: usize) -> u64 {
        self.timers[id].fire
    }

    /// Cancels task `t`'s timer, if armed (`hrtimer_cancel`).
    pub(super) fn cancel_timer(&mut self, t: Tid) {
        if let Some(id) = self.tasks[t].timer.take() {
            let cpu = self.timers[id].cpu;
            self.timers[id].armed = false;
            self.timers[id].gen += 1;
            self.cpus[cpu].timers.retain(|&x| x != id);
        }
    }

    /// An hrtimer interrupt on `cpu`: the CPU leaves idle if it was, then every timer on
    /// it whose soft expiry has passed fires; a preemption the wakeups asked for happens
    /// on the way out of the interrupt.
    ///
    /// The callbacks run once the idle exit and interrupt entry have taken their time, so
    /// a timer wakeup chooses its CPU and enqueues there close together, as `ttwu` does
    /// inside the handler; meanwhile the CPU still looks idle to other wakers, as a CPU
    /// leaving C1 does in the kernel.
    pub(super) fn timer_interrupt(&mut self, cpu: usize, now: u64) {
        self.interrupt_entry(cpu, now);
        self.charge(
            cpu,
            now,
            self.config.cost.timer_irq,
            Site::fixed(Ctx::TimerIrq),
        );
        let at = now.max(self.cpus[cpu].kernel_until);
        if at > now {
            self.queue.push(Time(at), Event::TimerHandler { cpu });
        } else {
            self.timer_handler(cpu, now);
        }
    }

    /// The timer interrupt's handler: the expired timers' callbacks in expiry order, then
    /// the preemption the wakeups asked for on the way out of the interrupt.
    ///
    /// The callbacks run one after another: each wakeup's cost elapses, and its task is
    /// enqueued, before the next callback chooses a CPU. Two timers of one CPU that expire
    /// together (slack coalesces them) therefore do not both pick that idle CPU: the second
    /// sees the first already queued there, as `hrtimer_run_queues` calling `ttwu` for
    /// each in turn does.
    pub(super) fn timer_handler(&mut self, cpu: usize, now: u64) {
        while let Some(id) = self.next_due_timer(cpu, now) {
            let t = self.timers[id].task;
            self.cancel_timer(t);
            self.tasks[t].timer_fired = true;
            self.tasks[t].waiting_sem = false;
            self.metrics.timers_fired += 1;
            self.wake_task(t, cpu, 0, now);
            let at = now.max(self.cpus[cpu].kernel_until);
            if at > now && self.next_due_timer(cpu, now).is_some() {
                // The wakeup's enqueue (queued for `at`) goes first; the next callback
                // runs after it.
                self.queue.push(Time(at), Event::TimerHandler { cpu });
                return;
            }
        }
        if self.sched.rqs[cpu].need_resched {
            // The preemption happens on the interrupt's exit, after the callbacks: the
            // pick reads the clock there, as after the tick.
            let at = now.max(self.cpus[cpu].kernel_until);
            self.schedule_cpu(cpu, at);
        }
    }

    /// The earliest timer of `cpu` whose soft expiry has passed at `now`.
    pub(super) fn next_due_timer(&self, cpu: usize, now: u64) -> Option<usize> {
        self.cpus[cpu]
            .timers
            .iter()
            .map(|&id| (self.timers[id].soft, id))
            .filter(|&(soft, _)| soft <= now)
            .min()
            .map(|(_, id)| id)
    }

    /// `pipe_write` of one message: false when the task must block (buffer full). A
    /// reader is woken with a sync wakeup (`wake_up_interruptible_sync_poll`), as the
    /// kernel does when the buffer was empty (pipes) or on every write (sockets,
    /// `sock_def_readable`).
    pub(super) fn pipe_write(
        &mut self,
        cpu: usize,
        now: u64,
        t: Tid,
        p: usize,
        bytes: u32,
    ) -> bool {
        let pipe = &mut self.pipes[p];
        let charge = pipe.charge_per_msg.unwrap_or(u64::from(bytes));
        if pipe.used + charge > pipe.capacity && pipe.used > 0 {
            if !pipe.writers.contains(&t) {
                pipe.writers.push(t);
            }
            return false;
        }
        pipe.used += charge;
        pipe.writers.retain(|&w| w != t);
        if !pipe.readers.is_empty() {
            let r = pipe.readers.remove(0);
            self.wake_task(r, cpu, wf::SYNC, now);
        }
        true
    }

    /// `pipe_read` of one message: false when the task must block (too little buffered).
    /// A blocked writer is woken with a sync wakeup once its message fits (pipes) or half
    /// the buffer is free (sockets, `unix_write_space`).
    pub(super) fn pipe_read(&mut self, cpu: usize, now: u64, t: Tid, p: usize, bytes: u32) -> bool {
        let pipe = &mut self.pipes[p];
        let charge = pipe.charge_per_msg.unwrap_or(u64::from(bytes));
        if pipe.used < charge {
            if !pipe.readers.contains(&t) {
                pipe.readers.push(t);
            }
            return false;
        }
        pipe.used -= charge;
        pipe.readers.retain(|&r| r != t);
        let writable = if pipe.socket {
            pipe.used * 2 <= pipe.capacity
        } else {
            pipe.used + charge <= pipe.capacity
        };
        if writable && !pipe.writers.is_empty() {
            let w = pipe.writers.remove(0);
            self.wake_task(w, cpu, wf::SYNC, now);
        }
        true
    }
}
