//! The load balancer's entry points, each dispatched once to the balancer the run's
//! kernel has: 6.12.117's (this crate's `lb/`), Linux 3.9's (`lb/v3_9`, LEGACY_LB,
//! which `--kernel 3.9` selects and any kernel can toggle for an ablation), or Linux
//! 4.5's and 4.15's (`lb/v4_5`, `lb/v4_15`, on the 3.9 port's `cpu_load[]` and capacity
//! state), which `--kernel 4.5` and `--kernel 4.15`/`4.16` select. `--kernel 6.5` runs
//! 6.12's entry points here and Linux 6.5's `load_balance`/`newidle_balance` where they
//! differ (`lb/v6_5`), dispatched here too. The engine and the tests call these; a few
//! of 6.12's balancer functions still test which one runs (`lb/rq_balance.rs`'s
//! `has_cpu_load` before the `legacy_lb_scan`/`legacy_lb_act` hooks, `lb/nohz.rs`'s
//! misfit check; ARCHITECTURE.md counts them).
//!
//! `sched_balance_rq`'s rescan and act half ([`BalanceAct::lb_rescan`],
//! [`BalanceAct::sched_balance_rq_act`]) and [`NewidleBalance::start`] /
//! [`NewidleBalance::step`] dispatch the same way through
//! [`crate::lb::host::BalanceHost::balancer`], so that race mode's hosts (always 6.12's)
//! share them. They are implemented here rather than in 6.12's `lb/rq_balance.rs` and
//! `lb/newidle.rs` so that these dispatches do not make 6.12's modules import the era
//! modules (`lb/v6_5`, ...), which build on 6.12's traits and helpers.

/// The balancer a run's kernel has, defined in [`crate::lb::balancer`] (which the
/// scheduler's state names without importing the entry points) and named here too.
pub use crate::lb::balancer::Balancer;
use crate::lb::env::{LbEnv, LbResult, LbScan};
use crate::lb::host::BalanceHost;
use crate::lb::newidle::{NewidleBalance, NewidleStep};
use crate::lb::periodic::TriggerResult;
use crate::lb::rq_balance::BalanceAct;
use crate::lb::v6_5::balance::BalanceActV6_5;
use crate::sched::Sched;
use crate::task::TaskId;

/// The era entry points of `sched_balance_rq` for every [`BalanceHost`]: the rescan and
/// the act half of the run's kernel. The rest of [`BalanceAct`] is 6.12's code, which
/// every era shares.
impl<T: BalanceHost + ?Sized> BalanceAct for T {
    /// `redo:` of the run's kernel: Linux 6.5's `should_we_balance` and
    /// `find_busiest_group` ([`BalanceActV6_5::lb_rescan_v6_5`]) or 6.12's
    /// ([`BalanceAct::lb_rescan_v6_12`]); the legacy balancers scan through the host.
    fn lb_rescan(&mut self, env: LbEnv) -> LbScan {
        match self.balancer() {
            Balancer::V6_5 => self.lb_rescan_v6_5(env),
            _ => self.lb_rescan_v6_12(env),
        }
    }

    /// The act half of the run's kernel: Linux 6.5's `load_balance` from `more_balance:`
    /// ([`BalanceActV6_5::load_balance_act_v6_5`]) or 6.12's
    /// ([`BalanceAct::sched_balance_rq_act_v6_12`], which hands LEGACY_LB's to the host).
    fn sched_balance_rq_act(&mut self, scan: LbScan, now: u64) -> LbResult {
        self.set_now(now);
        match self.balancer() {
            Balancer::V6_5 => self.load_balance_act_v6_5(scan, now),
            _ => self.sched_balance_rq_act_v6_12(scan, now),
        }
    }
}

/// The era entry points of the newidle balance: each balancer's loop is its own
/// (6.12's `sched_balance_newidle`, 6.5's `newidle_balance`, 3.9's and 4.5's
/// `idle_balance`), started and stepped here.
impl NewidleBalance {
    /// The start of the run's kernel's newidle balance at `now`: `sched_balance_newidle`
    /// (6.12), `newidle_balance` (6.5) or `idle_balance` (3.9 to 4.16), with their early
    /// exits (pending wakeup, no domain, nothing overloaded, or `avg_idle` below the first
    /// domain's cost), the idle stamp, and the blocked-load update. `Err(pulled)` when it
    /// ends at once.
    pub fn start<H: BalanceAct + ?Sized>(
        h: &mut H,
        cpu: usize,
        now: u64,
    ) -> Result<NewidleBalance, i32> {
        h.set_now(now);
        match h.balancer() {
            Balancer::V3_9 => Self::start_v3_9(h, cpu, now),
            Balancer::V4_5 | Balancer::V4_15 => Self::start_v4_5(h, cpu, now),
            Balancer::V6_12 => Self::start_v6_12(h, cpu, now),
            Balancer::V6_5 => Self::start_v6_5(h, cpu, now),
        }
    }

    /// One step of the newidle balance at `now`, in the loop of the balancer that
    /// started it; see [`NewidleStep`].
    pub fn step<H: BalanceAct + ?Sized>(&mut self, h: &mut H, now: u64) -> NewidleStep {
        h.set_now(now);
        match self.balancer {
            Balancer::V3_9 => self.step_v3_9(h, now),
            Balancer::V4_5 | Balancer::V4_15 => self.step_v4_5(h, now),
            Balancer::V6_5 => self.step_v6_5(h, now),
            Balancer::V6_12 => self.step_v6_12(h, now),
        }
    }
}

impl Sched {
    /// The balancer this machine runs (fixed with its features when it is built).
    pub fn balancer(&self) -> Balancer {
        Balancer::for_features(self.fair.features)
    }

    /// The tick's balance trigger: `sched_balance_trigger` (6.12) or
    /// `trigger_load_balance` (3.9). Says whether the balance softirq is due and which
    /// CPU to kick for a nohz balance.
    pub fn sched_balance_trigger(&mut self, cpu: usize, now: u64) -> TriggerResult {
        self.set_now(now);
        match self.balancer() {
            Balancer::V6_12 | Balancer::V6_5 => self.sched_balance_trigger_v6_12(cpu),
            Balancer::V3_9 | Balancer::V4_5 | Balancer::V4_15 => {
                self.trigger_load_balance_v3_9(cpu)
            }
        }
    }

    /// The balance softirq on `cpu`: `sched_balance_softirq` (6.12) or
    /// `run_rebalance_domains` (3.9).
    pub fn sched_balance_softirq(&mut self, cpu: usize, now: u64) {
        self.set_now(now);
        match self.balancer() {
            Balancer::V6_12 | Balancer::V6_5 => self.sched_balance_softirq_v6_12(cpu, now),
            Balancer::V3_9 => self.run_rebalance_domains_v3_9(cpu, now),
            Balancer::V4_5 | Balancer::V4_15 => self.run_rebalance_domains_v4_5(cpu, now),
        }
    }

    /// The nohz kick's IPI on `cpu` (`nohz_csd_func` in 6.12, `scheduler_ipi`'s
    /// `got_nohz_idle_kick` path in 3.9 to 4.16). Returns whether the engine should run
    /// [`Sched::sched_balance_softirq`] on it.
    pub fn nohz_csd_func(&mut self, cpu: usize) -> bool {
        match self.balancer() {
            Balancer::V6_12 | Balancer::V6_5 => self.nohz_csd_func_v6_12(cpu),
            Balancer::V3_9 | Balancer::V4_5 | Balancer::V4_15 => self.nohz_kick_ipi_v3_9(cpu),
        }
    }

    /// The idle loop's own balance: 6.12's `nohz_run_idle_balance`; the idle loops of 3.9
    /// to 4.16 ran none. Returns whether it ran.
    pub fn nohz_run_idle_balance(&mut self, cpu: usize, now: u64) -> bool {
        match self.balancer() {
            Balancer::V6_12 | Balancer::V6_5 => self.nohz_run_idle_balance_v6_12(cpu, now),
            Balancer::V3_9 | Balancer::V4_5 | Balancer::V4_15 => false,
        }
    }

    /// The stopper's `active_load_balance_cpu_stop` on `busiest_cpu`: pushes one task to
    /// the CPU that asked and returns it. The engine must then reschedule both CPUs.
    pub fn active_load_balance_cpu_stop(&mut self, busiest_cpu: usize, now: u64) -> Option<TaskId> {
        match self.balancer() {
            Balancer::V6_12 | Balancer::V6_5 => {
                self.active_load_balance_cpu_stop_v6_12(busiest_cpu, now)
            }
            Balancer::V3_9 => self.active_load_balance_cpu_stop_v3_9(busiest_cpu, now),
            Balancer::V4_5 | Balancer::V4_15 => {
                self.active_load_balance_cpu_stop_v4_5(busiest_cpu, now)
            }
        }
    }

    /// The CPU enters idle with its tick stopped: `nohz_balance_enter_idle`, which 3.9's
    /// `tick_nohz_idle_enter` preceded by counting the CPU out of its groups' busy CPUs
    /// (`set_cpu_sd_state_idle` of 3.9; 4.5's and 4.15's count only the LLC's busy CPUs,
    /// which 6.12's function keeps), and 4.15's `tick_nohz_stop_sched_tick` by recording
    /// the load the tick stops with (`cpu_load_update_nohz_start`).
    pub fn nohz_balance_enter_idle(&mut self, cpu: usize) {
        match self.balancer() {
            Balancer::V3_9 => self.set_cpu_sd_state_idle_v3_9(cpu),
            Balancer::V4_15 => self.cpu_load_update_nohz_start_v4_15(cpu),
            Balancer::V6_12 | Balancer::V6_5 | Balancer::V4_5 => {}
        }
        self.nohz_balance_enter_idle_v6_12(cpu);
    }

    /// `tick_nohz_idle_exit()` on `cpu` leaving an idle period whose tick was stopped: 3.9
    /// and 4.5 catch up the CPU's `cpu_load[]` for the ticks it missed as load 0
    /// (`update_cpu_load_nohz`), 4.15 with the load it has now
    /// (`cpu_load_update_nohz_stop`); 6.12 has nothing to do here.
    pub fn tick_nohz_idle_exit(&mut self, cpu: usize, now: u64) {
        match self.balancer() {
            Balancer::V3_9 | Balancer::V4_5 => {
                self.set_now(now);
                self.update_cpu_load_nohz_v3_9(cpu);
            }
            Balancer::V4_15 => {
                self.set_now(now);
                self.cpu_load_update_nohz_stop_v4_15(cpu, now);
            }
            Balancer::V6_12 | Balancer::V6_5 => {}
        }
    }

    /// The balancer's part of the scheduler tick: the `scheduler_tick` of 3.9 to 4.16
    /// updates `cpu_load[]` (`update_cpu_load_active`, 4.15's `cpu_load_update_active`);
    /// 6.12 keeps no such history.
    pub(crate) fn balancer_tick(&mut self, cpu: usize) {
        if self.balancer().has_cpu_load() {
            self.update_cpu_load_active_v3_9(cpu);
        }
    }

    /// `update_misfit_status(p, rq)` of the run's kernel: 6.12's, or Linux 6.5's (which
    /// also flags a task on the biggest CPU it may use).
    pub fn update_misfit_status(&mut self, p: Option<TaskId>, cpu: usize) {
        match self.balancer() {
            Balancer::V6_5 => self.update_misfit_status_v6_5(p, cpu),
            _ => self.update_misfit_status_v6_12(p, cpu),
        }
    }
}
