//! Linux 6.5.0's `find_energy_efficient_cpu` and the energy estimate it compares
//! placements with, read in `github:sndrzt/linux-6.5` @ f5744aac:
//! `include/linux/energy_model.h` (`em_pd_get_efficient_state` 188, `em_cpu_energy` 223,
//! `em_estimate_energy` 115) and `kernel/sched/fair.c` (`uclamp_task_util` 4352,
//! `eenv_task_busy_time` 7386, `eenv_pd_busy_time` 7421, `eenv_pd_max_util` 7445,
//! `compute_energy` 7476, `find_energy_efficient_cpu` 7527).
//!
//! What differs from 6.12.117 ([`super::feec`]):
//!
//! - `em_cpu_energy`: 6.5 adds the 25% headroom to `max_util` here, caps it at the
//!   allowed capacity, turns it into a frequency (`ps_max->frequency * util /
//!   scale_cpu`), takes the first (efficient) state that reaches that frequency, and
//!   estimates `cost * sum_util / scale_cpu` with 6.5's cost (`fmax * power / freq`,
//!   [`super::v6_5_topology`]). 6.12 compares `max_util` (headroom already in) with each
//!   state's performance and returns `cost * sum_util`.
//! - `eenv_pd_busy_time` sums `effective_cpu_util(ENERGY_UTIL)`, and `eenv_pd_max_util`
//!   takes the largest `effective_cpu_util(FREQUENCY_UTIL, p on its destination)`: the
//!   clamps (the task's counted on its destination, the runqueue's ignored on an idle
//!   one) clamp the utilization before the headroom
//!   ([`crate::cpufreq::v6_5_schedutil`]). 6.12 adds the task's clamps to the
//!   runqueue's and applies them after the headroom (`sugov_effective_cpu_perf`).
//! - `find_energy_efficient_cpu` itself returns -1 when the root domain is
//!   overutilized (6.12 tests that in `select_task_rq_fair`), returns `prev_cpu` when
//!   `uclamp_task_util(p)` (the estimated utilization clamped by the task's clamps) is
//!   0 (6.12: when the estimate and `uclamp_min` are both 0, so a task capped at
//!   `uclamp_max` 0 is placed by energy in 6.12 and not in 6.5), starts the spare
//!   capacities at 0 rather than -1 (a `prev_cpu`, or a candidate, with no spare
//!   capacity left is no candidate in 6.5), and reads the capacity after thermal
//!   pressure (6.12: after hardware and cpufreq pressure; none is modelled).
//! - The IRQ scaling of `eenv_task_busy_time` is 6.12's code (the same function).

use super::feec::EnergyEnv;
use super::PerfDomain;
use crate::cpu_util::{UCLAMP_MAX_DEFAULT, UCLAMP_MIN_DEFAULT};
use crate::cpufreq::sugov_state::{map_util_freq, map_util_perf};
use crate::cpufreq::{CpuUtilType, EmPerfState};
use crate::sched::Sched;
use crate::task::TaskId;
use crate::uclamp::ClampId;

/// `em_pd_get_efficient_state(pd, freq)` of Linux 6.5: the first state whose frequency
/// reaches `freq`, skipping inefficient ones when the domain skips them; the fastest
/// state if none does.
pub fn em_pd_get_efficient_state_v6_5(table: &[EmPerfState], freq: u64, skip: bool) -> usize {
    for (i, ps) in table.iter().enumerate() {
        if u64::from(ps.frequency) >= freq {
            if skip && ps.inefficient {
                continue;
            }
            return i;
        }
    }
    table.len() - 1
}

/// `em_cpu_energy(pd, max_util, sum_util, allowed_cpu_cap)` of Linux 6.5 on a 64-bit
/// kernel, for a domain whose first CPU has capacity `scale_cpu`: the state that
/// schedutil would pick for `max_util` (headroom added, capped at `allowed_cpu_cap`),
/// then `cost * sum_util / scale_cpu`.
pub fn em_cpu_energy_v6_5(
    table: &[EmPerfState],
    skip: bool,
    max_util: u64,
    sum_util: u64,
    allowed_cpu_cap: u64,
    scale_cpu: u64,
) -> u64 {
    if sum_util == 0 {
        return 0;
    }
    let fmax = u64::from(table[table.len() - 1].frequency);
    let max_util = map_util_perf(max_util).min(allowed_cpu_cap);
    let freq = map_util_freq(max_util, fmax, scale_cpu);
    let i = em_pd_get_efficient_state_v6_5(table, freq, skip);
    // em_estimate_energy(cost, sum_util, scale_cpu) with CONFIG_64BIT.
    table[i].cost * sum_util / scale_cpu
}

impl Sched {
    /// `uclamp_task_util(p, uclamp_min, uclamp_max)` of Linux 6.5: `task_util_est(p)`
    /// clamped (the kernel's `clamp`: raised to the minimum, then cut to the maximum).
    fn uclamp_task_util_v6_5(&self, p: TaskId, uclamp_min: u64, uclamp_max: u64) -> u64 {
        self.task_util_est(p).max(uclamp_min).min(uclamp_max)
    }

    /// `eenv_pd_busy_time(eenv, pd_cpus, p)` of Linux 6.5: the domain's
    /// `effective_cpu_util(ENERGY_UTIL)` without `p`, no more than `pd_cap`.
    fn eenv_pd_busy_time_v6_5(&self, eenv: &mut EnergyEnv, pd: &PerfDomain, p: TaskId) {
        let mut busy_time = 0;
        for cpu in pd.cpus.iter() {
            let util = self.cpu_util(cpu, Some(p), None, false);
            busy_time += self.effective_cpu_util_v6_5(cpu, util, CpuUtilType::Energy, None);
        }
        eenv.pd_busy_time = eenv.pd_cap.min(busy_time);
    }

    /// `eenv_pd_max_util(eenv, pd_cpus, p, dst_cpu)` of Linux 6.5: the highest
    /// `effective_cpu_util(FREQUENCY_UTIL)` of the domain's CPUs with `p` on `dst_cpu`
    /// (`None`: nowhere here), whose clamps count on `dst_cpu` only; no more than
    /// `cpu_cap`.
    fn eenv_pd_max_util_v6_5(
        &self,
        eenv: &EnergyEnv,
        pd: &PerfDomain,
        p: TaskId,
        dst_cpu: Option<usize>,
    ) -> u64 {
        let mut max_util = 0;
        for cpu in pd.cpus.iter() {
            let tsk = (dst_cpu == Some(cpu)).then_some(p);
            let util = self.cpu_util(cpu, Some(p), dst_cpu, true);
            let eff_util = self.effective_cpu_util_v6_5(cpu, util, CpuUtilType::Frequency, tsk);
            max_util = max_util.max(eff_util);
        }
        max_util.min(eenv.cpu_cap)
    }

    /// `compute_energy(eenv, pd, pd_cpus, p, dst_cpu)` of Linux 6.5: the domain's
    /// estimated energy with `p` on `dst_cpu`, or without `p` when `dst_cpu` is `None`.
    pub fn compute_energy_v6_5(
        &self,
        eenv: &EnergyEnv,
        pd: &PerfDomain,
        p: TaskId,
        dst_cpu: Option<usize>,
    ) -> u64 {
        let max_util = self.eenv_pd_max_util_v6_5(eenv, pd, p, dst_cpu);
        let mut busy_time = eenv.pd_busy_time;
        if dst_cpu.is_some() {
            busy_time = eenv.pd_cap.min(busy_time + eenv.task_busy_time);
        }
        let (em, skip) = self.em_of(pd);
        // em_cpu_energy reads the capacity of the domain's first CPU.
        let first = pd.cpus.iter().next().expect("a perf domain has CPUs");
        let scale_cpu = self.arch_scale_cpu_capacity(first);
        em_cpu_energy_v6_5(em, skip, max_util, busy_time, eenv.cpu_cap, scale_cpu)
    }

    /// `find_energy_efficient_cpu(p, prev_cpu)` of Linux 6.5 for a wakeup on
    /// `this_cpu`: `None` is the kernel's -1 (no perf domain, an overutilized root
    /// domain, or no asymmetric domain spanning `prev_cpu`), after which
    /// `select_task_rq_fair` goes on with the usual placement.
    pub fn find_energy_efficient_cpu_v6_5(
        &mut self,
        p: TaskId,
        prev_cpu: usize,
        this_cpu: usize,
    ) -> Option<usize> {
        let rd = self.topo.root_domain_of(this_cpu);
        if self.eas.rd_pd.get(rd).is_none_or(|pds| pds.is_empty())
            || self.lb.rd_overutilized.get(rd).copied().unwrap_or(true)
        {
            return None;
        }
        // Energy-aware wake-up happens on the lowest sd_asym_cpucapacity domain of
        // this_cpu that spans prev_cpu.
        let mut sd = self.topo.cpus[this_cpu].sd_asym_cpucapacity;
        while let Some(d) = sd {
            if self.topo.domain(d).span.test(prev_cpu) {
                break;
            }
            sd = self.topo.domain(d).parent;
        }
        let sd = sd?;
        self.sync_entity_load_avg(p);
        Some(self.feec_search_v6_5(p, prev_cpu, rd, sd))
    }

    /// The search of [`Sched::find_energy_efficient_cpu_v6_5`] once `p`'s signals are
    /// synced: root domain `rd`'s perf domains within `sd`.
    fn feec_search_v6_5(
        &self,
        p: TaskId,
        prev_cpu: usize,
        rd: usize,
        sd: fairsim_topology::SdId,
    ) -> usize {
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
        // A task with no clamped utilization costs nothing anywhere: it stays.
        if self.uclamp_task_util_v6_5(p, p_util_min, p_util_max) == 0 {
            return target;
        }
        let mut eenv = EnergyEnv::default();
        self.eenv_task_busy_time(&mut eenv, p, prev_cpu);

        let mut prev_delta = u64::MAX;
        let mut best_delta = u64::MAX;
        let mut prev_fits = -1i32;
        let mut best_fits = -1i32;
        let mut best_thermal_cap = 0u64;
        let mut prev_thermal_cap = 0u64;
        let mut best_energy_cpu = prev_cpu;
        let sd_span = &self.topo.domain(sd).span;
        for pd in pds {
            let (mut util_min, mut util_max) = (p_util_min, p_util_max);
            let mut max_spare_cap = 0u64;
            let mut prev_spare_cap = 0u64;
            let mut max_spare_cap_cpu: Option<usize> = None;
            let mut max_fits = -1i32;
            // Every CPU is online.
            let Some(first) = pd.cpus.iter().next() else {
                continue;
            };
            // The capacity after thermal pressure, which fairsim does not model.
            let cpu_thermal_cap = self.arch_scale_cpu_capacity(first);
            eenv.cpu_cap = cpu_thermal_cap;
            eenv.pd_cap = 0;
            for cpu in pd.cpus.iter() {
                eenv.pd_cap += cpu_thermal_cap;
                if !sd_span.test(cpu) || !self.tasks[p].allowed_on(cpu) {
                    continue;
                }
                self.count_cpu_visit();
                let util = self.cpu_util(cpu, Some(p), Some(cpu), false);
                let mut cpu_cap = self.capacity_of(cpu);
                // The runqueue's clamps max-aggregated with the task's, not applied:
                // util_fits_cpu works on the raw utilization.
                if self.uclamp_is_used() && !self.uclamp_rq_is_idle(cpu) {
                    util_min = self.uclamp_rq_get(cpu, ClampId::Min).max(p_util_min);
                    util_max = self.uclamp_rq_get(cpu, ClampId::Max).max(p_util_max);
                }
                let fits = self.util_fits_cpu(util, util_min, util_max, cpu);
                if fits == 0 {
                    continue;
                }
                // lsub_positive(&cpu_cap, util).
                cpu_cap -= cpu_cap.min(util);
                if cpu == prev_cpu {
                    prev_spare_cap = cpu_cap;
                    prev_fits = fits;
                } else if fits > max_fits || (fits == max_fits && cpu_cap > max_spare_cap) {
                    max_spare_cap = cpu_cap;
                    max_spare_cap_cpu = Some(cpu);
                    max_fits = fits;
                }
            }
            if max_spare_cap_cpu.is_none() && prev_spare_cap == 0 {
                continue;
            }
            self.eenv_pd_busy_time_v6_5(&mut eenv, pd, p);
            let base_energy = self.compute_energy_v6_5(&eenv, pd, p, None);
            if prev_spare_cap > 0 {
                prev_delta = self.compute_energy_v6_5(&eenv, pd, p, Some(prev_cpu));
                // The CPU's utilization changed under the estimate.
                if prev_delta < base_energy {
                    return target;
                }
                prev_delta -= base_energy;
                prev_thermal_cap = cpu_thermal_cap;
                best_delta = best_delta.min(prev_delta);
            }
            if let Some(cand) = max_spare_cap_cpu {
                if max_spare_cap > prev_spare_cap {
                    // The best so far fits better.
                    if max_fits < best_fits {
                        continue;
                    }
                    // Neither fits the performance hint, and the best has more capacity.
                    if max_fits < 0 && cpu_thermal_cap <= best_thermal_cap {
                        continue;
                    }
                    let mut cur_delta = self.compute_energy_v6_5(&eenv, pd, p, Some(cand));
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
                    best_thermal_cap = cpu_thermal_cap;
                }
            }
        }
        if best_fits > prev_fits
            || (best_fits > 0 && best_delta < prev_delta)
            || (best_fits < 0 && best_thermal_cap > prev_thermal_cap)
        {
            return best_energy_cpu;
        }
        target
    }
}
