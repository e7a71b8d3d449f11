//! The kernel's limits and fixed values that a machine description is checked against.
//!
//! They live in a module of their own, below `machine` and the sources, because the
//! machine's checks, the spec parsers and the speed table all read them: kept in `machine`,
//! they made every source that parses a list import the machine and the machine import
//! the speed table that imports the parsers, a circle.

/// Largest number of NUMA nodes: Debian's `CONFIG_NODES_SHIFT` of 10 gives 1024.
pub const MAX_NUMNODES: usize = 1024;

/// `SCHED_CAPACITY_SCALE`, the capacity of the biggest CPU at its highest frequency, as
/// the `u32` a CPU's capacity is stored in. The constant is defined once, in
/// [`fairsim_pelt`], the lowest crate that computes with it; it is 1024, so the
/// conversion is exact.
pub(crate) const SCHED_CAPACITY_SCALE: u32 = fairsim_pelt::SCHED_CAPACITY_SCALE as u32;

/// `SCHED_POWER_SHIFT` of Linux 3.9 (the name `SCHED_CAPACITY_SHIFT` had then): a CPU's
/// `cpu_power` is fixed point with 10 bits. The device-tree parser of 3.9 and 3.9's
/// balancer in the balance crate both use it.
pub const SCHED_POWER_SHIFT: u32 = 10;

/// `SCHED_POWER_SCALE` of Linux 3.9: the `cpu_power` of an average CPU.
pub const SCHED_POWER_SCALE: u64 = 1 << SCHED_POWER_SHIFT;

/// `LOCAL_DISTANCE` in `include/linux/topology.h`.
pub const LOCAL_DISTANCE: u32 = 10;

/// Distances must stay below `1 << DISTANCE_BITS` for `sched_init_numa` to accept them.
pub const NR_DISTANCE_VALUES: u32 = 256;
