//! The balancing CPU's side of load balancing: its own domains' runtime fields, its
//! schedstat counters, taking the busiest runqueue's lock and attaching pulled tasks.
//!
//! [`BalanceHost`] is what `sched_balance_rq`'s act half, `sched_balance_domains` and the
//! newidle state machine need beyond the lockless reads of [`LbRead`] and the task walk of
//! [`MoveTasks`]. The engine's `Sched` implements it for any CPU, one call at a time; the
//! race mode implements it per thread, for the emulated CPU that thread runs, over runqueues
//! other threads change at the same time. The decision code on top of it exists once.

use fairsim_topology::SdId;

use crate::features::Feature;
use crate::lb::detach::MoveTasks;
use crate::lb::env::{LbEnv, LbResult, LbScan};
use crate::lb::era::Balancer;
use crate::lb::jiffies::time_after;
use crate::lb::msecs_to_jiffies;
use crate::lb::view::{LbRead, ScanCounters};
use crate::lb::SdRuntime;
use crate::stats::{CpuIdleType, SdSchedstat};

/// The balancing CPU's own state and actions; see the module docs.
pub trait BalanceHost: LbRead + MoveTasks {
    /// Records the time of the current call (engine ns); `jiffies()` follows it.
    fn set_now(&mut self, now: u64);
    /// `sched_clock()` in ns now.
    fn sched_clock(&self) -> u64;
    /// The runtime fields of one of the balancing CPU's domains.
    fn sd_rt(&self, sd: SdId) -> &SdRuntime;
    /// The same, to change.
    fn sd_rt_mut(&mut self, sd: SdId) -> &mut SdRuntime;
    /// The schedstat counters of one of the balancing CPU's domains.
    fn sd_stats_mut(&mut self, sd: SdId) -> &mut SdSchedstat;
    /// Folds what a scan did into the counters (see [`ScanCounters`]).
    fn fold_scan(&mut self, sd: SdId, itype: CpuIdleType, c: ScanCounters);
    /// `sysctl_sched_nr_migrate`.
    fn nr_migrate(&self) -> u32;
    /// `rq_lock_irqsave(busiest)` and `update_rq_clock(busiest)` at `now`.
    fn lock_src_rq(&mut self, src: usize, now: u64);
    /// `raw_spin_rq_lock_irqsave(busiest)` without a clock update, as the active-balance
    /// decision takes it.
    fn lock_src_rq_raw(&mut self, src: usize);
    /// `rq_unlock(busiest)`.
    fn unlock_src_rq(&mut self, src: usize);
    /// `attach_tasks(env)`: lock the destination and enqueue `env.tasks` there.
    fn attach_tasks(&mut self, env: &mut LbEnv, now: u64);
    /// Under the busiest runqueue's lock: its current task may run on `cpu` (the idle
    /// task may go anywhere).
    fn src_curr_allowed_on(&self, src: usize, cpu: usize) -> bool;
    /// `busiest->active_balance` was clear: set it with `push_cpu = this_cpu` and return
    /// true; false if an active balance is already queued there.
    fn queue_active_balance(&mut self, busiest: usize, this_cpu: usize) -> bool;
    /// `this_rq->rd->overloaded` of the balancing CPU `cpu`'s root domain.
    fn rd_overloaded(&self, cpu: usize) -> bool;
    /// `rq->avg_idle` of the balancing CPU.
    fn avg_idle(&self, cpu: usize) -> u64;
    /// The balancing CPU's next `sched_rng()` value (NI_RANDOM).
    fn next_random(&mut self, cpu: usize) -> u32;
    /// The start of `sched_balance_newidle`: `update_misfit_status(NULL, this_rq)`.
    fn newidle_enter(&mut self, cpu: usize);
    /// A newidle call stopped at the entry gate, and which half stopped it (fairsim's
    /// own counters; the kernel counts neither). Hosts without schedstat ignore it.
    fn newidle_gated(&mut self, _cpu: usize, _gate: crate::stats::NewidleGate) {}
    /// `this_rq->idle_stamp = rq_clock(this_rq)`.
    fn set_idle_stamp(&mut self, cpu: usize);
    /// `sched_balance_update_blocked_averages(cpu)`.
    fn update_blocked_averages(&mut self, cpu: usize, now: u64);
    /// `rq->max_idle_balance_cost`.
    fn max_idle_balance_cost(&self, cpu: usize) -> u64;
    /// Sets `rq->max_idle_balance_cost`.
    fn set_max_idle_balance_cost(&mut self, cpu: usize, v: u64);
    /// `rq->next_balance` in jiffies.
    fn rq_next_balance(&self, cpu: usize) -> u64;
    /// Sets `rq->next_balance`.
    fn set_rq_next_balance(&mut self, cpu: usize, v: u64);
    /// `this_rq->idle_stamp = 0`: the newidle balance found work.
    fn clear_idle_stamp(&mut self, cpu: usize);
    /// `nohz_newidle_balance(this_rq)`: the CPU goes idle; maybe kick an idle balancer.
    fn nohz_newidle_balance(&mut self, cpu: usize);
    /// `atomic_try_cmpxchg_acquire(&sched_balance_running, 0, 1)` for an
    /// `SD_SERIALIZE` domain: true if this CPU now holds it.
    fn try_serialize(&mut self) -> bool;
    /// `atomic_set_release(&sched_balance_running, 0)`.
    fn end_serialize(&mut self);
    /// `stop_one_cpu_nowait(busiest, active_load_balance_cpu_stop, ...)`.
    fn push_active_balance(&mut self, busiest: usize);
    /// The balancer this host runs: 6.12's, or an era's (3.9's with LEGACY_LB, 4.5's,
    /// 4.15's), which only the engine's machine can.
    fn balancer(&self) -> Balancer {
        Balancer::V6_12
    }
    /// The scan half of a `cpu_load[]` era's `load_balance` (3.9's with LEGACY_LB, 4.5's,
    /// 4.15's: up to `find_busiest_queue`), or `None` when this host runs 6.12's.
    fn legacy_lb_scan(
        &mut self,
        _this_cpu: usize,
        _sd: SdId,
        _idle: CpuIdleType,
        _now: u64,
    ) -> Option<LbScan> {
        None
    }
    /// That era's act half, or the scan back when this host runs 6.12's.
    fn legacy_lb_act(&mut self, scan: LbScan, _now: u64) -> Result<LbResult, Box<LbScan>> {
        Err(Box::new(scan))
    }
    /// `get_sd_balance_interval(sd, cpu_busy)`: the domain's interval in jiffies, stretched
    /// by `busy_factor` on a busy CPU (minus one jiffy so balances do not align).
    fn get_sd_balance_interval(&self, sd: SdId, cpu_busy: bool) -> u64 {
        let d = self.topo().domain(sd);
        let mut interval = self.sd_rt(sd).balance_interval;
        if cpu_busy {
            interval *= u64::from(d.busy_factor);
        }
        let mut interval = msecs_to_jiffies(interval, self.hz());
        if cpu_busy {
            interval = interval.saturating_sub(1);
        }
        interval.clamp(1, self.max_load_balance_interval())
    }

    /// `update_next_balance(sd, &next_balance)`.
    fn update_next_balance(&self, sd: SdId, next_balance: &mut u64) {
        let next = self.sd_rt(sd).last_balance + self.get_sd_balance_interval(sd, false);
        if time_after(*next_balance, next) {
            *next_balance = next;
        }
    }

    /// `update_newidle_stats(sd, success)`: NI_RANDOM's success ratio over the last ~1024
    /// calls, halved every 1024. With NI_RATE (mainline 9fe89f022c05) the ratio also gains
    /// one point per 2^22 ns (~4.2 ms) that the last 512 calls took, so a domain that
    /// balances at under ~128 Hz keeps balancing every time even if it rarely pulls.
    fn update_newidle_stats(&mut self, sd: SdId, success: u32) {
        let ni_rate = self.features().has(Feature::NI_RATE);
        let clock = self.sched_clock();
        let rt = self.sd_rt_mut(sd);
        rt.newidle_call += 1;
        rt.newidle_success += success;
        if rt.newidle_call >= 1024 {
            // sched_clock() is monotonic here, so the kernel's clamp of a negative delta
            // is the saturating subtraction.
            let delta = clock.saturating_sub(rt.newidle_stamp);
            rt.newidle_stamp = clock;
            let rate = if ni_rate {
                (delta >> 22).min(1024) as u32
            } else {
                0
            };
            rt.newidle_ratio = (rate + rt.newidle_success).min(1024);
            rt.newidle_call /= 2;
            rt.newidle_success /= 2;
        }
    }

    /// `update_newidle_cost(sd, cost, success)`: keep the maximum newidle cost seen and
    /// decay it by 253/256 once per second. Returns whether it decayed.
    fn update_newidle_cost(&mut self, sd: SdId, cost: u64, success: u32) -> bool {
        let hz = self.hz();
        let now = self.jiffies();
        if cost != 0 {
            self.update_newidle_stats(sd, success);
        }
        let rt = self.sd_rt_mut(sd);
        let next_decay = rt.last_decay_max_lb_cost + hz;
        if cost > rt.max_newidle_lb_cost {
            rt.max_newidle_lb_cost = cost;
            rt.last_decay_max_lb_cost = now;
        } else if time_after(now, next_decay) {
            rt.max_newidle_lb_cost = rt.max_newidle_lb_cost * 253 / 256;
            rt.last_decay_max_lb_cost = now;
            return true;
        }
        false
    }
}

/// The engine's machine: any CPU's state is a field of the one-threaded `Sched`, so the
/// locks are bookkeeping for the engine's cost model (which holds them in virtual time)
/// and nothing else.
impl BalanceHost for crate::sched::Sched {
    fn set_now(&mut self, now: u64) {
        crate::sched::Sched::set_now(self, now);
    }
    fn sched_clock(&self) -> u64 {
        crate::sched::Sched::kclock(self.now)
    }
    fn sd_rt(&self, sd: SdId) -> &SdRuntime {
        &self.lb.sd[sd]
    }
    fn sd_rt_mut(&mut self, sd: SdId) -> &mut SdRuntime {
        &mut self.lb.sd[sd]
    }
    fn sd_stats_mut(&mut self, sd: SdId) -> &mut SdSchedstat {
        &mut self.sd_stats[sd]
    }
    fn fold_scan(&mut self, sd: SdId, itype: CpuIdleType, c: ScanCounters) {
        crate::sched::Sched::fold_scan(self, sd, itype, c);
    }
    fn nr_migrate(&self) -> u32 {
        self.params.nr_migrate
    }
    fn lock_src_rq(&mut self, src: usize, now: u64) {
        self.update_rq_clock(src, now);
        self.work.rq_locks.push(src);
    }
    fn lock_src_rq_raw(&mut self, _src: usize) {
        // The active-balance check's brief hold is not charged by the engine.
    }
    fn unlock_src_rq(&mut self, _src: usize) {}
    fn attach_tasks(&mut self, env: &mut LbEnv, now: u64) {
        crate::sched::Sched::attach_tasks(self, env, now);
    }
    fn src_curr_allowed_on(&self, src: usize, cpu: usize) -> bool {
        self.rqs[src]
            .curr
            .is_none_or(|c| self.tasks[c].allowed_on(cpu))
    }
    fn queue_active_balance(&mut self, busiest: usize, this_cpu: usize) -> bool {
        let rq = &mut self.lb.rq[busiest];
        if rq.active_balance {
            return false;
        }
        rq.active_balance = true;
        rq.push_cpu = this_cpu;
        true
    }
    fn rd_overloaded(&self, cpu: usize) -> bool {
        self.lb.is_rd_overloaded(&self.topo, cpu)
    }
    fn avg_idle(&self, cpu: usize) -> u64 {
        self.rqs[cpu].avg_idle
    }
    fn next_random(&mut self, cpu: usize) -> u32 {
        self.lb.rnd[cpu].next_u32()
    }
    fn newidle_enter(&mut self, cpu: usize) {
        self.update_misfit_status(None, cpu);
    }
    fn newidle_gated(&mut self, cpu: usize, gate: crate::stats::NewidleGate) {
        let st = &mut self.rqs[cpu].stats;
        match gate {
            crate::stats::NewidleGate::NotOverloaded => st.newidle_gate_not_overloaded += 1,
            crate::stats::NewidleGate::AvgIdle => st.newidle_gate_avg_idle += 1,
        }
    }
    fn update_blocked_averages(&mut self, cpu: usize, now: u64) {
        self.sched_balance_update_blocked_averages(cpu, now);
    }
    fn max_idle_balance_cost(&self, cpu: usize) -> u64 {
        self.rqs[cpu].max_idle_balance_cost
    }
    fn set_max_idle_balance_cost(&mut self, cpu: usize, v: u64) {
        self.rqs[cpu].max_idle_balance_cost = v;
    }
    fn rq_next_balance(&self, cpu: usize) -> u64 {
        self.rqs[cpu].next_balance
    }
    fn set_rq_next_balance(&mut self, cpu: usize, v: u64) {
        self.rqs[cpu].next_balance = v;
    }
    fn set_idle_stamp(&mut self, cpu: usize) {
        self.rqs[cpu].idle_stamp = self.rqs[cpu].clock;
    }
    fn clear_idle_stamp(&mut self, cpu: usize) {
        self.rqs[cpu].idle_stamp = 0;
    }
    fn nohz_newidle_balance(&mut self, cpu: usize) {
        crate::sched::Sched::nohz_newidle_balance(self, cpu);
    }
    fn try_serialize(&mut self) -> bool {
        if self.lb.balance_running {
            return false;
        }
        self.lb.balance_running = true;
        true
    }
    fn end_serialize(&mut self) {
        self.lb.balance_running = false;
    }
    fn push_active_balance(&mut self, busiest: usize) {
        self.pending_active_balance.push(busiest);
    }
    fn balancer(&self) -> Balancer {
        crate::sched::Sched::balancer(self)
    }
    fn legacy_lb_scan(
        &mut self,
        this_cpu: usize,
        sd: SdId,
        idle: CpuIdleType,
        now: u64,
    ) -> Option<LbScan> {
        match crate::sched::Sched::balancer(self) {
            Balancer::V3_9 => Some(self.load_balance_scan_v3_9(this_cpu, sd, idle, now)),
            Balancer::V4_5 | Balancer::V4_15 => {
                Some(self.load_balance_scan_v4_5(this_cpu, sd, idle, now))
            }
            _ => None,
        }
    }
    fn legacy_lb_act(&mut self, scan: LbScan, now: u64) -> Result<LbResult, Box<LbScan>> {
        match crate::sched::Sched::balancer(self) {
            Balancer::V3_9 => Ok(self.load_balance_act_v3_9(scan, now)),
            Balancer::V4_5 | Balancer::V4_15 => Ok(self.load_balance_act_v4_5(scan, now)),
            _ => Err(Box::new(scan)),
        }
    }
}
