//! Renderers of a built hierarchy: the kernel's `sched_verbose` dmesg dump, the debugfs
//! `domains/` tree, and JSON for scripts.

mod debugfs;
mod dmesg;
mod json;
mod summary;

pub use debugfs::render_debugfs;
pub use dmesg::render_dmesg;
pub use json::render_json;
pub use summary::render_summary;
