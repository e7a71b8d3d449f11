//! `fairsim pelt`: one task's PELT signals on one CPU (issue #3).

use std::io::Write;

use crate::error::CliError;

/// Arguments of `fairsim pelt`.
#[derive(Debug, clap::Args)]
pub struct PeltArgs {}

/// Runs `fairsim pelt`.
pub fn run(_args: &PeltArgs, _out: &mut dyn Write) -> Result<(), CliError> {
    Err(CliError::msg("fairsim pelt: not built yet"))
}
