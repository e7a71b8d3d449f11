//! Linux 6.5.0's perf-domain construction and energy-model costs, read in
//! `github:sndrzt/linux-6.5` @ f5744aac: `kernel/sched/topology.c`
//! (`sysctl_sched_energy_aware` 211, `sched_energy_aware_handler` 225,
//! `EM_MAX_COMPLEXITY` 371, `build_perf_domains` 374) and `kernel/power/energy_model.c`
//! (`em_create_perf_table` 106).
//!
//! What differs from 6.12.117 ([`super`]):
//!
//! - `build_perf_domains` checks, in this order: the sysctl, `sd_asym_cpucapacity` of
//!   the root domain's *first* CPU (6.12's `sched_is_eas_possible` asks whether any CPU
//!   of the mask has one), SMT, frequency invariance, then schedutil per policy as it
//!   walks the CPUs (6.12 checks every possible CPU's governor first), and at the end
//!   the complexity limit `nr_pd * (nr_ps + nr_cpus) <= 2048` (gone in 6.12).
//! - `sched_energy_aware_handler` refuses nothing: a write of 0 or 1 on a machine without
//!   EAS succeeds and changes nothing (6.12 answers `EOPNOTSUPP`).
//! - `em_create_perf_table`: a state's cost is `fmax * power / freq` (6.12: `power * 10 /
//!   performance`, with `performance = cpu_capacity * freq / fmax`), and a state is
//!   inefficient when its cost is not below that of every faster state, with that cost.

use fairsim_topology::CpuMask;

use super::{EasError, PerfDomain};
use crate::cpufreq::{Cpufreq, EmPerfState, Governor};
use crate::sched::Sched;

/// `EM_MAX_COMPLEXITY` (Linux 6.5 topology.c): the largest `nr_pd * (nr_ps + nr_cpus)`
/// EAS accepts.
pub const EM_MAX_COMPLEXITY: usize = 2048;

/// The cost loop of `em_create_perf_table` of Linux 6.5 over a table whose frequencies
/// and powers are set: each state's `cost = fmax * power / freq` from the fastest state
/// down, and `EM_PERF_STATE_INEFFICIENT` on a state that costs no less than a faster
/// efficient one. `performance` is left as it was (6.5's table has none; the energy
/// estimate reads the frequency).
pub fn em_costs_v6_5(table: &mut [EmPerfState]) {
    let Some(fmax) = table.last().map(|s| u64::from(s.frequency)) else {
        return;
    };
    let mut prev_cost = u64::MAX;
    for st in table.iter_mut().rev() {
        st.cost = fmax * st.power / u64::from(st.frequency);
        st.inefficient = st.cost >= prev_cost;
        if !st.inefficient {
            prev_cost = st.cost;
        }
    }
}

impl Cpufreq {
    /// Every policy's energy model costed as Linux 6.5 costs it ([`em_costs_v6_5`]),
    /// and the cpufreq table's inefficient frequencies marked again from it
    /// (`em_cpufreq_update_efficiencies`).
    pub fn em_v6_5(&mut self) {
        for p in &mut self.policies {
            let Some(em) = p.em.as_mut() else {
                continue;
            };
            em_costs_v6_5(em);
            p.table.inefficient.iter_mut().for_each(|b| *b = false);
            p.table.efficiencies_available = false;
            p.table.set_inefficiencies(em);
        }
    }
}

impl Sched {
    /// One root domain's list as 6.5's `build_perf_domains` makes it, or its message.
    pub(super) fn perf_domains_of_v6_5(&self, map: &CpuMask) -> Result<Vec<PerfDomain>, EasError> {
        let Some(cpu) = map.iter().next() else {
            return Err(EasError::EmptyRootDomain);
        };
        if self.topo.cpus[cpu].sd_asym_cpucapacity.is_none() {
            return Err(EasError::NoAsymmetry);
        }
        if self.machine.smt_present() {
            return Err(EasError::SmtV6_5);
        }
        // fairsim's cpufreq scales PELT by frequency as arch_set_freq_scale does; without
        // cpufreq there is no invariance.
        let Some(cf) = self.cpufreq.as_ref() else {
            return Err(EasError::NoCpufreqV6_5);
        };
        let mut list: Vec<PerfDomain> = Vec::new();
        let mut nr_ps = 0usize;
        for i in map.iter() {
            if list.iter().any(|pd| pd.cpus.test(i)) {
                continue;
            }
            if !matches!(cf.governor, Governor::Schedutil { .. }) {
                return Err(EasError::NotSchedutilV6_5 {
                    governor: cf.governor.name(),
                });
            }
            let policy = cf.policy_of[i];
            let Some(em) = cf.policies[policy].em.as_ref() else {
                return Err(EasError::NoEmV6_5 { cpu: i });
            };
            nr_ps += em.len();
            // pd_init(i) prepended to the list.
            list.insert(
                0,
                PerfDomain {
                    cpus: cf.policies[policy].cpus.clone(),
                    policy,
                },
            );
        }
        let nr_cpus = map.weight();
        if list.len() * (nr_ps + nr_cpus) > EM_MAX_COMPLEXITY {
            return Err(EasError::TooComplex);
        }
        Ok(list)
    }
}
