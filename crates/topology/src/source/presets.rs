//! Named machines: the boxes of the seed experiments and one preset per ground-truth
//! topology in `shared/ground-truth/linux-6.12/`, with the same name as its directory.
//!
//! Every preset is built from a qemu-style spec (or, for the uneven big.LITTLE clusters
//! `-smp` cannot express, from per-CPU ids), so presets and specs share one code path and
//! the ground-truth tests check both.

use crate::capacity::normalize_capacities;
use crate::error::TopologyError;
use crate::machine::{machine_from_ids, Arch, CpuIds, LlcScope, Machine};
use crate::source::arm_v3_9::{cpu_scale_v3_9, DtCpu, EFFICIENCY_CORTEX_A15, EFFICIENCY_CORTEX_A7};
use crate::source::spec::{parse_spec, SpecOptions};
use crate::speed::SpeedTable;

/// Preset names with a one-line description, for `--help` and error messages.
pub const PRESETS: &[(&str, &str)] = &[
    (
        "spr-2s56c2t",
        "Sapphire Rapids 2 sockets x 56 cores x 2 threads (224 CPUs), a node and an LLC per socket, distances 10/21 (seed 000)",
    ),
    (
        "2s24c2t",
        "2 sockets x 24 cores x 2 threads (96 CPUs), a node and an LLC per socket, distances 10/21 (seed 001)",
    ),
    (
        "e5-2690v2",
        "Xeon E5-2690 v2: 2 sockets x 10 cores x 2 threads (40 CPUs), 2 nodes, distances 10/21",
    ),
    (
        "tc2",
        "ARM TC2 big.LITTLE (arm64): clusters 0-1 (A15, dmips 1441 -> 1024) and 2-4 (A7, 606 -> 430), an L2 LLC per cluster; cost table arm-2013, sysbench speed 504 on the A7s (seed 002)",
    ),
    ("tc2-2big3little", "same as tc2, named after its ground-truth directory"),
    (
        "tc2-2a15",
        "ARM TC2 with only its A15 cluster (2 CPUs, capacity 1024), cost table arm-2013: seed 002's SMP configuration",
    ),
    (
        "rk3399",
        "Rockchip RK3399 big.LITTLE (arm64): CPUs 0-3 Cortex-A53 (capacity 381, 408-1416 MHz) and 4-5 Cortex-A72 (1024, 408-1800 MHz), a cpufreq policy, an L2 LLC and an energy model per cluster (Linux 6.12 device tree)",
    ),
    (
        "gs101",
        "Google Tensor gs101 (Pixel 6), three capacity classes (arm64): CPUs 0-3 Cortex-A55 (capacity 160, 300-1803 MHz), 4-5 Cortex-A76 (498, 400-2253 MHz) and 6-7 Cortex-X1 (1024, 500-2802 MHz), a cpufreq policy and an energy model per cluster, one L3 LLC (upstream device tree; its OPP tables are newer than 6.12)",
    ),
    (
        "dies-1s2d2c1t",
        "1 socket x 2 dies x 2 cores x 1 thread (4 CPUs), an LLC per die",
    ),
    (
        "numa-2s4c2t",
        "2 sockets x 4 cores x 2 threads (16 CPUs), 2 nodes, distances 10/21",
    ),
    (
        "numa-2s8c2t",
        "2 sockets x 8 cores x 2 threads (32 CPUs), 2 nodes, distances 10/21",
    ),
    (
        "numa-4n-far",
        "4 sockets x 2 cores x 2 threads (16 CPUs), 4 nodes in 2 pairs, distances 10/21/31",
    ),
    (
        "numa-4n-ring",
        "4 sockets x 4 cores x 1 thread (16 CPUs), 4 nodes in a ring, distances 10/16/22",
    ),
    (
        "smt-mc-1s4c2t",
        "1 socket x 4 cores x 2 threads (8 CPUs), one node",
    ),
    (
        "2n-2s16c2t",
        "fork-heavy 2-node server: 2 sockets x 16 cores x 2 threads (64 CPUs), distances 10/21 (seed 004)",
    ),
    (
        "4n-4s8c2t",
        "fork-heavy 4-node server: 4 sockets x 8 cores x 2 threads (64 CPUs), all remote distances 21 (seed 004)",
    ),
];

/// Builds the named preset. An unknown name is an error listing the allowed names.
pub fn preset(name: &str) -> Result<Machine, TopologyError> {
    const D2: &str = "10,21;21,10";
    let m = match name {
        "spr-2s56c2t" => spec("224,sockets=2,dies=1,cores=56,threads=2", Some(D2))?,
        "2s24c2t" => spec("96,sockets=2,dies=1,cores=24,threads=2", Some(D2))?,
        "e5-2690v2" => spec("40,sockets=2,dies=1,cores=10,threads=2", Some(D2))?,
        "tc2" | "tc2-2big3little" => tc2(5)?,
        "tc2-2a15" => tc2(2)?,
        "rk3399" => super::rk3399::rk3399()?,
        "gs101" => super::gs101::gs101()?,
        "dies-1s2d2c1t" => spec("4,sockets=1,dies=2,cores=2,threads=1", None)?,
        "numa-2s4c2t" => spec("16,sockets=2,dies=1,cores=4,threads=2", Some(D2))?,
        "numa-2s8c2t" => spec("32,sockets=2,dies=1,cores=8,threads=2", Some(D2))?,
        "numa-4n-far" => spec(
            "16,sockets=4,dies=1,cores=2,threads=2",
            Some("10,21,31,31;21,10,31,31;31,31,10,21;31,31,21,10"),
        )?,
        "numa-4n-ring" => spec(
            "16,sockets=4,dies=1,cores=4,threads=1",
            Some("10,16,22,16;16,10,16,22;22,16,10,16;16,22,16,10"),
        )?,
        "smt-mc-1s4c2t" => spec("8,sockets=1,dies=1,cores=4,threads=2", None)?,
        "2n-2s16c2t" => spec("64,sockets=2,cores=16,threads=2", Some(D2))?,
        "4n-4s8c2t" => spec(
            "64,sockets=4,cores=8,threads=2",
            Some("10,21,21,21;21,10,21,21;21,21,10,21;21,21,21,10"),
        )?,
        _ => {
            let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
            return Err(TopologyError::invalid(
                "--topology",
                name,
                &names.join(", "),
            ));
        }
    };
    Ok(Machine {
        name: name.to_string(),
        idle_states: idle_states_of(name).map(str::to_string),
        costs: costs_of(name).map(str::to_string),
        ..m
    })
}

/// The kernel-overhead cost table of each preset's hardware generation, as the engine
/// names it: the TC2 boards are 2013 ARMv7 big.LITTLE (`arm-2013`); every other preset
/// is a current x86 server or a qemu guest of one, which the engine's default table
/// (`x86-2020s`) models, so they name none.
fn costs_of(name: &str) -> Option<&'static str> {
    match name {
        "tc2" | "tc2-2big3little" | "tc2-2a15" => Some("arm-2013"),
        _ => None,
    }
}

/// The cpuidle driver table of each preset's real machine, as a `fairsim-cpuidle` preset
/// name; the ground-truth topologies were qemu guests without a cpuidle driver, and the
/// seed 004 boxes are not tied to a CPU generation, so they carry none.
fn idle_states_of(name: &str) -> Option<&'static str> {
    match name {
        "spr-2s56c2t" => Some("spr"),
        "2s24c2t" => Some("bdx"),
        "e5-2690v2" => Some("ivt"),
        "tc2" | "tc2-2big3little" => Some("tc2"),
        "tc2-2a15" => Some("tc2-2a15"),
        _ => None,
    }
}

/// An x86 preset from qemu-style arguments, one node per socket when a table is given.
fn spec(smp: &str, distance: Option<&str>) -> Result<Machine, TopologyError> {
    let mut opts = SpecOptions::new(smp, Arch::X86);
    opts.numa_distance = distance.map(str::to_string);
    parse_spec(&opts)
}

/// ARM's TC2 as the ground-truth guest saw it: two clusters of unequal size, which `-smp`
/// cannot describe, so the ids are given directly. Core ids restart in each cluster, as
/// `parse_cluster` in `drivers/base/arch_topology.c` numbers them.
/// ARM's TC2 test chip: the A15 pair (cluster 0) and, with `nr_cpus` 5, the A7 trio
/// (cluster 1). Capacities are the `capacity-dmips-mhz` values normalised as 6.12 does;
/// `cpu_power` is what Linux 3.9's arm topology code derives from the device tree with the
/// clock frequencies seed 002 added (A15 1 GHz, A7 800 MHz): 1441 and 606, or the default
/// 1024 for the A15-only configuration.
fn tc2(nr_cpus: usize) -> Result<Machine, TopologyError> {
    let a15 = DtCpu {
        efficiency: EFFICIENCY_CORTEX_A15,
        clock_frequency_hz: 1_000_000_000,
    };
    let a7 = DtCpu {
        efficiency: EFFICIENCY_CORTEX_A7,
        clock_frequency_hz: 800_000_000,
    };
    let layout: [(u32, u32, u64, DtCpu); 5] = [
        (0, 0, 1441, a15),
        (0, 1, 1441, a15),
        (1, 0, 606, a7),
        (1, 1, 606, a7),
        (1, 2, 606, a7),
    ];
    let layout = &layout[..nr_cpus];
    let raw: Vec<u64> = layout.iter().map(|l| l.2).collect();
    let caps = normalize_capacities(&raw)?;
    let ids: Vec<CpuIds> = layout
        .iter()
        .zip(caps)
        .map(|(&(cluster, core, _, _), capacity)| CpuIds {
            socket: 0,
            die: 0,
            cluster,
            core,
            thread: 0,
            node: 0,
            capacity,
        })
        .collect();
    let dt: Vec<DtCpu> = layout.iter().map(|l| l.3).collect();
    let m = machine_from_ids(
        "tc2",
        Arch::Arm64,
        &ids,
        1,
        vec![vec![10]],
        LlcScope::Cluster,
    )?;
    Ok(Machine {
        cpu_power: cpu_scale_v3_9(&dt),
        speed: tc2_speed(nr_cpus),
        ..m
    })
}

/// The speed of TC2's cores on sysbench's cpu test (the prime-number loop), measured on
/// the board: seed 002's posting (Morten Rasmussen, "[RFC PATCH 0/2] sched: Task placement
/// on mixed cpu_power systems", LKML, 2013-03-25) gives the single-thread run as ~16.5 s
/// on an A15 (1 GHz) and ~33.5 s on an A7 (800 MHz), so an A7 runs the loop at
/// 16.5 / 33.5 of an A15's speed: 1024 * 16.5 / 33.5 = 504, where the capacity the
/// scheduler sees (the DT's `capacity-dmips-mhz`) says 430. With only the A15s there is
/// nothing to correct, and the table stays empty.
fn tc2_speed(nr_cpus: usize) -> SpeedTable {
    let mut t = SpeedTable::new();
    if nr_cpus > 2 {
        let speeds = (0..nr_cpus)
            .map(|cpu| {
                if cpu < 2 {
                    TC2_A15_SYSBENCH
                } else {
                    TC2_A7_SYSBENCH
                }
            })
            .collect();
        t.insert("sysbench", speeds);
    }
    t
}

/// An A15's sysbench speed on TC2: the biggest core, 1024.
const TC2_A15_SYSBENCH: u32 = 1024;

/// An A7's sysbench speed on TC2: 1024 * 16.5 / 33.5 = 504 (see [`tc2_speed`]).
const TC2_A7_SYSBENCH: u32 = 504;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_preset_builds() {
        for (name, _) in PRESETS {
            let m = preset(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(m.name, *name);
        }
    }

    #[test]
    fn tc2_presets_carry_their_generation() {
        for name in ["tc2", "tc2-2big3little"] {
            let m = preset(name).unwrap();
            assert_eq!(m.costs.as_deref(), Some("arm-2013"), "{name}");
            assert_eq!(
                m.speed.get("sysbench"),
                Some(&[1024, 1024, 504, 504, 504][..])
            );
            // The speed is not the capacity: the scheduler still sees 430.
            assert_eq!(m.cpus[2].capacity, 430);
        }
        let m = preset("tc2-2a15").unwrap();
        assert_eq!(m.costs.as_deref(), Some("arm-2013"));
        assert!(m.speed.is_empty());
        for (name, _) in PRESETS.iter().filter(|(n, _)| !n.starts_with("tc2")) {
            let m = preset(name).unwrap();
            assert!(m.costs.is_none() && m.speed.is_empty(), "{name}");
        }
    }

    #[test]
    fn unknown_preset_lists_names() {
        let err = preset("nope").unwrap_err().to_string();
        assert!(
            err.contains("--topology") && err.contains("spr-2s56c2t"),
            "{err}"
        );
    }
}
