//! What a run records for its trace and plots: the window, and whether events, the
//! per-domain newidle series or both are kept.

use fairsim_des::time::{format_duration, parse_duration_with_unit, DurationError};

/// Bytes the memory budget counts per traced event: a [`crate::Record`] is 48 bytes, the
/// vector that holds them may be twice as long as its contents, and while it grows the
/// old buffer and the new one exist together (three times in all).
pub const RECORD_BYTES: u64 = 144;

/// The trace of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceConfig {
    /// Record events in `[start, end)` ns; `None` records the measurement window
    /// (`--warmup` to the end of the run).
    pub window: Option<(u64, u64)>,
    /// Record scheduler events (`false`: only the newidle series).
    pub events: bool,
    /// Count newidle balances and groups scanned per domain level in buckets of this
    /// many ns over the measurement window (the plots' newidle series).
    pub series_bucket: Option<u64>,
    /// Also record the sched_tp module's load-tracking events (`sched_pelt_cfs`,
    /// `sched_pelt_se`, `sched_util_est_cfs`, `sched_util_est_se`,
    /// `sched_cpu_capacity`), as `--trace-events pelt` asks; off, a trace holds exactly
    /// what it held before they existed.
    pub pelt: bool,
}

impl TraceConfig {
    /// Events over the measurement window, no series.
    pub fn events() -> TraceConfig {
        TraceConfig {
            window: None,
            events: true,
            series_bucket: None,
            pelt: false,
        }
    }
}

/// Why a `--trace-window` value was refused. Each message names the flag, the value and
/// what is allowed, so that the command line can print it as it stands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WindowError {
    /// The value has no `..` between its start and its end.
    #[error(
        "--trace-window: invalid value '{text}' (no '..'); allowed: START..END with units, e.g. 1s..1.2s, 500ms.., ..10ms"
    )]
    NoRange {
        /// The value as given.
        text: String,
    },
    /// The start or the end is not a duration with its unit.
    #[error(
        "--trace-window: invalid value '{text}' ({source}); allowed: START..END with units, e.g. 1s..1.2s, 500ms.., ..10ms"
    )]
    Duration {
        /// The value as given.
        text: String,
        /// Why the duration did not parse.
        source: DurationError,
    },
    /// The end is not after the start: the window would hold nothing.
    #[error(
        "--trace-window: invalid value '{text}' (the end {} is not after the start {}); allowed: START..END with units, e.g. 1s..1.2s, 500ms.., ..10ms",
        format_duration(*end),
        format_duration(*start)
    )]
    Empty {
        /// The value as given.
        text: String,
        /// The start, in ns.
        start: u64,
        /// The end, in ns.
        end: u64,
    },
}

/// Parses `--trace-window START..END` (each a duration with its unit, e.g. `1s..1.2s`;
/// `..END` starts at 0 and `START..` runs to the end of the run, given as `u64::MAX`).
pub fn parse_window(text: &str) -> Result<(u64, u64), WindowError> {
    let Some((a, b)) = text.split_once("..") else {
        return Err(WindowError::NoRange {
            text: text.to_string(),
        });
    };
    let parse = |s: &str, default: u64| -> Result<u64, WindowError> {
        if s.trim().is_empty() {
            Ok(default)
        } else {
            parse_duration_with_unit(s).map_err(|source| WindowError::Duration {
                text: text.to_string(),
                source,
            })
        }
    };
    let start = parse(a, 0)?;
    let end = parse(b, u64::MAX)?;
    if end <= start {
        return Err(WindowError::Empty {
            text: text.to_string(),
            start,
            end,
        });
    }
    Ok((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairsim_des::time::{MS, SEC};

    #[test]
    fn the_budget_per_record_covers_a_growing_vector() {
        assert!(3 * std::mem::size_of::<crate::Record>() as u64 <= RECORD_BYTES);
    }

    #[test]
    fn windows_parse_with_units_and_open_ends() {
        assert_eq!(parse_window("1s..1.2s").unwrap(), (SEC, 1_200 * MS));
        assert_eq!(parse_window("..10ms").unwrap(), (0, 10 * MS));
        assert_eq!(parse_window("500ms..").unwrap(), (500 * MS, u64::MAX));
        for bad in ["1s", "1..2", "2s..1s", "1s..1s", "x..1s", ""] {
            let e = parse_window(bad).unwrap_err().to_string();
            assert!(e.starts_with("--trace-window: invalid value"), "{e}");
            assert!(!e.contains('\n'));
        }
    }

    /// The typed errors print the same bytes as the strings they replaced, which the
    /// command line and its tests show as they stand.
    #[test]
    fn window_errors_keep_their_text() {
        let allowed = "allowed: START..END with units, e.g. 1s..1.2s, 500ms.., ..10ms";
        for (bad, why) in [
            ("1s", "no '..'".to_string()),
            (
                "1..2",
                parse_duration_with_unit("1").unwrap_err().to_string(),
            ),
            (
                "2s..1.5s",
                "the end 1.5s is not after the start 2s".to_string(),
            ),
            ("1s..1s", "the end 1s is not after the start 1s".to_string()),
        ] {
            assert_eq!(
                parse_window(bad).unwrap_err().to_string(),
                format!("--trace-window: invalid value '{bad}' ({why}); {allowed}")
            );
        }
    }
}
