//! Race mode's integration tests: real threads racing over shared runqueues conserve
//! every token, bad specs are refused, the storm's state is fixed, and (ignored by
//! default) a minute-long soak keeps its memory flat.
//!
//! One binary per crate, its former test files as modules, so that `cargo test` links
//! once per crate; `cargo test -p fairsim-race --test race MODULE::` runs one of them.

mod runs;
mod soak;
