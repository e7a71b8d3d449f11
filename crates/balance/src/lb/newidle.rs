//! `sched_balance_newidle` (was `newidle_balance`): a CPU about to go idle tries to pull
//! work, domain by domain, while its expected idle time (`avg_idle`) exceeds the cost of
//! balancing so far plus the domain's `max_newidle_lb_cost`, with 6.12.117's proportional
//! gate (`NI_RANDOM`).
//!
//! The kernel measures each domain's cost with `sched_clock`. Here the balance is a
//! resumable state machine: each step reads or changes the state at the engine's `now`,
//! the engine charges the modelled cost of the work the step did, and the next step runs
//! that much later. A domain's cost is the virtual time between its start and end, so
//! `max_newidle_lb_cost` and `avg_idle` see the modelled costs, and other CPUs act while
//! this one is scanning, as they do on real hardware.

use fairsim_topology::{SdFlags, SdId};

use crate::features::Feature;
use crate::lb::balancer::Balancer;
use crate::lb::host::BalanceHost;
use crate::lb::jiffies::time_after;
use crate::lb::msecs_to_jiffies;
use crate::lb::rq_balance::{BalanceAct, LbScan};
use crate::sched::Sched;
use crate::stats::{CpuIdleType, NewidleGate};

/// A newidle balance in progress on one CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewidleBalance {
    /// The balancing CPU.
    pub cpu: usize,
    /// Start of the current domain's measurement (engine ns).
    pub(crate) t0: u64,
    /// `curr_cost`: ns spent so far.
    pub(crate) curr_cost: u64,
    /// `next_balance` in jiffies.
    pub(crate) next_balance: u64,
    /// The next domain to consider.
    pub(crate) next_sd: Option<SdId>,
    /// A scanned domain waiting for its act phase, with its NI_RANDOM weight.
    pub(crate) pending_scan: Option<(LbScan, u32)>,
    /// A balanced domain whose cost is still being charged: (domain, weight, pulled,
    /// continue_balancing).
    pub(crate) finishing: Option<(SdId, u32, bool, bool)>,
    /// `pulled_task`.
    pub(crate) pulled: i32,
    /// Whose loop this is: 6.12's, Linux 3.9's `idle_balance` (LEGACY_LB), or Linux
    /// 6.5's `newidle_balance` (`lb/v6_5/newidle.rs`).
    pub(crate) balancer: Balancer,
}

/// What a newidle step asks of the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewidleStep {
    /// Charge the work counters ([`Sched::take_work`]) as time, then call
    /// [`Sched::newidle_step`] again.
    Continue,
    /// The balance is over: >0 tasks were pulled or arrived, 0 nothing (the CPU goes
    /// idle).
    Done(i32),
}

impl NewidleBalance {
    /// The runqueue whose lock the next step takes, if that step is an act phase that will
    /// lock its busiest CPU (see [`LbScan::lock_target`]). The act begins here at `now`:
    /// a scan that found a busiest group chooses its runqueue first
    /// ([`BalanceAct::lb_resolve_src_rq`]), which reads runqueues: the caller charges
    /// that work before it waits for the lock.
    pub fn pending_lock(&mut self, s: &mut Sched, now: u64) -> Option<usize> {
        let (scan, _) = self.pending_scan.as_mut()?;
        s.set_now(now);
        s.lb_resolve_src_rq(scan);
        scan.lock_target(s)
    }
}

// `NewidleBalance::start` and `NewidleBalance::step`, which choose the loop of the run's
// kernel, are era entry points in `lb/era.rs`; this module holds 6.12's loop (and 3.9's,
// which shares its helpers).
impl NewidleBalance {
    /// The start of 6.12's `sched_balance_newidle(this_rq)` at `now`: the early exits
    /// (pending wakeup, no domain, nothing overloaded, or `avg_idle` below the first
    /// domain's cost), the idle stamp, and the blocked-load update. `Err(pulled)` when it
    /// ends at once.
    pub(crate) fn start_v6_12<H: BalanceAct + ?Sized>(
        h: &mut H,
        cpu: usize,
        now: u64,
    ) -> Result<NewidleBalance, i32> {
        h.newidle_enter(cpu);
        if h.rq_ttwu_pending(cpu) {
            return Err(0);
        }
        h.set_idle_stamp(cpu);
        let mut next_balance = h.jiffies() + h.hz();
        let Some(sd) = h.topo().cpus[cpu].sd else {
            return Err(newidle_out(h, cpu, 0, next_balance));
        };
        // The `||` reads the overload first, so a call it stops is counted there.
        let overloaded = h.rd_overloaded(cpu);
        if !overloaded || h.avg_idle(cpu) < h.sd_rt(sd).max_newidle_lb_cost {
            let gate = if overloaded {
                NewidleGate::AvgIdle
            } else {
                NewidleGate::NotOverloaded
            };
            h.newidle_gated(cpu, gate);
            h.update_next_balance(sd, &mut next_balance);
            return Err(newidle_out(h, cpu, 0, next_balance));
        }
        h.update_blocked_averages(cpu, now);
        Ok(NewidleBalance {
            cpu,
            t0: now,
            curr_cost: 0,
            next_balance,
            next_sd: Some(sd),
            pending_scan: None,
            finishing: None,
            pulled: 0,
            balancer: Balancer::V6_12,
        })
    }

    /// The start of Linux 3.9's `idle_balance(this_cpu, this_rq)`: stamp the idle start,
    /// give up when the CPU's average idle time is below `sysctl_sched_migration_cost`,
    /// and refresh blocked averages. There is no cost budget per domain and no overload
    /// or pending-wakeup test in 3.9.
    pub(crate) fn start_v3_9<H: BalanceAct + ?Sized>(
        h: &mut H,
        cpu: usize,
        now: u64,
    ) -> Result<NewidleBalance, i32> {
        h.set_idle_stamp(cpu);
        if h.avg_idle(cpu) < h.migration_cost() {
            h.newidle_gated(cpu, NewidleGate::AvgIdle);
            return Err(picks_v3_9(h, cpu, 0));
        }
        let Some(sd) = h.topo().cpus[cpu].sd else {
            return Err(picks_v3_9(h, cpu, 0));
        };
        h.update_blocked_averages(cpu, now);
        Ok(NewidleBalance {
            cpu,
            t0: now,
            curr_cost: 0,
            next_balance: h.jiffies() + h.hz(),
            next_sd: Some(sd),
            pending_scan: None,
            finishing: None,
            pulled: 0,
            balancer: Balancer::V3_9,
        })
    }

    /// One step of Linux 3.9's `idle_balance`: each `SD_BALANCE_NEWIDLE` domain
    /// bottom-up, a newly idle `load_balance` (scan, then act once the scan's cost has
    /// elapsed), `next_balance` from each domain's interval, and a stop at the first
    /// domain that pulled.
    pub(crate) fn step_v3_9<H: BalanceAct + ?Sized>(&mut self, h: &mut H, now: u64) -> NewidleStep {
        let cpu = self.cpu;
        if let Some((scan, _)) = self.pending_scan.take() {
            let sd = scan.env.sd;
            let r = h.sched_balance_rq_act(scan, now);
            if let Some(b) = r.active_balance {
                h.push_active_balance(b);
            }
            self.next_balance_v3_9(h, sd);
            if r.moved > 0 {
                self.pulled = 1;
                h.clear_idle_stamp(cpu);
                return NewidleStep::Done(self.finish_v3_9(h));
            }
            self.next_sd = h.topo().domain(sd).parent;
            return NewidleStep::Continue;
        }
        while let Some(sd) = self.next_sd {
            if h.topo().domain(sd).flags.contains(SdFlags::BALANCE_NEWIDLE) {
                let scan = h.sched_balance_rq_scan(cpu, sd, CpuIdleType::NewlyIdle, now);
                self.pending_scan = Some((scan, 1));
                return NewidleStep::Continue;
            }
            self.next_balance_v3_9(h, sd);
            self.next_sd = h.topo().domain(sd).parent;
        }
        NewidleStep::Done(self.finish_v3_9(h))
    }

    /// `next_balance` of 3.9's `idle_balance` after domain `sd`: its last balance plus
    /// `msecs_to_jiffies(balance_interval)`, if earlier.
    fn next_balance_v3_9<H: BalanceAct + ?Sized>(&mut self, h: &H, sd: SdId) {
        let interval = msecs_to_jiffies(h.sd_rt(sd).balance_interval, h.hz());
        let at = h.sd_rt(sd).last_balance + interval;
        if time_after(self.next_balance, at) {
            self.next_balance = at;
        }
    }

    /// The end of 3.9's `idle_balance`: a CPU that pulled, or whose next balance has
    /// passed, takes the earliest next balance of its domains.
    fn finish_v3_9<H: BalanceAct + ?Sized>(&mut self, h: &mut H) -> i32 {
        let cpu = self.cpu;
        if self.pulled != 0 || time_after(h.jiffies(), h.rq_next_balance(cpu)) {
            h.set_rq_next_balance(cpu, self.next_balance);
        }
        picks_v3_9(h, cpu, self.pulled)
    }

    /// One step of 6.12's `sched_balance_newidle` domain loop.
    pub(crate) fn step_v6_12<H: BalanceAct + ?Sized>(
        &mut self,
        h: &mut H,
        now: u64,
    ) -> NewidleStep {
        let nb = self;
        let cpu = nb.cpu;
        if let Some((scan, weight)) = nb.pending_scan.take() {
            // The scan's cost has elapsed: act on the state as it is now.
            let sd = scan.env.sd;
            let r = h.sched_balance_rq_act(scan, now);
            nb.finishing = Some((sd, weight, r.moved > 0, r.continue_balancing));
            if let Some(b) = r.active_balance {
                h.push_active_balance(b);
            }
            return NewidleStep::Continue;
        }
        if let Some((sd, weight, pulled, cont)) = nb.finishing.take() {
            let domain_cost = now - nb.t0;
            nb.curr_cost += domain_cost;
            nb.t0 = now;
            h.update_newidle_cost(sd, domain_cost, weight * u32::from(pulled));
            if pulled {
                nb.pulled = 1;
            }
            if pulled || !cont {
                return NewidleStep::Done(newidle_finish(h, nb));
            }
            nb.next_sd = h.topo().domain(sd).parent;
        }
        while let Some(sd) = nb.next_sd {
            h.update_next_balance(sd, &mut nb.next_balance);
            if h.avg_idle(cpu) < nb.curr_cost + h.sd_rt(sd).max_newidle_lb_cost {
                break;
            }
            let parent = h.topo().domain(sd).parent;
            if h.topo().domain(sd).flags.contains(SdFlags::BALANCE_NEWIDLE) {
                let mut weight = 1u32;
                // Mainline's NI_RATE patch also skips the dice when the ratio is full; the
                // outcome is the same (weight 1), but 6.12.117 still draws a number, which
                // moves the CPU's random stream, so the skip follows NI_RATE.
                let full = h.features().has(Feature::NI_RATE) && h.sd_rt(sd).newidle_ratio >= 1024;
                if h.features().has(Feature::NI_RANDOM) && !full {
                    let d1k = h.next_random(cpu) % 1024;
                    weight = 1 + h.sd_rt(sd).newidle_ratio;
                    if d1k > weight {
                        h.update_newidle_stats(sd, 0);
                        nb.next_sd = parent;
                        continue;
                    }
                    weight = (1024 + weight / 2) / weight;
                }
                let scan = h.sched_balance_rq_scan(cpu, sd, CpuIdleType::NewlyIdle, now);
                nb.pending_scan = Some((scan, weight));
                nb.next_sd = parent;
                return NewidleStep::Continue;
            }
            nb.next_sd = parent;
        }
        NewidleStep::Done(newidle_finish(h, nb))
    }
}

/// What 3.9's `__schedule` does after `idle_balance`: `pick_next_task` runs whatever is
/// queued, pulled or woken meanwhile, so the engine's pick is asked for (a non-zero
/// result) whenever a task is queued; `idle_stamp` stays as `idle_balance` left it.
fn picks_v3_9<H: BalanceHost + ?Sized>(h: &H, cpu: usize, pulled: i32) -> i32 {
    if pulled != 0 || h.rq_h_nr_queued(cpu) != 0 {
        1
    } else {
        0
    }
}

/// The end of `sched_balance_newidle`: record the cost, count tasks that arrived
/// meanwhile as pulled, and set `next_balance`, `idle_stamp` and the nohz kick.
pub(crate) fn newidle_finish<H: BalanceHost + ?Sized>(h: &mut H, nb: &mut NewidleBalance) -> i32 {
    let cpu = nb.cpu;
    if nb.curr_cost > h.max_idle_balance_cost(cpu) {
        h.set_max_idle_balance_cost(cpu, nb.curr_cost);
    }
    let mut pulled = nb.pulled;
    if h.rq_h_nr_queued(cpu) != 0 && pulled == 0 {
        pulled = 1;
    }
    newidle_out(h, cpu, pulled, nb.next_balance)
}

/// `out:` of `sched_balance_newidle`.
pub(crate) fn newidle_out<H: BalanceHost + ?Sized>(
    h: &mut H,
    cpu: usize,
    pulled: i32,
    next_balance: u64,
) -> i32 {
    if time_after(h.rq_next_balance(cpu), next_balance) {
        h.set_rq_next_balance(cpu, next_balance);
    }
    if pulled != 0 {
        h.clear_idle_stamp(cpu);
    } else {
        h.nohz_newidle_balance(cpu);
    }
    pulled
}

impl Sched {
    /// [`NewidleBalance::start`] on the engine's machine.
    pub fn newidle_start(&mut self, cpu: usize, now: u64) -> Result<NewidleBalance, i32> {
        self.rqs[cpu].stats.newidle_calls += 1;
        NewidleBalance::start(self, cpu, now)
    }

    /// [`NewidleBalance::step`] on the engine's machine.
    pub fn newidle_step(&mut self, nb: &mut NewidleBalance, now: u64) -> NewidleStep {
        nb.step(self, now)
    }

    /// `sched_balance_newidle(this_rq)` run to completion at one instant: every step sees
    /// the same `now`, so modelled costs are zero. Tests and callers without an engine use
    /// it; the engine steps [`Sched::newidle_start`] / [`Sched::newidle_step`] instead.
    pub fn sched_balance_newidle_inline(&mut self, cpu: usize, now: u64) -> i32 {
        let mut nb = match NewidleBalance::start(self, cpu, now) {
            Ok(nb) => nb,
            Err(p) => return p,
        };
        loop {
            if let NewidleStep::Done(p) = nb.step(self, now) {
                return p;
            }
        }
    }
}
