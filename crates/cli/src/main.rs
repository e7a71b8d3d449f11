//! `fairsim`: the command-line front end. It parses and validates arguments, calls the
//! library crates and renders their results; it holds no scheduler logic of its own.

mod cmd;
mod compare_table;
mod error;
mod hyphen_values;
mod sequential;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::error::CliError;
use crate::hyphen_values::hyphen_values;

/// `fairsim --version`: the package version and the kernel whose fair class it emulates.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (emulates the fair class of Linux ",
    "6.12.117",
    ")"
);

/// High-fidelity emulator of the Linux fair-class scheduler's SMP machinery.
#[derive(Debug, Parser)]
#[command(
    name = "fairsim",
    version = VERSION,
    about = "fairsim: an emulator of the Linux 6.12 fair-class scheduler's SMP machinery",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Build the sched domains Linux 6.12 builds for a machine and print them.
    Topology(cmd::topology::TopologyArgs),
    /// Emulate one task's PELT signals and util_est on one CPU.
    Pelt(cmd::pelt::PeltArgs),
    /// Run workloads on an emulated machine in virtual time (no arguments: a built-in demo).
    Run(Box<cmd::run::RunArgs>),
    /// Run a scenario under two feature sets, several seeds each, and print an
    /// mmtests-style comparison table.
    Compare(Box<cmd::compare::CompareArgs>),
    /// Run emulated CPUs on real threads over shared runqueues, racing through newidle
    /// balances, and measure the balancer's wall cost, lock contention and task conservation.
    Race(Box<cmd::race::RaceArgs>),
    /// List a kernel's scheduler features: name, default, origin and what each does.
    Features(cmd::features::FeaturesArgs),
    /// Read /proc/schedstat files: per-CPU, per-domain deltas in seed 000's listing layout.
    Schedstat(cmd::schedstat::SchedstatArgs),
    /// Draw SVG plots from a plot data file and from criterion's lb_scan results.
    Plot(cmd::plot::PlotArgs),
    /// Run a plan's matrix of runs (machines x workloads x feature sets x options x seeds)
    /// in parallel or as shards of a batch job, and join shards with `sweep merge`.
    // A variant's doc comment replaces its arguments' long_about, so the plan format is
    // named here for `fairsim sweep --help`.
    #[command(long_about = cmd::sweep::LONG_ABOUT)]
    Sweep(Box<cmd::sweep::SweepArgs>),
    /// perf sched's latency, timehist and map reports of a trace (ftrace text).
    Report(cmd::report::ReportArgs),
}

fn main() -> ExitCode {
    use clap::{CommandFactory, FromArgMatches};
    let parsed = hyphen_values(Cli::command())
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(err) => return error::report_clap(err),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match cli.command {
        Command::Topology(args) => cmd::topology::run(&args, &mut out),
        Command::Pelt(args) => cmd::pelt::run(&args, &mut out),
        Command::Run(args) => cmd::run::run(&args, &mut out),
        Command::Compare(args) => cmd::compare::run(&args, &mut out),
        Command::Features(args) => cmd::features::run(&args, &mut out),
        Command::Schedstat(args) => cmd::schedstat::run(&args, &mut out),
        Command::Race(args) => cmd::race::run(&args, &mut out),
        Command::Plot(args) => cmd::plot::run(&args, &mut out),
        Command::Sweep(args) => cmd::sweep::run(&args, &mut out),
        Command::Report(args) => cmd::report::run(&args, &mut out),
    };
    let result = result.and_then(|()| out.flush().map_err(CliError::from));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => err.report(),
    }
}
