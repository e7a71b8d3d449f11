//! The qemu-style machine spec: `--smp`, `--numa-distance`, `--numa-cpus`, `--capacity`.
//!
//! `--smp` takes qemu's `-smp` syntax, `[N][,cpus=N][,maxcpus=N][,sockets=S][,dies=D]
//! [,clusters=C][,cores=K][,threads=T]`, and completes missing values exactly as qemu 7.2's
//! `machine_parse_smp_config` does for machines that prefer cores (every x86 and arm64
//! machine type since 6.2): CPUs are numbered with the thread innermost, then core, cluster,
//! die and socket. Hotplug is not modelled, so `maxcpus` must equal the CPU count.
//!
//! `--numa-distance "10,21;21,10"` gives the node distance table, one row per node; without
//! it the machine has one node. CPUs are split into contiguous, equal node ranges
//! (`node = cpu * nodes / cpus`), which is one node per socket when the socket count is a
//! multiple of the node count, unless `--numa-cpus "0-3;4-7"` lists each node's CPUs.
//!
//! `--capacity "0-1:1441,2-4:606"` gives raw per-CPU capacities (like the device tree's
//! `capacity-dmips-mhz`), which are normalised so the biggest CPU gets 1024.

use crate::cpumask::NR_CPUS_MAX;
use crate::error::TopologyError;
use crate::limits::{LOCAL_DISTANCE, SCHED_CAPACITY_SCALE};
use crate::machine::{machine_from_ids, Arch, CpuIds, LlcScope, Machine};
use crate::source::spec_lists::{
    even_split, parse_capacity, parse_distance, parse_itmt, parse_numa_cpus, FieldNames,
};

/// What the user gave on the command line for a qemu-style machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecOptions {
    /// The `--smp` text, in qemu's `-smp` syntax.
    pub smp: String,
    /// The `--numa-distance` text: rows separated by `;`, entries by `,`.
    pub numa_distance: Option<String>,
    /// The `--numa-cpus` text: one CPU list per node, separated by `;`.
    pub numa_cpus: Option<String>,
    /// The architecture whose topology levels apply.
    pub arch: Arch,
    /// The `--capacity` text: `cpulist:raw` groups separated by `,`.
    pub capacity: Option<String>,
    /// Where the LLC sits; `None` means per die on x86 and per cluster on arm64.
    pub llc: Option<LlcScope>,
    /// The `--itmt` text: `cpulist:priority` groups (x86 ITMT core priorities).
    pub itmt: Option<String>,
}

impl SpecOptions {
    /// Options with only `--smp` and the architecture set, everything else defaulted.
    pub fn new(smp: &str, arch: Arch) -> Self {
        SpecOptions {
            smp: smp.to_string(),
            numa_distance: None,
            numa_cpus: None,
            arch,
            capacity: None,
            llc: None,
            itmt: None,
        }
    }
}

/// The completed `-smp` shape: every level count known and their product checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmpShape {
    /// Total number of CPUs.
    pub cpus: usize,
    /// Sockets (packages).
    pub sockets: usize,
    /// Dies per socket.
    pub dies: usize,
    /// Clusters per die.
    pub clusters: usize,
    /// Cores per cluster.
    pub cores: usize,
    /// Threads per core.
    pub threads: usize,
}

impl SmpShape {
    /// The qemu ids of `cpu`: thread innermost, then core, cluster, die and socket.
    /// A hand-built shape with a zero count is read as 1 there, so this never divides by 0.
    pub fn ids_of(&self, cpu: usize) -> (u32, u32, u32, u32, u32) {
        let threads = self.threads.max(1);
        let cores = self.cores.max(1);
        let clusters = self.clusters.max(1);
        let dies = self.dies.max(1);
        let thread = cpu % threads;
        let core = (cpu / threads) % cores;
        let cluster = (cpu / (threads * cores)) % clusters;
        let die = (cpu / (threads * cores * clusters)) % dies;
        let socket = cpu
            / (threads
                .saturating_mul(cores)
                .saturating_mul(clusters)
                .saturating_mul(dies));
        (
            socket as u32,
            die as u32,
            cluster as u32,
            core as u32,
            thread as u32,
        )
    }
}

/// Field names as typed on the command line.
pub(crate) const CLI_FIELDS: FieldNames = FieldNames {
    smp: "--smp",
    smp_sep: " ",
    distance: "--numa-distance",
    numa_cpus: "--numa-cpus",
    capacity: "--capacity",
    itmt: "--itmt",
};

/// The keys `--smp` accepts, in the order qemu documents them.
const SMP_KEYS: [&str; 7] = [
    "cpus", "maxcpus", "sockets", "dies", "clusters", "cores", "threads",
];

/// Builds a `Machine` from a qemu-style spec. Every error names the option as typed.
pub fn parse_spec(opts: &SpecOptions) -> Result<Machine, TopologyError> {
    let name = format!("spec:{}", opts.smp.trim());
    build_spec(opts, &CLI_FIELDS, &name)
}

/// Parses `--smp` text into a completed shape, as qemu 7.2 does for machines that prefer
/// cores over sockets.
pub fn parse_smp(text: &str) -> Result<SmpShape, TopologyError> {
    parse_smp_named(text, &CLI_FIELDS)
}

/// `parse_spec` with the error field names and the machine name chosen by the caller.
pub(crate) fn build_spec(
    opts: &SpecOptions,
    f: &FieldNames,
    name: &str,
) -> Result<Machine, TopologyError> {
    let shape = parse_smp_named(&opts.smp, f)?;
    let n = shape.cpus;
    let (distance, node_of) = match &opts.numa_distance {
        Some(text) => {
            let distance = parse_distance(text, f.distance)?;
            let node_of = match &opts.numa_cpus {
                Some(cpus) => parse_numa_cpus(cpus, n, distance.len(), f)?,
                None => even_split(n, distance.len(), f)?,
            };
            (distance, node_of)
        }
        None => {
            if opts.numa_cpus.is_some() {
                return Err(TopologyError::invalid(
                    f.numa_cpus,
                    opts.numa_cpus.as_deref().unwrap_or(""),
                    &format!("only together with {} (one node otherwise)", f.distance),
                ));
            }
            (vec![vec![LOCAL_DISTANCE]], vec![0; n])
        }
    };
    let capacity = match &opts.capacity {
        Some(text) => parse_capacity(text, n, f.capacity)?,
        None => vec![SCHED_CAPACITY_SCALE; n],
    };
    let ids: Vec<CpuIds> = (0..n)
        .map(|cpu| {
            let (socket, die, cluster, core, thread) = shape.ids_of(cpu);
            CpuIds {
                socket,
                die,
                cluster,
                core,
                thread,
                node: node_of.get(cpu).copied().unwrap_or(0),
                capacity: capacity.get(cpu).copied().unwrap_or(SCHED_CAPACITY_SCALE),
            }
        })
        .collect();
    let llc = opts.llc.unwrap_or(match opts.arch {
        Arch::X86 => LlcScope::Die,
        Arch::Arm64 => LlcScope::Cluster,
    });
    let nodes = distance.len();
    let mut m = machine_from_ids(name, opts.arch, &ids, nodes, distance, llc)?;
    if let Some(text) = &opts.itmt {
        if opts.arch != Arch::X86 {
            return Err(TopologyError::invalid(
                f.itmt,
                text,
                "ITMT priorities only with the x86 architecture",
            ));
        }
        m.itmt_prio = Some(parse_itmt(text, n, f.itmt)?);
    }
    Ok(m)
}

/// Parses `-smp` text and completes it like qemu's `machine_parse_smp_config`.
pub(crate) fn parse_smp_named(text: &str, f: &FieldNames) -> Result<SmpShape, TopologyError> {
    // Index in SMP_KEYS -> value; 0 means "not given" as in qemu.
    let mut given = [0u64; SMP_KEYS.len()];
    let mut any = false;
    for (pos, item) in text.split(',').enumerate() {
        let item = item.trim();
        if item.is_empty() {
            if pos == 0 && text.trim().is_empty() {
                break;
            }
            return Err(TopologyError::invalid(
                f.smp,
                text,
                "comma-separated items without empty ones, e.g. '16,sockets=2,cores=4,threads=2'",
            ));
        }
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            // qemu accepts a bare number only as the first item, meaning cpus=N.
            None if pos == 0 => ("cpus", item),
            None => {
                return Err(TopologyError::invalid(
                    f.smp,
                    item,
                    &format!(
                        "key=value items after the CPU count; keys: {}",
                        SMP_KEYS.join(", ")
                    ),
                ))
            }
        };
        let Some(idx) = SMP_KEYS.iter().position(|k| *k == key) else {
            return Err(TopologyError::invalid(
                &f.smp_key(key),
                item,
                &format!("one of the keys {}", SMP_KEYS.join(", ")),
            ));
        };
        let field = f.smp_key(key);
        if given[idx] != 0 {
            return Err(TopologyError::invalid(
                &field,
                value,
                "each key at most once",
            ));
        }
        let v = value.parse::<u64>().map_err(|_| {
            TopologyError::invalid(
                &field,
                value,
                &format!("an integer from 1 to {NR_CPUS_MAX}"),
            )
        })?;
        // Bounding every value first keeps all products below u64 overflow and stops a
        // huge topology before anything is allocated.
        if v == 0 || v > NR_CPUS_MAX as u64 {
            return Err(TopologyError::invalid(
                &field,
                v,
                &format!("an integer from 1 to {NR_CPUS_MAX} (CONFIG_NR_CPUS)"),
            ));
        }
        given[idx] = v;
        any = true;
    }
    if !any {
        return Err(TopologyError::invalid(
            f.smp,
            "(empty)",
            "a CPU count and/or sockets=,dies=,clusters=,cores=,threads=",
        ));
    }
    let [cpus, maxcpus, mut sockets, dies, clusters, mut cores, mut threads] = given;
    let dies = dies.max(1);
    let clusters = clusters.max(1);
    let mut maxcpus_eff = maxcpus;
    if cpus == 0 && maxcpus == 0 {
        sockets = sockets.max(1);
        cores = cores.max(1);
        threads = threads.max(1);
    } else {
        if maxcpus_eff == 0 {
            maxcpus_eff = cpus;
        }
        // qemu >= 6.2 prefers cores over sockets when completing a partial topology.
        if cores == 0 {
            sockets = sockets.max(1);
            threads = threads.max(1);
            cores = maxcpus_eff / (sockets * dies * clusters * threads);
        } else if sockets == 0 {
            threads = threads.max(1);
            sockets = maxcpus_eff / (dies * clusters * cores * threads);
        }
        if threads == 0 {
            threads = maxcpus_eff / (sockets * dies * clusters * cores);
        }
    }
    let product = u128::from(sockets)
        * u128::from(dies)
        * u128::from(clusters)
        * u128::from(cores)
        * u128::from(threads);
    let described = format!(
        "sockets ({sockets}) * dies ({dies}) * clusters ({clusters}) * cores ({cores}) * threads ({threads}) = {product}"
    );
    if maxcpus_eff != 0 && product != u128::from(maxcpus_eff) {
        return Err(TopologyError::invalid(
            f.smp,
            &described,
            &format!("a topology whose product equals the CPU count {maxcpus_eff}"),
        ));
    }
    if product == 0 || product > NR_CPUS_MAX as u128 {
        return Err(TopologyError::invalid(
            f.smp,
            &described,
            &format!("a product from 1 to {NR_CPUS_MAX} CPUs (CONFIG_NR_CPUS)"),
        ));
    }
    let total = product as u64;
    if cpus != 0 && cpus != total {
        return Err(TopologyError::invalid(
            &f.smp_key("maxcpus"),
            total,
            &format!("the CPU count {cpus}: CPU hotplug is not modelled"),
        ));
    }
    Ok(SmpShape {
        cpus: total as usize,
        sockets: sockets as usize,
        dies: dies as usize,
        clusters: clusters as usize,
        cores: cores as usize,
        threads: threads as usize,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(text: &str) -> SmpShape {
        parse_smp(text).unwrap()
    }

    #[test]
    fn smp_completion_follows_qemu() {
        let s = shape("16,sockets=2,threads=2");
        assert_eq!((s.sockets, s.cores, s.threads), (2, 4, 2));
        let s = shape("8");
        assert_eq!((s.sockets, s.cores, s.threads), (1, 8, 1));
        let s = shape("sockets=2,cores=3");
        assert_eq!(s.cpus, 6);
        // With cores given and sockets missing, qemu derives the sockets.
        let s = shape("12,cores=3,threads=2");
        assert_eq!(s.sockets, 2);
        assert!(parse_smp("10,sockets=3").is_err());
        assert!(parse_smp("8,maxcpus=16").is_err());
        assert!(parse_smp("8,maxcpus=8").is_ok());
    }

    #[test]
    fn numbering_is_thread_innermost() {
        let s = shape("sockets=2,dies=2,clusters=1,cores=2,threads=2");
        assert_eq!(s.ids_of(0), (0, 0, 0, 0, 0));
        assert_eq!(s.ids_of(1), (0, 0, 0, 0, 1));
        assert_eq!(s.ids_of(2), (0, 0, 0, 1, 0));
        assert_eq!(s.ids_of(4), (0, 1, 0, 0, 0));
        assert_eq!(s.ids_of(15), (1, 1, 0, 1, 1));
    }
}
