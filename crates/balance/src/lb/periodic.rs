//! Periodic balancing and its bookkeeping: `get_sd_balance_interval`,
//! `update_next_balance`, `update_newidle_stats`, `update_newidle_cost`,
//! `sched_balance_domains` (was `rebalance_domains`), `sched_balance_trigger`,
//! `sched_balance_softirq`, `sched_balance_update_blocked_averages` and
//! `update_misfit_status`.

use fairsim_pelt::{update_cfs_rq_load_avg, CfsRqInputs};
use fairsim_topology::{SdFlags, SdId};

/// The jiffies comparison, defined with the other jiffies helpers in
/// [`crate::lb::jiffies`] (so that the balancing host and the newidle balance compare
/// times without importing this module) and named here too.
pub use crate::lb::jiffies::time_after;
use crate::lb::rq_balance::BalanceAct;
use crate::sched::Sched;
use crate::stats::CpuIdleType;
use crate::task::TaskId;
use crate::weight::scale_load_down;

/// What `sched_balance_trigger` asks for after a tick.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TriggerResult {
    /// `raise_softirq(SCHED_SOFTIRQ)`: run [`Sched::sched_balance_softirq`] on this CPU.
    pub softirq: bool,
    /// `kick_ilb`: send the nohz balance IPI to this idle CPU.
    pub kick_ilb: Option<usize>,
}

impl Sched {
    /// Records the engine time of the current call, for code that reads `jiffies`.
    pub fn set_now(&mut self, now: u64) {
        self.now = self.now.max(now);
    }

    /// `jiffies` at the time of the current call.
    pub fn jiffies_now(&self) -> u64 {
        self.jiffies(self.now)
    }

    /// `sched_balance_trigger(rq)` of 6.12 from `sched_tick`: whether the balance softirq
    /// is due, and the nohz idle-balance kick.
    pub(crate) fn sched_balance_trigger_v6_12(&mut self, cpu: usize) -> TriggerResult {
        let mut r = TriggerResult::default();
        if self.topo.cpus[cpu].sd.is_none() {
            return r;
        }
        if self.jiffies_now() >= self.rqs[cpu].next_balance {
            r.softirq = true;
        }
        r.kick_ilb = self.nohz_balancer_kick(cpu);
        r
    }

    /// `sched_balance_softirq()` of 6.12 on `cpu`: a pending nohz balance on behalf of
    /// idle CPUs, or this CPU's blocked-load update and `sched_balance_domains`.
    pub(crate) fn sched_balance_softirq_v6_12(&mut self, cpu: usize, now: u64) {
        let idle = if self.lb.rq[cpu].idle_balance {
            CpuIdleType::Idle
        } else {
            CpuIdleType::NotIdle
        };
        if self.nohz_idle_balance(cpu, idle, now) {
            return;
        }
        self.sched_balance_update_blocked_averages(cpu, now);
        self.sched_balance_domains(cpu, idle, now);
    }

    /// `sched_balance_update_blocked_averages(cpu)`: decay the PELT signals of a CPU whose
    /// tasks sleep, so idle CPUs' load and utilization fade as in the kernel.
    pub fn sched_balance_update_blocked_averages(&mut self, cpu: usize, now: u64) {
        self.set_now(now);
        self.lb.rq[cpu].last_blocked_load_update_tick = self.jiffies_now();
        self.update_rq_clock(cpu, now);
        let groups_blocked = self.groups.active() && self.update_blocked_groups(cpu);
        self.pelt_tp_drain(cpu);
        let traced = self.pelt_tp.on();
        let rq = &mut self.rqs[cpu];
        let inp = CfsRqInputs {
            load: scale_load_down(rq.cfs.load.weight),
            runnable: u64::from(rq.cfs.h_nr_queued - rq.cfs.h_nr_delayed),
            running: rq.cfs.curr.is_some(),
        };
        let now_pelt = rq.pelt.rq_clock_pelt();
        let fires = traced && fairsim_pelt::update_crosses_period(now_pelt, &rq.cfs.avg.avg);
        let decayed = update_cfs_rq_load_avg(now_pelt, &mut rq.cfs.avg, inp);
        if fires {
            // pelt_cfs_tp in __update_load_avg_cfs_rq.
            let sig = crate::pelt_tp::PeltSignals::of(&rq.cfs.avg.avg);
            self.pelt_tp
                .push(cpu, crate::pelt_tp::PeltTracepoint::Cfs { group: 0, sig });
        }
        let rq = &self.rqs[cpu];
        let a = &rq.cfs.avg.avg;
        let has_blocked =
            a.load_avg != 0 || a.util_avg != 0 || a.runnable_avg != 0 || groups_blocked;
        if !has_blocked {
            self.lb.rq[cpu].has_blocked_load = false;
        }
        self.cpufreq_blocked_update(cpu, decayed);
        self.work.cpus_visited += 1;
    }

    /// `update_misfit_status(p, rq)` of 6.12: on asymmetric machines, note the load of a
    /// running task that does not fit its CPU.
    pub(crate) fn update_misfit_status_v6_12(&mut self, p: Option<TaskId>, cpu: usize) {
        if !self.topo.asym_cpucapacity {
            return;
        }
        let fits = match p {
            None => true,
            Some(p) => {
                let t = &self.tasks[p];
                t.nr_cpus_allowed == 1
                    || self.rqs[cpu].capacity_orig == t.max_allowed_capacity
                    || self.task_fits_cpu(p, cpu)
            }
        };
        self.rqs[cpu].misfit_task_load = match (fits, p) {
            (true, _) | (_, None) => 0,
            (false, Some(p)) => self.task_h_load(p).max(1),
        };
    }
}

/// The periodic balance of one CPU's domains, for any
/// [`BalanceHost`](crate::lb::host::BalanceHost).
pub trait PeriodicBalance: BalanceAct {
    /// `sched_balance_domains(rq, idle)`: balance each domain whose interval has passed,
    /// bottom-up, serialising `SD_SERIALIZE` levels, and set `rq->next_balance`.
    fn sched_balance_domains(&mut self, cpu: usize, mut idle: CpuIdleType, now: u64) {
        self.set_now(now);
        let mut continue_balancing = true;
        let mut busy = idle != CpuIdleType::Idle && !self.sched_idle_rq(cpu);
        let hz = self.hz();
        let mut next_balance = self.jiffies() + 60 * hz;
        let mut update_next = false;
        let mut need_decay = false;
        let mut max_cost = 0u64;
        let domains: Vec<SdId> = self.topo().domains_of(cpu).collect();
        for sd in domains {
            need_decay = self.update_newidle_cost(sd, 0, 0);
            max_cost += self.sd_rt(sd).max_newidle_lb_cost;
            if !continue_balancing {
                if need_decay {
                    continue;
                }
                break;
            }
            let mut interval = self.get_sd_balance_interval(sd, busy);
            let need_serialize = self.topo().domain(sd).flags.contains(SdFlags::SERIALIZE);
            let mut skip = false;
            if need_serialize {
                skip = !self.try_serialize();
            }
            if !skip {
                if self.jiffies() >= self.sd_rt(sd).last_balance + interval {
                    let r = self.sched_balance_rq(cpu, sd, idle, now);
                    continue_balancing = r.continue_balancing;
                    if let Some(b) = r.active_balance {
                        self.push_active_balance(b);
                    }
                    if r.moved != 0 {
                        // The CPU may have left idle: balance the rest as busy.
                        idle = if self.idle_cpu(cpu) {
                            CpuIdleType::Idle
                        } else {
                            CpuIdleType::NotIdle
                        };
                        busy = idle != CpuIdleType::Idle && !self.sched_idle_rq(cpu);
                    }
                    self.sd_rt_mut(sd).last_balance = self.jiffies();
                    interval = self.get_sd_balance_interval(sd, busy);
                }
                if need_serialize {
                    self.end_serialize();
                }
            }
            let last = self.sd_rt(sd).last_balance;
            if time_after(next_balance, last + interval) {
                next_balance = last + interval;
                update_next = true;
            }
        }
        if need_decay {
            let cost = self.migration_cost().max(max_cost);
            self.set_max_idle_balance_cost(cpu, cost);
        }
        if update_next {
            self.set_rq_next_balance(cpu, next_balance);
        }
    }
}

impl<T: BalanceAct + ?Sized> PeriodicBalance for T {}
