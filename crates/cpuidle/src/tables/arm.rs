//! ARM TC2 (Versatile Express V2P-CA15_A7, two Cortex-A15 and three Cortex-A7): the two
//! drivers of drivers/cpuidle/cpuidle-big_little.c, Linux 6.12.
//!
//! The driver registers one `cpuidle_driver` per cluster type, chosen by part number
//! (`bl_idle_driver_init` with `ARM_CPU_PART_CORTEX_A15` / `ARM_CPU_PART_CORTEX_A7`):
//! `big_idle` and `little_idle`. Each has two states:
//!
//! - state 0, `ARM_CPUIDLE_WFI_STATE` (arch/arm/include/asm/cpuidle.h): `WFI`, exit
//!   latency 1 us, target residency 1 us, no flags. ARM has no polling state.
//! - state 1, the cluster power-down. The driver's static entry (big: 500/2000 us, LITTLE:
//!   700/2500 us, `CPUIDLE_FLAG_TIMER_STOP`) is overwritten at boot by
//!   `dt_init_idle_driver(drv, bl_idle_state_match, 1)` from the CPUs' `cpu-idle-states`
//!   in the device tree. The TC2 tree (arch/arm/boot/dts/arm/vexpress-v2p-ca15_a7.dts)
//!   gives `cluster-sleep-big` entry 1000 us, exit 700 us, min-residency 2000 us and
//!   `cluster-sleep-little` entry 1000 us, exit 500 us, min-residency 2500 us, both with
//!   `local-timer-stop`. `init_state_node` (drivers/cpuidle/dt_idle_states.c) sets the exit
//!   latency to entry + exit when `wakeup-latency-us` is absent, the target residency to
//!   min-residency, `CPUIDLE_FLAG_TIMER_STOP` from `local-timer-stop`, and the name to the
//!   node name cut to `CPUIDLE_NAME_LEN - 1` = 15 characters: `cluster-sleep-b` and
//!   `cluster-sleep-l`. So a stock boot registers big 1700/2000 us and LITTLE 1500/2500 us.
//!
//! The real board runs a 32-bit ARM kernel (MCPM); fairsim's `tc2` machine is described
//! as arm64, but its idle states are this board's.

use crate::states::{state_us, IdleState, IdleStates, IdleTable};

/// The number of CPUs of fairsim's `tc2` machine: 0-1 big (A15), 2-4 LITTLE (A7).
pub const TC2_CPUS: usize = 5;

/// `ARM_CPUIDLE_WFI_STATE`: `WFI`, 1 us exit latency and target residency, no flags.
fn wfi() -> IdleState {
    state_us("WFI", 1, 1, false)
}

/// A cluster-sleep state as `init_state_node` builds it from a DT idle-state node without
/// `wakeup-latency-us`: exit latency = entry + exit, target residency = min-residency.
fn dt_cluster_sleep(
    node_name: &str,
    entry_us: u64,
    exit_us: u64,
    min_residency_us: u64,
) -> IdleState {
    // The kernel copies the node name into a 16-byte array (CPUIDLE_NAME_LEN), keeping 15
    // characters and the terminator; node names are ASCII, so a char cut is a byte cut.
    let name: String = node_name.chars().take(15).collect();
    state_us(&name, entry_us + exit_us, min_residency_us, true)
}

/// `bl_idle_big_driver` after the DT override: WFI and `cluster-sleep-b` 1700/2000 us.
pub(super) fn big_table() -> IdleTable {
    IdleTable {
        driver: "big_idle".to_string(),
        source: "cpuidle-big_little bl_idle_big_driver with the TC2 DT cluster-sleep-big \
                 (vexpress-v2p-ca15_a7.dts), Linux 6.12"
            .to_string(),
        states: vec![
            wfi(),
            dt_cluster_sleep("cluster-sleep-big", 1000, 700, 2000),
        ],
    }
}

/// `bl_idle_little_driver` after the DT override: WFI and `cluster-sleep-l` 1500/2500 us.
pub(super) fn little_table() -> IdleTable {
    IdleTable {
        driver: "little_idle".to_string(),
        source: "cpuidle-big_little bl_idle_little_driver with the TC2 DT cluster-sleep-little \
                 (vexpress-v2p-ca15_a7.dts), Linux 6.12"
            .to_string(),
        states: vec![
            wfi(),
            dt_cluster_sleep("cluster-sleep-little", 1000, 500, 2500),
        ],
    }
}

/// The big.LITTLE tables for a machine whose CPU `i` is a big (A15) core when `big[i]`,
/// a LITTLE (A7) core otherwise: `tables[0]` is `big_idle`, `tables[1]` `little_idle`.
/// This is how `bl_idle_driver_init` builds each driver's cpumask from the part numbers.
pub fn big_little(big: &[bool]) -> IdleStates {
    IdleStates {
        tables: vec![big_table(), little_table()],
        cpu_table: big.iter().map(|&b| if b { 0 } else { 1 }).collect(),
    }
}

/// fairsim's `tc2`: CPUs 0-1 big, 2-4 LITTLE. `None` unless `nr_cpus` is 5, because the
/// cluster split is the board's and not something to stretch over another machine.
pub(super) fn tc2(nr_cpus: usize) -> Option<IdleStates> {
    if nr_cpus != TC2_CPUS {
        return None;
    }
    Some(big_little(&[true, true, false, false, false]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tc2_big_and_little_tables() {
        let m = tc2(5).expect("5 CPUs");
        assert_eq!(m.cpu_table, vec![0, 0, 1, 1, 1]);
        let big = m.table_of(0);
        let little = m.table_of(4);
        assert_eq!(big.driver, "big_idle");
        assert_eq!(little.driver, "little_idle");
        // WFI: ARM_CPUIDLE_WFI_STATE, exit_latency 1, target_residency 1 (us).
        for t in [big, little] {
            let w = &t.states[0];
            assert_eq!(
                (w.name.as_str(), w.exit_latency_ns, w.target_residency_ns),
                ("WFI", 1_000, 1_000)
            );
            assert!(!w.polling && !w.timer_stop && !w.disabled);
            assert!(t.states[1].timer_stop && !t.states[1].polling && !t.states[1].disabled);
        }
        // DT cluster-sleep-big: entry 1000 + exit 700 us, min-residency 2000 us.
        let b = &big.states[1];
        assert_eq!(
            (b.name.as_str(), b.exit_latency_ns, b.target_residency_ns),
            ("cluster-sleep-b", 1_700_000, 2_000_000)
        );
        // DT cluster-sleep-little: entry 1000 + exit 500 us, min-residency 2500 us.
        let l = &little.states[1];
        assert_eq!(
            (l.name.as_str(), l.exit_latency_ns, l.target_residency_ns),
            ("cluster-sleep-l", 1_500_000, 2_500_000)
        );
    }

    #[test]
    fn tc2_needs_five_cpus() {
        assert!(tc2(4).is_none());
        assert!(tc2(8).is_none());
    }

    #[test]
    fn custom_big_mask() {
        let m = big_little(&[false, true, true]);
        assert_eq!(m.cpu_table, vec![1, 0, 0]);
        assert_eq!(m.table_of(0).driver, "little_idle");
    }
}
