//! The whole-stack system tests: runs from a specification through the engine, the
//! workloads and the output writers (workloads, cgroups, traces, costs, noise and the
//! ground truth).
//!
//! They live in the facade because they need every layer; one binary, its former test
//! files as modules, so that `cargo test` links it once;
//! `cargo test -p fairsim --test system MODULE::` runs one of them.

mod common;
// The protobuf walker and trace builders live with the trace crate's writer tests; the
// engine's trace tests decode what a run wrote with the same walker.
#[path = "../../crates/trace/tests/trace/trace_support/mod.rs"]
mod trace_support;

mod autogroup;
mod cgroups;
mod cpufreq;
mod cpuidle;
mod cpuset_cgroups;
mod cpusets;
mod cyclictest;
mod forkbench;
mod fuzz_parsers;
mod ground_truth;
mod hardening_no_progress;
mod hardening_time_order;
mod host_golden;
mod legacy_lb;
mod load_tracking_costs;
mod measurement;
mod memory_locality;
mod metrics_table;
mod net_workloads;
mod properties;
mod rtapp;
mod rtapp_lisa;
mod rtapp_log;
mod soak;
mod speed;
mod trace_engine;
mod trace_throttle;
mod workload_cmdline;
mod workloads;
