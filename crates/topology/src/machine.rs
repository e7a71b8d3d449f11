//! The machine description: what the architecture code tells the scheduler about CPUs,
//! caches, NUMA nodes and capacities, before any sched domain exists.
//!
//! A `Machine` holds, per CPU, the sibling masks the kernel's arch code derives (SMT
//! siblings, L2/cluster siblings, LLC siblings, package siblings), the NUMA node and the CPU
//! capacity, plus the node distance table. Every source (qemu-style spec, preset, file,
//! sysfs tree) produces one and `Machine::validate` checks it, so the domain builder can
//! rely on its invariants.

use std::collections::BTreeMap;

use crate::cpumask::{CpuMask, NR_CPUS_MAX};
use crate::error::TopologyError;
use crate::limits::{LOCAL_DISTANCE, MAX_NUMNODES, NR_DISTANCE_VALUES, SCHED_CAPACITY_SCALE};
use crate::opp::FreqDomain;
use crate::speed::SpeedTable;

/// Which architecture's topology levels the kernel uses.
///
/// The level table is an architecture choice: x86 (`build_sched_topology` in
/// `arch/x86/kernel/smpboot.c`) has SMT, CLS, MC and PKG, dropping PKG when a package holds
/// several NUMA nodes; Debian's arm64 kernel uses `default_topology` with
/// `CONFIG_SCHED_CLUSTER` off, so SMT, MC and PKG, and derives MC's span with the rules of
/// `cpu_coregroup_mask` in `drivers/base/arch_topology.c`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Arch {
    /// x86-64 (the Debian amd64 kernel).
    X86,
    /// arm64 (the Debian arm64 kernel, without CLS).
    Arm64,
}

impl Arch {
    /// The name used in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86 => "x86",
            Arch::Arm64 => "arm64",
        }
    }

    /// Parses `x86`/`x86_64`/`amd64` or `arm64`/`aarch64`.
    pub fn parse(s: &str) -> Option<Arch> {
        match s {
            "x86" | "x86_64" | "x86-64" | "amd64" => Some(Arch::X86),
            "arm64" | "aarch64" => Some(Arch::Arm64),
            _ => None,
        }
    }
}

/// One CPU as the architecture code sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuTopology {
    /// `physical_package_id`: the socket.
    pub package_id: u32,
    /// `die_id` within the package.
    pub die_id: u32,
    /// `cluster_id`.
    pub cluster_id: u32,
    /// `core_id` within the package.
    pub core_id: u32,
    /// NUMA node (`cpu_to_node`).
    pub node: usize,
    /// `arch_scale_cpu_capacity`: 1..=1024, 1024 for the biggest CPU.
    pub capacity: u32,
    /// `topology_sibling_cpumask`: hardware threads of this core.
    pub smt_siblings: CpuMask,
    /// `cpu_l2c_shared_mask` on x86, `cluster_sibling` on arm64: CPUs sharing the L2 or
    /// the cluster.
    pub cluster_siblings: CpuMask,
    /// `cpu_llc_shared_mask` / `llc_sibling`: CPUs sharing the last-level cache.
    pub llc_siblings: CpuMask,
    /// `topology_core_cpumask` / `core_sibling`: CPUs of the same package.
    pub package_siblings: CpuMask,
}

/// A whole machine: CPUs, NUMA nodes and the node distance table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// A short name for outputs (`spr-2s56c2t`, `file:foo.toml`, ...).
    pub name: String,
    /// Which architecture's level table applies.
    pub arch: Arch,
    /// Per-CPU description, indexed by CPU number; CPUs are numbered `0..n` without holes.
    pub cpus: Vec<CpuTopology>,
    /// `cpumask_of_node(n)` for each node `n`.
    pub node_cpus: Vec<CpuMask>,
    /// `node_distance(i, j)`: square, one row per node.
    pub distance: Vec<Vec<u32>>,
    /// x86 ITMT core priorities (`sched_core_priority`, set by intel_pstate on parts with
    /// Turbo Boost Max 3.0 or hybrid cores), one per CPU. When present,
    /// `sysctl_sched_itmt_enabled` is 1: the CLS, MC and PKG levels carry
    /// `SD_ASYM_PACKING` and `arch_asym_cpu_priority` returns these values.
    pub itmt_prio: Option<Vec<i32>>,
    /// The machine's CPU idle states as an `--idle-states` specification (a cpuidle
    /// driver table's preset name such as `spr`, or an explicit list), read by the engine
    /// through `fairsim-cpuidle`; `None` when the machine does not say (the engine then
    /// uses its flat compatibility table). The crate only carries the text: idle states
    /// do not shape the sched domains.
    pub idle_states: Option<String>,
    /// The architecture's per-CPU `cpu_power` of Linux 3.9 (`arch_scale_freq_power`, the
    /// arm `cpu_scale` that `parse_dt_topology` sets, not normalised: values above 1024
    /// are allowed), read only by the 3.9 load balancer (`LEGACY_LB`). `None` means every
    /// CPU has `SCHED_POWER_SCALE` (1024), as 3.9's default `arch_scale_freq_power` says.
    pub cpu_power: Option<Vec<u32>>,
    /// The name of the kernel-overhead cost table that models this machine's generation
    /// (`x86-2020s`, `arm-2013`), read by the engine as the run's default; `None` leaves
    /// the engine's default. The crate only carries the name: costs do not shape the
    /// sched domains, and the engine checks it.
    pub costs: Option<String>,
    /// How fast each CPU runs each kind of workload, apart from the capacity the
    /// scheduler sees ([`SpeedTable`]); empty means at capacity, as the kernel assumes.
    pub speed: SpeedTable,
    /// The frequency domains (cpufreq policies) with their OPP tables
    /// ([`crate::opp`]); empty means no cpufreq: every CPU runs at its highest frequency,
    /// as fairsim's machines did before domains existed.
    pub cpufreq: Vec<FreqDomain>,
}

impl Machine {
    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// Number of NUMA nodes.
    pub fn nr_nodes(&self) -> usize {
        self.node_cpus.len()
    }

    /// `node_distance(a, b)`.
    pub fn node_distance(&self, a: usize, b: usize) -> u32 {
        self.distance[a][b]
    }

    /// `arch_asym_cpu_priority(cpu)`: the ITMT priority on x86 with ITMT, else the
    /// generic default `-cpu` (lower-numbered CPUs preferred).
    pub fn asym_cpu_priority(&self, cpu: usize) -> i32 {
        match &self.itmt_prio {
            Some(p) => p[cpu],
            None => -(cpu as i32),
        }
    }

    /// `sched_asym_prefer(a, b)`: CPU `a` has a higher priority than CPU `b`.
    pub fn sched_asym_prefer(&self, a: usize, b: usize) -> bool {
        self.asym_cpu_priority(a) > self.asym_cpu_priority(b)
    }

    /// Linux 3.9's `arch_scale_freq_power(sd, cpu)`: the machine's `cpu_power` of `cpu`,
    /// or `SCHED_POWER_SCALE` when it gives none.
    pub fn arch_cpu_power(&self, cpu: usize) -> u64 {
        match &self.cpu_power {
            Some(p) => u64::from(p[cpu]),
            None => u64::from(SCHED_CAPACITY_SCALE),
        }
    }

    /// Whether some CPU has an SMT sibling: what the kernel's `sched_smt_present` static
    /// key says once every CPU is up (`sched_smt_active()`).
    pub fn smt_present(&self) -> bool {
        self.cpus.iter().any(|c| c.smt_siblings.weight() >= 2)
    }

    /// Whether CPU capacities differ (the kernel's `asym_cap_list` has more than one entry).
    pub fn is_asymmetric(&self) -> bool {
        self.cpus.windows(2).any(|w| w[0].capacity != w[1].capacity)
    }

    /// Checks everything the domain builder relies on. Each failure names the field and
    /// what is allowed.
    pub fn validate(&self) -> Result<(), TopologyError> {
        let n = self.cpus.len();
        if n == 0 {
            return Err(TopologyError::invalid("cpus", "0", "at least 1 CPU"));
        }
        if n > NR_CPUS_MAX {
            return Err(TopologyError::invalid(
                "cpus",
                n,
                &format!("at most {NR_CPUS_MAX} CPUs (CONFIG_NR_CPUS)"),
            ));
        }
        let nodes = self.node_cpus.len();
        if nodes == 0 || nodes > MAX_NUMNODES {
            return Err(TopologyError::invalid(
                "nodes",
                nodes,
                &format!("1 to {MAX_NUMNODES} NUMA nodes"),
            ));
        }
        self.validate_distance()?;
        let mut seen = CpuMask::new(n);
        for (node, mask) in self.node_cpus.iter().enumerate() {
            if mask.nbits() != n {
                return Err(TopologyError::Inconsistent {
                    field: format!("node{node} cpulist"),
                    detail: format!("mask width {} differs from the CPU count {n}", mask.nbits()),
                });
            }
            if mask.is_empty() {
                return Err(TopologyError::invalid(
                    &format!("node{node} cpus"),
                    "(empty)",
                    "at least one CPU per node (a memory-only node cannot be emulated)",
                ));
            }
            if seen.intersects(mask) {
                return Err(TopologyError::Inconsistent {
                    field: format!("node{node} cpus"),
                    detail: format!("{} also belong to another node", seen.and(mask)),
                });
            }
            seen.or_with(mask);
        }
        if seen.weight() != n {
            let mut missing = CpuMask::full(n);
            missing.andnot_with(&seen);
            return Err(TopologyError::Inconsistent {
                field: "nodes".into(),
                detail: format!("CPUs {missing} belong to no node; every CPU needs exactly one"),
            });
        }
        let partitions = SIBLING_MASKS.map(|(_, get)| self.siblings_partition(get));
        for (cpu, c) in self.cpus.iter().enumerate() {
            self.validate_cpu(cpu, c, &partitions)?;
        }
        self.speed.validate(n)?;
        crate::opp::validate_domains(&self.cpufreq, n)?;
        if let Some(prio) = &self.itmt_prio {
            if self.arch != Arch::X86 {
                return Err(TopologyError::invalid(
                    "itmt",
                    self.arch.name(),
                    "ITMT priorities only on x86 (arm64 has no SD_ASYM_PACKING source)",
                ));
            }
            if prio.len() != n {
                return Err(TopologyError::invalid(
                    "itmt",
                    format!("{} priorities", prio.len()),
                    &format!("one priority per CPU ({n})"),
                ));
            }
        }
        Ok(())
    }

    fn validate_distance(&self) -> Result<(), TopologyError> {
        let nodes = self.node_cpus.len();
        if self.distance.len() != nodes {
            return Err(TopologyError::invalid(
                "numa-distance",
                format!("{} rows", self.distance.len()),
                &format!("a square matrix with one row per node ({nodes})"),
            ));
        }
        for (i, row) in self.distance.iter().enumerate() {
            if row.len() != nodes {
                return Err(TopologyError::invalid(
                    &format!("numa-distance row {i}"),
                    format!("{} entries", row.len()),
                    &format!("{nodes} entries: the matrix must be square"),
                ));
            }
            for (j, &d) in row.iter().enumerate() {
                if !(LOCAL_DISTANCE..NR_DISTANCE_VALUES).contains(&d) {
                    return Err(TopologyError::invalid(
                        &format!("numa-distance[{i}][{j}]"),
                        d,
                        "10 to 255 (LOCAL_DISTANCE up to 1 << DISTANCE_BITS)",
                    ));
                }
                if self.distance[j].get(i) != Some(&d) {
                    return Err(TopologyError::invalid(
                        &format!("numa-distance[{i}][{j}]"),
                        d,
                        &format!(
                            "a symmetric matrix; [{j}][{i}] is {}",
                            self.distance[j].get(i).copied().unwrap_or(0)
                        ),
                    ));
                }
                if j != i && d <= row[i] {
                    return Err(TopologyError::invalid(
                        &format!("numa-distance[{i}][{j}]"),
                        d,
                        &format!("a value above the diagonal entry [{i}][{i}] = {}", row[i]),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether one kind of sibling mask (`get`) is a partition of the CPUs: every mask
    /// has the machine's width and holds its own CPU, and the distinct masks are pairwise
    /// disjoint. That is the same verdict as checking, for every CPU and every sibling in
    /// its mask, that the sibling lists the same CPUs (two distinct masks sharing a CPU
    /// `x` cannot both equal `x`'s mask, and a partition has no such pair), but it costs
    /// one mask comparison per CPU instead of one per pair of siblings, which on a flat
    /// machine of thousands of CPUs is the difference between milliseconds and minutes.
    ///
    /// The distinct masks are found through each mask's first CPU: when every CPU's mask
    /// equals the mask of that first CPU, the distinct masks are those of the CPUs that
    /// come first in their own mask, and they are disjoint exactly when their weights add
    /// up to the CPU count (their union is every CPU, since each holds its own).
    fn siblings_partition(&self, get: fn(&CpuTopology) -> &CpuMask) -> bool {
        let n = self.cpus.len();
        let mut total = 0usize;
        for (cpu, c) in self.cpus.iter().enumerate() {
            let mask = get(c);
            if mask.nbits() != n || !mask.test(cpu) {
                return false;
            }
            let Some(first) = mask.first() else {
                return false;
            };
            if first == cpu {
                total += mask.weight();
            } else if get(&self.cpus[first]) != mask {
                return false;
            }
        }
        total == n
    }

    fn validate_cpu(
        &self,
        cpu: usize,
        c: &CpuTopology,
        partitions: &[bool; 4],
    ) -> Result<(), TopologyError> {
        let n = self.cpus.len();
        if c.capacity == 0 || c.capacity > SCHED_CAPACITY_SCALE {
            return Err(TopologyError::invalid(
                &format!("cpu{cpu} capacity"),
                c.capacity,
                "1 to 1024 (SCHED_CAPACITY_SCALE)",
            ));
        }
        if c.node >= self.node_cpus.len() || !self.node_cpus[c.node].test(cpu) {
            return Err(TopologyError::Inconsistent {
                field: format!("cpu{cpu} node"),
                detail: format!("node {} does not list this CPU", c.node),
            });
        }
        for ((name, get), partition) in SIBLING_MASKS.into_iter().zip(partitions) {
            let mask = get(c);
            if mask.nbits() != n || !mask.test(cpu) {
                return Err(TopologyError::Inconsistent {
                    field: format!("cpu{cpu} {name}"),
                    detail: format!("must contain the CPU itself (got '{mask}')"),
                });
            }
            // Sibling relations are equivalence classes: a sibling sees the same set. A
            // kind already known to partition the CPUs cannot fail here; the pairwise walk
            // is left for the machines that do fail, to name the first offending pair.
            if *partition {
                continue;
            }
            for other in mask.iter() {
                let theirs = get(&self.cpus[other]);
                if theirs != mask {
                    return Err(TopologyError::SiblingsDiffer {
                        cpu,
                        kind: name.to_string(),
                        mask: mask.to_string(),
                        other,
                        theirs: theirs.to_string(),
                    });
                }
            }
        }
        if !c.smt_siblings.is_subset(&c.package_siblings) {
            return Err(TopologyError::SmtOutsidePackage {
                cpu,
                smt: c.smt_siblings.to_string(),
                package: c.package_siblings.to_string(),
            });
        }
        Ok(())
    }
}

/// The sibling masks `Machine::validate` checks, by the name its messages use, in the
/// order it checks them.
type SiblingMask = (&'static str, fn(&CpuTopology) -> &CpuMask);
const SIBLING_MASKS: [SiblingMask; 4] = [
    ("thread_siblings", |c| &c.smt_siblings),
    ("cluster_cpus", |c| &c.cluster_siblings),
    ("llc_cpus", |c| &c.llc_siblings),
    ("core_siblings", |c| &c.package_siblings),
];

/// Where the last-level cache sits, for machines described by ids rather than masks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LlcScope {
    /// One LLC per core (no sharing beyond SMT siblings).
    Core,
    /// One LLC per cluster (arm64 clusters with a shared L2 and no L3).
    Cluster,
    /// One LLC per die (QEMU's x86 CPUID model: an L3 per die).
    Die,
    /// One LLC per package.
    Package,
}

/// Ids of one CPU, in qemu's terms, from which the sibling masks are derived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuIds {
    /// Socket.
    pub socket: u32,
    /// Die within the socket.
    pub die: u32,
    /// Cluster within the die.
    pub cluster: u32,
    /// Core within the cluster.
    pub core: u32,
    /// Thread within the core.
    pub thread: u32,
    /// NUMA node.
    pub node: usize,
    /// CPU capacity, 1..=1024.
    pub capacity: u32,
}

/// Builds a `Machine` from per-CPU ids, deriving the sibling masks the way the x86 and
/// arm64 code does for a regular package/die/cluster/core/thread hierarchy.
///
/// The L2 (x86 `cpu_l2c_shared_mask`) is taken as per core on x86, as QEMU's CPUID and
/// most Intel parts have it, and as the cluster on arm64; the LLC follows `llc`.
pub fn machine_from_ids(
    name: &str,
    arch: Arch,
    ids: &[CpuIds],
    nr_nodes: usize,
    distance: Vec<Vec<u32>>,
    llc: LlcScope,
) -> Result<Machine, TopologyError> {
    let n = ids.len();
    if n == 0 {
        return Err(TopologyError::invalid("cpus", "0", "at least 1 CPU"));
    }
    if n > NR_CPUS_MAX {
        return Err(TopologyError::invalid(
            "cpus",
            n,
            &format!("at most {NR_CPUS_MAX} CPUs (CONFIG_NR_CPUS)"),
        ));
    }
    // Two CPUs are siblings at a level when their ids agree from the socket down to that
    // level, so each level's masks are the classes of an id prefix: collected once per
    // distinct prefix, in a BTreeMap so that nothing depends on hashing, rather than by
    // comparing every pair of CPUs.
    let pkg_key = |id: &CpuIds| (id.socket, 0, 0, 0);
    let die_key = |id: &CpuIds| (id.socket, id.die, 0, 0);
    let cluster_key = |id: &CpuIds| (id.socket, id.die, id.cluster, 0);
    let core_key = |id: &CpuIds| (id.socket, id.die, id.cluster, id.core);
    let classes = |key: &dyn Fn(&CpuIds) -> (u32, u32, u32, u32)| {
        let mut masks: BTreeMap<(u32, u32, u32, u32), CpuMask> = BTreeMap::new();
        for (i, id) in ids.iter().enumerate() {
            masks
                .entry(key(id))
                .or_insert_with(|| CpuMask::new(n))
                .set(i);
        }
        masks
    };
    let pkgs = classes(&pkg_key);
    let dies = classes(&die_key);
    let clusters = classes(&cluster_key);
    let cores = classes(&core_key);
    let mut cpus = Vec::with_capacity(n);
    // Cluster ids are numbered in order of first appearance, as the CPUs are listed.
    let mut clusters_seen: BTreeMap<(u32, u32, u32), u32> = BTreeMap::new();
    for id in ids {
        let smt = cores[&core_key(id)].clone();
        let cluster = clusters[&cluster_key(id)].clone();
        let l2 = match arch {
            Arch::X86 => smt.clone(),
            Arch::Arm64 => cluster.clone(),
        };
        let llc_mask = match llc {
            LlcScope::Core => smt.clone(),
            LlcScope::Cluster => cluster.clone(),
            LlcScope::Die => dies[&die_key(id)].clone(),
            LlcScope::Package => pkgs[&pkg_key(id)].clone(),
        };
        let next_id = clusters_seen.len() as u32;
        let cluster_id = *clusters_seen
            .entry((id.socket, id.die, id.cluster))
            .or_insert(next_id);
        cpus.push(CpuTopology {
            package_id: id.socket,
            die_id: id.die,
            cluster_id,
            core_id: id.core,
            node: id.node,
            capacity: id.capacity,
            smt_siblings: smt,
            cluster_siblings: l2,
            llc_siblings: llc_mask,
            package_siblings: pkgs[&pkg_key(id)].clone(),
        });
    }
    let mut node_cpus = vec![CpuMask::new(n); nr_nodes];
    for (cpu, id) in ids.iter().enumerate() {
        if let Some(mask) = node_cpus.get_mut(id.node) {
            mask.set(cpu);
        }
    }
    let m = Machine {
        name: name.to_string(),
        arch,
        cpus,
        node_cpus,
        distance,
        itmt_prio: None,
        idle_states: None,
        cpu_power: None,
        costs: None,
        speed: SpeedTable::new(),
        cpufreq: Vec::new(),
    };
    m.validate()?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: u32, threads: u32) -> Vec<CpuIds> {
        (0..n)
            .map(|i| CpuIds {
                socket: 0,
                die: 0,
                cluster: 0,
                core: i / threads,
                thread: i % threads,
                node: 0,
                capacity: 1024,
            })
            .collect()
    }

    #[test]
    fn smt_masks_follow_cores() {
        let m =
            machine_from_ids("t", Arch::X86, &ids(8, 2), 1, vec![vec![10]], LlcScope::Die).unwrap();
        assert_eq!(m.cpus[3].smt_siblings.to_list(), "2-3");
        assert_eq!(m.cpus[3].llc_siblings.to_list(), "0-7");
    }

    #[test]
    fn bad_distance_is_rejected_with_field_name() {
        let mut m =
            machine_from_ids("t", Arch::X86, &ids(4, 1), 1, vec![vec![10]], LlcScope::Die).unwrap();
        m.distance = vec![vec![10, 20]];
        let err = m.validate().unwrap_err().to_string();
        assert!(err.contains("numa-distance"), "{err}");
    }
}
