//! What `run --plot` and `compare --plot` draw: the run's own counters turned into the
//! plot data file of `fairsim-plot` (`plot-data.json` beside the SVGs, which `fairsim
//! plot` draws again).

use std::path::Path;

use fairsim_balance::{Features, Kernel};
use fairsim_engine::Outcome;
use fairsim_plot::data::{
    Bar, CpuGroup, DomainSeries, FrequencySeries, HdrBuckets, LatencyCdf, MeanChange, MetricBars,
    NewidleSeries as PlotSeries, PlotData, PolicyFrequency, Slice, SliceKind, Timeline,
};
use fairsim_trace::{BalanceKind, NewidleSeries, Trace, TraceConfig, TraceEvent};
use fairsim_workloads::run::RunSpec;
use hdrhistogram::Histogram;

use crate::compare_table::{mean_rows, summarise, MetricSamples};
use crate::error::CliError;

/// The timeline's window when `--trace-window` gives none: the first 2 ms of the
/// measurement window, which holds thousands of slices on a busy 224-CPU machine.
pub(crate) const DEFAULT_TIMELINE_NS: u64 = 2_000_000;

/// Buckets of the newidle series over the measurement window.
const SERIES_BUCKETS: u64 = 200;

/// What a run traces for `--plot` (and `--trace`): events over `window` (the timeline's
/// or the trace's), and the newidle series over the measurement window.
pub(crate) fn trace_config(
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
        pelt: false,
    })
}

/// The title line of a run's plots.
pub(crate) fn title(spec: &RunSpec) -> String {
    let n = spec.machine.nr_cpus();
    let work: Vec<String> = spec.workloads.iter().map(|w| w.canonical(n)).collect();
    format!("{} ({n} CPUs), {}", spec.machine.name, work.join(" + "))
}

/// What a feature set changes, for a legend: the debugfs writes that differ from its
/// kernel's defaults (`+ILB_FAST`, `NO_NI_RANDOM`), or `defaults`; prefixed with the
/// kernel when it is an era's, when nothing differs (so that `defaults` says whose), or
/// when `kernel` asks (the sides of a compare run different kernels).
pub(crate) fn features_label(f: Features, kernel_always: bool) -> String {
    let diff = f.diff_from_default();
    let kernel = f.kernel();
    let writes: Vec<String> = diff
        .iter()
        .map(|w| {
            if w.starts_with("NO_") {
                w.clone()
            } else {
                format!("+{w}")
            }
        })
        .collect();
    match (writes.is_empty(), kernel == Kernel::V6_12 && !kernel_always) {
        (true, _) => format!("{} defaults", kernel.name()),
        (false, true) => writes.join(" "),
        (false, false) => format!("{} {}", kernel.name(), writes.join(" ")),
    }
}

/// The labels of a `compare`'s two sides in its plots: `base: 6.12 defaults`,
/// `new: +ILB_FAST`; both name their kernel when the kernels differ.
pub(crate) fn side_labels(base: Features, new: Features) -> [String; 2] {
    let both = base.kernel() != new.kernel();
    [
        format!("base: {}", features_label(base, both)),
        format!("new: {}", features_label(new, both)),
    ]
}

/// The bucket widths of an HDR histogram, found by asking it: the width at its lowest
/// value, and the first power of two where buckets are wider.
fn hdr_buckets(h: &Histogram<u64>) -> Option<HdrBuckets> {
    let unit_ns = h.equivalent_range(h.low());
    let mut v = unit_ns.max(1);
    while v < (1 << 62) {
        if h.equivalent_range(v) > unit_ns {
            return Some(HdrBuckets {
                unit_ns,
                linear_to_ns: v,
            });
        }
        v *= 2;
    }
    None
}

/// A wakeup-latency histogram as CDF steps.
pub(crate) fn latency_cdf(label: &str, h: &Histogram<u64>) -> LatencyCdf {
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
        buckets: hdr_buckets(h),
    }
}

/// The per-CPU timeline of `trace` from its window's start to `end`: task slices from the
/// switch stream, balance and lock-spin slices from fairsim's own events.
pub(crate) fn timeline(trace: &Trace, end: u64) -> Timeline {
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
        groups: Vec::new(),
    }
}

/// The machine's CPUs by last-level cache (`cpu_llc_shared_mask`), in order of first CPU,
/// named `LLC N`: the rows of a timeline too large to draw per CPU.
pub(crate) fn llc_groups(spec: &RunSpec) -> Vec<CpuGroup> {
    let mut groups: Vec<CpuGroup> = Vec::new();
    let mut seen = vec![false; spec.machine.nr_cpus()];
    for (cpu, t) in spec.machine.cpus.iter().enumerate() {
        if seen[cpu] {
            continue;
        }
        // A CPU missing from its own mask (a machine file's mistake) still gets a group.
        let mut cpus: Vec<u32> = t
            .llc_siblings
            .iter()
            .filter(|&c| c < seen.len() && !seen[c])
            .map(|c| c as u32)
            .collect();
        if !cpus.contains(&(cpu as u32)) {
            cpus.push(cpu as u32);
            cpus.sort_unstable();
        }
        for &c in &cpus {
            seen[c as usize] = true;
        }
        groups.push(CpuGroup {
            name: format!("LLC {}", groups.len()),
            cpus,
        });
    }
    groups
}

/// The names of the domain levels, by index as `compare`'s `dN-` metrics count them
/// (`domains_of(cpu).nth(N)`): each CPU's domain names at that depth, joined with `/`
/// where CPUs differ (asymmetric machines). Empty when the domains cannot be built.
pub(crate) fn level_names(spec: &RunSpec) -> Vec<String> {
    let Ok(topo) = fairsim_topology::build_sched_domains(&spec.machine, spec.build) else {
        return Vec::new();
    };
    let mut names: Vec<Vec<&str>> = Vec::new();
    for cpu in 0..spec.machine.nr_cpus() {
        for (level, sd) in topo.domains_of(cpu).enumerate() {
            if names.len() <= level {
                names.push(Vec::new());
            }
            let name = topo.domain(sd).name;
            if !names[level].contains(&name) {
                names[level].push(name);
            }
        }
    }
    names.into_iter().map(|n| n.join("/")).collect()
}

/// A `compare` metric's name for the plot: `dN-...` becomes `dN NAME: ...`, naming the
/// level as `run`'s newidle plot does (`d1 MC: newidle-lb/s`).
pub(crate) fn plot_metric_name(name: &str, levels: &[String]) -> String {
    let Some(rest) = name.strip_prefix('d') else {
        return name.to_string();
    };
    let Some((index, metric)) = rest.split_once('-') else {
        return name.to_string();
    };
    match index.parse::<usize>().ok().and_then(|i| levels.get(i)) {
        Some(level) if index.bytes().all(|b| b.is_ascii_digit()) => {
            format!("d{index} {level}: {metric}")
        }
        _ => name.to_string(),
    }
}

/// The newidle series in the plot file's form, levels named `dN NAME`.
pub(crate) fn newidle(s: &NewidleSeries) -> PlotSeries {
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
pub(crate) fn run_plot(spec: &RunSpec, world: &Outcome, trace: Option<&Trace>) -> PlotData {
    let mut data = PlotData::new(title(spec));
    // A run without wakeups (one CPU-bound thread) has no latency to draw.
    let cdf = latency_cdf(
        &features_label(spec.config.params.features, false),
        &world.metrics().wakeup_latency,
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
        let mut t = timeline(trace, end);
        t.groups = llc_groups(spec);
        data.timeline = Some(t);
    }
    data.newidle = world.newidle_series().as_ref().map(newidle);
    data.frequency = frequency(world);
    data
}

/// Each cpufreq policy's frequency over the measurement window: the frequency when the
/// window opened, then every transition the run's timeline kept. `None` without cpufreq
/// or with an empty window.
pub(crate) fn frequency(world: &Outcome) -> Option<FrequencySeries> {
    let (rt, cf) = (world.cpufreq_rt()?, world.sched().cpufreq.as_ref()?);
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

/// `compare`'s metrics as bars (base, new), mean and spread over the seeds, each with
/// the mean's change and significance as the text table shows them ([`mean_rows`]), and
/// per-level metrics named by `levels` ([`level_names`]).
pub(crate) fn metric_bars(
    metrics: &[MetricSamples],
    base: &str,
    new: &str,
    levels: &[String],
) -> Vec<MetricBars> {
    let rows = mean_rows(metrics);
    metrics
        .iter()
        .zip(&rows)
        .map(|(m, row)| MetricBars {
            name: plot_metric_name(&m.name, levels),
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
            // A change that is not a number (a 0/0 mean) is left unsaid rather than drawn.
            change: row.change_pct().is_finite().then(|| MeanChange {
                mean: row.mean_label().to_string(),
                change_pct: row.change_pct(),
                significant: row.significant(),
            }),
        })
        .collect()
}

/// Writes `data` and its SVGs into `dir`; prints nothing (the caller lists the files).
pub(crate) fn write(dir: &Path, data: &PlotData) -> Result<Vec<std::path::PathBuf>, CliError> {
    let mut paths = fairsim_plot::write_all(data, dir)?;
    let file = dir.join("plot-data.json");
    fairsim_plot::write_data(data, &file)?;
    paths.push(file);
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_what_differs() {
        let defaults = Features::for_kernel(Kernel::V6_12);
        assert_eq!(features_label(defaults, false), "6.12 defaults");
        let new = Features::parse_for(Kernel::V6_12, "NO_NI_RANDOM,ILB_SNAPSHOT").unwrap();
        assert_eq!(features_label(new, false), "NO_NI_RANDOM +ILB_SNAPSHOT");
        assert_eq!(
            side_labels(defaults, new),
            ["base: 6.12 defaults", "new: NO_NI_RANDOM +ILB_SNAPSHOT"]
        );
        // An era's kernel is always named, and both sides name theirs when they differ.
        let era = Features::for_kernel(Kernel::V6_5);
        assert_eq!(
            side_labels(new, era),
            ["base: 6.12 NO_NI_RANDOM +ILB_SNAPSHOT", "new: 6.5 defaults"]
        );
    }

    #[test]
    fn level_metrics_are_named_by_level() {
        let levels = ["SMT".to_string(), "MC".to_string()];
        assert_eq!(
            plot_metric_name("d1-newidle-lb/s", &levels),
            "d1 MC: newidle-lb/s"
        );
        for name in ["d2-newidle-lb/s", "dx-y", "newidle-time-%", "d+1-x"] {
            assert_eq!(plot_metric_name(name, &levels), name);
        }
    }
}
