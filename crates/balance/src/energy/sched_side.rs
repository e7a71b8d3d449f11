//! The scheduler's side of EAS: `sched_energy_enabled`, `build_perf_domains` and the
//! sysctl's handler, the overutilized state (`cpu_overutilized`, `set_rd_overutilized`,
//! `check_update_overutilized_status`) and the energy estimate, as `Sched` methods over
//! [`super`]'s data.

use fairsim_topology::CpuMask;

use super::{EasError, EnergyAwareRefused, PerfDomain};
use crate::cpufreq::{EmPerfState, Governor};
use crate::sched::Sched;

impl Sched {
    /// `sched_energy_enabled()`: the `sched_energy_present` static key.
    #[inline]
    pub fn sched_energy_enabled(&self) -> bool {
        self.eas.present
    }

    /// `sched_is_eas_possible(cpu_mask)` (topology.c): asymmetric capacities somewhere
    /// in the mask, no SMT, frequency-invariant load tracking (fairsim's cpufreq scales
    /// PELT by frequency as `arch_set_freq_scale` does) and schedutil on every CPU.
    /// `Err` carries the kernel's debug message.
    pub fn sched_is_eas_possible(&self, cpu_mask: &CpuMask) -> Result<(), EasError> {
        let any_asym = cpu_mask
            .iter()
            .any(|i| self.topo.cpus[i].sd_asym_cpucapacity.is_some());
        if !any_asym {
            return Err(EasError::NoAsymmetry);
        }
        if self.machine.smt_present() {
            return Err(EasError::Smt);
        }
        let Some(cf) = self.cpufreq.as_ref() else {
            return Err(EasError::NoCpufreq);
        };
        if !matches!(cf.governor, Governor::Schedutil { .. }) {
            return Err(EasError::NotSchedutil {
                governor: cf.governor.name(),
            });
        }
        Ok(())
    }

    /// `build_perf_domains(cpu_map)` for every root domain, then `sched_energy_set`:
    /// a root domain gets one perf domain per cpufreq policy of its CPUs, in the kernel's
    /// list order, when EAS is possible there and every policy has an energy model
    /// (`pd_init` fails, and the whole list with it, for a CPU without one). Dispatched
    /// to the run's kernel: 6.12's checks here, 6.5's in [`super::v6_5_topology`], none before
    /// 5.0 (module doc).
    pub fn build_perf_domains(&mut self) {
        let nr_rds = self.topo.root_domains.len();
        self.eas.rd_pd = vec![Vec::new(); nr_rds];
        self.eas.overutilized_since = vec![None; nr_rds];
        self.eas.not_possible = None;
        let kernel = self.fair.features.kernel();
        if !kernel.has_eas() {
            self.eas.not_possible = Some(format!(
                "Linux {} had no energy-aware scheduling (it came in 5.0)",
                kernel.release()
            ));
            self.eas.present = false;
            return;
        }
        if self.sysctl_energy_aware() == 0 {
            self.eas.not_possible = Some("kernel.sched_energy_aware=0".into());
            self.eas.present = false;
            return;
        }
        for rd in 0..nr_rds {
            let map = self.topo.root_domains[rd].clone();
            // The era's checks for one root domain; the walk and sched_energy_set are
            // the same in both.
            let pds = match kernel {
                crate::kernel::Kernel::V6_5 => self.perf_domains_of_v6_5(&map),
                _ => self.perf_domains_of(&map),
            };
            match pds {
                Ok(pds) => self.eas.rd_pd[rd] = pds,
                Err(why) => {
                    if self.eas.not_possible.is_none() {
                        self.eas.not_possible = Some(why.to_string());
                    }
                }
            }
        }
        self.eas.present = self.eas.rd_pd.iter().any(|pds| !pds.is_empty());
        if self.eas.present {
            self.eas.not_possible = None;
        }
    }

    /// The perf domain list of one root domain, or why it has none.
    fn perf_domains_of(&self, map: &CpuMask) -> Result<Vec<PerfDomain>, EasError> {
        self.sched_is_eas_possible(map)?;
        let cf = self
            .cpufreq
            .as_ref()
            .expect("checked by sched_is_eas_possible");
        let mut list: Vec<PerfDomain> = Vec::new();
        for i in map.iter() {
            if list.iter().any(|pd| pd.cpus.test(i)) {
                continue;
            }
            let policy = cf.policy_of[i];
            if cf.policies[policy].em.is_none() {
                return Err(EasError::NoEm { cpu: i });
            }
            // pd_init(i) prepended to the list.
            list.insert(
                0,
                PerfDomain {
                    cpus: cf.policies[policy].cpus.clone(),
                    policy,
                },
            );
        }
        Ok(list)
    }

    /// `sysctl_sched_energy_aware` after the run's writes (1 without any).
    pub(crate) fn sysctl_energy_aware(&self) -> u32 {
        let p = &self.params;
        p.tunables
            .state(
                p.features.kernel(),
                self.nr_cpus(),
                p.migration_cost,
                p.nr_migrate,
            )
            .energy_aware
    }

    /// `sched_energy_aware_handler`'s refusal: a write of `kernel.sched_energy_aware` on
    /// a machine where `sched_is_eas_possible(cpu_active_mask)` says no fails with
    /// `EOPNOTSUPP`. Checked once cpufreq is installed (or known to be absent). Linux
    /// 6.5's handler refuses nothing ([`super::v6_5_topology`]), and the older eras have no such
    /// sysctl to write.
    pub fn check_energy_aware_write(&self) -> Result<(), EnergyAwareRefused> {
        match self.fair.features.kernel() {
            crate::kernel::Kernel::V6_12 => self.sched_energy_aware_handler_v6_12(),
            _ => Ok(()),
        }
    }

    /// The refusal of 6.12's `sched_energy_aware_handler` (see
    /// [`Sched::check_energy_aware_write`]).
    fn sched_energy_aware_handler_v6_12(&self) -> Result<(), EnergyAwareRefused> {
        let written = self
            .params
            .tunables
            .writes()
            .any(|w| w.tunable == crate::tunables::Tunable::EnergyAware);
        if !written {
            return Ok(());
        }
        let all = CpuMask::full(self.nr_cpus());
        self.sched_is_eas_possible(&all)
            .map_err(|why| EnergyAwareRefused { why })
    }

    /// The energy model of `pd` and whether it skips inefficient states (set when
    /// cpufreq marked some frequency inefficient, `em_cpufreq_update_efficiencies`).
    pub(crate) fn em_of(&self, pd: &PerfDomain) -> (&[EmPerfState], bool) {
        let cf = self
            .cpufreq
            .as_ref()
            .expect("perf domains exist only with cpufreq");
        let policy = &cf.policies[pd.policy];
        let em = policy
            .em
            .as_deref()
            .expect("perf domains exist only with an EM");
        (em, policy.table.efficiencies_available)
    }

    /// `cpu_overutilized(cpu)`: with EAS on, the CPU's CFS utilization does not fit its
    /// capacity (`util_fits_cpu` answers 0; -1, a uclamp_min miss, is not overutilized).
    pub fn cpu_overutilized(&self, cpu: usize) -> bool {
        if !self.sched_energy_enabled() {
            return false;
        }
        use crate::uclamp::ClampId;
        let util = self.cpu_util(cpu, None, None, false);
        let rq_util_min = self.uclamp_rq_get(cpu, ClampId::Min);
        let rq_util_max = self.uclamp_rq_get(cpu, ClampId::Max);
        self.util_fits_cpu(util, rq_util_min, rq_util_max, cpu) == 0
    }

    /// `is_rd_overutilized(cpu_rq(cpu)->rd)`: true whenever EAS is off.
    pub fn is_rd_overutilized(&self, cpu: usize) -> bool {
        !self.sched_energy_enabled()
            || self
                .lb
                .rd_overutilized
                .get(self.topo.root_domain_of(cpu))
                .copied()
                .unwrap_or(true)
    }

    /// `set_rd_overutilized(cpu_rq(cpu)->rd, flag)`: nothing without EAS.
    pub fn set_rd_overutilized(&mut self, cpu: usize, flag: bool) {
        if !self.sched_energy_enabled() {
            return;
        }
        let rd = self.topo.root_domain_of(cpu);
        let Some(cur) = self.lb.rd_overutilized.get_mut(rd) else {
            return;
        };
        let was = *cur;
        *cur = flag;
        self.trace_overutilized(cpu, rd, flag);
        let now = self.now;
        match (was, flag) {
            (false, true) => {
                self.eas.stats.overutilized_sets += 1;
                self.eas.overutilized_since[rd] = Some(now);
            }
            (true, false) => {
                if let Some(t) = self.eas.overutilized_since[rd].take() {
                    self.eas.stats.overutilized_ns += now.saturating_sub(t);
                }
            }
            _ => {}
        }
    }

    /// `check_update_overutilized_status(rq)`: an overutilized CPU makes its root domain
    /// overutilized (enqueue and tick; the balancer also clears it).
    pub fn check_update_overutilized_status(&mut self, cpu: usize) {
        if !self.is_rd_overutilized(cpu) && self.cpu_overutilized(cpu) {
            self.set_rd_overutilized(cpu, true);
        }
    }

    /// `!is_rd_overutilized(rd) && rd->pd` for `cpu`'s root domain: EAS keeps the
    /// placement, so `sched_balance_find_src_group` leaves the domain balanced.
    pub fn rd_eas_balanced(&self, cpu: usize) -> bool {
        !self.is_rd_overutilized(cpu)
            && self
                .eas
                .rd_pd
                .get(self.topo.root_domain_of(cpu))
                .is_some_and(|pds| !pds.is_empty())
    }
}
