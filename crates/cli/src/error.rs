//! One-line error reporting for the CLI.
//!
//! Every failure a user can cause ends as a single line on stderr naming the field and
//! what is allowed, and a non-zero exit status; nothing panics.

use std::fmt::Display;
use std::process::ExitCode;

/// Exit status for bad input (same as clap's usage errors).
const EXIT_USAGE: u8 = 2;

/// An error to show the user: already a sentence, printed after `fairsim: error: `.
#[derive(Debug)]
pub struct CliError(pub String);

impl CliError {
    /// Wraps a message written by the CLI itself.
    pub fn msg(text: impl Into<String>) -> Self {
        CliError(text.into())
    }

    /// Prints the error as one line and returns the failure status.
    pub fn report(&self) -> ExitCode {
        // A closed pipe (`fairsim ... | head`) is not an error worth a message.
        if self.0.contains("Broken pipe") {
            return ExitCode::SUCCESS;
        }
        let one_line: String = self.0.replace('\n', " ");
        eprintln!("fairsim: error: {one_line}");
        ExitCode::from(EXIT_USAGE)
    }
}

impl<E: std::error::Error> From<E> for CliError {
    fn from(err: E) -> Self {
        CliError(err.to_string())
    }
}

/// Prints clap's help and version output as clap does, and its errors as one line.
pub fn report_clap(err: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // Help goes to stdout and is not a failure, except when it stands in for a
            // missing subcommand.
            let _ = err.print();
            if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                ExitCode::from(EXIT_USAGE)
            } else {
                ExitCode::SUCCESS
            }
        }
        _ => {
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
                Some(values) => eprintln!("fairsim: error: {first}; allowed: {values}"),
                None => eprintln!("fairsim: error: {first}"),
            }
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Formats a field-named validation message: `--field: got X; allowed: Y`.
pub fn invalid(field: &str, got: impl Display, allowed: &str) -> CliError {
    CliError(format!(
        "{field}: invalid value '{got}'; allowed: {allowed}"
    ))
}
