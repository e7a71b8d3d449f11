//! The load balancer's entry points, each dispatched once to the balancer the run's
//! kernel has: 6.12.117's (this crate's `lb/`), or Linux 3.9's (`lb/v3_9`, LEGACY_LB,
//! which `--kernel 3.9` selects and any kernel can toggle for an ablation). The engine
//! and the tests call these; neither balancer's functions test which one runs.
//!
//! `sched_balance_rq`'s scan and act halves and `NewidleBalance::start` dispatch the same
//! way through [`crate::lb::host::BalanceHost::balancer`], so that race mode's hosts
//! (always 6.12's) share them.

use crate::lb::periodic::TriggerResult;
use crate::sched::Sched;
use crate::task::TaskId;

/// Which kernel's load balancer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Balancer {
    /// 6.12.117's `sched_balance_*` (also what 4.5 to 6.5 run here until their own are
    /// ported).
    V6_12,
    /// Linux 3.9's `load_balance` with `cpu_power` and `cpu_load[]` (LEGACY_LB).
    V3_9,
}

impl Sched {
    /// The balancer this machine runs.
    pub fn balancer(&self) -> Balancer {
        if self.lb.legacy.is_some() {
            Balancer::V3_9
        } else {
            Balancer::V6_12
        }
    }

    /// The tick's balance trigger: `sched_balance_trigger` (6.12) or
    /// `trigger_load_balance` (3.9). Says whether the balance softirq is due and which
    /// CPU to kick for a nohz balance.
    pub fn sched_balance_trigger(&mut self, cpu: usize, now: u64) -> TriggerResult {
        self.set_now(now);
        match self.balancer() {
            Balancer::V6_12 => self.sched_balance_trigger_v6_12(cpu),
            Balancer::V3_9 => self.trigger_load_balance_v3_9(cpu),
        }
    }

    /// The balance softirq on `cpu`: `sched_balance_softirq` (6.12) or
    /// `run_rebalance_domains` (3.9).
    pub fn sched_balance_softirq(&mut self, cpu: usize, now: u64) {
        self.set_now(now);
        match self.balancer() {
            Balancer::V6_12 => self.sched_balance_softirq_v6_12(cpu, now),
            Balancer::V3_9 => self.run_rebalance_domains_v3_9(cpu, now),
        }
    }

    /// The nohz kick's IPI on `cpu` (`nohz_csd_func` in 6.12, `scheduler_ipi`'s
    /// `nohz_balance_kick` path in 3.9). Returns whether the engine should run
    /// [`Sched::sched_balance_softirq`] on it.
    pub fn nohz_csd_func(&mut self, cpu: usize) -> bool {
        match self.balancer() {
            Balancer::V6_12 => self.nohz_csd_func_v6_12(cpu),
            Balancer::V3_9 => self.nohz_kick_ipi_v3_9(cpu),
        }
    }

    /// The idle loop's own balance: 6.12's `nohz_run_idle_balance`; 3.9's idle loop ran
    /// none. Returns whether it ran.
    pub fn nohz_run_idle_balance(&mut self, cpu: usize, now: u64) -> bool {
        match self.balancer() {
            Balancer::V6_12 => self.nohz_run_idle_balance_v6_12(cpu, now),
            Balancer::V3_9 => false,
        }
    }

    /// The stopper's `active_load_balance_cpu_stop` on `busiest_cpu`: pushes one task to
    /// the CPU that asked and returns it. The engine must then reschedule both CPUs.
    pub fn active_load_balance_cpu_stop(&mut self, busiest_cpu: usize, now: u64) -> Option<TaskId> {
        match self.balancer() {
            Balancer::V6_12 => self.active_load_balance_cpu_stop_v6_12(busiest_cpu, now),
            Balancer::V3_9 => self.active_load_balance_cpu_stop_v3_9(busiest_cpu, now),
        }
    }

    /// The CPU enters idle with its tick stopped: `nohz_balance_enter_idle`, which 3.9's
    /// `tick_nohz_idle_enter` preceded by counting the CPU out of its groups' busy CPUs
    /// (`set_cpu_sd_state_idle` of 3.9).
    pub fn nohz_balance_enter_idle(&mut self, cpu: usize) {
        if self.balancer() == Balancer::V3_9 {
            self.set_cpu_sd_state_idle_v3_9(cpu);
        }
        self.nohz_balance_enter_idle_v6_12(cpu);
    }

    /// `tick_nohz_idle_exit()` on `cpu` leaving an idle period whose tick was stopped: 3.9
    /// catches up the CPU's `cpu_load[]` for the ticks it missed (`update_cpu_load_nohz`);
    /// 6.12 has nothing to do here.
    pub fn tick_nohz_idle_exit(&mut self, cpu: usize, now: u64) {
        if self.balancer() == Balancer::V3_9 {
            self.set_now(now);
            self.update_cpu_load_nohz_v3_9(cpu);
        }
    }

    /// The balancer's part of the scheduler tick: 3.9's `scheduler_tick` updates
    /// `cpu_load[]` (`update_cpu_load_active`); 6.12 keeps no such history.
    pub(crate) fn balancer_tick(&mut self, cpu: usize) {
        if self.balancer() == Balancer::V3_9 {
            self.update_cpu_load_active_v3_9(cpu);
        }
    }
}
