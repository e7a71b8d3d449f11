//! `fairsim run`: run workloads on an emulated machine in virtual time and print what the
//! tools would have printed, plus the scheduler's side of it (issue #4).
//!
//! Options come from the command line and, optionally, a scenario TOML file; the command
//! line wins. With no arguments at all, a built-in scenario runs and is explained first.

use std::io::Write;
use std::path::{Path, PathBuf};

use fairsim_engine::balance::cpufreq::Governor;
use fairsim_engine::balance::pelt::UtilEstMode;
use fairsim_engine::balance::schedstat::{show_schedstat_with, SchedstatVersion};
use fairsim_engine::balance::{Feature, Features, Kernel, SchedParams};
use fairsim_engine::output::{summary, to_json};
use fairsim_engine::run::{
    default_duration, estimate_json_memory, estimate_run_memory, RunSpec, DEFAULT_MEMORY_BUDGET,
};
use fairsim_engine::scenario::Scenario;
use fairsim_engine::time::{parse_duration_with_unit, SEC};
use fairsim_engine::world::{Launch, DEFAULT_TIMER_SLACK};
use fairsim_engine::{Cpuidle, NoiseModel, TimerExpiry, WorkloadSpec, WorldConfig};
use fairsim_topology::{parse_cpusets, BuildOptions};

use super::machine_args::MachineArgs;
use crate::error::{invalid, CliError};

/// The built-in scenario of `fairsim run` without arguments.
const BUILTIN_WORKLOAD: &str = "schbench:m=2,t=8,c=10ms,s=10ms";
const BUILTIN_DURATION: u64 = 3 * SEC;
const BUILTIN_EXPLANATION: &str = "\
No arguments: running the built-in scenario, schbench (Chris Mason's 2016 wakeup-latency
benchmark, seed 001) with 2 message threads and 8 workers each, 10 ms of think time and
10 ms of messenger sleep, for 3 emulated seconds on the default machine numa-2s4c2t
(2 sockets x 4 cores x 2 threads). Each message thread wakes its workers; the table below
is how long a woken worker waited for a CPU, in microseconds, as schbench prints it. The
tail (*99th and above) is where wakeup placement shows: a worker woken onto a CPU that is
busy by the time the wakeup arrives waits for a tick or a slice. The scheduler section
says where CPU time went (task work, kernel overhead by kind, idle). Try
`fairsim run --topology 2s24c2t --workload schbench:version=2016,m=6,t=24,c=30ms,s=30ms --duration 30s`
for seed 001's run (the 2016 binary ignored -m: 2 message threads x 24 workers ran), or
`fairsim run --help` for every option.
";

/// Arguments of `fairsim run`.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Run workloads (schbench, hackbench, nanosleep, sysbench-cpu) on an emulated \
machine in virtual time, with Linux 6.12.117's fair-class scheduler (or, with --kernel, the \
fair class of an older kernel a seed posting was measured on: 6.5, 4.16, 4.15, 4.5 or 3.9), and \
print the tools' own output plus a scheduler summary. Without arguments, a built-in scenario \
runs and is explained."
)]
pub struct RunArgs {
    #[command(flatten)]
    machine: MachineArgs,

    /// A scenario TOML file with the same settings (command-line options override it).
    #[arg(value_name = "SCENARIO")]
    scenario: Option<PathBuf>,

    /// A workload, repeatable: `NAME:key=value,...`, keys being the tool's own options,
    /// e.g. `schbench:version=2016,m=6,t=24,c=30ms,s=30ms` (seed 001's run: the 2016
    /// binary ignores `m`, so 2 message threads x 24 workers), `hackbench:g=4,l=1000,pipe`,
    /// `nanosleep:tasks=224,sleep=1us`, `sysbench-cpu:threads=5`.
    #[arg(long = "workload", short = 'w', value_name = "SPEC")]
    workloads: Vec<String>,

    /// An exclusive cpuset partition, repeatable: a CPU list in the kernel's cpulist
    /// format, e.g. `0-9,20-29`. Each becomes a root partition as cgroup v2's
    /// `cpuset.cpus.partition = root` makes it: sched domains of its own and a root
    /// domain balanced apart from the others; the CPUs none takes stay with the top
    /// cpuset and form one more. Replaces a scenario's `cpusets`.
    #[arg(long = "cpuset", value_name = "LIST")]
    cpusets: Vec<String>,

    /// The kernel whose scheduler runs, whole: 6.12 (6.12.117, EEVDF; the default), or
    /// the CFS kernel of a seed posting: 6.5 (seed 000), 4.16 (seed 003; its util_est
    /// patch is the feature UTIL_EST, off by default), 4.15 (seed 004; its SD_NUMA patch
    /// is FIND_IDLEST_NUMA, off), 4.5 (seed 001; its select_idle_sibling patch is
    /// SIS_FIRST_IDLE, off), 3.9 (seed 002; LB_RUNNABLE_AVG, LB_FORCE_BETTER_CPU and
    /// LB_IDLE_PULL_MULTI). Each brings its own fair class (CFS's vruntime, slices, sleeper
    /// credit, wakeup granularity and buddies), select_task_rq_fair, load balancer
    /// (4.16 runs 4.15's), features file (--features writes apply to it), tunables,
    /// util_est form and schedstat version (15 before 6.6). PELT stays 6.12's; HZ, idle
    /// states and costs stay as given.
    #[arg(long, value_name = "VERSION")]
    pub(crate) kernel: Option<String>,

    /// Scheduler features, written as to /sys/kernel/debug/sched/features, comma
    /// separated: e.g. `NO_SIS_UTIL,ILB_FAST`, applied to the --kernel's defaults (only
    /// the features its features file lists can be written).
    #[arg(long, value_name = "LIST")]
    features: Option<String>,

    /// Emulated run length, with its unit (fairsim's own times take no bare numbers), e.g.
    /// `30s`, `500ms` (default: schbench's -r or 30s; 5s for
    /// nanosleep; until done, at most 1h, for hackbench and sysbench-cpu).
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    duration: Option<String>,

    /// Seed of the run's random streams.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,

    /// CONFIG_HZ: 100, 250, 300 or 1000.
    #[arg(long, value_name = "HZ")]
    hz: Option<u32>,

    /// The util_est form the scheduler runs: `6.12` (the single value of v6.8+, the
    /// default with --kernel 6.12), `legacy-nofastup` (the {enqueued, ewma} form as v4.17
    /// merged it, updated only when util_avg changed: UTIL_AVG_UNCHANGED; the default of
    /// the older kernels, 6.5 adding its UTIL_EST_FASTUP feature), `legacy-fastup` (the
    /// same with v5.9's UTIL_EST_FASTUP, as v5.9-v6.7 ran it; `legacy` says the same), or
    /// `off` (NO_UTIL_EST; the only form of 4.15, 4.5 and 3.9, which had no util_est).
    #[arg(long, value_name = "FORM")]
    util_est: Option<String>,

    /// The kernel-overhead cost table the run starts from: x86-2020s (a current x86
    /// server) or arm-2013 (an ARMv7 big.LITTLE board of 2013, TC2). Default: the
    /// machine's own (arm-2013 for the tc2 presets), else x86-2020s. `--cost` overrides
    /// apply on top.
    #[arg(long = "costs", value_name = "TABLE")]
    cost_table: Option<String>,

    /// Kernel-overhead cost override, repeatable: `NAME=DURATION`, e.g.
    /// `context_switch=2us`, with the unit (names: see the engine's cost table), on top
    /// of the `--costs` table.
    #[arg(long = "cost", value_name = "NAME=D")]
    costs: Vec<String>,

    /// A CPU speed for one workload kind apart from the capacity the scheduler sees,
    /// repeatable: `KIND=LIST:SPEED,...` with every CPU once and speeds on the capacity
    /// scale (1..1024), e.g. `sysbench=0-1:1024,2-4:504`. KIND is schbench, hackbench,
    /// nanosleep, sysbench, rtapp or * (every workload without its own entry). It replaces
    /// the machine's entry for the kind (tc2 has sysbench's); `none` drops the machine's
    /// table, so that all work runs at capacity.
    #[arg(long = "speed", value_name = "KIND=LIST:SPEED,...")]
    speeds: Vec<String>,

    /// Timer slack of every task (`timer_slack_ns`), default 50us.
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    timer_slack: Option<String>,

    /// The CPU the workloads are launched from (where the shell that starts them runs):
    /// a CPU number (default 0) or `random`, a CPU drawn from the seed for each workload,
    /// as a shell runs wherever its last wakeup put it. Kernels whose fork placement
    /// depends on the parent's CPU then differ from run to run, as on a real machine.
    #[arg(long, value_name = "CPU")]
    launch_cpu: Option<String>,

    /// Where a quiet hrtimer fires in [d, d+slack]: hard (d+slack, the kernel on an
    /// otherwise quiet CPU), mid or soft (d).
    #[arg(long, value_name = "POINT")]
    timer_expiry: Option<String>,

    /// The cpuidle governor: menu (the default on bare metal: it predicts the idle time
    /// and picks the deepest state that fits; the tick keeps running when the prediction is
    /// under a tick), haltpoll (KVM guests: poll, then halt; the default with the haltpoll
    /// states), teo, or none (no cpuidle driver, as in a qemu guest: the tick always stops
    /// and a wakeup pays the flat idle_exit cost). teo came in Linux 5.1 and haltpoll in
    /// 5.4: with an older --kernel, menu or none.
    #[arg(long, value_name = "GOVERNOR")]
    cpuidle: Option<String>,

    /// The CPU idle states: a preset (the kernel driver's table: bdx for 2s24c2t, ivt for
    /// e5-2690v2, spr for spr-2s56c2t, tc2, haltpoll, flat, ...) or a list
    /// `NAME:EXIT:RESIDENCY,...` (e.g. `C1:2us:2us,C1E:10us:20us,C6:133us:600us`), with
    /// `,no-STATE` to disable one (`spr,no-C6`). Default: the machine's table, else `flat`
    /// (POLL, then C1 with the idle_exit cost). Each wakeup of an idle CPU pays its
    /// state's exit latency.
    #[arg(long, value_name = "STATES")]
    idle_states: Option<String>,

    /// The cpufreq governor of a machine with frequency domains (rk3399, or a machine
    /// file's [[cpufreq]] tables): schedutil (the default; schedutil:rate_limit_us=N
    /// overrides its rate limit, 1.5 transition latencies by default), performance,
    /// powersave, or userspace:KHZ (a fixed frequency written to every policy's
    /// scaling_setspeed, as scaling_min_freq = scaling_max_freq pins it). Refused on a
    /// machine without cpufreq, whose CPUs always run at full frequency. schedutil came in
    /// Linux 4.7: with --kernel 4.5 or 3.9 such a machine needs one of the
    /// others.
    #[arg(long, value_name = "GOVERNOR")]
    governor: Option<String>,

    /// Run-to-run noise: on (default: kernel-work durations, timer expiry within the
    /// slack and launch phase drawn from the seed's streams, spread 0.1), off (exact
    /// cost-table means, every seed alike when nothing else is random) or a spread in
    /// 0..1 such as 0.2.
    #[arg(long, value_name = "on|off|SPREAD")]
    noise: Option<String>,

    /// Discard everything before this virtual time: schedstat counters, latencies, loop
    /// counts and overhead shares cover [warmup, end), as `schedstat.py -i` started after
    /// launch does. Must be shorter than the run.
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    warmup: Option<String>,

    /// Print a `perf report --children`-style profile: kernel time by function (with
    /// callers), task time and idle time, as shares of all CPU time and of busy time.
    #[arg(long)]
    profile: bool,

    /// Give every non-NUMA domain a sched_domain_shared (seed 000 patch 1/7).
    #[arg(long)]
    ilb_sd_share: bool,

    /// Write /proc/schedstat as it reads at the end of the run to FILE (with --warmup, the
    /// counters since the window opened, as a `schedstat.py -i` delta shows them).
    #[arg(long, value_name = "FILE")]
    schedstat: Option<PathBuf>,

    /// Add seed 000's `lb_sg_scan` column (patch 7/7) to every idle-type block of the
    /// schedstat file.
    #[arg(long)]
    schedstat_sg_scan: bool,

    /// schedstat layout: 15, 16 or 17 (default: the --kernel's, 16 for 6.12 and 15 for
    /// the older kernels).
    #[arg(long, value_name = "V")]
    schedstat_version: Option<String>,

    /// Write the run's results as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,

    /// Run twice and check that the JSON results are byte-identical.
    #[arg(long)]
    check_determinism: bool,

    /// Check the scheduler's invariants after every event (slow).
    #[arg(long)]
    check_invariants: bool,

    /// Largest estimated state accepted, in MiB (default 4096).
    #[arg(long, value_name = "MIB")]
    memory_budget: Option<u64>,

    /// Write a Perfetto trace (protobuf, opens in ui.perfetto.dev and trace_processor) of
    /// the scheduler's tracepoints (sched_switch, sched_waking, sched_wakeup(_new),
    /// sched_migrate_task, sched_process_fork/exit, cpu_idle) and fairsim's balance and
    /// runqueue-lock tracks, over --trace-window (default: the measurement window).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,

    /// Write the same events as ftrace text, in /sys/kernel/tracing/trace's layout.
    #[arg(long, value_name = "FILE")]
    trace_text: Option<PathBuf>,

    /// The traced window, `START..END` with units (e.g. `1s..1.2s`, `..10ms`, `500ms..`);
    /// also the timeline of --plot (default: its first 2 ms).
    #[arg(long, value_name = "START..END")]
    trace_window: Option<String>,

    /// Write SVG plots into DIR (the wakeup-latency CDF, the per-CPU timeline, newidle
    /// balances and groups scanned per domain over time) with their data
    /// (plot-data.json, which `fairsim plot` draws again). With compare: the CDF per
    /// feature set and the metrics as bars with error bars.
    #[arg(long, value_name = "DIR")]
    pub(crate) plot: Option<PathBuf>,

    /// Write rt-app's per-thread log files (rt-app-NAME-IDX-IDX.log, one line per phase
    /// pass, rt-app v1.0's columns) into DIR.
    #[arg(long, value_name = "DIR")]
    rtapp_log: Option<PathBuf>,
}

/// The run specification `args` describe (for `fairsim compare`, which varies its
/// features and seed).
/// `kernel`, when given, replaces `--kernel` and the scenario's key (compare's
/// `--base-kernel`/`--new-kernel`); `note` receives the workloads' notes.
pub(crate) fn resolve_spec(
    args: &RunArgs,
    kernel: Option<Kernel>,
    note: &mut dyn FnMut(String),
) -> Result<RunSpec, CliError> {
    // compare runs many seeds and prints one table: per-run outputs have no place there.
    for (given, name) in [
        (args.profile, "--profile"),
        (args.json.is_some(), "--json"),
        (args.schedstat.is_some(), "--schedstat"),
        (args.schedstat_sg_scan, "--schedstat-sg-scan"),
        (args.schedstat_version.is_some(), "--schedstat-version"),
        (args.check_determinism, "--check-determinism"),
        (args.trace.is_some(), "--trace"),
        (args.trace_text.is_some(), "--trace-text"),
        (args.trace_window.is_some(), "--trace-window"),
        (args.rtapp_log.is_some(), "--rtapp-log"),
    ] {
        if given {
            return Err(CliError::msg(format!(
                "{name}: not available with compare, which prints one table over many runs; allowed: `fairsim run {name}` for one run (compare's table has perf-newidle_balance-% and perf-update_sd_lb_stats-%)"
            )));
        }
    }
    if args.features.is_some() {
        return Err(CliError::msg(
            "--features: not available with compare, whose sides have their own; allowed: --base LIST and --new LIST",
        ));
    }
    let mut plan = resolve_for(args, kernel, note)?.0;
    // compare's --plot draws from the runs' counters; it traces no events.
    plan.spec.config.trace = None;
    // A scenario's per-run keys would be dropped just as the options would.
    for (given, key) in [
        (plan.json.is_some(), "json"),
        (plan.schedstat.is_some(), "schedstat"),
        (plan.features_given, "features"),
    ] {
        if given {
            return Err(CliError::msg(format!(
                "scenario key {key}: not available with compare, which prints one table over many runs; allowed: a scenario without {key} (compare's sides take --base and --new)"
            )));
        }
    }
    Ok(plan.spec)
}

/// Everything resolved from the arguments and the scenario.
struct Plan {
    spec: RunSpec,
    schedstat: Option<(PathBuf, SchedstatVersion)>,
    json: Option<PathBuf>,
    /// Whether the options or the scenario set features (compare refuses them).
    features_given: bool,
}

/// Prints a workload's note on stderr, as `run` and `compare` do once per command.
pub(crate) fn print_note(note: String) {
    eprintln!("fairsim: note: {note}");
}

/// The run specification of one point of `fairsim sweep`, whose plan has already refused
/// the per-run outputs (`--json`, `--trace`, ...): exactly what `fairsim run` with the
/// same arguments would run. The workloads' notes are returned rather than printed, so
/// that a sweep says each once for all its points.
pub(crate) fn resolve_point(args: &RunArgs) -> Result<(RunSpec, Vec<String>), CliError> {
    let mut notes = Vec::new();
    let plan = resolve(args, &mut |n| notes.push(n))?.0;
    Ok((plan.spec, notes))
}

/// `fairsim run`'s arguments as a clap command of their own, with the CLI's rule that
/// option values may start with `-`: `fairsim sweep` parses each point's argument vector
/// with it, so that a point means what the same `fairsim run` command line means.
pub(crate) fn run_args_command() -> clap::Command {
    use clap::Args;
    crate::hyphen_values(RunArgs::augment_args(
        clap::Command::new("fairsim run").no_binary_name(true),
    ))
}

/// Parses `fairsim run`'s arguments from `argv` (without the program and command names).
pub(crate) fn parse_run_args(argv: &[String]) -> Result<RunArgs, clap::Error> {
    use clap::FromArgMatches;
    let matches = run_args_command().try_get_matches_from(argv)?;
    RunArgs::from_arg_matches(&matches)
}

fn resolve(args: &RunArgs, note: &mut dyn FnMut(String)) -> Result<(Plan, bool), CliError> {
    resolve_for(args, None, note)
}

/// The kernel of a run: `kernel` (compare's side), else `--kernel`, else the scenario's
/// key, else 6.12.
fn resolve_kernel(
    args: &RunArgs,
    scenario: &Scenario,
    kernel: Option<Kernel>,
) -> Result<Kernel, CliError> {
    if let Some(k) = kernel {
        return Ok(k);
    }
    match (&args.kernel, &scenario.kernel) {
        (Some(t), _) => Kernel::parse(t).map_err(|e| CliError::msg(e.to_string())),
        (None, Some(t)) => Kernel::parse(t).map_err(|e| {
            CliError::msg(e.to_string().replacen("--kernel", "scenario key kernel", 1))
        }),
        (None, None) => Ok(Kernel::default()),
    }
}

/// Whether `kernel` had the cpuidle governor `c` (every kernel had menu; `none` is no
/// driver at all).
fn kernel_has_cpuidle(kernel: Kernel, c: Cpuidle) -> bool {
    if c == Cpuidle::None {
        return true;
    }
    // `cpuidle_governors` lists the names first, then what came later in parentheses.
    let names = kernel.cpuidle_governors();
    let names = names.split(" (").next().unwrap_or(names);
    names.split(", ").any(|n| n == c.name())
}

fn resolve_for(
    args: &RunArgs,
    kernel: Option<Kernel>,
    note: &mut dyn FnMut(String),
) -> Result<(Plan, bool), CliError> {
    let scenario = match &args.scenario {
        Some(p) => Scenario::load(p)?,
        None => Scenario::default(),
    };
    // The kernel first: the features, util_est form, schedstat version and the governors
    // allowed all depend on it.
    let kernel = resolve_kernel(args, &scenario, kernel)?;
    let base = args.scenario.as_deref().and_then(Path::parent);
    let mut machine_args = args.machine.clone();
    let no_machine = machine_args.topology.is_none()
        && machine_args.smp.is_none()
        && machine_args.machine.is_none()
        && machine_args.sysfs.is_none();
    if no_machine {
        machine_args.topology = scenario.topology.clone();
        machine_args.smp = scenario.smp.clone();
        if machine_args.numa_distance.is_none() {
            machine_args.numa_distance = scenario.numa_distance.clone();
        }
        machine_args.machine = scenario
            .machine
            .as_ref()
            .map(|m| base.map_or_else(|| PathBuf::from(m), |b| b.join(m)));
    }
    let mut machine = machine_args.load()?;
    super::costs::apply_speed(&mut machine, &scenario.speed, &args.speeds)?;
    let cpusets = if args.cpusets.is_empty() {
        parse_cpusets(machine.nr_cpus(), &scenario.cpusets, "scenario key cpusets")?
    } else {
        parse_cpusets(machine.nr_cpus(), &args.cpusets, "--cpuset")?
    };

    let mut texts: Vec<String> = scenario.workload.clone();
    texts.extend(args.workloads.iter().cloned());
    let builtin = texts.is_empty() && args.scenario.is_none();
    if builtin {
        texts.push(BUILTIN_WORKLOAD.to_string());
    }
    let workloads = texts
        .iter()
        .map(|w| WorkloadSpec::parse(w))
        .collect::<Result<Vec<_>, _>>()?;
    // Said once per command: compare resolves its arguments once for all its runs.
    for n in workloads.iter().flat_map(WorkloadSpec::notes) {
        note(n);
    }

    let features = match args.features.as_ref().or(scenario.features.as_ref()) {
        Some(f) => Features::parse_for(kernel, f)?,
        None => kernel.features(),
    };
    let util_est = match args.util_est.as_ref().or(scenario.util_est.as_ref()) {
        Some(s) => {
            let m = UtilEstMode::parse(s)
                .ok_or_else(|| invalid("--util-est", s, UtilEstMode::NAMES))?;
            if m.enabled() && !kernel.has_feature(Feature::UTIL_EST) {
                return Err(CliError::msg(format!(
                    "--util-est: Linux {} had no util_est; allowed: off, or --kernel 4.16 (seed 003's patch, with --features UTIL_EST), 6.5 or 6.12",
                    kernel.name()
                )));
            }
            // 4.16's util_est is seed 003's patch, off unless the features turn it on:
            // a form given without it would be dropped without a word.
            if m.enabled()
                && !features.has(Feature::UTIL_EST)
                && !kernel.features().has(Feature::UTIL_EST)
            {
                return Err(CliError::msg(format!(
                    "--util-est: Linux {}'s util_est (seed 003's patch) is off by default, so '{s}' would not run; allowed: off, or '{s}' with --features UTIL_EST",
                    kernel.name()
                )));
            }
            m
        }
        None => kernel.util_est(),
    };
    let hz = args.hz.or(scenario.hz).unwrap_or(250);
    if ![100, 250, 300, 1000].contains(&hz) {
        return Err(invalid("--hz", hz, "100, 250, 300 or 1000"));
    }
    let duration = match args.duration.as_ref().or(scenario.duration.as_ref()) {
        Some(d) => {
            let ns = parse_duration_with_unit(d)
                .map_err(|e| CliError::msg(format!("--duration: {e}")))?;
            if ns == 0 || ns > 24 * 3_600 * SEC {
                return Err(invalid(
                    "--duration",
                    d,
                    "more than 0 and at most 86400s (24 hours)",
                ));
            }
            ns
        }
        None if builtin => BUILTIN_DURATION,
        None => default_duration(&workloads),
    };
    let cost_table = super::costs::resolve_costs(
        args.cost_table.as_ref(),
        scenario.costs.as_ref(),
        &machine,
        &machine_args.source(),
    )?;
    let mut cost = cost_table.table();
    for (name, value) in &scenario.cost {
        cost.apply(&format!("{name}={value}"))?;
    }
    for c in &args.costs {
        cost.apply(c)?;
    }
    let timer_slack = match args.timer_slack.as_ref().or(scenario.timer_slack.as_ref()) {
        Some(s) => {
            let ns = parse_duration_with_unit(s)
                .map_err(|e| CliError::msg(format!("--timer-slack: {e}")))?;
            if ns > SEC {
                return Err(invalid("--timer-slack", s, "a duration of at most 1s"));
            }
            ns
        }
        None => DEFAULT_TIMER_SLACK,
    };
    let timer_expiry = match args
        .timer_expiry
        .as_ref()
        .or(scenario.timer_expiry.as_ref())
    {
        Some(s) => TimerExpiry::parse(s)
            .ok_or_else(|| invalid("--timer-expiry", s, "hard, mid or soft"))?,
        None => TimerExpiry::Hard,
    };
    let idle_given = args.idle_states.as_ref().or(scenario.idle_states.as_ref());
    let idle_states = match (idle_given, &machine.idle_states) {
        (Some(spec), _) => {
            fairsim_cpuidle::parse_idle_states_with(spec, machine.nr_cpus(), cost.idle_exit)
                .map_err(|e| CliError::msg(e.to_string()))?
        }
        (None, Some(spec)) => {
            fairsim_cpuidle::parse_idle_states_with(spec, machine.nr_cpus(), cost.idle_exit)
                .map_err(|e| CliError::msg(format!("machine {}: idle_states: {e}", machine.name)))?
        }
        (None, None) => fairsim_cpuidle::flat(cost.idle_exit, machine.nr_cpus()),
    };
    let cpuidle = match args.cpuidle.as_ref().or(scenario.cpuidle.as_ref()) {
        Some(s) => Cpuidle::parse(s).ok_or_else(|| invalid("--cpuidle", s, Cpuidle::NAMES))?,
        // The haltpoll driver asks for its own governor (`.governor = "haltpoll"`).
        None if idle_states.tables.iter().all(|t| t.driver == "haltpoll") => Cpuidle::Haltpoll,
        None => Cpuidle::Menu,
    };
    if !kernel_has_cpuidle(kernel, cpuidle) {
        let had = kernel.cpuidle_governors();
        return Err(CliError::msg(
            if args.cpuidle.is_some() || scenario.cpuidle.is_some() {
                format!(
                    "--cpuidle: Linux {} had no {} governor; allowed: {had} or none",
                    kernel.name(),
                    cpuidle.name()
                )
            } else {
                format!(
                    "--idle-states: the haltpoll states ask for the haltpoll governor, which Linux {} lacked; allowed: --cpuidle {had} or none, or other idle states",
                    kernel.name()
                )
            },
        ));
    }
    if cpuidle == Cpuidle::None {
        if let Some(spec) = idle_given {
            return Err(CliError::msg(format!(
                "--idle-states: '{spec}' cannot apply with --cpuidle none (no cpuidle driver); allowed: --cpuidle menu, teo or haltpoll, or no --idle-states"
            )));
        }
    }
    let noise = match args.noise.as_ref().or(scenario.noise.as_ref()) {
        Some(s) => NoiseModel::parse(s)
            .ok_or_else(|| invalid("--noise", s, "on, off or a spread from 0 to 1"))?,
        None => NoiseModel::DEFAULT,
    };
    let warmup = match args.warmup.as_ref().or(scenario.warmup.as_ref()) {
        Some(s) => {
            let ns =
                parse_duration_with_unit(s).map_err(|e| CliError::msg(format!("--warmup: {e}")))?;
            if ns >= duration {
                return Err(invalid(
                    "--warmup",
                    s,
                    &format!(
                        "a duration shorter than the run ({})",
                        fairsim_engine::time::format_duration(duration)
                    ),
                ));
            }
            ns
        }
        None => 0,
    };
    let version = match (&args.schedstat_version, scenario.schedstat_version) {
        (Some(v), _) => SchedstatVersion::parse(v)
            .ok_or_else(|| invalid("--schedstat-version", v, "15, 16 or 17"))?,
        (None, Some(v)) => SchedstatVersion::parse(&v.to_string())
            .ok_or_else(|| invalid("schedstat_version", v, "15, 16 or 17"))?,
        (None, None) => match kernel.schedstat_version() {
            15 => SchedstatVersion::V15,
            _ => SchedstatVersion::V16,
        },
    };
    let schedstat = args
        .schedstat
        .clone()
        .or_else(|| scenario.schedstat.as_ref().map(PathBuf::from))
        .map(|p| (p, version));
    let json = args
        .json
        .clone()
        .or_else(|| scenario.json.as_ref().map(PathBuf::from));
    let memory_budget = match args.memory_budget {
        Some(0) => return Err(invalid("--memory-budget", 0, "a size in MiB above 0")),
        Some(m) => m.saturating_mul(1 << 20),
        None => DEFAULT_MEMORY_BUDGET,
    };
    let launch = match args.launch_cpu.as_ref().or(scenario.launch_cpu.as_ref()) {
        Some(text) => Launch::parse(text, machine.nr_cpus())?,
        None => Launch::Cpu(0),
    };
    let governor = match args.governor.as_ref().or(scenario.governor.as_ref()) {
        Some(text) => {
            let g = Governor::parse(text).map_err(|e| CliError::msg(format!("--governor: {e}")))?;
            if machine.cpufreq.is_empty() {
                return Err(CliError::msg(format!(
                    "--governor: machine {} has no cpufreq policies; allowed: a machine with frequency domains (--topology rk3399, or a machine file's [[cpufreq]] tables)",
                    machine.name
                )));
            }
            Some(g)
        }
        None => None,
    };
    if !kernel.has_schedutil() {
        // The engine gives a machine with cpufreq schedutil unless told otherwise
        // (`Governor::DEFAULT`).
        let k = kernel.name();
        match governor {
            Some(Governor::Schedutil { .. }) => {
                return Err(CliError::msg(format!(
                    "--governor: Linux {k} had no schedutil (it came in 4.7); allowed: performance, powersave or userspace:KHZ"
                )))
            }
            None if !machine.cpufreq.is_empty() => {
                return Err(CliError::msg(format!(
                    "--governor: machine {}'s cpufreq policies default to schedutil, which Linux {k} lacked (it came in 4.7); allowed: --governor performance, powersave or userspace:KHZ",
                    machine.name
                )))
            }
            _ => {}
        }
    }
    let config = WorldConfig {
        params: SchedParams {
            features,
            hz,
            util_est,
            ..SchedParams::default()
        },
        cost,
        cost_table,
        duration,
        seed: args
            .seed
            .or(scenario.seed)
            .unwrap_or(fairsim_engine::rng::DEFAULT_SEED),
        timer_slack,
        timer_expiry,
        cpuidle,
        idle_states: Some(idle_states),
        check_invariants: args.check_invariants,
        noise,
        warmup,
        trace: None,
        launch,
        governor,
        rtapp_log: args.rtapp_log.is_some(),
    };
    let mut spec = RunSpec {
        cpusets,
        machine,
        build: BuildOptions {
            shared_all_non_numa: args.ilb_sd_share,
            ..BuildOptions::default()
        },
        workloads,
        config,
        memory_budget,
    };
    let window = match &args.trace_window {
        Some(w) => {
            let (a, b) = fairsim_engine::trace::parse_window(w).map_err(CliError::msg)?;
            if a >= duration {
                return Err(invalid(
                    "--trace-window",
                    w,
                    &format!(
                        "a window that starts before the run's end ({})",
                        fairsim_engine::time::format_duration(duration)
                    ),
                ));
            }
            Some((a, b.min(duration)))
        }
        None => None,
    };
    if window.is_some() && args.trace.is_none() && args.trace_text.is_none() && args.plot.is_none()
    {
        return Err(CliError::msg(
            "--trace-window: nothing to trace; allowed: with --trace FILE, --trace-text FILE or --plot DIR",
        ));
    }
    let tracing = args.trace.is_some() || args.trace_text.is_some();
    spec.config.trace = super::plots::trace_config(&spec, window, tracing, args.plot.is_some());
    Ok((
        Plan {
            spec,
            schedstat,
            json,
            features_given: args.features.is_some() || scenario.features.is_some(),
        },
        builtin,
    ))
}

pub(crate) fn write_file(path: &Path, what: &str, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::output(format!("{what} {}: {e}", path.display())))
}

/// Refuses `--json` (or `--check-determinism`, which renders the JSON of two runs and
/// keeps both) when the rendered document would take the run past its memory budget;
/// the run itself is checked by `prepare`.
fn check_json_budget(plan: &Plan, twice: bool) -> Result<(), CliError> {
    if plan.json.is_none() && !twice {
        return Ok(());
    }
    let one = estimate_run_memory(&plan.spec).saturating_add(estimate_json_memory(&plan.spec));
    let need = if twice { one.saturating_mul(2) } else { one };
    if need > plan.spec.memory_budget {
        let field = if twice {
            "--check-determinism"
        } else {
            "--json"
        };
        return Err(CliError::msg(format!(
            "{field}: the run and its JSON results need about {} MiB, more than the {} MiB budget; allowed: a run without {field}, a smaller machine, or a larger --memory-budget",
            need >> 20,
            plan.spec.memory_budget >> 20
        )));
    }
    Ok(())
}

/// Writes `--trace` (Perfetto) and `--trace-text` (ftrace text) from the run's trace.
fn write_traces(args: &RunArgs, trace: &fairsim_engine::trace::Trace) -> Result<(), CliError> {
    type Writer = fn(&fairsim_engine::trace::Trace, &mut dyn Write) -> std::io::Result<()>;
    let outputs: [(&Option<PathBuf>, &str, Writer); 2] = [
        (
            &args.trace,
            "--trace",
            fairsim_engine::trace::perfetto::write_perfetto,
        ),
        (
            &args.trace_text,
            "--trace-text",
            fairsim_engine::trace::ftrace::write_ftrace_text,
        ),
    ];
    for (path, what, write) in outputs {
        let Some(path) = path else { continue };
        let fail = |e: std::io::Error| CliError::output(format!("{what} {}: {e}", path.display()));
        let file = std::fs::File::create(path).map_err(fail)?;
        let mut w = std::io::BufWriter::new(file);
        write(trace, &mut w).map_err(fail)?;
        w.flush().map_err(fail)?;
    }
    Ok(())
}

/// Runs `fairsim run`.
pub fn run(args: &RunArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (plan, builtin) = resolve(args, &mut print_note)?;
    if builtin {
        writeln!(out, "{BUILTIN_EXPLANATION}")?;
    }
    check_json_budget(&plan, args.check_determinism)?;
    super::rtapp_log::check(args.rtapp_log.as_deref(), &plan.spec)?;
    let started = std::time::Instant::now();
    let mut result = super::progress::execute(&plan.spec)?;
    let wall = started.elapsed();
    // The JSON document is built only when something reads it: on a machine with many
    // NUMA levels it is gigabytes.
    let json_text = if args.check_determinism || plan.json.is_some() {
        serde_json::to_string_pretty(&to_json(&plan.spec, &result))?
    } else {
        String::new()
    };
    if args.check_determinism {
        let again = super::progress::execute(&plan.spec)?;
        let second = serde_json::to_string_pretty(&to_json(&plan.spec, &again))?;
        if second != json_text {
            return Err(CliError::msg(
                "--check-determinism: the two runs' JSON results differ (a determinism bug; please report it)",
            ));
        }
    }
    out.write_all(summary(&plan.spec, &result).as_bytes())?;
    if args.profile {
        let title = format!(
            "profile of {} CPUs over {}",
            result.world.cpus.len(),
            fairsim_engine::time::format_duration(result.world.window_ns())
        );
        writeln!(out)?;
        out.write_all(result.world.profile(None).render(&title).as_bytes())?;
    }
    if args.check_determinism {
        writeln!(
            out,
            "determinism: OK (two runs, identical JSON, {} bytes)",
            json_text.len()
        )?;
    }
    if let Some((path, version)) = &plan.schedstat {
        let text = show_schedstat_with(
            &result.world.sched,
            result.world.now().0,
            *version,
            args.schedstat_sg_scan,
        );
        write_file(path, "--schedstat", &text)?;
    }
    if let Some(path) = &plan.json {
        write_file(path, "--json", &(json_text + "\n"))?;
    }
    if let Some(dir) = &args.rtapp_log {
        super::rtapp_log::write(dir, &plan.spec, &result)?;
    }
    let trace = result.world.take_trace();
    if let Some(trace) = &trace {
        write_traces(args, trace)?;
    }
    if let Some(dir) = &args.plot {
        let data = super::plots::run_plot(&plan.spec, &result.world, trace.as_ref());
        for p in super::plots::write(dir, &data)? {
            eprintln!("fairsim: wrote {}", p.display());
        }
    }
    let secs = wall.as_secs_f64().max(1e-9);
    let emulated = result.world.now().0 as f64 / 1e9;
    eprintln!(
        "fairsim: emulated {emulated:.3}s in {secs:.2}s wall ({:.2} emulated s/s, {:.0} events/s)",
        emulated / secs,
        result.world.events() as f64 / secs
    );
    Ok(())
}
