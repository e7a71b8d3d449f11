//! Linux 3.9's arm `cpu_scale` (arch/arm/kernel/topology.c, read from the v3.9.6 tree):
//! `parse_dt_topology` weighs each CPU's device-tree `clock-frequency` by its core's
//! `table_efficiency` entry, and `update_cpu_power` divides by `middle_capacity` so that an
//! average CPU sits near `SCHED_POWER_SCALE`. The result is the `cpu_power` that 3.9's load
//! balancer reads through `arch_scale_freq_power`; it is not normalised to 1024 (TC2's
//! A15s get 1441).

use crate::limits::SCHED_POWER_SHIFT;

/// A CPU node of the device tree as 3.9's `parse_dt_topology` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DtCpu {
    /// The core's entry in `table_efficiency` (Cortex-A15 3891, Cortex-A7 2048).
    pub efficiency: u64,
    /// The node's `clock-frequency` property in Hz.
    pub clock_frequency_hz: u32,
}

/// `table_efficiency[]` of 3.9: Cortex-A15.
pub const EFFICIENCY_CORTEX_A15: u64 = 3891;
/// `table_efficiency[]` of 3.9: Cortex-A7.
pub const EFFICIENCY_CORTEX_A7: u64 = 2048;

/// `parse_dt_topology` + `update_cpu_power` of Linux 3.9 for every CPU: `None` when all
/// capacities are equal (3.9 then leaves `cpu_scale` at its default, 1024, for all).
pub fn cpu_scale_v3_9(cpus: &[DtCpu]) -> Option<Vec<u32>> {
    let caps: Vec<u64> = cpus
        .iter()
        .map(|c| u64::from(c.clock_frequency_hz >> 20) * c.efficiency)
        .collect();
    let min = *caps.iter().min()?;
    let max = *caps.iter().max()?;
    if min == max {
        return None;
    }
    // The middle capacity keeps an average CPU near 1024, unless the biggest would then
    // exceed 3/2 of it, in which case the biggest is capped near 1536.
    let middle = if 4 * max < 3 * (max + min) {
        (min + max) >> (SCHED_POWER_SHIFT + 1)
    } else {
        ((max / 3) >> (SCHED_POWER_SHIFT - 1)) + 1
    };
    Some(caps.iter().map(|c| (c / middle) as u32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TC2's device tree with the clock frequencies the seed-002 posting added (A15 at
    /// 1 GHz, A7 at 800 MHz) gives the posting's cpu_power 1441 and 606.
    #[test]
    fn tc2_gives_the_postings_cpu_power() {
        let a15 = DtCpu {
            efficiency: EFFICIENCY_CORTEX_A15,
            clock_frequency_hz: 1_000_000_000,
        };
        let a7 = DtCpu {
            efficiency: EFFICIENCY_CORTEX_A7,
            clock_frequency_hz: 800_000_000,
        };
        assert_eq!(
            cpu_scale_v3_9(&[a15, a15, a7, a7, a7]),
            Some(vec![1441, 1441, 606, 606, 606])
        );
        assert_eq!(cpu_scale_v3_9(&[a15, a15]), None);
    }
}
