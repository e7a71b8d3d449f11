//! The kernel's limits and fixed values that a machine description is checked against.
//!
//! They live in a module of their own, below `machine` and the sources, because the
//! machine's checks, the spec parsers and the speed table all read them: kept in `machine`,
//! they made every source that parses a list import the machine and the machine import
//! the speed table that imports the parsers, a circle.

/// Largest number of NUMA nodes: Debian's `CONFIG_NODES_SHIFT` of 10 gives 1024.
pub const MAX_NUMNODES: usize = 1024;

/// `SCHED_CAPACITY_SCALE`: the capacity of the biggest CPU at its highest frequency.
pub const SCHED_CAPACITY_SCALE: u32 = 1024;

/// `LOCAL_DISTANCE` in `include/linux/topology.h`.
pub const LOCAL_DISTANCE: u32 = 10;

/// Distances must stay below `1 << DISTANCE_BITS` for `sched_init_numa` to accept them.
pub const NR_DISTANCE_VALUES: u32 = 256;
