//! Rockchip RK3399: an arm64 big.LITTLE SoC (2016) with four Cortex-A53 (cluster 0, CPUs
//! 0-3) and two Cortex-A72 (cluster 1, CPUs 4-5), each cluster on its own clock, as
//! Linux 6.12's device tree describes it.
//!
//! Sources, Linux 6.12 (`arch/arm64/boot/dts/rockchip/`): `rk3399-base.dtsi` for the CPU
//! nodes and `cpu-map` (`capacity-dmips-mhz` 485 on the A53s and 1024 on the A72s,
//! `dynamic-power-coefficient` 100 and 436), `rk3399.dtsi` for the two `opp-shared`
//! tables `cluster0_opp` and `cluster1_opp` (in 6.12 the OPPs moved there from the former
//! `rk3399-opp.dtsi`, with the same values), whose first OPP carries
//! `clock-latency-ns = <40000>`.
//!
//! How the kernel turns them into what the scheduler sees:
//!
//! - Capacities: `topology_normalize_cpu_scale` (drivers/base/arch_topology.c, 6.12)
//!   multiplies each CPU's `capacity-dmips-mhz` by its `capacity_freq_ref`, which
//!   `init_cpu_capacity_callback` sets to the policy's `cpuinfo.max_freq` (kHz) when the
//!   cpufreq policy appears, and scales the largest product to 1024:
//!   485 * 1416000 * 1024 / (1024 * 1800000) = 381 for the A53s, 1024 for the A72s.
//! - The cpufreq driver is cpufreq-dt (`rockchip,rk3399` is on cpufreq-dt-platdev's
//!   list): one policy per `opp-shared` table, `cpuinfo.transition_latency` from
//!   `dev_pm_opp_get_max_transition_latency`, the clock latency 40 us plus the supply
//!   regulator's voltage ramp. The ramp belongs to the board (its PMIC's
//!   `regulator-ramp-delay`), not to the SoC, so the preset counts the clock latency
//!   only, as a board whose regulators declare no ramp reports; a machine file can give
//!   a board's full latency.
//! - The energy model: `dev_pm_opp_of_register_em` with the coefficient, so every OPP's
//!   power is `dev_pm_opp_calc_power` of its voltage and frequency.
//!
//! The preset names no cost table: the engine's default (`x86-2020s`) is the nearest
//! generation, since an A72 at 1.8 GHz does roughly the work of a 1 GHz A15 (the
//! `arm-2013` table) 2.3 times faster (1.8 times the clock, about 1.3 times the
//! instructions per clock), which is the ratio `arm-2013` applies to `x86-2020s`. No
//! cpuidle table of the board's PSCI states ships with fairsim, so the engine's flat
//! table applies.

use crate::capacity::normalize_capacities;
use crate::error::TopologyError;
use crate::machine::{machine_from_ids, Arch, CpuIds, LlcScope, Machine};
use crate::opp::{FreqDomain, Opp};
use crate::CpuMask;

/// `clock-latency-ns` of both RK3399 OPP tables.
pub const RK3399_CLOCK_LATENCY_NS: u64 = 40_000;

/// `cluster0_opp` of rk3399.dtsi: (kHz, target uV) of the A53 cluster.
pub const RK3399_CLUSTER0_OPPS: [(u32, u32); 6] = [
    (408_000, 825_000),
    (600_000, 825_000),
    (816_000, 850_000),
    (1_008_000, 925_000),
    (1_200_000, 1_000_000),
    (1_416_000, 1_125_000),
];

/// `cluster1_opp` of rk3399.dtsi: (kHz, target uV) of the A72 cluster.
pub const RK3399_CLUSTER1_OPPS: [(u32, u32); 8] = [
    (408_000, 825_000),
    (600_000, 825_000),
    (816_000, 825_000),
    (1_008_000, 875_000),
    (1_200_000, 950_000),
    (1_416_000, 1_025_000),
    (1_608_000, 1_100_000),
    (1_800_000, 1_200_000),
];

/// `capacity-dmips-mhz` of the A53 CPU nodes.
const A53_DMIPS_MHZ: u64 = 485;
/// `capacity-dmips-mhz` of the A72 CPU nodes.
const A72_DMIPS_MHZ: u64 = 1024;
/// `dynamic-power-coefficient` of the A53 CPU nodes.
const A53_POWER_COEFFICIENT: u32 = 100;
/// `dynamic-power-coefficient` of the A72 CPU nodes.
const A72_POWER_COEFFICIENT: u32 = 436;

/// The RK3399 machine: two clusters, a node, an LLC (the cluster's L2) per cluster, the
/// capacities as 6.12 normalises them, and one frequency domain per cluster.
pub fn rk3399() -> Result<Machine, TopologyError> {
    let max0 = u64::from(RK3399_CLUSTER0_OPPS[RK3399_CLUSTER0_OPPS.len() - 1].0);
    let max1 = u64::from(RK3399_CLUSTER1_OPPS[RK3399_CLUSTER1_OPPS.len() - 1].0);
    let raw: Vec<u64> = (0..6)
        .map(|cpu| {
            if cpu < 4 {
                A53_DMIPS_MHZ * max0
            } else {
                A72_DMIPS_MHZ * max1
            }
        })
        .collect();
    let caps = normalize_capacities(&raw)?;
    let ids: Vec<CpuIds> = caps
        .iter()
        .enumerate()
        .map(|(cpu, &capacity)| CpuIds {
            socket: 0,
            die: 0,
            cluster: u32::from(cpu >= 4),
            core: if cpu < 4 { cpu as u32 } else { cpu as u32 - 4 },
            thread: 0,
            node: 0,
            capacity,
        })
        .collect();
    let m = machine_from_ids(
        "rk3399",
        Arch::Arm64,
        &ids,
        1,
        vec![vec![10]],
        LlcScope::Cluster,
    )?;
    let domain =
        |cpus: std::ops::Range<usize>, table: &[(u32, u32)], coefficient: u32| FreqDomain {
            cpus: CpuMask::from_cpus(6, cpus),
            opps: table
                .iter()
                .map(|&(khz, uv)| Opp {
                    khz,
                    microvolt: Some(uv),
                    power_uw: None,
                })
                .collect(),
            transition_latency_ns: RK3399_CLOCK_LATENCY_NS,
            dynamic_power_coefficient: Some(coefficient),
        };
    let m = Machine {
        cpufreq: vec![
            domain(0..4, &RK3399_CLUSTER0_OPPS, A53_POWER_COEFFICIENT),
            domain(4..6, &RK3399_CLUSTER1_OPPS, A72_POWER_COEFFICIENT),
        ],
        ..m
    };
    m.validate()?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacities_and_domains_follow_the_device_tree() {
        let m = rk3399().unwrap();
        let caps: Vec<u32> = m.cpus.iter().map(|c| c.capacity).collect();
        assert_eq!(caps, vec![381, 381, 381, 381, 1024, 1024]);
        assert_eq!(m.cpufreq.len(), 2);
        assert_eq!(m.cpufreq[0].cpus.to_list(), "0-3");
        assert_eq!(m.cpufreq[1].cpus.to_list(), "4-5");
        assert_eq!(m.cpufreq[0].max_khz(), 1_416_000);
        assert_eq!(m.cpufreq[1].max_khz(), 1_800_000);
        // The A72 at its top OPP: 436 * 1200^2 * 1800 / 10^6 uW.
        let p = m.cpufreq[1].em_power_uw().unwrap();
        assert_eq!(p[7], 1_130_112);
        assert_eq!(m.cpus[4].llc_siblings.to_list(), "4-5");
    }
}
