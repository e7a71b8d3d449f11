//! What the tracer keeps during a run: the records, each CPU's traced pid and idle
//! state, the newidle balances still open and the per-domain series. `tracing` holds the
//! `World` hooks that fill it; it lives apart so that `World`'s fields can name it without
//! depending on those hooks.

use fairsim_trace::{BalanceKind, Record, TraceEvent, RECORD_BYTES};

use crate::event::Tid;

/// A newidle balance at one level, open until the next level begins or the balance ends.
#[derive(Debug, Clone, Copy)]
pub(super) struct OpenBalance {
    pub(super) level: u32,
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) groups: u64,
    pub(super) pulled: u64,
}

/// The counters a balance of one domain grows: `lb_count`, `lb_sg_scan`, `lb_gained`.
pub(super) type Counts = [u64; 3];

/// Per domain level and bucket counts of newidle balances and groups scanned.
#[derive(Debug, Clone)]
pub(super) struct SeriesAcc {
    pub(super) start: u64,
    pub(super) bucket: u64,
    pub(super) balances: Vec<Vec<u64>>,
    pub(super) groups: Vec<Vec<u64>>,
}

impl SeriesAcc {
    pub(super) fn add(&mut self, level: usize, at: u64, balances: u64, groups: u64) {
        if at < self.start {
            return;
        }
        let b = ((at - self.start) / self.bucket) as usize;
        for v in [&mut self.balances[level], &mut self.groups[level]] {
            if v.len() <= b {
                v.resize(b + 1, 0);
            }
        }
        self.balances[level][b] += balances;
        self.groups[level][b] += groups;
    }
}

/// What the tracer keeps during a run.
#[derive(Debug, Clone)]
pub(crate) struct Recorder {
    pub(super) events: bool,
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) records: Vec<Record>,
    pub(super) max_records: usize,
    pub(super) overflow_at: Option<u64>,
    /// The pid each CPU runs, following the switches (the stopper included).
    pub(super) curr: Vec<u32>,
    /// The pid each CPU ran when the window opened.
    pub(super) initial: Vec<u32>,
    /// The idle state each CPU is in, as traced.
    pub(super) idle: Vec<Option<u32>>,
    pub(super) newidle: Vec<Option<OpenBalance>>,
    /// Newly-idle counters of each domain as last seen.
    pub(super) snap: Vec<Counts>,
    /// Each domain's level: its position in its CPU's chain.
    pub(super) level_of: Vec<u32>,
    pub(super) levels: Vec<String>,
    pub(super) series: Option<SeriesAcc>,
    /// pid of CPU 0's stopper (`migration/0`); CPU N's is this plus N.
    pub(super) stopper_base: u32,
    pub(super) stopper_used: Vec<bool>,
}

/// The pid the traces give engine task `t` (pids start at 1; 0 is the idle task).
pub fn pid_of(t: Tid) -> u32 {
    t as u32 + 1
}

impl Recorder {
    /// Whether an event at `ts` is recorded.
    pub(super) fn on(&self, ts: u64) -> bool {
        self.events && ts >= self.start && ts < self.end && self.overflow_at.is_none()
    }

    pub(super) fn push(&mut self, ts: u64, cpu: usize, event: TraceEvent) {
        if !self.on(ts) {
            return;
        }
        if self.records.len() >= self.max_records {
            self.overflow_at = Some(ts);
            return;
        }
        self.records.push(Record {
            ts,
            cpu: cpu as u32,
            event,
        });
    }

    /// Records kept so far.
    pub(super) fn len(&self) -> usize {
        self.records.len()
    }

    /// When the recorder ran out of its memory, if it did.
    pub(super) fn overflow_at(&self) -> Option<u64> {
        self.overflow_at
    }

    /// Holds the records to `bytes` of memory.
    pub(super) fn cap_memory(&mut self, bytes: u64) {
        self.max_records = usize::try_from(bytes / RECORD_BYTES).unwrap_or(usize::MAX);
    }

    pub(super) fn close_newidle(&mut self, cpu: usize) {
        if let Some(o) = self.newidle[cpu].take() {
            self.push(
                o.start,
                cpu,
                TraceEvent::Balance {
                    kind: BalanceKind::Newidle,
                    level: o.level,
                    groups: o.groups as u32,
                    pulled: o.pulled as u32,
                    dur: o.end.saturating_sub(o.start),
                },
            );
        }
    }
}
