//! Renderers of a built hierarchy: the kernel's `sched_verbose` dmesg dump, the debugfs
//! `domains/` tree, and JSON for scripts.
//!
//! The dmesg listing and the JSON grow with the square of the CPU count (each CPU lists
//! its domains' groups); their `write_*` forms write to an `io::Write` as they go, in
//! about the memory of one CPU's part, and give the same bytes as the `render_*` forms.

mod debugfs;
mod dmesg;
mod json;
mod summary;

pub use debugfs::{render_debugfs, write_debugfs};
pub use dmesg::{render_dmesg, write_dmesg};
pub use json::{render_json, write_json};
pub use summary::render_summary;
