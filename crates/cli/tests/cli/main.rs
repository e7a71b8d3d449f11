//! The command line's integration tests: every subcommand and flag run as a user would, through the built `fairsim` binary.
//!
//! One binary per crate, its former test files as modules, so that `cargo test` links
//! once per crate; `cargo test -p fairsim-cli --test cli MODULE::` runs one of them.

mod common;

mod affinity_cli;
mod autogroup_cli;
mod cgroup_cli;
mod costs_cli;
mod cpufreq_cli;
mod cpuset_cli;
mod experiments_summary;
mod features_cli;
mod hardening_cli;
mod install;
mod kernel_cli;
mod kernel_smoke;
mod pelt_cli;
mod plot_cli;
mod progress_outputs;
mod race_cli;
mod race_deadline;
mod report_cli;
mod rtapp_log_cli;
mod run_cli;
mod silent_inputs_cli;
mod sweep_cli;
mod tick_clock_cli;
mod tool_cmdlines;
mod topology_budget;
mod topology_cli;
mod trace_cli;
mod trace_dat_cli;
mod tunables_cli;
mod util_est_cli;
