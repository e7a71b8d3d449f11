//! What an emulated CPU does each time its thread turns to it: fire its expired timers
//! (each wakes a sleeping token onto this CPU, as a nanosleep's hrtimer does), run the
//! periodic balance when its tick says so, then run one token for a real spin, let it wake
//! its partner (`--pattern pairs`) and put it to sleep, and when the runqueue is empty after
//! that, run `sched_balance_newidle` on
//! the live shared state, as `__schedule` does before it picks the idle task.

use std::cmp::Reverse;
use std::sync::atomic::Ordering;

use fairsim_balance::lb::NewidleBalance;
use fairsim_balance::lb::NewidleStep;
use fairsim_balance::{BalanceHost, CpuIdleType, LbRead, PeriodicBalance};

use super::cpu::CpuCtx;

/// The token program: spin, then (with `wake_partner`) wake the partner token, then
/// sleep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenProgram {
    /// Wall ns each run spins.
    pub spin_ns: u64,
    /// Wall ns each sleep lasts (the timer's expiry; the CPU sees it at its next turn).
    pub sleep_ns: u64,
    /// Tokens come in pairs (0 and 1, 2 and 3, ...): after its run, a token wakes its
    /// partner if that one sleeps, as a schbench worker or a pipe peer would.
    pub wake_partner: bool,
}

/// What a step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOutcome {
    /// A token ran.
    Ran,
    /// Nothing to run; the earliest timer of this CPU expires at this time (ns since
    /// start), if any.
    Idle(Option<u64>),
}

impl CpuCtx<'_> {
    /// One turn of this CPU; see the module docs.
    pub fn step(&mut self, prog: TokenProgram) -> StepOutcome {
        let cpu = self.cpu;
        let now = self.w.now_ns();
        self.set_now(now);
        self.fire_timers(now);
        self.tick(now);
        let ue = self.w.util_est;
        let picked = {
            let mut g = self.lock(cpu);
            g.update_clock(Self::kclock(now));
            g.pick_next(ue)
        };
        let Some(p) = picked else {
            let g = self.lock(cpu);
            return StepOutcome::Idle(g.sleepers.peek().map(|Reverse((t, _))| *t));
        };
        self.stats.picks += 1;
        // The token runs with no lock held: other CPUs see this CPU busy and may pull
        // the tokens queued behind it.
        let end = now + prog.spin_ns;
        let mut t = now;
        while t < end {
            std::hint::spin_loop();
            t = self.w.now_ns();
        }
        self.stats.busy_ns += t - now;
        self.set_now(t);
        // The token wakes its partner before it goes to sleep, as a task calls
        // try_to_wake_up before its own schedule().
        if prog.wake_partner {
            self.wake_partner(p ^ 1, t);
        }
        let empty = {
            let mut g = self.lock(cpu);
            g.update_clock(Self::kclock(t));
            if let Some(mut tok) = g.dequeue(p, false, ue) {
                tok.loops += 1;
                tok.wake_at = t + prog.sleep_ns;
                g.sleepers.push(Reverse((tok.wake_at, p)));
                g.asleep.insert(p, tok);
                self.w.asleep_on[p].store(cpu, Ordering::Relaxed);
                self.stats.loops += 1;
            }
            g.tokens.is_empty()
        };
        if empty {
            self.newidle(t);
        }
        StepOutcome::Ran
    }

    /// `hrtimer_interrupt`: each expired timer wakes its token onto this CPU
    /// (`ttwu_do_activate`, folding the idle time into `avg_idle`).
    pub fn fire_timers(&mut self, now: u64) {
        let ue = self.w.util_est;
        let mut g = self.lock(self.cpu);
        g.update_clock(Self::kclock(now));
        while let Some(&Reverse((t, p))) = g.sleepers.peek() {
            if t > now {
                break;
            }
            g.sleepers.pop();
            // A partner's wakeup may have taken the token already (the timer was
            // cancelled), and it may sleep again with another expiry.
            if g.asleep.get(&p).is_some_and(|tok| tok.wake_at == t) {
                if let Some(tok) = g.asleep.remove(&p) {
                    self.w.asleep_on[p].store(usize::MAX, Ordering::Relaxed);
                    if g.ttwu_do_activate(p, tok, ue) {
                        self.w.rd_overloaded.store(true, Ordering::Relaxed);
                    }
                    self.stats.wakeups += 1;
                    self.stats.wakeups_local += 1;
                }
            }
        }
    }

    /// `try_to_wake_up(q)` from this CPU: read where `q` sleeps without a lock (as
    /// `ttwu` reads `p->cpu`), lock that runqueue, and if `q` is still asleep there,
    /// cancel its timer and enqueue it on that CPU (its previous CPU: race mode has no
    /// wakeup placement), then kick that CPU's thread as the wakeup IPI would.
    pub fn wake_partner(&mut self, q: usize, now: u64) {
        let Some(slot) = self.w.asleep_on.get(q) else {
            return;
        };
        let target = slot.load(Ordering::Relaxed);
        if target >= self.w.rqs.len() {
            return;
        }
        let ue = self.w.util_est;
        {
            let mut g = self.lock(target);
            let Some(tok) = g.asleep.remove(&q) else {
                return;
            };
            slot.store(usize::MAX, Ordering::Relaxed);
            g.update_clock(Self::kclock(now));
            if g.ttwu_do_activate(q, tok, ue) {
                self.w.rd_overloaded.store(true, Ordering::Relaxed);
            }
        }
        self.stats.partner_wakeups += 1;
        self.stats.wakeups += 1;
        self.stats.wakeups_local += u64::from(target == self.cpu);
        self.w.kick(target);
    }

    /// `sched_tick` -> `sched_balance_trigger`: when `jiffies` reaches `next_balance`, the
    /// softirq updates blocked averages and runs `sched_balance_domains`.
    fn tick(&mut self, now: u64) {
        if self.jiffies() < self.next_balance {
            return;
        }
        let idle = if self.idle_cpu(self.cpu) {
            CpuIdleType::Idle
        } else {
            CpuIdleType::NotIdle
        };
        self.stats.periodic_runs += 1;
        self.update_blocked_averages(self.cpu, now);
        self.sched_balance_domains(self.cpu, idle, now);
    }

    /// `sched_balance_newidle(this_rq)`, stepped through its domains with the wall clock,
    /// so each domain's cost is real time.
    fn newidle(&mut self, now: u64) {
        self.stats.newidle_calls += 1;
        let cpu = self.cpu;
        let t0 = now;
        let pulled = match NewidleBalance::start(self, cpu, now) {
            Err(p) => p,
            Ok(mut nb) => {
                self.stats.newidle_balances += 1;
                loop {
                    let t = self.w.now_ns();
                    if let NewidleStep::Done(p) = nb.step(self, t) {
                        break p;
                    }
                }
            }
        };
        if pulled > 0 {
            self.stats.newidle_pulled += 1;
        } else {
            self.stats.goidle += 1;
        }
        self.stats.newidle_ns += self.w.now_ns().saturating_sub(t0);
    }
}
