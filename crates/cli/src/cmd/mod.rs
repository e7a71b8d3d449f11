//! One module per subcommand: its clap arguments and its `run` function.

pub mod compare;
pub(crate) mod compare_until;
pub mod features;
pub mod machine_args;
pub(crate) mod outputs;
pub mod pelt;
pub mod plot;
pub(crate) mod plots;
pub(crate) mod progress;
pub mod race;
pub mod report;
pub(crate) mod rtapp_log;
pub mod run;
pub mod schedstat;
pub mod sweep;
pub mod topology;
