//! The plot crate's integration tests over fixture data files.
//!
//! One binary per crate, its former test files as modules, so that `cargo test` links
//! once per crate; `cargo test -p fairsim-plot --test plot MODULE::` runs one of them.

mod fixtures;

mod criterion;
mod frequency;
mod svg;
