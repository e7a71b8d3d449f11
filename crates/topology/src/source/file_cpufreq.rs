//! The `[[cpufreq]]` tables of a machine file: frequency domains with their OPP tables.
//!
//! ```toml
//! [[cpufreq]]
//! cpus = "0-3"                  # a CPU list, or "all"
//! policy = "shared"             # optional: how the listed CPUs split into policies:
//!                               # "shared" (one clock, the default), "cpu" (one per
//!                               # CPU, as x86's per-core P-states), "cluster" or
//!                               # "package" (one per cluster or package of the list)
//! transition_latency_ns = 40000 # policy->cpuinfo.transition_latency
//! dynamic_power_coefficient = 100   # optional: the DT's coefficient, for the energy model
//! opps = [
//!   { khz = 408000, microvolt = 825000 },   # microvolt and power_uw are optional
//!   { khz = 600000, microvolt = 825000 },
//! ]
//! ```
//!
//! Every CPU must end up in exactly one domain; a file without `[[cpufreq]]` describes a
//! machine without cpufreq (every CPU at its highest frequency).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::cpumask::CpuMask;
use crate::error::TopologyError;
use crate::machine::Machine;
use crate::opp::{FreqDomain, Opp};

/// One `[[cpufreq]]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CpufreqEntry {
    cpus: String,
    policy: Option<String>,
    transition_latency_ns: u64,
    dynamic_power_coefficient: Option<u32>,
    opps: Vec<OppEntry>,
}

/// One OPP of a table's `opps` list.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
struct OppEntry {
    khz: u32,
    microvolt: Option<u32>,
    power_uw: Option<u64>,
}

/// The domains the file's tables describe for machine `m` (whose CPU ids say what a
/// cluster and a package are); the caller validates the machine with them.
pub(crate) fn domains_of(
    entries: &[CpufreqEntry],
    m: &Machine,
) -> Result<Vec<FreqDomain>, TopologyError> {
    let n = m.nr_cpus();
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let field = format!("cpufreq[{i}]");
        let cpus = if e.cpus.trim() == "all" {
            CpuMask::full(n)
        } else {
            CpuMask::parse_list(n, e.cpus.trim()).map_err(|reason| {
                TopologyError::invalid(
                    &format!("{field}.cpus"),
                    &e.cpus,
                    &format!("a CPU list of the {n}-CPU machine such as 0-3,6 ({reason}), or all"),
                )
            })?
        };
        let opps: Vec<Opp> = e
            .opps
            .iter()
            .map(|o| Opp {
                khz: o.khz,
                microvolt: o.microvolt,
                power_uw: o.power_uw,
            })
            .collect();
        let groups: Vec<CpuMask> = match e.policy.as_deref().unwrap_or("shared") {
            "shared" => vec![cpus],
            "cpu" => cpus.iter().map(|c| CpuMask::single(n, c)).collect(),
            "cluster" => split_by(&cpus, n, |c| {
                let t = &m.cpus[c];
                (t.package_id, t.cluster_id)
            }),
            "package" => split_by(&cpus, n, |c| (m.cpus[c].package_id, 0)),
            other => {
                return Err(TopologyError::invalid(
                    &format!("{field}.policy"),
                    other,
                    "shared, cpu, cluster or package",
                ))
            }
        };
        for g in groups {
            out.push(FreqDomain {
                cpus: g,
                opps: opps.clone(),
                transition_latency_ns: e.transition_latency_ns,
                dynamic_power_coefficient: e.dynamic_power_coefficient,
            });
        }
    }
    // Policies are numbered by their first CPU, as cpufreq names them (policyN after
    // the CPU that created it), whatever the order of the file's tables.
    out.sort_by_key(|d| d.cpus.first());
    Ok(out)
}

/// The CPUs of `cpus` grouped by `key`, each group a mask, in order of their first CPU.
fn split_by(cpus: &CpuMask, n: usize, key: impl Fn(usize) -> (u32, u32)) -> Vec<CpuMask> {
    let mut groups: BTreeMap<(u32, u32), CpuMask> = BTreeMap::new();
    for c in cpus.iter() {
        groups
            .entry(key(c))
            .or_insert_with(|| CpuMask::new(n))
            .set(c);
    }
    let mut v: Vec<CpuMask> = groups.into_values().collect();
    v.sort_by_key(CpuMask::first);
    v
}
