//! What starts a balance in Linux 3.9: `trigger_load_balance` from the tick,
//! `run_rebalance_domains` and `rebalance_domains`, the nohz idle load balancer
//! (`nohz_kick_needed`, `nohz_balancer_kick`, `find_new_ilb`, `nohz_idle_balance`) with
//! its per-group `nr_busy_cpus` (`set_cpu_sd_state_busy/idle`), and `scheduler_ipi`'s
//! handling of the kick. `idle_balance` (the newly idle balance) is stepped by
//! [`crate::lb::newidle`].

use crate::features::Feature;
use crate::lb::era::Balancer;
use crate::lb::jiffies::time_after;
use crate::lb::msecs_to_jiffies;
use crate::lb::periodic::TriggerResult;
use crate::sched::Sched;
use crate::stats::CpuIdleType;

impl Sched {
    /// `trigger_load_balance(rq, cpu)` of 3.9 (4.5's and 4.15's are the same): the softirq
    /// when the CPU's next balance is due, and the nohz kick, whose test is the era's.
    pub fn trigger_load_balance_v3_9(&mut self, cpu: usize) -> TriggerResult {
        let mut r = TriggerResult::default();
        if self.topo.cpus[cpu].sd.is_none() {
            return r;
        }
        if self.jiffies_now() >= self.rqs[cpu].next_balance {
            r.softirq = true;
        }
        let kick = match self.balancer() {
            Balancer::V4_5 | Balancer::V4_15 => self.nohz_kick_needed_v4_5(cpu),
            _ => self.nohz_kick_needed_v3_9(cpu),
        };
        if kick {
            r.kick_ilb = self.nohz_balancer_kick_v3_9();
        }
        r
    }

    /// `nohz_kick_needed(rq, cpu)`: a busy CPU leaves nohz idle and asks for an idle load
    /// balance when some CPU is tickless and it has two tasks or more, or (seed 002's
    /// 1/2) its load exceeds its power, or a cache-sharing group of its has more than one
    /// busy CPU.
    fn nohz_kick_needed_v3_9(&mut self, cpu: usize) -> bool {
        if self.idle_cpu_v3_9(cpu) {
            return false;
        }
        // The first busy tick after idle updates the busy counts.
        self.set_cpu_sd_state_busy_v3_9(cpu);
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
        if self.fair.features.has(Feature::LB_FORCE_BETTER_CPU)
            && self.weighted_cpuload_v4_15(cpu) > self.power_of_v3_9(cpu)
        {
            return true;
        }
        let domains: Vec<_> = self.topo.domains_of(cpu).collect();
        for sd in domains {
            let head = self.topo.domain(sd).groups[0];
            let sgc = self.topo.group(head).sgc;
            let nr_busy = self.legacy().sgp_nr_busy[sgc];
            let share_pkg = self.legacy().sd[sd].share_pkg_resources;
            if share_pkg && nr_busy > 1 {
                return true;
            }
            // SD_ASYM_PACKING is not modelled (3.9 set it on POWER7 SMT only).
            if !share_pkg {
                break;
            }
        }
        false
    }

    /// `nohz_balancer_kick(cpu)` of 3.9 (and of 4.5 to 4.16): push the next nohz balance
    /// one jiffy out and send the kick to the first idle tickless CPU, unless it is
    /// already kicked.
    fn nohz_balancer_kick_v3_9(&mut self) -> Option<usize> {
        self.lb.nohz.next_balance += 1;
        let ilb = self.lb.nohz.idle_cpus.first()?;
        if !self.idle_cpu_v3_9(ilb) {
            return None;
        }
        let kicked = &mut self.legacy_mut().nohz_kick[ilb];
        if *kicked {
            return None;
        }
        *kicked = true;
        Some(ilb)
    }

    /// `scheduler_ipi()` on a kicked CPU (`got_nohz_idle_kick`, the same in 4.5 to 4.16):
    /// an idle CPU without pending work marks itself idle-balancing and raises the
    /// softirq; otherwise the kick is dropped. Returns whether the softirq runs.
    pub fn nohz_kick_ipi_v3_9(&mut self, cpu: usize) -> bool {
        if !self.legacy().nohz_kick[cpu] {
            return false;
        }
        if self.idle_cpu_v3_9(cpu) && !self.rqs[cpu].need_resched {
            self.lb.rq[cpu].idle_balance = true;
            return true;
        }
        self.legacy_mut().nohz_kick[cpu] = false;
        false
    }

    /// `set_cpu_sd_state_busy()` of 3.9: the CPU counts itself busy again in its group at
    /// every level.
    fn set_cpu_sd_state_busy_v3_9(&mut self, cpu: usize) {
        if !self.legacy().nohz_idle[cpu] {
            return;
        }
        self.legacy_mut().nohz_idle[cpu] = false;
        self.add_busy_v3_9(cpu, 1);
    }

    /// `set_cpu_sd_state_idle()` of 3.9, from `tick_nohz_idle_enter`.
    pub fn set_cpu_sd_state_idle_v3_9(&mut self, cpu: usize) {
        if self.legacy().nohz_idle[cpu] {
            return;
        }
        self.legacy_mut().nohz_idle[cpu] = true;
        self.add_busy_v3_9(cpu, -1);
    }

    /// Adds `d` to `sd->groups->sgp->nr_busy_cpus` for each domain of `cpu`.
    fn add_busy_v3_9(&mut self, cpu: usize, d: i32) {
        let domains: Vec<_> = self.topo.domains_of(cpu).collect();
        for sd in domains {
            let sgc = self.topo.group(self.topo.domain(sd).groups[0]).sgc;
            self.legacy_mut().sgp_nr_busy[sgc] += d;
        }
    }

    /// `run_rebalance_domains()` of 3.9: this CPU's own balance, then, when it was kicked,
    /// the balance of every tickless idle CPU.
    pub fn run_rebalance_domains_v3_9(&mut self, cpu: usize, now: u64) {
        self.set_now(now);
        let idle = if self.lb.rq[cpu].idle_balance {
            CpuIdleType::Idle
        } else {
            CpuIdleType::NotIdle
        };
        self.rebalance_domains_v3_9(cpu, idle, now);
        self.nohz_idle_balance_v3_9(cpu, idle, now);
    }

    /// `rebalance_domains(cpu, idle)` of 3.9: balance each domain whose interval (times
    /// `busy_factor` unless idle) has passed, bottom-up, serialising `SD_SERIALIZE`
    /// levels, until a level says another CPU balances it; then set `rq->next_balance`.
    pub fn rebalance_domains_v3_9(&mut self, cpu: usize, mut idle: CpuIdleType, now: u64) {
        let hz = u64::from(self.params.hz);
        let mut next_balance = self.jiffies_now() + 60 * hz;
        let mut update_next_balance = false;
        self.sched_balance_update_blocked_averages(cpu, now);
        let domains: Vec<_> = self.topo.domains_of(cpu).collect();
        for sd in domains {
            let p = self.legacy().sd[sd];
            let mut interval = self.lb.sd[sd].balance_interval;
            if idle != CpuIdleType::Idle {
                interval *= p.busy_factor;
            }
            let interval =
                msecs_to_jiffies(interval, hz).clamp(1, self.lb.max_load_balance_interval.max(1));
            let mut balance = true;
            let locked = !p.serialize || !self.lb.balance_running;
            if locked {
                if p.serialize {
                    self.lb.balance_running = true;
                }
                if self.jiffies_now() >= self.lb.sd[sd].last_balance + interval {
                    let scan = self.load_balance_scan_v3_9(cpu, sd, idle, now);
                    let r = self.load_balance_act_v3_9(scan, now);
                    balance = r.continue_balancing;
                    if let Some(b) = r.active_balance {
                        self.pending_active_balance.push(b);
                    }
                    // Tasks were pulled: this CPU is no longer idle.
                    if r.moved != 0 {
                        idle = CpuIdleType::NotIdle;
                    }
                    self.lb.sd[sd].last_balance = self.jiffies_now();
                }
                if p.serialize {
                    self.lb.balance_running = false;
                }
            }
            let last = self.lb.sd[sd].last_balance;
            if time_after(next_balance, last + interval) {
                next_balance = last + interval;
                update_next_balance = true;
            }
            // Another CPU of our group balances this level and those above more actively.
            if !balance {
                break;
            }
        }
        if update_next_balance {
            self.rqs[cpu].next_balance = next_balance;
        }
    }

    /// `nohz_idle_balance(this_cpu, idle)` of 3.9: a kicked idle CPU balances for every
    /// other idle tickless CPU (catching up their `cpu_load[]` first), stopping when work
    /// arrives for itself.
    fn nohz_idle_balance_v3_9(&mut self, this_cpu: usize, idle: CpuIdleType, now: u64) {
        if idle == CpuIdleType::Idle && self.legacy().nohz_kick[this_cpu] {
            let cpus: Vec<usize> = self.lb.nohz.idle_cpus.iter().collect();
            for balance_cpu in cpus {
                if balance_cpu == this_cpu || !self.idle_cpu_v3_9(balance_cpu) {
                    continue;
                }
                // This CPU got work: the next balancing owner picks the rest up.
                if self.rqs[this_cpu].need_resched {
                    break;
                }
                self.update_rq_clock(balance_cpu, now);
                self.update_idle_cpu_load_v3_9(balance_cpu);
                self.rebalance_domains_v3_9(balance_cpu, CpuIdleType::Idle, now);
                let nb = self.rqs[balance_cpu].next_balance;
                if time_after(self.rqs[this_cpu].next_balance, nb) {
                    self.rqs[this_cpu].next_balance = nb;
                }
            }
            self.lb.nohz.next_balance = self.rqs[this_cpu].next_balance;
        }
        self.legacy_mut().nohz_kick[this_cpu] = false;
    }
}
