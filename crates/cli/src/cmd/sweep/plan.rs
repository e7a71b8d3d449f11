//! `fairsim sweep`'s plan: the TOML schema (see the command's long help in `mod.rs`), its
//! checks, and the points it expands to.
//!
//! Every value of the plan becomes a fragment of `fairsim run`'s argument vector, so a
//! point is a `fairsim run` command line and is resolved by run's own code. What `run`
//! takes is read from run's clap definition, not from a list kept here, so an option
//! added to `run` is accepted by sweeps without a change.

use std::path::Path;

use clap::ArgAction;
use toml_edit::{Item, Value};

use super::point::{coordinates, index_width};
use crate::cmd::machine_args::DEFAULT_PRESET;
use crate::error::CliError;

/// The largest plan file read.
const MAX_PLAN_BYTES: u64 = 1 << 20;

/// The most points a plan may expand to: each gets a file, and every point is resolved
/// before the first runs.
pub(crate) const MAX_POINTS: usize = 100_000;

/// The most seeds a `seeds = N` count may ask for.
const MAX_SEEDS: i64 = 10_000;

/// Options of `fairsim run` that write per-run outputs: a sweep's point files take their
/// place. `progress` shows one run's progress, which `fairsim sweep --progress` replaces.
const OUTPUT_OPTIONS: [&str; 15] = [
    "profile",
    "json",
    "schedstat",
    "schedstat-sg-scan",
    "schedstat-version",
    "check-determinism",
    "trace",
    "trace-text",
    "trace-text-format",
    "trace-dat",
    "trace-events",
    "trace-window",
    "plot",
    "rtapp-log",
    "progress",
];

/// Options of `fairsim run` that describe the machine: they belong in `axes.machines`.
const MACHINE_OPTIONS: [&str; 10] = [
    "topology",
    "smp",
    "machine",
    "sysfs",
    "numa-distance",
    "numa-cpus",
    "capacity",
    "itmt",
    "llc",
    "arch",
];

/// How an option of `fairsim run` takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A flag: `true` gives it, `false` leaves it out.
    Flag,
    /// One value.
    One,
    /// Repeatable (`--cost`): one value or a list.
    Many,
}

/// A parsed plan: its name, the options common to every point, and its axes in the fixed
/// order machines, workloads, kernels (only when the plan has the axis), features, the
/// option axes as the plan lists them, seeds.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The plan's name (`[A-Za-z0-9.-]`), which names the default output directory.
    pub name: String,
    /// `[run]` as `fairsim run` arguments, in the plan's order.
    pub common: Vec<String>,
    /// Every axis, seeds last.
    pub axes: Vec<Axis>,
    /// How many axes come before `[run]`'s options in a point's arguments: machines,
    /// workloads, kernels when given, features.
    pub front: usize,
}

/// One axis of the plan.
#[derive(Debug, Clone)]
pub(crate) struct Axis {
    /// `machines`, `workloads`, `kernels`, `features`, `seeds` or an option of
    /// `fairsim run`.
    pub name: String,
    /// Its values in the plan's order; the first is the summary's baseline.
    pub values: Vec<AxisValue>,
}

/// One value of an axis.
#[derive(Debug, Clone)]
pub(crate) struct AxisValue {
    /// What the summary's column shows (`base`, `250`, `smt-mc-1s4c2t`).
    pub label: String,
    /// Its part of a point's key (`base`, `hz-250`, `s42`): letters, digits, `.` and `-`.
    pub key: String,
    /// Its `fairsim run` arguments.
    pub args: Vec<String>,
}

/// One point of the cartesian product.
#[derive(Debug, Clone)]
pub(crate) struct Point {
    /// Its index: seeds vary fastest, then the axes before them in reverse order.
    pub index: usize,
    /// `NNNN-<key>`, the stem of its file name.
    pub stem: String,
    /// The `fairsim run` arguments (without `fairsim run`).
    pub argv: Vec<String>,
}

/// A table's keys with their values, in the plan's order.
type Entries<'a> = Vec<&'a (String, Tv)>;

/// A TOML value in the plan's order, without positions or formatting.
#[derive(Debug, Clone)]
enum Tv {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Arr(Vec<Tv>),
    Tab(Vec<(String, Tv)>),
}

/// The one-line refusal of a plan key: `KEY: WHAT; allowed: ALLOWED`.
fn bad(key: &str, what: impl std::fmt::Display, allowed: &str) -> CliError {
    CliError::msg(format!("{key}: {what}; allowed: {allowed}"))
}

fn from_value(v: &Value, key: &str) -> Result<Tv, CliError> {
    Ok(match v {
        Value::String(s) => Tv::Str(s.value().clone()),
        Value::Integer(i) => Tv::Int(*i.value()),
        Value::Float(f) => Tv::Float(*f.value()),
        Value::Boolean(b) => Tv::Bool(*b.value()),
        Value::Datetime(_) => {
            return Err(bad(
                key,
                "a date",
                "strings, numbers, booleans, lists, tables",
            ))
        }
        Value::Array(a) => Tv::Arr(
            a.iter()
                .map(|e| from_value(e, key))
                .collect::<Result<_, _>>()?,
        ),
        Value::InlineTable(t) => Tv::Tab(
            t.iter()
                .map(|(k, e)| Ok((k.to_string(), from_value(e, &format!("{key}.{k}"))?)))
                .collect::<Result<_, CliError>>()?,
        ),
    })
}

fn from_item(item: &Item, key: &str) -> Result<Tv, CliError> {
    Ok(match item {
        Item::None => Tv::Arr(Vec::new()),
        Item::Value(v) => from_value(v, key)?,
        Item::Table(t) => Tv::Tab(
            t.iter()
                .map(|(k, e)| Ok((k.to_string(), from_item(e, &format!("{key}.{k}"))?)))
                .collect::<Result<_, CliError>>()?,
        ),
        Item::ArrayOfTables(a) => Tv::Arr(
            a.iter()
                .map(|t| from_item(&Item::Table(t.clone()), key))
                .collect::<Result<_, _>>()?,
        ),
    })
}

/// `fairsim run`'s long options and how each takes its value.
fn run_options() -> Vec<(String, Kind)> {
    let cmd = crate::cmd::run::run_args_command();
    cmd.get_arguments()
        .filter(|a| !a.is_positional())
        .filter_map(|a| {
            let long = a.get_long()?;
            if long == "help" || long == "version" {
                return None;
            }
            let kind = match a.get_action() {
                ArgAction::SetTrue => Kind::Flag,
                ArgAction::Append => Kind::Many,
                _ => Kind::One,
            };
            Some((long.to_string(), kind))
        })
        .collect()
}

/// The options a plan may set in `[run]` or as an axis, comma separated, for messages.
fn allowed_options(opts: &[(String, Kind)]) -> String {
    opts.iter()
        .filter(|(o, _)| is_sweep_option(o))
        .map(|(o, _)| o.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn is_sweep_option(o: &str) -> bool {
    !OUTPUT_OPTIONS.contains(&o)
        && !MACHINE_OPTIONS.contains(&o)
        && o != "workload"
        && o != "kernel"
        && o != "features"
        && o != "seed"
}

/// A plan key as run's option names it: `idle_states`, as a scenario file spells it, is
/// `idle-states`. Only a key whose hyphenated form is an option is rewritten, so the
/// points and their labels name each option one way whichever spelling the plan used.
fn option_name(opts: &[(String, Kind)], key: &str) -> String {
    let hyphen = key.replace('_', "-");
    if hyphen != key && opts.iter().any(|(o, _)| *o == hyphen) {
        hyphen
    } else {
        key.to_string()
    }
}

/// Checks that `key` names an option a sweep can vary or fix, and returns its kind.
fn sweep_option(opts: &[(String, Kind)], key: &str, field: &str) -> Result<Kind, CliError> {
    let Some(kind) = opts.iter().find(|(o, _)| o == key).map(|(_, k)| *k) else {
        return Err(bad(
            field,
            "not an option of fairsim run",
            &allowed_options(opts),
        ));
    };
    if key == "progress" {
        return Err(bad(
            field,
            "shows one run's progress",
            "fairsim sweep --progress, which shows the sweep's",
        ));
    }
    if OUTPUT_OPTIONS.contains(&key) {
        return Err(bad(
            field,
            "a per-run output, which a sweep does not write",
            "the run options; each point's file holds its metrics and workload results",
        ));
    }
    if MACHINE_OPTIONS.contains(&key) {
        return Err(bad(
            field,
            "describes the machine",
            "an entry of axes.machines, e.g. { name = \"box\", smp = \"sockets=2,cores=4\" }",
        ));
    }
    if key == "workload" || key == "kernel" || key == "features" {
        return Err(bad(field, "an axis of its own", &format!("axes.{key}s")));
    }
    Ok(kind)
}

/// A scalar as command-line text.
fn scalar(v: &Tv) -> Option<String> {
    match v {
        Tv::Str(s) => Some(s.clone()),
        Tv::Int(i) => Some(i.to_string()),
        Tv::Float(f) => Some(f.to_string()),
        _ => None,
    }
}

/// The arguments that give option `--name` the value `v`.
fn option_args(name: &str, kind: Kind, v: &Tv, field: &str) -> Result<Vec<String>, CliError> {
    let flag = format!("--{name}");
    match (kind, v) {
        (Kind::Flag, Tv::Bool(true)) => Ok(vec![flag]),
        (Kind::Flag, Tv::Bool(false)) => Ok(Vec::new()),
        (Kind::Flag, _) => Err(bad(field, "not a boolean", "true or false")),
        (Kind::Many, Tv::Arr(list)) if !list.is_empty() => {
            let mut out = Vec::new();
            for e in list {
                let text = scalar(e).ok_or_else(|| bad(field, "not a string", "strings"))?;
                out.extend([flag.clone(), text]);
            }
            Ok(out)
        }
        (_, v) => {
            let text = scalar(v)
                .ok_or_else(|| bad(field, "not a single value", "a string or a number"))?;
            Ok(vec![flag, text])
        }
    }
}

/// A label as a key part: letters, digits, `.` and `-` kept, runs of anything else one
/// `-`, at most 40 characters.
fn key_part(label: &str) -> String {
    let mut out = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_matches('-').chars().take(40).collect();
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "x".to_string()
    } else {
        out.to_string()
    }
}

/// Checks a name the plan gives (its own, a feature set's, a machine's, a workload's).
fn check_name(name: &str, field: &str) -> Result<(), CliError> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(bad(
            field,
            format!("invalid name '{name}'"),
            "1 to 40 letters, digits, '.' or '-'",
        ))
    }
}

fn as_table<'a>(v: &'a Tv, field: &str, allowed: &str) -> Result<&'a [(String, Tv)], CliError> {
    match v {
        Tv::Tab(t) => Ok(t),
        _ => Err(bad(field, "not a table", allowed)),
    }
}

fn as_list<'a>(v: &'a Tv, field: &str, allowed: &str) -> Result<&'a [Tv], CliError> {
    match v {
        Tv::Arr(a) if a.is_empty() => Err(bad(field, "empty", allowed)),
        Tv::Arr(a) => Ok(a),
        _ => Err(bad(field, "not a list", allowed)),
    }
}

/// An entry given as a table: its `name` and its other keys, each checked by `key_ok`.
fn named_entry<'a>(
    t: &'a [(String, Tv)],
    field: &str,
    allowed_keys: &str,
    key_ok: &dyn Fn(&str) -> bool,
) -> Result<(String, Entries<'a>), CliError> {
    let mut name = None;
    let mut rest = Vec::new();
    for kv in t {
        if kv.0 == "name" {
            match &kv.1 {
                Tv::Str(s) => name = Some(s.clone()),
                _ => return Err(bad(&format!("{field}.name"), "not a string", "a name")),
            }
        } else if key_ok(&kv.0) {
            rest.push(kv);
        } else {
            return Err(bad(
                &format!("{field}.{}", kv.0),
                "unknown key",
                allowed_keys,
            ));
        }
    }
    let name =
        name.ok_or_else(|| bad(&format!("{field}.name"), "missing", "a name for the entry"))?;
    check_name(&name, &format!("{field}.name"))?;
    Ok((name, rest))
}

fn machines_axis(v: &Tv, opts: &[(String, Kind)]) -> Result<Axis, CliError> {
    const FIELD: &str = "axes.machines";
    let allowed =
        "a list of preset names or tables { name = ..., topology|smp|machine|sysfs = ..., ... }";
    let mut values = Vec::new();
    for (i, e) in as_list(v, FIELD, allowed)?.iter().enumerate() {
        let field = format!("{FIELD}[{i}]");
        values.push(match e {
            Tv::Str(p) => AxisValue {
                label: p.clone(),
                key: key_part(p),
                args: vec!["--topology".into(), p.clone()],
            },
            Tv::Tab(t) => {
                let keys = format!("name, {}", MACHINE_OPTIONS.join(", "));
                let (name, rest) =
                    named_entry(t, &field, &keys, &|k| MACHINE_OPTIONS.contains(&k))?;
                let mut args = Vec::new();
                for (k, val) in rest {
                    let kind = opts.iter().find(|(o, _)| o == k).map_or(Kind::One, |o| o.1);
                    args.extend(option_args(k, kind, val, &format!("{field}.{k}"))?);
                }
                AxisValue {
                    key: key_part(&name),
                    label: name,
                    args,
                }
            }
            _ => return Err(bad(&field, "not a preset name or a table", allowed)),
        });
    }
    Ok(Axis {
        name: "machines".into(),
        values,
    })
}

fn workloads_axis(v: &Tv) -> Result<Axis, CliError> {
    const FIELD: &str = "axes.workloads";
    let allowed = "a list of workload specs as --workload takes them, or tables { name = ..., workload = SPEC or [SPEC, ...] }";
    let mut values = Vec::new();
    for (i, e) in as_list(v, FIELD, allowed)?.iter().enumerate() {
        let field = format!("{FIELD}[{i}]");
        values.push(match e {
            Tv::Str(s) => AxisValue {
                label: s.clone(),
                key: key_part(s),
                args: vec!["--workload".into(), s.clone()],
            },
            Tv::Tab(t) => {
                let (name, rest) = named_entry(t, &field, "name, workload", &|k| k == "workload")?;
                let spec = rest
                    .first()
                    .ok_or_else(|| bad(&format!("{field}.workload"), "missing", allowed))?;
                let args = option_args(
                    "workload",
                    Kind::Many,
                    &spec.1,
                    &format!("{field}.workload"),
                )?;
                AxisValue {
                    key: key_part(&name),
                    label: name,
                    args,
                }
            }
            _ => return Err(bad(&field, "not a workload spec or a table", allowed)),
        });
    }
    Ok(Axis {
        name: "workloads".into(),
        values,
    })
}

fn features_axis(v: &Tv) -> Result<Axis, CliError> {
    const FIELD: &str = "axes.features";
    let allowed = "a table of named feature lists, e.g. base = \"ILB_SNAPSHOT,NO_NI_RANDOM\"";
    let t = as_table(v, FIELD, allowed)?;
    if t.is_empty() {
        return Err(bad(FIELD, "empty", allowed));
    }
    let mut values = Vec::new();
    for (name, list) in t {
        let field = format!("{FIELD}.{name}");
        check_name(name, &field)?;
        let Tv::Str(list) = list else {
            return Err(bad(&field, "not a string", allowed));
        };
        values.push(AxisValue {
            label: name.clone(),
            key: name.clone(),
            args: vec!["--features".into(), list.clone()],
        });
    }
    Ok(Axis {
        name: "features".into(),
        values,
    })
}

fn kernels_axis(v: &Tv) -> Result<Axis, CliError> {
    const FIELD: &str = "axes.kernels";
    let allowed = "a list of kernels as --kernel takes them, e.g. [\"6.12\", \"4.5\"]";
    let mut values = Vec::new();
    for (i, e) in as_list(v, FIELD, allowed)?.iter().enumerate() {
        let field = format!("{FIELD}[{i}]");
        let Tv::Str(text) = e else {
            return Err(bad(&field, "not a string", allowed));
        };
        let k = fairsim_balance::Kernel::parse(text)
            .map_err(|e| CliError::msg(e.to_string().replacen("--kernel", &field, 1)))?;
        values.push(AxisValue {
            label: k.name().to_string(),
            key: format!("kernel-{}", k.name()),
            args: vec!["--kernel".into(), k.name().to_string()],
        });
    }
    Ok(Axis {
        name: "kernels".into(),
        values,
    })
}

fn seeds_axis(v: Option<&Tv>, first: u64) -> Result<Axis, CliError> {
    const FIELD: &str = "axes.seeds";
    let allowed = "a count from 1 to 10000 (seeds run.seed, run.seed+1, ...) or a list of seeds";
    let seeds: Vec<u64> = match v {
        None => vec![first],
        Some(Tv::Int(n)) if (1..=MAX_SEEDS).contains(n) => (0..*n as u64)
            .map(|k| first.checked_add(k))
            .collect::<Option<_>>()
            .ok_or_else(|| bad(FIELD, "seeds past 2^64-1", "a smaller run.seed"))?,
        Some(Tv::Int(n)) => return Err(bad(FIELD, format!("invalid count {n}"), allowed)),
        Some(list) => as_list(list, FIELD, allowed)?
            .iter()
            .map(|e| match e {
                Tv::Int(s) if *s >= 0 => Ok(*s as u64),
                _ => Err(bad(FIELD, "a seed that is not an integer from 0", allowed)),
            })
            .collect::<Result<_, _>>()?,
    };
    let values = seeds
        .iter()
        .map(|s| AxisValue {
            label: s.to_string(),
            key: format!("s{s}"),
            args: vec!["--seed".into(), s.to_string()],
        })
        .collect();
    Ok(Axis {
        name: "seeds".into(),
        values,
    })
}

fn option_axis(name: &str, kind: Kind, v: &Tv) -> Result<Axis, CliError> {
    let field = format!("axes.{name}");
    let allowed = format!("a list of values of fairsim run's --{name}");
    let mut values = Vec::new();
    for e in as_list(v, &field, &allowed)? {
        let args = option_args(name, kind, e, &field)?;
        let label = match e {
            Tv::Bool(b) => b.to_string(),
            Tv::Arr(list) => list.iter().filter_map(scalar).collect::<Vec<_>>().join(","),
            other => scalar(other).unwrap_or_default(),
        };
        // A sysctl's `kernel.sched_` says nothing the axis name does not, and would take
        // most of the key's 40 characters.
        let short = match name {
            "sysctl" => label
                .trim_start_matches("kernel.")
                .trim_start_matches("sched_"),
            _ => label.as_str(),
        };
        values.push(AxisValue {
            key: format!("{name}-{}", key_part(short)),
            label,
            args,
        });
    }
    Ok(Axis {
        name: name.to_string(),
        values,
    })
}

/// Refuses two values of one axis with the same label or key part.
fn check_distinct(axis: &Axis) -> Result<(), CliError> {
    for (i, a) in axis.values.iter().enumerate() {
        for b in &axis.values[..i] {
            if a.label == b.label || a.key == b.key {
                return Err(bad(
                    &format!("axes.{}", axis.name),
                    format!("duplicate value '{}' (key '{}')", a.label, a.key),
                    "distinct values; name table entries differently",
                ));
            }
        }
    }
    Ok(())
}

impl Plan {
    /// Reads and checks the plan file at `path`.
    pub(crate) fn load(path: &Path) -> Result<Plan, CliError> {
        let text = fairsim_topology::source::read_bounded(path, MAX_PLAN_BYTES)
            .map_err(|e| CliError::msg(format!("{}: {e}", path.display())))?;
        Plan::parse(&text).map_err(|e| e.context(&path.display().to_string()))
    }

    /// Parses and checks a plan's text.
    pub(crate) fn parse(text: &str) -> Result<Plan, CliError> {
        let doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
            let line = e.span().map_or(0, |s| {
                text[..s.start.min(text.len())].lines().count().max(1)
            });
            CliError::msg(format!(
                "line {line}: {}; allowed: TOML",
                e.message().trim()
            ))
        })?;
        let top = match from_item(doc.as_item(), "")? {
            Tv::Tab(t) => t,
            _ => Vec::new(),
        };
        let opts = run_options();
        let (mut name, mut run, mut axes) = (None, None, None);
        for (k, v) in &top {
            match k.as_str() {
                "name" => name = Some(v),
                "run" => run = Some(v),
                "axes" => axes = Some(v),
                _ => return Err(bad(k, "unknown key", "name, run, axes")),
            }
        }
        let name = match name {
            Some(Tv::Str(n)) => n.clone(),
            Some(_) => return Err(bad("name", "not a string", "a name")),
            None => return Err(bad("name", "missing", "a name for the plan")),
        };
        check_name(&name, "name")?;

        let mut common = Vec::new();
        let mut first_seed = fairsim_des::rng::DEFAULT_SEED;
        let run_keys: &[(String, Tv)] = match run {
            Some(v) => as_table(v, "run", "a table of fairsim run options")?,
            None => &[],
        };
        for (k, v) in run_keys {
            let field = format!("run.{k}");
            if k == "seed" {
                first_seed = match v {
                    Tv::Int(s) if *s >= 0 => *s as u64,
                    _ => return Err(bad(&field, "not a seed", "an integer from 0")),
                };
                continue;
            }
            let k = &option_name(&opts, k);
            let kind = sweep_option(&opts, k, &field)?;
            common.extend(option_args(k, kind, v, &field)?);
        }

        let axes_keys: &[(String, Tv)] = match axes {
            Some(v) => as_table(v, "axes", "a table of axes")?,
            None => return Err(bad("axes", "missing", "a table with at least workloads")),
        };
        let (mut machines, mut workloads, mut features, mut seeds) = (None, None, None, None);
        let mut kernels = None;
        let mut options = Vec::new();
        for (k, v) in axes_keys {
            match k.as_str() {
                "machines" => machines = Some(machines_axis(v, &opts)?),
                "workloads" => workloads = Some(workloads_axis(v)?),
                "kernels" => kernels = Some(kernels_axis(v)?),
                "features" => features = Some(features_axis(v)?),
                "seeds" => seeds = Some(v),
                "seed" => return Err(bad("axes.seed", "not an axis", "axes.seeds")),
                _ => {
                    let field = format!("axes.{k}");
                    let k = &option_name(&opts, k);
                    let kind = sweep_option(&opts, k, &field)?;
                    if run_keys.iter().any(|(r, _)| option_name(&opts, r) == *k) {
                        return Err(bad(
                            &field,
                            "also set in [run]",
                            "one of run.{k} and axes.{k}",
                        ));
                    }
                    options.push(option_axis(k, kind, v)?);
                }
            }
        }
        let machines = machines.unwrap_or_else(|| Axis {
            name: "machines".into(),
            values: vec![AxisValue {
                label: DEFAULT_PRESET.into(),
                key: DEFAULT_PRESET.into(),
                args: Vec::new(),
            }],
        });
        let workloads = workloads.ok_or_else(|| {
            bad(
                "axes.workloads",
                "missing",
                "a list of workload specs as --workload takes them",
            )
        })?;
        let features = features.unwrap_or_else(|| Axis {
            name: "features".into(),
            values: vec![AxisValue {
                label: "default".into(),
                key: "default".into(),
                args: Vec::new(),
            }],
        });
        // A plan without a kernels axis expands, and writes its plan.json, as before the
        // axis existed.
        let mut all = vec![machines, workloads];
        all.extend(kernels);
        all.push(features);
        let front = all.len();
        all.extend(options);
        all.push(seeds_axis(seeds, first_seed)?);
        for axis in &all {
            check_distinct(axis)?;
        }
        let total = all
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
            .filter(|n| *n <= MAX_POINTS);
        if total.is_none() {
            return Err(bad(
                "axes",
                "more points than a sweep takes",
                &format!("at most {MAX_POINTS} points (the product of the axes' lengths)"),
            ));
        }
        Ok(Plan {
            name,
            common,
            axes: all,
            front,
        })
    }

    /// The number of points: the product of the axes' lengths.
    pub(crate) fn len(&self) -> usize {
        self.axes.iter().map(|a| a.values.len()).product()
    }

    /// Every point in index order.
    pub(crate) fn points(&self) -> Vec<Point> {
        let total = self.len();
        let width = index_width(total);
        (0..total)
            .map(|index| {
                let coords = coordinates(
                    index,
                    &self.axes.iter().map(|a| a.values.len()).collect::<Vec<_>>(),
                );
                let values: Vec<&AxisValue> = self
                    .axes
                    .iter()
                    .zip(&coords)
                    .map(|(a, &c)| &a.values[c])
                    .collect();
                let key = values
                    .iter()
                    .map(|v| v.key.as_str())
                    .collect::<Vec<_>>()
                    .join("_");
                // Machine, workloads, kernel and features first, then the common options,
                // then the option axes and the seed, so that a point's options read as
                // the plan's layers.
                let mut argv: Vec<String> = Vec::new();
                for v in &values[..self.front] {
                    argv.extend(v.args.iter().cloned());
                }
                argv.extend(self.common.iter().cloned());
                for v in &values[self.front..] {
                    argv.extend(v.args.iter().cloned());
                }
                Point {
                    index,
                    stem: format!("{index:0width$}-{key}"),
                    argv,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::point::command_line;
    use super::*;

    const PLAN: &str = r#"
name = "t"
[run]
duration = "5ms"
cost = ["wakeup=1us"]
[axes]
machines = ["smt-mc-1s4c2t", { name = "box", smp = "sockets=1,cores=2" }]
workloads = ["schbench:m=1,t=2"]
hz = [250, 1000]
seeds = 2
[axes.features]
base = "NO_NI_RANDOM"
fast = "ILB_FAST,NO_NI_RANDOM"
"#;

    #[test]
    fn points_follow_the_fixed_axis_order_with_seeds_fastest() {
        let plan = Plan::parse(PLAN).unwrap();
        let names: Vec<&str> = plan.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["machines", "workloads", "features", "hz", "seeds"]);
        let points = plan.points();
        assert_eq!(points.len(), 16);
        assert_eq!(
            points[0].stem,
            "0000-smt-mc-1s4c2t_schbench-m-1-t-2_base_hz-250_s42"
        );
        assert_eq!(
            points[1].stem,
            "0001-smt-mc-1s4c2t_schbench-m-1-t-2_base_hz-250_s43"
        );
        assert_eq!(
            points[15].stem,
            "0015-box_schbench-m-1-t-2_fast_hz-1000_s43"
        );
        assert_eq!(
            command_line(&points[15].argv),
            "fairsim run --smp sockets=1,cores=2 --workload schbench:m=1,t=2 --features ILB_FAST,NO_NI_RANDOM --duration 5ms --cost wakeup=1us --hz 1000 --seed 43"
        );
    }

    /// Issue 50 row 8: a scenario file's spelling (`idle_states`) names the same option
    /// as run's (`idle-states`), and the points name it one way.
    #[test]
    fn a_scenario_files_spelling_names_the_same_option() {
        let plan = |key: &str| {
            let text = format!(
                "name = \"t\"\n[run]\ntimer_slack = \"1us\"\n[axes]\nworkloads = [\"a\"]\n{key} = [\"spr\"]\n"
            );
            let points = Plan::parse(&text).unwrap().points();
            (points[0].stem.clone(), command_line(&points[0].argv))
        };
        assert_eq!(plan("idle_states"), plan("idle-states"));
        let (stem, argv) = plan("idle_states");
        assert!(
            argv.contains("--timer-slack 1us --idle-states spr"),
            "{argv}"
        );
        assert!(stem.contains("idle-states-spr"), "{stem}");
    }

    #[test]
    fn a_kernels_axis_comes_before_the_features() {
        let plan = Plan::parse(
            "name = \"k\"\n[axes]\nworkloads = [\"schbench\"]\nkernels = [\"6.12\", \"v4.5\"]\n",
        )
        .unwrap();
        let names: Vec<&str> = plan.axes.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            ["machines", "workloads", "kernels", "features", "seeds"]
        );
        let points = plan.points();
        assert_eq!(points.len(), 2);
        assert_eq!(
            points[1].stem,
            "0001-numa-2s4c2t_schbench_kernel-4.5_default_s42"
        );
        assert_eq!(
            command_line(&points[1].argv),
            "fairsim run --workload schbench --kernel 4.5 --seed 42"
        );
        for (text, want) in [
            (
                "kernels = [\"5.10\"]",
                "axes.kernels[0]: unknown kernel '5.10'",
            ),
            ("kernels = [\"4.5\", \"4.5.0\"]", "axes.kernels: duplicate"),
            (
                "kernel = [\"4.5\"]",
                "axes.kernel: an axis of its own; allowed: axes.kernels",
            ),
        ] {
            let text = format!("name = \"t\"\n[axes]\nworkloads = [\"a\"]\n{text}");
            let err = format!("{:?}", Plan::parse(&text).unwrap_err());
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn bad_plans_name_their_key() {
        let cases = [
            (
                "name = \"t\"\nfoo = 1\n[axes]\nworkloads = [\"x\"]",
                "foo: unknown key",
            ),
            (
                "name = \"t\"\n[axes]\nworkloads = []",
                "axes.workloads: empty",
            ),
            (
                "name = \"t\"\n[axes]\nworkloads = [\"a\", \"a\"]",
                "axes.workloads: duplicate",
            ),
            (
                "name = \"t\"\n[run]\njson = \"x\"\n[axes]\nworkloads = [\"a\"]",
                "run.json: a per-run output",
            ),
            (
                "name = \"t\"\n[run]\nbogus = 1\n[axes]\nworkloads = [\"a\"]",
                "run.bogus: not an option",
            ),
            (
                "name = \"t\"\n[axes]\nworkloads = [\"a\"]\nseeds = 0",
                "axes.seeds: invalid count",
            ),
            (
                "name = \"t\"\n[run]\ntimer_slack = \"1us\"\n[axes]\nworkloads = [\"a\"]\ntimer-slack = [\"1us\"]",
                "axes.timer-slack: also set in [run]",
            ),
        ];
        for (text, want) in cases {
            let err = format!("{:?}", Plan::parse(text).unwrap_err());
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
