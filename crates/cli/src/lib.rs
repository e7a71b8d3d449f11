//! `fairsim`: the command-line front end. It parses and validates arguments, calls the
//! library crates and renders their results; it holds no scheduler logic of its own.
//!
//! The binary (`main.rs`) calls [`main`]; the Python package (`crates/python`) calls
//! [`run_argv`], which parses and runs the same argument vector with stdout captured and
//! the one-line error returned instead of printed, so that a Python call and the command
//! line are one code path.

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

/// Parses a command line (`argv[0]` the program's name) as the binary does.
fn parse<I, T>(argv: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::{CommandFactory, FromArgMatches};
    hyphen_values(Cli::command())
        .try_get_matches_from(argv)
        .and_then(|m| Cli::from_arg_matches(&m))
}

/// The `fairsim` binary: parses the process's arguments, runs the command and reports a
/// failure as one line on stderr.
pub fn main() -> ExitCode {
    let cli = match parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err(err) => return error::report_clap(err),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = dispatch(cli, &mut out).and_then(|()| out.flush().map_err(CliError::from));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => err.report(),
    }
}

/// What [`run_argv`] did: the exit status the binary would have returned, what it would
/// have printed on stdout, and its one-line error (the text after `fairsim: error: `).
#[derive(Debug)]
pub struct Finished {
    /// The binary's exit status: 0, or 2 (bad input), 3 (fairsim's fault), 4 (output).
    pub status: u8,
    /// The bytes the binary would have printed on stdout (a help text, a summary).
    pub stdout: Vec<u8>,
    /// The error line, without its `fairsim: error: ` prefix; `None` on success.
    pub error: Option<String>,
}

/// Runs a command line (`args` without the program's name, e.g. `["run", "--smp", "4"]`)
/// in this process, as the binary would: the same parse, checks and outputs (files named
/// by the options are written), with stdout captured. For callers that embed fairsim (the
/// Python package): Ctrl-C and SIGTERM keep the caller's handlers, as no signal handler
/// is installed. Notes and warnings still go to stderr.
///
/// [`interrupt`], called from another thread, stops it as Ctrl-C stops the binary: what
/// has finished is written, and it returns status 130 with the error
/// `interrupted: MESSAGE` (the line the binary prints).
pub fn run_argv(args: &[String]) -> Finished {
    cmd::progress::keep_signal_handlers();
    cmd::progress::clear_interrupt();
    let argv = std::iter::once("fairsim".to_string()).chain(args.iter().cloned());
    let mut out = Vec::new();
    let result = match parse(argv) {
        Ok(cli) => {
            let run = std::panic::AssertUnwindSafe(|| dispatch(cli, &mut out));
            match std::panic::catch_unwind(run) {
                Ok(result) => result,
                Err(payload) => match payload.downcast::<cmd::progress::Interrupted>() {
                    Ok(interrupted) => {
                        return Finished {
                            status: cmd::progress::EXIT_INTERRUPTED as u8,
                            stdout: out,
                            error: Some(format!("interrupted: {}", interrupted.0)),
                        }
                    }
                    Err(other) => std::panic::resume_unwind(other),
                },
            }
        }
        Err(err) => {
            let (status, text, line) = error::clap_outcome(&err);
            return Finished {
                status,
                stdout: text.into_bytes(),
                error: line,
            };
        }
    };
    let (status, error) = match result {
        Ok(()) => (0, None),
        Err(err) => match err.status_line() {
            Some((status, line)) => (status, Some(line)),
            None => (0, None),
        },
    };
    Finished {
        status,
        stdout: out,
        error,
    }
}

/// Asks the [`run_argv`] under way to stop, as Ctrl-C asks the binary (an embedding
/// caller's own Ctrl-C); a command that has already finished is not affected.
pub fn interrupt() {
    cmd::progress::raise_interrupt();
}

/// Runs the parsed command, writing its stdout to `out`.
fn dispatch(cli: Cli, out: &mut dyn Write) -> Result<(), CliError> {
    match cli.command {
        Command::Topology(args) => cmd::topology::run(&args, out),
        Command::Pelt(args) => cmd::pelt::run(&args, out),
        Command::Run(args) => cmd::run::run(&args, out),
        Command::Compare(args) => cmd::compare::run(&args, out),
        Command::Features(args) => cmd::features::run(&args, out),
        Command::Schedstat(args) => cmd::schedstat::run(&args, out),
        Command::Race(args) => cmd::race::run(&args, out),
        Command::Plot(args) => cmd::plot::run(&args, out),
        Command::Sweep(args) => cmd::sweep::run(&args, out),
        Command::Report(args) => cmd::report::run(&args, out),
    }
}
