//! The trace crate's integration tests: the Perfetto and ftrace writers on hand-made
//! traces, checked with a protobuf walker of their own and against golden text.
//!
//! One binary per crate, its test files as modules, so that `cargo test` links once per
//! crate; `cargo test -p fairsim-trace --test trace MODULE::` runs one of them. They need
//! no world to run: the engine's own binary checks the traces that runs record.

mod trace_support;

mod trace_compact;
mod trace_dat;
mod trace_format;
