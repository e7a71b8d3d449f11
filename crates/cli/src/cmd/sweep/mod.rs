//! `fairsim sweep`: a plan's matrix of `fairsim run`s (machines x workloads x kernels x
//! feature sets x option values x seeds), run in parallel on this host's cores and shardable over
//! a cluster's batch system, with `fairsim sweep merge` to join the shards.
//!
//! The plan's schema is in [`LONG_ABOUT`] (the command's `--help`); `plan.rs` parses it,
//! `output.rs` writes and reads back what a sweep leaves in its directory.

mod output;
mod plan;
mod point;
mod until;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde_json::json;

use self::output::{plan_json, point_json, point_path, read_text, summary, write_text, PlanMeta};
use self::plan::{Plan, Point};
use crate::cmd::compare::RunMetrics;
use crate::cmd::compare_until;
use crate::cmd::outputs::check_dir;
use crate::cmd::progress::{self, Batch, Mode};
use crate::cmd::run::{parse_run_args, resolve_point};
use crate::error::{clap_line, invalid, CliError};

/// The plan format and the outputs, as `fairsim sweep --help` prints them.
pub(crate) const LONG_ABOUT: &str = "\
Run a plan's matrix of `fairsim run`s: every combination of machines, workloads, feature \
sets, option values and seeds, in parallel on --jobs threads (each run single-threaded and \
deterministic), or one shard of it (--shard I/N) for a batch system.

PLAN.toml:
  name = \"ilb\"                       # letters, digits, '.', '-'; output dir sweep-<name>
  [run]                              # options of every point, named as fairsim run's
  duration = \"2s\"                    #   long options: values as strings or numbers,
  warmup = \"500ms\"                   #   flags as booleans (check-invariants = true),
  cost = [\"wakeup=1us\"]              #   repeatable options as lists; seed = the first seed
  [axes]
  machines = [\"smt-mc-1s4c2t\", { name = \"box\", smp = \"sockets=2,cores=4\" }]
                                     # presets, or named tables of run's machine options
                                     # (topology, smp, machine, sysfs, numa-distance, ...);
                                     # default: run's default machine
  workloads = [\"schbench:m=1,t=4\", { name = \"mix\", workload = [\"A\", \"B\"] }]
                                     # required; specs as --workload takes them
  kernels = [\"6.12\", \"4.5\"]          # --kernel of each point (the features axis's
                                     # lists are written to each); default: 6.12
  seeds = 3                          # a count (run.seed, run.seed+1, ...) or a list [1, 7]
  hz = [250, 1000]                   # any other option of fairsim run: a list of values
  cpuidle = [\"menu\", \"none\"]
  debugfs = [\"migration_cost_ns=0\", \"migration_cost_ns=500000\"]
                                     # tunables too: debugfs (6.12, 6.5) or sysctl
                                     # (\"kernel.sched_nr_migrate=8\", 4.16 and older)
  [axes.features]                    # named feature sets, in this order; default: run's
  base = \"ILB_SNAPSHOT,NO_NI_RANDOM\"
  fast = \"ILB_SNAPSHOT,ILB_FAST,NO_NI_RANDOM\"

Unknown keys, empty axes, duplicate values and per-run outputs (json, trace, plot, ...) \
are refused in one line naming the key. A point is exactly the `fairsim run` command \
line its file prints (paths as written, relative to the directory sweep runs in; a \
feature set with a feature that changes the domains, such as ILB_SNAPSHOT, builds them as \
run and compare do). Points are \
numbered over the product in the axis order machines, workloads, kernels, features, option \
axes (as listed), seeds (fastest).

Output (--out, default sweep-<name>): plan.json (the canonical plan, its digest and the \
point list), points/NNNN-<key>.json (coordinates, command line, compare's metrics, the \
workloads' results) and summary.txt: for each axis but seeds with more than one value, an \
mmtests compare-kernels table per combination of the other axes' values, with the axis's \
values as columns (the first is the baseline) and the seeds as samples. --shard I/N runs \
the points whose index % N is I-1 and writes no summary; `fairsim sweep merge SHARD... \
--out DIR` joins the shards into what the unsharded sweep writes, byte for byte.

--until METRIC:ci<N% (or ci<N, in the metric's units) runs each combination of the other \
axes' values seed by seed, the seeds axis being the cap, and stops it once the 95% \
confidence interval of its mean is within plus or minus N percent of that mean, looked at \
from --min-seeds on (default 5); summary.txt's last section says where each stopped. Not \
with --shard.

Progress: at a terminal a line counts the finished points and estimates the time left; \
--progress prints it as plain lines when stderr is piped. Ctrl-C or SIGTERM stops the points \
under way: the points that finished keep their files (a valid shard directory for `sweep \
merge`), no summary.txt is written, and the sweep says how many points it wrote and exits \
with status 130.";

/// Arguments of `fairsim sweep`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct SweepArgs {
    #[command(subcommand)]
    command: Option<SweepCommand>,

    /// The plan (TOML; `fairsim sweep --help` shows its format).
    #[arg(value_name = "PLAN.toml")]
    plan: Option<PathBuf>,

    /// Output directory (default: sweep-<name>).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,

    /// Run only shard I of N (1-based): the points whose index % N is I-1.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,

    /// Points run at once (default: every core).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,

    /// Show progress on stderr even when it is not a terminal: a plain line as each point
    /// finishes and every few seconds, with no escape sequences.
    #[arg(long)]
    progress: bool,

    /// Stop adding seeds to each combination of the other axes' values once METRIC's 95%
    /// confidence interval is narrow enough: `METRIC:ci<N%` (within plus or minus N
    /// percent of the combination's mean) or `METRIC:ci<N` (in the metric's units). The
    /// plan's seeds axis is the cap; summary.txt says where each combination stopped.
    #[arg(long, value_name = "METRIC:RULE")]
    until: Option<String>,

    /// Seeds of each combination before `--until`'s first look (default 5; 2 to the
    /// plan's seeds).
    #[arg(long, value_name = "N")]
    min_seeds: Option<u32>,
}

/// `fairsim sweep`'s subcommands.
#[derive(Debug, clap::Subcommand)]
enum SweepCommand {
    /// Join the output directories of a sweep's shards into the unsharded sweep's output.
    Merge(MergeArgs),
}

/// Arguments of `fairsim sweep merge`.
#[derive(Debug, clap::Args)]
struct MergeArgs {
    /// The shards' output directories.
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,

    /// Where the joined output goes.
    #[arg(long, value_name = "DIR", required = true)]
    out: PathBuf,
}

/// Runs `fairsim sweep` or `fairsim sweep merge`.
pub(crate) fn run(args: &SweepArgs, out: &mut dyn Write) -> Result<(), CliError> {
    match &args.command {
        Some(SweepCommand::Merge(m)) => merge(m),
        None => sweep(args, out),
    }
}

/// `--shard I/N` as (I-1, N).
fn parse_shard(text: &str) -> Result<(usize, usize), CliError> {
    let err = || invalid("--shard", text, "I/N with 1 <= I <= N <= 100000, e.g. 2/8");
    let (i, n) = text.split_once('/').ok_or_else(err)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| err())?,
        n.trim().parse().map_err(|_| err())?,
    );
    if i == 0 || i > n || n > 100_000 {
        return Err(err());
    }
    Ok((i - 1, n))
}

/// Refuses to write into a directory that holds another plan's output, so that stale
/// point files of another plan cannot end up next to this one's.
fn prepare_out(out: &Path, digest: &str) -> Result<(), CliError> {
    let existing = out.join("plan.json");
    if existing.exists() {
        let meta = PlanMeta::parse(&read_text(&existing)?, &existing)?;
        if meta.digest != digest {
            return Err(CliError::msg(format!(
                "--out {}: holds the output of another plan ({}); allowed: a new or empty directory, or this plan's",
                out.display(),
                meta.digest
            )));
        }
    }
    std::fs::create_dir_all(out.join("points"))
        .map_err(|e| CliError::output(format!("creating {}/points: {e}", out.display())))
}

/// Resolves every point before anything runs, so that a bad value fails at once and
/// every shard refuses the same plan; returns the workloads' notes, each once.
fn check_points(
    points: &[Point],
    until: Option<&compare_until::Until>,
) -> Result<Vec<String>, CliError> {
    let mut notes: Vec<String> = Vec::new();
    for p in points {
        let args = parse_run_args(&p.argv)
            .map_err(|e| CliError::msg(format!("point {}: {}", p.stem, clap_line(&e))))?;
        let (spec, point_notes) =
            resolve_point(&args).map_err(|e| e.context(&format!("point {}", p.stem)))?;
        if let Some(u) = until {
            // Every point must be able to report the metric: a misspelt one costs no run.
            let depth = crate::cmd::plots::level_names(&spec).len();
            let groups = fairsim_workloads::run::resolve_cgroups(&spec)?;
            let names = fairsim_output::metrics::metric_names(
                spec.workloads.iter().map(|w| w.name()),
                depth,
                groups.all().filter(|g| g.cpu).map(|g| g.path.as_str()),
            );
            compare_until::check_metric(u, &names)
                .map_err(|e| e.context(&format!("point {}", p.stem)))?;
        }
        for n in point_notes {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    Ok(notes)
}

/// Runs one point (job `job` of `batch`), writes its file and returns its metrics; `None`,
/// with no file, when Ctrl-C stopped it or came before it started.
fn run_point(
    plan: &Plan,
    digest: &str,
    point: &Point,
    dir: &Path,
    job: usize,
    batch: &Batch,
) -> Result<Option<RunMetrics>, CliError> {
    let args = parse_run_args(&point.argv).map_err(|e| CliError::msg(clap_line(&e)))?;
    let (spec, _) = resolve_point(&args)?;
    let Some(result) = progress::run_batch_job(&spec, batch, job)? else {
        return Ok(None);
    };
    let metrics = fairsim_output::metrics::run_metrics(&spec, &result, None);
    let ncpus = spec.machine.nr_cpus();
    let reports = spec
        .workloads
        .iter()
        .zip(&result.reports)
        .map(|(w, r)| {
            json!({"workload": w.canonical(ncpus), "finished": r.finished, "results": r.json})
        })
        .collect();
    let text = point_json(plan, digest, point, &metrics, reports)?;
    write_text(&point_path(dir, &point.stem), &text)?;
    Ok(Some(metrics))
}

fn sweep(args: &SweepArgs, stdout: &mut dyn Write) -> Result<(), CliError> {
    let Some(path) = &args.plan else {
        return Err(CliError::msg(
            "PLAN.toml: required; allowed: fairsim sweep PLAN.toml [--out DIR] [--shard I/N] [--jobs N], or fairsim sweep merge DIR... --out DIR",
        ));
    };
    let shard = args.shard.as_deref().map(parse_shard).transpose()?;
    let jobs = match args.jobs {
        Some(j) if j == 0 || j > 1024 => return Err(invalid("--jobs", j, "1 to 1024")),
        Some(j) => j,
        None => 0,
    };
    let until = args
        .until
        .as_deref()
        .map(compare_until::parse)
        .transpose()?;
    if let Some(u) = &until {
        until::check(u, shard.is_some())?;
    }
    let plan = Plan::load(path)?;
    let points = plan.points();
    for note in check_points(&points, until.as_ref())? {
        eprintln!("fairsim: note: {note}");
    }
    let plan_text = plan_json(&plan, &points)?;
    let meta = PlanMeta::parse(&plan_text, Path::new("plan.json"))?;
    // The seeds axis is the last and varies fastest: a cell's seeds are consecutive points.
    let nseeds = meta.axes.last().map_or(1, |(_, v)| v.len()).max(1);
    let cap = u32::try_from(nseeds).unwrap_or(u32::MAX);
    let min_seeds = compare_until::min_seeds(until.as_ref(), args.min_seeds, cap, PLAN_SEEDS)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("sweep-{}", plan.name)));
    check_dir("--out", &out)?;
    prepare_out(&out, &meta.digest)?;
    write_text(&out.join("plan.json"), &plan_text)?;

    let mine: Vec<&Point> = points
        .iter()
        .filter(|p| shard.is_none_or(|(i, n)| p.index % n == i))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| CliError::internal(format!("starting the sweep's threads: {e}")))?;
    let threads = pool.current_num_threads();
    progress::watch_interrupts();
    let hook = progress::interrupt_after()?;
    let batch = Batch::new("sweep", "points", mine.len(), Mode::detect(args.progress));
    let written = AtomicUsize::new(0);
    let started = Instant::now();
    let run_one = |job: usize, p: &Point| -> Result<Option<RunMetrics>, CliError> {
        let r = run_point(&plan, &meta.digest, p, &out, job, &batch)
            .map_err(|e| e.context(&format!("point {}", p.stem)))?;
        if r.is_some() {
            batch.finished(job, &format!("point {}", p.stem));
            let done = written.fetch_add(1, Ordering::Relaxed) + 1;
            progress::maybe_interrupt(hook, done);
        }
        Ok(r)
    };
    // Per point of `mine`: whether it ran (its file written), or its error. The first
    // failure in index order is reported, so what a sweep says does not depend on thread
    // timing.
    let (results, stops): (Vec<Result<bool, CliError>>, Vec<CellStopAt>) = match &until {
        // Points run in any order; each writes its own file.
        None => {
            let results = pool.install(|| {
                mine.par_iter()
                    .enumerate()
                    .map(|(job, p)| run_one(job, p).map(|r| r.is_some()))
                    .collect()
            });
            (results, Vec::new())
        }
        // Cells run in parallel, each cell's seeds in order until its rule holds.
        Some(u) => {
            let cells: Vec<&[&Point]> = mine.chunks(nseeds).collect();
            let per_cell: Vec<(Vec<Result<bool, CliError>>, until::CellStop)> =
                pool.install(|| {
                    cells
                        .par_iter()
                        .enumerate()
                        .map(|(c, cell)| {
                            let mut ran: Vec<Result<bool, CliError>> =
                                (0..cell.len()).map(|_| Ok(false)).collect();
                            let mut failed_at = 0;
                            let stop = until::run_cell(u, cell.len(), min_seeds, &mut |k| {
                                let r = run_one(c * nseeds + k, cell[k]);
                                match &r {
                                    Ok(m) => ran[k] = Ok(m.is_some()),
                                    Err(_) => failed_at = k,
                                }
                                r
                            });
                            // A failed point ends its cell; the sweep reports the
                            // first failure in index order before anything else.
                            let stop = stop.unwrap_or_else(|e| {
                                ran[failed_at] = Err(e);
                                until::CellStop::Interrupted
                            });
                            (ran, stop)
                        })
                        .collect()
                });
            let mut results = Vec::with_capacity(mine.len());
            let mut stops = Vec::with_capacity(cells.len());
            for (cell, (ran, stop)) in cells.iter().zip(per_cell) {
                // A file of this plan left by an earlier run past the stop would sit
                // beside this run's points: the directory holds what this run ran.
                for (p, r) in cell.iter().zip(&ran) {
                    if matches!(r, Ok(false)) && stop != until::CellStop::Interrupted {
                        remove_stale(&point_path(&out, &p.stem))?;
                    }
                }
                results.extend(ran);
                stops.push((cell_name(&meta, cell[0].index), stop));
            }
            (results, stops)
        }
    };
    batch.finish();
    let interrupted = stops
        .iter()
        .any(|(_, s)| *s == until::CellStop::Interrupted);
    let ran = results.into_iter().collect::<Result<Vec<bool>, _>>()?;
    let secs = started.elapsed().as_secs_f64();
    if (until.is_none() && ran.iter().any(|&r| !r)) || interrupted {
        // The finished points' files are complete; the directory is a shard's, which a
        // later run of the sweep (or `sweep merge` with the other shards) completes.
        let done = ran.iter().filter(|&&r| r).count();
        progress::exit_interrupted(
            stdout,
            &format!(
                "sweep {}: {done} of {} points finished and written into {} in {secs:.1} s; no summary.txt (it needs every point)",
                plan.name,
                mine.len(),
                out.join("points").display()
            ),
        );
    }
    match shard {
        Some((i, n)) => eprintln!(
            "fairsim: sweep {}: shard {}/{n}: ran {} of {} points in {secs:.1} s on {threads} thread(s) into {}; no summary.txt for a shard (fairsim sweep merge over every shard's directory writes it)",
            plan.name,
            i + 1,
            mine.len(),
            points.len(),
            out.display()
        ),
        None => {
            let texts = meta
                .stems
                .iter()
                .zip(&ran)
                .map(|(s, &r)| r.then(|| read_text(&point_path(&out, s))).transpose())
                .collect::<Result<Vec<_>, _>>()?;
            let mut text = summary(&meta, &texts)?;
            if let Some(u) = &until {
                text.push_str(&until_section(u, &stops, nseeds, min_seeds));
            }
            write_text(&out.join("summary.txt"), &text)?;
            let early = match &until {
                Some(u) => format!(
                    " (--until {}:{}: {} of {} combinations stopped before the seed cap)",
                    u.metric,
                    u.rule_text,
                    stops
                        .iter()
                        .filter(|(_, s)| matches!(s, until::CellStop::Held(n, _) if *n < nseeds))
                        .count(),
                    stops.len()
                ),
                None => String::new(),
            };
            eprintln!(
                "fairsim: sweep {}: ran {} of {} points{early} in {secs:.1} s on {threads} thread(s) into {}",
                plan.name,
                ran.iter().filter(|&&r| r).count(),
                points.len(),
                out.display()
            );
        }
    }
    Ok(())
}

/// A cell's name and where `--until` stopped it.
type CellStopAt = (String, until::CellStop);

/// A sweep's seed cap: the plan's seeds axis.
const PLAN_SEEDS: compare_until::SeedCap = compare_until::SeedCap {
    field: "seeds",
    raise: "or more in the plan",
    name: "the plan's seeds",
};

/// A cell's name: the values of the axes other than seeds of its first point, `index`.
fn cell_name(meta: &PlanMeta, index: usize) -> String {
    let lens = meta.lens();
    let coords = self::point::coordinates(index, &lens);
    let seeds = meta.axes.len().saturating_sub(1);
    let parts: Vec<String> = (0..seeds)
        .map(|a| format!("{}={}", meta.axes[a].0, meta.axes[a].1[coords[a]]))
        .collect();
    if parts.is_empty() {
        "every point".to_string()
    } else {
        parts.join(", ")
    }
}

/// summary.txt's account of `--until`: the rule, then where each cell stopped.
fn until_section(
    u: &compare_until::Until,
    stops: &[CellStopAt],
    cap: usize,
    min_seeds: usize,
) -> String {
    let mut s = format!(
        "\n== --until {}:{} (each combination's seeds in order, looked at from seed {min_seeds} on, at most {cap})\n",
        u.metric, u.rule_text
    );
    for (name, stop) in stops {
        s.push_str(&until::stop_line(u, name, stop, cap));
        s.push('\n');
    }
    s
}

/// Removes a point file left by an earlier run of the plan into the same directory.
fn remove_stale(path: &Path) -> Result<(), CliError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(CliError::output(format!(
            "removing {}: {e}",
            path.display()
        ))),
    }
}

fn merge(args: &MergeArgs) -> Result<(), CliError> {
    // Every shard must carry the same plan.json, byte for byte.
    let mut first: Option<(&Path, String, PlanMeta)> = None;
    for dir in &args.dirs {
        let file = dir.join("plan.json");
        if !file.is_file() {
            return Err(CliError::msg(format!(
                "{}: no plan.json; allowed: output directories of fairsim sweep (its shards)",
                dir.display()
            )));
        }
        let text = read_text(&file)?;
        let meta = PlanMeta::parse(&text, &file)?;
        match &first {
            None => first = Some((dir, text, meta)),
            Some((d0, t0, m0)) => {
                if m0.digest != meta.digest || *t0 != text {
                    return Err(CliError::msg(format!(
                        "{}: plan {} ({}) is not {}'s plan {} ({}); allowed: shards of one plan",
                        dir.display(),
                        meta.name,
                        meta.digest,
                        d0.display(),
                        m0.name,
                        m0.digest
                    )));
                }
            }
        }
    }
    let Some((_, plan_text, meta)) = first else {
        return Err(CliError::msg(
            "DIR: none given; allowed: one or more shard directories",
        ));
    };
    let mut texts: Vec<String> = Vec::with_capacity(meta.stems.len());
    let mut missing: Vec<&str> = Vec::new();
    for stem in &meta.stems {
        let mut found: Option<(&Path, String)> = None;
        for dir in &args.dirs {
            let p = point_path(dir, stem);
            if !p.exists() {
                continue;
            }
            let text = read_text(&p)?;
            match &found {
                Some((d0, t0)) if *t0 != text => {
                    return Err(CliError::msg(format!(
                        "points/{stem}.json: differs between {} and {}; allowed: shards whose copies of a point are identical",
                        d0.display(),
                        dir.display()
                    )))
                }
                Some(_) => {}
                None => found = Some((dir, text)),
            }
        }
        match found {
            Some((_, t)) => texts.push(t),
            None => missing.push(stem),
        }
    }
    if let Some(first_missing) = missing.first() {
        return Err(CliError::msg(format!(
            "{} of {} points missing, the first {first_missing}; allowed: every shard's directory (--shard 1/N to N/N)",
            missing.len(),
            meta.stems.len()
        )));
    }
    let text = summary(&meta, &texts.iter().cloned().map(Some).collect::<Vec<_>>())?;
    check_dir("--out", &args.out)?;
    prepare_out(&args.out, &meta.digest)?;
    write_text(&args.out.join("plan.json"), &plan_text)?;
    for (stem, t) in meta.stems.iter().zip(&texts) {
        write_text(&point_path(&args.out, stem), t)?;
    }
    write_text(&args.out.join("summary.txt"), &text)?;
    eprintln!(
        "fairsim: sweep merge: {} points of {} from {} directories into {}",
        meta.stems.len(),
        meta.name,
        args.dirs.len(),
        args.out.display()
    );
    Ok(())
}
