//! One module per subcommand: its clap arguments and its `run` function.

pub mod machine_args;
pub mod pelt;
pub mod topology;
