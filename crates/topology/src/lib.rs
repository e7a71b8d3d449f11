//! Machine descriptions and the sched-domain hierarchy Linux 6.12.117's
//! `kernel/sched/topology.c` builds from them.
//!
//! The crate knows nothing of tasks or time. A [`Machine`] (from a qemu-style spec, a
//! preset, a file or a sysfs tree) goes into [`build_sched_domains`], which returns the
//! per-CPU domain hierarchies with their groups, group capacities and shared state, exactly
//! as the kernel builds and attaches them. Renderers print the result in the kernel's
//! `sched_verbose` and debugfs forms, or as JSON.

pub mod cpumask;
pub mod error;
pub mod machine;
pub mod source;

pub use cpumask::{CpuMask, NR_CPUS_MAX};
pub use error::TopologyError;
pub use machine::{
    machine_from_ids, normalize_capacities, Arch, CpuIds, CpuTopology, LlcScope, Machine,
    SCHED_CAPACITY_SCALE,
};
