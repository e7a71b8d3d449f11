//! One module per subcommand: its clap arguments and its `run` function.

pub(crate) mod compare;
pub(crate) mod compare_until;
pub(crate) mod features;
pub(crate) mod machine_args;
pub(crate) mod outputs;
pub(crate) mod pelt;
pub(crate) mod plot;
pub(crate) mod plots;
pub(crate) mod progress;
pub(crate) mod race;
pub(crate) mod report;
pub(crate) mod rtapp_log;
pub(crate) mod run;
pub(crate) mod schedstat;
pub(crate) mod sweep;
pub(crate) mod topology;
