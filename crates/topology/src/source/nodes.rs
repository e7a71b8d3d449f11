//! Helpers shared by the mask-based sources (ground-truth JSON and sysfs trees): the NUMA
//! node table with memory-only nodes removed, and the choice of the LLC mask.

use crate::cpumask::CpuMask;
use crate::error::TopologyError;
use crate::limits::{LOCAL_DISTANCE, MAX_NUMNODES};

/// One node as a source lists it: its CPUs and its distance row, whose entries follow the
/// order of the listed nodes (the kernel prints `node_distance` for each online node in id
/// order).
#[derive(Debug, Clone)]
pub(crate) struct RawNode {
    /// Where the node came from, for error messages (`node2`, `nodes[2]`).
    pub label: String,
    /// CPUs of the node; empty for a memory-only node.
    pub cpus: CpuMask,
    /// One entry per listed node.
    pub distance: Vec<u32>,
}

/// Turns listed nodes into the machine's node masks and distance table.
///
/// Memory-only nodes (no CPUs) are dropped from both the masks and the matrix, rows and
/// columns alike, because the scheduler only ever considers nodes with CPUs
/// (`for_each_node_state(N_CPU)` in `sched_init_numa`). No listed node at all means one
/// node holding every CPU at distance 10.
pub(crate) fn cpu_nodes(
    raw: &[RawNode],
    nr_cpus: usize,
) -> Result<(Vec<CpuMask>, Vec<Vec<u32>>), TopologyError> {
    if raw.is_empty() {
        return Ok((vec![CpuMask::full(nr_cpus)], vec![vec![LOCAL_DISTANCE]]));
    }
    if raw.len() > MAX_NUMNODES {
        return Err(TopologyError::invalid(
            "nodes",
            raw.len(),
            &format!("1 to {MAX_NUMNODES} NUMA nodes (MAX_NUMNODES)"),
        ));
    }
    for node in raw {
        if node.distance.len() != raw.len() {
            return Err(TopologyError::invalid(
                &format!("{} distance", node.label),
                format!("{} entries", node.distance.len()),
                &format!("one entry per listed node ({})", raw.len()),
            ));
        }
    }
    let keep: Vec<usize> = (0..raw.len())
        .filter(|&i| !raw[i].cpus.is_empty())
        .collect();
    if keep.is_empty() {
        return Err(TopologyError::Inconsistent {
            field: "nodes".into(),
            detail: "no node lists any CPU; at least one node needs CPUs".into(),
        });
    }
    let masks = keep.iter().map(|&i| raw[i].cpus.clone()).collect();
    let distance = keep
        .iter()
        .map(|&i| keep.iter().map(|&j| raw[i].distance[j]).collect())
        .collect();
    Ok((masks, distance))
}

/// The node of every CPU, given node masks; `None` for a CPU no node lists (the machine's
/// validation then reports it).
pub(crate) fn node_of_cpus(node_cpus: &[CpuMask], nr_cpus: usize) -> Vec<Option<usize>> {
    let mut out = vec![None; nr_cpus];
    for (node, mask) in node_cpus.iter().enumerate() {
        for cpu in mask.iter() {
            if let Some(slot) = out.get_mut(cpu) {
                slot.get_or_insert(node);
            }
        }
    }
    out
}

/// Parses a kernel `distance` line (`10 21`) into integers.
pub(crate) fn parse_distance_row(text: &str) -> Result<Vec<u32>, String> {
    text.split_whitespace()
        .map(|t| {
            t.parse::<u32>()
                .map_err(|_| format!("'{t}' is not a distance (integers 10 to 255)"))
        })
        .collect()
}
