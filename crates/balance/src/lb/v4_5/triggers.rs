//! What starts a balance in Linux 4.5, where it differs from 3.9
//! ([`crate::lb::v3_9::triggers`], whose `trigger_load_balance`, `nohz_balancer_kick` and
//! kick IPI 4.5 and 4.15 run unchanged): `run_rebalance_domains`, `rebalance_domains`,
//! `nohz_idle_balance` and `nohz_kick_needed`.
//!
//! Differences from 3.9: the softirq balances on behalf of the tickless idle CPUs first
//! and then for itself; `rebalance_domains` decays each domain's `max_newidle_lb_cost`
//! (~1% a second) and keeps `rq->max_idle_balance_cost` from it, stops at a level another
//! CPU balances only once no decay is pending, and re-derives the CPU's idle state after a
//! pull; the nohz balance visits only the idle CPUs whose `next_balance` is due; a busy
//! CPU kicks the idle balancer when it has two tasks, when its LLC has more than one busy
//! CPU, or when its capacity is reduced by RT or IRQ time (3.9: when any cache-sharing
//! level of its has two busy CPUs).
//!
//! `nr_busy_cpus`: 4.5 counts the LLC's busy CPUs in the group of `sd_busy` (the LLC
//! domain's parent), 4.15 in the LLC's `sched_domain_shared`; both are the count 6.12's
//! `set_cpu_sd_state_busy/idle` keep in the LLC's shared state, which fairsim's
//! `nohz_balance_enter_idle` and `nohz_balance_exit_idle` update at the same points (the
//! tick stopping in idle, the first busy tick after it). 4.5 has no `sd_busy` when the LLC
//! is the top level; 4.15 reads the count whenever the CPU has an LLC.

use std::sync::atomic::Ordering;

use fairsim_topology::{SdFlags, SdId};

use crate::lb::era::Balancer;
use crate::lb::jiffies::time_after;
use crate::lb::msecs_to_jiffies;
use crate::sched::Sched;
use crate::stats::CpuIdleType;

impl Sched {
    /// `run_rebalance_domains()` of 4.5: when kicked, the balance of every tickless idle
    /// CPU first, then this CPU's own.
    pub fn run_rebalance_domains_v4_5(&mut self, cpu: usize, now: u64) {
        self.set_now(now);
        let idle = if self.lb.rq[cpu].idle_balance {
            CpuIdleType::Idle
        } else {
            CpuIdleType::NotIdle
        };
        self.nohz_idle_balance_v4_5(cpu, idle, now);
        self.rebalance_domains_v4_5(cpu, idle, now);
    }

    /// `get_sd_balance_interval(sd, cpu_busy)` of 4.5: the interval in jiffies, stretched
    /// by `busy_factor` on a busy CPU.
    pub fn get_sd_balance_interval_v4_5(&self, sd: SdId, cpu_busy: bool) -> u64 {
        let mut interval = self.lb.sd[sd].balance_interval;
        if cpu_busy {
            interval *= self.legacy().sd[sd].busy_factor;
        }
        msecs_to_jiffies(interval, u64::from(self.params.hz))
            .clamp(1, self.lb.max_load_balance_interval.max(1))
    }

    /// `rebalance_domains(rq, idle)` of 4.5: decay each domain's newidle cost, balance
    /// each domain whose interval (times `busy_factor` unless idle) has passed, bottom-up,
    /// serialising `SD_SERIALIZE` levels, until a level says another CPU balances it; then
    /// set `rq->next_balance` (and, for an idle CPU, pull `nohz.next_balance` in).
    pub fn rebalance_domains_v4_5(&mut self, cpu: usize, mut idle: CpuIdleType, now: u64) {
        let hz = u64::from(self.params.hz);
        let mut continue_balancing = true;
        let mut next_balance = self.jiffies_now() + 60 * hz;
        let mut update_next_balance = false;
        let mut need_decay = false;
        let mut max_cost = 0u64;
        self.sched_balance_update_blocked_averages(cpu, now);
        let domains: Vec<SdId> = self.topo.domains_of(cpu).collect();
        for sd in domains {
            // Decay the newidle maximum about 1% a second, on this regular visit.
            let jiffies = self.jiffies_now();
            if time_after(jiffies, self.legacy().next_decay_max_lb_cost[sd]) {
                let rt = &mut self.lb.sd[sd];
                rt.max_newidle_lb_cost = rt.max_newidle_lb_cost * 253 / 256;
                self.legacy_mut().next_decay_max_lb_cost[sd] = jiffies + hz;
                need_decay = true;
            }
            max_cost += self.lb.sd[sd].max_newidle_lb_cost;
            // Another CPU of our group balances this level and those above.
            if !continue_balancing {
                if need_decay {
                    continue;
                }
                break;
            }
            let mut interval = self.get_sd_balance_interval_v4_5(sd, idle != CpuIdleType::Idle);
            let need_serialize = self.topo.domain(sd).flags.contains(SdFlags::SERIALIZE);
            let locked = !need_serialize || !self.lb.balance_running;
            if locked {
                if need_serialize {
                    self.lb.balance_running = true;
                }
                if self.jiffies_now() >= self.lb.sd[sd].last_balance + interval {
                    let scan = self.load_balance_scan_v4_5(cpu, sd, idle, now);
                    let r = self.load_balance_act_v4_5(scan, now);
                    continue_balancing = r.continue_balancing;
                    if let Some(b) = r.active_balance {
                        self.pending_active_balance.push(b);
                    }
                    if r.moved != 0 {
                        // LBF_DST_PINNED may have moved the tasks elsewhere: ask.
                        idle = if self.idle_cpu_v3_9(cpu) {
                            CpuIdleType::Idle
                        } else {
                            CpuIdleType::NotIdle
                        };
                    }
                    self.lb.sd[sd].last_balance = self.jiffies_now();
                    interval = self.get_sd_balance_interval_v4_5(sd, idle != CpuIdleType::Idle);
                }
                if need_serialize {
                    self.lb.balance_running = false;
                }
            }
            let last = self.lb.sd[sd].last_balance;
            if time_after(next_balance, last + interval) {
                next_balance = last + interval;
                update_next_balance = true;
            }
        }
        if need_decay {
            // The runqueue-wide cost decays too, floored at the migration cost.
            self.rqs[cpu].max_idle_balance_cost = self.params.migration_cost.max(max_cost);
        }
        if update_next_balance {
            self.rqs[cpu].next_balance = next_balance;
            // This CPU runs the idle balance for itself: the next nohz balance is due by
            // its own.
            if idle == CpuIdleType::Idle && time_after(self.lb.nohz.next_balance, next_balance) {
                self.lb.nohz.next_balance = next_balance;
            }
        }
    }

    /// `nohz_idle_balance(this_rq, idle)` of 4.5: a kicked idle CPU balances for each
    /// other idle tickless CPU whose next balance is due (catching up its `cpu_load[]`
    /// first), stopping when work arrives for itself, and sets `nohz.next_balance` to the
    /// earliest of theirs.
    fn nohz_idle_balance_v4_5(&mut self, this_cpu: usize, idle: CpuIdleType, now: u64) {
        if idle == CpuIdleType::Idle && self.legacy().nohz_kick[this_cpu] {
            let hz = u64::from(self.params.hz);
            let mut next_balance = self.jiffies_now() + 60 * hz;
            let mut update_next_balance = false;
            let cpus: Vec<usize> = self.lb.nohz.idle_cpus.iter().collect();
            for balance_cpu in cpus {
                if balance_cpu == this_cpu || !self.idle_cpu_v3_9(balance_cpu) {
                    continue;
                }
                // This CPU got work: the next balancing owner picks the rest up.
                if self.rqs[this_cpu].need_resched {
                    break;
                }
                if self.jiffies_now() >= self.rqs[balance_cpu].next_balance {
                    self.update_rq_clock(balance_cpu, now);
                    self.update_idle_cpu_load_v3_9(balance_cpu);
                    self.rebalance_domains_v4_5(balance_cpu, CpuIdleType::Idle, now);
                }
                let nb = self.rqs[balance_cpu].next_balance;
                if time_after(next_balance, nb) {
                    next_balance = nb;
                    update_next_balance = true;
                }
            }
            if update_next_balance {
                self.lb.nohz.next_balance = next_balance;
            }
        }
        self.legacy_mut().nohz_kick[this_cpu] = false;
    }

    /// `nohz_kick_needed(rq)` of 4.5: a busy CPU (not idle at its tick) leaves nohz idle
    /// and asks for an idle load balance, when some CPU is tickless and the next one is
    /// due, if it runs two tasks or more, if its LLC has more than one busy CPU, or if its
    /// capacity is reduced while it runs a task (`SD_ASYM_PACKING` is not modelled).
    pub(crate) fn nohz_kick_needed_v4_5(&mut self, cpu: usize) -> bool {
        if self.lb.rq[cpu].idle_balance {
            return false;
        }
        // The first busy tick after idle: count the CPU busy again (set_cpu_sd_state_busy,
        // in 6.12's nohz_balance_exit_idle).
        self.nohz_balance_exit_idle(cpu);
        if self.lb.nohz.nr_cpus == 0 {
            return false;
        }
        if self.jiffies_now() < self.lb.nohz.next_balance {
            return false;
        }
        if self.nr_running_v3_9(cpu) >= 2 {
            return true;
        }
        if let Some(nr_busy) = self.nr_busy_cpus_v4_5(cpu) {
            if nr_busy > 1 {
                return true;
            }
        }
        if let Some(sd) = self.topo.cpus[cpu].sd {
            if self.nr_running_v3_9(cpu) >= 1 && self.check_cpu_capacity_v4_5(cpu, sd) {
                return true;
            }
        }
        false
    }

    /// The busy CPUs of `cpu`'s LLC as `nohz_kick_needed` reads them: 4.5 through
    /// `sd_busy` (none when the LLC has no parent), 4.15 through `sd_llc_shared`.
    fn nr_busy_cpus_v4_5(&self, cpu: usize) -> Option<i64> {
        let llc = self.topo.cpus[cpu].sd_llc?;
        let d = self.topo.domain(llc);
        if self.balancer() == Balancer::V4_5 && d.parent.is_none() {
            return None;
        }
        let sh = d.shared?;
        Some(i64::from(
            self.topo.shared[sh].nr_busy_cpus.load(Ordering::Relaxed),
        ))
    }
}
