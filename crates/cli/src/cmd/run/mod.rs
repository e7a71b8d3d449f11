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
use fairsim_engine::balance::{Feature, Features, Kernel, SchedParams, TunablePlace, Tunables};
use fairsim_engine::cgroup::Cgroups;
use fairsim_engine::output::{summary, to_json};
use fairsim_engine::run::{
    default_duration, estimate_json_memory, estimate_run_memory, RunSpec, DEFAULT_MEMORY_BUDGET,
};
use fairsim_engine::scenario::Scenario;
use fairsim_engine::time::{parse_duration_with_unit, SEC};
use fairsim_engine::world::{Launch, DEFAULT_TIMER_SLACK};
use fairsim_engine::{Cpuidle, NoiseModel, TimerExpiry, WorkloadSpec, WorldConfig};
use fairsim_topology::{parse_cpusets, BuildOptions};

mod args;

/// Output files are written through `outputs`, so that `rtapp_log` and `race` need not
/// reach back into `run`; `compare` still names the function here.
pub(crate) use super::outputs::write_file;
use crate::error::{invalid, CliError};
pub use args::RunArgs;
pub(crate) use args::{parse_run_args, run_args_command};

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
        (args.schedstat.is_some(), "--schedstat"),
        (args.schedstat_sg_scan, "--schedstat-sg-scan"),
        (args.schedstat_version.is_some(), "--schedstat-version"),
        (args.check_determinism, "--check-determinism"),
        (args.trace.is_some(), "--trace"),
        (args.trace_text.is_some(), "--trace-text"),
        (!args.report.is_empty(), "--report"),
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
        // compare's own --json (the table) takes the option; the scenario's key is a run's.
        (plan.json.is_some() && args.json.is_none(), "json"),
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
    if !args.report.is_empty() {
        return Err(CliError::msg(
            "--report: not available in a sweep, whose points write files; allowed: `fairsim run --report KIND` for one run",
        ));
    }
    let mut notes = Vec::new();
    let plan = resolve(args, &mut |n| notes.push(n))?.0;
    Ok((plan.spec, notes))
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

/// The run's tunable writes, checked against `kernel`: the scenario's `[sysctl]` and
/// `[debugfs]` tables (in key order), then `--sysctl` and `--debugfs` (in the order
/// given).
fn resolve_tunables(
    args: &RunArgs,
    scenario: &Scenario,
    kernel: Kernel,
) -> Result<Tunables, CliError> {
    use fairsim_engine::scenario::tunable_writes;
    let mut t = Tunables::default();
    for (place, key, writes) in [
        (
            TunablePlace::Sysctl,
            "sysctl",
            tunable_writes(&scenario.sysctl),
        ),
        (
            TunablePlace::Debugfs,
            "debugfs",
            tunable_writes(&scenario.debugfs),
        ),
    ] {
        for w in writes {
            t.write(kernel, place, &w).map_err(|e| {
                CliError::msg(e.to_string().replacen(
                    place.option(),
                    &format!("scenario table [{key}]"),
                    1,
                ))
            })?;
        }
    }
    for (place, writes) in [
        (TunablePlace::Sysctl, &args.sysctls),
        (TunablePlace::Debugfs, &args.debugfs),
    ] {
        for w in writes {
            t.write(kernel, place, w)
                .map_err(|e| CliError::msg(e.to_string()))?;
        }
    }
    Ok(t)
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
    if args.ilb_sd_share {
        note(super::features::ILB_SD_SHARE_NOTE.to_string());
    }
    let tunables = resolve_tunables(args, &scenario, kernel)?;
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
    let cgroups = Cgroups::from_sources(&scenario.cgroup, &args.cgroups)?;
    let config = WorldConfig {
        params: SchedParams {
            features,
            hz,
            util_est,
            tunables,
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
        cgroups,
    };
    let mut spec = RunSpec {
        cpusets,
        machine,
        build: BuildOptions {
            // A feature declared to change the domains sets them up itself.
            shared_all_non_numa: args.ilb_sd_share || features.shares_all_non_numa(),
            ..BuildOptions::default()
        },
        workloads,
        config,
        memory_budget,
    };
    // The era and every workload's cgroup= are checked now, before any output is
    // opened (`prepare` checks them again for the library's callers).
    fairsim_engine::run::resolve_cgroups(&spec)?;
    let window = match &args.trace_window {
        Some(w) => {
            let (a, b) =
                fairsim_trace::parse_window(w).map_err(|e| CliError::msg(e.to_string()))?;
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
    super::report::parse_reports(&args.report)?;
    if window.is_some()
        && args.trace.is_none()
        && args.trace_text.is_none()
        && args.plot.is_none()
        && args.report.is_empty()
    {
        return Err(CliError::msg(
            "--trace-window: nothing to trace; allowed: with --trace FILE, --trace-text FILE, --report KIND or --plot DIR",
        ));
    }
    let tracing = args.trace.is_some() || args.trace_text.is_some() || !args.report.is_empty();
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
fn write_traces(args: &RunArgs, trace: &fairsim_trace::Trace) -> Result<(), CliError> {
    type Writer = fn(&fairsim_trace::Trace, &mut dyn Write) -> std::io::Result<()>;
    let outputs: [(&Option<PathBuf>, &str, Writer); 2] = [
        (
            &args.trace,
            "--trace",
            fairsim_trace::perfetto::write_perfetto,
        ),
        (
            &args.trace_text,
            "--trace-text",
            fairsim_trace::ftrace::write_ftrace_text,
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
    run_outputs(args, &plan).check()?;
    super::progress::watch_interrupts();
    let mode = super::progress::Mode::detect(args.progress);
    let started = std::time::Instant::now();
    let executed = super::progress::execute(&plan.spec, mode)?;
    let wall = started.elapsed();
    let stopped = executed.interrupted.then(|| executed.result.world.now().0);
    let mut result = executed.result;
    if let Some(at) = stopped {
        // A run stopped before its window opened, or one of two determinism runs, has
        // nothing to show.
        if at <= plan.spec.config.warmup || args.check_determinism {
            super::progress::exit_interrupted(
                out,
                &format!(
                    "stopped at {} of {} emulated; nothing written",
                    fairsim_engine::time::format_duration(at),
                    fairsim_engine::time::format_duration(plan.spec.config.duration)
                ),
            );
        }
    }
    // The JSON document is built only when something reads it: on a machine with many
    // NUMA levels it is gigabytes.
    let json_text = if args.check_determinism || plan.json.is_some() {
        serde_json::to_string_pretty(&to_json(&plan.spec, &result))?
    } else {
        String::new()
    };
    if args.check_determinism {
        let again = super::progress::execute(&plan.spec, mode)?;
        if again.interrupted {
            super::progress::exit_interrupted(out, "during the second run; nothing written");
        }
        let second = serde_json::to_string_pretty(&to_json(&plan.spec, &again.result))?;
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
    if let Some(trace) = &trace {
        let reports = super::report::parse_reports(&args.report)?;
        super::report::print_run_reports(&reports, trace, out)?;
    }
    let secs = wall.as_secs_f64().max(1e-9);
    let emulated = result.world.now().0 as f64 / 1e9;
    eprintln!(
        "fairsim: emulated {emulated:.3}s in {secs:.2}s wall ({:.2} emulated s/s, {:.0} events/s)",
        emulated / secs,
        result.world.events() as f64 / secs
    );
    if let Some(at) = stopped {
        super::progress::exit_interrupted(
            out,
            &format!(
                "stopped at {} of {} emulated; the outputs above cover the run up to then",
                fairsim_engine::time::format_duration(at),
                fairsim_engine::time::format_duration(plan.spec.config.duration)
            ),
        );
    }
    Ok(())
}

/// Every file and directory `fairsim run` will write, named by the option (or scenario
/// key) that asked for it, for the check before the run.
fn run_outputs(args: &RunArgs, plan: &Plan) -> super::outputs::Outputs {
    let key = |given: bool, flag: &'static str, key: &'static str| {
        if given {
            flag
        } else {
            key
        }
    };
    let mut o = super::outputs::Outputs::new();
    o.file(
        key(args.json.is_some(), "--json", "scenario key json"),
        plan.json.as_deref(),
    )
    .file(
        key(
            args.schedstat.is_some(),
            "--schedstat",
            "scenario key schedstat",
        ),
        plan.schedstat.as_ref().map(|(p, _)| p.as_path()),
    )
    .file("--trace", args.trace.as_deref())
    .file("--trace-text", args.trace_text.as_deref())
    .dir("--plot", args.plot.as_deref())
    .dir("--rtapp-log", args.rtapp_log.as_deref());
    o
}
