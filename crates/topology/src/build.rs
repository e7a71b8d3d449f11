//! `build_sched_domains`: per-CPU domains for every level, their groups, `imb_numa_nr`
//! and group capacities, in the kernel's order (topology.c), before attachment.
//!
//! The kernel allocates one domain, group, capacity and shared object per level and CPU
//! (`__sdt_alloc`) and claims the ones it uses. The builder mirrors that with lookup tables
//! indexed `[level][cpu]` that create arena entries on first use, so objects are shared
//! exactly where the kernel shares them.

use std::collections::BTreeMap;

use crate::builder::Builder;
use crate::spans::{SpanClasses, UncoveredWrap};

use crate::sync::{AtomicI32, AtomicU64};

use crate::cpumask::CpuMask;
use crate::domain::{
    BuildOptions, GroupId, SchedDomain, SchedDomainShared, SchedGroup, SchedGroupCapacity, SdId,
    SgcId,
};
use crate::error::TopologyError;
use crate::flags::SdFlags;
use crate::levels::{LevelTable, RECLAIM_DISTANCE};
use crate::limits::SCHED_CAPACITY_SCALE;
use crate::machine::Machine;
use crate::ring::GroupRing;

impl<'m> Builder<'m> {
    pub(crate) fn new(m: &'m Machine, opts: BuildOptions) -> Self {
        let lt = LevelTable::new(m);
        let nl = lt.levels.len();
        let n = m.nr_cpus();
        Builder {
            m,
            opts,
            doms: Vec::new(),
            groups: Vec::new(),
            sgcs: Vec::new(),
            sgc_refs: Vec::new(),
            shared: Vec::new(),
            sd_of: vec![vec![None; n]; nl],
            sg_of: vec![vec![None; n]; nl],
            sgc_of: vec![vec![None; n]; nl],
            sds_of: vec![vec![None; n]; nl],
            cpu_capacity: vec![u64::from(SCHED_CAPACITY_SCALE); n],
            asym_cap_list: asym_cpu_capacity_scan(m),
            has_asym: false,
            warnings: Vec::new(),
            span_id: Vec::new(),
            rings: BTreeMap::new(),
            span_words: Vec::new(),
            span_first: Vec::new(),
            child_span: Vec::new(),
            smt_words: m.cpus.iter().map(|c| c.smt_siblings.word_range()).collect(),
            group_span: Vec::new(),
            span_cores: Vec::new(),
            span_asym: Vec::new(),
            balance_masks: BTreeMap::new(),
            ring_pos: Vec::new(),
            ring_walks_saved: BTreeMap::new(),
            ring_caps_done: std::collections::BTreeSet::new(),
            lt,
        }
    }

    /// The first half of `build_sched_domains`, once per root domain of `doms` (the
    /// pairwise disjoint CPU sets `partition_sched_domains` is given): domains for every
    /// CPU of the set and level, each span ANDed with the set and the walk up stopping at
    /// the level that spans all of it, then groups, `imb_numa_nr` and capacities.
    /// Attachment is in `attach.rs`.
    ///
    /// The kernel builds one set after the other with fresh per-level tables. Here the
    /// tables are shared: every key into them (a CPU, a span's first CPU) lies in the set
    /// being built and the sets are disjoint, so no set reaches another's objects. The
    /// domains of every set are built before any group, which changes only the order of
    /// arena entries, and `pack` renumbers those CPU by CPU.
    pub(crate) fn build(&mut self, doms: &[CpuMask]) -> Result<(), TopologyError> {
        let n = self.m.nr_cpus();
        for cpu_map in doms {
            let insane: Vec<Option<SpanClasses>> = (0..self.lt.levels.len())
                .map(|tl| self.insane_span_classes(tl, cpu_map))
                .collect();
            for i in cpu_map.iter() {
                let mut child: Option<SdId> = None;
                for (tl, classes) in insane.iter().enumerate() {
                    if let Some(classes) = classes {
                        self.topology_span_sane(tl, i, classes)?;
                    }
                    let sd = self.build_sched_domain(tl, cpu_map, child, i);
                    self.has_asym |= self.doms[sd].flags.contains(SdFlags::ASYM_CPUCAPACITY);
                    if self.lt.levels[tl].overlap {
                        self.doms[sd].flags |= SdFlags::OVERLAP;
                    }
                    self.sd_of[tl][i] = Some(sd);
                    child = Some(sd);
                    if self.doms[sd].span == *cpu_map {
                        break;
                    }
                }
            }
        }
        self.number_spans();
        for i in 0..n {
            let mut sd = self.sd_of[0][i];
            while let Some(id) = sd {
                self.doms[id].span_weight = self.doms[id].span.weight() as u32;
                if self.doms[id].flags.contains(SdFlags::OVERLAP) {
                    self.build_overlap_sched_groups(id, i);
                } else {
                    self.build_sched_groups(id, i);
                }
                sd = self.doms[id].parent;
            }
        }
        self.add_saved_group_refs();
        for i in 0..n {
            self.compute_imb_numa_nr(i);
        }
        // Capacities are computed from the highest CPU down, so that when a group's
        // balance CPU (its first CPU) sums its child groups, those were already updated.
        for i in (0..n).rev() {
            let mut sd = self.sd_of[0][i];
            while let Some(id) = sd {
                self.init_sched_groups_capacity(i, id);
                sd = self.doms[id].parent;
            }
        }
        Ok(())
    }

    /// Mirrors `build_sched_domain`: `sd_init`, then linking to the child, the span fix-up
    /// for broken arch masks, and `set_domain_attribute`.
    fn build_sched_domain(
        &mut self,
        tl: usize,
        cpu_map: &CpuMask,
        child: Option<SdId>,
        cpu: usize,
    ) -> SdId {
        let sd = self.sd_init(tl, cpu_map, child, cpu);
        if let Some(c) = child {
            self.doms[sd].level = self.doms[c].level + 1;
            self.doms[c].parent = Some(sd);
            if !self.doms[c].span.is_subset(&self.doms[sd].span) {
                self.warnings.push(format!(
                    "BUG: arch topology borken: cpu{cpu}: the {} domain not a subset of the {} domain",
                    self.doms[c].name, self.doms[sd].name
                ));
                let child_span = self.doms[c].span.clone();
                self.doms[sd].span.or_with(&child_span);
            }
        }
        if let Some(request) = self.opts.relax_domain_level {
            if self.doms[sd].level >= request {
                self.doms[sd]
                    .flags
                    .remove(SdFlags::BALANCE_WAKE | SdFlags::BALANCE_NEWIDLE);
            }
        }
        sd
    }

    /// Mirrors `sd_init`: default parameters, topology flags turned into behaviour, the
    /// asymmetric-capacity classification, and the shared object.
    fn sd_init(&mut self, tl: usize, cpu_map: &CpuMask, child: Option<SdId>, cpu: usize) -> SdId {
        let level = self.lt.levels[tl].clone();
        let tl_mask = self.lt.mask(self.m, tl, cpu);
        let sd_weight = tl_mask.weight() as u64;
        let span = cpu_map.and(tl_mask);
        let sd_id = span.first().unwrap_or(cpu);
        let mut flags = SdFlags::BALANCE_NEWIDLE
            | SdFlags::BALANCE_EXEC
            | SdFlags::BALANCE_FORK
            | SdFlags::WAKE_AFFINE
            | SdFlags::PREFER_SIBLING
            | level.sd_flags;
        flags |= self.asym_cpu_capacity_classify(&span, cpu_map);
        if flags.contains(SdFlags::SHARE_CPUCAPACITY) && flags.contains(SdFlags::ASYM_CPUCAPACITY) {
            self.warnings
                .push("CPU capacity asymmetry not supported on SMT".to_string());
        }
        // Do not try to spread tasks across CPUs of different capacities.
        if flags.contains(SdFlags::ASYM_CPUCAPACITY) {
            if let Some(c) = child {
                self.doms[c].flags.remove(SdFlags::PREFER_SIBLING);
            }
        }
        let mut imbalance_pct = 117;
        let cache_nice_tries;
        if flags.contains(SdFlags::SHARE_CPUCAPACITY) {
            imbalance_pct = 110;
            cache_nice_tries = 0;
        } else if flags.contains(SdFlags::SHARE_LLC) {
            imbalance_pct = 117;
            cache_nice_tries = 1;
        } else if flags.contains(SdFlags::NUMA) {
            cache_nice_tries = 2;
            flags.remove(SdFlags::PREFER_SIBLING);
            flags |= SdFlags::SERIALIZE;
            if self.lt.numa.distances[level.numa_level] > RECLAIM_DISTANCE {
                flags.remove(SdFlags::BALANCE_EXEC | SdFlags::BALANCE_FORK | SdFlags::WAKE_AFFINE);
            }
        } else {
            cache_nice_tries = 1;
        }
        let wants_shared = if self.opts.shared_all_non_numa {
            !flags.contains(SdFlags::NUMA)
        } else {
            flags.contains(SdFlags::SHARE_LLC)
        };
        let shared = if wants_shared {
            let id = match self.sds_of[tl][sd_id] {
                Some(id) => id,
                None => {
                    self.shared.push(SchedDomainShared::new(sd_id, tl, 0));
                    let id = self.shared.len() - 1;
                    self.sds_of[tl][sd_id] = Some(id);
                    id
                }
            };
            self.shared[id] = SchedDomainShared::new(sd_id, tl, sd_weight as i32);
            Some(id)
        } else {
            None
        };
        self.doms.push(SchedDomain {
            cpu,
            tl,
            name: level.name,
            level: 0,
            span,
            span_weight: 0,
            flags,
            parent: None,
            child,
            groups: GroupRing::default(),
            min_interval: sd_weight,
            max_interval: 2 * sd_weight,
            busy_factor: 16,
            imbalance_pct,
            cache_nice_tries,
            balance_interval: sd_weight,
            imb_numa_nr: 0,
            shared,
        });
        self.doms.len() - 1
    }

    /// Mirrors `asym_cpu_capacity_classify`: how many distinct capacities the span covers,
    /// and whether some capacity present in `cpu_map` is missing from it.
    fn asym_cpu_capacity_classify(&self, span: &CpuMask, cpu_map: &CpuMask) -> SdFlags {
        let mut count = 0;
        let mut miss = 0;
        for (_, cpus) in &self.asym_cap_list {
            if span.intersects(cpus) {
                count += 1;
            } else if cpu_map.intersects(cpus) {
                miss += 1;
            }
        }
        if count < 2 {
            SdFlags::EMPTY
        } else if miss > 0 {
            SdFlags::ASYM_CPUCAPACITY
        } else {
            SdFlags::ASYM_CPUCAPACITY | SdFlags::ASYM_CPUCAPACITY_FULL
        }
    }

    /// Returns the capacity object `sdd->sgc[cpu]` of level `tl`, creating it on first use,
    /// and takes a reference on it; the bool says whether this was the first reference.
    fn get_sgc(&mut self, tl: usize, cpu: usize, span_for_init: &CpuMask) -> (SgcId, bool) {
        let id = match self.sgc_of[tl][cpu] {
            Some(id) => id,
            None => {
                self.sgcs.push(SchedGroupCapacity {
                    id: cpu,
                    balance_mask: span_for_init.clone(),
                    capacity: AtomicU64::new(0),
                    min_capacity: AtomicU64::new(0),
                    max_capacity: AtomicU64::new(0),
                    next_update: AtomicU64::new(0),
                    imbalance: AtomicI32::new(0),
                });
                self.sgc_refs.push(0);
                let id = self.sgcs.len() - 1;
                self.sgc_of[tl][cpu] = Some(id);
                id
            }
        };
        self.sgc_refs[id] += 1;
        (id, self.sgc_refs[id] == 1)
    }

    /// Mirrors `get_group`: the group of level `tl` standing for `cpu`'s child domain,
    /// shared by every CPU that reaches it and initialised on the first visit.
    fn get_group(&mut self, tl: usize, cpu: usize) -> GroupId {
        let sd = self.sd_of[tl][cpu].expect("get_group is only called for built domains");
        let child = self.doms[sd].child;
        let key = match child {
            Some(c) => self.span_first[c].unwrap_or(cpu),
            None => cpu,
        };
        if let Some(g) = self.sg_of[tl][key] {
            let sgc = self.groups[g].sgc;
            self.sgc_refs[sgc] += 1;
            return g;
        }
        let (span, flags, span_key) = match child {
            Some(c) => (
                self.doms[c].span.clone(),
                self.doms[c].flags,
                Some(self.span_id[c]),
            ),
            None => (CpuMask::single(self.m.nr_cpus(), key), SdFlags::EMPTY, None),
        };
        let (sgc, _) = self.get_sgc(tl, key, &span);
        self.sgcs[sgc].balance_mask = span.clone();
        let scale = u64::from(SCHED_CAPACITY_SCALE);
        self.sgcs[sgc].set_capacities(scale * span.weight() as u64, scale, scale);
        let g = self.push_group(
            SchedGroup {
                span,
                flags,
                sgc,
                group_weight: 0,
                cores: 0,
                asym_prefer_cpu: None,
                span_words: (0, 0), // push_group sets it
            },
            span_key,
        );
        self.sg_of[tl][key] = Some(g);
        g
    }

    /// Adds a group to the arena with the bookkeeping that makes covering and
    /// initialising it cheap.
    fn push_group(&mut self, mut group: SchedGroup, span_key: Option<u32>) -> GroupId {
        // The words of its span that hold CPUs, so that covering the group here and
        // the balancer's walks over it cost its own words and not the machine's.
        let words = group.span.word_range();
        group.span_words = (words.start as u32, words.end as u32);
        self.group_span.push(span_key);
        self.groups.push(group);
        self.groups.len() - 1
    }

    /// Mirrors `build_sched_groups`: walk the span from `cpu`, wrapping, taking each
    /// uncovered CPU's group, so the local group comes first.
    fn build_sched_groups(&mut self, sd: SdId, cpu: usize) {
        let tl = self.doms[sd].tl;
        if let Some(ring) = self.known_rotation(sd, cpu) {
            self.doms[sd].groups = ring;
            return;
        }
        let span = self.doms[sd].span.clone();
        let mut covered = CpuMask::new(self.m.nr_cpus());
        let mut list = Vec::new();
        let mut walk = UncoveredWrap::new(cpu);
        while let Some(i) = walk.next(&span, &covered) {
            let g = self.get_group(tl, i);
            let (lo, hi) = self.groups[g].span_words;
            covered.or_with_words(&self.groups[g].span, lo as usize..hi as usize);
            list.push(g);
        }
        // Every CPU of a span walks the level's groups in the same cyclic order, from its
        // own group: the first CPU's list is the ring the others share (the kernel's
        // `sg->next` links), each checked to be a rotation of it before it shares.
        let key = (self.doms[sd].tl, self.span_id[sd]);
        let shared = self.rings.get(&key).and_then(|r| r.rotation_for(&list));
        self.doms[sd].groups = match shared {
            Some(ring) => ring,
            None => {
                let ring = GroupRing::from_list(list);
                if let std::collections::btree_map::Entry::Vacant(e) = self.rings.entry(key) {
                    e.insert(ring.clone());
                    self.index_if_rotatable(sd, &ring);
                }
                ring
            }
        };
    }

    /// The group of level `tl` that `get_group(tl, i)` returns for CPU `i`, if built.
    fn group_of(&self, tl: usize, i: usize) -> Option<GroupId> {
        let sd = self.sd_of[tl][i]?;
        let key = match self.doms[sd].child {
            Some(c) => self.span_first[c].unwrap_or(i),
            None => i,
        };
        self.sg_of[tl][key]
    }

    /// Indexes a span's first ring when every CPU of the span is known to walk it as a
    /// rotation: its groups are runs of the span's CPUs in order, together the whole
    /// span, and each CPU's own group (`get_group`) is the run holding it. The walk from
    /// any CPU of the span then meets its own group first and the runs after it in
    /// order, wrapping: the ring from that group. A span this does not hold for (an arch
    /// topology the kernel calls broken) keeps the walk for each CPU.
    fn index_if_rotatable(&mut self, sd: SdId, ring: &GroupRing) {
        let tl = self.doms[sd].tl;
        let mut cpus = self.doms[sd].span.iter();
        for &g in ring.iter() {
            let (lo, hi) = self.groups[g].span_words;
            let run = self.groups[g].span.weight_in(lo as usize..hi as usize);
            for _ in 0..run {
                match cpus.next() {
                    Some(i) if self.groups[g].span.test(i) && self.group_of(tl, i) == Some(g) => {}
                    _ => return,
                }
            }
        }
        if cpus.next().is_some() {
            return;
        }
        if self.ring_pos.len() < self.groups.len() {
            self.ring_pos.resize(self.groups.len(), None);
        }
        let span = self.span_id[sd];
        for (at, &g) in ring.iter().enumerate() {
            self.ring_pos[g] = Some((tl, span, at));
        }
    }

    /// `build_sched_groups`' answer for `cpu` without the walk, when its span's ring is
    /// indexed ([`Builder::index_if_rotatable`]): the ring from `cpu`'s own group. This
    /// keeps a flat machine of thousands of CPUs from walking every group of its span
    /// for every CPU (quadratic in the span); the answer is the walk's.
    fn known_rotation(&mut self, sd: SdId, cpu: usize) -> Option<GroupRing> {
        let key = (self.doms[sd].tl, self.span_id[sd]);
        let g = self.group_of(key.0, cpu)?;
        let (tl, span, at) = (*self.ring_pos.get(g)?)?;
        if (tl, span) != key || !self.groups[g].span.test(cpu) {
            return None;
        }
        let ring = self.rings.get(&key)?.rotated(at);
        *self.ring_walks_saved.entry(key).or_insert(0) += 1;
        Some(ring)
    }

    /// The references `get_group` would have taken for the CPUs that skipped the walk:
    /// one per CPU on each group of its ring, as the walk visits each group once.
    fn add_saved_group_refs(&mut self) {
        for (key, &cpus) in &self.ring_walks_saved {
            if let Some(ring) = self.rings.get(key) {
                for &g in ring.iter() {
                    self.sgc_refs[self.groups[g].sgc] += cpus;
                }
            }
        }
    }

    /// Mirrors `build_overlap_sched_groups`: one private group per sibling domain's child,
    /// descending where a sibling's child would reach outside this span.
    fn build_overlap_sched_groups(&mut self, sd: SdId, cpu: usize) {
        let tl = self.doms[sd].tl;
        let span = self.doms[sd].span.clone();
        let mut covered = CpuMask::new(self.m.nr_cpus());
        let mut list = Vec::new();
        let mut walk = UncoveredWrap::new(cpu);
        while let Some(i) = walk.next(&span, &covered) {
            // A CPU whose hierarchy stopped below this level has no domain here.
            let Some(mut sibling) = self.sd_of[tl][i] else {
                continue;
            };
            if !self.doms[sibling].span.test(i) {
                continue;
            }
            if let Some(c) = self.doms[sibling].child {
                if !self.doms[c].span.is_subset(&span) {
                    sibling = self.find_descended_sibling(sd, sibling);
                }
            }
            // build_group_from_child_sched_domain
            let (from, flags) = match self.doms[sibling].child {
                Some(c) => (c, self.doms[c].flags),
                None => (sibling, SdFlags::EMPTY),
            };
            let sg_span = self.doms[from].span.clone();
            covered.or_with_words(&sg_span, self.span_words[from].clone());
            let sgc = self.init_overlap_sched_group(sibling, &sg_span, self.span_id[from]);
            let g = self.push_group(
                SchedGroup {
                    span: sg_span,
                    flags,
                    sgc,
                    group_weight: 0,
                    cores: 0,
                    asym_prefer_cpu: None,
                    span_words: (0, 0), // push_group sets it
                },
                Some(self.span_id[from]),
            );
            list.push(g);
        }
        // Overlapping groups are each CPU's own, so the list is a ring of its own.
        self.doms[sd].groups = GroupRing::from_list(list);
    }

    /// Mirrors `find_descended_sibling`: go down until the child fits in `sd`, then past
    /// levels that would degenerate (same span as their child).
    ///
    /// The kernel steps down one child at a time. Before attachment a CPU's domains are
    /// one per level and each span contains its child's (`build_sched_domain` widens it
    /// otherwise), so whether a level's span fits in `sd` only changes once going down:
    /// the level reached is found by bisection, which matters with hundreds of NUMA
    /// levels. Equal spans are compared by id.
    fn find_descended_sibling(&self, sd: SdId, sibling: SdId) -> SdId {
        let cpu = self.doms[sibling].cpu;
        let fits = |level: usize| {
            self.sd_of[level][cpu].is_some_and(|d| self.doms[d].span.is_subset(&self.doms[sd].span))
        };
        // Levels below `lo` fit and levels from `hi` up to the sibling's do not; the walk
        // stops at the lowest level whose child fits, which is level `lo`.
        let (mut lo, mut hi) = (0, self.doms[sibling].tl);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if fits(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut sibling = self.sd_of[lo][cpu].unwrap_or(sibling);
        while let Some(c) = self.doms[sibling].child {
            if self.span_id[c] != self.span_id[sibling] {
                break;
            }
            sibling = c;
        }
        sibling
    }

    /// Mirrors `init_overlap_sched_group` with `build_balance_mask`: the capacity object
    /// is the one of the first CPU that can reach the group from below. `sg_span_id` is
    /// the span id of `sg_span`, compared with the children's where the kernel compares
    /// their masks.
    fn init_overlap_sched_group(
        &mut self,
        sibling: SdId,
        sg_span: &CpuMask,
        sg_span_id: u32,
    ) -> SgcId {
        let tl = self.doms[sibling].tl;
        if let Some((sgc, mask)) = self.balance_masks.get(&(tl, sg_span_id)) {
            // Seen before: the capacity object already has a reference, so this is
            // `get_sgc`'s later-reference path; the shared mask may have been replaced
            // by a non-overlapping group since, so it is compared again.
            let sgc = *sgc;
            self.sgc_refs[sgc] += 1;
            if self.sgcs[sgc].balance_mask != *mask {
                self.warnings.push(format!(
                    "overlapping group {sg_span}: balance mask {mask} differs from the shared {}",
                    self.sgcs[sgc].balance_mask
                ));
            }
            let scale = u64::from(SCHED_CAPACITY_SCALE);
            self.sgcs[sgc].set_capacities(scale * sg_span.weight() as u64, scale, scale);
            return sgc;
        }
        let mut mask = CpuMask::new(self.m.nr_cpus());
        // A CPU without a domain at this level, or whose domain has no child, has
        // `u32::MAX` there, which is no span's id.
        for i in sg_span.iter() {
            if self.child_span[tl][i] == sg_span_id {
                mask.set(i);
            }
        }
        let cpu = mask.first().unwrap_or(0);
        let (sgc, first_ref) = self.get_sgc(tl, cpu, &mask);
        self.balance_masks
            .insert((tl, sg_span_id), (sgc, mask.clone()));
        if first_ref {
            self.sgcs[sgc].balance_mask = mask;
        } else if self.sgcs[sgc].balance_mask != mask {
            self.warnings.push(format!(
                "overlapping group {sg_span}: balance mask {mask} differs from the shared {}",
                self.sgcs[sgc].balance_mask
            ));
        }
        let scale = u64::from(SCHED_CAPACITY_SCALE);
        self.sgcs[sgc].set_capacities(scale * sg_span.weight() as u64, scale, scale);
        sgc
    }

    /// The `imb_numa_nr` pass of `build_sched_domains`: the NUMA imbalance allowed before
    /// LLCs get imbalanced, per domain of `cpu`.
    fn compute_imb_numa_nr(&mut self, cpu: usize) {
        let mut imb: u32 = 0;
        let mut imb_span: u32 = 1;
        let mut sd = self.sd_of[0][cpu];
        while let Some(id) = sd {
            let child = self.doms[id].child;
            let is_llc = self.doms[id].flags.contains(SdFlags::SHARE_LLC);
            let child_llc = child.is_some_and(|c| self.doms[c].flags.contains(SdFlags::SHARE_LLC));
            if !is_llc && child_llc {
                let c = child.unwrap_or(id);
                let weight = self.doms[id].span_weight;
                let nr_llcs = weight / self.doms[c].span_weight.max(1);
                imb = if nr_llcs == 1 { weight >> 3 } else { nr_llcs };
                imb = imb.max(1);
                self.doms[id].imb_numa_nr = imb;
                let mut top = self.doms[id].parent;
                while let Some(t) = top {
                    if self.doms[t].flags.contains(SdFlags::NUMA) {
                        break;
                    }
                    top = self.doms[t].parent;
                }
                imb_span = match top {
                    Some(t) => self.doms[t].span_weight,
                    None => weight,
                };
            } else {
                let factor = (self.doms[id].span_weight / imb_span.max(1)).max(1);
                self.doms[id].imb_numa_nr = imb * factor;
            }
            sd = self.doms[id].parent;
        }
    }

    /// Mirrors `init_sched_groups_capacity`: group weights and core counts for every group,
    /// then `update_group_capacity` if `cpu` is the balance CPU of its own group.
    ///
    /// The kernel recomputes a shared group's weight and cores from every CPU that holds
    /// it; they depend on the span alone, so each span's values are computed once and
    /// copied to every group with that span. On a flat machine of thousands of CPUs the
    /// recomputation is what made this step cubic.
    fn init_sched_groups_capacity(&mut self, cpu: usize, sd: SdId) {
        let asym_packing = self.doms[sd].flags.contains(SdFlags::ASYM_PACKING);
        // A ring shared by the span's CPUs holds the same groups for each: their weights
        // and cores were set by the first, and setting them again for every other CPU
        // made this step quadratic in the span.
        let key = (self.doms[sd].tl, self.span_id[sd]);
        let shared = self
            .rings
            .get(&key)
            .is_some_and(|r| r.shares_with(&self.doms[sd].groups));
        let set = shared && !self.ring_caps_done.insert(key);
        for k in 0..if set { 0 } else { self.doms[sd].groups.len() } {
            let g = self.doms[sd].groups[k];
            let (weight, cores) = match self.group_span[g] {
                Some(id) => match self.span_cores[id as usize] {
                    Some(known) => known,
                    None => {
                        let counted = self.weight_and_cores(&self.groups[g].span);
                        self.span_cores[id as usize] = Some(counted);
                        counted
                    }
                },
                None => self.weight_and_cores(&self.groups[g].span),
            };
            self.groups[g].group_weight = weight;
            self.groups[g].cores = cores;
            if asym_packing {
                let best = match self.group_span[g] {
                    Some(id) => match self.span_asym[id as usize] {
                        Some(known) => known,
                        None => {
                            let best = self.asym_prefer_cpu(&self.groups[g].span);
                            self.span_asym[id as usize] = Some(best);
                            best
                        }
                    },
                    None => self.asym_prefer_cpu(&self.groups[g].span),
                };
                self.groups[g].asym_prefer_cpu = best;
            }
        }
        let head = self.doms[sd].groups[0];
        if cpu != self.sgcs[self.groups[head].sgc].balance_cpu() {
            return;
        }
        self.update_group_capacity(sd, cpu);
    }

    /// `sg->group_weight` and `sg->cores` of a group spanning `span`: its CPUs, and its
    /// CPUs once SMT siblings are folded together, as `init_sched_groups_capacity`
    /// counts them.
    fn weight_and_cores(&self, span: &CpuMask) -> (u32, u32) {
        let mut rest = span.clone();
        let mut cores = 0;
        for c in span.iter() {
            if !rest.test(c) {
                continue;
            }
            cores += 1;
            // Only the words holding the siblings change.
            let siblings = &self.m.cpus[c].smt_siblings;
            rest.andnot_with_words(siblings, self.smt_words[c].clone());
        }
        (span.weight() as u32, cores)
    }

    /// `sg->asym_prefer_cpu` of a group spanning `span`: the highest priority, the first
    /// on ties.
    fn asym_prefer_cpu(&self, span: &CpuMask) -> Option<usize> {
        let mut best: Option<usize> = None;
        for c in span.iter() {
            if best.is_none_or(|b| self.m.sched_asym_prefer(c, b)) {
                best = Some(c);
            }
        }
        best
    }

    /// Mirrors `update_group_capacity` (fair.c) at build time: the bottom level takes the
    /// CPU's capacity (`update_cpu_capacity`; no RT or IRQ pressure exists yet), overlapping
    /// children sum `capacity_of` per CPU, others sum their child groups.
    fn update_group_capacity(&mut self, sd: SdId, cpu: usize) {
        let head_sgc = self.groups[self.doms[sd].groups[0]].sgc;
        let Some(child) = self.doms[sd].child else {
            let cap = u64::from(self.m.cpus[cpu].capacity).max(1);
            self.cpu_capacity[cpu] = cap;
            self.sgcs[head_sgc].set_capacities(cap, cap, cap);
            return;
        };
        let mut capacity = 0u64;
        let mut min = u64::MAX;
        let mut max = 0u64;
        if self.doms[child].flags.contains(SdFlags::OVERLAP) {
            let span = self.groups[self.doms[sd].groups[0]].span.clone();
            for c in span.iter() {
                let cap = self.cpu_capacity[c];
                capacity += cap;
                min = min.min(cap);
                max = max.max(cap);
            }
        } else {
            for &g in &self.doms[child].groups {
                let (c, lo, hi) = self.sgcs[self.groups[g].sgc].capacities();
                capacity += c;
                min = min.min(lo);
                max = max.max(hi);
            }
        }
        self.sgcs[head_sgc].set_capacities(capacity, min, max);
    }
}

/// Mirrors `asym_cpu_capacity_scan`: the distinct CPU capacities, descending, each with its
/// CPUs; empty when every CPU has the same capacity.
fn asym_cpu_capacity_scan(m: &Machine) -> Vec<(u32, CpuMask)> {
    let mut list: Vec<(u32, CpuMask)> = Vec::new();
    for (cpu, c) in m.cpus.iter().enumerate() {
        match list.iter_mut().find(|(cap, _)| *cap == c.capacity) {
            Some((_, mask)) => mask.set(cpu),
            None => list.push((c.capacity, CpuMask::single(m.nr_cpus(), cpu))),
        }
    }
    list.sort_by_key(|e| std::cmp::Reverse(e.0));
    if list.len() == 1 {
        list.clear();
    }
    list
}
