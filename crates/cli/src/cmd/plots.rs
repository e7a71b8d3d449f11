//! What `run --plot` and `compare --plot` draw: the run's own counters turned into the
//! plot data file of `fairsim-plot` (`plot-data.json` beside the SVGs, which `fairsim
//! plot` draws again).

use std::path::Path;

use fairsim_engine::run::RunSpec;
use fairsim_engine::trace::{BalanceKind, NewidleSeries, Trace, TraceConfig, TraceEvent};
use fairsim_engine::World;
use fairsim_plot::data::{
    Bar, DomainSeries, FrequencySeries, LatencyCdf, MetricBars, NewidleSeries as PlotSeries,
    PlotData, PolicyFrequency, Slice, SliceKind, Timeline,
};
use hdrhistogram::Histogram;

use crate::compare_table::{summarise, MetricSamples};
use crate::error::CliError;

/// The timeline's window when `--trace-window` gives none: the first 2 ms of the
/// measurement window, which holds thousands of slices on a busy 224-CPU machine.
pub const DEFAULT_TIMELINE_NS: u64 = 2_000_000;

/// Buckets of the newidle series over the measurement window.
const SERIES_BUCKETS: u64 = 200;

/// What a run traces for `--plot` (and `--trace`): events over `window` (the timeline's
/// or the trace's), and the newidle series over the measurement window.
pub fn trace_config(
    spec: &RunSpec,
    window: Option<(u64, u64)>,
    trace: bool,
    plot: bool,
) -> Option<TraceConfig> {
    if !trace && !plot {
        return None;
    }
    let start = spec.config.warmup.min(spec.config.duration);
    let window = match window {
        Some(w) => Some(w),
        // A trace without a window covers the measurement window.
        None if trace => None,
        None => Some((start, start.saturating_add(DEFAULT_TIMELINE_NS))),
    };
    let len = spec.config.duration - start;
    Some(TraceConfig {
        window,
        events: true,
        series_bucket: plot.then(|| (len / SERIES_BUCKETS).max(100_000)),
    })
}

/// The title line of a run's plots.
pub fn title(spec: &RunSpec) -> String {
    let n = spec.machine.nr_cpus();
    let work: Vec<String> = spec.workloads.iter().map(|w| w.canonical(n)).collect();
    format!("{} ({n} CPUs), {}", spec.machine.name, work.join(" + "))
}

/// A wakeup-latency histogram as CDF steps.
pub fn latency_cdf(label: &str, h: &Histogram<u64>) -> LatencyCdf {
    let mut points = Vec::new();
    let mut total = 0u64;
    for v in h.iter_recorded() {
        total += v.count_at_value();
        points.push((h.highest_equivalent(v.value_iterated_to()), total));
    }
    LatencyCdf {
        label: label.to_string(),
        total,
        points,
    }
}

/// The per-CPU timeline of `trace` from its window's start to `end`: task slices from the
/// switch stream, balance and lock-spin slices from fairsim's own events.
pub fn timeline(trace: &Trace, end: u64) -> Timeline {
    let start = trace.window.0;
    let n = trace.cpus as usize;
    let mut slices = Vec::new();
    let mut curr: Vec<(u32, u64)> = trace.initial.iter().map(|&p| (p, start)).collect();
    let push = |slices: &mut Vec<Slice>, cpu: usize, a: u64, b: u64, kind, pid| {
        let (a, b) = (a.max(start), b.min(end));
        if b > a {
            slices.push(Slice {
                cpu: cpu as u32,
                start_ns: a,
                end_ns: b,
                kind,
                pid,
            });
        }
    };
    for r in trace.records.iter().take_while(|r| r.ts < end) {
        let c = r.cpu as usize;
        match &r.event {
            TraceEvent::Switch { prev, next, .. } => {
                let (pid, since) = curr[c];
                if pid != 0 && pid == *prev {
                    push(&mut slices, c, since, r.ts, SliceKind::Task, pid);
                }
                curr[c] = (*next, r.ts);
            }
            TraceEvent::Balance { kind, dur, .. } => {
                let k = if *kind == BalanceKind::Newidle {
                    SliceKind::Newidle
                } else {
                    SliceKind::Balance
                };
                push(&mut slices, c, r.ts, r.ts + dur, k, 0);
            }
            TraceEvent::LockSpin { dur, .. } => {
                push(&mut slices, c, r.ts, r.ts + dur, SliceKind::LockSpin, 0);
            }
            _ => {}
        }
    }
    for (c, &(pid, since)) in curr.iter().enumerate().take(n) {
        if pid != 0 {
            push(&mut slices, c, since, end, SliceKind::Task, pid);
        }
    }
    slices.sort_by_key(|s| (s.cpu, s.start_ns, s.end_ns));
    let mut pids: Vec<u32> = slices
        .iter()
        .filter(|s| s.kind == SliceKind::Task)
        .map(|s| s.pid)
        .collect();
    pids.sort_unstable();
    pids.dedup();
    let tasks = pids.into_iter().map(|p| (p, trace.comm(p, 0))).collect();
    Timeline {
        start_ns: start,
        end_ns: end,
        cpus: trace.cpus,
        tasks,
        slices,
    }
}

/// The newidle series in the plot file's form, levels named `dN NAME`.
pub fn newidle(s: &NewidleSeries) -> PlotSeries {
    PlotSeries {
        start_ns: s.start_ns,
        bucket_ns: s.bucket_ns,
        domains: s
            .levels
            .iter()
            .enumerate()
            .map(|(i, name)| DomainSeries {
                name: format!("d{i} {name}"),
                balances: s.balances[i].clone(),
                groups: s.groups[i].clone(),
            })
            .collect(),
    }
}

/// The plot data of one run, its timeline from the run's trace.
pub fn run_plot(spec: &RunSpec, world: &World, trace: Option<&Trace>) -> PlotData {
    let mut data = PlotData::new(title(spec));
    // A run without wakeups (one CPU-bound thread) has no latency to draw.
    let cdf = latency_cdf(
        &spec.config.params.features.to_string(),
        &world.metrics.wakeup_latency,
    );
    if cdf.total > 0 {
        data.latency.push(cdf);
    }
    if let Some(trace) = trace {
        // A trace over the whole run draws its first milliseconds only.
        let (a, b) = trace.window;
        let end = if b - a > DEFAULT_TIMELINE_NS * 5 {
            a + DEFAULT_TIMELINE_NS
        } else {
            b
        };
        data.timeline = Some(timeline(trace, end));
    }
    data.newidle = world.newidle_series().as_ref().map(newidle);
    data.frequency = frequency(world);
    data
}

/// Each cpufreq policy's frequency over the measurement window: the frequency when the
/// window opened, then every transition the run's timeline kept. `None` without cpufreq
/// or with an empty window.
pub fn frequency(world: &World) -> Option<FrequencySeries> {
    let (rt, cf) = (world.cpufreq_rt()?, world.sched.cpufreq.as_ref()?);
    let (start_ns, end_ns) = (world.window_start(), world.now().0);
    if end_ns <= start_ns {
        return None;
    }
    let policies = cf
        .policies
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut steps = vec![(start_ns, rt.window_khz[i])];
            steps.extend(
                rt.timeline
                    .iter()
                    .filter(|c| c.policy as usize == i && c.at >= start_ns && c.at < end_ns)
                    .map(|c| (c.at, c.khz)),
            );
            PolicyFrequency {
                name: format!("policy{} (CPUs {})", p.cpus.first().unwrap_or(i), p.cpus),
                steps,
            }
        })
        .collect();
    Some(FrequencySeries {
        start_ns,
        end_ns,
        policies,
    })
}

/// `compare`'s metrics as bars (base, new), mean and spread over the seeds.
pub fn metric_bars(metrics: &[MetricSamples], base: &str, new: &str) -> Vec<MetricBars> {
    metrics
        .iter()
        .map(|m| MetricBars {
            name: m.name.clone(),
            higher_better: m.higher_better,
            sets: [(base, &m.base), (new, &m.new)]
                .into_iter()
                .map(|(label, v)| {
                    let s = summarise(v);
                    Bar {
                        label: label.to_string(),
                        mean: s.amean,
                        stddev: s.stddev,
                        n: s.n as u32,
                    }
                })
                .collect(),
        })
        .collect()
}

/// Writes `data` and its SVGs into `dir`; prints nothing (the caller lists the files).
pub fn write(dir: &Path, data: &PlotData) -> Result<Vec<std::path::PathBuf>, CliError> {
    let mut paths = fairsim_plot::write_all(data, dir)?;
    let file = dir.join("plot-data.json");
    fairsim_plot::write_data(data, &file)?;
    paths.push(file);
    Ok(paths)
}
