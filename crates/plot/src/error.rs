//! The crate's one error type: every message is one line naming the file or field and,
//! where a value was refused, what is allowed.

use std::path::PathBuf;

/// Why a plot could not be read, checked, drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// An input file or directory could not be read or parsed.
    #[error("{}: {reason}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// What went wrong, one line.
        reason: String,
    },
    /// A value in the plot data (or a criterion estimate) is not allowed.
    #[error("{origin}: {field}: {message}")]
    Invalid {
        /// The file the value came from, or `plot data` for data built in memory.
        origin: String,
        /// The field, as a path into the data (`timeline.slices[3].end_ns`).
        field: String,
        /// The value and what is allowed.
        message: String,
    },
    /// An output file or directory could not be written.
    #[error("{}: cannot write: {reason}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error, one line.
        reason: String,
    },
    /// plotters refused to draw data that passed validation: a bug of this crate.
    #[error("drawing {file}: {reason}")]
    Draw {
        /// The SVG being drawn.
        file: String,
        /// plotters' error.
        reason: String,
    },
}

impl PlotError {
    /// True when the output could not be written (a full disk, a read-only directory),
    /// which the CLI reports with its own exit status.
    pub fn is_output(&self) -> bool {
        matches!(self, PlotError::Write { .. })
    }

    /// True when the fault is this crate's rather than the input's.
    pub fn is_internal(&self) -> bool {
        matches!(self, PlotError::Draw { .. })
    }

    /// An [`PlotError::Invalid`] about data built in memory; [`crate::read_data`] renames
    /// the origin to the file.
    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> PlotError {
        PlotError::Invalid {
            origin: "plot data".into(),
            field: field.into(),
            message: message.into(),
        }
    }

    /// The same error with `origin` as the file the data came from.
    pub(crate) fn in_file(self, file: &std::path::Path) -> PlotError {
        match self {
            PlotError::Invalid { field, message, .. } => PlotError::Invalid {
                origin: file.display().to_string(),
                field,
                message,
            },
            other => other,
        }
    }
}

/// The common shape of a refused value: `invalid value 'X'; allowed: Y`.
pub(crate) fn bad(got: impl std::fmt::Display, allowed: &str) -> String {
    format!("invalid value '{got}'; allowed: {allowed}")
}
