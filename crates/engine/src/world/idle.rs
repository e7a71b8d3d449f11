//! The idle loop: `do_idle` and `cpuidle_idle_call` (kernel/sched/idle.c) over the
//! cpuidle framework of `fairsim-cpuidle`.
//!
//! Each time a CPU finds nothing to run it asks its governor for a state, decides on the
//! tick as the governor says (`tick_nohz_idle_stop_tick` or `_retain_tick`), and enters
//! the state. The next interrupt ends the state: the CPU pays the state's exit latency
//! before it runs anything, the device accounts the residency (`cpuidle_enter_state`)
//! and the governor learns from it (`cpuidle_reflect`). A CPU that is still idle after the
//! interrupt goes round the loop again and asks the governor anew, as `do_idle`'s
//! `while (!need_resched())` loop does. The polling state ends itself after
//! `cpuidle_poll_time`, and the loop goes round too.
//!
//! Without a cpuidle driver (`--cpuidle none`, a qemu guest) `default_idle_call` runs:
//! no states, the tick always stops, and a wakeup pays the flat `idle_exit` cost.

use fairsim_cpuidle::{IdleCtx, IdleStates, StateUsage};

use crate::event::Event;
use crate::profile::{Ctx, Site};
use fairsim_des::time::Time;

use super::idle_state::CState;
use super::World;

impl World {
    /// One round of `cpuidle_idle_call` on an idle `cpu`: the governor's state and tick
    /// decision, then entry into the state. Returns whether the tick stops.
    pub(super) fn cpuidle_enter(&mut self, cpu: usize, now: u64) -> bool {
        if self.idle.devices.is_empty() {
            // cpuidle_not_available: tick_nohz_idle_stop_tick, then default_idle_call,
            // which traces cpu_idle(1).
            self.trace_idle_enter(cpu, now.max(self.cpus[cpu].kernel_until), 1);
            return true;
        }
        // The CPU reaches the idle loop once the kernel work in progress (the switch to
        // the idle task) is done.
        let now = now.max(self.cpus[cpu].kernel_until);
        let tick_nsec = self.sched.tick_nsec;
        let next_timer = self.cpus[cpu]
            .timers
            .iter()
            .map(|&id| self.timer_fire_time(id))
            .min();
        let sleep_length_ns = next_timer.map_or(u64::MAX, |t| t.saturating_sub(now));
        let tick_on = self.cpus[cpu].tick_on;
        // tick_nohz_get_sleep_length's delta_next: the clock event already programmed,
        // the next tick while the tick runs, else the next timer.
        let delta_tick_ns = if tick_on {
            let next_tick = (now / tick_nsec + 1) * tick_nsec;
            sleep_length_ns.min(next_tick - now)
        } else {
            sleep_length_ns
        };
        let table = self.idle.states.table_of(cpu);
        // cpuidle_select is skipped for a driver with a single state: 6.12.117's
        // cpuidle_idle_call enters state 0 and keeps the tick as a polling state needs.
        let sel = if table.states.len() <= 1 {
            fairsim_cpuidle::Selection {
                idx: 0,
                stop_tick: !table.states.first().is_some_and(|s| s.polling),
                sleep_length_queried: false,
            }
        } else {
            let mut ctx = IdleCtx::new(&table.states, tick_nsec);
            ctx.now_ns = now;
            ctx.sleep_length_ns = sleep_length_ns;
            ctx.delta_tick_ns = delta_tick_ns;
            ctx.tick_stopped = !tick_on;
            self.idle.devices[cpu].select(&ctx)
        };
        let polling = table.states[sel.idx].polling;
        let poll_ns = if polling {
            Some(self.idle.devices[cpu].poll_time_ns(&table.states, tick_nsec))
        } else {
            None
        };
        self.idle.devices[cpu].enter(sel.idx, now);
        self.trace_idle_enter(cpu, now, sel.idx as u32);
        self.idle.cstate[cpu] = Some(CState {
            idx: sel.idx,
            since: now,
        });
        self.idle.gen[cpu] += 1;
        if let Some(limit) = poll_ns {
            let gen = self.idle.gen[cpu];
            self.queue
                .push(Time(now + limit.max(1)), Event::PollLimit { cpu, gen });
        }
        // idle.c: the tick stops when the governor says so or is already stopped.
        sel.stop_tick || !tick_on
    }

    /// An interrupt (or a polled `need_resched`) ends `cpu`'s idle state at `now`: the
    /// exit latency is charged to the CPU, the residency is accounted and reflected to
    /// the governor.
    pub(super) fn cpuidle_exit(&mut self, cpu: usize, now: u64, tick_wakeup: bool) {
        if self.idle.devices.is_empty() {
            self.trace_idle_exit(cpu, now);
            self.charge(
                cpu,
                now,
                self.config.cost.idle_exit,
                Site::fixed(Ctx::IdleExit),
            );
            return;
        }
        let Some(cs) = self.idle.cstate[cpu].take() else {
            // Awake between two rounds of the idle loop: nothing to leave.
            return;
        };
        // A state never entered (see below) is left the instant it would have begun.
        self.trace_idle_exit(cpu, now.max(cs.since));
        if now < cs.since {
            // The interrupt came before the CPU got into the state: call_cpuidle sees
            // need_resched (or the pending interrupt) and does not enter it.
            self.idle.devices[cpu].cancel();
            let gen = self.idle.gen[cpu];
            self.queue.push(Time(now), Event::IdleReenter { cpu, gen });
            return;
        }
        let states = &self.idle.states.table_of(cpu).states;
        let exit = states[cs.idx].exit_latency_ns;
        // The state returns once the hardware is out of it: that is when
        // cpuidle_enter_state reads the clock again.
        self.idle.devices[cpu].exit(states, now + exit, tick_wakeup, false);
        if exit > 0 {
            self.charge(cpu, now, exit, Site::fixed(Ctx::IdleExit));
        }
        // If nothing comes to run, do_idle goes round its loop once the interrupt is done.
        let gen = self.idle.gen[cpu];
        self.queue.push(Time(now), Event::IdleReenter { cpu, gen });
    }

    /// `do_idle`'s loop after an interrupt that left the CPU idle: another round of
    /// `cpuidle_idle_call`, once the interrupt's work is done.
    pub(super) fn idle_reenter(&mut self, cpu: usize, gen: u64, now: u64) {
        if self.idle.gen[cpu] != gen
            || self.idle.cstate[cpu].is_some()
            || self.cpus[cpu].curr.is_some()
            || self.cpus[cpu].newidle.is_some()
        {
            return;
        }
        if self.cpus[cpu].kernel_until > now {
            let at = self.cpus[cpu].kernel_until;
            self.queue.push(Time(at), Event::IdleReenter { cpu, gen });
            return;
        }
        if self.sched.rqs[cpu].nr_running > 0 {
            return; // schedule() is on its way.
        }
        self.idle_loop_round(cpu, now);
    }

    /// The polling state's time limit passed with nothing to run (`poll_idle` returns
    /// with `dev->poll_time_limit` set): the loop goes round and the governor chooses
    /// again.
    pub(super) fn poll_limit(&mut self, cpu: usize, gen: u64, now: u64) {
        if self.idle.gen[cpu] != gen {
            return;
        }
        let Some(cs) = self.idle.cstate[cpu].take() else {
            return;
        };
        self.trace_idle_exit(cpu, now);
        let states = &self.idle.states.table_of(cpu).states;
        self.idle.devices[cpu].exit(states, now, false, true);
        debug_assert!(states[cs.idx].polling);
        self.idle_loop_round(cpu, now);
    }

    /// Per CPU and state, the time in each idle state and its entries since the window
    /// opened; empty without a cpuidle driver.
    pub fn cpuidle_usage(&self) -> Vec<Vec<StateUsage>> {
        self.idle.window_usage(self.now.0, self.window_start)
    }

    /// The machine's idle states.
    pub fn idle_states(&self) -> &IdleStates {
        &self.idle.states
    }

    /// Snapshot of the counters when the measurement window opens. A state a CPU sits
    /// in adds its whole residency at its exit, so the part before the window goes into
    /// the snapshot: the window's time is then exactly the time inside it.
    pub(super) fn open_idle_window(&mut self, now: u64) {
        self.idle.base = self
            .idle
            .devices
            .iter()
            .map(|d| d.usage().to_vec())
            .collect();
        for (base, cs) in self.idle.base.iter_mut().zip(&self.idle.cstate) {
            if let Some(cs) = cs {
                if let Some(b) = base.get_mut(cs.idx) {
                    b.time_ns += now.saturating_sub(cs.since);
                }
            }
        }
    }
}
