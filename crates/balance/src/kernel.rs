//! The kernels fairsim emulates, chosen whole with `--kernel`: 6.12.117 (the base, EEVDF)
//! and the CFS kernels the seed postings were measured on.
//!
//! A [`Kernel`] fixes what a run's scheduler is: its fair class (EEVDF for 6.12, CFS as
//! [`crate::cfs`] ports it for the others), its `select_task_rq_fair`
//! (`crate::select`'s `v*_select` modules), its load balancer ([`crate::lb::era`]), the
//! util_est form, the `sched_features` that kernel's features.h listed with their defaults
//! (plus the seed patches that apply to it), and its tunables' boot values
//! ([`CfsTunables`]; what a run may write to them, and where each era kept them, is
//! [`crate::tunables`]). The trees each era was read from:
//!
//! | era | tree @ commit | Makefile |
//! |---|---|---|
//! | 3.9 | Red54/loongson1-linux-3.9 @ 2694001c (sched files identical to 3.9.6) | 3.9.0 |
//! | 4.5 | arthur-lucena/linux-4.5-hw-so @ f21e75bf | 4.5.0 |
//! | 4.15 | sndrzt/linux-4.15 @ 6ea06264 | 4.15.0 |
//! | 4.16 | lizuobin/linux-4.16.13_tiny4412 @ 92bab218 (no 4.16.0 tree was found) | 4.16.13 |
//! | 6.5 | sndrzt/linux-6.5 @ f5744aac | 6.5.0 |
//!
//! Seed 002 ran 3.9-rc2 and seed 000 6.5-rc2; the nearest releases above stand in for
//! them. 3.9's sched files did not change between 3.9.0 and 3.9.6; rc2 to 3.9.0 and
//! 6.5-rc2 to 6.5.0 were not checked (no tree of either rc was found). 4.16.13 differs from
//! 4.16.0 by stable fixes not checked here; its balancer functions read line for line as
//! 4.15.0's.
//!
//! What every era kernel still runs of 6.12.117:
//!
//! - PELT: 6.12's arithmetic. 6.12 makes its signals frequency- and capacity-invariant
//!   by running a scaled PELT clock (5.1 on); 4.x scaled each contribution instead
//!   (`accumulate_sum` with `scale_freq`/`scale_cpu`, read in 4.16), and 3.9 had the
//!   runnable-average form only under group scheduling. On machines without cpufreq
//!   (every x86 preset) and at full capacity the forms give the same signals; they
//!   differ in the transients of a task running below top frequency on rk3399 or TC2,
//!   which seed 003's ramp-up reads after a long sleep (both forms decay a sleeping task
//!   the same way). Not ported.
//! - schedutil (6.12's governor, for 4.15, 4.16 and 6.5 too; refused for 3.9 and 4.5,
//!   which predate its 4.7 merge).
//! - The engine's model around the class: idle states, costs, noise and the wake-list
//!   decision (`ttwu_queue_cond`).
//!
//! Features the era's features.h did not list but that the 6.12 code it runs reads keep
//! 6.12's defaults, hidden from the features file, except where the era plainly lacked
//! the behaviour (`NI_RANDOM`, util_est before 4.16); hidden bits also set the LEGACY_*
//! switches that the shared 6.12 code reads for the era's own functions (4.5's
//! `select_idle_sibling`, 4.15's `find_idlest_*`, 3.9's balancer).

use std::fmt;

use fairsim_pelt::UtilEstMode;

use crate::features::Feature;

/// A kernel fairsim can emulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Kernel {
    /// Linux 3.9 (seed 002, posted against 3.9-rc2).
    V3_9,
    /// Linux 4.5 (seed 001).
    V4_5,
    /// Linux 4.15 (seed 004).
    V4_15,
    /// Linux 4.16 (seed 003; read from 4.16.13).
    V4_16,
    /// Linux 6.5 (seed 000, posted against 6.5-rc2): CFS, the last release before EEVDF.
    V6_5,
    /// Linux 6.12.117, fairsim's base: EEVDF.
    #[default]
    V6_12,
}

/// A `--kernel` value that names no kernel fairsim has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--kernel: unknown kernel '{0}'; allowed: {names}", names = Kernel::NAMES)]
pub struct UnknownKernel(pub String);

impl Kernel {
    /// Every kernel, newest first.
    pub const ALL: [Kernel; 6] = [
        Kernel::V6_12,
        Kernel::V6_5,
        Kernel::V4_16,
        Kernel::V4_15,
        Kernel::V4_5,
        Kernel::V3_9,
    ];

    /// The accepted names, for error messages.
    pub const NAMES: &'static str = "6.12, 6.5, 4.16, 4.15, 4.5 or 3.9";

    /// The short name `--kernel` takes.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::V3_9 => "3.9",
            Kernel::V4_5 => "4.5",
            Kernel::V4_15 => "4.15",
            Kernel::V4_16 => "4.16",
            Kernel::V6_5 => "6.5",
            Kernel::V6_12 => "6.12",
        }
    }

    /// The release whose source was ported, as outputs name it.
    pub fn release(self) -> &'static str {
        match self {
            Kernel::V3_9 => "3.9.0",
            Kernel::V4_5 => "4.5.0",
            Kernel::V4_15 => "4.15.0",
            Kernel::V4_16 => "4.16.13",
            Kernel::V6_5 => "6.5.0",
            Kernel::V6_12 => crate::KERNEL_VERSION,
        }
    }

    /// Parses `6.12`, `4.5`, ... (a leading `v`, and the release's own spelling such as
    /// `6.12.117` or `4.5.0`, are accepted too).
    pub fn parse(text: &str) -> Result<Kernel, UnknownKernel> {
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        Kernel::ALL
            .iter()
            .copied()
            .find(|k| k.name() == t || k.release() == t)
            .ok_or_else(|| UnknownKernel(text.to_string()))
    }

    /// Whether the fair class is CFS (every kernel before 6.6) rather than EEVDF.
    pub fn is_cfs(self) -> bool {
        self != Kernel::V6_12
    }

    /// The `/proc/schedstat` version the kernel wrote: 15 up to 6.5 (16 came with 6.6).
    pub fn schedstat_version(self) -> u32 {
        if self.is_cfs() {
            15
        } else {
            16
        }
    }

    /// The util_est form the kernel ran when `UTIL_EST` is on: 6.5 had the
    /// `{enqueued, ewma}` form with `UTIL_EST_FASTUP` (a feature, on by default); seed
    /// 003's 4.16 patch has the same form without fast-up; 6.12 the single value.
    pub fn util_est(self) -> UtilEstMode {
        match self {
            Kernel::V6_12 => UtilEstMode::V6_12,
            // Fast-up comes from the UTIL_EST_FASTUP feature where the era has it.
            _ => UtilEstMode::Legacy { fastup: false },
        }
    }

    /// The kernel's features, in its features.h order (fairsim's patch and legacy
    /// toggles last), with their defaults.
    pub fn feature_table(self) -> &'static [(Feature, bool)] {
        match self {
            Kernel::V6_12 => crate::features::v6_12_table(),
            Kernel::V6_5 => eras::V6_5,
            Kernel::V4_16 => eras::V4_16,
            Kernel::V4_15 => eras::V4_15,
            Kernel::V4_5 => eras::V4_5,
            Kernel::V3_9 => eras::V3_9,
        }
    }

    /// Features the kernel did not have but whose 6.12.117 code it still runs, set as the
    /// kernel behaved (a proportional newidle balance it lacked is off).
    fn hidden(self) -> &'static [(Feature, bool)] {
        match self {
            Kernel::V6_12 => &[],
            Kernel::V6_5 => eras::HIDDEN_6_5,
            Kernel::V4_16 | Kernel::V4_15 => eras::HIDDEN_4_15,
            Kernel::V4_5 => eras::HIDDEN_4_5,
            Kernel::V3_9 => eras::HIDDEN_3_9,
        }
    }

    /// Whether the kernel's features file lists `f` (so that it can be toggled).
    pub fn has_feature(self, f: Feature) -> bool {
        self.feature_table().iter().any(|&(x, _)| x == f)
    }

    /// The name `f` had in this kernel's features.h (3.9 called NONTASK_CAPACITY
    /// NONTASK_POWER).
    pub fn feature_name(self, f: Feature) -> &'static str {
        match (self, f) {
            (Kernel::V3_9, Feature::NONTASK_CAPACITY) => "NONTASK_POWER",
            _ => f.name(),
        }
    }

    /// The default feature bits: 6.12's defaults, then the era's hidden settings and its
    /// own table.
    pub(crate) fn default_bits(self) -> u128 {
        let mut bits = 0u128;
        for (i, f) in Feature::ALL.iter().enumerate() {
            if f.default_on() {
                bits |= 1 << i;
            }
        }
        for &(f, on) in self.hidden().iter().chain(self.feature_table()) {
            if on {
                bits |= 1 << f as usize;
            } else {
                bits &= !(1 << f as usize);
            }
        }
        bits
    }

    /// Whether the kernel had energy-aware scheduling (merged in 5.0; misfit tasks came in
    /// 4.20 and utilization clamps in 5.3): 6.5 and 6.12 of fairsim's eras. The others
    /// never build perf domains.
    pub fn has_eas(self) -> bool {
        self >= Kernel::V6_5
    }

    /// Whether the kernel had utilization clamping (`CONFIG_UCLAMP_TASK`, merged in 5.3):
    /// 6.5 and 6.12 of fairsim's eras.
    pub fn has_uclamp(self) -> bool {
        self >= Kernel::V6_5
    }

    /// Whether the kernel had the schedutil cpufreq governor (merged in 4.7: 3.9 and 4.5
    /// did not). fairsim's schedutil is 6.12's port in every kernel that has one.
    pub fn has_schedutil(self) -> bool {
        self >= Kernel::V4_15
    }

    /// The cpuidle governors the kernel had by name (`menu` always; `teo` from 5.1,
    /// `haltpoll` from 5.4), for the one-line error of a governor the era lacked.
    pub fn cpuidle_governors(self) -> &'static str {
        if matches!(self, Kernel::V6_5 | Kernel::V6_12) {
            "menu, teo, haltpoll"
        } else {
            "menu (teo came in 5.1, haltpoll in 5.4)"
        }
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// CFS's tunables (3.9 to 6.5 all have these defaults): `sysctl_sched_latency`,
/// `sysctl_sched_min_granularity` and `sysctl_sched_wakeup_granularity`, each its
/// normalized value times the `SCHED_TUNABLESCALING_LOG` factor `1 + ilog2(min(ncpus,
/// 8))` (`update_sysctl`), and `sched_nr_latency`, which `sched_init_granularity` leaves
/// at 8 (only a sysctl write recomputes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CfsTunables {
    /// `sysctl_sched_latency` in ns (normalized 6 ms).
    pub latency: u64,
    /// `sysctl_sched_min_granularity` in ns (normalized 0.75 ms).
    pub min_granularity: u64,
    /// `sysctl_sched_wakeup_granularity` in ns (normalized 1 ms).
    pub wakeup_granularity: u64,
    /// `sched_nr_latency`.
    pub nr_latency: u64,
    /// `sysctl_sched_child_runs_first` (0 by default).
    pub child_runs_first: bool,
}

impl CfsTunables {
    /// `normalized_sysctl_sched_latency`.
    pub const NORMALIZED_LATENCY: u64 = 6_000_000;
    /// `normalized_sysctl_sched_min_granularity`.
    pub const NORMALIZED_MIN_GRANULARITY: u64 = 750_000;
    /// `normalized_sysctl_sched_wakeup_granularity`.
    pub const NORMALIZED_WAKEUP_GRANULARITY: u64 = 1_000_000;

    /// `get_update_sysctl_factor` with `SCHED_TUNABLESCALING_LOG`.
    pub fn factor(ncpus: usize) -> u64 {
        let cpus = ncpus.clamp(1, 8) as u64;
        1 + u64::from(63 - cpus.leading_zeros())
    }

    /// The defaults as `update_sysctl` scales them for `ncpus` CPUs.
    pub fn for_cpus(ncpus: usize) -> CfsTunables {
        let f = Self::factor(ncpus);
        CfsTunables {
            latency: f * Self::NORMALIZED_LATENCY,
            min_granularity: f * Self::NORMALIZED_MIN_GRANULARITY,
            wakeup_granularity: f * Self::NORMALIZED_WAKEUP_GRANULARITY,
            nr_latency: 8,
            child_runs_first: false,
        }
    }
}

/// The era tables: each kernel's features.h in order, with its defaults.
mod eras {
    use crate::features::Feature::{self, *};

    /// 6.5.0's features.h (without CONFIG_PREEMPT_RT), then seed 000's ILB patches,
    /// posted against 6.5-rc2.
    pub(super) const V6_5: &[(Feature, bool)] = &[
        (GENTLE_FAIR_SLEEPERS, true),
        (START_DEBIT, true),
        (NEXT_BUDDY, false),
        (LAST_BUDDY, true),
        (CACHE_HOT_BUDDY, true),
        (WAKEUP_PREEMPTION, true),
        (HRTICK, false),
        (HRTICK_DL, false),
        (DOUBLE_TICK, false),
        (NONTASK_CAPACITY, true),
        (TTWU_QUEUE, true),
        (SIS_PROP, false),
        (SIS_UTIL, true),
        (WARN_DOUBLE_CLOCK, false),
        (RT_PUSH_IPI, true),
        (RT_RUNTIME_SHARE, false),
        (LB_MIN, false),
        (ATTACH_AGE_LOAD, true),
        (WA_IDLE, true),
        (WA_WEIGHT, true),
        (WA_BIAS, true),
        (UTIL_EST, true),
        (UTIL_EST_FASTUP, true),
        (LATENCY_WARN, false),
        (ALT_PERIOD, true),
        (BASE_SLICE, true),
        (ILB_SNAPSHOT, false),
        (ILB_UTIL, false),
        (ILB_FAST, false),
    ];

    /// The 4.15.0 and 4.16.13 features.h (blob-identical), then the toggles.
    const V4_15_HEADER: [(Feature, bool); 21] = [
        (GENTLE_FAIR_SLEEPERS, true),
        (START_DEBIT, true),
        (NEXT_BUDDY, false),
        (LAST_BUDDY, true),
        (CACHE_HOT_BUDDY, true),
        (WAKEUP_PREEMPTION, true),
        (HRTICK, false),
        (DOUBLE_TICK, false),
        (LB_BIAS, true),
        (NONTASK_CAPACITY, true),
        (TTWU_QUEUE, true),
        (SIS_AVG_CPU, false),
        (SIS_PROP, true),
        (WARN_DOUBLE_CLOCK, false),
        (RT_PUSH_IPI, true),
        (RT_RUNTIME_SHARE, true),
        (LB_MIN, false),
        (ATTACH_AGE_LOAD, true),
        (WA_IDLE, true),
        (WA_WEIGHT, true),
        (WA_BIAS, true),
    ];

    /// 4.16: seed 003's util_est patch (UTIL_EST, off until the posting's "after"), and
    /// seed 004's `SD_NUMA` clause (merged in 4.17; off).
    pub(super) const V4_16: &[(Feature, bool)] = &concat::<21, 23>(
        V4_15_HEADER,
        &[(UTIL_EST, false), (FIND_IDLEST_NUMA, false)],
    );

    /// 4.15: seed 004's kernel; its patch, the `SD_NUMA` clause of `find_idlest_group`
    /// (FIND_IDLEST_NUMA, merged in 4.17), off.
    pub(super) const V4_15: &[(Feature, bool)] =
        &concat::<21, 22>(V4_15_HEADER, &[(FIND_IDLEST_NUMA, false)]);

    /// The era's header followed by the patch toggles that apply to it.
    const fn concat<const A: usize, const N: usize>(
        header: [(Feature, bool); A],
        extra: &[(Feature, bool)],
    ) -> [(Feature, bool); N] {
        let mut out = [(LB_MIN, false); N];
        let mut i = 0;
        while i < A {
            out[i] = header[i];
            i += 1;
        }
        let mut j = 0;
        while j < extra.len() {
            out[i + j] = extra[j];
            j += 1;
        }
        out
    }

    /// 4.5.0's features.h, then seed 001's patch on 4.5's `select_idle_sibling`
    /// (SIS_FIRST_IDLE).
    pub(super) const V4_5: &[(Feature, bool)] = &concat::<16, 17>(
        [
            (GENTLE_FAIR_SLEEPERS, true),
            (START_DEBIT, true),
            (NEXT_BUDDY, false),
            (LAST_BUDDY, true),
            (CACHE_HOT_BUDDY, true),
            (WAKEUP_PREEMPTION, true),
            (HRTICK, false),
            (DOUBLE_TICK, false),
            (LB_BIAS, true),
            (NONTASK_CAPACITY, true),
            (TTWU_QUEUE, true),
            (RT_PUSH_IPI, true),
            (FORCE_SD_OVERLAP, false),
            (RT_RUNTIME_SHARE, true),
            (LB_MIN, false),
            (ATTACH_AGE_LOAD, true),
        ],
        &[(SIS_FIRST_IDLE, false)],
    );

    /// 3.9.0's features.h (NUMA and NUMA_FORCE, under CONFIG_NUMA_BALANCING, left out:
    /// automatic NUMA balancing is not modelled), then seed 002's changes on 3.9's load
    /// balancer.
    pub(super) const V3_9: &[(Feature, bool)] = &concat::<16, 19>(
        [
            (GENTLE_FAIR_SLEEPERS, true),
            (START_DEBIT, true),
            (NEXT_BUDDY, false),
            (LAST_BUDDY, true),
            (CACHE_HOT_BUDDY, true),
            (WAKEUP_PREEMPTION, true),
            (ARCH_POWER, true),
            (HRTICK, false),
            (DOUBLE_TICK, false),
            (LB_BIAS, true),
            (OWNER_SPIN, true),
            (NONTASK_CAPACITY, true),
            (TTWU_QUEUE, true),
            (FORCE_SD_OVERLAP, false),
            (RT_RUNTIME_SHARE, true),
            (LB_MIN, false),
        ],
        &[
            (LB_RUNNABLE_AVG, false),
            (LB_IDLE_PULL_MULTI, false),
            (LB_FORCE_BETTER_CPU, false),
        ],
    );

    /// 6.5 lacked the proportional newidle balance.
    pub(super) const HIDDEN_6_5: &[(Feature, bool)] = &[(NI_RANDOM, false), (NI_RATE, false)];

    /// What every era before 6.5 lacked: the proportional newidle balance, seed 000's
    /// later ILB patches and (except 4.16's patch) util_est.
    const OLD_LACKED: [(Feature, bool); 6] = [
        (NI_RANDOM, false),
        (NI_RATE, false),
        (ILB_SNAPSHOT, false),
        (ILB_UTIL, false),
        (ILB_FAST, false),
        (UTIL_EST, false),
    ];

    /// 4.15 and 4.16 also run 4.15's `find_idlest_*`, which 6.12's shared slow path
    /// reaches through LEGACY_FIND_IDLEST.
    pub(super) const HIDDEN_4_15: &[(Feature, bool)] =
        &concat::<6, 7>(OLD_LACKED, &[(LEGACY_FIND_IDLEST, true)]);

    /// 4.5: its `select_idle_sibling`.
    pub(super) const HIDDEN_4_5: &[(Feature, bool)] =
        &concat::<6, 7>(OLD_LACKED, &[(LEGACY_SIS, true)]);

    /// 3.9: its load balancer and fork/exec placement, and the group walk of
    /// `select_idle_sibling`.
    pub(super) const HIDDEN_3_9: &[(Feature, bool)] =
        &concat::<6, 8>(OLD_LACKED, &[(LEGACY_SIS, true), (LEGACY_LB, true)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_both_ways() {
        for k in Kernel::ALL {
            assert_eq!(Kernel::parse(k.name()), Ok(k));
            assert_eq!(Kernel::parse(k.release()), Ok(k));
        }
        assert_eq!(Kernel::parse("v4.5"), Ok(Kernel::V4_5));
        let e = Kernel::parse("5.10").unwrap_err().to_string();
        assert_eq!(
            e,
            "--kernel: unknown kernel '5.10'; allowed: 6.12, 6.5, 4.16, 4.15, 4.5 or 3.9"
        );
    }

    #[test]
    fn tunables_scale_with_log_of_cpus_up_to_eight() {
        let f = |n| CfsTunables::for_cpus(n);
        assert_eq!(f(1).latency, 6_000_000);
        assert_eq!(f(2).latency, 12_000_000);
        assert_eq!(f(4).latency, 18_000_000);
        assert_eq!(f(8).latency, 24_000_000);
        assert_eq!(f(224).latency, 24_000_000);
        assert_eq!(f(224).min_granularity, 3_000_000);
        assert_eq!(f(224).wakeup_granularity, 4_000_000);
        assert_eq!(f(3).wakeup_granularity, 2_000_000);
        assert_eq!(f(224).nr_latency, 8);
    }

    #[test]
    fn era_tables_have_no_duplicates_and_match_their_headers() {
        for k in Kernel::ALL {
            let t = k.feature_table();
            for (i, (a, _)) in t.iter().enumerate() {
                assert!(t[i + 1..].iter().all(|(b, _)| a != b), "{k}: {a:?} twice");
            }
        }
        // The CFS features exist only in CFS kernels.
        for f in [
            Feature::GENTLE_FAIR_SLEEPERS,
            Feature::START_DEBIT,
            Feature::LAST_BUDDY,
        ] {
            assert!(!Kernel::V6_12.has_feature(f));
            assert!(Kernel::ALL[1..].iter().all(|k| k.has_feature(f)));
        }
        assert_eq!(Kernel::V4_15.feature_table().len(), 22);
        assert_eq!(Kernel::V4_16.feature_table().len(), 23);
        assert_eq!(Kernel::V4_5.feature_table().len(), 17);
        assert_eq!(Kernel::V3_9.feature_table().len(), 19);
        assert_eq!(
            Kernel::V3_9.feature_table().last(),
            Some(&(Feature::LB_FORCE_BETTER_CPU, false))
        );
        // The LEGACY_* switches swap an old function into 6.12; an era kernel runs its
        // own and does not list them.
        for k in &Kernel::ALL[1..] {
            for f in [
                Feature::LEGACY_SIS,
                Feature::LEGACY_LB,
                Feature::LEGACY_FIND_IDLEST,
            ] {
                assert!(!k.has_feature(f), "{k}: {f:?}");
            }
        }
    }
}
