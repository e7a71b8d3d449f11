//! rt-app's timers and per-phase log at run time: the workload model behind its threads'
//! hook operations ([`RtCall`]), and the distributions of the log's `slack` and `wu_lat`
//! columns.
//!
//! Ported from rt-app's `run_event` (`case rtapp_timer`) and `thread_body`: a timer's next
//! instant starts at the run's start (`t_first`, the same for every thread) and each use
//! adds its period; `slack` is that instant minus the time the event began (rounded to
//! the nearest microsecond, `timespec_to_usec_long`), the last timer's in a phase pass, or
//! the sum of them with `cumulative_slack`; `wu_lat` adds, after each sleep, how late the
//! task came back (rounded to the nearest microsecond: `timespec_to_usec` is `lround`
//! in rt-app's `rt-app_utils.c`), and is reset to 0 when
//! a timer's instant had already passed, where a relative timer also restarts from now.
//!
//! Each pass also keeps what rt-app's per-activation log line holds (`rtapp_log`): the
//! pass's start and end, the wall time of its `run`/`runtime` events, the durations and
//! periods as written (`c_duration`, `c_period`), and the thread's `set_thread_affinity`
//! record of the CPU set it asked for last.

use std::collections::BTreeMap;

use fairsim_topology::CpuMask;

use super::rtapp_log::{ActivationLog, PassEnd};
use super::rtapp_pass::{round_us, PhaseAcc};
use fairsim_des::time::US;
use fairsim_engine::hook::{HookAct, HookCx, SleepAct, WorkloadModel};
use fairsim_engine::program::Op;

/// Where an [`RtCall::Stamp`] reads the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtPoint {
    /// `t_start` of a phase pass in `thread_body`.
    PassStart,
    /// Before a `run` or `runtime` event (`run_event`'s `t_start`).
    EventStart,
    /// After it: its wall time joins the pass's `run` column, and its requested `us` the
    /// `c_duration` column.
    EventEnd {
        /// The event's duration as written, in us.
        us: u64,
    },
}

/// What one of an rt-app thread's hook operations does, by the index its operation
/// carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtCall {
    /// rt-app's `timer` event (an [`Op::HookSleep`](fairsim_engine::program::Op::HookSleep)):
    /// advance clock `clock` by `period` ns and sleep until that instant, an absolute
    /// hrtimer with the task's slack (`clock_nanosleep(TIMER_ABSTIME)`). When the instant
    /// has already passed the thread does not sleep, and a relative clock restarts from
    /// now. The slack before the sleep and the wakeup latency after it join the thread's
    /// pass record.
    Timer {
        /// Index of the clock in [`Periodic::clocks`].
        clock: usize,
        /// The period in ns.
        period: u64,
    },
    /// The end of one pass of a phase: the thread's pass record (slack, wakeup latency)
    /// goes into row `row` and starts afresh.
    PhaseEnd {
        /// Index of the (task, phase) statistics in [`Periodic::rows`].
        row: usize,
    },
    /// `set_thread_affinity` at the start of a phase pass: when set `set` differs from
    /// the one the thread set last (rt-app compares its own record, `CPU_EQUAL`, and
    /// skips the system call when they match), the thread calls `sched_setaffinity` on
    /// itself.
    SetAffinity {
        /// Index of the mask in [`Periodic::masks`].
        set: usize,
    },
    /// A `clock_gettime` around a phase pass or its `run`/`runtime` events, which the
    /// per-activation log is made of. Takes no time.
    Stamp(RtPoint),
}

/// One timer reference (`"ref"`): shared by every task that names it, or one per task
/// for names starting with `unique`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeriodicClock {
    /// The instant of the last activation handed out (`t_next`); `None` before first use.
    pub next: Option<u64>,
    /// rt-app's `relative` mode (the default): a missed instant restarts the clock from
    /// the time of the miss; `absolute` keeps the grid.
    pub relative: bool,
}

/// A distribution of integer microseconds, exact: values are counted per microsecond, so
/// memory grows with the spread of the values, not with their number.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsDist {
    counts: BTreeMap<i64, u64>,
    n: u64,
    sum: i128,
}

impl UsDist {
    /// Adds one value.
    pub fn add(&mut self, us: i64) {
        *self.counts.entry(us).or_insert(0) += 1;
        self.n += 1;
        self.sum += i128::from(us);
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The mean rounded towards zero (0 when empty).
    pub fn mean(&self) -> i64 {
        if self.n == 0 {
            return 0;
        }
        (self.sum / i128::from(self.n)) as i64
    }

    /// The `pct`-th percentile by nearest rank: the smallest value with at least
    /// `ceil(pct * n / 100)` values at or below it (0 when empty).
    pub fn percentile(&self, pct: u64) -> i64 {
        let rank = (pct * self.n).div_ceil(100).max(1);
        let mut seen = 0;
        for (&v, &c) in &self.counts {
            seen += c;
            if seen >= rank {
                return v;
            }
        }
        0
    }

    /// The largest value (0 when empty).
    pub fn max(&self) -> i64 {
        self.counts.keys().next_back().copied().unwrap_or(0)
    }

    /// count, mean, p50, p99, max as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "count": self.n,
            "mean": self.mean(),
            "p50": self.percentile(50),
            "p99": self.percentile(99),
            "max": self.max(),
        })
    }
}

/// The log rows of one task instance in one phase, as distributions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhaseRows {
    /// Phase passes completed inside the measurement window.
    pub passes: u64,
    /// `slack` of the passes that used a timer.
    pub slack: UsDist,
    /// `wu_lat` of the passes that used a timer.
    pub wu_lat: UsDist,
}

/// The rt-app state of a workload: its timers, each task's current phase pass and the
/// rows gathered so far. Empty for the other workloads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Periodic {
    /// Timer references.
    pub clocks: Vec<PeriodicClock>,
    /// Per task of the workload (by offset from its first task): the current pass.
    pub acc: Vec<PhaseAcc>,
    /// Per (task, phase) row.
    pub rows: Vec<PhaseRows>,
    /// `global.cumulative_slack`.
    pub cumulative_slack: bool,
    /// The CPU sets [`RtCall::SetAffinity`] names, each content once.
    pub masks: Vec<CpuMask>,
    /// Per task: the index in `masks` of the set rt-app recorded last
    /// (`curr_cpu_data`), starting at the thread's inherited affinity.
    pub curr_set: Vec<usize>,
    /// The per-activation log (`rtapp_log`).
    pub log: ActivationLog,
    /// The threads' hook operations, by the index their program's operation carries.
    pub calls: Vec<RtCall>,
}

impl Periodic {
    /// The program operation for `call`: a hook sleep for a timer, else a hook (local
    /// unless it may move the thread).
    pub fn op(&mut self, call: RtCall) -> Op {
        self.calls.push(call);
        let i = (self.calls.len() - 1) as u32;
        match call {
            RtCall::Timer { .. } => Op::HookSleep {
                call: i,
                interruptible: false,
            },
            RtCall::SetAffinity { .. } => Op::Hook {
                call: i,
                local: false,
            },
            RtCall::PhaseEnd { .. } | RtCall::Stamp(_) => Op::Hook {
                call: i,
                local: true,
            },
        }
    }

    /// A timer event of task `task` (offset) at `now`: the instant to sleep until, or
    /// `None` when it has already passed (then the event is over).
    pub fn timer(&mut self, task: usize, clock: usize, period: u64, now: u64) -> Option<u64> {
        let (Some(c), Some(acc)) = (self.clocks.get_mut(clock), self.acc.get_mut(task)) else {
            return None;
        };
        // Every rt-app thread takes `t_first` from the same `t_zero`; the world starts its
        // tasks at 0.
        let next = c.next.unwrap_or(0) + period;
        c.next = Some(next);
        let slack = round_us(i128::from(next) - i128::from(now));
        acc.slack_us = if self.cumulative_slack {
            acc.slack_us + slack
        } else {
            slack
        };
        acc.timed = true;
        acc.c_period_us += period / US;
        if now < next {
            acc.target = next;
            Some(next)
        } else {
            if c.relative {
                c.next = Some(now);
            }
            acc.wu_lat_us = 0;
            None
        }
    }

    /// Task `task` runs again at `now` after sleeping for its timer.
    pub fn woke(&mut self, task: usize, now: u64) {
        if let Some(acc) = self.acc.get_mut(task) {
            acc.wu_lat_us += round_us(i128::from(now.saturating_sub(acc.target))) as u64;
        }
    }

    /// rt-app's `set_thread_affinity` for task `task` asking for set `set`: the mask to
    /// pass to `sched_setaffinity`, or `None` when it equals the set recorded last, where
    /// rt-app makes no system call.
    pub fn affinity_change(&mut self, task: usize, set: usize) -> Option<CpuMask> {
        let curr = self.curr_set.get_mut(task)?;
        if *curr == set {
            return None;
        }
        let mask = self.masks.get(set)?.clone();
        *curr = set;
        Some(mask)
    }

    /// Task `task` reads the clock at `point` at `now` ([`RtCall::Stamp`]).
    pub fn stamp(&mut self, task: usize, point: RtPoint, now: u64) {
        let Some(acc) = self.acc.get_mut(task) else {
            return;
        };
        match point {
            RtPoint::PassStart => acc.start = Some(now),
            RtPoint::EventStart => acc.event_start = now,
            RtPoint::EventEnd { us } => {
                acc.c_duration_us += us;
                // run_event adds timespec_to_usec of each event's own wall time.
                acc.run_us +=
                    round_us(i128::from(now.saturating_sub(acc.event_start))).max(0) as u64;
            }
        }
    }

    /// Task `task` ends a pass of the phase whose row is `row`; the pass counts when
    /// `counted` (it ended inside the measurement window), and then also joins the
    /// per-activation log with its end `end`.
    pub fn phase_end(&mut self, task: usize, row: usize, counted: bool, end: PassEnd) {
        let Some(acc) = self.acc.get_mut(task) else {
            return;
        };
        let done = std::mem::take(acc);
        if counted {
            self.log.push(task, &done, end);
        }
        if let (true, Some(r)) = (counted, self.rows.get_mut(row)) {
            r.passes += 1;
            if done.timed {
                r.slack.add(done.slack_us);
                r.wu_lat.add(done.wu_lat_us as i64);
            }
        }
    }
}

impl WorkloadModel for Periodic {
    fn hook(&mut self, call: u32, cx: &mut HookCx<'_>) -> HookAct {
        match self.calls.get(call as usize).copied() {
            Some(RtCall::PhaseEnd { row }) => {
                // As for cyclictest: a pass is counted from the warm-up's end itself.
                let end = PassEnd {
                    at: cx.at,
                    cpu: cx.cpu as u32,
                    freq_khz: cx.freq_khz,
                };
                self.phase_end(cx.me, row, cx.at >= cx.warmup, end);
                HookAct::Next
            }
            Some(RtCall::SetAffinity { set }) => self
                .affinity_change(cx.me, set)
                .map_or(HookAct::Next, HookAct::SetAffinity),
            Some(RtCall::Stamp(point)) => {
                self.stamp(cx.me, point, cx.at);
                HookAct::Next
            }
            Some(RtCall::Timer { .. }) | None => HookAct::Next,
        }
    }

    fn sleep(&mut self, call: u32, cx: &mut HookCx<'_>) -> SleepAct {
        match self.calls.get(call as usize).copied() {
            Some(RtCall::Timer { clock, period }) => self
                .timer(cx.me, clock, period, cx.now)
                .map_or(SleepAct::Return, SleepAct::Until),
            _ => SleepAct::Return,
        }
    }

    fn woke(&mut self, _call: u32, cx: &mut HookCx<'_>) {
        Periodic::woke(self, cx.me, cx.at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let mut d = UsDist::default();
        for v in 1..=100 {
            d.add(v);
        }
        assert_eq!(
            (d.percentile(50), d.percentile(99), d.max(), d.mean()),
            (50, 99, 100, 50)
        );
        assert_eq!(UsDist::default().percentile(99), 0);
    }

    #[test]
    fn set_thread_affinity_skips_the_set_it_asked_for_last() {
        let mut p = Periodic {
            masks: vec![CpuMask::full(4), CpuMask::single(4, 2)],
            curr_set: vec![0],
            acc: vec![PhaseAcc::default()],
            ..Periodic::default()
        };
        // The thread starts with the inherited set: asking for it makes no call.
        assert_eq!(p.affinity_change(0, 0), None);
        assert_eq!(p.affinity_change(0, 1), Some(CpuMask::single(4, 2)));
        assert_eq!(p.affinity_change(0, 1), None);
        assert_eq!(p.affinity_change(0, 0), Some(CpuMask::full(4)));
    }

    #[test]
    fn timer_follows_rt_app() {
        let mut p = Periodic {
            clocks: vec![PeriodicClock {
                next: None,
                relative: true,
            }],
            acc: vec![PhaseAcc::default()],
            rows: vec![PhaseRows::default()],
            cumulative_slack: false,
            ..Periodic::default()
        };
        // First use: the instant is one period after the start.
        assert_eq!(p.timer(0, 0, 16_000 * US, 2_000 * US), Some(16_000 * US));
        assert_eq!(p.acc[0].slack_us, 14_000);
        p.woke(0, 16_000 * US + 7_900);
        p.phase_end(0, 0, true, PassEnd::default());
        // 7.9 us late: rt-app's `lround` makes it 8.
        assert_eq!((p.rows[0].wu_lat.max(), p.rows[0].slack.max()), (8, 14_000));
        // A miss: no sleep, negative slack, the relative clock restarts from now.
        assert_eq!(p.timer(0, 0, 16_000 * US, 40_000 * US), None);
        assert_eq!(p.acc[0].slack_us, -8_000);
        assert_eq!(p.clocks[0].next, Some(40_000 * US));
        assert_eq!(round_us(-1_500), -2);
        assert_eq!(round_us(1_499), 1);
    }
}
