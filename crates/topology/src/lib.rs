//! Machine descriptions and the sched-domain hierarchy Linux 6.12.117's
//! `kernel/sched/topology.c` builds from them.
//!
//! The crate knows nothing of tasks or time. A [`Machine`] (from a qemu-style spec, a
//! preset, a file or a sysfs tree, see [`source`]) goes into [`build_sched_domains`], which
//! returns the per-CPU domain hierarchies with their groups, group capacities and shared
//! state, exactly as the kernel builds and attaches them. The [`render`] module prints the
//! result in the kernel's `sched_verbose` and debugfs forms, or as JSON.

mod attach;
mod build;
mod builder;
pub mod capacity;
pub mod cpumask;
pub mod domain;
pub mod error;
mod estimate;
pub mod flags;
pub mod ids;
pub mod levels;
pub mod limits;
pub mod machine;
pub mod opp;
pub mod partition;
pub mod render;
pub mod ring;
pub mod source;
mod spans;
pub mod speed;
pub mod sync;

pub use attach::build_sched_domains;
pub use capacity::normalize_capacities;
pub use cpumask::{CpuListError, CpuMask, NR_CPUS_MAX};
pub use domain::{
    BuildOptions, CpuDomains, GroupId, SchedDomain, SchedDomainShared, SchedDomains, SchedGroup,
    SchedGroupCapacity, SdId, SgcId, SharedId,
};
pub use error::TopologyError;
pub use estimate::{check_build_memory, estimate_build_memory};
pub use flags::SdFlags;
pub use levels::{LevelTable, NumaInfo, NumaTopologyType, TopologyLevel};
pub use machine::{machine_from_ids, Arch, CpuIds, CpuTopology, LlcScope, Machine};
pub use opp::{FreqDomain, Opp};
pub use partition::{
    check_cpusets, generate_sched_domains, parse_cpulist, parse_cpusets, partition_sched_domains,
};
pub use ring::GroupRing;
pub use speed::SpeedTable;
