//! Google Tensor gs101 (Pixel 6, 6 Pro and 6a; 2021): an arm64 SoC with three CPU
//! capacity classes, four Cortex-A55 (cluster 0, CPUs 0-3), two Cortex-A76 (cluster 1,
//! CPUs 4-5) and two Cortex-X1 (cluster 2, CPUs 6-7), each cluster on its own clock, as
//! the upstream Linux device tree describes it.
//!
//! Sources, all in `arch/arm64/boot/dts/exynos/google/gs101.dtsi` of the upstream kernel
//! (torvalds/linux):
//!
//! - The CPU nodes and `cpu-map` (three clusters, no SMT): `capacity-dmips-mhz` 250 on the
//!   A55s, 620 on the A76s and 1024 on the X1s, and `dynamic-power-coefficient` 70, 284
//!   and 650. These are in the file since gs101 support was added (v6.8) and unchanged
//!   through the 6.12 era (read at torvalds/linux 95350c0ec27d, gregkh/linux 1321c33a8fc5
//!   and torvalds/linux 01272f05aae5).
//! - The three `opp-shared` tables `cpucl0_opp_table`, `cpucl1_opp_table` and
//!   `cpucl2_opp_table` (11, 14 and 17 OPPs, `opp-hz` with `opp-microvolt`), every OPP
//!   with `clock-latency-ns = <500000>`. These are newer than 6.12: they came with the
//!   ACPM DVFS clocks (Tudor Ambarus, "arm64: dts: exynos: gs101: add OPPs", 2025; the
//!   posted v1 said 5000000 ns, the merged file 500000 ns), read at torvalds/linux
//!   01272f05aae5f6aca4337eb52e6b9290ce12e9f7. A 6.12 kernel on this device tree has no
//!   CPU OPPs and so no cpufreq and no energy model; the preset is 6.12's scheduler on
//!   the newer tree's OPP tables.
//!
//! How the kernel turns them into what the scheduler sees:
//!
//! - Capacities: `topology_normalize_cpu_scale` (drivers/base/arch_topology.c, 6.12)
//!   multiplies each CPU's `capacity-dmips-mhz` by its `capacity_freq_ref`, the policy's
//!   `cpuinfo.max_freq` in kHz, and scales the largest product to 1024:
//!   250 * 1803000 * 1024 / (1024 * 2802000) = 160 for the A55s,
//!   620 * 2253000 * 1024 / (1024 * 2802000) = 498 for the A76s, 1024 for the X1s.
//! - The cpufreq driver is cpufreq-dt (the CPU nodes point at `operating-points-v2`
//!   tables, which cpufreq-dt-platdev accepts without a list entry): one policy per
//!   `opp-shared` table, `cpuinfo.transition_latency` the clock latency, 500 us. The CPU
//!   nodes name no `cpu-supply` (the ACPM firmware sets the voltage with the clock), so
//!   no regulator ramp is added to it.
//! - The energy model: `dev_pm_opp_of_register_em` with the coefficient, so every OPP's
//!   power is `dev_pm_opp_calc_power` of its voltage and frequency.
//! - The LLC: the CPU nodes carry no cache properties and no `next-level-cache`, so
//!   cacheinfo finds no shared level and `cpu_coregroup_mask` falls back to the package,
//!   CPUs 0-7; the hardware agrees (the DynamIQ Shared Unit's L3 serves all eight
//!   cores). The MC domain therefore spans the whole SoC, and there is no PKG level.
//!
//! The preset names no cost table: the engine's default (`x86-2020s`) is the nearest
//! generation for 2021 cores at up to 2.8 GHz. The device tree's idle states (one PSCI
//! `c2` state per cluster: entry/exit/min-residency 70/160/2000 us on the A55s,
//! 150/190/2500 us on the A76s, 235/220/3500 us on the X1s) have no cpuidle table in
//! fairsim yet, so the engine's flat table applies, as on rk3399.

use crate::capacity::normalize_capacities;
use crate::error::TopologyError;
use crate::machine::{machine_from_ids, Arch, CpuIds, LlcScope, Machine};
use crate::opp::{FreqDomain, Opp};
use crate::CpuMask;

/// `clock-latency-ns` of every OPP of the three gs101 tables.
pub const GS101_CLOCK_LATENCY_NS: u64 = 500_000;

/// `cpucl0_opp_table` of gs101.dtsi: (kHz, uV) of the Cortex-A55 cluster.
pub const GS101_CPUCL0_OPPS: [(u32, u32); 11] = [
    (300_000, 537_500),
    (574_000, 600_000),
    (738_000, 618_750),
    (930_000, 668_750),
    (1_098_000, 712_500),
    (1_197_000, 731_250),
    (1_328_000, 762_500),
    (1_401_000, 781_250),
    (1_598_000, 831_250),
    (1_704_000, 862_500),
    (1_803_000, 906_250),
];

/// `cpucl1_opp_table` of gs101.dtsi: (kHz, uV) of the Cortex-A76 cluster.
pub const GS101_CPUCL1_OPPS: [(u32, u32); 14] = [
    (400_000, 506_250),
    (553_000, 537_500),
    (696_000, 562_500),
    (799_000, 581_250),
    (910_000, 606_250),
    (1_024_000, 625_000),
    (1_197_000, 662_500),
    (1_328_000, 687_500),
    (1_491_000, 731_250),
    (1_663_000, 775_000),
    (1_836_000, 818_750),
    (1_999_000, 868_750),
    (2_130_000, 918_750),
    (2_253_000, 968_750),
];

/// `cpucl2_opp_table` of gs101.dtsi: (kHz, uV) of the Cortex-X1 cluster.
pub const GS101_CPUCL2_OPPS: [(u32, u32); 17] = [
    (500_000, 500_000),
    (851_000, 556_250),
    (984_000, 575_000),
    (1_106_000, 606_250),
    (1_277_000, 631_250),
    (1_426_000, 662_500),
    (1_582_000, 693_750),
    (1_745_000, 731_250),
    (1_826_000, 750_000),
    (2_048_000, 793_750),
    (2_188_000, 831_250),
    (2_252_000, 850_000),
    (2_401_000, 887_500),
    (2_507_000, 925_000),
    (2_630_000, 968_750),
    (2_704_000, 1_000_000),
    (2_802_000, 1_056_250),
];

/// One gs101 cluster: its CPUs, `capacity-dmips-mhz`, `dynamic-power-coefficient` and
/// OPP table.
struct Cluster {
    cpus: std::ops::Range<usize>,
    dmips_mhz: u64,
    power_coefficient: u32,
    opps: &'static [(u32, u32)],
}

/// The clusters in `cpu-map` order: A55, A76, X1.
const CLUSTERS: [Cluster; 3] = [
    Cluster {
        cpus: 0..4,
        dmips_mhz: 250,
        power_coefficient: 70,
        opps: &GS101_CPUCL0_OPPS,
    },
    Cluster {
        cpus: 4..6,
        dmips_mhz: 620,
        power_coefficient: 284,
        opps: &GS101_CPUCL1_OPPS,
    },
    Cluster {
        cpus: 6..8,
        dmips_mhz: 1024,
        power_coefficient: 650,
        opps: &GS101_CPUCL2_OPPS,
    },
];

/// The number of CPUs of the SoC.
const NR_CPUS: usize = 8;

/// The gs101 machine: three clusters, a node, one LLC over all eight CPUs, the
/// capacities as 6.12 normalises them with each policy's top frequency, and one
/// frequency domain per cluster.
pub fn gs101() -> Result<Machine, TopologyError> {
    let cluster_of = |cpu: usize| {
        CLUSTERS
            .iter()
            .position(|c| c.cpus.contains(&cpu))
            .unwrap_or(0)
    };
    let raw: Vec<u64> = (0..NR_CPUS)
        .map(|cpu| {
            let c = &CLUSTERS[cluster_of(cpu)];
            let max_khz = c.opps.last().map_or(0, |o| u64::from(o.0));
            c.dmips_mhz * max_khz
        })
        .collect();
    let caps = normalize_capacities(&raw)?;
    let ids: Vec<CpuIds> = caps
        .iter()
        .enumerate()
        .map(|(cpu, &capacity)| {
            let cluster = cluster_of(cpu);
            CpuIds {
                socket: 0,
                die: 0,
                cluster: cluster as u32,
                // Core ids restart in each cluster, as parse_cluster numbers them.
                core: (cpu - CLUSTERS[cluster].cpus.start) as u32,
                thread: 0,
                node: 0,
                capacity,
            }
        })
        .collect();
    let m = machine_from_ids(
        "gs101",
        Arch::Arm64,
        &ids,
        1,
        vec![vec![10]],
        LlcScope::Package,
    )?;
    let cpufreq = CLUSTERS
        .iter()
        .map(|c| FreqDomain {
            cpus: CpuMask::from_cpus(NR_CPUS, c.cpus.clone()),
            opps: c
                .opps
                .iter()
                .map(|&(khz, uv)| Opp {
                    khz,
                    microvolt: Some(uv),
                    power_uw: None,
                })
                .collect(),
            transition_latency_ns: GS101_CLOCK_LATENCY_NS,
            dynamic_power_coefficient: Some(c.power_coefficient),
        })
        .collect();
    let m = Machine { cpufreq, ..m };
    m.validate()?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacities_and_domains_follow_the_device_tree() {
        let m = gs101().unwrap();
        let caps: Vec<u32> = m.cpus.iter().map(|c| c.capacity).collect();
        assert_eq!(caps, vec![160, 160, 160, 160, 498, 498, 1024, 1024]);
        let lists: Vec<String> = m.cpufreq.iter().map(|d| d.cpus.to_list()).collect();
        assert_eq!(lists, vec!["0-3", "4-5", "6-7"]);
        assert_eq!(m.cpus[0].llc_siblings.to_list(), "0-7");
        assert_eq!(m.cpus[5].cluster_siblings.to_list(), "4-5");
        assert!(!m.smt_present());
    }
}
