//! `fairsim schedstat`: tools for `/proc/schedstat` files, from a real kernel or from
//! `fairsim run --schedstat`.

use std::io::Write;
use std::path::{Path, PathBuf};

use fairsim_balance::schedstat_read::{diff_schedstat, parse_schedstat, render_listing, Schedstat};
use fairsim_topology::source::read_bounded;

use crate::error::CliError;

/// `fairsim schedstat` subcommands.
#[derive(Debug, clap::Args)]
pub(crate) struct SchedstatArgs {
    #[command(subcommand)]
    action: SchedstatAction,
}

#[derive(Debug, clap::Subcommand)]
enum SchedstatAction {
    /// Print the non-zero per-CPU, per-domain deltas between two snapshots, one counter a
    /// line, in the layout of seed 000's listing (`.domain1.CPU_NEWLY_IDLE.lb_count 822`).
    /// Versions 15, 16 and 17 are read, with or without seed 000's `lb_sg_scan` column.
    Diff {
        /// The earlier snapshot.
        before: PathBuf,
        /// The later snapshot.
        after: PathBuf,
        /// Only these CPUs (repeatable); all CPUs by default.
        #[arg(long = "cpu", value_name = "N")]
        cpus: Vec<usize>,
    },
    /// Print one snapshot's non-zero counters in the same layout (a file written by
    /// `fairsim run --schedstat` starts from zero, so this is the run's delta).
    Show {
        /// The snapshot.
        file: PathBuf,
        /// Only these CPUs (repeatable); all CPUs by default.
        #[arg(long = "cpu", value_name = "N")]
        cpus: Vec<usize>,
    },
}

/// The largest schedstat file read: 8192 CPUs with a handful of domains each take about
/// 12 MiB of `/proc/schedstat` text, so 64 MiB refuses only what cannot be one.
const MAX_SCHEDSTAT_BYTES: u64 = 64 << 20;

fn read(path: &Path) -> Result<String, CliError> {
    read_bounded(path, MAX_SCHEDSTAT_BYTES)
        .map_err(|e| CliError::msg(format!("{}: {e}", path.display())))
}

/// Runs `fairsim schedstat`.
pub(crate) fn run(args: &SchedstatArgs, out: &mut dyn Write) -> Result<(), CliError> {
    match &args.action {
        SchedstatAction::Diff {
            before,
            after,
            cpus,
        } => {
            let a = parse_schedstat(&read(before)?, &before.display().to_string())?;
            let b = parse_schedstat(&read(after)?, &after.display().to_string())?;
            let d = diff_schedstat(&a, &b)?;
            print_listing(&d, cpus, out)
        }
        SchedstatAction::Show { file, cpus } => {
            let b = parse_schedstat(&read(file)?, &file.display().to_string())?;
            let mut zero = b.clone();
            for c in &mut zero.cpus {
                c.stats.iter_mut().for_each(|f| f.1 = 0);
                for d in &mut c.domains {
                    d.fields.iter_mut().for_each(|f| f.1 = 0);
                }
            }
            zero.timestamp = 0;
            let d = diff_schedstat(&zero, &b)?;
            print_listing(&d, cpus, out)
        }
    }
}

fn print_listing(d: &Schedstat, cpus: &[usize], out: &mut dyn Write) -> Result<(), CliError> {
    {
        {
            for &c in cpus {
                if !d.cpus.iter().any(|x| x.cpu == c) {
                    return Err(CliError::msg(format!(
                        "--cpu: invalid value '{c}'; allowed: the CPUs of the files (0 to {})",
                        d.cpus.len().saturating_sub(1)
                    )));
                }
            }
            let sel = (!cpus.is_empty()).then_some(cpus);
            out.write_all(render_listing(d, sel).as_bytes())?;
            Ok(())
        }
    }
}
