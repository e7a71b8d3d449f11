//! Tests of the per-era tunable table and the handlers' semantics.

use super::*;

fn written(kernel: Kernel, writes: &[(Place, &str)]) -> Result<Tunables, TunableError> {
    let mut t = Tunables::default();
    for &(place, text) in writes {
        t.write(kernel, place, text)?;
    }
    Ok(t)
}

fn err(kernel: Kernel, place: Place, text: &str) -> String {
    let e = written(kernel, &[(place, text)]).unwrap_err().to_string();
    assert!(!e.contains('\n'), "{e}");
    e
}

#[test]
fn each_era_has_its_names_in_its_place() {
    for k in [Kernel::V3_9, Kernel::V4_5, Kernel::V4_15, Kernel::V4_16] {
        assert_eq!(
            names_at(k, Place::Sysctl),
            [
                "kernel.sched_latency_ns",
                "kernel.sched_min_granularity_ns",
                "kernel.sched_wakeup_granularity_ns",
                "kernel.sched_migration_cost_ns",
                "kernel.sched_nr_migrate",
                "kernel.sched_tunable_scaling",
                "kernel.sched_child_runs_first",
                "kernel.sched_autogroup_enabled",
                "kernel.sched_cfs_bandwidth_slice_us",
            ],
            "{k}"
        );
        assert!(names_at(k, Place::Debugfs).is_empty(), "{k}");
    }
    assert_eq!(
        names_at(Kernel::V6_5, Place::Debugfs),
        [
            "latency_ns",
            "min_granularity_ns",
            "wakeup_granularity_ns",
            "migration_cost_ns",
            "nr_migrate",
            "tunable_scaling",
        ]
    );
    assert_eq!(
        names_at(Kernel::V6_5, Place::Sysctl),
        [
            "kernel.sched_child_runs_first",
            "kernel.sched_energy_aware",
            "kernel.sched_util_clamp_min",
            "kernel.sched_util_clamp_max",
            "kernel.sched_util_clamp_min_rt_default",
            "kernel.sched_autogroup_enabled",
            "kernel.sched_cfs_bandwidth_slice_us"
        ]
    );
    assert_eq!(
        names_at(Kernel::V6_12, Place::Debugfs),
        [
            "base_slice_ns",
            "migration_cost_ns",
            "nr_migrate",
            "tunable_scaling"
        ]
    );
    assert_eq!(
        names_at(Kernel::V6_12, Place::Sysctl),
        [
            "kernel.sched_energy_aware",
            "kernel.sched_util_clamp_min",
            "kernel.sched_util_clamp_max",
            "kernel.sched_util_clamp_min_rt_default",
            "kernel.sched_autogroup_enabled",
            "kernel.sched_cfs_bandwidth_slice_us"
        ]
    );
}

#[test]
fn the_uclamp_sysctls_keep_min_at_or_below_max_and_turn_the_key_on() {
    let st = |w: &[(Place, &str)]| {
        written(Kernel::V6_12, w)
            .map(|t| t.state(Kernel::V6_12, 6, 500_000, 32))
            .map_err(|e| e.to_string())
    };
    let boot = st(&[]).unwrap();
    assert_eq!(
        (boot.uclamp_min, boot.uclamp_max, boot.uclamp_min_rt_default),
        (1024, 1024, 1024)
    );
    assert!(!boot.uclamp_key);
    // Lowering the maximum below the minimum (1024 at boot) is refused, whichever
    // sysctl breaks the rule, and names all three values.
    let e = st(&[(Place::Sysctl, "kernel.sched_util_clamp_max=512")]).unwrap_err();
    assert_eq!(
        e,
        "--sysctl: the write would leave sched_util_clamp_min=1024, sched_util_clamp_max=512, sched_util_clamp_min_rt_default=1024, which sysctl_sched_uclamp_handler refuses (EINVAL); allowed: sched_util_clamp_min <= sched_util_clamp_max <= 1024 and sched_util_clamp_min_rt_default <= 1024 (write them in an order that keeps the minimum at or below the maximum)"
    );
    let ok = st(&[
        (Place::Sysctl, "kernel.sched_util_clamp_min=0"),
        (Place::Sysctl, "kernel.sched_util_clamp_max=512"),
    ])
    .unwrap();
    assert_eq!((ok.uclamp_min, ok.uclamp_max), (0, 512));
    assert!(ok.uclamp_key);
    // proc_dointvec stores -1 as 4294967295, above 1024.
    assert!(st(&[(Place::Sysctl, "kernel.sched_util_clamp_min_rt_default=-1")]).is_err());
    assert!(st(&[(Place::Sysctl, "kernel.sched_util_clamp_max=1025")]).is_err());
    // Writing the value already there changes nothing, so the key stays off.
    let same = st(&[(Place::Sysctl, "kernel.sched_util_clamp_max=1024")]).unwrap();
    assert!(!same.uclamp_key);
    let rt = st(&[(Place::Sysctl, "kernel.sched_util_clamp_min_rt_default=0")]).unwrap();
    assert!(rt.uclamp_key);
    let e = err(
        Kernel::V4_16,
        Place::Sysctl,
        "kernel.sched_util_clamp_min=0",
    );
    assert!(e.contains("uclamp came in 5.3"), "{e}");
}

#[test]
fn the_boot_values_are_the_scaled_defaults() {
    let st = Tunables::default().state(Kernel::V4_16, 224, 500_000, 32);
    assert_eq!(st.cfs(), CfsTunables::for_cpus(224));
    assert_eq!((st.latency, st.nr_latency, st.scaling), (24_000_000, 8, 1));
    let st = Tunables::default().state(Kernel::V6_12, 2, 500_000, 32);
    assert_eq!(u64::from(st.base_slice), crate::sched::base_slice_for(2));
    assert_eq!(st.normalized_base_slice, 700_000);
}

#[test]
fn a_pre_5_13_sysctl_write_rederives_nr_latency_and_the_normalized_values() {
    // 8 CPUs: factor 4; latency 24 ms, min_granularity 3 ms.
    let t = written(
        Kernel::V4_16,
        &[(Place::Sysctl, "kernel.sched_latency_ns=12000000")],
    )
    .unwrap();
    let st = t.state(Kernel::V4_16, 8, 500_000, 32);
    assert_eq!(st.latency, 12_000_000);
    assert_eq!(st.nr_latency, 4, "DIV_ROUND_UP(12 ms, 3 ms)");
    assert_eq!(st.normalized_latency, 3_000_000, "12 ms / factor 4");
    assert_eq!(st.normalized_min_granularity, 750_000);
    // A granularity that does not divide the latency rounds nr_latency up.
    let t = written(
        Kernel::V3_9,
        &[(Place::Sysctl, "kernel.sched_min_granularity_ns=5000000")],
    )
    .unwrap();
    assert_eq!(t.state(Kernel::V3_9, 8, 500_000, 32).nr_latency, 5);
    // The scaling written first changes the factor the next write divides by; the
    // values themselves stay (update_sysctl only runs on hotplug).
    let t = written(
        Kernel::V4_5,
        &[
            (Place::Sysctl, "kernel.sched_tunable_scaling=0"),
            (Place::Sysctl, "kernel.sched_wakeup_granularity_ns=2000000"),
        ],
    )
    .unwrap();
    let st = t.state(Kernel::V4_5, 8, 500_000, 32);
    assert_eq!((st.scaling, st.latency), (0, 24_000_000));
    assert_eq!(st.normalized_wakeup_granularity, 2_000_000);
    assert_eq!(st.normalized_latency, 24_000_000);
}

#[test]
fn a_6_5_debugfs_write_stores_only_until_tunable_scaling_rederives() {
    let t = written(Kernel::V6_5, &[(Place::Debugfs, "latency_ns=12000000")]).unwrap();
    let st = t.state(Kernel::V6_5, 8, 500_000, 32);
    assert_eq!(
        (st.latency, st.nr_latency),
        (12_000_000, 8),
        "debugfs_create_u32 runs no handler"
    );
    assert_eq!(st.normalized_latency, 6_000_000);
    let t = written(
        Kernel::V6_5,
        &[
            (Place::Debugfs, "latency_ns=12000000"),
            (Place::Debugfs, "tunable_scaling=2"),
        ],
    )
    .unwrap();
    let st = t.state(Kernel::V6_5, 8, 500_000, 32);
    assert_eq!(st.nr_latency, 4);
    assert_eq!(st.normalized_latency, 1_500_000, "12 ms / linear factor 8");
    // DIV_ROUND_UP by a zero granularity is refused, not run.
    let e = written(
        Kernel::V6_5,
        &[
            (Place::Debugfs, "min_granularity_ns=0"),
            (Place::Debugfs, "tunable_scaling=1"),
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("divide by zero"), "{e}");
}

#[test]
fn base_slice_and_the_balancer_tunables_of_6_12() {
    let t = written(
        Kernel::V6_12,
        &[
            (Place::Debugfs, "base_slice_ns=3000000"),
            (Place::Debugfs, "migration_cost_ns=0"),
            (Place::Debugfs, "nr_migrate=0x8"),
        ],
    )
    .unwrap();
    let st = t.state(Kernel::V6_12, 4, 500_000, 32);
    assert_eq!(
        (st.base_slice, st.normalized_base_slice),
        (3_000_000, 700_000)
    );
    assert_eq!((st.migration_cost, st.nr_migrate), (0, 8));
    assert_eq!(
        t.describe(),
        [
            "base_slice_ns=3000000",
            "migration_cost_ns=0",
            "nr_migrate=8"
        ]
    );
    let t = written(
        Kernel::V6_12,
        &[
            (Place::Debugfs, "base_slice_ns=3000000"),
            (Place::Debugfs, "tunable_scaling=0"),
        ],
    )
    .unwrap();
    assert_eq!(
        t.state(Kernel::V6_12, 4, 500_000, 32).normalized_base_slice,
        3_000_000
    );
}

#[test]
fn proc_dointvec_takes_any_int_and_stores_its_bits() {
    let t = written(
        Kernel::V3_9,
        &[(Place::Sysctl, "kernel.sched_migration_cost_ns=-1")],
    )
    .unwrap();
    assert_eq!(
        t.state(Kernel::V3_9, 4, 500_000, 32).migration_cost,
        4_294_967_295
    );
    assert_eq!(t.describe(), ["kernel.sched_migration_cost_ns=-1"]);
    // Base 0, as proc_get_long reads: octal with a leading 0, hex with 0x.
    let t = written(
        Kernel::V4_15,
        &[(Place::Sysctl, "kernel.sched_nr_migrate=010")],
    )
    .unwrap();
    assert_eq!(t.state(Kernel::V4_15, 4, 500_000, 32).nr_migrate, 8);
    let t = written(
        Kernel::V4_15,
        &[(Place::Sysctl, "kernel/sched_child_runs_first=1")],
    )
    .unwrap();
    assert!(
        t.state(Kernel::V4_15, 4, 500_000, 32)
            .cfs()
            .child_runs_first
    );
    let e = err(
        Kernel::V4_15,
        Place::Sysctl,
        "kernel.sched_nr_migrate=2147483648",
    );
    assert!(e.contains("out of Linux 4.15's range"), "{e}");
}

#[test]
fn each_refusal_names_the_option_and_what_is_allowed() {
    let e = err(
        Kernel::V6_12,
        Place::Sysctl,
        "kernel.sched_latency_ns=1000000",
    );
    assert!(
        e.starts_with("--sysctl: kernel.sched_latency_ns does not exist in Linux 6.12 (6.6 replaced it with debugfs base_slice_ns); allowed: kernel.sched_energy_aware, kernel.sched_util_clamp_min, kernel.sched_util_clamp_max, kernel.sched_util_clamp_min_rt_default, kernel.sched_autogroup_enabled, kernel.sched_cfs_bandwidth_slice_us (and at --debugfs: base_slice_ns, "),
        "{e}"
    );
    let e = err(
        Kernel::V6_5,
        Place::Sysctl,
        "kernel.sched_migration_cost_ns=0",
    );
    assert_eq!(
        e,
        "--sysctl: Linux 6.5 keeps this tunable at --debugfs (5.13 moved it to debugfs); allowed: --debugfs migration_cost_ns=VALUE"
    );
    let e = err(Kernel::V4_16, Place::Debugfs, "migration_cost_ns=0");
    assert!(
        e.contains("allowed: --sysctl kernel.sched_migration_cost_ns=VALUE"),
        "{e}"
    );
    let e = err(Kernel::V4_5, Place::Sysctl, "kernel.sched_latency_ns=99999");
    assert_eq!(
        e,
        "--sysctl: kernel.sched_latency_ns=99999 is out of Linux 4.5's range; allowed: 100000 to 1000000000 (sched_proc_update_handler's extra1..extra2)"
    );
    let e = err(Kernel::V6_12, Place::Debugfs, "tunable_scaling=3");
    assert!(e.contains("out of Linux 6.12's range"), "{e}");
    let e = err(Kernel::V6_12, Place::Debugfs, "nr_migrate=-1");
    assert!(e.contains("not an integer"), "{e}");
    let e = err(Kernel::V6_12, Place::Debugfs, "nr_migrate=4294967296");
    assert!(e.contains("low 32 bits"), "{e}");
    let e = err(Kernel::V6_12, Place::Debugfs, "bogus=1");
    assert!(
        e.starts_with("--debugfs: unknown tunable 'bogus' for Linux 6.12; allowed: base_slice_ns"),
        "{e}"
    );
    let e = err(Kernel::V6_12, Place::Debugfs, "nr_migrate");
    assert!(e.contains("is not NAME=VALUE"), "{e}");
    let e = err(Kernel::V6_12, Place::Debugfs, "latency_ns=1");
    assert!(e.contains("does not exist in Linux 6.12"), "{e}");
    let e = err(Kernel::V6_5, Place::Debugfs, "base_slice_ns=1");
    assert!(e.contains("does not exist in Linux 6.5"), "{e}");
    let e = err(
        Kernel::V6_12,
        Place::Sysctl,
        "kernel.sched_child_runs_first=1",
    );
    assert!(e.contains("does not exist in Linux 6.12"), "{e}");
    let mut t = Tunables::default();
    for _ in 0..Tunables::MAX {
        t.write(Kernel::V6_12, Place::Debugfs, "nr_migrate=4")
            .unwrap();
    }
    let e = t
        .write(Kernel::V6_12, Place::Debugfs, "nr_migrate=4")
        .unwrap_err();
    assert!(e.to_string().contains("at most 16"), "{e}");
}

#[test]
fn sched_autogroup_enabled_takes_0_or_1_and_a_1_only_on_6_12() {
    // fairsim boots it at 0, where a distribution kernel boots it at 1.
    assert_eq!(
        TunableState::boot(Kernel::V6_12, 4, 0, 0).autogroup_enabled,
        0
    );
    let t = written(
        Kernel::V6_12,
        &[(Place::Sysctl, "kernel.sched_autogroup_enabled=1")],
    )
    .unwrap();
    assert!(t.autogroup_enabled());
    assert_eq!(t.state(Kernel::V6_12, 4, 0, 0).autogroup_enabled, 1);
    assert_eq!(t.describe(), ["kernel.sched_autogroup_enabled=1"]);
    assert_eq!(
        t.writes().next().unwrap().path(),
        "/proc/sys/kernel/sched_autogroup_enabled"
    );
    // The last write wins, as writing the file again would.
    let t = written(
        Kernel::V6_12,
        &[
            (Place::Sysctl, "kernel.sched_autogroup_enabled=1"),
            (Place::Sysctl, "kernel/sched_autogroup_enabled=0"),
        ],
    )
    .unwrap();
    assert!(!t.autogroup_enabled());
    assert!(!Tunables::default().autogroup_enabled());
    for bad in ["2", "-1", "yes"] {
        let e = err(
            Kernel::V6_12,
            Place::Sysctl,
            &format!("kernel.sched_autogroup_enabled={bad}"),
        );
        assert!(
            e.starts_with(&format!("--sysctl: kernel.sched_autogroup_enabled={bad}"))
                && e.ends_with(
                    "allowed: 0 or 1 (proc_dointvec_minmax over extra1..extra2, EINVAL)"
                ),
            "{e}"
        );
    }
    let e = err(Kernel::V6_12, Place::Debugfs, "sched_autogroup_enabled=1");
    assert!(
        e.contains("allowed: --sysctl kernel.sched_autogroup_enabled=VALUE"),
        "{e}"
    );
    // Every CFS kernel had the sysctl; a 0 is what fairsim boots with, a 1 needs the
    // group scheduling only 6.12 has.
    for k in [
        Kernel::V3_9,
        Kernel::V4_5,
        Kernel::V4_15,
        Kernel::V4_16,
        Kernel::V6_5,
    ] {
        let t = written(k, &[(Place::Sysctl, "kernel.sched_autogroup_enabled=0")]).unwrap();
        assert!(!t.autogroup_enabled());
        let e = err(k, Place::Sysctl, "kernel.sched_autogroup_enabled=1");
        assert_eq!(e, autogroup_era_error(k).to_string());
        assert!(
            e.contains(&format!(
                "(Linux {}'s group scheduling is not ported)",
                k.release()
            )) && e.ends_with("allowed: --kernel 6.12, or kernel.sched_autogroup_enabled=0"),
            "{e}"
        );
    }
}

#[test]
fn the_cfs_bandwidth_slice_takes_1_or_more_microseconds() {
    for k in [Kernel::V3_9, Kernel::V6_5, Kernel::V6_12] {
        let t = written(
            k,
            &[(Place::Sysctl, "kernel.sched_cfs_bandwidth_slice_us=1000")],
        )
        .unwrap();
        assert_eq!(
            t.describe(),
            ["kernel.sched_cfs_bandwidth_slice_us=1000"],
            "{k}"
        );
        let e = err(k, Place::Sysctl, "kernel.sched_cfs_bandwidth_slice_us=0");
        assert!(e.contains("allowed: 1 to 2147483647"), "{k}: {e}");
    }
}
