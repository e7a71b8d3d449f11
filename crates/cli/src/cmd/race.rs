//! `fairsim race`: the threaded race mode (issue #6). Emulated CPUs run on real OS
//! threads over shared runqueues; each CPU that runs out of tokens runs
//! `sched_balance_newidle` on the live state. Each feature set given and each thread count
//! given is one run; with more than one, a table compares them at the end.

use std::io::Write;
use std::path::PathBuf;

use fairsim_balance::schedstat::SchedstatVersion;
use fairsim_balance::{Feature, Features, Kernel, SchedParams};
use fairsim_des::time::{parse_duration_with_unit, SEC};
use fairsim_pelt::UtilEstMode;
use fairsim_race::control::{default_threads, host_cpus, THREADS_PER_HOST_CPU};
use fairsim_race::report::RaceReport;
use fairsim_race::{run_race, Placement, RaceSpec, TokenProgram};
use fairsim_topology::{estimate_build_memory, BuildOptions, Machine};
use fairsim_workloads::run::{estimate_memory, DEFAULT_MEMORY_BUDGET};

use super::machine_args::MachineArgs;
use crate::error::{invalid, CliError};

/// Arguments of `fairsim race`.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Run emulated CPUs on real OS threads over shared runqueues. Each CPU runs \
tokens that spin and sleep; a CPU left without tokens runs Linux 6.12.117's \
sched_balance_newidle on the live state, with the same code the virtual-time engine runs. \
Reports newidle balances per second, the wall time of update_sd_lb_stats, groups scanned, \
pulls, failed try-locks, and whether every token survived. Results are measurements of this \
host: two runs differ."
)]
pub(crate) struct RaceArgs {
    #[command(flatten)]
    machine: MachineArgs,

    /// Refused: race mode builds the whole machine as one root domain (its threads share
    /// one `rd->overloaded`), so exclusive cpuset partitions are `fairsim run`'s.
    #[arg(long = "cpuset", value_name = "LIST", hide = true)]
    cpusets: Vec<String>,

    /// Tokens (default: one per CPU).
    #[arg(long, value_name = "N")]
    tasks: Option<usize>,

    /// OS threads, or a comma-separated list of counts to run one after the other
    /// (default: one per CPU, at most 8 per host CPU, so that each thread gets the host
    /// often enough to keep to --duration). With fewer threads than CPUs, each thread
    /// drives several CPUs in turn.
    #[arg(long, value_name = "N[,N...]")]
    threads: Option<String>,

    /// Wall-clock length of each run.
    #[arg(long, value_name = "D", default_value = "5s")]
    duration: String,

    /// The kernel: 6.12 (6.12.117, the default) or 6.5 (seed 000's base: its features
    /// file, defaults, newidle_balance and load_balance). The older kernels' balancers are
    /// not ported to race mode.
    #[arg(long, value_name = "VERSION")]
    kernel: Option<String>,

    /// Scheduler features, repeatable: each occurrence is one run (`default` for the
    /// kernel's defaults). ILB_UTIL and ILB_FAST read the snapshot ILB_SNAPSHOT takes, so
    /// they need it written too (`ILB_SNAPSHOT,ILB_FAST`), as in run and compare; a set
    /// with an ILB feature gets seed 000's sched_domain_shared on every non-NUMA domain.
    #[arg(long, value_name = "LIST")]
    features: Vec<String>,

    /// How long each token spins per run (its work plus the syscall path).
    #[arg(long = "run", value_name = "D", default_value = "2us")]
    run_for: String,

    /// How long each token sleeps (nanosleep(1us) with the default 50 us timer slack).
    #[arg(long, value_name = "D", default_value = "50us")]
    sleep: String,

    /// What tokens do after each run: `nanosleep` (sleep on a timer) or `pairs` (wake the
    /// partner token, wherever it sleeps, then sleep: remote wakeups that take other
    /// CPUs' runqueue locks, as a schbench worker pair or pipe peers would).
    #[arg(long, value_name = "P", default_value = "nanosleep")]
    pattern: String,

    /// Where tokens start: `cpu0` (all on CPU 0, as forked by one launcher with no fork
    /// balancing: every idle CPU races for that runqueue, and tokens pulled onto a CPU
    /// where another sleeps keep stacking as they wake, so newidle balances keep finding
    /// work) or `spread` (token i on CPU i: with one token per CPU nothing ever stacks,
    /// `rd->overloaded` stays clear and newidle balances stop at their first gate).
    #[arg(long, value_name = "WHERE", default_value = "cpu0")]
    start: String,

    /// Seed of the CPUs' `sched_rng` streams (NI_RANDOM).
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,

    /// CONFIG_HZ: 100, 250, 300 or 1000.
    #[arg(long, value_name = "HZ", default_value_t = 250)]
    hz: u32,

    /// How long after the run's end its threads may take to stop before the run fails
    /// with an error (starting the threads counts against it too).
    #[arg(long, value_name = "D", default_value = "10s")]
    watchdog: String,

    /// Write each run's counters as /proc/schedstat reads at its end to FILE (FILE.1,
    /// FILE.2, ... when there are several runs), for `fairsim schedstat show|diff`. The
    /// domain lines are complete; the cpu lines carry schedule calls, idle entries, timer
    /// wakeups, runs and run time (no yields, no run delay).
    #[arg(long, value_name = "FILE")]
    schedstat: Option<PathBuf>,

    /// Add seed 000's `lb_sg_scan` column (patch 7/7) to every idle-type block.
    #[arg(long)]
    schedstat_sg_scan: bool,

    /// schedstat layout: 15, 16 or 17 (default: the kernel's, 16 for 6.12 and 15 for
    /// 6.5).
    #[arg(long, value_name = "V")]
    schedstat_version: Option<String>,

    /// Write every run's figures to FILE as a JSON array, one object per run.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,

    /// Largest estimated memory of a run (its sched domains, runqueues and tokens), in
    /// MiB (default 4096, as for `fairsim run`): a bigger one is refused before anything
    /// is built.
    #[arg(long, value_name = "MIB")]
    memory_budget: Option<u64>,
}

/// Parses one `--features` occurrence: `default`, or writes to the kernel's defaults. A
/// feature that needs another (ILB_UTIL and ILB_FAST read ILB_SNAPSHOT's snapshot) is
/// refused without it, as `run`, `compare` and `sweep` refuse it: nothing is turned on
/// that was not written.
fn parse_features(kernel: Kernel, text: &str) -> Result<Features, CliError> {
    if text.trim() == "default" {
        return Ok(kernel.features());
    }
    Ok(Features::parse_for(kernel, text)?)
}

/// The util_est form of a race run: the kernel's, with 6.5's UTIL_EST_FASTUP feature
/// folded in as the virtual-time scheduler folds it (race mode reads the form alone).
fn race_util_est(kernel: Kernel, f: Features) -> UtilEstMode {
    match kernel.util_est() {
        UtilEstMode::Legacy { fastup } => UtilEstMode::Legacy {
            fastup: fastup || f.has(Feature::UTIL_EST_FASTUP),
        },
        m => m,
    }
}

fn parse_threads(text: Option<&String>, ncpus: usize) -> Result<Vec<usize>, CliError> {
    let Some(t) = text else {
        let host = host_cpus();
        let n = default_threads(ncpus, host);
        if n < ncpus {
            // Said once, on stderr: the figures of a run with fewer threads than CPUs
            // differ from one thread per CPU, and the user may want the latter.
            eprintln!(
                "fairsim: note: race drives {ncpus} CPUs with {n} threads (at most \
                 {THREADS_PER_HOST_CPU} per host CPU, {host} host CPUs); use --threads to change"
            );
        }
        return Ok(vec![n]);
    };
    let allowed = format!("thread counts from 1 to the CPU count ({ncpus}), comma separated");
    t.split(',')
        .map(|w| {
            let n: usize = w
                .trim()
                .parse()
                .map_err(|_| invalid("--threads", t, &allowed))?;
            if n == 0 || n > ncpus {
                return Err(invalid("--threads", t, &allowed));
            }
            Ok(n)
        })
        .collect()
}

fn parse_ns(field: &str, text: &str, max: u64, min: u64) -> Result<u64, CliError> {
    let ns = parse_duration_with_unit(text).map_err(|e| CliError::msg(format!("{field}: {e}")))?;
    if ns < min || ns > max {
        return Err(invalid(
            field,
            text,
            &format!("a duration from {min} ns to {} s", max / SEC),
        ));
    }
    Ok(ns)
}

/// Refuses a race whose state would not fit `--memory-budget`: the runs go one after the
/// other, so the largest of them (its sched domains, with seed 000's extra shared objects
/// when a set uses ILB features, plus the runqueues and tokens) must fit.
fn check_budget(
    budget_mib: Option<u64>,
    machine: &Machine,
    tasks: usize,
    sets: &[Features],
) -> Result<(), CliError> {
    let budget = match budget_mib {
        Some(0) => return Err(invalid("--memory-budget", 0, "a size in MiB above 0")),
        Some(mib) => mib.saturating_mul(1 << 20),
        None => DEFAULT_MEMORY_BUDGET,
    };
    let ncpus = machine.nr_cpus();
    for f in sets {
        let build = BuildOptions {
            shared_all_non_numa: f.shares_all_non_numa(),
            ..BuildOptions::default()
        };
        // Each CPU also keeps two duration histograms of 3.5 KiB (crates/race/src/hist.rs).
        let need = estimate_memory(tasks as u64, ncpus)
            .saturating_add(ncpus as u64 * 8 * 1024)
            .saturating_add(estimate_build_memory(machine, build));
        if need > budget {
            return Err(CliError::msg(format!(
                "--machine: a race of {tasks} tokens on {ncpus} CPUs needs about {} MiB, more than the {} MiB budget; allowed: fewer CPUs, nodes or distinct NUMA distances (or raise --memory-budget)",
                need >> 20,
                budget >> 20
            )));
        }
    }
    Ok(())
}

/// Runs `fairsim race`.
pub(crate) fn run(args: &RaceArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if !args.cpusets.is_empty() {
        return Err(CliError::msg(
            "--cpuset: not available with race, which runs the whole machine as one root \
             domain; allowed: fairsim run or fairsim topology with --cpuset",
        ));
    }
    let kernel = match &args.kernel {
        Some(t) => Kernel::parse(t).map_err(|e| CliError::msg(e.to_string()))?,
        None => Kernel::default(),
    };
    if !matches!(kernel, Kernel::V6_12 | Kernel::V6_5) {
        return Err(CliError::msg(format!(
            "--kernel: race mode runs 6.12's and 6.5's load balancers; Linux {}'s is not ported to race mode; allowed: 6.12 or 6.5",
            kernel.name()
        )));
    }
    let machine = args.machine.load()?;
    let ncpus = machine.nr_cpus();
    if ![100, 250, 300, 1000].contains(&args.hz) {
        return Err(invalid("--hz", args.hz, "100, 250, 300 or 1000"));
    }
    let duration_ns = parse_ns("--duration", &args.duration, 3600 * SEC, 1)?;
    let spin_ns = parse_ns("--run", &args.run_for, SEC, 1)?;
    let sleep_ns = parse_ns("--sleep", &args.sleep, SEC, 0)?;
    let watchdog_ns = parse_ns("--watchdog", &args.watchdog, 3600 * SEC, 1)?;
    let wake_partner = match args.pattern.as_str() {
        "nanosleep" => false,
        "pairs" => true,
        other => return Err(invalid("--pattern", other, "nanosleep or pairs")),
    };
    let placement = match args.start.as_str() {
        "spread" => Placement::Spread,
        "cpu0" => Placement::Cpu0,
        other => return Err(invalid("--start", other, "spread or cpu0")),
    };
    let feature_sets = if args.features.is_empty() {
        vec!["default".to_string()]
    } else {
        args.features.clone()
    };
    let mut sets = Vec::new();
    for text in &feature_sets {
        sets.push(parse_features(kernel, text)?);
    }
    if args.schedstat.is_none() {
        for (given, name) in [
            (args.schedstat_sg_scan, "--schedstat-sg-scan"),
            (args.schedstat_version.is_some(), "--schedstat-version"),
        ] {
            if given {
                return Err(CliError::msg(format!(
                    "{name}: no schedstat file to write; allowed: with --schedstat FILE"
                )));
            }
        }
    }
    let version = match &args.schedstat_version {
        Some(v) => SchedstatVersion::parse(v)
            .ok_or_else(|| invalid("--schedstat-version", v, "15, 16 or 17"))?,
        None if kernel.schedstat_version() == 15 => SchedstatVersion::V15,
        None => SchedstatVersion::V16,
    };
    let tasks = args.tasks.unwrap_or(ncpus);
    check_budget(args.memory_budget, &machine, tasks, &sets)?;
    let threads = parse_threads(args.threads.as_ref(), ncpus)?;
    let runs = sets.len() * threads.len();
    // Every output path is checked before the first race, as run's and compare's are
    // (docs/errors.md): with several runs the schedstat files are FILE.1, FILE.2, ...
    let mut outputs = super::outputs::Outputs::new();
    outputs.file("--json", args.json.as_deref());
    let numbered: Vec<PathBuf> = match &args.schedstat {
        Some(path) if runs > 1 => (1..=runs)
            .map(|i| PathBuf::from(format!("{}.{i}", path.display())))
            .collect(),
        Some(path) => vec![path.clone()],
        None => Vec::new(),
    };
    for p in &numbered {
        outputs.file("--schedstat", Some(p));
    }
    outputs.check()?;
    let mut reports: Vec<RaceReport> = Vec::new();
    for &features in &sets {
        for &t in &threads {
            let spec = RaceSpec {
                machine: machine.clone(),
                build: BuildOptions {
                    shared_all_non_numa: features.shares_all_non_numa(),
                    ..BuildOptions::default()
                },
                params: SchedParams {
                    features,
                    hz: args.hz,
                    seed: args.seed,
                    util_est: race_util_est(kernel, features),
                    ..SchedParams::default()
                },
                tasks,
                threads: t,
                duration_ns,
                program: TokenProgram {
                    spin_ns,
                    sleep_ns,
                    wake_partner,
                },
                placement,
                watchdog_ns,
            };
            let report = run_race(&spec)?;
            write!(out, "{}", report.render())?;
            if let Some(path) = numbered.get(reports.len()) {
                let text = report.schedstat(version, args.schedstat_sg_scan);
                super::outputs::write_file(path, "--schedstat", &text)?;
                writeln!(out, "schedstat: {}", path.display())?;
            }
            writeln!(out)?;
            out.flush()?;
            reports.push(report);
        }
    }
    if reports.len() > 1 {
        write!(out, "{}", comparison(&reports))?;
    }
    if let Some(path) = &args.json {
        let doc = serde_json::Value::Array(reports.iter().map(RaceReport::to_json).collect());
        let text = serde_json::to_string_pretty(&doc)? + "\n";
        super::outputs::write_file(path, "--json", &text)?;
    }
    if reports
        .iter()
        .any(|r| !r.conserved() || r.totals.nested_locks != 0)
    {
        return Err(CliError::msg(
            "race: tasks were not conserved (see the conservation lines above)",
        ));
    }
    Ok(())
}

/// One line per run: the figures issue #6 asks to compare across feature sets and thread
/// counts.
fn comparison(reports: &[RaceReport]) -> String {
    let mut o = String::new();
    o.push_str(&format!(
        "{:<40} {:>7} {:>11} {:>9} {:>9} {:>9} {:>12} {:>8} {:>10} {:>9}\n",
        "features",
        "threads",
        "newidle/s",
        "ni-busy%",
        "sdlbs ns",
        "p99 ns",
        "groups/lb",
        "pulls/s",
        "trylock/s",
        "conserved"
    ));
    for r in reports {
        let s = r.wall_s.max(1e-9);
        // The level that scans the most groups per balance (the LLC on x86), as seed
        // 000 reports its domain1.
        let widest = r
            .newidle
            .iter()
            .map(|l| (l.sg_scan as f64 / l.count.max(1) as f64, l.name))
            .fold((0.0, "-"), |a, b| if b.0 > a.0 { b } else { a });
        o.push_str(&format!(
            "{:<40} {:>7} {:>11.0} {:>9.2} {:>9.0} {:>9} {:>12} {:>8.0} {:>10.0} {:>9}\n",
            r.features,
            r.threads,
            r.totals.newidle_balances as f64 / s,
            r.newidle_busy_pct(),
            r.sd_lb_stats_newidle.mean,
            r.sd_lb_stats_newidle.p99,
            format!("{:.1} {}", widest.0, widest.1),
            r.pulls() as f64 / s,
            r.rq_lock_contended as f64 / s,
            if r.conserved() { "yes" } else { "NO" }
        ));
    }
    o
}
