//! The plot data file: what `run --plot` and `compare --plot` save beside their SVGs
//! (`plot-data.json`) and what `fairsim plot` reads back to draw them again.
//!
//! The engine fills these structures from a run's own counters; this crate only draws
//! them. All times are integer nanoseconds of emulated time.

use serde::{Deserialize, Serialize};

/// The `format` field of every plot data file.
pub const FORMAT: &str = "fairsim-plot-data";
/// The version this crate writes and reads.
pub const VERSION: u32 = 1;

/// Everything one `run` or `compare` can plot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlotData {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// What was run: machine, workload, features (the plots' titles start with it).
    pub title: String,
    /// The wakeup-latency distribution, one series per feature set (a `run` has one).
    pub latency: Vec<LatencyCdf>,
    /// The per-CPU timeline of a window of the run (`run` only).
    pub timeline: Option<Timeline>,
    /// Newidle balances and groups scanned over time, per domain level (`run` only).
    pub newidle: Option<NewidleSeries>,
    /// `compare`'s metrics, each as one bar per feature set with its spread.
    pub metrics: Vec<MetricBars>,
    /// Each cpufreq policy's frequency over the measurement window (`run` on a machine
    /// with cpufreq only; absent from the file otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency: Option<FrequencySeries>,
}

impl PlotData {
    /// An empty plot data set with `title`.
    pub fn new(title: impl Into<String>) -> PlotData {
        PlotData {
            format: FORMAT.into(),
            version: VERSION,
            title: title.into(),
            latency: Vec::new(),
            timeline: None,
            newidle: None,
            metrics: Vec::new(),
            frequency: None,
        }
    }
}

/// A cumulative distribution of wakeup latencies (from `try_to_wake_up` to getting the
/// CPU), as steps: `count` wakeups took at most `ns`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyCdf {
    /// The feature set (or run) the series belongs to.
    pub label: String,
    /// Wakeups measured in all.
    pub total: u64,
    /// Increasing `(latency ns, wakeups at or below it)` steps; the last count is `total`.
    pub points: Vec<(u64, u64)>,
    /// The histogram's bucket widths, which the plot states (absent from files written
    /// before they were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buckets: Option<HdrBuckets>,
}

/// The bucket widths of an HDR histogram: `unit_ns` wide up to `linear_to_ns`, then
/// doubling with every doubling of the value, so at most `2 * unit_ns / linear_to_ns`
/// of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HdrBuckets {
    /// The narrowest bucket's width, ns.
    pub unit_ns: u64,
    /// Where buckets start to widen, ns.
    pub linear_to_ns: u64,
}

/// What a CPU was doing during one slice of the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SliceKind {
    /// A task ran (its `pid` says which).
    Task,
    /// `sched_balance_newidle` inside `schedule()`.
    Newidle,
    /// A periodic (softirq) or nohz idle balance.
    Balance,
    /// Spinning on another CPU's runqueue lock.
    LockSpin,
}

/// One slice of a CPU's timeline; the time between slices is idle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slice {
    /// The CPU.
    pub cpu: u32,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns (greater than the start).
    pub end_ns: u64,
    /// What ran.
    pub kind: SliceKind,
    /// The task for [`SliceKind::Task`], 0 otherwise.
    pub pid: u32,
}

/// The per-CPU timeline of `[start_ns, end_ns)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeline {
    /// Window start, ns.
    pub start_ns: u64,
    /// Window end, ns.
    pub end_ns: u64,
    /// CPUs of the machine (rows `0..cpus`).
    pub cpus: u32,
    /// `(pid, comm)` of every task that appears in a slice, by increasing pid.
    pub tasks: Vec<(u32, String)>,
    /// Slices, by CPU then start.
    pub slices: Vec<Slice>,
    /// The machine's CPUs by last-level cache, in order of first CPU: a timeline with
    /// more CPUs than rows fit is drawn per group (absent from older files, which are
    /// then drawn per run of consecutive CPUs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<CpuGroup>,
}

/// A set of CPUs the timeline may draw as one: a last-level cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuGroup {
    /// Its name (`LLC 0`).
    pub name: String,
    /// Its CPUs, increasing.
    pub cpus: Vec<u32>,
}

/// Per-domain newidle balancing over time, in buckets of `bucket_ns` from `start_ns`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewidleSeries {
    /// Start of the first bucket, ns.
    pub start_ns: u64,
    /// Bucket width, ns.
    pub bucket_ns: u64,
    /// One series per domain level, lowest first.
    pub domains: Vec<DomainSeries>,
}

/// One domain level's newidle balances and groups scanned per bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DomainSeries {
    /// The level's name with its index (`d0 SMT`, `d1 MC`, `d2 NUMA`).
    pub name: String,
    /// `sched_balance_rq` calls from newidle at this level per bucket (`lb_count`).
    pub balances: Vec<u64>,
    /// Groups whose statistics those balances read per bucket (`lb_sg_scan`).
    pub groups: Vec<u64>,
}

/// One of `compare`'s metrics: a bar per feature set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricBars {
    /// The metric as `compare` names it (`Wakeup-99.0th-us`, `newidle-time-%`).
    pub name: String,
    /// Higher is better (throughput); else lower is better.
    pub higher_better: bool,
    /// One bar per feature set, baseline first.
    pub sets: Vec<Bar>,
    /// What `compare`'s text table says of the mean's change (absent from older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<MeanChange>,
}

/// The mean's row of `compare`'s text table: the change of the new side against the
/// baseline, and whether the table stars it as significant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeanChange {
    /// The mean the table compares: `Amean` (lower is better) or `Hmean` (higher).
    pub mean: String,
    /// The change in percent, positive meaning better.
    pub change_pct: f64,
    /// The table stars the change (Welch's t-test at 95%).
    pub significant: bool,
}

/// A bar: the mean of one side's samples with their standard deviation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bar {
    /// The feature set.
    pub label: String,
    /// Mean of the samples.
    pub mean: f64,
    /// Sample standard deviation (n - 1), 0 for one sample.
    pub stddev: f64,
    /// Samples (seeds).
    pub n: u32,
}

/// Each cpufreq policy's frequency over `[start_ns, end_ns)`, as steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrequencySeries {
    /// Window start, ns.
    pub start_ns: u64,
    /// Window end, ns.
    pub end_ns: u64,
    /// One series per policy, in order of first CPU.
    pub policies: Vec<PolicyFrequency>,
}

/// One policy's frequency: `(ns, kHz)` steps, the first at the window's start, each
/// holding until the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyFrequency {
    /// The policy with its CPUs (`policy0 (CPUs 0-3)`).
    pub name: String,
    /// Increasing times, frequencies in kHz.
    pub steps: Vec<(u64, u32)>,
}
