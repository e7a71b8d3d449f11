//! One-line error reporting for the CLI.
//!
//! Every failure a user can cause ends as a single line on stderr naming the field and
//! what is allowed, and a non-zero exit status; nothing panics.

use std::fmt::Display;
use std::io::Write;
use std::process::ExitCode;

/// Exit status for bad input (same as clap's usage errors).
pub(crate) const EXIT_USAGE: u8 = 2;

/// Exit status when fairsim itself failed: an invariant of the scheduler or the engine
/// broke, so the fault is fairsim's, not the input's.
pub(crate) const EXIT_INTERNAL: u8 = 3;

/// Exit status when the output could not be written (a full disk, a closed terminal).
pub(crate) const EXIT_OUTPUT: u8 = 4;

/// Whose fault an error is, which decides the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Bad input: an option, a file, a workload string.
    Input,
    /// A broken invariant: a bug in fairsim.
    Internal,
    /// Writing stdout failed for a reason other than the reader going away.
    Output,
    /// The reader of stdout went away (`fairsim ... | head`): not worth a message.
    ClosedPipe,
}

/// An error to show the user: already a sentence, printed after `fairsim: error: `.
#[derive(Debug)]
pub(crate) struct CliError {
    text: String,
    class: Class,
}

impl CliError {
    /// Wraps a message about bad input written by the CLI itself.
    pub(crate) fn msg(text: impl Into<String>) -> Self {
        CliError {
            text: text.into(),
            class: Class::Input,
        }
    }

    /// Wraps a message about a failure of fairsim itself.
    pub(crate) fn internal(text: impl Into<String>) -> Self {
        CliError {
            text: text.into(),
            class: Class::Internal,
        }
    }

    /// Wraps a message about output that could not be written (a `--json` file, say).
    pub(crate) fn output(text: impl Into<String>) -> Self {
        CliError {
            text: text.into(),
            class: Class::Output,
        }
    }

    /// The same error with `prefix: ` in front of its text (a sweep names the point that
    /// failed); the class, and so the exit status, stays.
    pub(crate) fn context(self, prefix: &str) -> Self {
        CliError {
            text: format!("{prefix}: {}", self.text),
            class: self.class,
        }
    }

    /// The exit status and the one line to print after `fairsim: error: `; `None` for a
    /// closed pipe, which is not worth a message and exits with success.
    pub(crate) fn status_line(&self) -> Option<(u8, String)> {
        let status = match self.class {
            Class::ClosedPipe => return None,
            Class::Input => EXIT_USAGE,
            Class::Internal => EXIT_INTERNAL,
            Class::Output => EXIT_OUTPUT,
        };
        Some((status, self.text.replace('\n', " ")))
    }

    /// Prints the error as one line and returns the failure status.
    pub(crate) fn report(&self) -> ExitCode {
        match self.status_line() {
            Some((status, one_line)) => {
                eprintln!("fairsim: error: {one_line}");
                ExitCode::from(status)
            }
            None => ExitCode::SUCCESS,
        }
    }
}

/// Every `std::io::Error` the commands propagate comes from writing their output to
/// stdout (files are read and written through messages of their own), so the kind of
/// the error, not its text, tells a closed pipe from a real failure.
impl From<std::io::Error> for CliError {
    fn from(err: std::io::Error) -> Self {
        let class = if err.kind() == std::io::ErrorKind::BrokenPipe {
            Class::ClosedPipe
        } else {
            Class::Output
        };
        CliError {
            text: format!("writing stdout: {err}"),
            class,
        }
    }
}

/// A broken invariant is fairsim's fault; everything else the engine reports is about
/// its input.
impl From<fairsim_engine::EngineError> for CliError {
    fn from(err: fairsim_engine::EngineError) -> Self {
        let internal = matches!(err, fairsim_engine::EngineError::Invariant(_));
        CliError {
            text: err.to_string(),
            class: if internal {
                Class::Internal
            } else {
                Class::Input
            },
        }
    }
}

/// The run's resolution reports the engine's own refusals as the engine does (a broken
/// invariant stays fairsim's fault); everything else it refuses is about the input.
impl From<fairsim_workloads::resolve::ResolveError> for CliError {
    fn from(err: fairsim_workloads::resolve::ResolveError) -> Self {
        match err {
            fairsim_workloads::resolve::ResolveError::Engine(e) => e.into(),
            other => CliError::msg(other.to_string()),
        }
    }
}

/// Race mode's errors are classed as the engine's: a broken invariant is fairsim's
/// fault, a refused spec or a watchdog that fired is about the options.
impl From<fairsim_race::RaceError> for CliError {
    fn from(err: fairsim_race::RaceError) -> Self {
        CliError {
            text: err.to_string(),
            class: if err.is_internal() {
                Class::Internal
            } else {
                Class::Input
            },
        }
    }
}

/// Serialising fairsim's own result types cannot fail on valid data, so a failure is a
/// bug.
impl From<serde_json::Error> for CliError {
    fn from(err: serde_json::Error) -> Self {
        CliError::internal(format!("serialising JSON: {err}"))
    }
}

/// A plot that could not be written is an output error, one plotters could not draw is
/// fairsim's fault, and everything else (a missing file, a bad field) is about the input.
impl From<fairsim_plot::PlotError> for CliError {
    fn from(err: fairsim_plot::PlotError) -> Self {
        let class = if err.is_output() {
            Class::Output
        } else if err.is_internal() {
            Class::Internal
        } else {
            Class::Input
        };
        CliError {
            text: err.to_string(),
            class,
        }
    }
}

/// Errors about the input from the library crates.
macro_rules! input_error {
    ($($t:ty),*) => {$(
        impl From<$t> for CliError {
            fn from(err: $t) -> Self {
                CliError::msg(err.to_string())
            }
        }
    )*};
}

input_error!(
    fairsim_topology::TopologyError,
    fairsim_balance::features::FeatureError,
    fairsim_balance::schedstat_read::SchedstatError,
    fairsim_engine::cost::CostError
);

/// The one line for a command given without its subcommand (`fairsim report`): the
/// command from the help's usage line and the subcommands from its list.
fn missing_subcommand_line(err: &clap::Error) -> String {
    let text = err.render().to_string();
    let command = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Usage: "))
        .and_then(|u| u.split(" <").next())
        .unwrap_or("fairsim")
        .to_string();
    let subcommands: Vec<&str> = text
        .lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    format!(
        "{command}: a subcommand is required; allowed: {}",
        subcommands.join(", ")
    )
}

/// Prints clap's help and version output as clap does, and its errors as one line.
pub(crate) fn report_clap(err: clap::Error) -> ExitCode {
    let (status, _, line) = clap_outcome(&err);
    match line {
        Some(line) => {
            eprintln!("fairsim: error: {line}");
            ExitCode::from(status)
        }
        // Help goes to stdout, printed by clap so that a terminal gets its colours, but a
        // stdout that cannot take it (a full disk) fails as every other command's output
        // does; stdout is line-buffered, so a last line without its newline is flushed.
        None => match err.print().and_then(|()| std::io::stdout().flush()) {
            Ok(()) => ExitCode::from(status),
            Err(e) => CliError::from(e).report(),
        },
    }
}

/// What a clap error means to the caller: the exit status, the help or version text for
/// stdout (plain; empty for an error) and the one-line error (`None` for help and
/// version, which go to stdout).
pub(crate) fn clap_outcome(err: &clap::Error) -> (u8, String, Option<String>) {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // Help goes to stdout and is not a failure, except when it stands in for a
            // missing subcommand, which is refused in one line naming the subcommands
            // from the help clap rendered, as every other refusal is one line.
            if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                return (
                    EXIT_USAGE,
                    String::new(),
                    Some(missing_subcommand_line(err)),
                );
            }
            (0, err.render().to_string(), None)
        }
        ErrorKind::MissingRequiredArgument => {
            // clap's own text puts the missing options on the lines after the message;
            // name them on the one line.
            use clap::error::{ContextKind, ContextValue};
            let missing = match err.get(ContextKind::InvalidArg) {
                Some(ContextValue::Strings(v)) => v.join(", "),
                Some(ContextValue::String(v)) => v.clone(),
                _ => "an option".to_string(),
            };
            let line = format!("{missing}: required but not given; allowed: see --help");
            (EXIT_USAGE, String::new(), Some(line))
        }
        _ => (EXIT_USAGE, String::new(), Some(clap_line(err))),
    }
}

/// A clap error (other than help, version or a missing argument) as one line: its first
/// line, with the allowed values clap lists on a line of their own appended.
pub(crate) fn clap_line(err: &clap::Error) -> String {
    let rendered = err.render().to_string();
    let first = rendered
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid arguments");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    // clap lists allowed values on a second line; keep them on the one line.
    let allowed = rendered.lines().find_map(|l| {
        l.trim()
            .strip_prefix("[possible values: ")
            .and_then(|rest| rest.strip_suffix(']'))
    });
    match allowed {
        Some(values) => format!("{first}; allowed: {values}"),
        None => first.to_string(),
    }
}

/// Formats a field-named validation message: `--field: got X; allowed: Y`.
pub(crate) fn invalid(field: &str, got: impl Display, allowed: &str) -> CliError {
    CliError::msg(format!(
        "{field}: invalid value '{got}'; allowed: {allowed}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fault_decides_the_class() {
        let broken = CliError::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert_eq!(broken.class, Class::ClosedPipe);
        let full = CliError::from(std::io::Error::other("No space left on device"));
        assert_eq!(full.class, Class::Output);
        assert!(full.text.starts_with("writing stdout: "));
        let bug = CliError::from(fairsim_engine::EngineError::Invariant(
            fairsim_engine::InvariantError::BeyondRun,
        ));
        assert_eq!(bug.class, Class::Internal);
        let input = CliError::from(fairsim_engine::EngineError::Workload(
            fairsim_engine::SpecError::refused("rtapp", "Broken pipe"),
        ));
        assert_eq!(input.class, Class::Input);
        let race_bug = CliError::from(fairsim_race::RaceError::ThreadPanicked);
        assert_eq!(race_bug.class, Class::Internal);
        let late = CliError::from(fairsim_race::RaceError::StartTimeout {
            limit_ns: 1,
            started: 0,
            threads: 1,
        });
        assert_eq!(late.class, Class::Input);
    }
}
