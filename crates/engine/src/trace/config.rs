//! What a run records for its trace and plots: the window, and whether events, the
//! per-domain newidle series or both are kept.

use crate::time::{format_duration, parse_duration_with_unit};

/// Bytes the memory budget counts per traced event: a [`super::Record`] is 48 bytes, the
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
}

impl TraceConfig {
    /// Events over the measurement window, no series.
    pub fn events() -> TraceConfig {
        TraceConfig {
            window: None,
            events: true,
            series_bucket: None,
        }
    }
}

/// Parses `--trace-window START..END` (each a duration with its unit, e.g. `1s..1.2s`;
/// `..END` starts at 0 and `START..` runs to the end of the run, given as `u64::MAX`).
pub fn parse_window(text: &str) -> Result<(u64, u64), String> {
    let bad = |why: &str| {
        format!(
            "--trace-window: invalid value '{text}' ({why}); allowed: START..END with units, e.g. 1s..1.2s, 500ms.., ..10ms"
        )
    };
    let Some((a, b)) = text.split_once("..") else {
        return Err(bad("no '..'"));
    };
    let parse = |s: &str, default: u64| -> Result<u64, String> {
        if s.trim().is_empty() {
            Ok(default)
        } else {
            parse_duration_with_unit(s).map_err(|e| bad(&e.to_string()))
        }
    };
    let start = parse(a, 0)?;
    let end = parse(b, u64::MAX)?;
    if end <= start {
        return Err(bad(&format!(
            "the end {} is not after the start {}",
            format_duration(end),
            format_duration(start)
        )));
    }
    Ok((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, SEC};

    #[test]
    fn the_budget_per_record_covers_a_growing_vector() {
        assert!(3 * std::mem::size_of::<super::super::Record>() as u64 <= RECORD_BYTES);
    }

    #[test]
    fn windows_parse_with_units_and_open_ends() {
        assert_eq!(parse_window("1s..1.2s").unwrap(), (SEC, 1_200 * MS));
        assert_eq!(parse_window("..10ms").unwrap(), (0, 10 * MS));
        assert_eq!(parse_window("500ms..").unwrap(), (500 * MS, u64::MAX));
        for bad in ["1s", "1..2", "2s..1s", "1s..1s", "x..1s", ""] {
            let e = parse_window(bad).unwrap_err();
            assert!(e.starts_with("--trace-window: invalid value"), "{e}");
            assert!(!e.contains('\n'));
        }
    }
}
