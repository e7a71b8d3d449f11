//! `fairsim topology`: the sched domains of a machine (issue #2).

use std::io::Write;

use crate::error::CliError;

/// Arguments of `fairsim topology`.
#[derive(Debug, clap::Args)]
pub struct TopologyArgs {}

/// Runs `fairsim topology`.
pub fn run(_args: &TopologyArgs, _out: &mut dyn Write) -> Result<(), CliError> {
    Err(CliError::msg("fairsim topology: not built yet"))
}
