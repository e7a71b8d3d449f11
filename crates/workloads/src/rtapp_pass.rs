//! What one rt-app task gathers during a phase pass, and the rounding of its times to
//! microseconds.
//!
//! Apart from `rtapp_stats`, which fills a pass, and `rtapp_log`, which keeps the passes
//! that ended: the log reads a pass and the stats push finished passes into the log, so
//! with the pass in `rtapp_stats` the two imported each other.

use fairsim_des::time::US;

/// What one task has gathered during its current phase pass (rt-app's `log_data_t`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PhaseAcc {
    /// `slack` in us (may be negative).
    pub slack_us: i64,
    /// `wu_lat` in us.
    pub wu_lat_us: u64,
    /// Whether the pass used a timer.
    pub timed: bool,
    /// The instant the task sleeps until, while it sleeps.
    pub target: u64,
    /// `t_start` of the pass (ns), once read.
    pub start: Option<u64>,
    /// When the current `run`/`runtime` event began (ns).
    pub event_start: u64,
    /// The wall time of the pass's `run`/`runtime` events (us): the log's `run` column.
    pub run_us: u64,
    /// Their durations as written (us): `c_duration`.
    pub c_duration_us: u64,
    /// The periods of the pass's timer events (us): `c_period`.
    pub c_period_us: u64,
}

/// ns to us rounded to the nearest, halves away from zero (C's `round`).
pub(super) fn round_us(ns: i128) -> i64 {
    let us = i128::from(US);
    let r = if ns >= 0 {
        (ns + us / 2) / us
    } else {
        -((-ns + us / 2) / us)
    };
    r.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}
