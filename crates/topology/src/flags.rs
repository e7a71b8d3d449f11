//! Sched-domain flags, in the bit order of `include/linux/sched/sd_flags.h`.
//!
//! The order matters: debugfs and `sched_verbose` print flags by increasing bit, and
//! `sd_degenerate` tests the flags whose metaflags say they need groups.

use std::fmt;
use std::ops::{BitAnd, BitOr, BitOrAssign, Not};

/// A set of `SD_*` flags.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SdFlags(pub u32);

/// Metaflag: if set in a domain, the flag must be set in its child too.
pub const SDF_SHARED_CHILD: u8 = 0x1;
/// Metaflag: if set in a domain, the flag must be set in its parent too.
pub const SDF_SHARED_PARENT: u8 = 0x2;
/// Metaflag: the flag only means something when the domain has at least two groups.
pub const SDF_NEEDS_GROUPS: u8 = 0x4;

/// Name and metaflags of each bit, as `sd_flag_debug[]` lists them.
pub const SD_FLAG_TABLE: [(&str, u8); 15] = [
    ("SD_BALANCE_NEWIDLE", SDF_SHARED_CHILD | SDF_NEEDS_GROUPS),
    ("SD_BALANCE_EXEC", SDF_SHARED_CHILD | SDF_NEEDS_GROUPS),
    ("SD_BALANCE_FORK", SDF_SHARED_CHILD | SDF_NEEDS_GROUPS),
    ("SD_BALANCE_WAKE", SDF_SHARED_CHILD | SDF_NEEDS_GROUPS),
    ("SD_WAKE_AFFINE", SDF_SHARED_CHILD),
    ("SD_ASYM_CPUCAPACITY", SDF_SHARED_PARENT | SDF_NEEDS_GROUPS),
    (
        "SD_ASYM_CPUCAPACITY_FULL",
        SDF_SHARED_PARENT | SDF_NEEDS_GROUPS,
    ),
    ("SD_SHARE_CPUCAPACITY", SDF_SHARED_CHILD | SDF_NEEDS_GROUPS),
    ("SD_CLUSTER", SDF_NEEDS_GROUPS),
    ("SD_SHARE_LLC", SDF_SHARED_CHILD | SDF_NEEDS_GROUPS),
    ("SD_SERIALIZE", SDF_SHARED_PARENT | SDF_NEEDS_GROUPS),
    ("SD_ASYM_PACKING", SDF_NEEDS_GROUPS),
    ("SD_PREFER_SIBLING", SDF_NEEDS_GROUPS),
    ("SD_OVERLAP", SDF_SHARED_PARENT | SDF_NEEDS_GROUPS),
    ("SD_NUMA", SDF_SHARED_PARENT | SDF_NEEDS_GROUPS),
];

impl SdFlags {
    /// No flag.
    pub const EMPTY: SdFlags = SdFlags(0);
    /// Balance when a CPU is about to go idle.
    pub const BALANCE_NEWIDLE: SdFlags = SdFlags(1 << 0);
    /// Balance on exec.
    pub const BALANCE_EXEC: SdFlags = SdFlags(1 << 1);
    /// Balance on fork and clone.
    pub const BALANCE_FORK: SdFlags = SdFlags(1 << 2);
    /// Balance on wakeup.
    pub const BALANCE_WAKE: SdFlags = SdFlags(1 << 3);
    /// Wake tasks on the waker's CPU when it is worth it.
    pub const WAKE_AFFINE: SdFlags = SdFlags(1 << 4);
    /// The domain spans CPUs of different capacities.
    pub const ASYM_CPUCAPACITY: SdFlags = SdFlags(1 << 5);
    /// The domain spans every capacity the system has.
    pub const ASYM_CPUCAPACITY_FULL: SdFlags = SdFlags(1 << 6);
    /// The members share CPU capacity (SMT siblings).
    pub const SHARE_CPUCAPACITY: SdFlags = SdFlags(1 << 7);
    /// The members share a cluster (L2 or cluster tag).
    pub const CLUSTER: SdFlags = SdFlags(1 << 8);
    /// The members share the last-level cache.
    pub const SHARE_LLC: SdFlags = SdFlags(1 << 9);
    /// Only one CPU balances this level at a time.
    pub const SERIALIZE: SdFlags = SdFlags(1 << 10);
    /// Pack busy tasks on preferred CPUs.
    pub const ASYM_PACKING: SdFlags = SdFlags(1 << 11);
    /// Spread tasks to sibling groups first.
    pub const PREFER_SIBLING: SdFlags = SdFlags(1 << 12);
    /// Groups of this domain overlap (NUMA levels).
    pub const OVERLAP: SdFlags = SdFlags(1 << 13);
    /// A NUMA level.
    pub const NUMA: SdFlags = SdFlags(1 << 14);

    /// `SD_DEGENERATE_GROUPS_MASK`: every flag whose metaflags include NEEDS_GROUPS.
    pub fn degenerate_groups_mask() -> SdFlags {
        let mut m = 0;
        for (bit, (_, meta)) in SD_FLAG_TABLE.iter().enumerate() {
            if meta & SDF_NEEDS_GROUPS != 0 {
                m |= 1 << bit;
            }
        }
        SdFlags(m)
    }

    /// Whether every flag of `other` is set.
    pub fn contains(self, other: SdFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether any flag of `other` is set.
    pub fn intersects(self, other: SdFlags) -> bool {
        self.0 & other.0 != 0
    }

    /// Sets the flags of `other`.
    pub fn insert(&mut self, other: SdFlags) {
        self.0 |= other.0;
    }

    /// Clears the flags of `other`.
    pub fn remove(&mut self, other: SdFlags) {
        self.0 &= !other.0;
    }

    /// Flag names by increasing bit, as `sd_flag_debug[]` names them.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        SD_FLAG_TABLE
            .iter()
            .enumerate()
            .filter(move |(bit, _)| self.0 & (1 << bit) != 0)
            .map(|(_, (name, _))| *name)
    }

    /// Parses one flag name (`SD_SHARE_LLC`), for files and tests.
    pub fn from_name(name: &str) -> Option<SdFlags> {
        SD_FLAG_TABLE
            .iter()
            .position(|(n, _)| *n == name)
            .map(|bit| SdFlags(1 << bit))
    }

    /// The debugfs form: each name followed by a space (`sd_flags_show`), without the
    /// final newline.
    pub fn debugfs_string(self) -> String {
        let mut s = String::new();
        for name in self.names() {
            s.push_str(name);
            s.push(' ');
        }
        s
    }
}

impl BitOr for SdFlags {
    type Output = SdFlags;
    fn bitor(self, rhs: SdFlags) -> SdFlags {
        SdFlags(self.0 | rhs.0)
    }
}

impl BitOrAssign for SdFlags {
    fn bitor_assign(&mut self, rhs: SdFlags) {
        self.0 |= rhs.0;
    }
}

impl BitAnd for SdFlags {
    type Output = SdFlags;
    fn bitand(self, rhs: SdFlags) -> SdFlags {
        SdFlags(self.0 & rhs.0)
    }
}

impl Not for SdFlags {
    type Output = SdFlags;
    fn not(self) -> SdFlags {
        SdFlags(!self.0)
    }
}

impl fmt::Debug for SdFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<_> = self.names().collect();
        write!(f, "SdFlags({})", names.join("|"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_order_matches_sd_flags_h() {
        assert_eq!(SdFlags::SHARE_LLC.0, 1 << 9);
        assert_eq!(SdFlags::from_name("SD_NUMA"), Some(SdFlags::NUMA));
        let f = SdFlags::BALANCE_NEWIDLE | SdFlags::SHARE_LLC | SdFlags::PREFER_SIBLING;
        assert_eq!(
            f.debugfs_string(),
            "SD_BALANCE_NEWIDLE SD_SHARE_LLC SD_PREFER_SIBLING "
        );
    }

    #[test]
    fn wake_affine_does_not_need_groups() {
        let m = SdFlags::degenerate_groups_mask();
        assert!(!m.contains(SdFlags::WAKE_AFFINE));
        assert!(m.contains(SdFlags::BALANCE_NEWIDLE | SdFlags::NUMA | SdFlags::CLUSTER));
    }
}
