//! The intel_idle tables of the Xeon generations fairsim models, registered the way
//! `intel_idle_init_cstates_icpu` (drivers/idle/intel_idle.c) registers them on a stock
//! boot of Linux 6.12.
//!
//! What the driver does with a table, in the order it matters here:
//!
//! 1. `intel_idle_cpuidle_driver_init` puts `POLL` in state 0 (`cpuidle_poll_state_init`).
//! 2. A model hook may edit the table first: `ivt_idle_state_table_update` swaps in the
//!    4- or 8-socket table by socket count, `spr_idle_state_table_update` lowers C6 when
//!    the BIOS forbids package C6.
//! 3. Each row whose MWAIT hint has no sub-state in CPUID leaf 5 is dropped
//!    (`intel_idle_verify_cstate`); the others are copied in order.
//! 4. A copied state is off (`CPUIDLE_FLAG_OFF`) when the `states_off` mask names it, or
//!    when the model has `use_acpi`, the BIOS `_CST` does not list its hint and it lacks
//!    `CPUIDLE_FLAG_ALWAYS_ENABLE`. fairsim assumes no `states_off` and a `_CST` that lists
//!    every hint (C-states enabled in the BIOS setup), so nothing is off by default;
//!    `--idle-states PRESET,no-NAME` reproduces a box whose BIOS hides a state.
//! 5. `CPUIDLE_FLAG_TIMER_STOP` is set only without ARAT (the always-running APIC timer)
//!    and only for hints deeper than C1 (`intel_idle_state_needs_timer_stop`). All three
//!    Xeon generations here have ARAT, so no state stops the local timer.
//!
//! `c1e_promotion` does not change the table: these models have
//! `disable_promotion_to_c1e`, so the driver clears the hardware's C1 -> C1E promotion and
//! C1 and C1E stay two separate states, both enabled.

use crate::states::{poll_state, IdleState, IdleTable, NSEC_PER_USEC};

/// One row of an intel_idle `struct cpuidle_state` table: the fields that decide what the
/// driver registers, latencies in microseconds as the driver writes them.
#[derive(Debug, Clone, Copy)]
struct Row {
    /// `name`.
    name: &'static str,
    /// The MWAIT hint kept in the top byte of `flags` (`MWAIT2flg`).
    mwait: u8,
    /// `exit_latency`, in microseconds.
    exit_us: u64,
    /// `target_residency`, in microseconds.
    target_us: u64,
}

const fn row(name: &'static str, mwait: u8, exit_us: u64, target_us: u64) -> Row {
    Row {
        name,
        mwait,
        exit_us,
        target_us,
    }
}

/// `bdw_cstates`, the table of `idle_cpu_bdw` (client Broadwell) and `idle_cpu_bdx`
/// (Broadwell-X and Broadwell-D). Client parts register all eight rows; the Xeons stop at
/// C6 because their CPUID leaf 5 has no deeper level (see [`BDX_MWAIT_SUBSTATES`]).
const BDW_CSTATES: [Row; 8] = [
    row("C1", 0x00, 2, 2),
    row("C1E", 0x01, 10, 20),
    row("C3", 0x10, 40, 100),
    row("C6", 0x20, 133, 400),
    row("C7s", 0x32, 166, 500),
    row("C8", 0x40, 300, 900),
    row("C9", 0x50, 600, 1800),
    row("C10", 0x60, 2600, 7700),
];

/// `ivt_cstates`: Ivy Bridge-EP/EX (`idle_cpu_ivt`) with one or two sockets.
const IVT_CSTATES: [Row; 4] = [
    row("C1", 0x00, 1, 1),
    row("C1E", 0x01, 10, 80),
    row("C3", 0x10, 59, 156),
    row("C6", 0x20, 82, 300),
];

/// `ivt_cstates_4s`: Ivy Bridge-EP/EX with three or four sockets.
const IVT_CSTATES_4S: [Row; 4] = [
    row("C1", 0x00, 1, 1),
    row("C1E", 0x01, 10, 250),
    row("C3", 0x10, 59, 300),
    row("C6", 0x20, 84, 400),
];

/// `ivt_cstates_8s`: Ivy Bridge-EX with more than four sockets.
const IVT_CSTATES_8S: [Row; 4] = [
    row("C1", 0x00, 1, 1),
    row("C1E", 0x01, 10, 500),
    row("C3", 0x10, 59, 600),
    row("C6", 0x20, 88, 700),
];

/// `spr_cstates`: Sapphire Rapids and Emerald Rapids (`idle_cpu_spr`). C6's numbers are
/// the worst case of package C6; `spr_idle_state_table_update` replaces them with
/// [`SPR_C6_NO_PC6`] when the BIOS limits the package to PC0/PC1.
const SPR_CSTATES: [Row; 3] = [
    row("C1", 0x00, 1, 1),
    row("C1E", 0x01, 2, 4),
    row("C6", 0x20, 290, 800),
];

/// C6's (exit latency, target residency) in microseconds after
/// `spr_idle_state_table_update` finds package C6 disabled
/// (`MSR_PKG_CST_CONFIG_CONTROL & 0x7 < 2`): the core C6 numbers.
const SPR_C6_NO_PC6: (u64, u64) = (190, 600);

/// CPUID.05H:EDX of Haswell-X/Broadwell-X class Xeons: sub-state counts per MWAIT level in
/// nibbles (C1 level 2, C3 level 1, C6 level 2, nothing deeper). Boot logs of Haswell-X
/// (model 0x3F) and Broadwell-D (model 0x56, also `idle_cpu_bdx`) print
/// `MWAIT substates: 0x2120`, and the Broadwell-EP/EX datasheets list core C1, C1E, C3
/// and C6 only, so C7s to C10 of `bdw_cstates` are dropped.
const BDX_MWAIT_SUBSTATES: u32 = 0x2120;

/// CPUID.05H:EDX as Sandy Bridge and Ivy Bridge parts print it (`0x1120`): every level
/// `ivt_cstates` uses (C1, C3 and C6 hints) is present.
const IVT_MWAIT_SUBSTATES: u32 = 0x1120;

/// CPUID.05H:EDX as Xeon Scalable parts print it (`0x2020`, C1 and C6 levels): every hint
/// `spr_cstates` uses is present.
const SPR_MWAIT_SUBSTATES: u32 = 0x2020;

/// `intel_idle_verify_cstate`: whether CPUID leaf 5 reports any sub-state at the MWAIT
/// level of `hint` (the level is the hint's high nibble plus one, one nibble per level).
fn mwait_level_present(hint: u8, mwait_substates: u32) -> bool {
    let level = u32::from(hint >> 4) + 1;
    level < 8 && (mwait_substates >> (level * 4)) & 0xF != 0
}

/// `intel_idle_state_needs_timer_stop`: without ARAT the local APIC timer stops in every
/// state deeper than C1 (a non-zero C-state nibble in the hint); with ARAT in none.
fn needs_timer_stop(hint: u8, arat: bool) -> bool {
    !arat && (hint >> 4) != 0
}

/// Registers `rows` as intel_idle does on a CPU with `mwait_substates` in CPUID leaf 5 and
/// ARAT present or not: `POLL` first, then each row the CPU supports, in order.
fn register(rows: &[Row], mwait_substates: u32, arat: bool, source: String) -> IdleTable {
    let mut states = vec![poll_state()];
    for r in rows {
        if !mwait_level_present(r.mwait, mwait_substates) {
            continue;
        }
        states.push(IdleState {
            name: r.name.to_string(),
            exit_latency_ns: r.exit_us * NSEC_PER_USEC,
            target_residency_ns: r.target_us * NSEC_PER_USEC,
            polling: false,
            timer_stop: needs_timer_stop(r.mwait, arat),
            disabled: false,
        });
    }
    IdleTable {
        driver: "intel_idle".to_string(),
        source,
        states,
    }
}

/// Broadwell-X (family 6 model 0x4F, `INTEL_BROADWELL_X`): `intel_idle_ids` maps it to
/// `idle_cpu_bdx`, whose table is `bdw_cstates` (with `use_acpi` and
/// `disable_promotion_to_c1e`). No model hook edits the table. Registered: POLL,
/// C1 2/2 us, C1E 10/20 us, C3 40/100 us, C6 133/400 us.
///
/// This is fairsim's `2s24c2t`: a 24-core Xeon of 2016 can only be Broadwell-EX (E7-8890
/// v4), since Broadwell-EP stops at 22 cores and Skylake-SP is from 2017, and both
/// Broadwell-EP and -EX are model 0x4F.
pub(super) fn bdx() -> IdleTable {
    register(
        &BDW_CSTATES,
        BDX_MWAIT_SUBSTATES,
        true,
        "intel_idle bdw_cstates via idle_cpu_bdx (Broadwell-X, model 0x4F), Linux 6.12".to_string(),
    )
}

/// Ivy Bridge-EP/EX (family 6 model 0x3E, `INTEL_IVYBRIDGE_X` -> `idle_cpu_ivt`), with
/// the table `ivt_idle_state_table_update` picks for `sockets` packages: `ivt_cstates`
/// up to 2, `ivt_cstates_4s` up to 4, `ivt_cstates_8s` beyond.
pub(super) fn ivt(sockets: u32) -> IdleTable {
    let (rows, name): (&[Row], &str) = if sockets > 4 {
        (&IVT_CSTATES_8S, "ivt_cstates_8s")
    } else if sockets > 2 {
        (&IVT_CSTATES_4S, "ivt_cstates_4s")
    } else {
        (&IVT_CSTATES, "ivt_cstates")
    };
    register(
        rows,
        IVT_MWAIT_SUBSTATES,
        true,
        format!("intel_idle {name} via idle_cpu_ivt (Ivy Bridge-EP, model 0x3E), Linux 6.12"),
    )
}

/// Sapphire Rapids (family 6 model 0x8F, `INTEL_SAPPHIRERAPIDS_X`; Emerald Rapids 0xCF
/// shares it) -> `idle_cpu_spr` with `spr_cstates`. `package_c6` says whether the BIOS
/// allows package C6; without it `spr_idle_state_table_update` gives C6 the core C6
/// numbers.
pub(super) fn spr(package_c6: bool) -> IdleTable {
    let mut rows = SPR_CSTATES;
    let mut source = String::from("intel_idle spr_cstates via idle_cpu_spr (Sapphire Rapids)");
    if !package_c6 {
        rows[2].exit_us = SPR_C6_NO_PC6.0;
        rows[2].target_us = SPR_C6_NO_PC6.1;
        source.push_str(", package C6 off (spr_idle_state_table_update)");
    }
    source.push_str(", Linux 6.12");
    register(&rows, SPR_MWAIT_SUBSTATES, true, source)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (name, exit latency ns, target residency ns) of every state of `t`.
    fn values(t: &IdleTable) -> Vec<(&str, u64, u64)> {
        t.states
            .iter()
            .map(|s| (s.name.as_str(), s.exit_latency_ns, s.target_residency_ns))
            .collect()
    }

    fn assert_x86_flags(t: &IdleTable) {
        assert_eq!(t.driver, "intel_idle");
        assert!(t.states[0].polling, "state 0 is POLL");
        for s in &t.states[1..] {
            assert!(!s.polling, "{} does not poll", s.name);
        }
        // ARAT: intel_idle sets no timer-stop flag, and nothing is off on a stock boot.
        assert!(t.states.iter().all(|s| !s.timer_stop && !s.disabled));
    }

    #[test]
    fn bdx_is_bdw_cstates_up_to_c6() {
        // bdw_cstates in drivers/idle/intel_idle.c: C1 2/2, C1E 10/20, C3 40/100,
        // C6 133/400 us; C7s (0x32), C8, C9 and C10 fail intel_idle_verify_cstate.
        let t = bdx();
        assert_eq!(
            values(&t),
            vec![
                ("POLL", 0, 0),
                ("C1", 2_000, 2_000),
                ("C1E", 10_000, 20_000),
                ("C3", 40_000, 100_000),
                ("C6", 133_000, 400_000),
            ]
        );
        assert_x86_flags(&t);
        assert!(t.source.contains("bdw_cstates") && t.source.contains("idle_cpu_bdx"));
    }

    #[test]
    fn client_broadwell_would_keep_the_deep_states() {
        // The same table on a CPU reporting every level keeps all eight rows, which is why
        // the BDX preset's cut at C6 comes from CPUID and not from the table.
        let t = register(&BDW_CSTATES, 0x1111_2120, true, String::new());
        assert_eq!(t.states.len(), 9);
        assert_eq!(t.states[8].name, "C10");
        assert_eq!(t.states[8].exit_latency_ns, 2_600_000);
        assert_eq!(t.states[8].target_residency_ns, 7_700_000);
    }

    #[test]
    fn ivt_tables_by_socket_count() {
        // ivt_cstates (1-2 sockets): C1 1/1, C1E 10/80, C3 59/156, C6 82/300 us.
        let two = ivt(2);
        assert_eq!(
            values(&two),
            vec![
                ("POLL", 0, 0),
                ("C1", 1_000, 1_000),
                ("C1E", 10_000, 80_000),
                ("C3", 59_000, 156_000),
                ("C6", 82_000, 300_000),
            ]
        );
        assert_x86_flags(&two);
        assert_eq!(values(&ivt(1)), values(&two));
        // ivt_cstates_4s: C1E 10/250, C3 59/300, C6 84/400 us.
        let four = ivt(4);
        assert_eq!(
            values(&four)[2..],
            [
                ("C1E", 10_000, 250_000),
                ("C3", 59_000, 300_000),
                ("C6", 84_000, 400_000)
            ]
        );
        assert_eq!(values(&ivt(3)), values(&four));
        // ivt_cstates_8s: C1E 10/500, C3 59/600, C6 88/700 us.
        let eight = ivt(5);
        assert_eq!(
            values(&eight)[2..],
            [
                ("C1E", 10_000, 500_000),
                ("C3", 59_000, 600_000),
                ("C6", 88_000, 700_000)
            ]
        );
        assert!(eight.source.contains("ivt_cstates_8s"));
    }

    #[test]
    fn spr_with_and_without_package_c6() {
        // spr_cstates: C1 1/1, C1E 2/4, C6 290/800 us.
        let t = spr(true);
        assert_eq!(
            values(&t),
            vec![
                ("POLL", 0, 0),
                ("C1", 1_000, 1_000),
                ("C1E", 2_000, 4_000),
                ("C6", 290_000, 800_000),
            ]
        );
        assert_x86_flags(&t);
        // spr_idle_state_table_update with PC6 off: C6 190/600 us.
        let no_pc6 = spr(false);
        assert_eq!(values(&no_pc6)[3], ("C6", 190_000, 600_000));
        assert_eq!(values(&no_pc6)[..3], values(&t)[..3]);
    }

    #[test]
    fn timer_stop_rule_without_arat() {
        // Without ARAT only hints deeper than C1 stop the timer: C1/C1E keep it.
        let t = register(&BDW_CSTATES, BDX_MWAIT_SUBSTATES, false, String::new());
        let stops: Vec<bool> = t.states.iter().map(|s| s.timer_stop).collect();
        assert_eq!(stops, vec![false, false, false, true, true]);
    }
}
