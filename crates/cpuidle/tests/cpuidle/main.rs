//! The idle governors' and the idle device's integration tests.
//!
//! One binary per crate, its former test files as modules, so that `cargo test` links
//! once per crate; `cargo test -p fairsim-cpuidle --test cpuidle MODULE::` runs one of them.

mod common;

mod device;
mod haltpoll;
mod menu;
mod teo;
