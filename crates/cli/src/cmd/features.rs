//! `fairsim features`: the features file of a kernel, generated from the features'
//! declarations (`fairsim_balance::features`): each name, its default in that kernel,
//! where it comes from, what it does, and what it needs, excludes or changes.

use std::io::Write;

use fairsim_balance::features::listing;
use fairsim_balance::Kernel;

use crate::error::CliError;

/// The note `--ilb-sd-share` prints: the option is kept so that old command lines run as
/// they did, but the features declared to change the domains now set them up themselves.
pub(crate) use fairsim_workloads::resolve::ILB_SD_SHARE_NOTE;

/// Arguments of `fairsim features`.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "List the scheduler features --features (run, sweep, topology, race) and \
--base/--new (compare) can write, as the kernel's /sys/kernel/debug/sched/features file has \
them: each name in the file's order, its default in that kernel, where it comes from \
(features.h, a seed posting's patch, or a 6.12 ablation that swaps in an older kernel's \
function), what it does, the features it needs or cannot be on with, and whether it changes \
the sched domains."
)]
pub(crate) struct FeaturesArgs {
    /// The kernel whose features file is listed: 6.12 (the default), 6.5, 4.16, 4.15, 4.5
    /// or 3.9.
    #[arg(long, value_name = "VERSION")]
    kernel: Option<String>,
}

/// Runs `fairsim features`.
pub(crate) fn run(args: &FeaturesArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let kernel = match &args.kernel {
        Some(t) => Kernel::parse(t).map_err(|e| CliError::msg(e.to_string()))?,
        None => Kernel::default(),
    };
    out.write_all(listing(kernel).as_bytes())?;
    Ok(())
}
