//! `fairsim run`: run workloads on an emulated machine in virtual time and print what the
//! tools would have printed, plus the scheduler's side of it (issue #4).
//!
//! Options come from the command line and, optionally, a scenario TOML file; the command
//! line wins. With no arguments at all, a built-in scenario runs and is explained first.

use std::io::Write;
use std::path::{Path, PathBuf};

use fairsim_balance::schedstat::{show_schedstat_with, SchedstatVersion};
use fairsim_balance::Kernel;
use fairsim_des::time::SEC;
use fairsim_output::{summary, to_json};
use fairsim_workloads::resolve::{resolve_kernel, resolve_run, Resolved, RunOptions};
use fairsim_workloads::run::{estimate_json_memory, estimate_run_memory, RunSpec};
use fairsim_workloads::scenario::Scenario;

mod args;

/// Output files are written through `outputs`, so that `rtapp_log` and `race` need not
/// reach back into `run`; `compare` still names the function here.
pub(crate) use super::outputs::write_file;
use crate::error::{invalid, CliError};
pub(crate) use args::RunArgs;
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

/// The line a run without a workload but with other options prints: the built-in
/// explanation's machine and length need not hold, so it names only the workload.
const BUILTIN_WITH_OPTIONS: &str = "\
No workload given: running the built-in one, schbench:m=2,t=8,c=10ms,s=10ms (seed 001's
wakeup-latency benchmark), with the options given (3 emulated seconds unless --duration
says otherwise); `fairsim run` alone explains it, --workload names another.
";

/// Whether `args` are `fairsim run` alone: the built-in explanation, which names the
/// machine and the length, is true only then. clap's own defaults are the reference, so
/// an option set to its default value counts as given only if it changes nothing.
fn no_options(args: &RunArgs) -> bool {
    parse_run_args(&[]).is_ok_and(|bare| format!("{bare:?}") == format!("{args:?}"))
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
        (args.schedstat.is_some(), "--schedstat"),
        (args.schedstat_sg_scan, "--schedstat-sg-scan"),
        (args.schedstat_version.is_some(), "--schedstat-version"),
        (args.check_determinism, "--check-determinism"),
        (args.trace.is_some(), "--trace"),
        (args.trace_text.is_some(), "--trace-text"),
        (args.trace_text_format.is_some(), "--trace-text-format"),
        (args.trace_dat.is_some(), "--trace-dat"),
        (args.trace_events.is_some(), "--trace-events"),
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
    let kernel = resolve_kernel(args.kernel.as_deref(), &scenario, kernel)?;
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
    let machine = machine_args.load()?;
    let builtin =
        scenario.workload.is_empty() && args.workloads.is_empty() && args.scenario.is_none();
    let opts = run_options(args, builtin);
    let Resolved {
        mut spec,
        features_given,
    } = resolve_run(
        &scenario,
        &opts,
        kernel,
        machine,
        &machine_args.source(),
        note,
    )?;
    let duration = spec.config.duration;
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
    // A layout option with no file to lay out would be dropped without a word, as
    // `--trace-window` without a trace is not.
    if schedstat.is_none() {
        for (given, name) in [
            (args.schedstat_sg_scan, "--schedstat-sg-scan"),
            (args.schedstat_version.is_some(), "--schedstat-version"),
            (
                scenario.schedstat_version.is_some(),
                "scenario key schedstat_version",
            ),
        ] {
            if given {
                return Err(CliError::msg(format!(
                    "{name}: no schedstat file to write; allowed: with --schedstat FILE (or the scenario key schedstat)"
                )));
            }
        }
    }
    let json = args
        .json
        .clone()
        .or_else(|| scenario.json.as_ref().map(PathBuf::from));
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
                        fairsim_des::time::format_duration(duration)
                    ),
                ));
            }
            Some((a, b.min(duration)))
        }
        None => None,
    };
    super::report::parse_reports(&args.report)?;
    text_layout(args)?;
    if window.is_some()
        && args.trace.is_none()
        && args.trace_text.is_none()
        && args.trace_dat.is_none()
        && args.plot.is_none()
        && args.report.is_empty()
    {
        return Err(CliError::msg(
            "--trace-window: nothing to trace; allowed: with --trace FILE, --trace-text FILE, --trace-dat FILE, --report KIND or --plot DIR",
        ));
    }
    let tracing = args.trace.is_some()
        || args.trace_text.is_some()
        || args.trace_dat.is_some()
        || !args.report.is_empty();
    let pelt = trace_events(args)?;
    spec.config.trace = super::plots::trace_config(&spec, window, tracing, args.plot.is_some());
    if let Some(cfg) = spec.config.trace.as_mut() {
        cfg.pelt = pelt;
    }
    Ok((
        Plan {
            spec,
            schedstat,
            json,
            features_given,
        },
        builtin,
    ))
}

/// The library's [`RunOptions`] from `run`'s arguments; the built-in scenario adds its
/// workload and run length.
fn run_options(args: &RunArgs, builtin: bool) -> RunOptions {
    let mut workloads = args.workloads.clone();
    if builtin {
        workloads.push(BUILTIN_WORKLOAD.to_string());
    }
    RunOptions {
        workloads,
        cpusets: args.cpusets.clone(),
        cgroups: args.cgroups.clone(),
        features: args.features.clone(),
        duration: args.duration.clone(),
        seed: args.seed,
        hz: args.hz,
        util_est: args.util_est.clone(),
        cost_table: args.cost_table.clone(),
        costs: args.costs.clone(),
        speeds: args.speeds.clone(),
        timer_slack: args.timer_slack.clone(),
        launch_cpu: args.launch_cpu.clone(),
        timer_expiry: args.timer_expiry.clone(),
        cpuidle: args.cpuidle.clone(),
        idle_states: args.idle_states.clone(),
        governor: args.governor.clone(),
        noise: args.noise.clone(),
        warmup: args.warmup.clone(),
        ilb_sd_share: args.ilb_sd_share,
        sysctls: args.sysctls.clone(),
        debugfs: args.debugfs.clone(),
        check_invariants: args.check_invariants,
        memory_budget_mib: args.memory_budget,
        rtapp_log: args.rtapp_log.is_some(),
        default_duration: builtin.then_some(BUILTIN_DURATION),
    }
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

/// `--trace-events LIST`: whether it asks for the load-tracking events (`pelt`, the only
/// set today); refused without a text or trace.dat trace to hold them.
fn trace_events(args: &RunArgs) -> Result<bool, CliError> {
    let Some(list) = &args.trace_events else {
        return Ok(false);
    };
    for set in list.split(',') {
        if set != "pelt" {
            return Err(CliError::msg(format!(
                "--trace-events: invalid value '{set}'; allowed: pelt (the sched_tp load-tracking events), comma-separated"
            )));
        }
    }
    if args.trace_text.is_none() && args.trace_dat.is_none() {
        return Err(CliError::msg(
            "--trace-events: no trace to add them to (the Perfetto file leaves them out); allowed: with --trace-text FILE or --trace-dat FILE",
        ));
    }
    Ok(true)
}

/// `--trace-text-format`'s layout (ftrace when not given); refused without
/// `--trace-text`, which it would not change.
fn text_layout(args: &RunArgs) -> Result<fairsim_trace::TextLayout, CliError> {
    let Some(text) = &args.trace_text_format else {
        return Ok(fairsim_trace::TextLayout::Ftrace);
    };
    let layout = fairsim_trace::TextLayout::parse(text).map_err(CliError::msg)?;
    if args.trace_text.is_none() {
        return Err(CliError::msg(
            "--trace-text-format: no text trace to lay out; allowed: with --trace-text FILE",
        ));
    }
    Ok(layout)
}

/// Writes `--trace` (Perfetto), `--trace-text` (ftrace text or trace-cmd report's
/// layouts) and `--trace-dat` (trace-cmd's trace.dat) from the run's trace.
fn write_traces(args: &RunArgs, trace: &fairsim_trace::Trace) -> Result<(), CliError> {
    type Writer = fn(&fairsim_trace::Trace, &mut dyn Write) -> std::io::Result<()>;
    let text: Writer = match text_layout(args)? {
        fairsim_trace::TextLayout::Ftrace => fairsim_trace::ftrace::write_ftrace_text,
        fairsim_trace::TextLayout::TraceCmd => fairsim_trace::tracecmd::write_report,
        fairsim_trace::TextLayout::TraceCmdRaw => fairsim_trace::tracecmd::write_report_raw,
    };
    let outputs: [(&Option<PathBuf>, &str, Writer); 3] = [
        (
            &args.trace,
            "--trace",
            fairsim_trace::perfetto::write_perfetto,
        ),
        (&args.trace_text, "--trace-text", text),
        (
            &args.trace_dat,
            "--trace-dat",
            fairsim_trace::tracedat::write_trace_dat,
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
pub(crate) fn run(args: &RunArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (plan, builtin) = resolve(args, &mut print_note)?;
    if builtin && no_options(args) {
        writeln!(out, "{BUILTIN_EXPLANATION}")?;
    } else if builtin {
        writeln!(out, "{BUILTIN_WITH_OPTIONS}")?;
    }
    check_json_budget(&plan, args.check_determinism)?;
    super::rtapp_log::check(args.rtapp_log.as_deref(), &plan.spec)?;
    run_outputs(args, &plan).check()?;
    super::progress::watch_interrupts();
    let mode = super::progress::Mode::detect(args.progress);
    let started = std::time::Instant::now();
    let executed = super::progress::execute(&plan.spec, mode)?;
    let wall = started.elapsed();
    let stopped = executed
        .interrupted
        .then(|| executed.result.outcome.now().0);
    let mut result = executed.result;
    if let Some(at) = stopped {
        // A run stopped before its window opened, or one of two determinism runs, has
        // nothing to show.
        if at <= plan.spec.config.warmup || args.check_determinism {
            super::progress::exit_interrupted(
                out,
                &format!(
                    "stopped at {} of {} emulated; nothing written",
                    fairsim_des::time::format_duration(at),
                    fairsim_des::time::format_duration(plan.spec.config.duration)
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
            result.outcome.cpus().len(),
            fairsim_des::time::format_duration(result.outcome.window_ns())
        );
        writeln!(out)?;
        out.write_all(result.outcome.profile(None).render(&title).as_bytes())?;
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
            result.outcome.sched(),
            result.outcome.now().0,
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
    let trace = result.outcome.take_trace();
    if let Some(trace) = &trace {
        write_traces(args, trace)?;
    }
    if let Some(dir) = &args.plot {
        let data = super::plots::run_plot(&plan.spec, &result.outcome, trace.as_ref());
        for p in super::plots::write(dir, &data)? {
            eprintln!("fairsim: wrote {}", p.display());
        }
    }
    if let Some(trace) = &trace {
        let reports = super::report::parse_reports(&args.report)?;
        super::report::print_run_reports(&reports, trace, out)?;
    }
    let secs = wall.as_secs_f64().max(1e-9);
    let emulated = result.outcome.now().0 as f64 / 1e9;
    eprintln!(
        "fairsim: emulated {emulated:.3}s in {secs:.2}s wall ({:.2} emulated s/s, {:.0} events/s)",
        emulated / secs,
        result.outcome.events() as f64 / secs
    );
    if let Some(at) = stopped {
        super::progress::exit_interrupted(
            out,
            &format!(
                "stopped at {} of {} emulated; the outputs above cover the run up to then",
                fairsim_des::time::format_duration(at),
                fairsim_des::time::format_duration(plan.spec.config.duration)
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
    .file("--trace-dat", args.trace_dat.as_deref())
    .dir("--plot", args.plot.as_deref())
    .dir("--rtapp-log", args.rtapp_log.as_deref());
    add_inputs(&mut o, args, &plan.spec);
    o
}

/// The files a run reads, which none of its outputs may overwrite: the scenario, the
/// machine file and every rt-app file.
pub(crate) fn add_inputs(o: &mut super::outputs::Outputs, args: &RunArgs, spec: &RunSpec) {
    o.input("scenario file", args.scenario.as_deref())
        .input("machine file", args.machine.machine.as_deref());
    for w in &spec.workloads {
        if let fairsim_workloads::Workload::Rtapp(r) = &w.workload {
            o.input("rt-app file", Some(std::path::Path::new(&r.file)));
        }
    }
}
