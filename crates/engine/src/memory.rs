//! Memory locality: where a task's memory lives, and what running away from it costs.
//!
//! fairsim's scheduler decisions never read this: the kernel's fair class does not know
//! where a task's pages are unless automatic NUMA balancing tells it, and NUMA balancing
//! (`task_numa_fault`, `task_numa_placement`, the NUMA hinting faults and the
//! `numa_preferred_nid` it sets) is out of scope. What this module adds is the price of a
//! placement: a task doing its work on a node other than the one its memory is on runs
//! slower, so a fork placement or a wakeup that moves a task across nodes can change how
//! long a workload takes.
//!
//! # The model
//!
//! - **Home node, by first touch.** Linux's default memory policy (`MPOL_DEFAULT`,
//!   mm/mempolicy.c) allocates a page on the node of the CPU that first touches it. A
//!   forked process's own pages (its stack, heap and copy-on-write copies) are therefore
//!   touched first where the child first runs, and fairsim gives a process the node of the
//!   first CPU it runs on as its home. `execve` throws the old image away and the new one
//!   is faulted in where the task runs after `sched_exec`, so an exec makes the home node
//!   that of the next CPU the task runs on. A thread (`CLONE_THREAD`, hackbench `-T`)
//!   shares its process's memory and so its home node.
//! - **Off-node slowdown.** A workload has a memory intensity `m`: the share of its
//!   run time, on its home node, that the CPU spends waiting for DRAM. Run on a CPU of
//!   node `n` with memory on node `h`, only that share stretches, by the ratio of the two
//!   latencies, which ACPI's SLIT gives as distances (ACPI 6.5, 5.2.17: "the relative
//!   distance ... local memory access latency is normalized to 10"; `numactl -H` and
//!   `node_distance()` print the same table):
//!
//!   `time(n) = time(h) * (1 + m * (d(n, h) - d(h, h)) / d(h, h))`
//!
//!   With a 2-socket SLIT of 10/21 and `m` = 10%, work runs 11% longer off its node.
//!   Only task work stretches: the kernel's own overheads come from the cost table.
//! - **Intensity per workload.** `mem=PERMILLE` on any workload (0 to 1000, so `mem=100`
//!   is 10%) sets `m`. The defaults (each tool's row in the workloads crate's `tools`
//!   table):
//!   - 0 for the tools whose loops touch no memory beyond the CPU's caches: nanosleep
//!     (a `nanosleep` loop), sysbench cpu (trial division over a few integers),
//!     schbench (its workers spin on the clock), cyclictest (a timer loop) and rt-app
//!     (`run` events spin on the clock). Their sources show the working set; a DRAM
//!     stall share of zero follows.
//!   - 100 (10%) for the tools that move data between processes or create them:
//!     hackbench and every workload added for memory-locality studies (fork-heavy
//!     scripts, netperf, tbench). This is the share at which Linux perf's top-down
//!     metrics first flag a workload as DRAM bound (`tma_dram_bound > 0.1` in
//!     tools/perf/pmu-events/arch/x86/*/*-metrics.json): the tools are assumed to sit at
//!     that boundary. It is an assumption with a public anchor, not a measurement of
//!     these tools, and it is the same for every tool so that no seed's figure informs
//!     it; `mem=` replaces it.
//!
//! Reported per task (time off its home node, migrations across nodes) and per node (task
//! time on the node's CPUs, and how much of it ran away from home) in the JSON; the
//! summary prints the per-node table on machines with more than one node.

use fairsim_topology::Machine;

/// The scale of `mem=`: per mille of run time.
pub const MEM_SCALE: u64 = 1000;

/// The default `mem=` of the data-moving tools (per mille): Linux perf's `tma_dram_bound`
/// threshold, 0.1 (see the module documentation).
pub const DATA_TOOL_MEM: u32 = 100;

/// The machine's nodes as the work-rate computation reads them.
#[derive(Debug, Clone)]
pub struct Locality {
    /// Node of each CPU.
    pub cpu_node: Vec<usize>,
    /// The SLIT, row-major, `nodes * nodes`.
    dist: Vec<u64>,
    nodes: usize,
}

impl Locality {
    /// The locality table of `m`.
    pub fn new(m: &Machine) -> Locality {
        let nodes = m.nr_nodes().max(1);
        let mut dist = Vec::with_capacity(nodes * nodes);
        for a in 0..nodes {
            for b in 0..nodes {
                dist.push(u64::from(m.node_distance(a, b)));
            }
        }
        Locality {
            cpu_node: m.cpus.iter().map(|c| c.node).collect(),
            dist,
            nodes,
        }
    }

    /// Number of nodes.
    pub fn nr_nodes(&self) -> usize {
        self.nodes
    }

    /// `d(a, b)`.
    pub fn distance(&self, a: usize, b: usize) -> u64 {
        self.dist
            .get(a * self.nodes + b)
            .copied()
            .unwrap_or(10)
            .max(1)
    }

    /// `rate` work units per ns scaled for running on `cpu` with memory on `home` at
    /// intensity `mem` per mille: `rate * 1000 d(h,h) / (1000 d(h,h) + mem (d(n,h) -
    /// d(h,h)))`, truncated, at least 1. Unchanged on the home node or with `mem = 0`.
    pub fn scale_rate(&self, rate: u64, cpu: usize, home: usize, mem: u32) -> u64 {
        let node = self.cpu_node.get(cpu).copied().unwrap_or(home);
        if mem == 0 || node == home {
            return rate;
        }
        let local = self.distance(home, home);
        let far = self.distance(node, home).max(local);
        let num = MEM_SCALE * local;
        let den = num + u64::from(mem) * (far - local);
        (rate.saturating_mul(num) / den).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_nodes() -> Locality {
        Locality {
            cpu_node: vec![0, 0, 1, 1],
            dist: vec![10, 21, 21, 10],
            nodes: 2,
        }
    }

    #[test]
    fn off_node_work_stretches_by_the_stalled_share_of_the_latency_ratio() {
        let l = two_nodes();
        // On the home node, or with no memory intensity, nothing changes.
        assert_eq!(l.scale_rate(1024, 0, 0, 1000), 1024);
        assert_eq!(l.scale_rate(1024, 2, 0, 0), 1024);
        // m = 10%, SLIT 21/10: 1 + 0.1 * 1.1 = 1.11 times longer.
        assert_eq!(l.scale_rate(1024, 2, 0, 100), 1024 * 10_000 / 11_100);
        // Fully DRAM-bound work runs at the latency ratio, 10/21.
        assert_eq!(l.scale_rate(1024, 3, 0, 1000), 1024 * 10 / 21);
        assert_eq!(l.scale_rate(1024, 0, 1, 1000), 1024 * 10 / 21);
    }
}
