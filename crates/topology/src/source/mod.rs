//! Sources of machine descriptions: qemu-style specs, presets, files and sysfs trees.
//!
//! Each source produces a validated [`Machine`](crate::Machine); errors are one line that
//! names the field as the user wrote it (`--smp cores`, `numa.distance row 1`, a sysfs
//! path) and says what is allowed.

pub mod arm_v3_9;
pub mod file;
mod file_cpufreq;
pub mod gs101;
mod guest;
mod nodes;
pub mod presets;
pub mod read;
pub mod rk3399;
pub mod spec;
pub(crate) mod spec_lists;
pub mod sysfs;

pub use file::{load_machine_file, parse_llc};
pub use presets::{preset, PRESETS};
pub use read::{read_bounded, ReadError};
pub use spec::{parse_smp, parse_spec, SmpShape, SpecOptions};
pub use sysfs::load_sysfs;
