//! `sched_features`: the switches of kernel/sched/features.h, with 6.12.117's defaults,
//! plus the features of the patch sets fairsim evaluates. Set by name with the kernel's
//! `NO_` convention, as `/sys/kernel/debug/sched/features` takes them.

use std::fmt;

use crate::kernel::Kernel;

macro_rules! features {
    ($( $(#[$doc:meta])* $name:ident = $default:expr ),* $(,)?) => {
        /// One scheduler feature.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[allow(non_camel_case_types)]
        pub enum Feature {
            $( $(#[$doc])* $name, )*
        }

        impl Feature {
            /// Every feature, in features.h order (patch features last).
            pub const ALL: &'static [Feature] = &[ $( Feature::$name, )* ];

            /// The feature's name as the debugfs file prints it.
            pub fn name(self) -> &'static str {
                match self { $( Feature::$name => stringify!($name), )* }
            }

            /// The default in Linux 6.12.117 (patch features default off, except FIND_IDLEST_NUMA and LB_BIAS,
            /// whose 6.12 rules 6.12.117 has).
            pub fn default_on(self) -> bool {
                match self { $( Feature::$name => $default, )* }
            }
        }
    };
}

features! {
    /// Place waking entities with their preserved lag.
    PLACE_LAG = true,
    /// New tasks get half a slice as their first deadline.
    PLACE_DEADLINE_INITIAL = true,
    /// Keep the relative deadline across a migration's dequeue/enqueue.
    PLACE_REL_DEADLINE = true,
    /// Let the current task run until it reaches its deadline (0-lag point).
    RUN_TO_PARITY = true,
    /// Allow a wakee with a shorter slice to cancel the current task's protection.
    PREEMPT_SHORT = true,
    /// Prefer the last woken task as next.
    NEXT_BUDDY = false,
    /// Consider the next buddy in pick_next_entity.
    PICK_BUDDY = true,
    /// Consider buddies cache-hot in task_hot().
    CACHE_HOT_BUDDY = true,
    /// Keep sleeping, ineligible entities queued until they are picked.
    DELAY_DEQUEUE = true,
    /// Clip positive lag of delayed entities to 0.
    DELAY_ZERO = true,
    /// Let a waking task preempt the current one.
    WAKEUP_PREEMPTION = true,
    /// High-resolution tick (not modelled).
    HRTICK = false,
    /// High-resolution tick for deadline tasks (not modelled).
    HRTICK_DL = false,
    /// Tick twice per period (not modelled).
    DOUBLE_TICK = false,
    /// Discount RT and IRQ time from CPU capacity.
    NONTASK_CAPACITY = true,
    /// Queue remote wakeups on the target CPU's wake list.
    TTWU_QUEUE = true,
    /// Limit select_idle_cpu()'s scan depth by LLC utilization.
    SIS_UTIL = true,
    /// Debug check (not modelled).
    WARN_DOUBLE_CLOCK = false,
    /// RT push IPIs (not modelled).
    RT_PUSH_IPI = false,
    /// RT runtime sharing (not modelled).
    RT_RUNTIME_SHARE = false,
    /// Skip tasks with tiny load in detach_tasks().
    LB_MIN = false,
    /// Age the load of migrated tasks at attach.
    ATTACH_AGE_LOAD = true,
    /// wake_affine: prefer an idle waker or previous CPU.
    WA_IDLE = true,
    /// wake_affine: compare loads.
    WA_WEIGHT = true,
    /// wake_affine: bias towards the previous CPU.
    WA_BIAS = true,
    /// Utilization estimation.
    UTIL_EST = true,
    /// Warn on long scheduling latencies (not modelled).
    LATENCY_WARN = false,
    /// Proportional newidle balance: skip newidle balance at random in proportion to its
    /// recent success (6.12.117 stable backport of 33cf66d88306).
    NI_RANDOM = true,
    /// Proportional newidle balance with a rate term: a domain that balances newidle
    /// rarely keeps a high ratio even when balances fail (mainline 9fe89f022c05, tip
    /// sched/core, Feb 2026; not in 6.12.117, hence off).
    NI_RATE = false,
    /// Seed 000: periodic balance snapshots total load and capacity in sched_domain_shared.
    ILB_SNAPSHOT = false,
    /// Seed 000: newidle balance scans nr_groups * (1 - util_ratio) groups.
    ILB_UTIL = false,
    /// Seed 000: newidle balance stops at the first group it can pull from.
    ILB_FAST = false,
    /// v4.17-v6.7 util_est: raise the ewma at once when utilization grows.
    UTIL_EST_FASTUP = false,
    /// 6.12 ablation (what `--kernel 4.5` runs inside its own `select_task_rq_fair`):
    /// Linux 4.5's `select_idle_sibling` (an idle target, an idle cache-affine previous
    /// CPU, else the first fully idle sched group below the LLC) replaces 6.12's whole.
    LEGACY_SIS = false,
    /// Seed 001's patch on LEGACY_SIS: after the target and previous-CPU checks, the first
    /// allowed idle CPU of the LLC in CPU order. Under 6.12 it needs LEGACY_SIS; under
    /// `--kernel 4.5` it is the posting's patch on that kernel.
    SIS_FIRST_IDLE = false,
    /// 6.12 ablation (what `--kernel 4.15` runs inside its own `select_task_rq_fair`):
    /// Linux 4.15's `find_idlest_cpu` / `find_idlest_group` / `find_idlest_group_cpu`
    /// (runnable load with an `imbalance_pct` margin, spare capacity for wakeups and exec)
    /// replace 6.12's slow path for fork, exec and `SD_BALANCE_WAKE` whole.
    LEGACY_FIND_IDLEST = false,
    /// Seed 004's patch (Linux 4.17, 2c833627): across NUMA nodes, keep the task local
    /// unless the remote group is lighter by more than the imbalance margin. With
    /// LEGACY_FIND_IDLEST it is the patch's clause on 4.15's `find_idlest_group`; on 6.12's
    /// `sched_balance_find_dst_group` it gates the clause's successors, the `SD_NUMA`
    /// keep-local rules of the busy and has-spare cases. On by default, as 6.12.117 has them.
    FIND_IDLEST_NUMA = true,
    /// 6.12 ablation (what `--kernel 3.9` runs): Linux 3.9's load balancer
    /// (`load_balance` with `cpu_power`, `cpu_load[]` and `load_idx`, `find_busiest_group`,
    /// `move_tasks`, active balancing, `rebalance_domains`, the nohz kick and
    /// `idle_balance`) and its fork/exec placement replace 6.12's.
    LEGACY_LB = false,
    /// Linux 3.9's `LB_BIAS`: `source_load`/`target_load` bias a CPU's load with its
    /// `cpu_load[]` history (on by default in 3.9; read only under LEGACY_LB).
    LB_BIAS = true,
    /// Seed 002's middle kernel: Alex Shi's series (merged for 3.11) on LEGACY_LB, the
    /// balancer's CPU and task loads from the runnable load average instead of weights.
    LB_RUNNABLE_AVG = false,
    /// Seed 002's patch 2/2 on LEGACY_LB: an idle CPU pulls from a group running more
    /// tasks than it has CPUs, whatever the tasks' loads and the CPUs' power.
    LB_IDLE_PULL_MULTI = false,
    /// Seed 002's patch 1/2 on LEGACY_LB: a task whose load exceeds its CPU's power is
    /// migrated, actively if need be, to a CPU with more power.
    LB_FORCE_BETTER_CPU = false,
    /// CFS (3.9-6.5): a waking sleeper's vruntime credit is half of `sysctl_sched_latency`
    /// instead of all of it (`place_entity`).
    GENTLE_FAIR_SLEEPERS = false,
    /// CFS (3.9-6.5): a new task starts a virtual slice behind `min_vruntime`
    /// (`place_entity` with `initial`).
    START_DEBIT = false,
    /// CFS (3.9-6.5): prefer the task that was preempted by a wakeup (`set_last_buddy`).
    LAST_BUDDY = false,
    /// Linux 3.9: the arch's `arch_scale_freq_power`/`arch_scale_smt_power` (not modelled:
    /// 3.9's `cpu_power` is the machine's, as with the feature on).
    ARCH_POWER = false,
    /// Linux 3.9: spin on a mutex owner that is running (not modelled).
    OWNER_SPIN = false,
    /// Linux 3.9-4.5: build sched domains' groups with `SD_OVERLAP` always (not modelled).
    FORCE_SD_OVERLAP = false,
    /// Linux 4.15-4.16: `select_idle_cpu` gives up when the CPU's average idle time is
    /// under the LLC's average scan cost (SIS_PROP's cruder form).
    SIS_AVG_CPU = false,
    /// Linux 4.15-6.5: `select_idle_cpu` scans in proportion to `avg_idle` over
    /// `avg_scan_cost` (on in 4.15 and 4.16, off in 6.5, which has SIS_UTIL).
    SIS_PROP = false,
    /// Linux 6.1-6.5: `__sched_period` counts the CPU's `h_nr_running`, not only the
    /// cfs_rq's entities (`sched_slice`).
    ALT_PERIOD = false,
    /// Linux 6.1-6.5: a slice is at least `sysctl_sched_min_granularity`
    /// (`sched_slice`).
    BASE_SLICE = false,
}

/// Features that only mean something on top of another: (feature, the feature it needs,
/// a hint for the error message). [`Features::parse`] rejects a set that has the first on
/// and the second off, because the dependent feature would silently do nothing.
///
/// FIND_IDLEST_NUMA is not listed: it means something on both slow paths (seed 004's
/// clause on LEGACY_FIND_IDLEST, the `SD_NUMA` keep-local rules on 6.12's), and it is on
/// by default while LEGACY_FIND_IDLEST is off.
pub const FEATURE_REQUIRES: &[(Feature, Feature, &str)] = &[
    (
        Feature::SIS_FIRST_IDLE,
        Feature::LEGACY_SIS,
        "seed 001: before = LEGACY_SIS, after = LEGACY_SIS,SIS_FIRST_IDLE",
    ),
    (
        Feature::LB_RUNNABLE_AVG,
        Feature::LEGACY_LB,
        "seed 002: LEGACY_LB, then LEGACY_LB,LB_RUNNABLE_AVG",
    ),
    (
        Feature::LB_IDLE_PULL_MULTI,
        Feature::LEGACY_LB,
        "seed 002: LEGACY_LB,LB_RUNNABLE_AVG,LB_FORCE_BETTER_CPU,LB_IDLE_PULL_MULTI",
    ),
    (
        Feature::LB_FORCE_BETTER_CPU,
        Feature::LEGACY_LB,
        "seed 002: LEGACY_LB,LB_RUNNABLE_AVG,LB_FORCE_BETTER_CPU,LB_IDLE_PULL_MULTI",
    ),
];

/// Features that replace the same kernel functions and so cannot both be on: (one,
/// other, why). [`Features::parse`] rejects a set with both.
pub const FEATURE_CONFLICTS: &[(Feature, Feature, &str)] = &[(
    Feature::LEGACY_LB,
    Feature::LEGACY_FIND_IDLEST,
    "both replace the fork/exec slow path: LEGACY_LB with 3.9's, LEGACY_FIND_IDLEST with 4.15's",
)];

/// A set of enabled features of one kernel: the `sched_features` bits, and the kernel
/// whose features file they belong to (what can be toggled, and how the set prints).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Features {
    bits: u64,
    kernel: Kernel,
}

impl Default for Features {
    /// Linux 6.12.117's defaults.
    fn default() -> Self {
        Features::for_kernel(Kernel::V6_12)
    }
}

/// A feature name that is not known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--features: unknown feature '{0}'; allowed: the names of /sys/kernel/debug/sched/features (e.g. SIS_UTIL, NO_SIS_UTIL) and NI_RATE, ILB_SNAPSHOT, ILB_UTIL, ILB_FAST, UTIL_EST_FASTUP, LEGACY_SIS, SIS_FIRST_IDLE, LEGACY_FIND_IDLEST, FIND_IDLEST_NUMA, LEGACY_LB, LB_BIAS, LB_RUNNABLE_AVG, LB_IDLE_PULL_MULTI, LB_FORCE_BETTER_CPU")]
pub struct UnknownFeature(pub String);

/// Why a `--features` list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureError {
    /// A name that is not a feature.
    #[error(transparent)]
    Unknown(#[from] UnknownFeature),
    /// A feature the chosen kernel did not have.
    #[error("--features: {name} does not exist in Linux {kernel}; allowed: the features of {kernel}'s features file ({list})")]
    NotInKernel {
        /// The feature's name.
        name: &'static str,
        /// The kernel's short name.
        kernel: &'static str,
        /// The kernel's feature names.
        list: String,
    },
    /// Two features that replace the same code are on ([`FEATURE_CONFLICTS`]).
    #[error("--features: {a} and {b} cannot both be on ({why})")]
    Conflicts {
        /// One feature's name.
        a: &'static str,
        /// The other's.
        b: &'static str,
        /// Why, from the table.
        why: &'static str,
    },
    /// A feature is on without the feature it builds on ([`FEATURE_REQUIRES`]).
    #[error("--features: {feature} needs {requires} ({hint})")]
    Requires {
        /// The dependent feature's name.
        feature: &'static str,
        /// The name of the feature it needs.
        requires: &'static str,
        /// How to name both, from the table.
        hint: &'static str,
    },
}

impl Features {
    /// `kernel`'s default features.
    pub fn for_kernel(kernel: Kernel) -> Features {
        Features {
            bits: kernel.default_bits(),
            kernel,
        }
    }

    /// The kernel these features belong to.
    pub fn kernel(self) -> Kernel {
        self.kernel
    }

    /// Whether `f` is on (`sched_feat(f)`).
    pub fn has(self, f: Feature) -> bool {
        self.bits & (1 << f as usize) != 0
    }

    /// Turns `f` on or off.
    pub fn set(&mut self, f: Feature, on: bool) {
        if on {
            self.bits |= 1 << f as usize;
        } else {
            self.bits &= !(1 << f as usize);
        }
    }

    /// Applies one debugfs-style write: `NAME` turns it on, `NO_NAME` off. A feature the
    /// kernel's features file does not list is refused.
    pub fn apply(&mut self, word: &str) -> Result<(), FeatureError> {
        let word = word.trim();
        let (name, on) = match word.strip_prefix("NO_") {
            Some(rest) => (rest, false),
            None => (word, true),
        };
        let kernel = self.kernel;
        let f = Feature::ALL
            .iter()
            .copied()
            .find(|&f| kernel.feature_name(f) == name || f.name() == name)
            .ok_or_else(|| UnknownFeature(word.to_string()))?;
        if !kernel.has_feature(f) {
            let list: Vec<&str> = kernel
                .feature_table()
                .iter()
                .map(|&(f, _)| kernel.feature_name(f))
                .collect();
            return Err(FeatureError::NotInKernel {
                name: f.name(),
                kernel: kernel.name(),
                list: list.join(", "),
            });
        }
        self.set(f, on);
        Ok(())
    }

    /// Whether any of seed 000's ILB features is on; the patch set then also gives every
    /// non-NUMA domain a `sched_domain_shared` (the `sd_share` of its patch 1/7).
    pub fn uses_ilb(self) -> bool {
        [Feature::ILB_SNAPSHOT, Feature::ILB_UTIL, Feature::ILB_FAST]
            .iter()
            .any(|&x| self.has(x))
    }

    /// 6.12.117's defaults with a comma-separated list of writes applied, e.g.
    /// `NO_ILB_UTIL,ILB_FAST`.
    pub fn parse(list: &str) -> Result<Features, FeatureError> {
        Features::parse_for(Kernel::V6_12, list)
    }

    /// `kernel`'s defaults with a comma-separated list of writes applied. The result must
    /// satisfy [`FEATURE_REQUIRES`]: the check runs once the whole list is applied, so the
    /// order of the words does not matter.
    pub fn parse_for(kernel: Kernel, list: &str) -> Result<Features, FeatureError> {
        let mut f = Features::for_kernel(kernel);
        for word in list.split(',').filter(|w| !w.trim().is_empty()) {
            f.apply(word)?;
        }
        f.check_requires()?;
        Ok(f)
    }

    /// The features that differ from the kernel's defaults, as debugfs writes in the
    /// features file's order (empty when none do).
    pub fn diff_from_default(self) -> Vec<String> {
        let d = Features::for_kernel(self.kernel);
        self.kernel
            .feature_table()
            .iter()
            .filter(|&&(x, _)| self.has(x) != d.has(x))
            .map(|&(x, _)| {
                let name = self.kernel.feature_name(x);
                if self.has(x) {
                    name.to_string()
                } else {
                    format!("NO_{name}")
                }
            })
            .collect()
    }

    /// Checks [`FEATURE_REQUIRES`]: the first entry, in table order, whose feature is on
    /// while the feature it needs is off is the error.
    pub fn check_requires(self) -> Result<(), FeatureError> {
        if let Some(&(a, b, why)) = FEATURE_CONFLICTS
            .iter()
            .find(|&&(a, b, _)| self.has(a) && self.has(b))
        {
            return Err(FeatureError::Conflicts {
                a: a.name(),
                b: b.name(),
                why,
            });
        }
        match FEATURE_REQUIRES
            .iter()
            .find(|&&(f, needs, _)| self.has(f) && !self.has(needs))
        {
            Some(&(f, needs, hint)) => Err(FeatureError::Requires {
                feature: f.name(),
                requires: needs.name(),
                hint,
            }),
            None => Ok(()),
        }
    }
}

impl fmt::Debug for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Features({self})")
    }
}

impl fmt::Display for Features {
    /// The debugfs `features` file of the set's kernel: every name, `NO_`-prefixed when
    /// off.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = self.kernel;
        let words: Vec<String> = k
            .feature_table()
            .iter()
            .map(|&(x, _)| {
                if self.has(x) {
                    k.feature_name(x).to_string()
                } else {
                    format!("NO_{}", k.feature_name(x))
                }
            })
            .collect();
        f.write_str(&words.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_002_features_need_legacy_lb_and_exclude_legacy_find_idlest() {
        let all = "LEGACY_LB,LB_RUNNABLE_AVG,LB_FORCE_BETTER_CPU,LB_IDLE_PULL_MULTI";
        let f = Features::parse(all).unwrap();
        assert!(f.has(Feature::LEGACY_LB) && f.has(Feature::LB_BIAS));
        let e = Features::parse("LB_RUNNABLE_AVG").unwrap_err().to_string();
        assert!(e.contains("LB_RUNNABLE_AVG needs LEGACY_LB"), "{e}");
        let e = Features::parse("LB_IDLE_PULL_MULTI")
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs LEGACY_LB"), "{e}");
        let e = Features::parse("LEGACY_LB,LEGACY_FIND_IDLEST")
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot both be on"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn defaults_match_the_6_12_features_file() {
        // The ground truth's features.txt, as the 6.12.117 guest printed it.
        let kernel = "PLACE_LAG PLACE_DEADLINE_INITIAL PLACE_REL_DEADLINE RUN_TO_PARITY PREEMPT_SHORT NO_NEXT_BUDDY PICK_BUDDY CACHE_HOT_BUDDY DELAY_DEQUEUE DELAY_ZERO WAKEUP_PREEMPTION NO_HRTICK NO_HRTICK_DL NO_DOUBLE_TICK NONTASK_CAPACITY TTWU_QUEUE SIS_UTIL NO_WARN_DOUBLE_CLOCK NO_RT_PUSH_IPI NO_RT_RUNTIME_SHARE NO_LB_MIN ATTACH_AGE_LOAD WA_IDLE WA_WEIGHT WA_BIAS UTIL_EST NO_LATENCY_WARN NI_RANDOM";
        let ours = Features::default().to_string();
        assert!(ours.starts_with(kernel), "{ours}");
        assert!(ours.ends_with(
            "NI_RANDOM NO_NI_RATE NO_ILB_SNAPSHOT NO_ILB_UTIL NO_ILB_FAST NO_UTIL_EST_FASTUP NO_LEGACY_SIS NO_SIS_FIRST_IDLE NO_LEGACY_FIND_IDLEST FIND_IDLEST_NUMA NO_LEGACY_LB LB_BIAS NO_LB_RUNNABLE_AVG NO_LB_IDLE_PULL_MULTI NO_LB_FORCE_BETTER_CPU"
        ));
    }

    #[test]
    fn seed_004_kernels_parse() {
        // Before: 4.15 without the clause; after: 4.15 with it.
        let before = Features::parse("LEGACY_FIND_IDLEST,NO_FIND_IDLEST_NUMA").unwrap();
        assert!(before.has(Feature::LEGACY_FIND_IDLEST) && !before.has(Feature::FIND_IDLEST_NUMA));
        let after = Features::parse("LEGACY_FIND_IDLEST").unwrap();
        assert!(after.has(Feature::LEGACY_FIND_IDLEST) && after.has(Feature::FIND_IDLEST_NUMA));
        // FIND_IDLEST_NUMA has a 6.12 meaning, so turning it off alone is accepted.
        let plain = Features::parse("NO_FIND_IDLEST_NUMA").unwrap();
        assert!(!plain.has(Feature::LEGACY_FIND_IDLEST) && !plain.has(Feature::FIND_IDLEST_NUMA));
        assert!(Features::default().has(Feature::FIND_IDLEST_NUMA));
        assert!(!Features::default().has(Feature::LEGACY_FIND_IDLEST));
    }

    #[test]
    fn no_prefix_turns_off() {
        let f = Features::parse("NO_SIS_UTIL,ILB_FAST").unwrap();
        assert!(!f.has(Feature::SIS_UTIL));
        assert!(f.has(Feature::ILB_FAST));
        assert!(matches!(
            Features::parse("NO_SUCH"),
            Err(FeatureError::Unknown(_))
        ));
    }

    #[test]
    fn a_dependent_feature_needs_its_base() {
        let err = Features::parse("SIS_FIRST_IDLE").unwrap_err();
        assert_eq!(
            err.to_string(),
            "--features: SIS_FIRST_IDLE needs LEGACY_SIS (seed 001: before = LEGACY_SIS, after = LEGACY_SIS,SIS_FIRST_IDLE)"
        );
        assert!(Features::parse("NO_LEGACY_SIS,SIS_FIRST_IDLE").is_err());
        assert!(Features::parse("LEGACY_SIS,SIS_FIRST_IDLE,NO_LEGACY_SIS").is_err());
        // The check is on the final set, whatever the order of the words.
        let f = Features::parse("SIS_FIRST_IDLE,LEGACY_SIS").unwrap();
        assert!(f.has(Feature::LEGACY_SIS) && f.has(Feature::SIS_FIRST_IDLE));
        assert!(Features::parse("LEGACY_SIS").is_ok());
        // Every table entry names a feature that is off by default, so the defaults pass.
        assert_eq!(Features::default().check_requires(), Ok(()));
    }
}
