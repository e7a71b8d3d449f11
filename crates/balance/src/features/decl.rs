//! The declarations of every feature (see [`super`]): one entry per feature in the
//! `features!` block, from which [`Feature`], [`DECLARATIONS`] and 6.12's features file
//! are generated.

/// What a feature does to the sched domains when it is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domains {
    /// Nothing: the domains are built as the kernel builds them.
    Unchanged,
    /// Every non-NUMA domain gets a `sched_domain_shared`, not only the LLC levels (seed
    /// 000's patch 1/7, `sd_share` for all non-NUMA domains); every command that builds
    /// domains for a feature set with such a feature on does so itself.
    SdShareAllNonNuma,
}

/// One feature's declaration: everything fairsim knows about it, in one place.
#[derive(Debug, Clone, Copy)]
pub struct FeatureDecl {
    /// The feature.
    pub feature: Feature,
    /// Its name as features.h spells it (3.9 called NONTASK_CAPACITY NONTASK_POWER; see
    /// [`crate::kernel::Kernel::feature_name`]).
    pub name: &'static str,
    /// What it does, in one line (`fairsim features` prints it).
    pub doc: &'static str,
    /// Its default in Linux 6.12.117 (the era tables give the older kernels' defaults).
    pub default_6_12: bool,
    /// Where it comes from: the features.h that introduced it, the patch of a seed
    /// posting, or the ablation that swaps an old kernel's function into 6.12.
    pub origin: &'static str,
    /// Whether 6.12's features file lists it (the CFS-era features are only in the
    /// older kernels' files).
    pub in_6_12_file: bool,
    /// Features it needs on, each with the hint the error prints: on without them it
    /// would silently do nothing.
    pub requires: &'static [(Feature, &'static str)],
    /// Features that cannot be on with it, each with the reason the error prints.
    pub conflicts: &'static [(Feature, &'static str)],
    /// What it does to the sched domains.
    pub domains: Domains,
}

/// An optional field of a declaration: the value given, else the default.
macro_rules! given_or {
    ($default:expr) => {
        $default
    };
    ($default:expr, $given:expr) => {
        $given
    };
}

/// Declares every feature once and generates [`Feature`] and [`DECLARATIONS`] from the
/// declarations. Each entry is
///
/// ```text
/// /// Longer rustdoc (optional).
/// NAME {
///     doc: "one line",
///     default: true|false,            // 6.12.117's default
///     origin: "features.h since 6.6",
///     in_6_12_file: false,            // optional: only older kernels' files list it
///     requires: [OTHER: "hint"],      // optional
///     conflicts: [OTHER: "why"],      // optional
///     domains: SdShareAllNonNuma,     // optional: a `Domains` variant
/// }
/// ```
///
/// An entry may also carry one `#[cfg(...)]` after its doc comment (for instance
/// `#[cfg(test)]` for a feature only the tests build): the variant and its declaration
/// then exist only where the condition holds.
macro_rules! features {
    ($(
        $(#[doc = $more:literal])*
        $(#[cfg($cfg:meta)])?
        $name:ident {
            doc: $doc:literal,
            default: $default:literal,
            origin: $origin:literal
            $(, in_6_12_file: $in612:literal)?
            $(, requires: [$($req:ident: $req_hint:literal),* $(,)?])?
            $(, conflicts: [$($con:ident: $con_why:literal),* $(,)?])?
            $(, domains: $dom:ident)?
            $(,)?
        }
    )*) => {
        /// One scheduler feature.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[allow(non_camel_case_types)]
        pub enum Feature {
            $(
                #[doc = $doc]
                #[doc = ""]
                $(#[doc = $more])*
                $(#[cfg($cfg)])?
                $name,
            )*
        }

        /// Every feature's declaration, in [`Feature`]'s order.
        pub const DECLARATIONS: &[FeatureDecl] = &[
            $(
                $(#[cfg($cfg)])?
                FeatureDecl {
                    feature: Feature::$name,
                    name: stringify!($name),
                    doc: $doc,
                    default_6_12: $default,
                    origin: $origin,
                    in_6_12_file: given_or!(true $(, $in612)?),
                    requires: &[$($((Feature::$req, $req_hint),)*)?],
                    conflicts: &[$($((Feature::$con, $con_why),)*)?],
                    domains: given_or!(Domains::Unchanged $(, Domains::$dom)?),
                },
            )*
        ];

        impl Feature {
            /// Every feature, in declaration order (features.h order, patch features
            /// after, the CFS-era features last).
            pub const ALL: &'static [Feature] = &[$($(#[cfg($cfg)])? Feature::$name,)*];
        }
    };
}

features! {
    PLACE_LAG {
        doc: "Place waking entities with their preserved lag.",
        default: true,
        origin: "features.h since 6.6 (EEVDF)",
    }
    PLACE_DEADLINE_INITIAL {
        doc: "New tasks get half a slice as their first deadline.",
        default: true,
        origin: "features.h since 6.6 (EEVDF)",
    }
    PLACE_REL_DEADLINE {
        doc: "Keep the relative deadline across a migration's dequeue/enqueue.",
        default: true,
        origin: "features.h since 6.12",
    }
    RUN_TO_PARITY {
        doc: "Let the current task run until it reaches its deadline (0-lag point).",
        default: true,
        origin: "features.h since 6.6 (EEVDF)",
    }
    PREEMPT_SHORT {
        doc: "Allow a wakee with a shorter slice to cancel the current task's protection.",
        default: true,
        origin: "features.h since 6.12",
    }
    NEXT_BUDDY {
        doc: "Prefer the last woken task as next.",
        default: false,
        origin: "features.h (every era here)",
    }
    PICK_BUDDY {
        doc: "Consider the next buddy in pick_next_entity.",
        default: true,
        origin: "features.h since 6.12",
    }
    CACHE_HOT_BUDDY {
        doc: "Consider buddies cache-hot in task_hot().",
        default: true,
        origin: "features.h (every era here)",
    }
    DELAY_DEQUEUE {
        doc: "Keep sleeping, ineligible entities queued until they are picked.",
        default: true,
        origin: "features.h since 6.12",
    }
    DELAY_ZERO {
        doc: "Clip positive lag of delayed entities to 0.",
        default: true,
        origin: "features.h since 6.12",
    }
    WAKEUP_PREEMPTION {
        doc: "Let a waking task preempt the current one.",
        default: true,
        origin: "features.h (every era here)",
    }
    HRTICK {
        doc: "High-resolution tick (not modelled).",
        default: false,
        origin: "features.h (every era here)",
    }
    HRTICK_DL {
        doc: "High-resolution tick for deadline tasks (not modelled).",
        default: false,
        origin: "features.h (6.5 and 6.12 here)",
    }
    DOUBLE_TICK {
        doc: "Tick twice per period (not modelled).",
        default: false,
        origin: "features.h (every era here)",
    }
    NONTASK_CAPACITY {
        doc: "Discount RT and IRQ time from CPU capacity.",
        default: true,
        origin: "features.h (every era here; 3.9 calls it NONTASK_POWER)",
    }
    TTWU_QUEUE {
        doc: "Queue remote wakeups on the target CPU's wake list.",
        default: true,
        origin: "features.h (every era here)",
    }
    SIS_UTIL {
        doc: "Limit select_idle_cpu()'s scan depth by LLC utilization.",
        default: true,
        origin: "features.h since 6.0",
    }
    WARN_DOUBLE_CLOCK {
        doc: "Debug check (not modelled).",
        default: false,
        origin: "features.h (4.15 on here)",
    }
    RT_PUSH_IPI {
        doc: "RT push IPIs (not modelled).",
        default: false,
        origin: "features.h (4.5 on here)",
    }
    RT_RUNTIME_SHARE {
        doc: "RT runtime sharing (not modelled).",
        default: false,
        origin: "features.h (every era here)",
    }
    LB_MIN {
        doc: "Skip tasks with tiny load in detach_tasks().",
        default: false,
        origin: "features.h (every era here)",
    }
    ATTACH_AGE_LOAD {
        doc: "Age the load of migrated tasks at attach.",
        default: true,
        origin: "features.h (4.5 on here)",
    }
    WA_IDLE {
        doc: "wake_affine: prefer an idle waker or previous CPU.",
        default: true,
        origin: "features.h (4.15 on here)",
    }
    WA_WEIGHT {
        doc: "wake_affine: compare loads.",
        default: true,
        origin: "features.h (4.15 on here)",
    }
    WA_BIAS {
        doc: "wake_affine: bias towards the previous CPU.",
        default: true,
        origin: "features.h (4.15 on here)",
    }
    UTIL_EST {
        doc: "Utilization estimation.",
        default: true,
        origin: "features.h since 4.17 (on 4.16: seed 003's patch)",
    }
    LATENCY_WARN {
        doc: "Warn on long scheduling latencies (not modelled).",
        default: false,
        origin: "features.h (6.5 and 6.12 here)",
    }
    /// Skips newidle balance at random in proportion to its recent success.
    NI_RANDOM {
        doc: "Proportional newidle balance: skip it at random in proportion to its recent success.",
        default: true,
        origin: "6.12.117 stable backport of 33cf66d88306",
    }
    /// A domain that balances newidle rarely keeps a high ratio even when balances fail
    /// (tip sched/core, Feb 2026; not in 6.12.117, hence off).
    NI_RATE {
        doc: "Proportional newidle balance with a rate term.",
        default: false,
        origin: "mainline 9fe89f022c05 (after 6.12.117)",
    }
    ILB_SNAPSHOT {
        doc: "Seed 000: periodic balance snapshots total load and capacity in sched_domain_shared.",
        default: false,
        origin: "seed 000 patch 3/7",
        domains: SdShareAllNonNuma,
    }
    /// Without ILB_SNAPSHOT no snapshot is ever saved, so the scan-depth path never runs.
    ILB_UTIL {
        doc: "Seed 000: newidle balance scans nr_groups * (1 - util_ratio) groups.",
        default: false,
        origin: "seed 000 patches 4/7 and 5/7",
        requires: [ILB_SNAPSHOT: "seed 000: ILB_SNAPSHOT,ILB_UTIL; the scan depth is read with the snapshot"],
        domains: SdShareAllNonNuma,
    }
    /// Without ILB_SNAPSHOT no snapshot is ever saved, so the early stop never happens.
    ILB_FAST {
        doc: "Seed 000: newidle balance stops at the first group it can pull from.",
        default: false,
        origin: "seed 000 patch 6/7",
        requires: [ILB_SNAPSHOT: "seed 000: ILB_SNAPSHOT,ILB_FAST; the early stop borrows the snapshot's totals"],
        domains: SdShareAllNonNuma,
    }
    UTIL_EST_FASTUP {
        doc: "util_est: raise the ewma at once when utilization grows.",
        default: false,
        origin: "features.h 5.9 to 6.7",
    }
    /// Linux 4.5's `select_idle_sibling` (an idle target, an idle cache-affine previous
    /// CPU, else the first fully idle sched group below the LLC) replaces 6.12's whole;
    /// it is what `--kernel 4.5` runs inside its own `select_task_rq_fair`.
    LEGACY_SIS {
        doc: "6.12 ablation: Linux 4.5's select_idle_sibling replaces 6.12's.",
        default: false,
        origin: "6.12 ablation (4.5's function)",
    }
    /// After the target and previous-CPU checks, the first allowed idle CPU of the LLC in
    /// CPU order. Under 6.12 it needs LEGACY_SIS; under `--kernel 4.5` it is the
    /// posting's patch on that kernel.
    SIS_FIRST_IDLE {
        doc: "Seed 001: select_idle_sibling takes the LLC's first idle CPU.",
        default: false,
        origin: "seed 001 patch",
        requires: [LEGACY_SIS: "seed 001: before = LEGACY_SIS, after = LEGACY_SIS,SIS_FIRST_IDLE"],
    }
    /// Linux 4.15's `find_idlest_cpu` / `find_idlest_group` / `find_idlest_group_cpu`
    /// (runnable load with an `imbalance_pct` margin, spare capacity for wakeups and
    /// exec) replace 6.12's slow path for fork, exec and `SD_BALANCE_WAKE` whole; it is
    /// what `--kernel 4.15` runs inside its own `select_task_rq_fair`.
    LEGACY_FIND_IDLEST {
        doc: "6.12 ablation: Linux 4.15's find_idlest_* replace 6.12's slow path.",
        default: false,
        origin: "6.12 ablation (4.15's functions)",
    }
    /// With LEGACY_FIND_IDLEST it is the patch's clause on 4.15's `find_idlest_group`; on
    /// 6.12's `sched_balance_find_dst_group` it gates the clause's successors, the
    /// `SD_NUMA` keep-local rules of the busy and has-spare cases. On by default, as
    /// 6.12.117 has them. It needs nothing: it means something on both slow paths.
    FIND_IDLEST_NUMA {
        doc: "Seed 004: across NUMA nodes, keep the task local unless the remote group is lighter by the imbalance margin.",
        default: true,
        origin: "seed 004 patch (merged in 4.17 as 2c833627)",
    }
    /// Linux 3.9's load balancer (`load_balance` with `cpu_power`, `cpu_load[]` and
    /// `load_idx`, `find_busiest_group`, `move_tasks`, active balancing,
    /// `rebalance_domains`, the nohz kick and `idle_balance`) and its fork/exec placement
    /// replace 6.12's; it is what `--kernel 3.9` runs.
    LEGACY_LB {
        doc: "6.12 ablation: Linux 3.9's load balancer and fork/exec placement replace 6.12's.",
        default: false,
        origin: "6.12 ablation (3.9's functions)",
        conflicts: [LEGACY_FIND_IDLEST: "both replace the fork/exec slow path: LEGACY_LB with 3.9's, LEGACY_FIND_IDLEST with 4.15's"],
    }
    /// On by default in 3.9; read only under LEGACY_LB.
    LB_BIAS {
        doc: "Linux 3.9: source_load/target_load bias a CPU's load with its cpu_load[] history.",
        default: true,
        origin: "features.h 3.9 to 4.16",
    }
    /// Alex Shi's series (merged for 3.11) on LEGACY_LB: the balancer's CPU and task loads
    /// come from the runnable load average instead of weights.
    LB_RUNNABLE_AVG {
        doc: "Seed 002's middle kernel: balance on runnable load averages instead of weights.",
        default: false,
        origin: "seed 002 (Alex Shi's series, merged for 3.11)",
        requires: [LEGACY_LB: "seed 002: LEGACY_LB, then LEGACY_LB,LB_RUNNABLE_AVG"],
    }
    /// Whatever the tasks' loads and the CPUs' power.
    LB_IDLE_PULL_MULTI {
        doc: "Seed 002: an idle CPU pulls from a group running more tasks than it has CPUs.",
        default: false,
        origin: "seed 002 patch 2/2",
        requires: [LEGACY_LB: "seed 002: LEGACY_LB,LB_RUNNABLE_AVG,LB_FORCE_BETTER_CPU,LB_IDLE_PULL_MULTI"],
    }
    /// Actively if need be.
    LB_FORCE_BETTER_CPU {
        doc: "Seed 002: a task whose load exceeds its CPU's power moves to a CPU with more power.",
        default: false,
        origin: "seed 002 patch 1/2",
        requires: [LEGACY_LB: "seed 002: LEGACY_LB,LB_RUNNABLE_AVG,LB_FORCE_BETTER_CPU,LB_IDLE_PULL_MULTI"],
    }
    /// Instead of all of it (`place_entity`).
    GENTLE_FAIR_SLEEPERS {
        doc: "CFS: a waking sleeper's vruntime credit is half of sysctl_sched_latency.",
        default: false,
        origin: "features.h to 6.5 (CFS)",
        in_6_12_file: false,
    }
    /// `place_entity` with `initial`.
    START_DEBIT {
        doc: "CFS: a new task starts a virtual slice behind min_vruntime.",
        default: false,
        origin: "features.h to 6.5 (CFS)",
        in_6_12_file: false,
    }
    /// `set_last_buddy`.
    LAST_BUDDY {
        doc: "CFS: prefer the task that was preempted by a wakeup.",
        default: false,
        origin: "features.h to 6.5 (CFS)",
        in_6_12_file: false,
    }
    /// Not modelled: 3.9's `cpu_power` is the machine's, as with the feature on.
    ARCH_POWER {
        doc: "Linux 3.9: the arch's power scaling (not modelled).",
        default: false,
        origin: "features.h (3.9 here)",
        in_6_12_file: false,
    }
    OWNER_SPIN {
        doc: "Linux 3.9: spin on a mutex owner that is running (not modelled).",
        default: false,
        origin: "features.h (3.9 here)",
        in_6_12_file: false,
    }
    FORCE_SD_OVERLAP {
        doc: "Build sched domains' groups with SD_OVERLAP always (not modelled).",
        default: false,
        origin: "features.h (3.9 and 4.5 here)",
        in_6_12_file: false,
    }
    /// SIS_PROP's cruder form.
    SIS_AVG_CPU {
        doc: "select_idle_cpu gives up when avg_idle is under the LLC's average scan cost.",
        default: false,
        origin: "features.h (4.15 and 4.16 here)",
        in_6_12_file: false,
    }
    /// On in 4.15 and 4.16, off in 6.5, which has SIS_UTIL.
    SIS_PROP {
        doc: "select_idle_cpu scans in proportion to avg_idle over avg_scan_cost.",
        default: false,
        origin: "features.h (4.15 to 6.5 here)",
        in_6_12_file: false,
    }
    /// `sched_slice`.
    ALT_PERIOD {
        doc: "__sched_period counts the CPU's h_nr_running, not only the cfs_rq's entities.",
        default: false,
        origin: "features.h 6.1 to 6.5",
        in_6_12_file: false,
    }
    /// `sched_slice`.
    BASE_SLICE {
        doc: "A slice is at least sysctl_sched_min_granularity.",
        default: false,
        origin: "features.h 6.1 to 6.5",
        in_6_12_file: false,
    }
}

/// How many features 6.12's features file lists.
const V6_12_LEN: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < DECLARATIONS.len() {
        if DECLARATIONS[i].in_6_12_file {
            n += 1;
        }
        i += 1;
    }
    n
};

/// 6.12's features file, generated from the declarations: their order, 6.12.117's
/// defaults, the features listed.
const V6_12_ARRAY: [(Feature, bool); V6_12_LEN] = {
    let mut out = [(Feature::LB_MIN, false); V6_12_LEN];
    let mut i = 0;
    let mut n = 0;
    while i < DECLARATIONS.len() {
        let d = &DECLARATIONS[i];
        if d.in_6_12_file {
            out[n] = (d.feature, d.default_6_12);
            n += 1;
        }
        i += 1;
    }
    out
};

/// 6.12.117's features file (the ground truth's `features.txt`), then fairsim's patch
/// and legacy toggles: every declared feature that 6.12's file lists, in declaration
/// order, with its 6.12 default.
pub fn v6_12_table() -> &'static [(Feature, bool)] {
    &V6_12_ARRAY
}

// In this leaf rather than in `features.rs`, so that `kernel.rs`, which `features.rs`
// reads, can read the defaults without an import cycle.
impl Feature {
    /// The feature's declaration.
    pub fn decl(self) -> &'static FeatureDecl {
        &DECLARATIONS[self as usize]
    }

    /// The default in Linux 6.12.117 (patch features default off, except FIND_IDLEST_NUMA
    /// and LB_BIAS, whose 6.12 rules 6.12.117 has).
    pub fn default_on(self) -> bool {
        self.decl().default_6_12
    }
}
