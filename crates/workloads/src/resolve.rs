//! From a scenario and a run's options to the [`RunSpec`] the engine runs: the library
//! form of what `fairsim run`, `compare` and every point of `sweep` resolve before they
//! run, so that a library user or a bench gets exactly the CLI's run without clap.
//!
//! An option beats the scenario's key, which beats the kernel's or the machine's own
//! default. The checks run in one fixed order (kernel, machine speeds, cpusets,
//! workloads, features, tunables, util_est, hz, duration, costs, timers, idle, noise,
//! warm-up, memory, launch CPU, cpufreq governor, cgroups), so that of several mistakes
//! the same one is reported first whoever calls. Each error names the option as the
//! command line spells it, since that is where a user fixes it.

use fairsim_balance::cpufreq::Governor;
use fairsim_balance::features::FeatureError;
use fairsim_balance::kernel::UnknownKernel;
use fairsim_balance::tunables::{Place as TunablePlace, TunableError};
use fairsim_balance::{Feature, Features, Kernel, SchedParams, Tunables};
use fairsim_cpuidle::IdleSpecError;
use fairsim_pelt::UtilEstMode;
use fairsim_topology::{parse_cpusets, BuildOptions, Machine, TopologyError};

use crate::run::{default_duration, RunSpec, DEFAULT_MEMORY_BUDGET};
use crate::scenario::{tunable_writes, Scenario};
use crate::tools::{speed_key, speed_kinds};
use crate::WorkloadSpec;
use fairsim_des::time::{format_duration, parse_duration_with_unit, DurationError, SEC};
use fairsim_engine::cost::{CostError, CostTableName};
use fairsim_engine::error::EngineError;
use fairsim_engine::noise::NoiseModel;
use fairsim_engine::world::{Cpuidle, Launch, TimerExpiry, WorldConfig, DEFAULT_TIMER_SLACK};

/// What `--speed` takes besides its entries: dropping the machine's table.
const SPEED_NONE: &str = "none";

/// The note `--ilb-sd-share` gets: the features that need the shared domain object now
/// set it up themselves.
pub const ILB_SD_SHARE_NOTE: &str = "--ilb-sd-share is deprecated and will go: ILB_SNAPSHOT, ILB_UTIL and ILB_FAST give every non-NUMA domain its sched_domain_shared themselves (seed 000 patch 1/7); the option still builds it here";

/// A run's options, each as the user gave it (the command line's text, before any
/// parsing); `None` or empty leaves it to the scenario, then to the default. The names
/// are the command line's options.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// `--workload`, added after the scenario's `workload` list.
    pub workloads: Vec<String>,
    /// `--cpuset`, which replaces the scenario's `cpusets`.
    pub cpusets: Vec<String>,
    /// `--cgroup`, applied after the scenario's `[cgroup."/PATH"]` tables.
    pub cgroups: Vec<String>,
    /// `--features`.
    pub features: Option<String>,
    /// `--duration`.
    pub duration: Option<String>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--hz`.
    pub hz: Option<u32>,
    /// `--util-est`.
    pub util_est: Option<String>,
    /// `--costs`: the named cost table.
    pub cost_table: Option<String>,
    /// `--cost NAME=DURATION`, applied after the scenario's `[cost]` table.
    pub costs: Vec<String>,
    /// `--speed`, applied after the scenario's `speed` entries.
    pub speeds: Vec<String>,
    /// `--timer-slack`.
    pub timer_slack: Option<String>,
    /// `--launch-cpu`.
    pub launch_cpu: Option<String>,
    /// `--timer-expiry`.
    pub timer_expiry: Option<String>,
    /// `--cpuidle`.
    pub cpuidle: Option<String>,
    /// `--idle-states`.
    pub idle_states: Option<String>,
    /// `--governor`.
    pub governor: Option<String>,
    /// `--noise`.
    pub noise: Option<String>,
    /// `--warmup`.
    pub warmup: Option<String>,
    /// `--ilb-sd-share`.
    pub ilb_sd_share: bool,
    /// `--sysctl`, written after the scenario's `[sysctl]` table.
    pub sysctls: Vec<String>,
    /// `--debugfs`, written after the scenario's `[debugfs]` table.
    pub debugfs: Vec<String>,
    /// `--check-invariants`.
    pub check_invariants: bool,
    /// `--memory-budget`, in MiB.
    pub memory_budget_mib: Option<u64>,
    /// Whether rt-app's per-activation logs are kept (`--rtapp-log`).
    pub rtapp_log: bool,
    /// The run length when neither the options nor the scenario give one (the built-in
    /// scenario's); `None` leaves it to the workloads ([`default_duration`]).
    pub default_duration: Option<u64>,
}

/// A resolved run.
#[derive(Debug)]
pub struct Resolved {
    /// What the engine runs.
    pub spec: RunSpec,
    /// Whether the options or the scenario set features (compare refuses them, since its
    /// sides bring their own).
    pub features_given: bool,
}

/// Why a run's options and scenario do not make a run. Every message names the option
/// (or the scenario key) and what is allowed.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// `--kernel` names no kernel fairsim has.
    #[error("{0}")]
    KernelOption(UnknownKernel),
    /// The scenario's `kernel` key names no kernel fairsim has.
    #[error("{}", .0.to_string().replacen("--kernel", "scenario key kernel", 1))]
    KernelKey(UnknownKernel),
    /// A `--sysctl` or `--debugfs` write the kernel refuses.
    #[error("{0}")]
    TunableOption(TunableError),
    /// A write of the scenario's `[sysctl]` or `[debugfs]` table the kernel refuses.
    #[error("{}", .error.to_string().replacen(.place.option(), &format!("scenario table [{}]", .table), 1))]
    TunableKey {
        /// Where the write goes.
        place: TunablePlace,
        /// The scenario table (`sysctl` or `debugfs`).
        table: &'static str,
        /// The kernel's refusal.
        error: TunableError,
    },
    /// A duration that does not parse.
    #[error("{field}: {error}")]
    Duration {
        /// The option.
        field: &'static str,
        /// Why.
        error: DurationError,
    },
    /// `--util-est` on a kernel without util_est.
    #[error("--util-est: Linux {kernel} had no util_est; allowed: off, or --kernel 4.16 (seed 003's patch, with --features UTIL_EST), 6.5 or 6.12")]
    NoUtilEst {
        /// The kernel's name.
        kernel: &'static str,
    },
    /// A util_est form on 4.16, whose util_est is a patch that is off by default.
    #[error("--util-est: Linux {kernel}'s util_est (seed 003's patch) is off by default, so '{form}' would not run; allowed: off, or '{form}' with --features UTIL_EST")]
    UtilEstOff {
        /// The kernel's name.
        kernel: &'static str,
        /// The form given.
        form: String,
    },
    /// Idle states that do not parse or do not fit the machine.
    #[error("{}{error}", .machine.as_ref().map(|m| format!("machine {m}: idle_states: ")).unwrap_or_default())]
    IdleStates {
        /// The machine, when its own file gave the states (`None` for `--idle-states`).
        machine: Option<String>,
        /// Why.
        error: IdleSpecError,
    },
    /// A cpuidle governor the kernel lacked.
    #[error("--cpuidle: Linux {kernel} had no {governor} governor; allowed: {had} or none")]
    NoCpuidleGovernor {
        /// The kernel's name.
        kernel: &'static str,
        /// The governor asked for.
        governor: &'static str,
        /// The governors the kernel had.
        had: &'static str,
    },
    /// haltpoll's idle states, which ask for a governor the kernel lacked.
    #[error("--idle-states: the haltpoll states ask for the haltpoll governor, which Linux {kernel} lacked; allowed: --cpuidle {had} or none, or other idle states")]
    NoHaltpoll {
        /// The kernel's name.
        kernel: &'static str,
        /// The governors the kernel had.
        had: &'static str,
    },
    /// Idle states with no cpuidle driver to enter them.
    #[error("--idle-states: '{spec}' cannot apply with --cpuidle none (no cpuidle driver); allowed: --cpuidle menu, teo or haltpoll, or no --idle-states")]
    IdleStatesWithoutDriver {
        /// The states given.
        spec: String,
    },
    /// A cpufreq governor that does not parse.
    #[error("--governor: {0}")]
    Governor(fairsim_balance::cpufreq::GovernorError),
    /// A cpufreq governor on a machine without frequency domains.
    #[error("--governor: machine {machine} has no cpufreq policies; allowed: a machine with frequency domains (--topology rk3399, or a machine file's [[cpufreq]] tables)")]
    NoCpufreq {
        /// The machine's name.
        machine: String,
    },
    /// schedutil asked of a kernel before 4.7.
    #[error("--governor: Linux {kernel} had no schedutil (it came in 4.7); allowed: performance, powersave or userspace:KHZ")]
    NoSchedutil {
        /// The kernel's name.
        kernel: &'static str,
    },
    /// A machine whose policies default to schedutil, on a kernel before 4.7.
    #[error("--governor: machine {machine}'s cpufreq policies default to schedutil, which Linux {kernel} lacked (it came in 4.7); allowed: --governor performance, powersave or userspace:KHZ")]
    SchedutilDefault {
        /// The machine's name.
        machine: String,
        /// The kernel's name.
        kernel: &'static str,
    },
    /// The machine's side: a cpuset list or a speed entry.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// A feature set the kernel refuses.
    #[error(transparent)]
    Features(#[from] FeatureError),
    /// A `--cost` or scenario `[cost]` override.
    #[error(transparent)]
    Cost(#[from] CostError),
    /// What the engine refuses: a value out of range, workloads, the launch CPU, cgroups,
    /// the machine's cost table.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// A value out of its range, as the engine's own [`EngineError::Invalid`] says it.
fn invalid(field: &str, got: impl std::fmt::Display, allowed: &str) -> ResolveError {
    ResolveError::Engine(EngineError::Invalid {
        field: field.to_string(),
        got: got.to_string(),
        allowed: allowed.to_string(),
    })
}

/// The kernel of a run: `forced` (compare's side), else `option` (`--kernel`), else the
/// scenario's key, else 6.12.
pub fn resolve_kernel(
    option: Option<&str>,
    scenario: &Scenario,
    forced: Option<Kernel>,
) -> Result<Kernel, ResolveError> {
    if let Some(k) = forced {
        return Ok(k);
    }
    match (option, &scenario.kernel) {
        (Some(t), _) => Kernel::parse(t).map_err(ResolveError::KernelOption),
        (None, Some(t)) => Kernel::parse(t).map_err(ResolveError::KernelKey),
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
    opts: &RunOptions,
    scenario: &Scenario,
    kernel: Kernel,
) -> Result<Tunables, ResolveError> {
    let mut t = Tunables::default();
    for (place, table, writes) in [
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
            t.write(kernel, place, &w)
                .map_err(|error| ResolveError::TunableKey {
                    place,
                    table,
                    error,
                })?;
        }
    }
    for (place, writes) in [
        (TunablePlace::Sysctl, &opts.sysctls),
        (TunablePlace::Debugfs, &opts.debugfs),
    ] {
        for w in writes {
            t.write(kernel, place, w)
                .map_err(ResolveError::TunableOption)?;
        }
    }
    Ok(t)
}

/// The cost table a run starts from: `--costs`, else the scenario's `costs`, else the
/// machine's own ([`CostTableName::of_machine`]), else `x86-2020s`.
pub fn resolve_costs(
    option: Option<&str>,
    scenario: Option<&str>,
    machine: &Machine,
    machine_source: &str,
) -> Result<CostTableName, ResolveError> {
    let given = option
        .map(|s| ("--costs", s))
        .or_else(|| scenario.map(|s| ("scenario key costs", s)));
    match given {
        Some((field, name)) => CostTableName::parse(name).ok_or_else(|| {
            invalid(
                field,
                name,
                &format!(
                    "{}; per-constant overrides go to --cost NAME=DURATION",
                    CostTableName::NAMES
                ),
            )
        }),
        None => Ok(CostTableName::of_machine(machine, machine_source)?),
    }
}

/// Applies the scenario's `speed` entries, then `--speed`'s, to the machine's speed
/// table: each `KIND=LIST:SPEED,...` replaces the table's entry for its kind (under
/// whichever alias the table wrote it), and `none` drops every entry given so far, the
/// machine's included, so that the run's work goes at capacity.
pub fn apply_speed(
    machine: &mut Machine,
    scenario: &[String],
    option: &[String],
) -> Result<(), ResolveError> {
    let entries = scenario
        .iter()
        .map(|s| ("scenario key speed", s))
        .chain(option.iter().map(|s| ("--speed", s)));
    for (field, spec) in entries {
        if spec.trim() == SPEED_NONE {
            machine.speed.clear();
            continue;
        }
        let (kind, speeds) =
            fairsim_topology::SpeedTable::parse_option(spec, machine.nr_cpus(), field)?;
        let Some(key) = speed_key(&kind) else {
            return Err(invalid(
                field,
                &kind,
                &format!("{}; or none", speed_kinds()),
            ));
        };
        let same: Vec<String> = machine
            .speed
            .iter()
            .filter(|(k, _)| speed_key(k) == Some(key))
            .map(|(k, _)| k.to_string())
            .collect();
        for k in same {
            machine.speed.remove(&k);
        }
        machine.speed.insert(key, speeds);
    }
    Ok(())
}

/// A duration option: `--duration`, `--timer-slack` or `--warmup`.
fn duration(field: &'static str, text: &str) -> Result<u64, ResolveError> {
    parse_duration_with_unit(text).map_err(|error| ResolveError::Duration { field, error })
}

/// The run that `scenario` and `opts` describe on `machine` (already loaded, the
/// scenario's machine keys applied; `machine_source` names where it came from, as the
/// command line would) under `kernel`. `note` receives the workloads' notes, and
/// `--ilb-sd-share`'s, in the order the CLI prints them.
pub fn resolve_run(
    scenario: &Scenario,
    opts: &RunOptions,
    kernel: Kernel,
    mut machine: Machine,
    machine_source: &str,
    note: &mut dyn FnMut(String),
) -> Result<Resolved, ResolveError> {
    apply_speed(&mut machine, &scenario.speed, &opts.speeds)?;
    let cpusets = if opts.cpusets.is_empty() {
        parse_cpusets(machine.nr_cpus(), &scenario.cpusets, "scenario key cpusets")?
    } else {
        parse_cpusets(machine.nr_cpus(), &opts.cpusets, "--cpuset")?
    };

    let workloads = scenario
        .workload
        .iter()
        .chain(&opts.workloads)
        .map(|w| WorkloadSpec::parse(w))
        .collect::<Result<Vec<_>, _>>()?;
    let sudo = scenario
        .workload
        .iter()
        .chain(&opts.workloads)
        .filter_map(|w| crate::cmdline::sudo_note(w));
    for n in sudo.chain(workloads.iter().flat_map(WorkloadSpec::notes)) {
        note(n);
    }

    let features = match opts.features.as_ref().or(scenario.features.as_ref()) {
        Some(f) => Features::parse_for(kernel, f)?,
        None => kernel.features(),
    };
    if opts.ilb_sd_share {
        note(ILB_SD_SHARE_NOTE.to_string());
    }
    let tunables = resolve_tunables(opts, scenario, kernel)?;
    let util_est = resolve_util_est(opts, scenario, kernel, features)?;
    let hz = opts.hz.or(scenario.hz).unwrap_or(250);
    if ![100, 250, 300, 1000].contains(&hz) {
        return Err(invalid("--hz", hz, "100, 250, 300 or 1000"));
    }
    let duration_ns = resolve_duration(opts, scenario, &workloads)?;
    let cost_table = resolve_costs(
        opts.cost_table.as_deref(),
        scenario.costs.as_deref(),
        &machine,
        machine_source,
    )?;
    let mut cost = cost_table.table();
    for (name, value) in &scenario.cost {
        cost.apply(&format!("{name}={value}"))?;
    }
    for c in &opts.costs {
        cost.apply(c)?;
    }
    let (timer_slack, timer_expiry) = resolve_timers(opts, scenario)?;
    let (idle_states, cpuidle) = resolve_idle(opts, scenario, kernel, &machine, cost.idle_exit)?;
    let noise = match opts.noise.as_ref().or(scenario.noise.as_ref()) {
        Some(s) => NoiseModel::parse(s)
            .ok_or_else(|| invalid("--noise", s, "on, off or a spread from 0 to 1"))?,
        None => NoiseModel::DEFAULT,
    };
    let warmup = resolve_warmup(opts, scenario, duration_ns)?;
    let memory_budget = match opts.memory_budget_mib {
        Some(0) => return Err(invalid("--memory-budget", 0, "a size in MiB above 0")),
        Some(m) => m.saturating_mul(1 << 20),
        None => DEFAULT_MEMORY_BUDGET,
    };
    let launch = match opts.launch_cpu.as_ref().or(scenario.launch_cpu.as_ref()) {
        Some(text) => Launch::parse(text, machine.nr_cpus())?,
        None => Launch::Cpu(0),
    };
    let governor = resolve_governor(opts, scenario, kernel, &machine)?;
    let cgroups = crate::cgroups::from_sources(&scenario.cgroup, &opts.cgroups)?;
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
        duration: duration_ns,
        seed: opts
            .seed
            .or(scenario.seed)
            .unwrap_or(fairsim_des::rng::DEFAULT_SEED),
        timer_slack,
        timer_expiry,
        cpuidle,
        idle_states: Some(idle_states),
        check_invariants: opts.check_invariants,
        noise,
        warmup,
        trace: None,
        launch,
        governor,
        rtapp_log: opts.rtapp_log,
        cgroups,
    };
    let spec = RunSpec {
        cpusets,
        machine: machine.into(),
        build: BuildOptions {
            // A feature declared to change the domains sets them up itself.
            shared_all_non_numa: opts.ilb_sd_share || features.shares_all_non_numa(),
            ..BuildOptions::default()
        },
        workloads,
        config,
        memory_budget,
    };
    // The era and every workload's cgroup= are checked now, before any output is
    // opened (`prepare` checks them again).
    crate::run::resolve_cgroups(&spec)?;
    Ok(Resolved {
        spec,
        features_given: opts.features.is_some() || scenario.features.is_some(),
    })
}

/// `--util-est`, checked against the kernel (4.16's util_est is a patch that is off by
/// default) and the features already resolved.
fn resolve_util_est(
    opts: &RunOptions,
    scenario: &Scenario,
    kernel: Kernel,
    features: Features,
) -> Result<UtilEstMode, ResolveError> {
    let util_est = match opts.util_est.as_ref().or(scenario.util_est.as_ref()) {
        Some(s) => {
            let m = UtilEstMode::parse(s)
                .ok_or_else(|| invalid("--util-est", s, UtilEstMode::NAMES))?;
            if m.enabled() && !kernel.has_feature(Feature::UTIL_EST) {
                return Err(ResolveError::NoUtilEst {
                    kernel: kernel.name(),
                });
            }
            // 4.16's util_est is seed 003's patch, off unless the features turn it on:
            // a form given without it would be dropped without a word.
            if m.enabled()
                && !features.has(Feature::UTIL_EST)
                && !kernel.features().has(Feature::UTIL_EST)
            {
                return Err(ResolveError::UtilEstOff {
                    kernel: kernel.name(),
                    form: s.clone(),
                });
            }
            m
        }
        None => kernel.util_est(),
    };
    Ok(util_est)
}

/// `--duration`, else the built-in scenario's, else the workloads' own.
fn resolve_duration(
    opts: &RunOptions,
    scenario: &Scenario,
    workloads: &[WorkloadSpec],
) -> Result<u64, ResolveError> {
    let duration_ns = match opts.duration.as_ref().or(scenario.duration.as_ref()) {
        Some(d) => {
            let ns = duration("--duration", d)?;
            if ns == 0 || ns > 24 * 3_600 * SEC {
                return Err(invalid(
                    "--duration",
                    d,
                    "more than 0 and at most 86400s (24 hours)",
                ));
            }
            ns
        }
        None => opts
            .default_duration
            .unwrap_or_else(|| default_duration(workloads)),
    };
    Ok(duration_ns)
}

/// `--timer-slack` and `--timer-expiry`.
fn resolve_timers(
    opts: &RunOptions,
    scenario: &Scenario,
) -> Result<(u64, TimerExpiry), ResolveError> {
    let timer_slack = match opts.timer_slack.as_ref().or(scenario.timer_slack.as_ref()) {
        Some(s) => {
            let ns = duration("--timer-slack", s)?;
            if ns > SEC {
                return Err(invalid("--timer-slack", s, "a duration of at most 1s"));
            }
            ns
        }
        None => DEFAULT_TIMER_SLACK,
    };
    let timer_expiry = match opts
        .timer_expiry
        .as_ref()
        .or(scenario.timer_expiry.as_ref())
    {
        Some(s) => TimerExpiry::parse(s)
            .ok_or_else(|| invalid("--timer-expiry", s, "hard, mid or soft"))?,
        None => TimerExpiry::Hard,
    };
    Ok((timer_slack, timer_expiry))
}

/// The idle states (`--idle-states`, else the machine's, else one flat state) and the
/// cpuidle governor, checked against the kernel.
fn resolve_idle(
    opts: &RunOptions,
    scenario: &Scenario,
    kernel: Kernel,
    machine: &Machine,
    idle_exit: u64,
) -> Result<(fairsim_cpuidle::IdleStates, Cpuidle), ResolveError> {
    let idle_given = opts.idle_states.as_ref().or(scenario.idle_states.as_ref());
    let idle_states =
        match (idle_given, &machine.idle_states) {
            (Some(spec), _) => {
                fairsim_cpuidle::parse_idle_states_with(spec, machine.nr_cpus(), idle_exit)
                    .map_err(|error| ResolveError::IdleStates {
                        machine: None,
                        error,
                    })?
            }
            (None, Some(spec)) => {
                fairsim_cpuidle::parse_idle_states_with(spec, machine.nr_cpus(), idle_exit)
                    .map_err(|error| ResolveError::IdleStates {
                        machine: Some(machine.name.clone()),
                        error,
                    })?
            }
            (None, None) => fairsim_cpuidle::flat(idle_exit, machine.nr_cpus()),
        };
    let cpuidle = match opts.cpuidle.as_ref().or(scenario.cpuidle.as_ref()) {
        Some(s) => Cpuidle::parse(s).ok_or_else(|| invalid("--cpuidle", s, Cpuidle::NAMES))?,
        // The haltpoll driver asks for its own governor (`.governor = "haltpoll"`).
        None if idle_states.tables.iter().all(|t| t.driver == "haltpoll") => Cpuidle::Haltpoll,
        None => Cpuidle::Menu,
    };
    if !kernel_has_cpuidle(kernel, cpuidle) {
        let had = kernel.cpuidle_governors();
        return Err(if opts.cpuidle.is_some() || scenario.cpuidle.is_some() {
            ResolveError::NoCpuidleGovernor {
                kernel: kernel.name(),
                governor: cpuidle.name(),
                had,
            }
        } else {
            ResolveError::NoHaltpoll {
                kernel: kernel.name(),
                had,
            }
        });
    }
    if cpuidle == Cpuidle::None {
        if let Some(spec) = idle_given {
            return Err(ResolveError::IdleStatesWithoutDriver { spec: spec.clone() });
        }
    }
    Ok((idle_states, cpuidle))
}

/// `--warmup`, which must end before the run does.
fn resolve_warmup(
    opts: &RunOptions,
    scenario: &Scenario,
    duration_ns: u64,
) -> Result<u64, ResolveError> {
    let warmup = match opts.warmup.as_ref().or(scenario.warmup.as_ref()) {
        Some(s) => {
            let ns = duration("--warmup", s)?;
            if ns >= duration_ns {
                return Err(invalid(
                    "--warmup",
                    s,
                    &format!(
                        "a duration shorter than the run ({})",
                        format_duration(duration_ns)
                    ),
                ));
            }
            ns
        }
        None => 0,
    };
    Ok(warmup)
}

/// `--governor`, checked against the machine's policies and the kernel (schedutil came
/// in 4.7).
fn resolve_governor(
    opts: &RunOptions,
    scenario: &Scenario,
    kernel: Kernel,
    machine: &Machine,
) -> Result<Option<Governor>, ResolveError> {
    let governor = match opts.governor.as_ref().or(scenario.governor.as_ref()) {
        Some(text) => {
            let g = Governor::parse(text).map_err(ResolveError::Governor)?;
            if machine.cpufreq.is_empty() {
                return Err(ResolveError::NoCpufreq {
                    machine: machine.name.clone(),
                });
            }
            Some(g)
        }
        None => None,
    };
    if !kernel.has_schedutil() {
        // The engine gives a machine with cpufreq schedutil unless told otherwise
        // (`Governor::DEFAULT`).
        match governor {
            Some(Governor::Schedutil { .. }) => {
                return Err(ResolveError::NoSchedutil {
                    kernel: kernel.name(),
                })
            }
            None if !machine.cpufreq.is_empty() => {
                return Err(ResolveError::SchedutilDefault {
                    machine: machine.name.clone(),
                    kernel: kernel.name(),
                })
            }
            _ => {}
        }
    }
    Ok(governor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairsim_topology::source::preset;

    fn tc2() -> Machine {
        preset("tc2").unwrap()
    }

    #[test]
    fn the_option_beats_the_scenario_which_beats_the_machine() {
        let m = tc2();
        assert_eq!(
            resolve_costs(None, None, &m, "t").unwrap(),
            CostTableName::Arm2013
        );
        assert_eq!(
            resolve_costs(None, Some("x86-2020s"), &m, "t").unwrap(),
            CostTableName::X86_2020s
        );
        assert_eq!(
            resolve_costs(Some("arm-2013"), Some("x86-2020s"), &m, "t").unwrap(),
            CostTableName::Arm2013
        );
        let e = resolve_costs(Some("wakeup=1us"), None, &m, "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--costs") && e.contains("--cost NAME="), "{e}");
    }

    #[test]
    fn speed_entries_replace_and_none_clears() {
        let mut m = tc2();
        apply_speed(&mut m, &[], &["sysbench-cpu=0-4:700".into()]).unwrap();
        assert_eq!(m.speed.get("sysbench"), Some(&[700; 5][..]));
        assert_eq!(m.speed.iter().count(), 1);
        apply_speed(
            &mut m,
            &["hackbench=0-4:600".into()],
            &["none".into(), "*=0-4:512".into()],
        )
        .unwrap();
        assert_eq!(m.speed.iter().count(), 1);
        assert_eq!(m.speed.get("*"), Some(&[512; 5][..]));
        for bad in ["sysbnch=0-4:1", "sysbench=0-3:1", "sysbench"] {
            let e = apply_speed(&mut tc2(), &[], &[bad.into()])
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("--speed") && e.contains("allowed"), "{e}");
        }
    }

    #[test]
    fn a_library_caller_gets_the_clis_run_from_a_scenario() {
        let scenario = Scenario::parse(
            "topology = \"tc2\"\nworkload = [\"schbench:m=1,t=2\"]\nduration = \"50ms\"\nhz = 1000\n",
        )
        .unwrap();
        let r = resolve_run(
            &scenario,
            &RunOptions {
                seed: Some(7),
                ..RunOptions::default()
            },
            Kernel::default(),
            tc2(),
            "--topology tc2",
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(r.spec.config.duration, 50 * fairsim_des::time::MS);
        assert_eq!(r.spec.config.params.hz, 1000);
        assert_eq!(r.spec.config.seed, 7);
        assert_eq!(r.spec.workloads.len(), 1);
        assert!(!r.features_given);
        let e = resolve_run(
            &scenario,
            &RunOptions {
                warmup: Some("60ms".into()),
                ..RunOptions::default()
            },
            Kernel::default(),
            tc2(),
            "--topology tc2",
            &mut |_| {},
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "--warmup: invalid value '60ms'; allowed: a duration shorter than the run (50ms)"
        );
    }
}
