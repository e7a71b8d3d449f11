//! The idle-state tables fairsim ships: ports of the tables the kernel's cpuidle drivers
//! register on the machines fairsim models, and fairsim's own `flat` table for machines
//! with no known driver.
//!
//! Every value is what the driver registers on a stock boot, in nanoseconds as the cpuidle
//! core keeps them (`exit_latency_ns`, `target_residency_ns`): the drivers write
//! microseconds and `__cpuidle_driver_init` multiplies by `NSEC_PER_USEC`.
//!
//! Sources read (Linux, GPL-2.0-only; the numbers are facts, the code is fairsim's):
//!
//! - drivers/idle/intel_idle.c: `bdw_cstates`, `ivt_cstates{,_4s,_8s}`, `spr_cstates`,
//!   `intel_idle_ids`, `intel_idle_init_cstates_icpu` and the `*_idle_state_table_update`
//!   hooks, read in torvalds/linux at a v6.3-v6.7 era snapshot (blob of commit
//!   00433eae1771) and in gregkh/linux at a post-v6.12 snapshot (6030e484094f, with
//!   `X86_MATCH_VFM` and `CPUIDLE_FLAG_PARTIAL_HINT_MATCH`). These tables and hooks are
//!   identical in both, so v6.12.117 has them too.
//! - drivers/cpuidle/poll_state.c `cpuidle_poll_state_init` (the `POLL` state).
//! - drivers/cpuidle/cpuidle-big_little.c, arch/arm/include/asm/cpuidle.h
//!   (`ARM_CPUIDLE_WFI_STATE`), drivers/cpuidle/dt_idle_states.c and
//!   arch/arm/boot/dts/arm/vexpress-v2p-ca15_a7.dts (torvalds/linux).
//! - drivers/cpuidle/cpuidle-haltpoll.c (torvalds/linux; the static state is the same in
//!   every version since the driver was added in v5.4).

mod arm;
mod intel;
mod virt;

pub use arm::{big_little, TC2_CPUS};

use crate::states::{poll_state, IdleState, IdleStates, IdleTable};

/// The exit latency (and target residency) of `flat`'s C1 when no cost is given: the
/// engine's default `idle_exit` cost, 1 us.
pub const FLAT_DEFAULT_EXIT_NS: u64 = 1_000;

/// The presets, canonical name first, with a one-line description naming the kernel
/// table, for `--help` and error messages.
pub const PRESETS: &[(&str, &str)] = &[
    (
        "bdx",
        "Broadwell-X/EX Xeon (model 0x4F; machine 2s24c2t): intel_idle bdw_cstates via idle_cpu_bdx, POLL C1 C1E C3 C6",
    ),
    (
        "ivt",
        "Ivy Bridge-EP Xeon, 1-2 sockets (machine e5-2690v2): intel_idle ivt_cstates, POLL C1 C1E C3 C6",
    ),
    (
        "ivt-4s",
        "Ivy Bridge-EP/EX Xeon, 3-4 sockets: intel_idle ivt_cstates_4s",
    ),
    (
        "ivt-8s",
        "Ivy Bridge-EX Xeon, 5-8 sockets: intel_idle ivt_cstates_8s",
    ),
    (
        "spr",
        "Sapphire/Emerald Rapids Xeon (machine spr-2s56c2t): intel_idle spr_cstates, POLL C1 C1E C6 (C6 290/800 us, package C6 allowed)",
    ),
    (
        "spr-nopc6",
        "spr_cstates as spr_idle_state_table_update leaves it when the BIOS disables package C6: C6 190/600 us",
    ),
    (
        "big_little",
        "ARM TC2 (machines tc2, tc2-2big3little; 5 CPUs): cpuidle-big_little big_idle (CPUs 0-1) and little_idle (2-4), WFI + DT cluster sleep",
    ),
    (
        "big_idle",
        "ARM TC2's A15 cluster alone (machine tc2-2a15): cpuidle-big_little big_idle on every CPU, WFI + DT cluster-sleep-big",
    ),
    (
        "haltpoll",
        "KVM guest: cpuidle-haltpoll, POLL and haltpoll idle (1/1 us)",
    ),
    (
        "flat",
        "fairsim's own, not a kernel table: POLL and C1 with exit latency = target residency = the idle_exit cost (flat:DURATION to set it)",
    ),
];

/// Other names accepted for a preset: fairsim's machine names and the CPUs' common names.
pub const ALIASES: &[(&str, &str)] = &[
    ("2s24c2t", "bdx"),
    ("broadwell-x", "bdx"),
    ("e5-2690v2", "ivt"),
    ("ivybridge-x", "ivt"),
    ("spr-2s56c2t", "spr"),
    ("sapphirerapids", "spr"),
    ("emr", "spr"),
    ("tc2", "big_little"),
    ("tc2-2big3little", "big_little"),
    ("tc2-2a15", "big_idle"),
];

/// The canonical preset name for `name` (a preset or an alias, ASCII case ignored).
pub fn canonical(name: &str) -> Option<&'static str> {
    PRESETS
        .iter()
        .map(|&(n, _)| n)
        .find(|n| n.eq_ignore_ascii_case(name))
        .or_else(|| {
            ALIASES
                .iter()
                .find(|(a, _)| a.eq_ignore_ascii_case(name))
                .map(|&(_, n)| n)
        })
}

/// The preset `name` (or an alias) for a machine of `nr_cpus` CPUs. `None` for an unknown
/// name, and for `big_little` unless `nr_cpus` is [`TC2_CPUS`] (CPUs 0-1 big, 2-4 LITTLE
/// as on the board; [`big_little`] takes any other split). `flat` uses
/// [`FLAT_DEFAULT_EXIT_NS`]; call [`flat`] for another cost.
pub fn preset(name: &str, nr_cpus: usize) -> Option<IdleStates> {
    let uniform = |t: IdleTable| Some(IdleStates::uniform(t, nr_cpus));
    match canonical(name)? {
        "bdx" => uniform(intel::bdx()),
        "ivt" => uniform(intel::ivt(2)),
        "ivt-4s" => uniform(intel::ivt(4)),
        "ivt-8s" => uniform(intel::ivt(8)),
        "spr" => uniform(intel::spr(true)),
        "spr-nopc6" => uniform(intel::spr(false)),
        "big_little" => arm::tc2(nr_cpus),
        "big_idle" => uniform(arm::big_table()),
        "haltpoll" => uniform(virt::haltpoll()),
        "flat" => Some(flat(FLAT_DEFAULT_EXIT_NS, nr_cpus)),
        _ => None,
    }
}

/// fairsim's compatibility table for machines with no known cpuidle driver; it is not a
/// kernel table. `POLL` (0/0, polling) as x86 drivers have it, then `C1` with exit latency
/// and target residency both `exit_ns` (the engine passes its `idle_exit` cost) and no
/// timer stop, so that leaving idle costs what fairsim charged before it modelled cpuidle.
pub fn flat(exit_ns: u64, nr_cpus: usize) -> IdleStates {
    let c1 = IdleState {
        name: "C1".to_string(),
        exit_latency_ns: exit_ns,
        target_residency_ns: exit_ns,
        polling: false,
        timer_stop: false,
        disabled: false,
    };
    let table = IdleTable {
        driver: "fairsim".to_string(),
        source: format!("fairsim flat table (not a kernel table), C1 {exit_ns} ns"),
        states: vec![poll_state(), c1],
    };
    IdleStates::uniform(table, nr_cpus)
}

/// The preset a fairsim machine preset boots with, or `None` for machines with no known
/// cpuidle driver (the engine then uses [`flat`]).
///
/// `2s24c2t` is a 2016 two-socket Xeon with 24 cores per socket. Intel's only 24-core
/// parts of 2016 are Broadwell-EX (Xeon E7-8890 v4, June 2016); the Broadwell-EP E5 v4
/// line stops at 22 cores and Skylake-SP came in 2017. Broadwell-EP and -EX are both
/// family 6 model 0x4F (`INTEL_BROADWELL_X`), which `intel_idle_ids` maps to
/// `idle_cpu_bdx` and so to `bdw_cstates`: the `bdx` preset.
pub fn machine_default(machine: &str) -> Option<&'static str> {
    match machine {
        "2s24c2t" => Some("bdx"),
        "e5-2690v2" => Some("ivt"),
        "spr-2s56c2t" => Some("spr"),
        "tc2" | "tc2-2big3little" => Some("big_little"),
        "tc2-2a15" => Some("big_idle"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_resolve_to_presets() {
        for &(alias, target) in ALIASES {
            assert_eq!(canonical(alias), Some(target));
            assert!(PRESETS.iter().any(|&(n, _)| n == target), "{alias}");
        }
        assert_eq!(canonical("SPR"), Some("spr"));
        assert_eq!(canonical("Tc2"), Some("big_little"));
        assert_eq!(canonical("skx"), None);
        assert!(preset("skx", 4).is_none());
        assert_eq!(preset("2s24c2t", 96), preset("bdx", 96));
        assert_eq!(preset("tc2", 5), preset("big_little", 5));
        assert!(preset("tc2", 6).is_none());
    }

    #[test]
    fn machine_defaults() {
        assert_eq!(machine_default("2s24c2t"), Some("bdx"));
        assert_eq!(machine_default("e5-2690v2"), Some("ivt"));
        assert_eq!(machine_default("spr-2s56c2t"), Some("spr"));
        assert_eq!(machine_default("tc2"), Some("big_little"));
        assert_eq!(machine_default("tc2-2big3little"), Some("big_little"));
        assert_eq!(machine_default("numa-2s4c2t"), None);
        for m in ["2s24c2t", "e5-2690v2", "spr-2s56c2t", "tc2"] {
            let p = machine_default(m).expect("has a default");
            let n = if m == "tc2" { 5 } else { 4 };
            assert!(preset(p, n).is_some(), "{m}");
        }
    }

    #[test]
    fn flat_table() {
        let m = flat(1_000, 3);
        assert_eq!(m.cpu_table, vec![0, 0, 0]);
        let t = m.table_of(2);
        assert_eq!(t.driver, "fairsim");
        assert_eq!(t.states[0], poll_state());
        let c1 = &t.states[1];
        assert_eq!(
            (c1.name.as_str(), c1.exit_latency_ns, c1.target_residency_ns),
            ("C1", 1_000, 1_000)
        );
        assert!(!c1.polling && !c1.timer_stop && !c1.disabled);
        assert_eq!(preset("flat", 3), Some(m));
        assert_eq!(
            flat(2_500, 1).tables[0].states[1].target_residency_ns,
            2_500
        );
    }
}
