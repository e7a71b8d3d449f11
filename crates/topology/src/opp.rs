//! Frequency domains and their operating performance points (OPPs): what a device tree's
//! `operating-points-v2` tables and the cpufreq driver tell the kernel about CPU clocks.
//!
//! A [`FreqDomain`] is one cpufreq policy's hardware: the CPUs that share a clock (the
//! DT's `opp-shared` table, `policy->related_cpus`), its OPP table in increasing frequency
//! (`opp-hz` in kHz, as cpufreq keeps it; `opp-microvolt`; `opp-microwatt`), the driver's
//! transition latency (`policy->cpuinfo.transition_latency`, which cpufreq-dt takes from
//! the OPP table's `clock-latency-ns`) and the CPUs' `dynamic-power-coefficient`, from
//! which the energy model computes each OPP's power when no `opp-microwatt` is given.
//!
//! A machine without domains has no cpufreq at all: every CPU runs at its highest
//! frequency (`arch_scale_freq_capacity` is 1024), which is what fairsim modelled before
//! domains existed. This crate describes and checks the domains; the governors live in
//! the balance crate, the timing of transitions in the engine.
//!
//! Sources (Linux 6.12): `drivers/opp/of.c` (`dev_pm_opp_calc_power`, `_get_dt_power`,
//! `dev_pm_opp_of_register_em`), `kernel/power/energy_model.c` (`em_create_perf_table`:
//! the power of every state must be in `1..=EM_MAX_POWER`), `drivers/cpufreq/cpufreq-dt.c`.

use crate::cpumask::CpuMask;
use crate::error::TopologyError;

/// `EM_MAX_POWER` (`include/linux/energy_model.h`, 6.12): 64 W in micro-watts, the largest
/// power `em_create_perf_table` accepts for a performance state.
pub const EM_MAX_POWER_UW: u64 = 64_000_000;

/// The most OPPs a table may have: far more than any SoC's table (rk3399's biggest has 8,
/// x86 P-state tables a few dozen), enough to refuse a file that lists garbage.
pub const MAX_OPPS: usize = 256;

/// The largest transition latency accepted, 10 ms: `CPUFREQ_ETERNAL` drivers (no
/// latency known) are out of scope, and a switch slower than a few ticks is not a DVFS
/// driver anyone runs schedutil on.
pub const MAX_TRANSITION_LATENCY_NS: u64 = 10_000_000;

/// One operating performance point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opp {
    /// Frequency in kHz (`opp-hz` / 1000, as `dev_pm_opp_init_cpufreq_table` fills the
    /// cpufreq table).
    pub khz: u32,
    /// Supply voltage in micro-volts (`opp-microvolt`, the target value), when known.
    pub microvolt: Option<u32>,
    /// Active power in micro-watts (`opp-microwatt`), when the table gives it.
    pub power_uw: Option<u64>,
}

/// One frequency domain: a cpufreq policy's CPUs, OPP table and driver timing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreqDomain {
    /// The CPUs that share the clock (`policy->related_cpus`).
    pub cpus: CpuMask,
    /// The OPP table, in strictly increasing frequency.
    pub opps: Vec<Opp>,
    /// `policy->cpuinfo.transition_latency` in ns: how long a frequency change takes.
    pub transition_latency_ns: u64,
    /// The CPUs' `dynamic-power-coefficient` (the DT's C of P = C * V^2 * f, in
    /// uW/MHz/V^2), when given.
    pub dynamic_power_coefficient: Option<u32>,
}

/// `dev_pm_opp_calc_power()` (drivers/opp/of.c, 6.12): the active power of an OPP in
/// micro-watts from the dynamic-power coefficient, `P = C * V^2 * f`, with the kernel's
/// integer steps: the voltage in whole mV, the frequency in whole MHz, the product
/// divided by 10^6.
pub fn dev_pm_opp_calc_power(coefficient: u32, microvolt: u32, khz: u32) -> u64 {
    let mv = u64::from(microvolt / 1000);
    let mhz = u64::from(khz) * 1000 / 1_000_000;
    u64::from(coefficient) * mv * mv * mhz / 1_000_000
}

impl FreqDomain {
    /// The highest OPP's frequency: `policy->cpuinfo.max_freq`, and on arm64 the
    /// `capacity_freq_ref` that `arch_scale_freq_ref` returns.
    pub fn max_khz(&self) -> u32 {
        self.opps.last().map_or(0, |o| o.khz)
    }

    /// The lowest OPP's frequency: `policy->cpuinfo.min_freq`.
    pub fn min_khz(&self) -> u32 {
        self.opps.first().map_or(0, |o| o.khz)
    }

    /// The power of every OPP as the energy model registers it
    /// (`dev_pm_opp_of_register_em`): the table's own `opp-microwatt` values when the
    /// first OPP has one (`_of_has_opp_microwatt_property`, then `_get_dt_power`), else
    /// [`dev_pm_opp_calc_power`] from the coefficient and the voltages. `None` when
    /// neither is complete or a power falls outside `1..=EM_MAX_POWER`, as
    /// `em_create_perf_table` then refuses the model.
    pub fn em_power_uw(&self) -> Option<Vec<u64>> {
        let first = self.opps.first()?;
        let powers: Vec<u64> = if first.power_uw.is_some() {
            self.opps
                .iter()
                .map(|o| o.power_uw)
                .collect::<Option<Vec<_>>>()?
        } else {
            let c = self.dynamic_power_coefficient?;
            self.opps
                .iter()
                .map(|o| o.microvolt.map(|uv| dev_pm_opp_calc_power(c, uv, o.khz)))
                .collect::<Option<Vec<_>>>()?
        };
        powers
            .iter()
            .all(|&p| (1..=EM_MAX_POWER_UW).contains(&p))
            .then_some(powers)
    }

    /// Checks one domain of a machine of `ncpus` CPUs; `field` names it in errors.
    pub fn validate(&self, ncpus: usize, field: &str) -> Result<(), TopologyError> {
        if self.cpus.nbits() != ncpus || self.cpus.is_empty() {
            return Err(TopologyError::invalid(
                &format!("{field}.cpus"),
                self.cpus.to_list(),
                &format!("a non-empty list of CPUs of the {ncpus}-CPU machine"),
            ));
        }
        if self.opps.is_empty() || self.opps.len() > MAX_OPPS {
            return Err(TopologyError::invalid(
                &format!("{field}.opps"),
                format!("{} OPPs", self.opps.len()),
                &format!("1 to {MAX_OPPS} OPPs"),
            ));
        }
        for (i, o) in self.opps.iter().enumerate() {
            if o.khz == 0 {
                return Err(TopologyError::invalid(
                    &format!("{field}.opps[{i}].khz"),
                    0,
                    "a frequency in kHz above 0",
                ));
            }
            if i > 0 && o.khz <= self.opps[i - 1].khz {
                return Err(TopologyError::invalid(
                    &format!("{field}.opps[{i}].khz"),
                    o.khz,
                    &format!(
                        "a frequency above the previous OPP's {} kHz (strictly increasing)",
                        self.opps[i - 1].khz
                    ),
                ));
            }
            if o.microvolt == Some(0) {
                return Err(TopologyError::invalid(
                    &format!("{field}.opps[{i}].microvolt"),
                    0,
                    "a voltage in micro-volts above 0",
                ));
            }
            if let Some(p) = o.power_uw {
                if !(1..=EM_MAX_POWER_UW).contains(&p) {
                    return Err(TopologyError::invalid(
                        &format!("{field}.opps[{i}].power_uw"),
                        p,
                        &format!("1 to {EM_MAX_POWER_UW} micro-watts (EM_MAX_POWER)"),
                    ));
                }
            }
        }
        // The energy model reads one kind of figure for the whole table: either every
        // OPP has its power, or none has and the coefficient gives them all.
        let powered = self.opps.iter().filter(|o| o.power_uw.is_some()).count();
        if powered != 0 && powered != self.opps.len() {
            return Err(TopologyError::invalid(
                &format!("{field}.opps"),
                format!("power_uw on {powered} of {} OPPs", self.opps.len()),
                "power_uw on every OPP or on none",
            ));
        }
        if self.transition_latency_ns == 0 || self.transition_latency_ns > MAX_TRANSITION_LATENCY_NS
        {
            return Err(TopologyError::invalid(
                &format!("{field}.transition_latency_ns"),
                self.transition_latency_ns,
                &format!("1 to {MAX_TRANSITION_LATENCY_NS} ns"),
            ));
        }
        if self.dynamic_power_coefficient == Some(0) {
            return Err(TopologyError::invalid(
                &format!("{field}.dynamic_power_coefficient"),
                0,
                "a coefficient above 0 (uW/MHz/V^2)",
            ));
        }
        Ok(())
    }
}

/// Checks a machine's domains: each one valid, and every CPU in exactly one (a machine
/// either has cpufreq on all its CPUs or on none). Domains are named `cpufreq[i]`.
pub fn validate_domains(domains: &[FreqDomain], ncpus: usize) -> Result<(), TopologyError> {
    if domains.is_empty() {
        return Ok(());
    }
    let mut seen = CpuMask::new(ncpus);
    for (i, d) in domains.iter().enumerate() {
        let field = format!("cpufreq[{i}]");
        d.validate(ncpus, &field)?;
        if seen.intersects(&d.cpus) {
            return Err(TopologyError::Inconsistent {
                field: format!("{field}.cpus"),
                detail: format!(
                    "CPUs {} are already in another frequency domain; each CPU belongs to one policy",
                    seen.and(&d.cpus)
                ),
            });
        }
        seen.or_with(&d.cpus);
    }
    if seen.weight() != ncpus {
        let mut missing = CpuMask::full(ncpus);
        missing.andnot_with(&seen);
        return Err(TopologyError::Inconsistent {
            field: "cpufreq".into(),
            detail: format!(
                "CPUs {missing} are in no frequency domain; allowed: every CPU in exactly one domain, or no cpufreq section"
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domain(opps: &[(u32, Option<u32>)]) -> FreqDomain {
        FreqDomain {
            cpus: CpuMask::full(2),
            opps: opps
                .iter()
                .map(|&(khz, microvolt)| Opp {
                    khz,
                    microvolt,
                    power_uw: None,
                })
                .collect(),
            transition_latency_ns: 40_000,
            dynamic_power_coefficient: Some(436),
        }
    }

    #[test]
    fn calc_power_follows_the_kernels_integer_steps() {
        // rk3399's A72 at 1.8 GHz and 1.2 V: 436 * 1200 * 1200 * 1800 / 10^6 = 1130112 uW.
        assert_eq!(dev_pm_opp_calc_power(436, 1_200_000, 1_800_000), 1_130_112);
        // A53 at 408 MHz and 825 mV: 100 * 825^2 * 408 / 10^6 = 27769.5, truncated.
        assert_eq!(dev_pm_opp_calc_power(100, 825_000, 408_000), 27_769);
        // 825.9 mV counts as 825 mV, and 600.9 MHz as 600 MHz.
        assert_eq!(
            dev_pm_opp_calc_power(100, 825_900, 600_900),
            dev_pm_opp_calc_power(100, 825_000, 600_000)
        );
    }

    #[test]
    fn em_power_needs_a_complete_table() {
        let d = domain(&[(408_000, Some(825_000)), (600_000, Some(825_000))]);
        assert_eq!(d.em_power_uw(), Some(vec![121_075, 178_051]));
        let d = domain(&[(408_000, Some(825_000)), (600_000, None)]);
        assert_eq!(d.em_power_uw(), None);
        let mut d = domain(&[(408_000, Some(825_000))]);
        d.dynamic_power_coefficient = None;
        assert_eq!(d.em_power_uw(), None);
        d.opps[0].power_uw = Some(5);
        assert_eq!(d.em_power_uw(), Some(vec![5]));
    }

    #[test]
    fn bad_domains_are_one_line_errors_naming_the_field() {
        let unsorted = domain(&[(600_000, None), (408_000, None)]);
        let e = unsorted.validate(2, "cpufreq[0]").unwrap_err().to_string();
        assert!(
            e.contains("cpufreq[0].opps[1].khz") && !e.contains('\n'),
            "{e}"
        );
        let mut slow = domain(&[(408_000, None)]);
        slow.transition_latency_ns = 0;
        let e = slow.validate(2, "cpufreq[0]").unwrap_err().to_string();
        assert!(e.contains("transition_latency_ns"), "{e}");
        let a = domain(&[(408_000, None)]);
        let e = validate_domains(&[a.clone(), a], 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cpufreq[1].cpus"), "{e}");
        let mut half = domain(&[(408_000, None)]);
        half.cpus = CpuMask::single(2, 0);
        let e = validate_domains(&[half], 2).unwrap_err().to_string();
        assert!(e.contains("CPUs 1 are in no frequency domain"), "{e}");
    }
}
