//! `find_energy_efficient_cpu` and the energy estimate it compares placements with
//! (Linux 6.12.117 `kernel/sched/fair.c`: `struct energy_env`, `eenv_task_busy_time`,
//! `eenv_pd_busy_time`, `eenv_pd_max_util`, `compute_energy`,
//! `find_energy_efficient_cpu`).
//!
//! fairsim has no IRQ time (`cpu_util_irq` is 0, so `scale_irq_capacity` leaves a
//! utilization as it is); the arithmetic keeps it where the kernel has it. The task's and
//! the runqueues' clamps ([`crate::uclamp`]) count once `uclamp_is_used()`.

use super::PerfDomain;
use crate::cpu_util::{UCLAMP_MAX_DEFAULT, UCLAMP_MIN_DEFAULT};
use crate::cpufreq::sugov_effective_cpu_perf;
use crate::sched::Sched;
use crate::task::TaskId;
use crate::uclamp::ClampId;
use fairsim_topology::SdId;

/// `struct energy_env`: the utilization landscape of one performance domain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EnergyEnv {
    /// `task_busy_time`: the task's contribution.
    pub task_busy_time: u64,
    /// `pd_busy_time`: the domain's utilization without the task.
    pub pd_busy_time: u64,
    /// `cpu_cap`: the domain's CPU capacity (after pressure).
    pub cpu_cap: u64,
    /// `pd_cap`: `cpu_cap` times the domain's CPUs.
    pub pd_cap: u64,
}

/// `scale_irq_capacity(util, irq, max)`: `util * (max - irq) / max`.
fn scale_irq_capacity(util: u64, irq: u64, max: u64) -> u64 {
    util * (max - irq) / max
}

impl Sched {
    /// `cpu_util_irq(rq)`: fairsim accounts no IRQ time.
    pub(super) fn cpu_util_irq(&self, _cpu: usize) -> u64 {
        0
    }

    /// `eenv_task_busy_time(eenv, p, prev_cpu)`: `p`'s estimated utilization, scaled for
    /// the IRQ time of `prev_cpu`.
    pub(super) fn eenv_task_busy_time(&self, eenv: &mut EnergyEnv, p: TaskId, prev_cpu: usize) {
        let max_cap = self.arch_scale_cpu_capacity(prev_cpu);
        let irq = self.cpu_util_irq(prev_cpu);
        eenv.task_busy_time = if irq >= max_cap {
            max_cap
        } else {
            scale_irq_capacity(self.task_util_est(p), irq, max_cap)
        };
    }

    /// `eenv_pd_busy_time(eenv, pd_cpus, p)`: the domain's utilization without `p`, no
    /// more than `pd_cap`.
    fn eenv_pd_busy_time(&self, eenv: &mut EnergyEnv, pd: &PerfDomain, p: TaskId) {
        let mut busy_time = 0;
        for cpu in pd.cpus.iter() {
            let util = self.cpu_util(cpu, Some(p), None, false);
            busy_time += self.effective_cpu_util(cpu, util).0;
        }
        eenv.pd_busy_time = eenv.pd_cap.min(busy_time);
    }

    /// `eenv_pd_max_util(eenv, pd_cpus, p, dst_cpu)`: the highest performance request of
    /// the domain's CPUs with `p` on `dst_cpu` (`None`: nowhere in the domain), as
    /// schedutil would make it, no more than `cpu_cap`.
    fn eenv_pd_max_util(
        &self,
        eenv: &EnergyEnv,
        pd: &PerfDomain,
        p: TaskId,
        dst_cpu: Option<usize>,
    ) -> u64 {
        let mut max_util = 0;
        for cpu in pd.cpus.iter() {
            let util = self.cpu_util(cpu, Some(p), dst_cpu, true);
            let (eff_util, mut min, mut max) = self.effective_cpu_util(cpu, util);
            // The task's clamps count on its destination: the frequency it would ask.
            if dst_cpu == Some(cpu) && self.uclamp_is_used() {
                min = min.max(self.uclamp_eff_value(p, ClampId::Min));
                // No active max clamp on an idle runqueue: the task's own.
                max = if self.uclamp_rq_is_idle(cpu) {
                    self.uclamp_eff_value(p, ClampId::Max)
                } else {
                    max.max(self.uclamp_eff_value(p, ClampId::Max))
                };
            }
            let eff_util = sugov_effective_cpu_perf(eff_util, min, max);
            max_util = max_util.max(eff_util);
        }
        max_util.min(eenv.cpu_cap)
    }

    /// `compute_energy(eenv, pd, pd_cpus, p, dst_cpu)`: the domain's estimated energy
    /// with `p` on `dst_cpu`, or without `p` when `dst_cpu` is `None`.
    fn compute_energy(
        &self,
        eenv: &EnergyEnv,
        pd: &PerfDomain,
        p: TaskId,
        dst_cpu: Option<usize>,
    ) -> u64 {
        let max_util = self.eenv_pd_max_util(eenv, pd, p, dst_cpu);
        let mut busy_time = eenv.pd_busy_time;
        if dst_cpu.is_some() {
            busy_time = eenv.pd_cap.min(busy_time + eenv.task_busy_time);
        }
        let (em, skip) = self.em_of(pd);
        super::em_cpu_energy(em, skip, max_util, busy_time, eenv.cpu_cap)
    }

    /// `find_energy_efficient_cpu(p, prev_cpu)` for a wakeup on `this_cpu`: in each
    /// performance domain the CPU with the most spare capacity that `p` fits (and
    /// `prev_cpu`, always a candidate) is costed with the energy model; the cheapest
    /// placement wins over `prev_cpu` when it saves energy. `None` is the kernel's -1
    /// (no perf domain, no asymmetric domain spanning `prev_cpu`): the caller goes on
    /// with the usual placement.
    pub fn find_energy_efficient_cpu(
        &mut self,
        p: TaskId,
        prev_cpu: usize,
        this_cpu: usize,
    ) -> Option<usize> {
        let rd = self.topo.root_domain_of(this_cpu);
        if self.eas.rd_pd.get(rd).is_none_or(|pds| pds.is_empty()) {
            return None;
        }
        // The lowest sd_asym_cpucapacity domain of this_cpu spanning prev_cpu.
        let mut sd = self.topo.cpus[this_cpu].sd_asym_cpucapacity;
        while let Some(d) = sd {
            if self.topo.domain(d).span.test(prev_cpu) {
                break;
            }
            sd = self.topo.domain(d).parent;
        }
        let sd = sd?;
        // The only write of the search: p's signals brought up to date; the rest reads.
        self.sync_entity_load_avg(p);
        Some(self.feec_search(p, prev_cpu, rd, sd))
    }

    /// The search of [`Sched::find_energy_efficient_cpu`] once `p`'s signals are synced:
    /// root domain `rd`'s perf domains within `sd`.
    fn feec_search(&self, p: TaskId, prev_cpu: usize, rd: usize, sd: SdId) -> usize {
        let pds = &self.eas.rd_pd[rd];
        let target = prev_cpu;
        let (p_util_min, p_util_max) = if self.uclamp_is_used() {
            (
                self.uclamp_eff_value(p, ClampId::Min),
                self.uclamp_eff_value(p, ClampId::Max),
            )
        } else {
            (UCLAMP_MIN_DEFAULT, UCLAMP_MAX_DEFAULT)
        };
        if self.task_util_est(p) == 0 && p_util_min == 0 {
            return target;
        }
        let mut eenv = EnergyEnv::default();
        self.eenv_task_busy_time(&mut eenv, p, prev_cpu);

        let mut prev_delta = u64::MAX;
        let mut best_delta = u64::MAX;
        let mut prev_fits = -1i32;
        let mut best_fits = -1i32;
        let mut best_actual_cap = 0u64;
        let mut prev_actual_cap = 0u64;
        let mut best_energy_cpu = prev_cpu;
        let sd_span = &self.topo.domain(sd).span;
        for pd in pds {
            let (mut util_min, mut util_max) = (p_util_min, p_util_max);
            let mut prev_spare_cap: i64 = -1;
            let mut max_spare_cap: i64 = -1;
            let mut max_spare_cap_cpu: Option<usize> = None;
            let mut max_fits = -1i32;
            // Every CPU is online.
            let Some(first) = pd.cpus.iter().next() else {
                continue;
            };
            let cpu_actual_cap = self.get_actual_cpu_capacity(first);
            eenv.cpu_cap = cpu_actual_cap;
            eenv.pd_cap = 0;
            for cpu in pd.cpus.iter() {
                eenv.pd_cap += cpu_actual_cap;
                if !sd_span.test(cpu) || !self.tasks[p].allowed_on(cpu) {
                    continue;
                }
                self.count_cpu_visit();
                let util = self.cpu_util(cpu, Some(p), Some(cpu), false);
                let mut cpu_cap = self.capacity_of(cpu);
                // With clamps in use, the runqueue's are max-aggregated with the task's
                // (not clamped: util_fits_cpu works on the raw utilization).
                if self.uclamp_is_used() && !self.uclamp_rq_is_idle(cpu) {
                    util_min = self.uclamp_rq_get(cpu, ClampId::Min).max(p_util_min);
                    util_max = self.uclamp_rq_get(cpu, ClampId::Max).max(p_util_max);
                }
                let fits = self.util_fits_cpu(util, util_min, util_max, cpu);
                if fits == 0 {
                    continue;
                }
                cpu_cap -= cpu_cap.min(util);
                if cpu == prev_cpu {
                    prev_spare_cap = cpu_cap as i64;
                    prev_fits = fits;
                } else if fits > max_fits || (fits == max_fits && cpu_cap as i64 > max_spare_cap) {
                    max_spare_cap = cpu_cap as i64;
                    max_spare_cap_cpu = Some(cpu);
                    max_fits = fits;
                }
            }
            if max_spare_cap_cpu.is_none() && prev_spare_cap < 0 {
                continue;
            }
            self.eenv_pd_busy_time(&mut eenv, pd, p);
            let base_energy = self.compute_energy(&eenv, pd, p, None);
            if prev_spare_cap > -1 {
                prev_delta = self.compute_energy(&eenv, pd, p, Some(prev_cpu));
                // The CPU's utilization changed under the estimate.
                if prev_delta < base_energy {
                    return target;
                }
                prev_delta -= base_energy;
                prev_actual_cap = cpu_actual_cap;
                best_delta = best_delta.min(prev_delta);
            }
            if let Some(cand) = max_spare_cap_cpu {
                if max_spare_cap > prev_spare_cap {
                    // The best so far fits better.
                    if max_fits < best_fits {
                        continue;
                    }
                    // Neither fits the performance hint, and the best has more capacity.
                    if max_fits < 0 && cpu_actual_cap <= best_actual_cap {
                        continue;
                    }
                    let mut cur_delta = self.compute_energy(&eenv, pd, p, Some(cand));
                    if cur_delta < base_energy {
                        return target;
                    }
                    cur_delta -= base_energy;
                    // Both fit, and the best so far costs less.
                    if max_fits > 0 && best_fits > 0 && cur_delta >= best_delta {
                        continue;
                    }
                    best_delta = cur_delta;
                    best_energy_cpu = cand;
                    best_fits = max_fits;
                    best_actual_cap = cpu_actual_cap;
                }
            }
        }
        if best_fits > prev_fits
            || (best_fits > 0 && best_delta < prev_delta)
            || (best_fits < 0 && best_actual_cap > prev_actual_cap)
        {
            return best_energy_cpu;
        }
        target
    }
}
