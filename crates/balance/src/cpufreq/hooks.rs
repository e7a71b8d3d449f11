//! The hooks through which the scheduler drives cpufreq (fair.c 6.12.117 and
//! `kernel/sched/sched.h`'s `cpufreq_update_util`): the update hook on each utilization
//! change, the blocked-averages and idle-tick hooks, the end of a frequency transition,
//! and installing cpufreq on a running scheduler. They read the runqueues, so they sit
//! above both [`crate::sched`] and the driver's side in [`super`].

use super::{Cpufreq, CpufreqStats, Governor};
use crate::sched::Sched;

impl Cpufreq {
    /// The update hook of `cpu` (`cpufreq_update_util_data`'s function): schedutil's
    /// single or shared update; the other governors install none.
    fn update_util(&mut self, s: &Sched, cpu: usize, time: u64, flags: u32) {
        if !matches!(self.governor, Governor::Schedutil { .. }) {
            return;
        }
        let policy = self.policy_of[cpu];
        // policy_is_shared(): more than one CPU in policy->cpus. Linux 6.5 reads the
        // utilization and applies the headroom and clamps its own way
        // ([`v6_5_schedutil`]); the other eras with schedutil run 6.12's.
        let shared = self.policies[policy].cpus.weight() > 1;
        match (s.fair.features.kernel(), shared) {
            (crate::kernel::Kernel::V6_5, true) => {
                self.sugov_update_shared_v6_5(s, cpu, time, flags)
            }
            (crate::kernel::Kernel::V6_5, false) => {
                self.sugov_update_single_freq_v6_5(s, cpu, time, flags)
            }
            (_, true) => self.sugov_update_shared(s, cpu, time, flags),
            (_, false) => self.sugov_update_single_freq(s, cpu, time, flags),
        }
    }
}

impl Sched {
    /// `cpufreq_update_util(rq, flags)` for `cpu`'s runqueue, at `rq_clock(rq)`: the
    /// governor's hook, when the machine has cpufreq.
    pub fn cpufreq_update_util(&mut self, cpu: usize, flags: u32) {
        let Some(mut cf) = self.cpufreq.take() else {
            return;
        };
        let time = self.rqs[cpu].clock;
        cf.update_util(self, cpu, time, flags);
        self.cpufreq = Some(cf);
    }

    /// `cfs_rq_util_change(&rq->cfs, 0)`, for the `update_load_avg` of `cpu`'s root
    /// cfs_rq that just ran: the hook fires when that update decayed the cfs_rq's
    /// signals or attached or detached an entity (the `util_changed` mark it left).
    pub(crate) fn cfs_rq_util_change(&mut self, cpu: usize) {
        if std::mem::take(&mut self.rqs[cpu].cfs.util_changed) {
            self.cpufreq_update_util(cpu, 0);
        }
    }

    /// The cpufreq end of `sched_balance_update_blocked_averages(cpu)`: the hook fires
    /// when the fair signals decayed (`fair_decayed`) or the other classes' did
    /// (`update_other_load_avgs`): without RT, deadline or IRQ time their sums are 0, so
    /// they "decay" exactly when a PELT period boundary of `rq_clock_pelt` passed since
    /// their last update (`___update_load_sum` returns the periods crossed).
    pub(crate) fn cpufreq_blocked_update(&mut self, cpu: usize, fair_decayed: bool) {
        let Some(cf) = self.cpufreq.as_mut() else {
            return;
        };
        let now = self.rqs[cpu].pelt.rq_clock_pelt();
        let last = cf.avg_rt_last_update[cpu];
        let mut others_decayed = false;
        if now >= last {
            let delta = (now - last) >> 10;
            if delta != 0 {
                let new_last = last + (delta << 10);
                others_decayed = (new_last >> 20) > (last >> 20);
                cf.avg_rt_last_update[cpu] = new_last;
            }
        } else {
            cf.avg_rt_last_update[cpu] = now;
        }
        if fair_decayed || others_decayed {
            self.cpufreq_update_util(cpu, 0);
        }
    }

    /// `tick_nohz_idle_stop_tick()`'s `ts->idle_calls++` on `cpu`: its idle loop
    /// stopped the tick, which tells schedutil the CPU has been idle.
    pub fn cpufreq_idle_stop_tick(&mut self, cpu: usize) {
        if let Some(cf) = self.cpufreq.as_mut() {
            cf.idle_calls[cpu] += 1;
        }
    }

    /// The end of a transition of `policy` to `freq` at `now` (engine ns):
    /// `cpufreq_notify_transition(CPUFREQ_POSTCHANGE)` records it in the stats and sets
    /// `policy->cur`; `cpufreq_freq_transition_end` then sets the frequency scale of
    /// every CPU of the policy (`arch_set_freq_scale`). Returns that scale
    /// (`arch_scale_freq_capacity`); the engine writes it into the runqueues, re-timing
    /// the work in progress.
    pub fn cpufreq_transition_end(&mut self, policy: usize, freq: u32, now: u64) -> u64 {
        let Some(cf) = self.cpufreq.as_mut() else {
            return 1024;
        };
        let p = &mut cf.policies[policy];
        p.stats.record_transition(freq, now);
        p.cur = freq;
        p.freq_scale()
    }

    /// Installs cpufreq: the runqueues of every policy start at their governor's
    /// frequency scale.
    ///
    /// The machine has been up and idle for a while when a run starts (as [`Sched::new`]
    /// has it: every CPU in the idle loop with its tick stopped, so each has one idle
    /// call). Under schedutil that means each policy already runs at the frequency the
    /// governor picks for idle CPUs: its hook is run once for the policy's first CPU, and
    /// the frequency it asks for is in effect from the start, without a transition in
    /// the stats.
    pub fn install_cpufreq(&mut self, mut cf: Cpufreq) {
        // The energy model as the run's kernel costs it: Linux 6.5's em_create_perf_table
        // differs from 6.12's (crate::energy::v6_5_topology).
        if self.fair.features.kernel() == crate::kernel::Kernel::V6_5 {
            cf.em_v6_5();
        }
        for c in &mut cf.idle_calls {
            *c = 1;
        }
        self.cpufreq = Some(Box::new(cf));
        if matches!(
            self.cpufreq.as_ref().map(|c| c.governor),
            Some(Governor::Schedutil { .. })
        ) {
            let first: Vec<usize> = self
                .cpufreq
                .as_ref()
                .map(|c| c.policies.iter().map(|p| p.cpu).collect())
                .unwrap_or_default();
            for cpu in first {
                self.cpufreq_update_util(cpu, 0);
            }
        }
        let Some(cf) = self.cpufreq.as_mut() else {
            return;
        };
        for (policy, _) in cf.take_requests() {
            let target = cf.sugov_work(policy);
            if let Some(freq) = cf.driver_target(policy, target) {
                let p = &mut cf.policies[policy];
                p.cur = freq;
                let index = p.table.index_of(freq).unwrap_or(0);
                p.stats = CpufreqStats::new(p.table.freqs.clone(), index, p.stats.last_time);
            }
        }
        for p in &cf.policies {
            let scale = p.freq_scale();
            for c in p.cpus.iter() {
                self.rqs[c].freq_capacity = scale;
            }
        }
        // A governor change rebuilds the domains with their energy model
        // (sched_cpufreq_governor_change -> rebuild_sched_domains_energy).
        self.build_perf_domains();
    }
}
