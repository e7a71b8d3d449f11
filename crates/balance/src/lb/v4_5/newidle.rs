//! Linux 4.5's `idle_balance(this_rq)` (kernel/sched/fair.c; 4.15's `idle_balance(this_rq,
//! rf)` is the same loop around the lock pinning, plus a `cpu_active` test that always
//! passes here), stepped like 6.12's in [`crate::lb::newidle`]: each domain's newly idle
//! `load_balance` is a scan, then an act once the scan's cost has elapsed, and the
//! domain's cost is the virtual time from the scan's start to the act's end.
//!
//! Differences from 3.9's `idle_balance` (stepped in `lb/newidle.rs`): the root domain
//! must be overloaded (`rd->overload`, some CPU with two tasks); each domain is entered
//! only while the expected idle time exceeds the cost spent so far plus the domain's
//! `max_newidle_lb_cost`, which each balance raises (and `rebalance_domains` decays);
//! the loop also stops when a task arrived meanwhile; the total cost raises
//! `rq->max_idle_balance_cost`; and a task that arrived while the lock was dropped counts
//! as pulled. Differences from 6.12's `sched_balance_newidle`: no NI_RANDOM gate, no
//! pending-wakeup exit at the start, `max_newidle_lb_cost` only rises here, the loop does
//! not stop when a level says another CPU balances it, and no nohz blocked-load kick at
//! the end.

use fairsim_topology::{SdFlags, SdId};

use crate::lb::era::Balancer;
use crate::lb::jiffies::time_after;
use crate::lb::newidle::{NewidleBalance, NewidleStep};
use crate::lb::rq_balance::BalanceAct;
use crate::stats::{CpuIdleType, NewidleGate};

impl NewidleBalance {
    /// The start of 4.5's `idle_balance`: stamp the idle start; give up when the CPU's
    /// average idle time is below `sysctl_sched_migration_cost` or no CPU of the root
    /// domain is overloaded (moving `next_balance` in to the lowest domain's); refresh
    /// blocked averages. `Err(pulled)` when it ends at once.
    pub(crate) fn start_v4_5<H: BalanceAct + ?Sized>(
        h: &mut H,
        cpu: usize,
        now: u64,
    ) -> Result<NewidleBalance, i32> {
        let mut next_balance = h.jiffies() + h.hz();
        h.set_idle_stamp(cpu);
        let lowest = h.topo().cpus[cpu].sd;
        if h.avg_idle(cpu) < h.migration_cost() || !h.rd_overloaded(cpu) {
            // 4.5 reads avg_idle first, so a call it stops is counted there.
            let gate = if h.avg_idle(cpu) < h.migration_cost() {
                NewidleGate::AvgIdle
            } else {
                NewidleGate::NotOverloaded
            };
            h.newidle_gated(cpu, gate);
            if let Some(sd) = lowest {
                h.update_next_balance(sd, &mut next_balance);
            }
            return Err(out_v4_5(h, cpu, 0, next_balance));
        }
        h.update_blocked_averages(cpu, now);
        Ok(NewidleBalance {
            cpu,
            t0: now,
            curr_cost: 0,
            next_balance,
            next_sd: lowest,
            pending_scan: None,
            finishing: None,
            pulled: 0,
            balancer: h.balancer(),
        })
    }

    /// One step of 4.5's `idle_balance` loop: for each domain bottom-up, stop when the
    /// cost so far plus the domain's maximum exceeds the expected idle time; balance an
    /// `SD_BALANCE_NEWIDLE` domain (scan, then act), record its cost, pull `next_balance`
    /// in, and stop once a task was pulled or has arrived.
    pub(crate) fn step_v4_5<H: BalanceAct + ?Sized>(&mut self, h: &mut H, now: u64) -> NewidleStep {
        debug_assert!(matches!(self.balancer, Balancer::V4_5 | Balancer::V4_15));
        let cpu = self.cpu;
        if let Some((scan, weight)) = self.pending_scan.take() {
            // The scan's cost has elapsed: act on the state as it is now.
            let sd = scan.env.sd;
            let r = h.sched_balance_rq_act(scan, now);
            self.finishing = Some((sd, weight, r.moved > 0, r.continue_balancing));
            if let Some(b) = r.active_balance {
                h.push_active_balance(b);
            }
            return NewidleStep::Continue;
        }
        if let Some((sd, _, pulled, _)) = self.finishing.take() {
            let domain_cost = now - self.t0;
            if domain_cost > h.sd_rt(sd).max_newidle_lb_cost {
                h.sd_rt_mut(sd).max_newidle_lb_cost = domain_cost;
            }
            self.curr_cost += domain_cost;
            if pulled {
                self.pulled = 1;
            }
            if self.after_domain_v4_5(h, sd) {
                return NewidleStep::Done(self.finish_v4_5(h));
            }
        }
        while let Some(sd) = self.next_sd {
            if h.avg_idle(cpu) < self.curr_cost + h.sd_rt(sd).max_newidle_lb_cost {
                h.update_next_balance(sd, &mut self.next_balance);
                break;
            }
            if h.topo().domain(sd).flags.contains(SdFlags::BALANCE_NEWIDLE) {
                self.t0 = now;
                let scan = h.sched_balance_rq_scan(cpu, sd, CpuIdleType::NewlyIdle, now);
                self.pending_scan = Some((scan, 1));
                return NewidleStep::Continue;
            }
            if self.after_domain_v4_5(h, sd) {
                break;
            }
        }
        NewidleStep::Done(self.finish_v4_5(h))
    }

    /// The end of one domain of the loop: `update_next_balance(sd, 0, &next_balance)`,
    /// then stop if a task was pulled or is now queued (true), else go up a level.
    fn after_domain_v4_5<H: BalanceAct + ?Sized>(&mut self, h: &mut H, sd: SdId) -> bool {
        h.update_next_balance(sd, &mut self.next_balance);
        if self.pulled != 0 || h.rq_nr_running(self.cpu) > 0 {
            return true;
        }
        self.next_sd = h.topo().domain(sd).parent;
        false
    }

    /// After the loop: keep the largest total cost in `rq->max_idle_balance_cost`, and
    /// count a task that arrived while the lock was dropped as pulled.
    fn finish_v4_5<H: BalanceAct + ?Sized>(&mut self, h: &mut H) -> i32 {
        let cpu = self.cpu;
        if self.curr_cost > h.max_idle_balance_cost(cpu) {
            h.set_max_idle_balance_cost(cpu, self.curr_cost);
        }
        let mut pulled = self.pulled;
        if h.rq_h_nr_queued(cpu) != 0 && pulled == 0 {
            pulled = 1;
        }
        out_v4_5(h, cpu, pulled, self.next_balance)
    }
}

/// `out:` of 4.5's `idle_balance`: move the CPU's next balance in, and clear the idle
/// stamp when it will run a task (there is no RT task, so `pulled_task` is never -1).
fn out_v4_5<H: BalanceAct + ?Sized>(h: &mut H, cpu: usize, pulled: i32, next_balance: u64) -> i32 {
    if time_after(h.rq_next_balance(cpu), next_balance) {
        h.set_rq_next_balance(cpu, next_balance);
    }
    if pulled != 0 {
        h.clear_idle_stamp(cpu);
    }
    pulled
}
