//! `estimate_build_memory`: an upper bound, computed from the machine before anything is
//! built, of the bytes `build_sched_domains` has allocated at its peak, so that callers
//! can refuse a machine whose hierarchy would not fit instead of running out of memory
//! halfway through.
//!
//! The build's memory is its objects: one domain per CPU and level until the CPU's span
//! covers the machine (`build_sched_domains` stops there), groups, capacity and shared
//! objects, each holding masks of `nr_cpus / 8` bytes, and one group list per domain. The
//! levels are the architecture's plus NODE plus one NUMA level per distinct distance
//! (`sched_init_numa`), so a distance table with hundreds of distinct values multiplies
//! everything. The counts below follow the builder's own rules:
//!
//! - Non-NUMA levels are walked exactly: each CPU's span per level is its level mask,
//!   widened by its child's span where the arch masks are broken (`build_sched_domain`),
//!   and the CPU stops at the first level spanning every CPU. A domain's group list holds
//!   one group per distinct child span among its CPUs when the child level's spans are
//!   equal or disjoint (the groups are then those child spans), else at most one per CPU.
//! - NUMA level `j` of a CPU on node `v` spans the nodes within the level's distance (plus
//!   whatever its NODE span holds). When every node's NODE span is exactly the node
//!   (`node_distance(v, v)` the smallest distance and the arch masks inside the node),
//!   every overlapping group covers the whole node of the CPU that created it, found by
//!   following `build_overlap_sched_groups` and `find_descended_sibling`: the group is the
//!   span of a domain at NODE level or above. So a domain has at most one group per node
//!   in its span; otherwise at most one per CPU of its span. A CPU's NUMA levels stop at
//!   the first whose nodes hold every CPU.
//! - Every object is counted as alive at once: the builder's arenas and tables, the level
//!   table, the bookkeeping the builder keeps to go fast, and the packed result that
//!   `cpu_attach_domain`'s pass moves the objects into, which all coexist at the end of
//!   the build. Vectors filled by pushes count three times their length (capacity up to
//!   twice the length, and the old block beside the new one while growing); each heap
//!   block counts glibc's chunk header and rounding.
//!
//! Not counted: the text of the "overlapping group ... balance mask differs" warnings,
//! which carry CPU lists and which no machine fairsim describes has produced; the
//! estimate's own temporaries (the arch masks and one level of spans), which are freed
//! before the build starts and are smaller than what the build itself holds.

use std::collections::BTreeMap;
use std::mem::size_of;

use crate::cpumask::CpuMask;
use crate::domain::{
    BuildOptions, CpuDomains, SchedDomain, SchedDomainShared, SchedGroup, SchedGroupCapacity,
};
use crate::error::TopologyError;
use crate::flags::SdFlags;
use crate::levels::{arch_levels, arch_mask_index, arch_masks, has_numa_in_package, TopologyLevel};
use crate::limits::LOCAL_DISTANCE;
use crate::machine::Machine;

/// A vector filled by pushes holds at most twice its length, and while it grows the old
/// block lives beside the new one.
const PUSH_SLACK: u64 = 3;

/// Small allocations the count leaves out (names, level descriptions, per-domain scratch
/// masks, the validation's masks, the list of CPU sets `build_root_domains` is given),
/// bounded generously: the measured peak of the smallest machines, a few hundred KiB of
/// allocator and resident-page granularity (and the builder's code pages, which the
/// resident set counts: the shared group rings' code added about 64 KiB to a 6-CPU
/// build's; the allocator grows the heap in 64 KiB steps, which a run may or may not take), sits within a page of it.
const FIXED: u64 = 392 << 10;

/// Bytes one warning line of the builder takes, for the ones without CPU lists
/// ("BUG: arch topology borken: ...", "CPU capacity asymmetry not supported on SMT").
const WARNING: u64 = 192;

/// The bytes the allocator hands out for a heap block of `bytes`: glibc's 8-byte chunk
/// header, rounding to 16, and its 32-byte minimum chunk.
fn block(bytes: u64) -> u64 {
    if bytes == 0 {
        0
    } else {
        (bytes + 8).div_ceil(16).max(2) * 16
    }
}

fn size<T>() -> u64 {
    size_of::<T>() as u64
}

/// What the build creates, counted per kind.
#[derive(Debug, Default)]
struct Counts {
    doms: u64,
    /// Bytes of the domains' group lists (one exact-size block each).
    list_bytes: u64,
    groups: u64,
    /// Capacity objects: at most one per group, created by the group that first needs it.
    sgcs: u64,
    /// `build_balance_mask` memo entries, one per distinct (level, overlapping group span).
    memo: u64,
    shared: u64,
    warnings: u64,
}

/// An upper bound of the bytes [`crate::build_sched_domains`] allocates for `m` with
/// `opts`, computed without building (see the module documentation for the reasoning).
/// A machine that fails [`Machine::validate`] is refused before the build allocates
/// anything but the check's masks, so its estimate is small.
pub fn estimate_build_memory(m: &Machine, opts: BuildOptions) -> u64 {
    if m.validate().is_err() {
        return FIXED;
    }
    let n = m.nr_cpus();
    let nodes = m.nr_nodes() as u64;
    let n64 = n as u64;
    let mask = block(n64.div_ceil(64) * 8);
    let cm = size::<CpuMask>();
    let distances = distinct_distances(m);
    let nd = distances.len() as u64;
    let arch = arch_levels(m, has_numa_in_package(m));
    let nr_levels = arch.len() as u64 + nd;

    let mut c = Counts::default();
    let (node_spans, alive) = count_non_numa(m, &arch, distances[0], opts, &mut c);
    count_numa(m, &distances, &node_spans, &alive, &mut c);
    if m.is_asymmetric() {
        c.warnings += n64;
    }
    let sgcs = c.sgcs;

    // The builder's arenas (pushed) and the masks their objects own.
    let arenas = PUSH_SLACK
        * (c.doms * size::<SchedDomain>()
            + c.groups * (size::<SchedGroup>() + 8 + size::<Option<(usize, u32, usize)>>())
            + sgcs * (size::<SchedGroupCapacity>() + 4)
            + c.shared * size::<SchedDomainShared>());
    let masks = (c.doms + c.groups + sgcs) * mask + c.list_bytes;
    // build_balance_mask's memo: a key, the capacity id and a mask per distinct group.
    let memo = c.memo * (96 + cm + mask);
    // Span ids, word ranges and first CPUs per domain, the ordered map that numbers the
    // spans, the per-span caches of weights and preferred CPUs, the map of shared group
    // rings and the two sets of ring keys beside it (at most an entry per domain each).
    let spans = c.doms * (4 + 16 + 16 + 64 + 12 + 16 + 64 + 2 * 64) + 6 * block(8);
    // sd_of, sg_of, sgc_of, sds_of of [level][cpu] Option<usize>, child_span of u32,
    // rq capacities, the asymmetric capacity list.
    let tables = nr_levels * (4 * (24 + block(16 * n64)) + 24 + block(4 * n64))
        + block(8 * n64)
        + n64.min(1024) * (40 + mask);
    // The level table: four arch masks per CPU, NUMA masks per level and node, and
    // sched_init_numa's flattened distance list.
    let level_table = 4 * (block(cm * n64) + n64 * mask)
        + nd * (block(cm * nodes) + nodes * mask)
        + block(4 * nodes * nodes)
        + block(8 * nodes)
        + nr_levels * 64;
    // topology_span_sane's classes of the non-NUMA levels: a map entry and a CPU list
    // per CPU and level.
    let sanity = arch.len() as u64 * n64 * 112;
    // cpu_attach_domain and the packing: the base pointers, the id maps, the orders, the
    // per-CPU pointers and the result's arenas (exact sizes).
    // The packing renumbers each group ring once into a new one while the builder's
    // rings live (a map entry per ring keeps both).
    let attach = block(16 * n64)
        + c.list_bytes
        + c.doms * 96
        + 8 * (c.doms + c.groups + sgcs + c.shared)
        + PUSH_SLACK * 8 * (c.doms + c.groups + sgcs + c.shared)
        + n64 * size::<CpuDomains>()
        // Each CPU's root domain index while attaching, and the root domains' spans kept
        // in the result (one for the whole machine).
        + block(8 * n64)
        + cm
        + mask
        + c.doms * size::<SchedDomain>()
        + c.groups * size::<SchedGroup>()
        + sgcs * size::<SchedGroupCapacity>()
        + c.shared * size::<SchedDomainShared>();
    // One group list under construction (before shrink_to_fit) and its growth.
    let scratch = PUSH_SLACK * 8 * n64 + 8 * mask;
    arenas
        + masks
        + memo
        + spans
        + tables
        + level_table
        + sanity
        + attach
        + scratch
        + c.warnings * WARNING
        + FIXED
}

/// Checks that building `m` fits in `budget` bytes: the estimate when it does, else a
/// one-line error naming the machine's size and the two figures in MiB.
pub fn check_build_memory(
    m: &Machine,
    opts: BuildOptions,
    budget: u64,
) -> Result<u64, TopologyError> {
    let need = estimate_build_memory(m, opts);
    if need <= budget {
        return Ok(need);
    }
    let levels = arch_levels(m, has_numa_in_package(m)).len() + distinct_distances(m).len();
    Err(TopologyError::TooBig {
        cpus: m.nr_cpus(),
        nodes: m.nr_nodes(),
        levels,
        need_mib: need.div_ceil(1 << 20),
        budget_mib: budget >> 20,
    })
}

/// `sched_domains_numa_distance[]` as `sched_init_numa` collects it.
fn distinct_distances(m: &Machine) -> Vec<u32> {
    let mut d: Vec<u32> = m.distance.iter().flatten().copied().collect();
    d.sort_unstable();
    d.dedup();
    if d.is_empty() {
        d.push(LOCAL_DISTANCE);
    }
    d
}

/// Counts the domains, groups and lists of the arch levels and NODE, walking each CPU's
/// spans as `build_sched_domain` widens them. Returns the NODE span weight of each CPU
/// (0 when its hierarchy ended below NODE) and whether each CPU goes on to the NUMA levels.
fn count_non_numa(
    m: &Machine,
    arch: &[TopologyLevel],
    local: u32,
    opts: BuildOptions,
    c: &mut Counts,
) -> (Vec<u64>, Vec<bool>) {
    let n = m.nr_cpus();
    let am = arch_masks(m);
    // NODE spans the nodes within the smallest distance: the CPU's own node when its
    // diagonal entry is that distance, else nothing (the diagonal is the row's minimum).
    let node_mask: Vec<CpuMask> = (0..m.nr_nodes())
        .map(|v| {
            let mut mk = CpuMask::new(n);
            for k in 0..m.nr_nodes() {
                if m.node_distance(v, k) <= local {
                    mk.or_with(&m.node_cpus[k]);
                }
            }
            mk
        })
        .collect();
    let mut alive = vec![true; n];
    let mut prev: Vec<Option<CpuMask>> = vec![None; n];
    let nr_levels = arch.len() + 1;
    for level in 0..nr_levels {
        let (level_mask, flags) = match arch.get(level) {
            Some(tl) => (Some(&am[arch_mask_index(tl.mask)]), tl.sd_flags),
            None => (None, SdFlags::EMPTY),
        };
        let mut cur: Vec<Option<CpuMask>> = vec![None; n];
        for (i, slot) in cur.iter_mut().enumerate() {
            if !alive[i] {
                continue;
            }
            let mut span = match level_mask {
                Some(masks) => masks[i].clone(),
                None => node_mask[m.cpus[i].node].clone(),
            };
            if let Some(child) = &prev[i] {
                if !child.is_subset(&span) {
                    span.or_with(child);
                    c.warnings += 1;
                }
            }
            if span.weight() == n {
                alive[i] = false;
            }
            *slot = Some(span);
        }
        let lists = level_lists(&prev, &cur, level == 0);
        c.doms += lists.lens.iter().flatten().count() as u64;
        c.list_bytes += lists.list_bytes;
        c.groups += lists.groups;
        c.sgcs += lists.groups;
        let wants_shared = if opts.shared_all_non_numa {
            true
        } else {
            flags.contains(SdFlags::SHARE_LLC)
        };
        // One shared object per first CPU of a span.
        if wants_shared {
            c.shared += lists.distinct_spans;
        }
        prev = cur;
    }
    let node_spans = prev
        .iter()
        .map(|s| s.as_ref().map_or(0, |s| s.weight() as u64))
        .collect();
    (node_spans, alive)
}

/// The heap block of a group ring of `len` groups: an `Arc<[GroupId]>`, its two counts
/// before the ids.
fn ring_bytes(len: u64) -> u64 {
    block(16 + 8 * len)
}

/// The groups of one non-NUMA level.
struct LevelLists {
    /// The group list length of each CPU's domain, `None` where it has none.
    lens: Vec<Option<u64>>,
    /// Bytes of the level's group rings: one per span whose CPUs all walk the same
    /// cyclic order (they share it), one per domain elsewhere.
    list_bytes: u64,
    /// The group objects the level creates (shared by every domain that lists them).
    groups: u64,
    /// The distinct spans of the level's domains.
    distinct_spans: u64,
}

/// The groups of a non-NUMA level, from its spans `cur` and the child level's `prev`.
fn level_lists(prev: &[Option<CpuMask>], cur: &[Option<CpuMask>], bottom: bool) -> LevelLists {
    let n = cur.len() as u64;
    let mut distinct: BTreeMap<&CpuMask, u64> = BTreeMap::new();
    for s in cur.iter().flatten() {
        distinct.insert(s, 0);
    }
    let distinct_spans = distinct.len() as u64;
    if bottom || !is_partition(prev) {
        // One group per CPU of the span at most: every group starts at an uncovered CPU,
        // and the level has at most one group object per CPU (`sdd->sg` per CPU).
        let lens: Vec<Option<u64>> = cur
            .iter()
            .map(|s| s.as_ref().map(|s| s.weight() as u64))
            .collect();
        let entries: u64 = lens.iter().flatten().sum();
        // The lowest level's groups are its CPUs, each once: every walk of a span is a
        // rotation of the sorted one, so each span's CPUs share one ring. Above a child
        // level that is no partition, count a ring per domain.
        let list_bytes = if bottom {
            distinct.keys().map(|s| ring_bytes(s.weight() as u64)).sum()
        } else {
            lens.iter().flatten().map(|&l| ring_bytes(l)).sum()
        };
        return LevelLists {
            lens,
            list_bytes,
            groups: entries.min(n),
            distinct_spans,
        };
    }
    // The child spans are equal or disjoint, so the groups are the distinct child spans
    // among the span's CPUs, keyed by their first CPUs: counted once per distinct span,
    // and once over the whole level for the group objects.
    let key: Vec<Option<usize>> = prev
        .iter()
        .map(|s| s.as_ref().and_then(CpuMask::first))
        .collect();
    let mut seen = vec![usize::MAX; prev.len()];
    let mut level_seen = vec![false; prev.len()];
    let mut groups = 0;
    let mut lens = Vec::with_capacity(cur.len());
    let mut list_bytes = 0;
    // Per distinct span, whether its CPUs share one ring.
    let mut shares: BTreeMap<&CpuMask, bool> = BTreeMap::new();
    for (i, s) in cur.iter().enumerate() {
        let Some(s) = s else {
            lens.push(None);
            continue;
        };
        let known = distinct.get(s).copied().unwrap_or(0);
        if known > 0 {
            lens.push(Some(known));
            if !shares[s] {
                list_bytes += ring_bytes(known);
            }
            continue;
        }
        let mut len = 0;
        for j in s.iter() {
            match key[j] {
                Some(k) if seen[k] == i => {}
                Some(k) => {
                    seen[k] = i;
                    len += 1;
                    if !level_seen[k] {
                        level_seen[k] = true;
                        groups += 1;
                    }
                }
                None => {
                    len += 1;
                    groups += 1;
                }
            }
        }
        distinct.insert(s, len);
        lens.push(Some(len));
        list_bytes += ring_bytes(len);
        shares.insert(s, walks_are_rotations(s, &key));
    }
    LevelLists {
        lens,
        list_bytes,
        groups: groups.min(n),
        distinct_spans,
    }
}

/// Whether every walk of span `s` from one of its CPUs (`for_each_cpu_wrap`, a group at
/// its first uncovered CPU; `key` names each CPU's group) meets the groups in a rotation
/// of the order the walk from the span's first CPU meets them: then the builder shares
/// one ring among the span's CPUs ([`crate::ring::GroupRing`]). The check walks from
/// every CPU of the span, as the build itself does.
fn walks_are_rotations(s: &CpuMask, key: &[Option<usize>]) -> bool {
    let cpus: Vec<usize> = s.iter().collect();
    // A CPU without a child has a group of its own: its own number is its key.
    let group = |j: usize| key[j].unwrap_or(j);
    let mut order: Vec<usize> = Vec::new();
    let mut pos_in_order: BTreeMap<usize, usize> = BTreeMap::new();
    for &j in &cpus {
        let g = group(j);
        if let std::collections::btree_map::Entry::Vacant(e) = pos_in_order.entry(g) {
            e.insert(order.len());
            order.push(g);
        }
    }
    let len = order.len();
    let slot: Vec<usize> = cpus.iter().map(|&j| pos_in_order[&group(j)]).collect();
    // Groups that are runs of the span's CPUs in order (the slots never go back) are met
    // in a rotation from any CPU, the walk starting at its own run: the answer without
    // walking from every CPU, which is quadratic in the span.
    if slot.windows(2).all(|w| w[0] <= w[1]) {
        return true;
    }
    let mut seen = vec![usize::MAX; len];
    for p in 0..cpus.len() {
        let start = slot[p];
        let mut k = 0;
        for q in (p..cpus.len()).chain(0..p) {
            let g = slot[q];
            if seen[g] == p {
                continue;
            }
            seen[g] = p;
            let want = start + k;
            if g != if want >= len { want - len } else { want } {
                return false;
            }
            k += 1;
            if k == len {
                break;
            }
        }
    }
    true
}

/// Whether the spans present hold their own CPU and are pairwise equal or disjoint.
fn is_partition(spans: &[Option<CpuMask>]) -> bool {
    let mut distinct: BTreeMap<&CpuMask, ()> = BTreeMap::new();
    for (i, s) in spans.iter().enumerate() {
        if let Some(s) = s {
            if !s.test(i) {
                return false;
            }
            distinct.insert(s, ());
        }
    }
    let Some(first) = distinct.keys().next() else {
        return true;
    };
    let mut union = CpuMask::new(first.nbits());
    let mut total = 0;
    for s in distinct.keys() {
        union.or_with(s);
        total += s.weight();
    }
    total == union.weight()
}

/// Counts the domains and overlapping groups of the NUMA levels.
fn count_numa(m: &Machine, distances: &[u32], node_spans: &[u64], alive: &[bool], c: &mut Counts) {
    let n = m.nr_cpus() as u64;
    let nodes = m.nr_nodes();
    let local = distances[0];
    let node_weight: Vec<u64> = m.node_cpus.iter().map(|k| k.weight() as u64).collect();
    // Regular: every CPU that reaches the NUMA levels has exactly its node as NODE span,
    // so groups hold whole nodes. CPUs whose hierarchy ended earlier build no group.
    let regular = (0..nodes).all(|v| m.node_distance(v, v) == local)
        && (0..m.nr_cpus()).all(|i| !alive[i] || node_spans[i] == node_weight[m.cpus[i].node]);
    // Per node and NUMA level: the nodes and CPUs within the level's distance.
    let mut within: Vec<Vec<(u64, u64)>> = Vec::with_capacity(nodes);
    for v in 0..nodes {
        let mut nearest: Vec<usize> = (0..nodes).collect();
        nearest.sort_by_key(|&k| m.node_distance(v, k));
        let (mut next, mut count, mut cpus) = (0, 0u64, 0u64);
        let mut row = Vec::with_capacity(distances.len());
        for &d in distances {
            while let Some(&k) = nearest.get(next) {
                if m.node_distance(v, k) > d {
                    break;
                }
                count += 1;
                cpus += node_weight[k];
                next += 1;
            }
            row.push((count, cpus));
        }
        within.push(row);
    }
    let exact = if regular {
        walk_overlap_groups(m, distances, alive)
    } else {
        None
    };
    let mut overlap_groups = 0;
    for (i, cpu) in m.cpus.iter().enumerate() {
        if !alive[i] {
            continue;
        }
        let v = cpu.node;
        for (j, &(count, cpus)) in within[v].iter().enumerate().skip(1) {
            let span = n.min(cpus + node_spans[i]);
            let groups = match &exact {
                Some(walked) => walked[j][v],
                None if regular => span.min(count),
                None => span,
            };
            c.doms += 1;
            c.list_bytes += ring_bytes(groups);
            c.groups += groups;
            overlap_groups += groups;
            if !regular {
                // The span may be widened by its child's ("arch topology borken").
                c.warnings += 1;
            }
            if cpus == n {
                break;
            }
        }
    }
    // Overlapping groups share their capacity object and balance mask by (level, span).
    // On a regular machine a group's span is a domain span of its CPU at NODE level or
    // above, which depends only on the level and the node: at most one per NUMA level
    // and node.
    let keys = if regular {
        overlap_groups.min((distances.len() as u64 - 1) * nodes as u64)
    } else {
        overlap_groups
    };
    c.sgcs += keys;
    c.memo += keys;
}

/// Largest node count for which [`walk_overlap_groups`] runs: its cost grows with the
/// cube of the node count.
const WALK_MAX_NODES: usize = 256;

/// The group count of every NUMA domain, `[level][node]`, found by running
/// `build_overlap_sched_groups` on nodes instead of CPUs; `None` where that is not exact.
///
/// On a regular machine (see [`count_numa`]) whose nodes are contiguous CPU ranges, every
/// CPU of a node has the same spans, and the group a CPU of node `k` brings to the
/// domain of level `j` of node `v` is the highest of `k`'s NUMA masks below `j` that fits
/// in `v`'s (`find_descended_sibling` goes down until the child fits). Walking the span
/// from the domain's CPU visits the rest of node `v` first, then the other nodes in CPU
/// order, wrapping; a node is skipped when covered or when its CPUs' hierarchies ended
/// below the level. Many distinct distances make many levels whose groups are few large
/// spans, where one group per node would overcount a hundredfold.
fn walk_overlap_groups(m: &Machine, distances: &[u32], alive: &[bool]) -> Option<Vec<Vec<u64>>> {
    let nodes = m.nr_nodes();
    let ranges: Vec<(usize, usize)> = m
        .node_cpus
        .iter()
        .map(|k| (k.first().unwrap_or(0), k.weight()))
        .collect();
    let contiguous = m
        .node_cpus
        .iter()
        .zip(&ranges)
        .all(|(k, &(first, weight))| k.next_from(first + weight).is_none());
    if nodes > WALK_MAX_NODES || !contiguous {
        return None;
    }
    let words = nodes.div_ceil(64);
    // within[level][node]: the nodes within the level's distance, as a node bitmap.
    let mut within = vec![vec![vec![0u64; words]; nodes]; distances.len()];
    for (level, &d) in distances.iter().enumerate() {
        for (v, bits) in within[level].iter_mut().enumerate() {
            for k in 0..nodes {
                if m.node_distance(v, k) <= d {
                    bits[k / 64] |= 1 << (k % 64);
                }
            }
        }
    }
    let full = |bits: &[u64]| (0..nodes).all(|k| bits[k / 64] & (1 << (k % 64)) != 0);
    let subset = |a: &[u64], b: &[u64]| a.iter().zip(b).all(|(x, y)| x & !y == 0);
    // The last NUMA level each node's CPUs reach: the first whose span is every node.
    let reach: Vec<usize> = (0..nodes)
        .map(|k| {
            let (first, weight) = ranges[k];
            if weight == 0 || !alive[first] {
                return 0;
            }
            (1..distances.len())
                .find(|&j| full(&within[j][k]))
                .unwrap_or(distances.len() - 1)
        })
        .collect();
    let mut order: Vec<usize> = (0..nodes).collect();
    order.sort_by_key(|&k| ranges[k].0);
    let mut counts = vec![vec![0u64; nodes]; distances.len()];
    for j in 1..distances.len() {
        for (pos, &v) in order.iter().enumerate() {
            if reach[v] < j {
                continue;
            }
            let span = &within[j][v];
            let mut covered = vec![0u64; words];
            let mut groups = 0;
            for step in 0..nodes {
                let k = order[(pos + step) % nodes];
                let bit = 1u64 << (k % 64);
                if span[k / 64] & bit == 0 || covered[k / 64] & bit != 0 || reach[k] < j {
                    continue;
                }
                // The highest level below j whose mask of k fits in the span; level 0
                // (NODE, the node alone) always does.
                let (mut lo, mut hi) = (0, j - 1);
                while lo < hi {
                    let mid = (lo + hi).div_ceil(2);
                    if subset(&within[mid][k], span) {
                        lo = mid;
                    } else {
                        hi = mid - 1;
                    }
                }
                if lo == 0 {
                    covered[k / 64] |= bit;
                } else {
                    for (c, w) in covered.iter_mut().zip(&within[lo][k]) {
                        *c |= w;
                    }
                }
                groups += 1;
            }
            counts[j][v] = groups;
        }
    }
    Some(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_like_glibc() {
        assert_eq!(block(0), 0);
        assert_eq!(block(1), 32);
        assert_eq!(block(24), 32);
        assert_eq!(block(25), 48);
        assert_eq!(block(1024), 1040);
    }

    #[test]
    fn walks_share_a_ring_only_when_every_start_gives_a_rotation() {
        // x86's numbering: SMT siblings k and k + 4 in an 8-CPU MC span. From CPU 2 the
        // walk meets {2,6}, {3,7}, {0,4}, {1,5}: a rotation of the walk from CPU 0.
        let span = CpuMask::full(8);
        let smt: Vec<Option<usize>> = (0..8).map(|c| Some(c % 4)).collect();
        assert!(walks_are_rotations(&span, &smt));
        // Siblings {0,5}, {1,4}, {2,3}: from CPU 0 the walk meets A, B, C; from CPU 2,
        // C, B, A, which no rotation of A, B, C gives, so each CPU keeps its own list.
        let span = CpuMask::full(6);
        let odd = [0, 1, 2, 2, 1, 0].map(Some).to_vec();
        assert!(!walks_are_rotations(&span, &odd));
    }
}
