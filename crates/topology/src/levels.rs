//! The topology level table (`struct sched_domain_topology_level`) and the NUMA levels
//! `sched_init_numa` appends to it.
//!
//! A level says, for each CPU, which CPUs its domain at that level spans (`tl->mask`) and
//! which topology flags it carries (`tl->sd_flags`). The architecture chooses the base table;
//! NUMA levels come from the distinct node distances.

use crate::cpumask::CpuMask;
use crate::flags::SdFlags;
use crate::limits::LOCAL_DISTANCE;
use crate::machine::{Arch, Machine};

/// Which per-CPU mask a level spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LevelMask {
    /// `cpu_smt_mask`: the hardware threads of a core.
    Smt,
    /// `cpu_clustergroup_mask`: the L2 / cluster siblings.
    Cluster,
    /// `cpu_coregroup_mask`: the LLC siblings (with arm64's subset rules).
    Core,
    /// `cpu_cpu_mask`: the CPUs of this CPU's NUMA node.
    Cpu,
    /// `sd_numa_mask` at the given NUMA level: the CPUs of the nodes within that distance.
    Numa(usize),
}

/// One `sched_domain_topology_level`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopologyLevel {
    /// `SD_INIT_NAME`: SMT, CLS, MC, PKG, NODE or NUMA.
    pub name: &'static str,
    /// The span function.
    pub mask: LevelMask,
    /// `tl->sd_flags()`: the topology flags of the level.
    pub sd_flags: SdFlags,
    /// `SDTL_OVERLAP`: groups may overlap (NUMA levels above NODE).
    pub overlap: bool,
    /// `tl->numa_level`: index into the NUMA distance table (0 for non-NUMA levels).
    pub numa_level: usize,
}

/// `enum numa_topology_type`, as `init_numa_topology_type` classifies the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NumaTopologyType {
    /// All nodes directly connected, or not a NUMA machine.
    Direct,
    /// Some nodes reach each other only through intermediary nodes.
    GluelessMesh,
    /// Far nodes are connected through a backplane.
    Backplane,
}

/// What `sched_init_numa` computes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumaInfo {
    /// `sched_domains_numa_distance[]`: distinct distances, ascending.
    pub distances: Vec<u32>,
    /// `sched_domains_numa_masks[level][node]`.
    pub masks: Vec<Vec<CpuMask>>,
    /// `sched_numa_topology_type`.
    pub topology_type: NumaTopologyType,
    /// `sched_max_numa_distance`.
    pub max_distance: u32,
}

/// The full level table of a machine plus the NUMA data behind its NUMA levels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelTable {
    /// Levels bottom-up, as `for_each_sd_topology` walks them.
    pub levels: Vec<TopologyLevel>,
    /// NUMA distances and masks.
    pub numa: NumaInfo,
    /// `x86_has_numa_in_package`: a package spans several nodes, so x86 drops PKG.
    pub numa_in_package: bool,
    /// Per-CPU `cpu_smt_mask`, `cpu_clustergroup_mask`, `cpu_coregroup_mask`,
    /// `cpu_cpu_mask` as the arch code returns them, indexed `[LevelMask kind][cpu]`.
    arch_masks: [Vec<CpuMask>; 4],
}

/// `RECLAIM_DISTANCE` (`node_reclaim_distance`): beyond it, NUMA levels stop balancing
/// on fork and exec and stop affine wakeups.
pub const RECLAIM_DISTANCE: u32 = 30;

impl LevelTable {
    /// Builds the arch level table (`build_sched_topology` on x86, `default_topology`
    /// on arm64) and appends the NUMA levels as `sched_init_numa` does.
    pub fn new(m: &Machine) -> LevelTable {
        let numa_in_package = has_numa_in_package(m);
        let arch_masks = arch_masks(m);
        let mut levels = arch_levels(m, numa_in_package);
        let numa = sched_init_numa(m);
        levels.push(TopologyLevel {
            name: "NODE",
            mask: LevelMask::Numa(0),
            sd_flags: SdFlags::EMPTY,
            overlap: false,
            numa_level: 0,
        });
        for j in 1..numa.distances.len() {
            levels.push(TopologyLevel {
                name: "NUMA",
                mask: LevelMask::Numa(j),
                sd_flags: SdFlags::NUMA,
                overlap: true,
                numa_level: j,
            });
        }
        LevelTable {
            levels,
            numa,
            numa_in_package,
            arch_masks,
        }
    }

    /// `tl->mask(cpu)`: the CPUs the level spans for `cpu`, before the `cpu_map` AND.
    pub fn mask(&self, m: &Machine, level: usize, cpu: usize) -> &CpuMask {
        match self.levels[level].mask {
            LevelMask::Numa(l) => &self.numa.masks[l][m.cpus[cpu].node],
            arch => &self.arch_masks[arch_mask_index(arch)][cpu],
        }
    }
}

/// Where [`arch_masks`] keeps the masks of a non-NUMA level.
pub(crate) fn arch_mask_index(mask: LevelMask) -> usize {
    match mask {
        LevelMask::Smt => 0,
        LevelMask::Cluster => 1,
        LevelMask::Core => 2,
        LevelMask::Cpu | LevelMask::Numa(_) => 3,
    }
}

/// The architecture's levels below NODE: `build_sched_topology`'s table on x86 (SMT,
/// CLS, MC, and PKG unless a package holds several nodes), `default_topology` without
/// CLS on arm64.
pub(crate) fn arch_levels(m: &Machine, numa_in_package: bool) -> Vec<TopologyLevel> {
    let smt = SdFlags::SHARE_CPUCAPACITY | SdFlags::SHARE_LLC;
    // x86_sched_itmt_flags(): with ITMT, CLS, MC and PKG pack onto high-priority
    // CPUs (SMT no longer does since 6.6).
    let itmt = if m.arch == Arch::X86 && m.itmt_prio.is_some() {
        SdFlags::ASYM_PACKING
    } else {
        SdFlags::EMPTY
    };
    let mut levels = vec![TopologyLevel {
        name: "SMT",
        mask: LevelMask::Smt,
        sd_flags: smt,
        overlap: false,
        numa_level: 0,
    }];
    if m.arch == Arch::X86 {
        levels.push(TopologyLevel {
            name: "CLS",
            mask: LevelMask::Cluster,
            sd_flags: SdFlags::CLUSTER | SdFlags::SHARE_LLC | itmt,
            overlap: false,
            numa_level: 0,
        });
    }
    levels.push(TopologyLevel {
        name: "MC",
        mask: LevelMask::Core,
        sd_flags: SdFlags::SHARE_LLC | itmt,
        overlap: false,
        numa_level: 0,
    });
    // x86 skips PKG when NUMA nodes live inside a package; the NUMA levels then
    // build the spanning domains from the distance table.
    if !(m.arch == Arch::X86 && numa_in_package) {
        levels.push(TopologyLevel {
            name: "PKG",
            mask: LevelMask::Cpu,
            sd_flags: itmt,
            overlap: false,
            numa_level: 0,
        });
    }
    levels
}

/// `x86_has_numa_in_package`: two CPUs of one package on different nodes.
///
/// Package siblings are equivalence classes (`Machine::validate`), so a package holds two
/// nodes exactly when one of its CPUs is on another node than its first: each package is
/// read once, not once per CPU of it (quadratic in a package of thousands of CPUs).
pub(crate) fn has_numa_in_package(m: &Machine) -> bool {
    m.cpus.iter().enumerate().any(|(i, c)| {
        c.package_siblings.first() == Some(i)
            && c.package_siblings.iter().any(|o| m.cpus[o].node != c.node)
    })
}

/// Computes the arch mask functions for every CPU.
///
/// x86 (`set_cpu_sibling_map`): with neither SMT nor several cores per package every mask
/// is the CPU alone; SMT, L2 and LLC siblings never cross a node (`topology_sane` refuses
/// them, and Intel SNC parts do not share the LLC across nodes).
/// arm64 (`cpu_coregroup_mask`): start from the node, narrow to the package if it fits,
/// then to the LLC if it fits.
pub(crate) fn arch_masks(m: &Machine) -> [Vec<CpuMask>; 4] {
    let n = m.nr_cpus();
    let node_of = |cpu: usize| &m.node_cpus[m.cpus[cpu].node];
    let mut smt = Vec::with_capacity(n);
    let mut cls = Vec::with_capacity(n);
    let mut core = Vec::with_capacity(n);
    let mut cpu_mask = Vec::with_capacity(n);
    match m.arch {
        Arch::X86 => {
            let has_smt = m.smt_present();
            let has_mp = has_smt || m.cpus.iter().any(|c| c.package_siblings.weight() > 1);
            for (cpu, c) in m.cpus.iter().enumerate() {
                let node = node_of(cpu);
                if has_mp {
                    smt.push(c.smt_siblings.and(node));
                    cls.push(c.cluster_siblings.and(node));
                    core.push(c.llc_siblings.and(node));
                } else {
                    let me = CpuMask::single(n, cpu);
                    smt.push(me.clone());
                    cls.push(me.clone());
                    core.push(me);
                }
                cpu_mask.push(node.clone());
            }
        }
        Arch::Arm64 => {
            for (cpu, c) in m.cpus.iter().enumerate() {
                let node = node_of(cpu);
                let mut coregroup = node.clone();
                if c.package_siblings.is_subset(&coregroup) {
                    coregroup = c.package_siblings.clone();
                }
                if c.llc_siblings.is_subset(&coregroup) {
                    coregroup = c.llc_siblings.clone();
                }
                smt.push(c.smt_siblings.clone());
                // Without CONFIG_SCHED_CLUSTER there is no CLS level; keep the mask for
                // completeness with the kernel's subset rule.
                if coregroup.is_subset(&c.cluster_siblings) {
                    cls.push(c.smt_siblings.clone());
                } else {
                    cls.push(c.cluster_siblings.clone());
                }
                core.push(coregroup);
                cpu_mask.push(node.clone());
            }
        }
    }
    [smt, cls, core, cpu_mask]
}

/// Mirrors `sched_init_numa`: the distinct distances, ascending, and for each level and
/// node the CPUs of every node within that distance; then `init_numa_topology_type`.
pub fn sched_init_numa(m: &Machine) -> NumaInfo {
    let nodes = m.nr_nodes();
    let mut distances: Vec<u32> = m.distance.iter().flatten().copied().collect();
    distances.sort_unstable();
    distances.dedup();
    if distances.is_empty() {
        distances.push(LOCAL_DISTANCE);
    }
    // The kernel fills each level's mask of node j with every node within that level's
    // distance. The same masks come from walking j's nodes once, nearest first, and
    // carrying each level's mask up to the next, which keeps the work linear in the
    // number of levels instead of levels times nodes.
    let mut masks: Vec<Vec<CpuMask>> = distances
        .iter()
        .map(|_| Vec::with_capacity(nodes))
        .collect();
    for j in 0..nodes {
        let mut nearest: Vec<usize> = (0..nodes).collect();
        nearest.sort_by_key(|&k| m.node_distance(j, k));
        let mut mask = CpuMask::new(m.nr_cpus());
        let mut next = 0;
        for (level, &d) in distances.iter().enumerate() {
            while let Some(&k) = nearest.get(next) {
                if m.node_distance(j, k) > d {
                    break;
                }
                mask.or_with(&m.node_cpus[k]);
                next += 1;
            }
            masks[level].push(mask.clone());
        }
    }
    let max_distance = *distances.last().unwrap_or(&LOCAL_DISTANCE);
    let topology_type = numa_topology_type(m, distances.len(), max_distance);
    NumaInfo {
        distances,
        masks,
        topology_type,
        max_distance,
    }
}

/// Mirrors `init_numa_topology_type`: with at most two distance levels the machine is
/// directly connected; otherwise the first pair of nodes at the maximum distance decides
/// between a glueless mesh (an intermediary node closer to both) and a backplane.
fn numa_topology_type(m: &Machine, nr_levels: usize, max: u32) -> NumaTopologyType {
    if nr_levels <= 2 {
        return NumaTopologyType::Direct;
    }
    let nodes = m.nr_nodes();
    for a in 0..nodes {
        for b in 0..nodes {
            if m.node_distance(a, b) < max {
                continue;
            }
            let mesh =
                (0..nodes).any(|c| m.node_distance(a, c) < max && m.node_distance(b, c) < max);
            return if mesh {
                NumaTopologyType::GluelessMesh
            } else {
                NumaTopologyType::Backplane
            };
        }
    }
    NumaTopologyType::Direct
}
