//! `sched_features`: the switches of kernel/sched/features.h, with 6.12.117's defaults,
//! plus the features of the patch sets fairsim evaluates. Set by name with the kernel's
//! `NO_` convention, as `/sys/kernel/debug/sched/features` takes them.
//!
//! Every feature is declared once, in the `features!` block of `features/decl.rs`: its name as
//! features.h spells it, a one-line doc, its 6.12.117 default, where it comes from, the
//! features it needs or excludes (with the hint the error prints), whether the 6.12
//! features file lists it, and whether it changes the sched domains. Parsing, the error
//! messages, the requires/conflicts checks, 6.12's features file ([`v6_12_table`]) and
//! `fairsim features` are generated from that block; the older eras' features.h tables
//! (their order and defaults) are in [`crate::kernel`].

use std::fmt;

use crate::kernel::Kernel;

mod decl;
pub use decl::{v6_12_table, Domains, Feature, FeatureDecl, DECLARATIONS};

impl Feature {
    /// The feature's name as the debugfs file prints it.
    pub fn name(self) -> &'static str {
        self.decl().name
    }

    /// What the feature does, in one line.
    pub fn doc(self) -> &'static str {
        self.decl().doc
    }

    /// Where the feature comes from.
    pub fn origin(self) -> &'static str {
        self.decl().origin
    }
}

/// Features that only mean something on top of another, from the declarations: (feature,
/// the feature it needs, a hint for the error message), in declaration order.
/// [`Features::parse`] rejects a set that has the first on and the second off, because
/// the dependent feature would silently do nothing.
pub fn feature_requires() -> impl Iterator<Item = (Feature, Feature, &'static str)> {
    DECLARATIONS
        .iter()
        .flat_map(|d| d.requires.iter().map(move |&(r, why)| (d.feature, r, why)))
}

/// Features that replace the same kernel functions and so cannot both be on, from the
/// declarations: (one, other, why). [`Features::parse`] rejects a set with both.
pub fn feature_conflicts() -> impl Iterator<Item = (Feature, Feature, &'static str)> {
    DECLARATIONS
        .iter()
        .flat_map(|d| d.conflicts.iter().map(move |&(c, why)| (d.feature, c, why)))
}

/// A set of enabled features of one kernel: the `sched_features` bits, and the kernel
/// whose features file they belong to (what can be toggled, and how the set prints).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Features {
    bits: u128,
    kernel: Kernel,
}

impl Default for Features {
    /// Linux 6.12.117's defaults.
    fn default() -> Self {
        Features::for_kernel(Kernel::V6_12)
    }
}

/// The names `kernel`'s features file lists, comma separated, for messages.
fn file_names(kernel: Kernel) -> String {
    let names: Vec<&str> = kernel
        .feature_table()
        .iter()
        .map(|&(f, _)| kernel.feature_name(f))
        .collect();
    names.join(", ")
}

/// A feature name that is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFeature {
    /// The word as given.
    pub word: String,
    /// The kernel whose features file it was written to.
    pub kernel: Kernel,
}

impl fmt::Display for UnknownFeature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "--features: unknown feature '{}'; allowed: default alone, or the names of Linux {}'s features file, each also as NO_NAME ({}; `fairsim features --kernel {}` describes them)",
            self.word,
            self.kernel.name(),
            file_names(self.kernel),
            self.kernel.name()
        )
    }
}

impl std::error::Error for UnknownFeature {}

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
    /// Two features that replace the same code are on (a declaration's `conflicts`).
    #[error("--features: {a} and {b} cannot both be on ({why})")]
    Conflicts {
        /// One feature's name.
        a: &'static str,
        /// The other's.
        b: &'static str,
        /// Why, from the declaration.
        why: &'static str,
    },
    /// A feature is on without the feature it builds on (a declaration's `requires`).
    #[error("--features: {feature} needs {requires} ({hint})")]
    Requires {
        /// The dependent feature's name.
        feature: &'static str,
        /// The name of the feature it needs.
        requires: &'static str,
        /// How to name both, from the declaration.
        hint: &'static str,
    },
}

impl Kernel {
    /// The kernel's default `sched_features`.
    pub fn features(self) -> Features {
        Features::for_kernel(self)
    }
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
            .ok_or_else(|| UnknownFeature {
                word: word.to_string(),
                kernel,
            })?;
        if !kernel.has_feature(f) {
            return Err(FeatureError::NotInKernel {
                name: f.name(),
                kernel: kernel.name(),
                list: file_names(kernel),
            });
        }
        self.set(f, on);
        Ok(())
    }

    /// Whether a feature that is on changes the sched domains: every non-NUMA domain then
    /// gets a `sched_domain_shared` (seed 000's patch 1/7), which every command building
    /// domains for this set sets up itself.
    pub fn shares_all_non_numa(self) -> bool {
        DECLARATIONS
            .iter()
            .any(|d| d.domains == Domains::SdShareAllNonNuma && self.has(d.feature))
    }

    /// The old name of [`Features::shares_all_non_numa`]: the ILB features are the ones
    /// whose declarations change the domains.
    pub fn uses_ilb(self) -> bool {
        self.shares_all_non_numa()
    }

    /// 6.12.117's defaults with a comma-separated list of writes applied, e.g.
    /// `NO_ILB_UTIL,ILB_FAST`.
    pub fn parse(list: &str) -> Result<Features, FeatureError> {
        Features::parse_for(Kernel::V6_12, list)
    }

    /// `kernel`'s defaults with a comma-separated list of writes applied. The result must
    /// satisfy the declarations' requires and conflicts: the check runs once the whole
    /// list is applied, so the order of the words does not matter.
    pub fn parse_for(kernel: Kernel, list: &str) -> Result<Features, FeatureError> {
        // `default` alone is the kernel's defaults, as race mode has always taken it, so
        // that every command reads the word the same.
        if list.trim() == "default" {
            return Ok(Features::for_kernel(kernel));
        }
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

    /// The features that differ from the kernel's defaults as one summary line's value:
    /// `default (Linux 6.12.117)` when none do, else [`Features::diff_from_default`]'s
    /// words joined by commas. The engine's summary and race mode's report both print it,
    /// so it lives with the features rather than in either.
    pub fn diff_summary(self) -> String {
        let words = self.diff_from_default();
        if words.is_empty() {
            format!("default (Linux {})", self.kernel().release())
        } else {
            words.join(",")
        }
    }

    /// Checks the declarations' conflicts, then their requires: the first pair, in
    /// declaration order, with both on (conflicts) or the feature on and what it needs off
    /// (requires) is the error.
    pub fn check_requires(self) -> Result<(), FeatureError> {
        if let Some((a, b, why)) = feature_conflicts().find(|&(a, b, _)| self.has(a) && self.has(b))
        {
            return Err(FeatureError::Conflicts {
                a: a.name(),
                b: b.name(),
                why,
            });
        }
        match feature_requires().find(|&(f, needs, _)| self.has(f) && !self.has(needs)) {
            Some((f, needs, hint)) => Err(FeatureError::Requires {
                feature: f.name(),
                requires: needs.name(),
                hint,
            }),
            None => Ok(()),
        }
    }
}

/// `fairsim features --kernel K`: every feature of `kernel`'s features file, in its
/// order, with the kernel's default, where it comes from, its doc line, and what it needs,
/// excludes or does to the domains.
pub fn listing(kernel: Kernel) -> String {
    let mut s = format!(
        "Linux {}'s features file (/sys/kernel/debug/sched/features), in its order. Write NAME \
to turn one on and NO_NAME to turn it off: --features NO_SIS_UTIL,ILB_SNAPSHOT (run, sweep, \
topology, race), --base/--new (compare).\n\n",
        kernel.release()
    );
    s.push_str(&format!("{:<24} {:<7} {}\n", "NAME", "DEFAULT", "ORIGIN"));
    let defaults = kernel.features();
    for &(f, _) in kernel.feature_table() {
        let d = f.decl();
        let on = if defaults.has(f) { "on" } else { "off" };
        s.push_str(&format!(
            "{:<24} {:<7} {}\n    {}\n",
            kernel.feature_name(f),
            on,
            d.origin,
            d.doc
        ));
        for &(r, hint) in d.requires {
            s.push_str(&format!("    needs {} ({hint})\n", kernel.feature_name(r)));
        }
        for &(c, why) in d.conflicts {
            s.push_str(&format!(
                "    not with {} ({why})\n",
                kernel.feature_name(c)
            ));
        }
        if d.domains == Domains::SdShareAllNonNuma {
            s.push_str(
                "    changes the domains: a sched_domain_shared on every non-NUMA domain (seed 000 patch 1/7), built by every command\n",
            );
        }
    }
    s
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
        // A toggle added to the declarations after these (such as a test-only example)
        // follows them.
        assert!(ours.contains(
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
        let f = Features::parse("NO_SIS_UTIL,ILB_SNAPSHOT,ILB_FAST").unwrap();
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

    #[test]
    fn ilb_scan_features_need_the_snapshot_and_change_the_domains() {
        let e = Features::parse("ILB_FAST").unwrap_err().to_string();
        assert!(
            e.starts_with(
                "--features: ILB_FAST needs ILB_SNAPSHOT (seed 000: ILB_SNAPSHOT,ILB_FAST"
            ),
            "{e}"
        );
        let e = Features::parse_for(Kernel::V6_5, "ILB_UTIL")
            .unwrap_err()
            .to_string();
        assert!(e.contains("ILB_UTIL needs ILB_SNAPSHOT"), "{e}");
        assert!(!Features::default().shares_all_non_numa());
        for list in [
            "ILB_SNAPSHOT",
            "ILB_SNAPSHOT,ILB_UTIL",
            "ILB_SNAPSHOT,ILB_FAST",
        ] {
            assert!(
                Features::parse(list).unwrap().shares_all_non_numa(),
                "{list}"
            );
        }
        assert!(!Features::parse("NO_SIS_UTIL,LEGACY_SIS")
            .unwrap()
            .shares_all_non_numa());
    }

    #[test]
    fn the_unknown_feature_error_lists_the_kernels_file() {
        let e = Features::parse("NO_SUCH").unwrap_err().to_string();
        assert!(e.starts_with("--features: unknown feature 'NO_SUCH'; allowed: default alone, or the names of Linux 6.12's features file"), "{e}");
        // Issue 50 row 10: `default` alone is the kernel's defaults, as in race mode.
        for k in Kernel::ALL {
            assert_eq!(
                Features::parse_for(k, " default ").unwrap(),
                Features::for_kernel(k)
            );
        }
        assert!(Features::parse("default,ILB_FAST").is_err());
        // Every name of the file, from the declarations, and nothing of the CFS eras.
        for &(f, _) in Kernel::V6_12.feature_table() {
            assert!(e.contains(f.name()), "{e} lacks {f:?}");
        }
        assert!(!e.contains("START_DEBIT") && !e.contains('\n'), "{e}");
        let e = Features::parse_for(Kernel::V3_9, "BOGUS")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("NONTASK_POWER") && e.contains("LB_FORCE_BETTER_CPU"),
            "{e}"
        );
    }

    #[test]
    fn declarations_are_consistent() {
        for (i, d) in DECLARATIONS.iter().enumerate() {
            assert_eq!(d.feature as usize, i);
            assert_eq!(format!("{:?}", d.feature), d.name);
            assert!(
                !d.doc.is_empty() && !d.doc.contains('\n') && d.doc.len() <= 120,
                "{}",
                d.name
            );
            assert!(!d.origin.is_empty(), "{}", d.name);
            // A feature 6.12 does not list defaults off there.
            assert!(d.in_6_12_file || !d.default_6_12, "{}", d.name);
            // Every requirement is off by default, so the defaults pass the checks.
            for &(r, _) in d.requires {
                assert!(!d.default_6_12 && r != d.feature, "{}", d.name);
            }
        }
        // Every feature fits the set's bit mask.
        assert!(DECLARATIONS.len() <= 128);
        for k in Kernel::ALL {
            assert_eq!(Features::for_kernel(k).check_requires(), Ok(()), "{k}");
        }
    }

    #[test]
    fn the_listing_has_each_features_default_for_the_era() {
        let l = listing(Kernel::V6_12);
        assert!(
            l.contains("\nSIS_UTIL                 on      features.h since 6.0\n"),
            "{l}"
        );
        assert!(l.contains("needs ILB_SNAPSHOT"), "{l}");
        assert!(!l.contains("START_DEBIT"), "{l}");
        let l = listing(Kernel::V4_16);
        assert!(l.contains("\nUTIL_EST                 off "), "{l}");
        assert!(l.contains("\nSIS_PROP                 on "), "{l}");
        let l = listing(Kernel::V3_9);
        assert!(l.contains("\nNONTASK_POWER "), "{l}");
    }

    #[test]
    fn defaults_select_the_era_functions() {
        let k = |k: Kernel, f| k.features().has(f);
        assert!(k(Kernel::V3_9, Feature::LEGACY_LB) && k(Kernel::V3_9, Feature::LEGACY_SIS));
        assert!(k(Kernel::V4_5, Feature::LEGACY_SIS) && !k(Kernel::V4_5, Feature::LEGACY_LB));
        assert!(k(Kernel::V4_15, Feature::LEGACY_FIND_IDLEST));
        assert!(!k(Kernel::V4_15, Feature::FIND_IDLEST_NUMA));
        assert!(k(Kernel::V6_5, Feature::UTIL_EST_FASTUP));
        assert!(!k(Kernel::V6_5, Feature::NI_RANDOM));
        assert!(!k(Kernel::V4_5, Feature::UTIL_EST));
        assert!(!k(Kernel::V4_16, Feature::UTIL_EST));
        // 6.12 code the old eras still run keeps its defaults.
        assert!(k(Kernel::V4_5, Feature::WA_IDLE) && k(Kernel::V4_5, Feature::SIS_UTIL));
        assert_eq!(Kernel::V6_12.features(), Features::default());
        // schedutil was merged in 4.7.
        let su: Vec<bool> = Kernel::ALL.iter().map(|k| k.has_schedutil()).collect();
        assert_eq!(su, [true, true, true, true, false, false]);
    }
}
