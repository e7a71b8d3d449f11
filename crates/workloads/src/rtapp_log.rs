//! rt-app's per-activation log: one line per phase pass of each thread, as rt-app writes
//! it to `LOGDIR/rt-app-NAME-IDX-IDX.log`, and the bounded list of activations `run --json`
//! gives per thread.
//!
//! Ported from rt-app v1.0 (github.com/scheduler-tools/rt-app, tag `v1.0`, commit
//! a477fe2): `thread_body` reads `t_start` before a pass and `t_end` after it and fills a
//! `timing_point_t`, which `log_timing` (rt-app_utils.c) prints under the header
//! `thread_body` writes after its `# Policy : SCHED_OTHER priority : N` line. The columns,
//! all in microseconds:
//! - `idx`: the thread's index in the file (`data->ind`);
//! - `perf`: the loops `loadwait` ran. fairsim's work is already in capacity units, so it
//!   reports the loops of a 1 us-per-loop calibration at capacity 1024, the pass's
//!   `c_duration`;
//! - `run`: the wall time of the pass's `run` and `runtime` events, each rounded to the
//!   microsecond (`timespec_to_usec`) and summed;
//! - `period`: `t_end - t_start`;
//! - `start`, `end`: `t_start` and `t_end` on the monotonic clock, which in fairsim is
//!   virtual time, 0 when the run starts; `rel_st`: `t_start` minus rt-app's start, also
//!   0 here, so it equals `start`;
//! - `slack`, `wu_lat`: as `rtapp_stats` computes them for its distributions, from the
//!   same pass records, so that the log and the distributions agree;
//! - `c_duration`, `c_period`: the pass's `run`/`runtime` durations and timer periods as
//!   written in the file.
//!
//! A pass is logged when it ends inside the measurement window, as the distributions
//! count it. fairsim also notes where the pass ended: the CPU, and that CPU's frequency
//! (kHz) at that instant when the machine has cpufreq policies.

use std::fmt::Write as _;

use super::rtapp_pass::{round_us, PhaseAcc};

/// The most activations `run --json` lists per thread (the first ones of the window).
pub const JSON_PER_THREAD: usize = 256;
/// The most activations kept in memory over all threads of a workload for the JSON; a
/// file with many threads lists fewer per thread.
pub const JSON_TOTAL: usize = 1 << 16;
/// The most activations kept in memory over all threads of a workload when the log
/// files are asked for (`--rtapp-log`); later passes are counted, not kept, and each
/// file says how many of its own were left out.
pub const FILE_TOTAL: usize = 1 << 20;

/// Where and when a phase pass ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassEnd {
    /// `t_end` (ns).
    pub at: u64,
    /// The CPU the thread ran on.
    pub cpu: u32,
    /// That CPU's frequency (kHz), when the machine has cpufreq policies.
    pub freq_khz: Option<u32>,
}

/// One line of the log: a `timing_point_t`, in ns where rt-app keeps a `timespec`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Activation {
    /// `t_start` (ns).
    pub start: u64,
    /// Where and when the pass ended.
    pub end: PassEnd,
    /// `run` (us).
    pub run_us: u64,
    /// `c_duration` (us).
    pub c_duration_us: u64,
    /// `c_period` (us).
    pub c_period_us: u64,
    /// `slack` (us); 0 for a pass without a timer, as rt-app's zeroed `log_data_t`.
    pub slack_us: i64,
    /// `wu_lat` (us); 0 for a pass without a timer.
    pub wu_lat_us: u64,
}

/// One thread's activations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadLog {
    /// The first activations of the window, in order.
    pub kept: Vec<Activation>,
    /// Later activations that did not fit the bounds.
    pub dropped: u64,
}

/// Every thread's activations of one rt-app workload, bounded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActivationLog {
    /// Per task of the workload (by offset from its first task).
    pub threads: Vec<ThreadLog>,
    /// The most kept per thread.
    pub per_thread: usize,
    /// The most kept over all threads.
    pub total: usize,
    /// Kept so far over all threads.
    pub held: usize,
}

impl ActivationLog {
    /// An empty log for `threads` threads; `files`: the log files are asked for, which
    /// keeps every thread's passes up to [`FILE_TOTAL`], else the JSON's bounds.
    pub fn new(threads: usize, files: bool) -> ActivationLog {
        let (per_thread, total) = if files {
            (usize::MAX, FILE_TOTAL)
        } else {
            (JSON_PER_THREAD, JSON_TOTAL)
        };
        ActivationLog {
            threads: vec![ThreadLog::default(); threads],
            per_thread,
            total,
            held: 0,
        }
    }

    /// Bytes the log may hold at its bounds, doubled for the vectors' growth.
    pub fn bound_bytes(files: bool) -> u64 {
        let n = if files { FILE_TOTAL } else { JSON_TOTAL };
        2 * n as u64 * std::mem::size_of::<Activation>() as u64
    }

    /// Task `task` finished the pass `acc` at `end`.
    pub(super) fn push(&mut self, task: usize, acc: &PhaseAcc, end: PassEnd) {
        let Some(t) = self.threads.get_mut(task) else {
            return;
        };
        if t.kept.len() >= self.per_thread || self.held >= self.total {
            t.dropped += 1;
            return;
        }
        self.held += 1;
        t.kept.push(Activation {
            start: acc.start.unwrap_or(end.at),
            end,
            run_us: acc.run_us,
            c_duration_us: acc.c_duration_us,
            c_period_us: acc.c_period_us,
            slack_us: if acc.timed { acc.slack_us } else { 0 },
            wu_lat_us: if acc.timed { acc.wu_lat_us } else { 0 },
        });
    }
}

fn us(ns: u64) -> u64 {
    round_us(i128::from(ns)).max(0) as u64
}

/// The log's columns and the widths `thread_body` prints their names at.
const COLUMNS: [(&str, usize); 11] = [
    ("#idx", 4),
    ("perf", 8),
    ("run", 8),
    ("period", 8),
    ("start", 15),
    ("end", 15),
    ("rel_st", 15),
    ("slack", 10),
    ("c_duration", 10),
    ("c_period", 10),
    ("wu_lat", 10),
];

/// The text of thread `ind`'s log file (policy `policy` as rt-app's `policy_to_string`
/// names it, nice value `nice`) in rt-app v1.0's layout.
pub(crate) fn log_text(ind: usize, policy: &str, nice: i32, log: &ThreadLog) -> String {
    let mut out = format!("# Policy : {policy} priority : {nice}\n");
    // thread_body's header: "%s %8s %8s %8s %15s %15s %15s %10s %10s %10s %10s".
    let header: Vec<String> = COLUMNS
        .iter()
        .map(|&(name, width)| format!("{name:>width$}"))
        .collect();
    out.push_str(&header.join(" "));
    out.push('\n');
    for a in &log.kept {
        let start = us(a.start);
        let _ = writeln!(
            out,
            "{:4} {:8} {:8} {:8} {:15} {:15} {:15} {:10} {:10} {:10} {:10}",
            ind,
            a.c_duration_us,
            a.run_us,
            us(a.end.at.saturating_sub(a.start)),
            start,
            us(a.end.at),
            start,
            a.slack_us,
            a.c_duration_us,
            a.c_period_us,
            a.wu_lat_us
        );
    }
    if log.dropped > 0 {
        let _ = writeln!(
            out,
            "# fairsim: {} later activations not kept (at most {FILE_TOTAL} per run)",
            log.dropped
        );
    }
    out
}

/// The JSON list of a thread's first activations (at most [`JSON_PER_THREAD`]).
pub(crate) fn activations_json(log: &ThreadLog) -> serde_json::Value {
    let list: Vec<serde_json::Value> = log
        .kept
        .iter()
        .take(JSON_PER_THREAD)
        .map(|a| {
            serde_json::json!({
                "start_us": us(a.start),
                "end_us": us(a.end.at),
                "run_us": a.run_us,
                "c_duration_us": a.c_duration_us,
                "c_period_us": a.c_period_us,
                "slack_us": a.slack_us,
                "wu_lat_us": a.wu_lat_us,
                "cpu": a.end.cpu,
                "freq_khz": a.end.freq_khz,
            })
        })
        .collect();
    serde_json::Value::Array(list)
}

/// How many of a thread's activations the JSON list leaves out.
pub(crate) fn activations_left_out(log: &ThreadLog) -> u64 {
    log.dropped + log.kept.len().saturating_sub(JSON_PER_THREAD) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_has_rt_app_columns_and_widths() {
        let log = ThreadLog {
            kept: vec![Activation {
                start: 100_000_400,
                end: PassEnd {
                    at: 105_000_900,
                    cpu: 1,
                    freq_khz: None,
                },
                run_us: 5_000,
                c_duration_us: 5_000,
                c_period_us: 100_000,
                slack_us: 94_999,
                wu_lat_us: 3,
            }],
            dropped: 0,
        };
        let text = log_text(2, "SCHED_OTHER", -5, &log);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "# Policy : SCHED_OTHER priority : -5");
        assert_eq!(
            lines[1],
            "#idx     perf      run   period           start             end          rel_st      slack c_duration   c_period     wu_lat"
        );
        assert_eq!(
            lines[2],
            "   2     5000     5000     5001          100000          105001          100000      94999       5000     100000          3"
        );
    }

    #[test]
    fn bounds_count_what_they_leave_out() {
        let mut l = ActivationLog::new(2, false);
        l.total = 3;
        for _ in 0..4 {
            l.push(0, &PhaseAcc::default(), PassEnd::default());
        }
        l.push(1, &PhaseAcc::default(), PassEnd::default());
        assert_eq!((l.threads[0].kept.len(), l.threads[0].dropped), (3, 1));
        assert_eq!((l.threads[1].kept.len(), l.threads[1].dropped), (0, 1));
    }
}
