//! Energy-aware scheduling (EAS) of Linux 6.12.117, and Linux 6.5.0's where it differs:
//! performance domains, the energy model's estimate, the root domain's overutilized state
//! and the energy-efficient wakeup placement.
//!
//! Sources (Debian's `linux-source-6.12` 6.12.117): `kernel/sched/topology.c`
//! (`sched_is_eas_possible`, `pd_init`, `find_pd`, `build_perf_domains`,
//! `sched_energy_set`), `include/linux/energy_model.h` (`em_pd_get_efficient_state`,
//! `em_cpu_energy`), `kernel/power/energy_model.c` (`em_cpufreq_update_efficiencies`,
//! which sets `EM_PERF_DOMAIN_SKIP_INEFFICIENCIES`) and `kernel/sched/fair.c`
//! (`cpu_overutilized`, `is_rd_overutilized`, `set_rd_overutilized`,
//! `check_update_overutilized_status`; [`feec`] has the wakeup side).
//!
//! EAS needs an asymmetric machine without SMT, frequency invariance (cpufreq), schedutil
//! on every CPU and an energy model for every policy. `--kernel 6.12` and `--kernel 6.5`
//! build the perf domains, each with its own checks; 3.9 to 4.16 had no EAS (it came in
//! 5.0), so on those kernels the perf domains are never built.
//!
//! Linux 6.5 ([`v6_5_topology`], [`v6_5_feec`], [`crate::cpufreq::v6_5_schedutil`])
//! differs in the perf domains' checks (the first CPU's asymmetry, the complexity limit),
//! the energy model's cost (`fmax * power / freq`) and estimate (`em_cpu_energy` picks
//! the state by frequency after a 25% headroom and divides by the CPU's capacity),
//! `effective_cpu_util`'s form (ENERGY_UTIL/FREQUENCY_UTIL, the clamps applied by
//! `uclamp_rq_util_with`), `find_energy_efficient_cpu`'s tests (the overutilized test
//! inside it, `uclamp_task_util`, spare capacities that start at 0) and the sysctl's
//! handler (no refusal). The overutilized state is set and cleared at the same points
//! (enqueue of a task that is not new, the tick, the root domain's load-balance
//! statistics), and `cpu_overutilized`/`util_fits_cpu` read the same values in both.
//!
//! `kernel.sched_energy_aware` (a `--sysctl` write, 6.5 and 6.12) switches EAS off where
//! it is possible. Tasks' clamps ([`crate::uclamp`]) enter the placement and the
//! estimate where the kernel's do.
//!
//! This module holds EAS's data (`Eas`, the perf domains, the energy model's pure
//! functions), which `Sched` embeds, and imports nothing above it; the `impl Sched`
//! methods live in `sched_side` (and the tracepoint log's in `tp_log`), so that the
//! scheduler's state does not import the code that runs on it.

pub mod feec;
pub mod tp;
pub mod v6_5_feec;
pub mod v6_5_topology;

mod sched_side;
mod tp_log;

use fairsim_topology::CpuMask;

use crate::cpufreq::EmPerfState;

/// `sched_energy_aware_handler`'s `EOPNOTSUPP`: a write of `kernel.sched_energy_aware`
/// on a machine where EAS is not possible, and why it is not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--sysctl: kernel.sched_energy_aware: the kernel refuses the write (EOPNOTSUPP) because EAS is not possible on this machine: {why}; allowed: a machine with asymmetric CPU capacities, no SMT, an energy model and --governor schedutil")]
pub struct EnergyAwareRefused {
    /// Why `sched_is_eas_possible` says no.
    pub why: EasError,
}

/// Why a root domain gets no perf domains: `sched_is_eas_possible`'s, `pd_init`'s and
/// `build_perf_domains`' debug messages, as 6.12 (and, for the variants named so, 6.5)
/// prints them. Typed so that a caller can tell the reasons apart; the run's header
/// shows the message ([`Eas::not_possible`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EasError {
    /// A root domain without CPUs (6.5's walk starts at its first CPU).
    #[error("empty root domain")]
    EmptyRootDomain,
    /// No CPU of the mask sees asymmetric capacities.
    #[error("CPUs do not have asymmetric capacities")]
    NoAsymmetry,
    /// The machine has SMT siblings.
    #[error("SMT is not supported")]
    Smt,
    /// 6.5's wording of [`EasError::Smt`].
    #[error("Disabling EAS, SMT is not supported")]
    SmtV6_5,
    /// No cpufreq, so no frequency invariance.
    #[error("frequency-invariant load tracking not yet supported (no cpufreq)")]
    NoCpufreq,
    /// 6.5's wording of [`EasError::NoCpufreq`].
    #[error("Disabling EAS: frequency-invariant load tracking not yet supported (no cpufreq)")]
    NoCpufreqV6_5,
    /// A governor other than schedutil.
    #[error("schedutil is mandatory (the governor is {governor})")]
    NotSchedutil {
        /// The governor's name.
        governor: &'static str,
    },
    /// 6.5's wording of [`EasError::NotSchedutil`].
    #[error("Disabling EAS, schedutil is mandatory (the governor is {governor})")]
    NotSchedutilV6_5 {
        /// The governor's name.
        governor: &'static str,
    },
    /// A CPU whose cpufreq policy has no energy model.
    #[error("no EM found for CPU{cpu}")]
    NoEm {
        /// The CPU.
        cpu: usize,
    },
    /// 6.5's wording of [`EasError::NoEm`].
    #[error("pd_init: no EM found for CPU{cpu}")]
    NoEmV6_5 {
        /// The CPU.
        cpu: usize,
    },
    /// 6.5's `EM_MAX_COMPLEXITY` check failed.
    #[error("Failed to start EAS, EM complexity is too high")]
    TooComplex,
}

/// `struct perf_domain`: the CPUs of one cpufreq policy and its energy model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfDomain {
    /// `perf_domain_span(pd)`: the policy's CPUs.
    pub cpus: CpuMask,
    /// The cpufreq policy (index in [`crate::cpufreq::Cpufreq::policies`]).
    pub policy: usize,
}

/// What EAS did in a run, for the summary and `--json`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EasStats {
    /// Wakeups `select_task_rq_fair` sent to `find_energy_efficient_cpu` (the root domain
    /// was not overutilized).
    pub feec_calls: u64,
    /// Of those, wakeups it placed (it returned a CPU, prev_cpu included).
    pub feec_placed: u64,
    /// Of the placed, wakeups it moved away from `prev_cpu`.
    pub feec_moved: u64,
    /// Wakeups that skipped EAS because the root domain was overutilized.
    pub overutilized_wakeups: u64,
    /// Times `set_rd_overutilized` turned a root domain's flag on.
    pub overutilized_sets: u64,
    /// Time (ns) root domains spent overutilized, summed over root domains, for
    /// stretches that ended.
    pub overutilized_ns: u64,
}

/// The scheduler's EAS state: `sched_energy_present` and each root domain's `pd` list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Eas {
    /// `sched_energy_present`: some root domain has performance domains.
    pub present: bool,
    /// `rd->pd` of each root domain (indexed like `SchedDomains::root_domains`), in list
    /// order: `build_perf_domains` prepends each new domain, so the policy of the highest
    /// first CPU comes first.
    pub rd_pd: Vec<Vec<PerfDomain>>,
    /// Why `sched_is_eas_possible` or `pd_init` said no, for the run's header (the
    /// kernel's `sched_debug` message); `None` when EAS is on.
    pub not_possible: Option<String>,
    /// The counters.
    pub stats: EasStats,
    /// When each root domain's `overutilized` flag was last turned on (`None` while off).
    overutilized_since: Vec<Option<u64>>,
    /// The tracepoints logged for a tracer, `None` when no tracer listens ([`tp`]).
    tp: Option<Vec<tp::EasTracepoint>>,
}

impl Eas {
    /// The time (ns) spent overutilized up to `now`, counting stretches still open.
    pub fn overutilized_ns_at(&self, now: u64) -> u64 {
        self.stats.overutilized_ns
            + self
                .overutilized_since
                .iter()
                .flatten()
                .map(|&t| now.saturating_sub(t))
                .sum::<u64>()
    }
}

/// `em_pd_get_efficient_state(table, nr_perf_states, max_util, pd_flags)`: the first
/// state whose performance reaches `max_util`, skipping inefficient ones when the domain
/// skips them (`EM_PERF_DOMAIN_SKIP_INEFFICIENCIES`); the highest state if none does.
pub fn em_pd_get_efficient_state(table: &[EmPerfState], max_util: u64, skip: bool) -> usize {
    for (i, ps) in table.iter().enumerate() {
        if ps.performance >= max_util {
            if skip && ps.inefficient {
                continue;
            }
            return i;
        }
    }
    table.len() - 1
}

/// `em_cpu_energy(pd, max_util, sum_util, allowed_cpu_cap)`: the energy estimate of a
/// performance domain whose busiest CPU needs `max_util` (capped at `allowed_cpu_cap`)
/// and whose CPUs' utilizations sum to `sum_util`: the chosen state's `cost * sum_util`.
pub fn em_cpu_energy(
    table: &[EmPerfState],
    skip: bool,
    max_util: u64,
    sum_util: u64,
    allowed_cpu_cap: u64,
) -> u64 {
    if sum_util == 0 {
        return 0;
    }
    let max_util = max_util.min(allowed_cpu_cap);
    let i = em_pd_get_efficient_state(table, max_util, skip);
    table[i].cost * sum_util
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(frequency: u32, performance: u64, cost: u64, inefficient: bool) -> EmPerfState {
        EmPerfState {
            frequency,
            power: 0,
            performance,
            cost,
            inefficient,
        }
    }

    #[test]
    fn the_efficient_state_is_the_first_fast_enough_one_not_marked() {
        let t = [
            state(408_000, 109, 2547, true),
            state(600_000, 161, 2536, false),
            state(816_000, 219, 2692, false),
        ];
        // 100 fits the first state, which the domain skips only when told to.
        assert_eq!(em_pd_get_efficient_state(&t, 100, false), 0);
        assert_eq!(em_pd_get_efficient_state(&t, 100, true), 1);
        assert_eq!(em_pd_get_efficient_state(&t, 162, true), 2);
        // Beyond the fastest state: the fastest.
        assert_eq!(em_pd_get_efficient_state(&t, 5000, true), 2);
    }

    #[test]
    fn energy_is_the_states_cost_times_the_summed_utilization() {
        let t = [
            state(408_000, 109, 2547, true),
            state(600_000, 161, 2536, false),
            state(816_000, 219, 2692, false),
        ];
        // max_util 150 -> 600 MHz: 2536 * 300.
        assert_eq!(em_cpu_energy(&t, true, 150, 300, 381), 2536 * 300);
        // The allowed capacity caps the state chosen: 170 capped at 150 -> 600 MHz.
        assert_eq!(em_cpu_energy(&t, true, 170, 300, 150), 2536 * 300);
        assert_eq!(em_cpu_energy(&t, true, 170, 300, 381), 2692 * 300);
        // Nothing to run costs nothing, whatever the state.
        assert_eq!(em_cpu_energy(&t, true, 170, 0, 381), 0);
    }
}
