//! The topology crate's integration tests: domains and groups against the kernel's own, sources, partitions, build memory.
//!
//! One binary per crate, its former test files as modules, so that `cargo test` links
//! once per crate; `cargo test -p fairsim-topology --test topology MODULE::` runs one of them.

mod build_memory;
mod checks;
mod golden;
mod partitions;
mod properties;
mod render_stream;
mod sources;
