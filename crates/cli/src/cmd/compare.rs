//! `fairsim compare`: one scenario under two feature sets, several seeds each (run in
//! parallel), printed in mmtests' compare-kernels layout: the workload's metrics, the time
//! spent in newidle balancing, and the schedstat ratios seed 000 reads (groups scanned per
//! newidle balance and the balance success ratio, per domain level).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use fairsim_balance::{Features, Kernel};
use fairsim_workloads::run::RunSpec;
use rayon::prelude::*;

use super::compare_until;
use super::outputs::Outputs;
use super::progress::{self, Batch, Mode};
use super::run::{print_note, resolve_spec, RunArgs};
use crate::compare_table::{mean_rows, render_compare, render_csv, rows_json, MetricSamples};
use crate::error::{invalid, CliError};

/// Arguments of `fairsim compare`.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Run the same scenario with a baseline and a new feature set, several seeds \
each, and print the mmtests compare-kernels table: Min, mean (Amean when lower is better, \
Hmean when higher is better), Stddev, CoeffVar and Max per metric, with the change against the \
baseline in percent (positive = better) and the mean starred when the difference is \
significant at 95% (Welch's t-test). Metrics: the workload's (schbench percentiles, hackbench \
time, sysbench time, nanosleep loops per second), the share of CPU time in newidle balance, and \
for each domain level the newidle groups scanned per balance (lb_sg_scan / lb_count) and success \
ratio ((lb_count - lb_balanced) / lb_count). A feature set using ILB_SNAPSHOT, ILB_UTIL or \
ILB_FAST also gets seed 000's sched_domain_shared on every non-NUMA domain (patch 1/7). \
--kernel runs both sides on one kernel; --base-kernel and --new-kernel give each side its own, \
each side's feature list then written to its kernel's features file.

--json FILE and --csv FILE write the table for scripts: one row per metric, the text table's \
mean row with each side's spread. Columns (CSV header, and each JSON row's keys): metric; \
better (higher or lower); mean (Amean, or Hmean when higher is better); base_mean; new_mean; \
change_pct (positive = better, as in the table); significant (true where the table stars the \
mean); base_stddev; new_stddev; base_samples and new_samples (the seeds that gave the metric). \
The JSON document also names the machine, the workloads, each side's features, kernel and \
own sysctl and debugfs writes, the seeds asked for and the seeds in the table.

At a terminal a progress line counts the finished runs (seeds x 2 sides) and estimates the \
time left; --progress prints it as plain lines when stderr is piped. Ctrl-C or SIGTERM stops \
the runs under way and prints the table of the seeds that finished on both sides (and its \
--json, --csv and --plot), says 'interrupted: table from N of M seeds' on stderr and exits \
with status 130; a second Ctrl-C exits at once. Every output path is checked before the \
first run.

--until METRIC:RULE stops adding seeds once the answer is known, --seeds being the cap: \
METRIC is a row of the table (e.g. Wakeup-99.0th-us, d1-newidle-sg-scan/lb) and RULE is \
'significant' (or 'significant<ALPHA'; default alpha 0.05): the difference of the means is \
significant under a group-sequential Welch t-test, valid although it is checked after every \
seed (Lan-DeMets alpha spending of the O'Brien-Fleming type over the seed cap, each look \
spending what the function grew by since the last), or 'ci<N%' ('ci<N'): the 95% confidence \
interval of the difference is within +/-N% of the base mean (+/-N in the metric's units). \
The rule is checked from --min-seeds seeds on, after each seed in seed order, while the \
seeds run on every core; seeds started past the stop point are discarded, so the stop point \
and every byte of output are the same on any number of cores. The header and --json say \
how many seeds ran and why it stopped.",
    mut_arg("json", |a| a
        .help("Write the comparison table as JSON to FILE (one row per metric; see the columns above)")
        .long_help("Write the comparison table as JSON to FILE: one row per metric, with the \
columns --csv has (see above) as keys, and the machine, workloads, sides and seeds."))
)]
pub(crate) struct CompareArgs {
    #[command(flatten)]
    run: RunArgs,

    /// Features of the baseline, as for `--features` (e.g. `ILB_SNAPSHOT,NO_NI_RANDOM`).
    #[arg(long, value_name = "LIST", default_value = "")]
    base: String,

    /// Features of the new side (e.g. `ILB_SNAPSHOT,ILB_FAST,NO_NI_RANDOM`).
    #[arg(long, value_name = "LIST")]
    new: String,

    /// The baseline's kernel, as --kernel takes it (default: --kernel's, the scenario's,
    /// or 6.12); --base is written to its features file.
    #[arg(long, value_name = "VERSION")]
    base_kernel: Option<String>,

    /// The new side's kernel, as --kernel takes it (default: --kernel's, the scenario's,
    /// or 6.12); --new is written to its features file.
    #[arg(long, value_name = "VERSION")]
    new_kernel: Option<String>,

    /// A sysctl write for the baseline only, repeatable, as --sysctl takes it, after
    /// the --sysctl and --debugfs writes both sides get.
    #[arg(long, value_name = "kernel.sched_NAME=V")]
    base_sysctl: Vec<String>,

    /// A sysctl write for the new side only, repeatable (see --base-sysctl).
    #[arg(long, value_name = "kernel.sched_NAME=V")]
    new_sysctl: Vec<String>,

    /// A debugfs write for the baseline only, repeatable, as --debugfs takes it, after
    /// the writes both sides get.
    #[arg(long, value_name = "NAME=V")]
    base_debugfs: Vec<String>,

    /// A debugfs write for the new side only, repeatable (see --base-debugfs), e.g.
    /// `--new-debugfs migration_cost_ns=0 --new ''` to compare a tunable alone.
    #[arg(long, value_name = "NAME=V")]
    new_debugfs: Vec<String>,

    /// Seeds per side (the run's seed, then seed+1, ...).
    #[arg(long, value_name = "N", default_value_t = 5)]
    seeds: u32,

    /// Read the schedstat ratios of this CPU only (seed 000 read cpu8); all CPUs summed
    /// by default.
    #[arg(long, value_name = "N")]
    cpu: Option<usize>,

    /// Stop adding seeds once METRIC's difference is significant (`METRIC:significant`,
    /// `METRIC:significant<0.01`) or its 95% CI is narrow enough (`METRIC:ci<5%` of the
    /// base mean, `METRIC:ci<0.5` in its units); --seeds is the cap.
    #[arg(long, value_name = "METRIC:RULE")]
    until: Option<String>,

    /// With --until, the seeds run before the rule is first checked (2 to --seeds; default 5: fewer give
    /// spreads that are often far too small by chance).
    #[arg(long, value_name = "N")]
    min_seeds: Option<u32>,

    /// Write the comparison table as CSV to FILE: a header line, then one line per metric
    /// (columns: see above).
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
}

/// A side's tunables: the writes both sides get (--sysctl, --debugfs, the scenario's),
/// then the side's own (--base-sysctl, --base-debugfs or the new side's), checked against
/// the side's kernel.
fn side_tunables(
    args: &CompareArgs,
    side: usize,
    kernel: Kernel,
    spec: &RunSpec,
) -> Result<fairsim_balance::Tunables, CliError> {
    use fairsim_balance::TunablePlace;
    let mut t = spec.config.params.tunables;
    let (label, sysctls, debugfs) = if side == 0 {
        ("base", &args.base_sysctl, &args.base_debugfs)
    } else {
        ("new", &args.new_sysctl, &args.new_debugfs)
    };
    for (place, writes) in [
        (TunablePlace::Sysctl, sysctls),
        (TunablePlace::Debugfs, debugfs),
    ] {
        for w in writes {
            t.write(kernel, place, w).map_err(|e| {
                // The side's own options, in the message and in what it allows.
                CliError::msg(
                    e.to_string()
                        .replace("--sysctl", &format!("--{label}-sysctl"))
                        .replace("--debugfs", &format!("--{label}-debugfs")),
                )
            })?;
        }
    }
    Ok(t)
}

/// Named metric values of one run: (name, higher is better, value), from the output
/// crate's metrics tables ([`fairsim_output::metrics`]).
pub(crate) use fairsim_output::metrics::RunMetrics;

/// One run's metrics and its wakeup-latency histogram (for `--plot`'s CDF).
type RunOutcome = (RunMetrics, hdrhistogram::Histogram<u64>);

/// Runs job `job` of a compare, showing its progress in `batch`; `None` when Ctrl-C
/// stopped it (or came before it started).
fn run_one(
    spec: &RunSpec,
    cpu: Option<usize>,
    job: usize,
    batch: &Batch,
) -> Result<Option<RunOutcome>, CliError> {
    let Some(result) = progress::run_batch_job(spec, batch, job)? else {
        return Ok(None);
    };
    let m = fairsim_output::metrics::run_metrics(spec, &result, cpu);
    Ok(Some((m, result.outcome.metrics().wakeup_latency.clone())))
}

/// Runs `fairsim compare`.
pub(crate) fn run(args: &CompareArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if args.seeds == 0 || args.seeds > 1000 {
        return Err(invalid("--seeds", args.seeds, "1 to 1000"));
    }
    let until = args
        .until
        .as_deref()
        .map(compare_until::parse)
        .transpose()?;
    let min_seeds = compare_until::min_seeds(
        until.as_ref(),
        args.min_seeds,
        args.seeds,
        compare_until::COMPARE_SEEDS,
    )?;
    let parse_kernel = |field: &str, text: &Option<String>| {
        text.as_ref()
            .map(|t| {
                Kernel::parse(t)
                    .map_err(|e| CliError::msg(e.to_string().replacen("--kernel", field, 1)))
            })
            .transpose()
    };
    let base_kernel = parse_kernel("--base-kernel", &args.base_kernel)?;
    let new_kernel = parse_kernel("--new-kernel", &args.new_kernel)?;
    if args.run.kernel.is_some() && (base_kernel.is_some() || new_kernel.is_some()) {
        let other = if base_kernel.is_some() {
            "--base-kernel"
        } else {
            "--new-kernel"
        };
        return Err(CliError::msg(format!(
            "--kernel: not available with {other}; allowed: --kernel for both sides, or --base-kernel and --new-kernel for each"
        )));
    }
    // Each side resolved with its own kernel (the util_est form, schedstat version and
    // governors allowed depend on it); without per-side kernels, once for both, as before.
    let spec = resolve_spec(&args.run, base_kernel, &mut print_note)?;
    let new_spec = if base_kernel.is_some() || new_kernel.is_some() {
        resolve_spec(&args.run, new_kernel, &mut |_| {})?
    } else {
        spec.clone()
    };
    let kernels = [
        spec.config.params.features.kernel(),
        new_spec.config.params.features.kernel(),
    ];
    if let Some(c) = args.cpu {
        if c >= spec.machine.nr_cpus() {
            return Err(invalid(
                "--cpu",
                c,
                &format!("0 to {}", spec.machine.nr_cpus() - 1),
            ));
        }
    }
    if let Some(u) = &until {
        let depth = super::plots::level_names(&spec).len();
        let groups = fairsim_workloads::run::resolve_cgroups(&spec)?;
        let names = fairsim_output::metrics::metric_names(
            spec.workloads.iter().map(|w| w.name()),
            depth,
            groups.all().filter(|g| g.cpu).map(|g| g.path.as_str()),
        );
        compare_until::check_metric(u, &names)?;
    }
    let sides = [("base", &args.base, &spec), ("new", &args.new, &new_spec)];
    let mut jobs: Vec<(usize, RunSpec)> = Vec::new();
    for (side, (label, feats, side_spec)) in sides.iter().enumerate() {
        let features = Features::parse_for(kernels[side], feats).map_err(|e| {
            CliError::msg(
                e.to_string()
                    .replacen("--features", &format!("--{label}"), 1),
            )
        })?;
        let tunables = side_tunables(args, side, kernels[side], side_spec)?;
        for k in 0..args.seeds {
            let mut s = (*side_spec).clone();
            s.config.params.features = features;
            s.config.params.tunables = tunables;
            s.config.seed = spec.config.seed.checked_add(u64::from(k)).ok_or_else(|| {
                invalid(
                    "--seed",
                    spec.config.seed,
                    &format!(
                        "at most {} with --seeds {} (the sides run seed, seed+1, ...)",
                        u64::MAX - u64::from(args.seeds - 1),
                        args.seeds
                    ),
                )
            })?;
            s.build.shared_all_non_numa |= features.shares_all_non_numa();
            jobs.push((side, s));
        }
    }
    // Every output is checked before the first run, so that a typo costs no run.
    let mut outputs = Outputs::new();
    outputs
        .dir("--plot", args.run.plot.as_deref())
        .file("--json", args.run.json.as_deref())
        .file("--csv", args.csv.as_deref());
    super::run::add_inputs(&mut outputs, &args.run, &spec);
    outputs.check()?;
    progress::watch_interrupts();
    let hook = progress::interrupt_after()?;
    let seeds = args.seeds as usize;
    let batch = Batch::new(
        "compare",
        "runs",
        jobs.len(),
        Mode::detect(args.run.progress),
    );
    // Runs finished per seed (both sides make 2), and the seeds finished on both sides.
    let finished: Mutex<(Vec<u8>, usize)> = Mutex::new((vec![0; seeds], 0));
    let run_job = |job: usize| -> Result<Option<RunOutcome>, CliError> {
        let (side, s) = &jobs[job];
        let r = run_one(s, args.cpu, job, &batch);
        if let Ok(Some(_)) = &r {
            let k = job % seeds;
            batch.finished(job, &format!("{} seed {}", SIDES[*side], s.config.seed));
            if let Ok(mut f) = finished.lock() {
                f.0[k] += 1;
                if f.0[k] == 2 {
                    f.1 += 1;
                    progress::maybe_interrupt(hook, f.1);
                }
            }
        }
        r
    };
    // Each run is single-threaded and deterministic; runs go in parallel and their results
    // are put back in job order, so the table does not depend on thread timing. With
    // --until they go seed by seed on as many threads, and the rule is checked in seed
    // order, so the stop point does not depend on it either.
    let (results, stop): (Vec<Result<Option<RunOutcome>, CliError>>, _) = match &until {
        None => (
            jobs.par_iter()
                .enumerate()
                .map(|(job, _)| run_job(job))
                .collect(),
            None,
        ),
        Some(u) => {
            let value = |o: &RunOutcome| {
                o.0.iter()
                    .find(|(name, _, _)| *name == u.metric)
                    .map(|(_, _, v)| *v)
            };
            let threads = rayon::current_num_threads();
            let (r, stop) =
                compare_until::run_until(u, seeds, min_seeds, threads, &run_job, &value);
            (r, Some(stop))
        }
    };
    batch.finish();
    let mut outcomes: Vec<Option<RunOutcome>> = Vec::with_capacity(results.len());
    for r in results {
        outcomes.push(r?);
    }
    // A seed is in the table when both its runs finished; an interrupt leaves the rest out,
    // and so does --until's stop point.
    let table_seeds = stop.as_ref().map_or(seeds, |s| s.seeds_run);
    let complete: Vec<bool> = (0..seeds)
        .map(|k| k < table_seeds && outcomes[k].is_some() && outcomes[seeds + k].is_some())
        .collect();
    let used = complete.iter().filter(|&&c| c).count();
    let interrupted = used < table_seeds;
    if used == 0 {
        progress::exit_interrupted(
            out,
            &format!("no seed finished on both sides of {seeds}; nothing written"),
        );
    }
    let mut metrics: Vec<MetricSamples> = Vec::new();
    // Each side's wakeup latencies over all its seeds, for --plot's CDF.
    let mut latency: Vec<Option<hdrhistogram::Histogram<u64>>> = vec![None, None];
    for (job, ((side, _), r)) in jobs.iter().zip(outcomes).enumerate() {
        let Some((run_metrics, hist)) = r.filter(|_| complete[job % seeds]) else {
            continue;
        };
        match &mut latency[*side] {
            Some(h) => h.add(&hist).map_err(|e| {
                CliError::internal(format!("merging the wakeup-latency histograms: {e}"))
            })?,
            slot => *slot = Some(hist),
        }
        for (name, higher, v) in run_metrics {
            let idx = match metrics.iter().position(|m| m.name == name) {
                Some(i) => i,
                None => {
                    metrics.push(MetricSamples {
                        name: name.clone(),
                        higher_better: higher,
                        base: Vec::new(),
                        new: Vec::new(),
                    });
                    metrics.len() - 1
                }
            };
            if *side == 0 {
                metrics[idx].base.push(v);
            } else {
                metrics[idx].new.push(v);
            }
        }
    }
    // An interrupted compare says in its header how many seeds its table holds.
    let seeds_text = if interrupted {
        format!("{used} of {seeds} seeds per side (interrupted)")
    } else if used < seeds {
        format!("{used} of {seeds} seeds per side")
    } else {
        format!("{seeds} seeds per side")
    };
    writeln!(
        out,
        "fairsim compare: {} ({} CPUs), {seeds_text}, {}",
        spec.machine.name,
        spec.machine.nr_cpus(),
        spec.workloads
            .iter()
            .map(|w| w.canonical(spec.machine.nr_cpus()))
            .collect::<Vec<_>>()
            .join(" + ")
    )?;
    if let (Some(u), Some(stop)) = (&until, &stop) {
        writeln!(
            out,
            "until {}:{}: stopped after {used} of {seeds} seeds: {}",
            u.metric, u.rule_text, stop.message
        )?;
    }
    // The kernels are named when a side runs another than 6.12; both 6.12 reads as it
    // always has.
    let named = kernels.iter().any(|&k| k != Kernel::V6_12);
    let on = |k: Kernel| {
        if named {
            format!(" on Linux {} (--kernel {})", k.release(), k.name())
        } else {
            String::new()
        }
    };
    writeln!(
        out,
        "base: {}{}",
        side_label(&args.base, &args.base_sysctl, &args.base_debugfs),
        on(kernels[0])
    )?;
    writeln!(
        out,
        "new:  {}{}",
        side_label(&args.new, &args.new_sysctl, &args.new_debugfs),
        on(kernels[1])
    )?;
    // The per-level rows are keyed `dN-` (stable names for scripts and sweeps); this line
    // names each level as `run` and the plots do.
    let levels = super::plots::level_names(&spec);
    if !levels.is_empty() {
        let named: Vec<String> = levels
            .iter()
            .enumerate()
            .map(|(i, n)| format!("d{i} {n}"))
            .collect();
        writeln!(out, "domain levels: {}", named.join(", "))?;
    }
    writeln!(
        out,
        "noise: {}; measured window [{}, {})\n",
        spec.config.noise.describe(),
        fairsim_des::time::format_duration(spec.config.warmup),
        fairsim_des::time::format_duration(spec.config.duration)
    )?;
    // Columns carry their kernels when the sides differ in it.
    let columns = if kernels[0] == kernels[1] {
        ["base".to_string(), "new".to_string()]
    } else {
        [
            format!("base ({})", kernels[0].name()),
            format!("new ({})", kernels[1].name()),
        ]
    };
    out.write_all(render_compare(&metrics, &columns[0], &columns[1]).as_bytes())?;
    if let Some(dir) = &args.run.plot {
        // Legends name what differs from each side's defaults; per-level metrics are
        // named by level (`d1 MC`), as run's plots name them.
        let labels = super::plots::side_labels(
            jobs[0].1.config.params.features,
            jobs[seeds].1.config.params.features,
        );
        let mut data = fairsim_plot::PlotData::new(super::plots::title(&spec));
        for (l, h) in labels.iter().zip(&latency) {
            // A side without wakeups has no latency to draw.
            if let Some(cdf) = h.as_ref().map(|h| super::plots::latency_cdf(l, h)) {
                if cdf.total > 0 {
                    data.latency.push(cdf);
                }
            }
        }
        data.metrics = super::plots::metric_bars(&metrics, &labels[0], &labels[1], &levels);
        for p in super::plots::write(dir, &data)? {
            eprintln!("fairsim: wrote {}", p.display());
        }
    }
    if args.run.json.is_some() || args.csv.is_some() {
        let rows = mean_rows(&metrics);
        if let Some(path) = &args.csv {
            super::run::write_file(path, "--csv", &render_csv(&rows))?;
        }
        if let Some(path) = &args.run.json {
            // A side's own tunable writes sit beside its features, so that sides that
            // differ only in tunables stay apart in the document.
            let side = |feats: &str, k: Kernel, sysctl: &[String], debugfs: &[String]| {
                serde_json::json!({
                    "features": feats,
                    "kernel": k.name(),
                    "sysctl": sysctl,
                    "debugfs": debugfs,
                })
            };
            let mut doc = serde_json::json!({
                "machine": spec.machine.name,
                "cpus": spec.machine.nr_cpus(),
                "workloads": spec
                    .workloads
                    .iter()
                    .map(|w| w.canonical(spec.machine.nr_cpus()))
                    .collect::<Vec<_>>(),
                "base": side(&args.base, kernels[0], &args.base_sysctl, &args.base_debugfs),
                "new": side(&args.new, kernels[1], &args.new_sysctl, &args.new_debugfs),
                "seeds": seeds,
                "seeds_in_table": used,
                "interrupted": interrupted,
                "rows": rows_json(&rows),
            });
            // Only --until adds its key, so that a compare without it writes what it did.
            if let (Some(u), Some(stop), Some(map)) = (&until, &stop, doc.as_object_mut()) {
                map.insert(
                    "until".into(),
                    serde_json::json!({
                        "metric": u.metric,
                        "rule": u.rule_text,
                        "min_seeds": min_seeds,
                        "seed_cap": seeds,
                        "seeds_run": used,
                        "stopped_because": stop.reason.key(),
                        "message": stop.message,
                    }),
                );
            }
            super::run::write_file(
                path,
                "--json",
                &(serde_json::to_string_pretty(&doc)? + "\n"),
            )?;
        }
    }
    let same = |v: &[f64]| v.windows(2).all(|w| w[0] == w[1]);
    if used > 1 && metrics.iter().all(|m| same(&m.base) && same(&m.new)) {
        writeln!(
            out,
            "\nnote: every seed gave the same figures on each side: the outcome did not \
             depend on the random streams (NI_RANDOM off or never reached, a workload without \
             random draws), so the differences are exact and '*' marks no statistical test."
        )?;
    }
    if interrupted {
        progress::exit_interrupted(out, &format!("table from {used} of {seeds} seeds"));
    }
    Ok(())
}

/// What a side runs, as its header line names it: its features (`(defaults)` for none),
/// then its own tunable writes (`--base-sysctl`, `--new-debugfs`, ...), so that sides
/// that differ only in tunables are told apart.
fn side_label(features: &str, sysctls: &[String], debugfs: &[String]) -> String {
    let mut label = if features.is_empty() {
        "(defaults)".to_string()
    } else {
        features.to_string()
    };
    for (place, writes) in [("sysctl", sysctls), ("debugfs", debugfs)] {
        if !writes.is_empty() {
            label.push_str(&format!("; {place} {}", writes.join(" ")));
        }
    }
    label
}

/// The sides' names in progress lines, by job side.
const SIDES: [&str; 2] = ["base", "new"];
