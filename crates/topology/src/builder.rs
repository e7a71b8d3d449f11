//! The domain builder's working state, the struct that `build` fills and `spans` and
//! `attach` read.
//!
//! The struct is on its own so that the builder's steps, split over `build` (domains,
//! groups, capacities) and `spans` (span checks and ids), both extend it without either
//! importing the other; its fields are crate-visible for that reason.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::cpumask::CpuMask;
use crate::domain::{
    BuildOptions, GroupId, SchedDomain, SchedDomainShared, SchedGroup, SchedGroupCapacity, SdId,
    SgcId, SharedId,
};
use crate::levels::LevelTable;
use crate::machine::Machine;
use crate::ring::GroupRing;

/// Working state of one build: arenas plus the kernel's per-level, per-CPU tables.
pub(crate) struct Builder<'m> {
    pub(crate) m: &'m Machine,
    pub(crate) lt: LevelTable,
    pub(crate) opts: BuildOptions,
    pub(crate) doms: Vec<SchedDomain>,
    pub(crate) groups: Vec<SchedGroup>,
    pub(crate) sgcs: Vec<SchedGroupCapacity>,
    pub(crate) sgc_refs: Vec<u32>,
    pub(crate) shared: Vec<SchedDomainShared>,
    /// `sdd->sd`: the domain each CPU built at each level, if it got that far.
    pub(crate) sd_of: Vec<Vec<Option<SdId>>>,
    /// `sdd->sg`: non-overlapping groups, keyed by level and first CPU.
    pub(crate) sg_of: Vec<Vec<Option<GroupId>>>,
    /// `sdd->sgc`.
    pub(crate) sgc_of: Vec<Vec<Option<SgcId>>>,
    /// `sdd->sds`.
    pub(crate) sds_of: Vec<Vec<Option<SharedId>>>,
    /// `rq->cpu_capacity`, starting at `SCHED_CAPACITY_SCALE` as `sched_init` leaves it.
    pub(crate) cpu_capacity: Vec<u64>,
    /// `asym_cap_list`: distinct capacities, descending, with their CPUs.
    pub(crate) asym_cap_list: Vec<(u32, CpuMask)>,
    pub(crate) has_asym: bool,
    pub(crate) warnings: Vec<String>,
    /// Per domain, an id that is equal for two domains exactly when their spans are
    /// equal, so the overlap code compares spans in constant time (filled once every
    /// domain exists; spans never change afterwards).
    pub(crate) span_id: Vec<u32>,
    /// Per level and span id, the group ring of the first CPU that built it
    /// ([`GroupRing`]), which the span's other CPUs share.
    pub(crate) rings: BTreeMap<(usize, u32), GroupRing>,
    /// Per domain, the words of its span that hold CPUs ([`CpuMask::word_range`]).
    pub(crate) span_words: Vec<Range<usize>>,
    /// Per CPU, the words of its SMT siblings mask ([`CpuMask::word_range`]).
    pub(crate) smt_words: Vec<Range<usize>>,
    /// Per level and CPU, the span id of the child of the CPU's domain at that level
    /// (`u32::MAX` without one), laid out densely for `build_balance_mask`'s scans.
    pub(crate) child_span: Vec<Vec<u32>>,
    /// Per domain, the first CPU of its span (`cpumask_first`), which `get_group` asks
    /// for every CPU of every domain and which costs a scan of the mask's leading words.
    pub(crate) span_first: Vec<Option<usize>>,
    /// Per group, the span id of the domain whose span it copies, `None` for the
    /// one-CPU groups of the lowest level.
    pub(crate) group_span: Vec<Option<u32>>,
    /// `group_weight` and `cores` per span id, computed by the first group with that span.
    pub(crate) span_cores: Vec<Option<(u32, u32)>>,
    /// `asym_prefer_cpu` per span id, computed by the first group with that span.
    pub(crate) span_asym: Vec<Option<Option<usize>>>,
    /// `build_balance_mask`'s answer per (level, group span id), with the capacity object
    /// it selects: the same for every overlapping group with that span, which is built
    /// once per CPU that sees it.
    pub(crate) balance_masks: BTreeMap<(usize, u32), (SgcId, CpuMask)>,
    /// Per group, its place in the shared ring of its level and span when that ring is
    /// one every CPU of the span walks as a rotation ([`GroupRing`]; the ring's key and
    /// the group's index in it): `build_sched_groups` then takes the rotation without
    /// walking the span again.
    pub(crate) ring_pos: Vec<Option<(usize, u32, usize)>>,
    /// Per ring key, the CPUs that took their rotation without the walk, whose
    /// `get_group` references are added to the groups' capacity objects at the end.
    pub(crate) ring_walks_saved: BTreeMap<(usize, u32), u32>,
    /// The ring keys whose groups' weights and cores are set: every CPU of the span
    /// would set the same values on the same shared groups again.
    pub(crate) ring_caps_done: std::collections::BTreeSet<(usize, u32)>,
}
