//! Linux 6.5.0's `newidle_balance` as a stepped state machine over
//! [`NewidleBalance`]'s fields (item 9 of the list in [`super`]).
//!
//! Its start is 6.12's (`update_misfit_status(NULL)`, the pending-wakeup exit, the idle
//! stamp, the overload and `avg_idle` gate, the blocked-load update), and so is its end
//! (`max_idle_balance_cost`, a task that arrived counts as pulled, `next_balance`, the
//! idle stamp or the nohz kick). The domain loop differs: each domain's
//! `continue_balancing` starts at 1 and is never read, and after every domain, whether
//! it balanced or not, the loop stops when a task was pulled or this runqueue has a task
//! or a queued wakeup. 6.12 instead stops on `!continue_balancing`, which only the next
//! domain's `should_we_balance` clears, after that domain passed its cost check and was
//! counted in `lb_count` and `lb_balanced`.

use fairsim_topology::SdFlags;

use crate::lb::balancer::Balancer;
use crate::lb::newidle::{newidle_finish, newidle_out, NewidleBalance, NewidleStep};
use crate::lb::rq_balance::BalanceAct;
use crate::lb::v6_5::balance::BalanceActV6_5;
use crate::stats::{CpuIdleType, NewidleGate};

impl NewidleBalance {
    /// The start of Linux 6.5's `newidle_balance(this_rq, rf)` at `now`: the same exits
    /// and bookkeeping as 6.12's; `Err(pulled)` when it ends at once.
    pub(crate) fn start_v6_5<H: BalanceAct + ?Sized>(
        h: &mut H,
        cpu: usize,
        now: u64,
    ) -> Result<NewidleBalance, i32> {
        h.newidle_enter(cpu);
        // A task is about to be enqueued: no need to look for one.
        if h.rq_ttwu_pending(cpu) {
            return Err(0);
        }
        // Stamped before balancing, so that the balance counts as idle time.
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
            balancer: Balancer::V6_5,
        })
    }

    /// One step of Linux 6.5's domain loop at `now`: a domain's `load_balance` runs as
    /// 6.12's scan and, once the scan's cost has elapsed, 6.5's act; once the act's cost
    /// has elapsed too, the domain's cost is recorded and the exit test runs.
    pub(crate) fn step_v6_5<H: BalanceAct + ?Sized>(&mut self, h: &mut H, now: u64) -> NewidleStep {
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
            h.update_newidle_cost_v6_5(sd, domain_cost);
            self.curr_cost += domain_cost;
            self.t0 = now;
            if pulled {
                self.pulled = 1;
            }
            if self.stop_v6_5(h) {
                return NewidleStep::Done(newidle_finish(h, self));
            }
            self.next_sd = h.topo().domain(sd).parent;
        }
        while let Some(sd) = self.next_sd {
            h.update_next_balance(sd, &mut self.next_balance);
            if h.avg_idle(cpu) < self.curr_cost + h.sd_rt(sd).max_newidle_lb_cost {
                break;
            }
            let parent = h.topo().domain(sd).parent;
            if h.topo().domain(sd).flags.contains(SdFlags::BALANCE_NEWIDLE) {
                let scan = h.sched_balance_rq_scan(cpu, sd, CpuIdleType::NewlyIdle, now);
                self.pending_scan = Some((scan, 1));
                self.next_sd = parent;
                return NewidleStep::Continue;
            }
            // A domain without SD_BALANCE_NEWIDLE still ends with the exit test.
            if self.stop_v6_5(h) {
                break;
            }
            self.next_sd = parent;
        }
        NewidleStep::Done(newidle_finish(h, self))
    }

    /// The exit test at the end of each domain of 6.5's loop: a task was pulled, or this
    /// runqueue has a task (of any class) or a wakeup queued to it.
    fn stop_v6_5<H: BalanceAct + ?Sized>(&self, h: &H) -> bool {
        self.pulled != 0 || h.rq_nr_running(self.cpu) > 0 || h.rq_ttwu_pending(self.cpu)
    }
}
