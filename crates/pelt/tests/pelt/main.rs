//! PELT's integration tests: the kernel's own figures and properties of the geometric series.
//!
//! One binary per crate, its former test files as modules, so that `cargo test` links
//! once per crate; `cargo test -p fairsim-pelt --test pelt MODULE::` runs one of them.

mod canonical;
mod continuous;
mod properties;
