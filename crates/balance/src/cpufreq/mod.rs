//! cpufreq as the scheduler drives it: the policies of a machine with frequency domains,
//! their governor (`schedutil`, `performance`, `powersave`, `userspace`), the
//! `cpufreq_update_util` hooks fair.c calls, and the driver's side of a transition
//! (`__cpufreq_driver_target`, `cpufreq_freq_transition_end` with `arch_set_freq_scale`,
//! the stats).
//!
//! Sources, Linux 6.12: `kernel/sched/cpufreq_schedutil.c` (see [`schedutil`]),
//! `drivers/cpufreq/cpufreq.c` (`__cpufreq_driver_target`, `__resolve_freq`,
//! `cpufreq_driver_resolve_freq`, `cpufreq_policy_transition_delay_us`,
//! `cpufreq_freq_transition_end`), `drivers/cpufreq/cpufreq_{performance,powersave,
//! userspace}.c`, `drivers/cpufreq/cpufreq_stats.c`, `drivers/base/arch_topology.c`
//! (`topology_set_freq_scale`), `kernel/power/energy_model.c`, and fair.c 6.12.117 for
//! where the hooks sit.
//!
//! The driver modelled is cpufreq-dt, arm64's generic one: a table of OPPs, no fast
//! switching (schedutil takes its slow path through a kthread), updates allowed from any
//! CPU (`dvfs_possible_from_any_cpu`), an energy model registered from the device tree
//! whose inefficient OPPs schedutil skips. This crate decides; the engine times: it runs
//! [`Cpufreq::sugov_work`] for each queued request, and calls
//! [`crate::sched::Sched::cpufreq_transition_end`] once the driver's transition latency
//! has passed, when the new frequency takes effect.
//!
//! This module is the driver's side: the governor setting, the policies with their
//! tables and stats, and the per-CPU data. It imports nothing of the scheduler, which
//! holds a [`Cpufreq`]; what reads the runqueues sits in the submodules above it:
//! [`hooks`] (the `cpufreq_update_util` hooks fair.c calls, and installing cpufreq) and
//! [`schedutil`] with [`v6_5_schedutil`] (the governor's updates).

pub mod hooks;
pub mod schedutil;
pub mod stats;
pub mod sugov_state;
#[cfg(test)]
mod sugov_tests;
pub mod table;
pub mod v6_5_schedutil;

use fairsim_topology::{CpuMask, Machine};

pub use stats::{CpufreqStats, NSEC_PER_CLOCK_T};
pub use sugov_state::{
    sugov_effective_cpu_perf, SugovCpu, SugovPolicy, IOWAIT_BOOST_MIN, SCHED_CPUFREQ_IOWAIT,
};
pub use table::{em_create_perf_table, EmPerfState, FreqTable, Relation};
pub use v6_5_schedutil::CpuUtilType;

/// Why `--governor`'s value was refused ([`Governor::parse`]), with the text as given;
/// each message says what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GovernorError {
    /// No governor of that name, or a name with an argument it does not take.
    #[error("'{got}'; allowed: {syntax}", syntax = Governor::SYNTAX)]
    Unknown {
        /// The value as given.
        got: String,
    },
    /// `schedutil:` without a `rate_limit_us=N` in 0..=1000000.
    #[error("'{got}'; allowed: schedutil:rate_limit_us=N with N from 0 to 1000000 (us)")]
    RateLimit {
        /// The value as given.
        got: String,
    },
    /// `userspace:` without a frequency in kHz above 0.
    #[error(
        "'{got}'; allowed: userspace:KHZ with a frequency in kHz above 0, e.g. userspace:1200000"
    )]
    Userspace {
        /// The value as given.
        got: String,
    },
}

/// A cpufreq governor (`scaling_governor`) with its setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Governor {
    /// schedutil; `rate_limit_us` overrides the tunable's default
    /// (`cpufreq_policy_transition_delay_us`).
    Schedutil {
        /// `schedutil/rate_limit_us`, when set.
        rate_limit_us: Option<u64>,
    },
    /// performance: the highest frequency.
    Performance,
    /// powersave: the lowest frequency.
    Powersave,
    /// userspace with `scaling_setspeed` written once, in kHz, to every policy (the
    /// fixed frequency of a benchmark run; the same as scaling_min_freq =
    /// scaling_max_freq = the frequency).
    Userspace {
        /// The frequency written, kHz.
        khz: u32,
    },
}

impl Governor {
    /// What `--governor` takes, for error messages.
    pub const SYNTAX: &'static str = "schedutil, schedutil:rate_limit_us=N, performance, powersave or userspace:KHZ (a frequency in kHz, e.g. userspace:1200000)";

    /// The default of a machine with cpufreq: schedutil, `CPU_FREQ_DEFAULT_GOV_SCHEDUTIL`
    /// being Kconfig's default on arm64 (and on x86 with intel_pstate or amd-pstate).
    pub const DEFAULT: Governor = Governor::Schedutil {
        rate_limit_us: None,
    };

    /// Parses `--governor`'s value; the error says what is allowed.
    pub fn parse(text: &str) -> Result<Governor, GovernorError> {
        let bad = || GovernorError::Unknown {
            got: text.to_string(),
        };
        let (name, arg) = match text.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (text, None),
        };
        match (name, arg) {
            ("schedutil", None) => Ok(Governor::DEFAULT),
            ("schedutil", Some(a)) => {
                let us = a
                    .strip_prefix("rate_limit_us=")
                    .and_then(|v| v.parse::<u64>().ok())
                    .filter(|&v| v <= 1_000_000)
                    .ok_or_else(|| GovernorError::RateLimit {
                        got: text.to_string(),
                    })?;
                Ok(Governor::Schedutil {
                    rate_limit_us: Some(us),
                })
            }
            ("performance", None) => Ok(Governor::Performance),
            ("powersave", None) => Ok(Governor::Powersave),
            ("userspace", Some(a)) => a
                .parse::<u32>()
                .ok()
                .filter(|&k| k > 0)
                .map(|khz| Governor::Userspace { khz })
                .ok_or_else(|| GovernorError::Userspace {
                    got: text.to_string(),
                }),
            _ => Err(bad()),
        }
    }

    /// The governor's name (`scaling_governor`).
    pub fn name(self) -> &'static str {
        match self {
            Governor::Schedutil { .. } => "schedutil",
            Governor::Performance => "performance",
            Governor::Powersave => "powersave",
            Governor::Userspace { .. } => "userspace",
        }
    }

    /// The option's text back (`schedutil:rate_limit_us=500`, `userspace:1200000`).
    pub fn describe(self) -> String {
        match self {
            Governor::Schedutil {
                rate_limit_us: Some(us),
            } => format!("schedutil:rate_limit_us={us}"),
            Governor::Userspace { khz } => format!("userspace:{khz}"),
            g => g.name().to_string(),
        }
    }
}

/// `cpufreq_policy_transition_delay_us(policy)` for a driver that sets no
/// `transition_delay_us` (cpufreq-dt): the transition latency in us plus half of it, or
/// 1 ms when the latency is below a microsecond.
pub fn cpufreq_policy_transition_delay_us(transition_latency_ns: u64) -> u64 {
    let latency = transition_latency_ns / 1000;
    if latency != 0 {
        latency + (latency >> 1)
    } else {
        1000
    }
}

/// `struct cpufreq_policy`, the fields fairsim uses, with its governor's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpufreqPolicy {
    /// `policy->cpu`: the first CPU, which names it (`policyN`).
    pub cpu: usize,
    /// `policy->cpus` (= `related_cpus`: every CPU is online).
    pub cpus: CpuMask,
    /// `freq_table`, with the energy model's inefficiencies.
    pub table: FreqTable,
    /// `cpuinfo.min_freq` (kHz).
    pub cpuinfo_min: u32,
    /// `cpuinfo.max_freq` (kHz): also `arch_scale_freq_ref` of its CPUs.
    pub cpuinfo_max: u32,
    /// `policy->min` (`scaling_min_freq`).
    pub min: u32,
    /// `policy->max` (`scaling_max_freq`).
    pub max: u32,
    /// `policy->cur`: the frequency in effect (kHz).
    pub cur: u32,
    /// `cpuinfo.transition_latency` in ns.
    pub transition_latency_ns: u64,
    /// The stats (`cpufreq/stats`).
    pub stats: CpufreqStats,
    /// The energy model's states, when the OPPs have power figures.
    pub em: Option<Vec<EmPerfState>>,
    /// schedutil's state (started for every policy; only schedutil reads it).
    pub sugov: SugovPolicy,
}

impl CpufreqPolicy {
    /// schedutil's state of the policy.
    fn sugov_mut(&mut self) -> &mut SugovPolicy {
        &mut self.sugov
    }

    /// `arch_set_freq_scale` of this policy's CPUs at `cur`: `topology_set_freq_scale`,
    /// `(cur << SCHED_CAPACITY_SHIFT) / max_freq`.
    pub fn freq_scale(&self) -> u64 {
        (u64::from(self.cur) << 10) / u64::from(self.cpuinfo_max)
    }
}

/// The cpufreq state of a machine: its policies, the governor and the per-CPU data the
/// governor keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpufreq {
    /// The governor of every policy.
    pub governor: Governor,
    /// The policies, in order of their first CPU.
    pub policies: Vec<CpufreqPolicy>,
    /// The policy of each CPU.
    pub policy_of: Vec<usize>,
    /// schedutil's per-CPU data (`sugov_cpu`).
    pub sg_cpu: Vec<SugovCpu>,
    /// `ts->idle_calls` of each CPU: how often its idle loop stopped the tick
    /// (`tick_nohz_idle_stop_tick`), which `sugov_hold_freq` reads.
    pub idle_calls: Vec<u64>,
    /// `rq->avg_rt.last_update_time` of each CPU (rq_clock_pelt, ns): without RT tasks
    /// the RT signal is only aged by the blocked-load update, whose `decayed` also
    /// counts a PELT period crossed by it.
    avg_rt_last_update: Vec<u64>,
    /// Policies whose slow-path work was queued (`irq_work_queue`), with the rq clock of
    /// the request, for the engine to run.
    requests: Vec<(usize, u64)>,
}

/// Why a machine's policies cannot start under a governor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpufreqError {
    /// The machine has no frequency domains.
    #[error("--governor: machine {machine} has no cpufreq policies; allowed: a machine with frequency domains (the rk3399 preset, or a machine file's [[cpufreq]] tables)")]
    NoPolicies {
        /// The machine's name.
        machine: String,
    },
    /// A `userspace` frequency no policy's range holds.
    #[error("--governor: userspace:{khz} is outside every policy's range; allowed: a frequency from {lo} to {hi} kHz (each policy takes the lowest of its OPPs at or above it, within its range)")]
    OutsideRange {
        /// The frequency asked for.
        khz: u32,
        /// The lowest frequency of any policy.
        lo: u32,
        /// The highest frequency of any policy.
        hi: u32,
    },
}

impl Cpufreq {
    /// The policies of `machine` under `governor`, as the CPUs come up at time `now`
    /// (engine ns, for the stats): each starts at the frequency its governor sets
    /// (schedutil at the highest until [`crate::sched::Sched::install_cpufreq`] runs its first
    /// update), with the energy model of its first CPU's capacity
    /// (`capacities`). Errors name what does not fit (a `userspace` frequency outside a
    /// table is resolved, as `scaling_setspeed` is, so only an empty machine fails).
    pub fn new(
        machine: &Machine,
        governor: Governor,
        capacities: &[u64],
        now: u64,
    ) -> Result<Cpufreq, CpufreqError> {
        let n = machine.nr_cpus();
        if machine.cpufreq.is_empty() {
            return Err(CpufreqError::NoPolicies {
                machine: machine.name.clone(),
            });
        }
        if let Governor::Userspace { khz } = governor {
            let lo = machine
                .cpufreq
                .iter()
                .map(|d| d.min_khz())
                .min()
                .unwrap_or(0);
            let hi = machine
                .cpufreq
                .iter()
                .map(|d| d.max_khz())
                .max()
                .unwrap_or(0);
            if !(lo..=hi).contains(&khz) {
                return Err(CpufreqError::OutsideRange { khz, lo, hi });
            }
        }
        let mut policy_of = vec![0; n];
        let mut policies = Vec::with_capacity(machine.cpufreq.len());
        for (i, d) in machine.cpufreq.iter().enumerate() {
            let freqs: Vec<u32> = d.opps.iter().map(|o| o.khz).collect();
            let mut table = FreqTable::new(freqs.clone());
            let first = d.cpus.first().unwrap_or(0);
            let em = d
                .em_power_uw()
                .and_then(|p| em_create_perf_table(&freqs, &p, capacities[first]));
            if let Some(em) = &em {
                table.set_inefficiencies(em);
            }
            for c in d.cpus.iter() {
                policy_of[c] = i;
            }
            let (lo, hi) = (d.min_khz(), d.max_khz());
            let cur = match governor {
                Governor::Schedutil { .. } => hi,
                Governor::Performance => table.resolve(hi, Relation::H, lo, hi),
                Governor::Powersave => table.resolve(lo, Relation::L, lo, hi),
                Governor::Userspace { khz } => table.resolve(khz, Relation::L, lo, hi),
            };
            let cur_index = table.index_of(cur).unwrap_or(0);
            let default_rate = cpufreq_policy_transition_delay_us(d.transition_latency_ns);
            let sugov = SugovPolicy::start(match governor {
                Governor::Schedutil {
                    rate_limit_us: Some(us),
                } => us,
                _ => default_rate,
            });
            policies.push(CpufreqPolicy {
                cpu: first,
                cpus: d.cpus.clone(),
                stats: CpufreqStats::new(freqs, cur_index, now),
                table,
                cpuinfo_min: lo,
                cpuinfo_max: hi,
                min: lo,
                max: hi,
                cur,
                transition_latency_ns: d.transition_latency_ns,
                em,
                sugov,
            });
        }
        Ok(Cpufreq {
            governor,
            policies,
            policy_of,
            sg_cpu: vec![SugovCpu::default(); n],
            idle_calls: vec![0; n],
            avg_rt_last_update: vec![0; n],
            requests: Vec::new(),
        })
    }

    /// The policies whose slow-path work was queued since the last call, with the rq
    /// clock of each request, in request order.
    pub fn take_requests(&mut self) -> Vec<(usize, u64)> {
        std::mem::take(&mut self.requests)
    }

    /// `__cpufreq_driver_target(policy, target, CPUFREQ_RELATION_L)` as the governor's
    /// work calls it: the table frequency the target resolves to, or `None` when that is
    /// the current one and nothing happens.
    pub fn driver_target(&self, policy: usize, target: u32) -> Option<u32> {
        let p = &self.policies[policy];
        let freq = p.table.resolve(target, Relation::L, p.min, p.max);
        (freq != p.cur).then_some(freq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn governor_option_parses_and_describes_back() {
        for text in [
            "schedutil",
            "schedutil:rate_limit_us=500",
            "performance",
            "powersave",
            "userspace:1200000",
        ] {
            assert_eq!(Governor::parse(text).unwrap().describe(), text);
        }
        for bad in [
            "ondemand",
            "userspace",
            "userspace:0",
            "userspace:1.2GHz",
            "schedutil:10",
            "performance:1",
            "schedutil:rate_limit_us=-1",
        ] {
            let e = Governor::parse(bad).unwrap_err().to_string();
            assert!(e.contains("allowed") && !e.contains('\n'), "{bad}: {e}");
        }
    }

    #[test]
    fn rate_limit_default_is_one_and_a_half_transition_latencies() {
        // rk3399's 40 us clock latency: 40 + 20 = 60 us.
        assert_eq!(cpufreq_policy_transition_delay_us(40_000), 60);
        assert_eq!(cpufreq_policy_transition_delay_us(999), 1000);
        assert_eq!(cpufreq_policy_transition_delay_us(500_000), 750);
    }
}
