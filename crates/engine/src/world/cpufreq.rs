//! CPU frequency in virtual time: when schedutil's slow-path work runs, when a transition
//! takes effect, and what a new frequency does to the work in progress.
//!
//! The driver modelled is cpufreq-dt without fast switching, the arm64 default
//! (`drivers/cpufreq/cpufreq-dt.c`, Linux 6.12). A request queued by schedutil
//! (`sugov_deferred_update`, [`fairsim_balance::cpufreq::Cpufreq::take_requests`]) is
//! picked up by the policy's `sugov:N` kthread at once: the irq_work and the deadline
//! kthread's wakeup are not given a latency of their own. The kthread's `sugov_work`
//! reads `next_freq` and calls `__cpufreq_driver_target`; cpufreq-dt's `set_target`
//! changes the clock (and the supply) and returns after the driver's transition latency,
//! and only then does `cpufreq_freq_transition_end` record the transition and set the new
//! `arch_freq_scale` of the policy's CPUs. The kthread runs one work at a time, so a
//! request that comes while a transition is under way is served when it ends. The
//! kthread's own CPU time is not charged.
//!
//! A new frequency scale changes how fast each CPU of the policy does its task's work
//! (`World::rate`): the running segment is accounted up to the transition at the old
//! rate and its end re-timed at the new one. The PELT clock reads the scale at its next
//! `update_rq_clock`, for the whole delta since the previous one, as the kernel's does.
//!
//! Outputs: `cpufreq/stats` per policy (kept by the balance crate), a bounded timeline of
//! the transitions in the measurement window, and per CPU the busy time (task work and
//! kernel overhead, as the metrics count it) at each OPP, from which the energy estimate
//! is computed.

use crate::event::Event;
use fairsim_des::time::Time;

use super::cpufreq_state::{CpufreqRt, FreqChange, MAX_TIMELINE};
use super::World;

impl World {
    /// Queues the governor work schedutil asked for since the last event: one work per
    /// policy on its kthread, run when the kthread is free.
    pub(super) fn cpufreq_drain(&mut self, now: u64) {
        let Some(cf) = self.sched.cpufreq.as_mut() else {
            return;
        };
        let requests = cf.take_requests();
        let Some(rt) = self.cpufreq.as_mut() else {
            return;
        };
        for (policy, _clock) in requests {
            if rt.work_queued[policy] {
                continue;
            }
            rt.work_queued[policy] = true;
            let at = now.max(rt.busy_until[policy]);
            self.queue.push(Time(at), Event::CpufreqWork { policy });
        }
    }

    /// `sugov_work` of `policy` on its kthread at `now`: the frequency it asks for, and
    /// the driver's transition when that differs from the current one.
    pub(super) fn cpufreq_work(&mut self, policy: usize, now: u64) {
        let Some(rt) = self.cpufreq.as_mut() else {
            return;
        };
        if now < rt.busy_until[policy] {
            // The kthread is still in the previous work's transition.
            let at = rt.busy_until[policy];
            self.queue.push(Time(at), Event::CpufreqWork { policy });
            return;
        }
        rt.work_queued[policy] = false;
        let Some(cf) = self.sched.cpufreq.as_mut() else {
            return;
        };
        let target = cf.sugov_work(policy);
        let Some(khz) = cf.driver_target(policy, target) else {
            return;
        };
        let end = now + cf.policies[policy].transition_latency_ns;
        rt.busy_until[policy] = end;
        self.queue
            .push(Time(end), Event::CpufreqTransitionEnd { policy, khz });
    }

    /// The end of `policy`'s transition to `khz` at `now`: the stats, the timeline, the
    /// busy time of the old OPP, and the new frequency scale of the policy's CPUs with
    /// their work re-timed.
    pub(super) fn cpufreq_transition_end(&mut self, policy: usize, khz: u32, now: u64) {
        let cpus: Vec<usize> = match self.sched.cpufreq.as_ref() {
            Some(cf) => cf.policies[policy].cpus.iter().collect(),
            None => return,
        };
        for &cpu in &cpus {
            self.advance_seg(cpu, now);
            self.cpufreq_account_busy(cpu);
        }
        let scale = self.sched.cpufreq_transition_end(policy, khz, now);
        for &cpu in &cpus {
            self.sched.rqs[cpu].freq_capacity = scale;
            self.retime_seg(cpu);
            self.trace_frequency(cpu, now, khz);
        }
        if let Some(rt) = self.cpufreq.as_mut() {
            if rt.timeline.len() < MAX_TIMELINE {
                rt.timeline.push(FreqChange {
                    at: now,
                    policy: policy as u32,
                    khz,
                });
            } else {
                rt.timeline_dropped += 1;
            }
        }
    }

    /// Books `cpu`'s busy time since it was last accounted to the OPP its policy runs at.
    fn cpufreq_account_busy(&mut self, cpu: usize) {
        let m = &self.metrics.cpus[cpu];
        let busy = m.task_ns + m.overhead_total();
        let (Some(rt), Some(cf)) = (self.cpufreq.as_mut(), self.sched.cpufreq.as_ref()) else {
            return;
        };
        let p = &cf.policies[cf.policy_of[cpu]];
        let idx = p.table.index_of(p.cur).unwrap_or(0);
        rt.opp_busy_ns[cpu][idx] += busy.saturating_sub(rt.busy_snap[cpu]);
        rt.busy_snap[cpu] = busy;
    }

    /// The measurement window opens at `now` (after the metrics were reset): the stats,
    /// the timeline and the busy time per OPP start again.
    pub(super) fn cpufreq_open_window(&mut self, now: u64) {
        let (Some(rt), Some(cf)) = (self.cpufreq.as_mut(), self.sched.cpufreq.as_mut()) else {
            return;
        };
        for p in &mut cf.policies {
            p.stats.reset(now);
        }
        rt.timeline.clear();
        rt.timeline_dropped = 0;
        rt.window_khz = cf.policies.iter().map(|p| p.cur).collect();
        for s in &mut rt.busy_snap {
            *s = 0;
        }
        for row in &mut rt.opp_busy_ns {
            for b in row {
                *b = 0;
            }
        }
    }

    /// The frequency (kHz) `cpu` runs at now: its policy's `cur`, which changes when a
    /// transition ends; `None` on a machine without cpufreq.
    pub(crate) fn cur_khz(&self, cpu: usize) -> Option<u32> {
        let cf = self.sched.cpufreq.as_ref()?;
        let p = cf.policies.get(*cf.policy_of.get(cpu)?)?;
        Some(p.cur)
    }

    /// The engine's cpufreq state, when the machine has cpufreq.
    pub fn cpufreq_rt(&self) -> Option<&CpufreqRt> {
        self.cpufreq.as_ref()
    }

    /// `cpu`'s busy ns in the window at each OPP of its policy, up to the end of the run
    /// (the time since the last transition goes to the current OPP).
    pub fn cpufreq_busy_by_opp(&self, cpu: usize) -> Vec<u64> {
        let (Some(rt), Some(cf)) = (self.cpufreq.as_ref(), self.sched.cpufreq.as_ref()) else {
            return Vec::new();
        };
        let mut row = rt.opp_busy_ns[cpu].clone();
        let p = &cf.policies[cf.policy_of[cpu]];
        let m = &self.metrics.cpus[cpu];
        let busy = m.task_ns + m.overhead_total();
        if let Some(idx) = p.table.index_of(p.cur) {
            row[idx] += busy.saturating_sub(rt.busy_snap[cpu]);
        }
        row
    }
}
