//! NO_HZ idle balancing: idle CPUs stop their tick and leave their balancing to one idle
//! CPU that a busy CPU kicks (`nohz_balancer_kick`, `kick_ilb`, `find_new_ilb`), which then
//! balances on their behalf (`_nohz_idle_balance`); plus the `nr_busy_cpus` bookkeeping
//! (`set_cpu_sd_state_busy/idle`) and the newly idle blocked-load kick.

use std::sync::atomic::Ordering;

use crate::lb::jiffies::time_after;
use crate::lb::periodic::PeriodicBalance;
use crate::lb::view::LbRead;
use crate::lb::{
    msecs_to_jiffies, NOHZ_BALANCE_KICK, NOHZ_KICK_MASK, NOHZ_NEWILB_KICK, NOHZ_NEXT_KICK,
    NOHZ_STATS_KICK,
};
use crate::sched::Sched;
use crate::stats::CpuIdleType;

/// `LOAD_AVG_PERIOD` in ms: how often idle CPUs' blocked load is refreshed.
const LOAD_AVG_PERIOD_MS: u64 = 32;

impl Sched {
    /// `nohz_balance_enter_idle(cpu)` of 6.12: the CPU stops its tick on entering idle;
    /// it joins `nohz.idle_cpus` and leaves its LLC's `nr_busy_cpus`.
    pub(crate) fn nohz_balance_enter_idle_v6_12(&mut self, cpu: usize) {
        self.lb.rq[cpu].has_blocked_load = true;
        if !self.lb.rq[cpu].nohz_tick_stopped {
            if self.topo.cpus[cpu].sd.is_none() {
                return;
            }
            self.lb.rq[cpu].nohz_tick_stopped = true;
            self.lb.nohz.idle_cpus.set(cpu);
            self.lb.nohz.nr_cpus += 1;
            self.set_cpu_sd_state_idle(cpu);
            self.lb.nohz.needs_update = true;
        }
        self.lb.nohz.has_blocked = true;
    }

    /// `nohz_balance_exit_idle(rq)`: the tick restarts on a busy CPU.
    pub fn nohz_balance_exit_idle(&mut self, cpu: usize) {
        if !self.lb.rq[cpu].nohz_tick_stopped {
            return;
        }
        self.lb.rq[cpu].nohz_tick_stopped = false;
        self.lb.nohz.idle_cpus.clear(cpu);
        self.lb.nohz.nr_cpus -= 1;
        self.set_cpu_sd_state_busy(cpu);
    }

    /// `set_cpu_sd_state_busy(cpu)`.
    fn set_cpu_sd_state_busy(&mut self, cpu: usize) {
        let Some(sd) = self.topo.cpus[cpu].sd_llc else {
            return;
        };
        if !self.lb.sd[sd].nohz_idle {
            return;
        }
        self.lb.sd[sd].nohz_idle = false;
        if let Some(sh) = self.topo.domain(sd).shared {
            self.topo.shared[sh]
                .nr_busy_cpus
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    /// `set_cpu_sd_state_idle(cpu)`.
    fn set_cpu_sd_state_idle(&mut self, cpu: usize) {
        let Some(sd) = self.topo.cpus[cpu].sd_llc else {
            return;
        };
        if self.lb.sd[sd].nohz_idle {
            return;
        }
        self.lb.sd[sd].nohz_idle = true;
        if let Some(sh) = self.topo.domain(sd).shared {
            self.topo.shared[sh]
                .nr_busy_cpus
                .fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// `find_new_ilb()`: the first idle CPU of `nohz.idle_cpus` other than the kicker.
    fn find_new_ilb(&self, this_cpu: usize) -> Option<usize> {
        self.lb
            .nohz
            .idle_cpus
            .iter()
            .find(|&c| c != this_cpu && self.rqs[c].idle_cpu())
    }

    /// `kick_ilb(flags)` from `this_cpu`: pick the idle load balancer and post the flags;
    /// returns the CPU to send the IPI to, if a new kick is needed.
    fn kick_ilb(&mut self, this_cpu: usize, flags: u32) -> Option<usize> {
        if flags & NOHZ_BALANCE_KICK != 0 {
            self.lb.nohz.next_balance = self.jiffies_now() + 1;
        }
        let ilb = self.find_new_ilb(this_cpu)?;
        let cur = self.lb.rq[ilb].nohz_flags;
        if cur & flags == flags {
            return None;
        }
        self.lb.rq[ilb].nohz_flags |= flags;
        if cur & NOHZ_KICK_MASK != 0 {
            return None;
        }
        Some(ilb)
    }

    /// `nohz_balancer_kick(rq)` on a ticking CPU: leave nohz idle, and kick an idle CPU to
    /// balance for the idle ones when this CPU is overloaded, its LLC has more than one busy
    /// CPU, or blocked load needs refreshing.
    pub fn nohz_balancer_kick(&mut self, cpu: usize) -> Option<usize> {
        if self.lb.rq[cpu].idle_balance {
            return None;
        }
        let now = self.jiffies_now();
        self.nohz_balance_exit_idle(cpu);
        if self.lb.nohz.nr_cpus == 0 {
            return None;
        }
        let mut flags = 0;
        if self.lb.nohz.has_blocked && time_after(now, self.lb.nohz.next_blocked) {
            flags = NOHZ_STATS_KICK;
        }
        if now >= self.lb.nohz.next_balance {
            flags = self.nohz_kick_reason(cpu).unwrap_or(flags);
        }
        if self.lb.nohz.needs_update {
            flags |= NOHZ_NEXT_KICK;
        }
        if flags != 0 {
            self.kick_ilb(cpu, flags)
        } else {
            None
        }
    }

    /// The balance-kick conditions of `nohz_balancer_kick`, in the kernel's order.
    fn nohz_kick_reason(&self, cpu: usize) -> Option<u32> {
        let full = NOHZ_STATS_KICK | NOHZ_BALANCE_KICK;
        let rq = &self.rqs[cpu];
        if rq.nr_running >= 2 {
            return Some(full);
        }
        if let Some(sd) = self.topo.cpus[cpu].sd {
            if rq.cfs.h_nr_queued >= 1 && self.check_cpu_capacity(cpu, sd) {
                return Some(full);
            }
        }
        if let Some(sd) = self.topo.cpus[cpu].sd_asym_packing {
            let span = self.topo.domain(sd).span.and(&self.lb.nohz.idle_cpus);
            if span.iter().any(|i| self.sched_asym(sd, i, cpu)) {
                return Some(full);
            }
        }
        if let Some(sd) = self.topo.cpus[cpu].sd_asym_cpucapacity {
            // Misfit tasks are the only reason on asymmetric machines (check_misfit_status).
            let misfit = match self.balancer() {
                crate::lb::era::Balancer::V6_5 => self.check_misfit_status_v6_5(cpu, sd),
                _ => rq.misfit_task_load != 0,
            };
            return if misfit { Some(full) } else { None };
        }
        if let Some(sh) = self.topo.cpus[cpu].sd_llc_shared {
            if self.topo.shared[sh].nr_busy_cpus.load(Ordering::Relaxed) > 1 {
                return Some(full);
            }
        }
        None
    }

    /// `update_nohz_stats(rq)`: refresh an idle CPU's blocked load at most once a jiffy;
    /// returns whether it still has blocked load.
    fn update_nohz_stats(&mut self, cpu: usize, now: u64) -> bool {
        if !self.lb.rq[cpu].has_blocked_load {
            return false;
        }
        if !self.lb.nohz.idle_cpus.test(cpu) {
            return false;
        }
        if !time_after(
            self.jiffies_now(),
            self.lb.rq[cpu].last_blocked_load_update_tick,
        ) {
            return true;
        }
        self.sched_balance_update_blocked_averages(cpu, now);
        self.lb.rq[cpu].has_blocked_load
    }

    /// `_nohz_idle_balance(this_rq, flags)`: balance (and refresh blocked load) for every
    /// idle CPU in turn, starting after this one, stopping if this CPU gets work.
    pub fn nohz_idle_balance_for(&mut self, this_cpu: usize, flags: u32, now: u64) {
        self.set_now(now);
        let jnow = self.jiffies_now();
        let hz = u64::from(self.params.hz);
        let mut next_balance = jnow + 60 * hz;
        let mut has_blocked_load = false;
        let mut update_next = false;
        if flags & NOHZ_STATS_KICK != 0 {
            self.lb.nohz.has_blocked = false;
        }
        if flags & NOHZ_NEXT_KICK != 0 {
            self.lb.nohz.needs_update = false;
        }
        let order: Vec<usize> = self
            .lb
            .nohz
            .idle_cpus
            .iter_wrap((this_cpu + 1) % self.nr_cpus().max(1))
            .collect();
        for balance_cpu in order {
            if !self.rqs[balance_cpu].idle_cpu() {
                continue;
            }
            if !self.rqs[this_cpu].idle_cpu() && self.rqs[this_cpu].need_resched {
                if flags & NOHZ_STATS_KICK != 0 {
                    has_blocked_load = true;
                }
                if flags & NOHZ_NEXT_KICK != 0 {
                    self.lb.nohz.needs_update = true;
                }
                if has_blocked_load {
                    self.lb.nohz.has_blocked = true;
                }
                return;
            }
            if flags & NOHZ_STATS_KICK != 0 {
                has_blocked_load |= self.update_nohz_stats(balance_cpu, now);
            }
            if self.jiffies_now() >= self.rqs[balance_cpu].next_balance {
                self.update_rq_clock(balance_cpu, now);
                if flags & NOHZ_BALANCE_KICK != 0 {
                    self.sched_balance_domains(balance_cpu, CpuIdleType::Idle, now);
                }
            }
            if time_after(next_balance, self.rqs[balance_cpu].next_balance) {
                next_balance = self.rqs[balance_cpu].next_balance;
                update_next = true;
            }
        }
        if update_next {
            self.lb.nohz.next_balance = next_balance;
        }
        if flags & NOHZ_STATS_KICK != 0 {
            self.lb.nohz.next_blocked = jnow + msecs_to_jiffies(LOAD_AVG_PERIOD_MS, hz);
        }
        if has_blocked_load {
            self.lb.nohz.has_blocked = true;
        }
    }

    /// The IPI a kicked CPU receives (`nohz_csd_func` of 6.12): the flags move to
    /// `nohz_idle_balance` and the softirq runs if the CPU is idle. Returns whether the
    /// engine should run [`Sched::sched_balance_softirq`] on it.
    pub(crate) fn nohz_csd_func_v6_12(&mut self, cpu: usize) -> bool {
        let flags = self.lb.rq[cpu].nohz_flags & NOHZ_KICK_MASK;
        self.lb.rq[cpu].nohz_flags &= !NOHZ_KICK_MASK;
        self.lb.rq[cpu].nohz_idle_balance = flags;
        if flags != 0 && self.rqs[cpu].idle_cpu() {
            self.lb.rq[cpu].idle_balance = true;
            return true;
        }
        false
    }

    /// `nohz_idle_balance(this_rq, idle)`: run the posted nohz balance, if any.
    pub fn nohz_idle_balance(&mut self, cpu: usize, idle: CpuIdleType, now: u64) -> bool {
        let flags = self.lb.rq[cpu].nohz_idle_balance;
        if flags == 0 {
            return false;
        }
        self.lb.rq[cpu].nohz_idle_balance = 0;
        if idle != CpuIdleType::Idle {
            return false;
        }
        self.nohz_idle_balance_for(cpu, flags, now);
        true
    }

    /// `nohz_newidle_balance(this_rq)`: a CPU going idle for long asks to refresh the
    /// blocked load of idle CPUs (run by [`Sched::nohz_run_idle_balance`] from the idle
    /// loop).
    pub fn nohz_newidle_balance(&mut self, cpu: usize) {
        if self.rqs[cpu].avg_idle < self.params.migration_cost {
            return;
        }
        if !self.lb.nohz.has_blocked || self.jiffies_now() < self.lb.nohz.next_blocked {
            return;
        }
        self.lb.rq[cpu].nohz_flags |= NOHZ_NEWILB_KICK;
    }

    /// `nohz_run_idle_balance(cpu)` of 6.12 from the idle loop: the blocked-load refresh
    /// asked for by `nohz_newidle_balance`. Returns whether it ran.
    pub(crate) fn nohz_run_idle_balance_v6_12(&mut self, cpu: usize, now: u64) -> bool {
        let flags = self.lb.rq[cpu].nohz_flags;
        self.lb.rq[cpu].nohz_flags &= !NOHZ_NEWILB_KICK;
        if flags == NOHZ_NEWILB_KICK && !self.rqs[cpu].need_resched {
            self.nohz_idle_balance_for(cpu, NOHZ_STATS_KICK, now);
            return true;
        }
        false
    }
}
