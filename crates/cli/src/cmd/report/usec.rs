//! perf's timestamp format, a leaf the three reports share.

/// `timestamp__scnprintf_usec` (tools/perf/util/time-utils.c): ns as `seconds.usec`,
/// the microseconds truncated.
pub(super) fn fmt_usec(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, (ns % 1_000_000_000) / 1_000)
}
