//! The second half of `build_sched_domains`: `cpu_attach_domain` for every CPU (removing
//! degenerate domains), `update_top_cache_domain`, and packing the surviving objects.

use std::collections::BTreeMap;

use crate::builder::Builder;
use crate::cpumask::CpuMask;
use crate::domain::{BuildOptions, CpuDomains, SchedDomains, SdId};
use crate::error::TopologyError;
use crate::flags::{SdFlags, SDF_SHARED_CHILD, SD_FLAG_TABLE};
use crate::machine::Machine;
use crate::ring::GroupRing;

/// Builds and attaches the sched domains of `m` as Linux 6.12.117's
/// `build_sched_domains` does for a root domain spanning every CPU.
pub fn build_sched_domains(m: &Machine, opts: BuildOptions) -> Result<SchedDomains, TopologyError> {
    m.validate()?;
    build_root_domains(m, opts, vec![CpuMask::full(m.nr_cpus())])
}

/// Builds `doms`, pairwise disjoint CPU sets that together cover the machine, one root
/// domain each: `build_sched_domains` once per set, as `partition_sched_domains_locked`
/// calls it for each new set. The callers check the sets ([`crate::partition`]).
pub(crate) fn build_root_domains(
    m: &Machine,
    opts: BuildOptions,
    doms: Vec<CpuMask>,
) -> Result<SchedDomains, TopologyError> {
    let mut b = Builder::new(m, opts);
    b.build(&doms)?;
    let n = m.nr_cpus();
    let mut base: Vec<Option<SdId>> = vec![None; n];
    let mut root_domain = vec![0; n];
    let mut cluster_active = false;
    for (rd, cpu_map) in doms.iter().enumerate() {
        for cpu in cpu_map.iter() {
            let first = b.sd_of[0][cpu];
            let sd = cpu_attach_domain(&mut b, first);
            if lowest_flag_domain(&b, sd, SdFlags::CLUSTER).is_some() {
                cluster_active = true;
            }
            base[cpu] = sd;
            root_domain[cpu] = rd;
        }
    }
    let mut sds = pack(b, base, cluster_active);
    for (c, rd) in sds.cpus.iter_mut().zip(root_domain) {
        c.root_domain = rd;
    }
    sds.root_domains = doms;
    Ok(sds)
}

/// Mirrors `sd_degenerate`: one CPU, or nothing that needs groups while having only one,
/// and no affine wakeups.
fn sd_degenerate(b: &Builder<'_>, sd: SdId) -> bool {
    let d = &b.doms[sd];
    if d.span.weight() == 1 {
        return true;
    }
    if d.flags.intersects(SdFlags::degenerate_groups_mask()) && d.groups.len() > 1 {
        return false;
    }
    if d.flags.intersects(SdFlags::WAKE_AFFINE) {
        return false;
    }
    true
}

/// Mirrors `sd_parent_degenerate`: the parent adds nothing over `sd` (same span, no flag
/// `sd` lacks, ignoring group-needing flags when it has a single group).
fn sd_parent_degenerate(b: &Builder<'_>, sd: SdId, parent: SdId) -> bool {
    if sd_degenerate(b, parent) {
        return true;
    }
    if b.doms[sd].span != b.doms[parent].span {
        return false;
    }
    let cflags = b.doms[sd].flags;
    let mut pflags = b.doms[parent].flags;
    if b.doms[parent].groups.len() == 1 {
        pflags.remove(SdFlags::degenerate_groups_mask());
    }
    if (!cflags & pflags) != SdFlags::EMPTY {
        return false;
    }
    true
}

/// Mirrors `cpu_attach_domain` up to `rq->sd`: splice out degenerate parents (moving
/// `SD_PREFER_SIBLING` down and re-flagging the grandparent's first group), then drop a
/// degenerate base. Group objects are shared, so the flag updates are seen by every CPU
/// whose hierarchy holds that group, as in the kernel.
fn cpu_attach_domain(b: &mut Builder<'_>, sd: Option<SdId>) -> Option<SdId> {
    let mut tmp = sd;
    while let Some(t) = tmp {
        let Some(parent) = b.doms[t].parent else {
            break;
        };
        if sd_parent_degenerate(b, t, parent) {
            let grand = b.doms[parent].parent;
            b.doms[t].parent = grand;
            if let Some(gp) = grand {
                b.doms[gp].child = Some(t);
                let head = b.doms[gp].groups[0];
                b.groups[head].flags = b.doms[t].flags;
            }
            if b.doms[parent].flags.contains(SdFlags::PREFER_SIBLING) {
                b.doms[t].flags |= SdFlags::PREFER_SIBLING;
            }
        } else {
            tmp = Some(parent);
        }
    }
    let mut sd = sd;
    if let Some(base) = sd {
        if sd_degenerate(b, base) {
            sd = b.doms[base].parent;
            if let Some(new_base) = sd {
                // The kernel means to clear every group's child flags here, but its loop
                // never advances, so only the first group is cleared; we keep that.
                let head = b.doms[new_base].groups[0];
                b.groups[head].flags = SdFlags::EMPTY;
                b.doms[new_base].child = None;
            }
        }
    }
    sd
}

fn chain(b: &Builder<'_>, base: Option<SdId>) -> Vec<SdId> {
    let mut out = Vec::new();
    let mut sd = base;
    while let Some(id) = sd {
        out.push(id);
        sd = b.doms[id].parent;
    }
    out
}

/// Mirrors `highest_flag_domain`: the highest domain with `flag`, stopping at the first
/// domain without it when the flag is shared with children (it cannot reappear above).
fn highest_flag_domain(b: &Builder<'_>, base: Option<SdId>, flag: SdFlags) -> Option<SdId> {
    let shared_child = SD_FLAG_TABLE
        .iter()
        .enumerate()
        .any(|(bit, (_, meta))| flag.0 & (1 << bit) != 0 && meta & SDF_SHARED_CHILD != 0);
    let mut hsd = None;
    for sd in chain(b, base) {
        if b.doms[sd].flags.intersects(flag) {
            hsd = Some(sd);
            continue;
        }
        if shared_child {
            break;
        }
    }
    hsd
}

/// Mirrors `lowest_flag_domain`.
fn lowest_flag_domain(b: &Builder<'_>, base: Option<SdId>, flag: SdFlags) -> Option<SdId> {
    chain(b, base)
        .into_iter()
        .find(|&sd| b.doms[sd].flags.intersects(flag))
}

/// Mirrors `update_top_cache_domain` (ids are still builder ids here).
fn update_top_cache_domain(b: &Builder<'_>, cpu: usize, base: Option<SdId>) -> CpuDomains {
    let llc = highest_flag_domain(b, base, SdFlags::SHARE_LLC);
    let (mut id, size, shared) = match llc {
        Some(sd) => (
            b.doms[sd].span.first().unwrap_or(cpu),
            b.doms[sd].span.weight(),
            b.doms[sd].shared,
        ),
        None => (cpu, 1, None),
    };
    let sd_llc_id = id;
    if let Some(cls) = lowest_flag_domain(b, base, SdFlags::CLUSTER) {
        id = b.doms[cls].span.first().unwrap_or(cpu);
    }
    CpuDomains {
        sd: base,
        sd_llc: llc,
        sd_llc_size: size,
        sd_llc_id,
        sd_share_id: id,
        sd_llc_shared: shared,
        sd_numa: lowest_flag_domain(b, base, SdFlags::NUMA),
        sd_asym_packing: highest_flag_domain(b, base, SdFlags::ASYM_PACKING),
        sd_asym_cpucapacity: lowest_flag_domain(b, base, SdFlags::ASYM_CPUCAPACITY_FULL),
        cpu_capacity: b.cpu_capacity[cpu],
        capacity_orig: u64::from(b.m.cpus[cpu].capacity),
        root_domain: 0,
    }
}

/// Keeps only the objects reachable from the attached hierarchies, renumbered in order of
/// first reference (CPU by CPU, bottom-up), so ids are dense and deterministic.
///
/// Each surviving object is reached once, so its masks and group list are moved out of the
/// builder rather than copied: on a flat machine the group lists alone hold one entry per
/// pair of CPUs, and a copy would double the build's peak memory.
fn pack(mut b: Builder<'_>, base: Vec<Option<SdId>>, cluster_active: bool) -> SchedDomains {
    let n = b.m.nr_cpus();
    let mut dom_map = vec![usize::MAX; b.doms.len()];
    let mut group_map = vec![usize::MAX; b.groups.len()];
    let mut sgc_map = vec![usize::MAX; b.sgcs.len()];
    let mut shared_map = vec![usize::MAX; b.shared.len()];
    let mut order = Vec::new();
    let mut group_order = Vec::new();
    let mut sgc_order = Vec::new();
    let mut shared_order = Vec::new();
    for &bs in &base {
        for sd in chain(&b, bs) {
            dom_map[sd] = order.len();
            order.push(sd);
            for &g in &b.doms[sd].groups {
                if group_map[g] == usize::MAX {
                    group_map[g] = group_order.len();
                    group_order.push(g);
                    let s = b.groups[g].sgc;
                    if sgc_map[s] == usize::MAX {
                        sgc_map[s] = sgc_order.len();
                        sgc_order.push(s);
                    }
                }
            }
            if let Some(sh) = b.doms[sd].shared {
                if shared_map[sh] == usize::MAX {
                    shared_map[sh] = shared_order.len();
                    shared_order.push(sh);
                }
            }
        }
    }
    let remap = |id: Option<SdId>| id.map(|i| dom_map[i]);
    let cpus: Vec<CpuDomains> = (0..n)
        .map(|cpu| {
            let mut c = update_top_cache_domain(&b, cpu, base[cpu]);
            c.sd = remap(c.sd);
            c.sd_llc = remap(c.sd_llc);
            c.sd_numa = remap(c.sd_numa);
            c.sd_asym_packing = remap(c.sd_asym_packing);
            c.sd_asym_cpucapacity = remap(c.sd_asym_cpucapacity);
            c.sd_llc_shared = c.sd_llc_shared.map(|s| shared_map[s]);
            c
        })
        .collect();
    // A shared ring is renumbered once and shared again by the domains that shared it. The
    // map keeps each source ring alive beside its renumbered copy, so that no source ring's
    // key (its address) can be reused by a later allocation while the map is in use.
    let mut renumbered: BTreeMap<usize, (GroupRing, GroupRing)> = BTreeMap::new();
    let domains = order
        .iter()
        .map(|&sd| {
            let src = &mut b.doms[sd];
            let span = std::mem::replace(&mut src.span, CpuMask::new(0));
            let groups = std::mem::take(&mut src.groups);
            let mut d = src.clone();
            let (_, ring) = renumbered
                .entry(groups.list_key())
                .or_insert_with(|| (groups.clone(), groups.mapped(|g| group_map[g])));
            d.span = span;
            d.groups = ring.with_start_of(&groups);
            d.parent = remap(d.parent);
            d.child = remap(d.child);
            d.shared = d.shared.map(|s| shared_map[s]);
            d
        })
        .collect();
    let groups = group_order
        .iter()
        .map(|&g| {
            let src = &mut b.groups[g];
            let span = std::mem::replace(&mut src.span, CpuMask::new(0));
            let mut grp = src.clone();
            grp.span = span;
            grp.sgc = sgc_map[grp.sgc];
            grp
        })
        .collect();
    let sgcs = sgc_order
        .iter()
        .map(|&s| {
            let src = &mut b.sgcs[s];
            let mask = std::mem::replace(&mut src.balance_mask, CpuMask::new(0));
            let mut sgc = src.clone();
            sgc.balance_mask = mask;
            sgc
        })
        .collect();
    SchedDomains {
        nr_cpus: n,
        domains,
        groups,
        sgcs,
        shared: shared_order.iter().map(|&s| b.shared[s].clone()).collect(),
        cpus,
        asym_cpucapacity: b.has_asym,
        cluster_active,
        warnings: b.warnings,
        options: b.opts,
        levels: b.lt,
        root_domains: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::SdFlags;
    use crate::machine::{machine_from_ids, Arch, CpuIds, LlcScope};

    fn box_ids(sockets: u32, cores: u32, threads: u32) -> Vec<CpuIds> {
        let mut v = Vec::new();
        for s in 0..sockets {
            for c in 0..cores {
                for t in 0..threads {
                    v.push(CpuIds {
                        socket: s,
                        die: 0,
                        cluster: 0,
                        core: c,
                        thread: t,
                        node: s as usize,
                        capacity: 1024,
                    });
                }
            }
        }
        v
    }

    /// Issue 50 row 12: every CPU of a span but the one that built its ring takes the
    /// ring as a rotation instead of walking the span's groups (quadratic in the span: 16
    /// s of set-up for 8192 CPUs in one LLC), and the groups' references count as if
    /// each had walked.
    #[test]
    fn the_spans_other_cpus_take_their_ring_without_walking() {
        let m = machine_from_ids(
            "t",
            Arch::X86,
            &box_ids(2, 64, 2),
            2,
            vec![vec![10, 21], vec![21, 10]],
            LlcScope::Package,
        )
        .unwrap();
        let mut b = Builder::new(&m, BuildOptions::default());
        b.build(&[CpuMask::full(256)]).unwrap();
        // Every domain of a level without overlap walked only where it built its span's
        // ring; NUMA's overlapping groups are built per CPU as before.
        let flat = b
            .doms
            .iter()
            .filter(|d| !d.flags.contains(SdFlags::OVERLAP))
            .count() as u32;
        let saved: u32 = b.ring_walks_saved.values().sum();
        let walked = b
            .rings
            .keys()
            .filter(|&&(tl, _)| !b.lt.levels[tl].overlap)
            .count() as u32;
        assert_eq!(saved + walked, flat);
        assert!(saved >= 2 * 127, "{saved}");
        // A group is referenced once by each CPU whose domain holds it.
        let mc = (0..b.lt.levels.len())
            .find_map(|tl| b.sd_of[tl][5].filter(|&sd| b.doms[sd].span.weight() == 128))
            .unwrap();
        for &g in b.doms[mc].groups.iter() {
            assert_eq!(b.sgc_refs[b.groups[g].sgc], 128);
        }
    }

    #[test]
    fn two_socket_smt_box_has_smt_mc_numa() {
        let ids = box_ids(2, 4, 2);
        let m = machine_from_ids(
            "t",
            Arch::X86,
            &ids,
            2,
            vec![vec![10, 21], vec![21, 10]],
            LlcScope::Package,
        )
        .unwrap();
        let sds = build_sched_domains(&m, BuildOptions::default()).unwrap();
        let names: Vec<_> = sds.domains_of(0).map(|d| sds.domain(d).name).collect();
        assert_eq!(names, vec!["SMT", "MC", "NUMA"]);
        let levels: Vec<_> = sds.domains_of(0).map(|d| sds.domain(d).level).collect();
        assert_eq!(levels, vec![0, 2, 5]);
        let c = &sds.cpus[3];
        assert_eq!(c.sd_llc_size, 8);
        assert_eq!(c.sd_llc_id, 0);
        assert!(c.sd_numa.is_some());
        // MC of CPU 0: 4 groups of 2 SMT siblings, the local one first.
        let mc = sds.domains_of(2).nth(1).unwrap();
        let spans: Vec<_> = sds
            .domain(mc)
            .groups
            .iter()
            .map(|&g| sds.group(g).span.to_list())
            .collect();
        assert_eq!(spans, vec!["2-3", "4-5", "6-7", "0-1"]);
    }

    #[test]
    fn single_cpu_machine_has_no_domain() {
        let ids = box_ids(1, 1, 1);
        let m = machine_from_ids("t", Arch::X86, &ids, 1, vec![vec![10]], LlcScope::Die).unwrap();
        let sds = build_sched_domains(&m, BuildOptions::default()).unwrap();
        assert_eq!(sds.cpus[0].sd, None);
        assert!(sds.domains.is_empty());
    }
}
