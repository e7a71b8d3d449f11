//! `fairsim sweep`: a plan's matrix of `fairsim run`s (machines x workloads x kernels x
//! feature sets x option values x seeds), run in parallel on this host's cores and shardable over
//! a cluster's batch system, with `fairsim sweep merge` to join the shards.
//!
//! The plan's schema is in [`LONG_ABOUT`] (the command's `--help`); `plan.rs` parses it,
//! `output.rs` writes and reads back what a sweep leaves in its directory.

mod output;
mod plan;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde_json::json;

use self::output::{plan_json, point_json, point_path, read_text, summary, write_text, PlanMeta};
use self::plan::{Plan, Point};
use crate::cmd::compare::metrics_of;
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
fn check_points(points: &[Point]) -> Result<Vec<String>, CliError> {
    let mut notes: Vec<String> = Vec::new();
    for p in points {
        let args = parse_run_args(&p.argv)
            .map_err(|e| CliError::msg(format!("point {}: {}", p.stem, clap_line(&e))))?;
        let (_, point_notes) =
            resolve_point(&args).map_err(|e| e.context(&format!("point {}", p.stem)))?;
        for n in point_notes {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    Ok(notes)
}

/// Runs one point (job `job` of `batch`) and writes its file; false, with no file, when
/// Ctrl-C stopped it or came before it started.
fn run_point(
    plan: &Plan,
    digest: &str,
    point: &Point,
    dir: &Path,
    job: usize,
    batch: &Batch,
) -> Result<bool, CliError> {
    let args = parse_run_args(&point.argv).map_err(|e| CliError::msg(clap_line(&e)))?;
    let (spec, _) = resolve_point(&args)?;
    let Some(result) =
        progress::run_batch_job(&spec, &mut |now, end| batch.advance(job, now, end))?
    else {
        return Ok(false);
    };
    let metrics = metrics_of(&spec, &result, None);
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
    Ok(true)
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
    let plan = Plan::load(path)?;
    let points = plan.points();
    for note in check_points(&points)? {
        eprintln!("fairsim: note: {note}");
    }
    let plan_text = plan_json(&plan, &points)?;
    let meta = PlanMeta::parse(&plan_text, Path::new("plan.json"))?;
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
    // Points run in any order; each writes its own file, and the first failure in index
    // order is reported, so what a sweep says does not depend on thread timing.
    let results: Vec<Result<bool, CliError>> = pool.install(|| {
        mine.par_iter()
            .enumerate()
            .map(|(job, p)| {
                let r = run_point(&plan, &meta.digest, p, &out, job, &batch)
                    .map_err(|e| e.context(&format!("point {}", p.stem)));
                if let Ok(true) = r {
                    batch.finished(job, &format!("point {}", p.stem));
                    let done = written.fetch_add(1, Ordering::Relaxed) + 1;
                    progress::maybe_interrupt(hook, done);
                }
                r
            })
            .collect()
    });
    batch.finish();
    let ran = results.into_iter().collect::<Result<Vec<bool>, _>>()?;
    let secs = started.elapsed().as_secs_f64();
    if ran.iter().any(|&r| !r) {
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
                .map(|s| read_text(&point_path(&out, s)))
                .collect::<Result<Vec<_>, _>>()?;
            write_text(&out.join("summary.txt"), &summary(&meta, &texts)?)?;
            eprintln!(
                "fairsim: sweep {}: ran {} points in {secs:.1} s on {threads} thread(s) into {}",
                plan.name,
                points.len(),
                out.display()
            );
        }
    }
    Ok(())
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
    let text = summary(&meta, &texts)?;
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
