//! The tools' own command lines as workload specifications: `-w 'schbench -m 2 -t 4'`.
//!
//! A specification is a command line when, after trimming, its first word (up to the
//! first whitespace) contains no `:` and the rest does not start with `:`; a bare
//! `schbench@2016` is one too. Every other specification is `NAME[:key=value,...]` as
//! before: no workload name contains whitespace, so no specification that parsed before
//! reads differently now (`hackbench :g=4` stays a key list).
//!
//! The line is split into words as a shell would (`words.rs`), an optional `sudo` and
//! the launchers in front are read, in any order (`taskset -c LIST`, `uclampset`,
//! `nice`, `chrt -o|-b|-i 0` and `cgexec -g cpu:/PATH`, which become the workload's
//! `cpus=`, `uclamp=`, `nice=`, `policy=` and `cgroup=`, as the key form's), and the program (its path dropped: `./schbench`) picks the tool.
//! Each tool's arguments are then read with that tool's own grammar and defaults, from
//! its source (cited in each module), and turned into the `key=value` body the tool's
//! existing parser reads, so that a command line and its key form give the same
//! [`WorkloadSpec`] and are checked by the same ranges. Where a tool's default differs
//! from fairsim's key default, the body spells the tool's value out (schbench's `-r 30`,
//! hackbench's fixed 20 fds in perf). Options a tool has but fairsim does not model are
//! refused by name, never ignored.

mod cyclictest;
mod getopt;
mod hackbench;
mod netperf;
mod rtapp;
mod schbench;
mod sysbench;
mod tbench;
mod words;

use fairsim_engine::error::EngineError;

use super::{CpuList, Workload, WorkloadSpec};

/// The programs a command line may start with.
pub const PROGRAMS: &str = "schbench, schbench@2016, hackbench, perf bench sched messaging, sysbench, cyclictest, netperf, rt-app, tbench";

/// Whether `spec` is a command line rather than `NAME[:key=value,...]` (see the module
/// documentation for the rule).
pub fn is_command_line(spec: &str) -> bool {
    let t = spec.trim();
    match t.find(char::is_whitespace) {
        None => program_name(t) == "schbench@2016",
        Some(at) => {
            let (first, rest) = t.split_at(at);
            !first.contains(':') && !rest.trim_start().starts_with(':')
        }
    }
}

/// A program's name without its directory (`./schbench`, `/usr/bin/cyclictest`).
fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn err(what: String) -> EngineError {
    EngineError::Workload(what)
}

/// Parses a command line (one for which [`is_command_line`] holds).
pub fn parse(spec: &str) -> Result<WorkloadSpec, EngineError> {
    // An error quotes what the user wrote, which may span lines (a pasted script with
    // continuations): it stays one line.
    parse_words(spec).map_err(|e| match e {
        EngineError::Workload(msg) => {
            EngineError::Workload(msg.replace('\n', "\\n").replace('\r', "\\r"))
        }
        other => other,
    })
}

fn parse_words(spec: &str) -> Result<WorkloadSpec, EngineError> {
    let words = words::split(spec.trim())
        .map_err(|why| err(format!("command line '{}': {why}", spec.trim())))?;
    let mut rest: &[String] = &words;
    if rest.first().is_some_and(|w| w == "sudo") {
        if rest.get(1).is_some_and(|w| w.starts_with('-')) {
            return Err(err(
                "sudo: options are not supported; allowed: sudo COMMAND, or the command alone"
                    .into(),
            ));
        }
        rest = &rest[1..];
    }
    // Launchers that set an attribute and exec the command, in either order.
    let mut cpus = None;
    let mut uclamp = None;
    let mut nice = None;
    let mut policy = None;
    let mut cgroup = None;
    loop {
        match rest.first().map(|w| program_name(w)) {
            Some("taskset") if cpus.is_none() => {
                let (list, after) = taskset(&rest[1..])?;
                cpus = Some(list);
                rest = after;
            }
            Some("uclampset") if uclamp.is_none() => {
                let (clamps, after) = uclampset(&rest[1..])?;
                uclamp = Some(clamps);
                rest = after;
            }
            Some("nice") if nice.is_none() => {
                let (n, after) = nice_cmd(&rest[1..])?;
                nice = Some(n);
                rest = after;
            }
            Some("chrt") if policy.is_none() => {
                let (p, after) = chrt(&rest[1..])?;
                policy = Some(p);
                rest = after;
            }
            Some("cgexec") if cgroup.is_none() => {
                let (path, after) = cgexec(&rest[1..])?;
                cgroup = Some(path);
                rest = after;
            }
            _ => break,
        }
    }
    let Some((program, args)) = rest.split_first() else {
        return Err(err(format!(
            "command line '{}': no program; allowed: {PROGRAMS}",
            spec.trim()
        )));
    };
    let workload = match program_name(program) {
        "schbench" => Workload::Schbench(schbench::parse(false, args)?),
        "schbench@2016" => Workload::Schbench(schbench::parse(true, args)?),
        "hackbench" => Workload::Hackbench(hackbench::parse(args)?),
        "perf" => Workload::Hackbench(hackbench::parse_perf(args)?),
        "sysbench" => Workload::SysbenchCpu(sysbench::parse(args)?),
        "cyclictest" => Workload::Cyclictest(cyclictest::parse(args)?),
        "netperf" => Workload::Netperf(netperf::parse(args)?),
        "rt-app" | "rtapp" => Workload::Rtapp(rtapp::parse(args)?),
        "tbench" => Workload::Tbench(tbench::parse(args)?),
        other => {
            return Err(err(format!(
                "unknown program '{other}' in the command line '{}'; allowed: {PROGRAMS} (or NAME:key=value,...)",
                spec.trim()
            )))
        }
    };
    Ok(WorkloadSpec {
        workload,
        cpus,
        mem: None,
        uclamp,
        nice,
        policy,
        cgroup,
    })
}

/// Reads util-linux `chrt [-o | -b | -i] 0 COMMAND` (short or long options): the fair
/// class's policy for the command's tasks. Their static priority must be 0, as chrt
/// requires for these policies; the real-time and deadline policies, `-R` and `-p` are
/// refused (fairsim emulates the fair class only).
fn chrt(args: &[String]) -> Result<(fairsim_balance::Policy, &[String]), EngineError> {
    use fairsim_balance::Policy;
    let bad = |what: String| {
        err(format!(
            "chrt: {what}; allowed: chrt -o|-b|-i 0 COMMAND (SCHED_OTHER, SCHED_BATCH or SCHED_IDLE)"
        ))
    };
    let (policy, rest) = match args {
        [flag, rest @ ..] => match flag.as_str() {
            "-o" | "--other" => (Policy::Normal, rest),
            "-b" | "--batch" => (Policy::Batch, rest),
            "-i" | "--idle" => (Policy::Idle, rest),
            "-f" | "--fifo" | "-r" | "--rr" | "-d" | "--deadline" => {
                return Err(bad(format!(
                    "'{flag}' is a real-time or deadline policy, which fairsim does not emulate"
                )))
            }
            other => return Err(bad(format!("'{other}' is not supported"))),
        },
        [] => return Err(bad("no policy".into())),
    };
    match rest {
        [prio, command @ ..] if prio == "0" && !command.is_empty() => Ok((policy, command)),
        [prio, ..] if prio != "0" => {
            Err(bad(format!("priority '{prio}': the policy takes only 0")))
        }
        _ => Err(bad("no command after the priority".into())),
    }
}

/// Reads libcgroup's `cgexec -g CONTROLLERS:PATH COMMAND`: the task group the command
/// runs in, as the key form's `cgroup=/PATH`. The controllers must include `cpu` (or be
/// `*`), the only one fairsim models; the path is relative to the controller's root, so
/// `cpu:a` is `/a` as `cpu:/a` is. `--sticky` (which only matters to the `cgrulesengd`
/// daemon) and other options are refused.
fn cgexec(args: &[String]) -> Result<(String, &[String]), EngineError> {
    let bad = |what: String| {
        err(format!(
            "cgexec: {what}; allowed: cgexec -g cpu:/PATH COMMAND"
        ))
    };
    let (spec, rest) = match args {
        [flag, spec, rest @ ..] if flag == "-g" => (spec.as_str(), rest),
        [flag, rest @ ..] if flag.len() > 2 && flag.starts_with("-g") => (&flag[2..], rest),
        [first, ..] => return Err(bad(format!("'{first}' is not supported"))),
        [] => return Err(bad("no -g".into())),
    };
    let Some((controllers, path)) = spec.split_once(':') else {
        return Err(bad(format!("-g: '{spec}' has no ':'")));
    };
    if !controllers.split(',').any(|c| c == "cpu" || c == "*") {
        return Err(bad(format!(
            "-g: controllers '{controllers}' do not include cpu, the only one modelled"
        )));
    }
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    fairsim_engine::cgroup::check_path(&path).map_err(|why| {
        bad(format!(
            "-g: invalid path '{path}' ({why}); paths are {}",
            fairsim_engine::cgroup::PATH_ALLOWED
        ))
    })?;
    if rest.is_empty() {
        return Err(bad("no command after -g".into()));
    }
    Ok((path, rest))
}

/// Reads `taskset -c LIST` (util-linux: `-c`/`--cpu-list`, the list in the kernel's
/// cpulist format) and returns the list and the command after it. A hexadecimal mask
/// (`taskset 0x3 CMD`) and `-p` (an existing pid) are refused.
fn taskset(args: &[String]) -> Result<(CpuList, &[String]), EngineError> {
    let bad = |what: String| err(format!("taskset: {what}; allowed: taskset -c LIST COMMAND"));
    let (text, after) = match args {
        [flag, list, rest @ ..] if flag == "-c" || flag == "--cpu-list" => (list.as_str(), rest),
        [flag, rest @ ..] if flag.starts_with("--cpu-list=") => {
            (flag.trim_start_matches("--cpu-list="), rest)
        }
        [flag, rest @ ..] if flag.starts_with("-c") && flag.len() > 2 => (&flag[2..], rest),
        [first, ..] => return Err(bad(format!("'{first}' is not supported"))),
        [] => return Err(bad("no CPU list".into())),
    };
    let list =
        CpuList::parse(text).map_err(|why| bad(format!("-c: invalid list '{text}' ({why})")))?;
    Ok((list, after))
}

/// Reads coreutils `nice [-n N | -N | --adjustment=N] COMMAND`: the command's nice level,
/// 10 when no adjustment is given, clamped to -20..19 as `nice(2)` clamps (from nice 0).
fn nice_cmd(args: &[String]) -> Result<(i32, &[String]), EngineError> {
    let bad = |what: String| {
        err(format!(
            "nice: {what}; allowed: nice [-n N] COMMAND, N an integer"
        ))
    };
    let (text, rest): (Option<&str>, &[String]) = match args {
        [flag, v, rest @ ..] if flag == "-n" || flag == "--adjustment" => (Some(v), rest),
        [flag, rest @ ..] if flag.starts_with("--adjustment=") => {
            (Some(&flag["--adjustment=".len()..]), rest)
        }
        [flag, rest @ ..] if flag.len() > 2 && flag.starts_with("-n") => (Some(&flag[2..]), rest),
        [flag, rest @ ..]
            if flag.len() > 1
                && flag.starts_with('-')
                && flag[1..].chars().all(|c| c.is_ascii_digit()) =>
        {
            (Some(&flag[1..]), rest)
        }
        [flag, ..] if flag.starts_with('-') => {
            return Err(bad(format!("'{flag}' is not supported")));
        }
        rest => (None, rest),
    };
    let n = match text {
        None => 10,
        Some(t) => t
            .parse::<i64>()
            .map_err(|_| bad(format!("-n: invalid adjustment '{t}'")))?
            .clamp(-20, 19) as i32,
    };
    Ok((n, rest))
}

/// Reads util-linux `uclampset [-m MIN] [-M MAX] COMMAND` (short or long options, the
/// value attached or apart): the clamps the command's tasks start with; one not given
/// keeps the kernel's default (0 for the minimum, 1024 for the maximum).
fn uclampset(args: &[String]) -> Result<((u32, u32), &[String]), EngineError> {
    let bad = |what: String| {
        err(format!(
            "uclampset: {what}; allowed: uclampset [-m MIN] [-M MAX] COMMAND, each 0 to 1024 and MIN not above MAX"
        ))
    };
    let (mut min, mut max) = (0u32, 1024u32);
    let mut given = false;
    let mut rest = args;
    loop {
        let (which, value, after): (char, &str, &[String]) = match rest {
            [flag, v, after @ ..] if flag == "-m" || flag == "--util-min" => ('m', v, after),
            [flag, v, after @ ..] if flag == "-M" || flag == "--util-max" => ('M', v, after),
            [flag, after @ ..] if flag.starts_with("--util-min=") => {
                ('m', &flag["--util-min=".len()..], after)
            }
            [flag, after @ ..] if flag.starts_with("--util-max=") => {
                ('M', &flag["--util-max=".len()..], after)
            }
            [flag, after @ ..] if flag.len() > 2 && flag.starts_with("-m") => {
                ('m', &flag[2..], after)
            }
            [flag, after @ ..] if flag.len() > 2 && flag.starts_with("-M") => {
                ('M', &flag[2..], after)
            }
            [flag, ..] if flag.starts_with('-') => {
                return Err(bad(format!("'{flag}' is not supported")));
            }
            _ => break,
        };
        let v: u32 = value
            .parse()
            .ok()
            .filter(|v| *v <= 1024)
            .ok_or_else(|| bad(format!("-{which}: invalid value '{value}'")))?;
        if which == 'm' {
            min = v;
        } else {
            max = v;
        }
        given = true;
        rest = after;
    }
    if !given {
        return Err(bad("no -m or -M".into()));
    }
    if min > max {
        return Err(bad(format!("-m {min} above -M {max}")));
    }
    Ok(((min, max), rest))
}

/// The `key=value` body a command line becomes, and which option the user typed for each
/// key, so that the tool parser's errors name the option as the user wrote it.
#[derive(Debug, Default)]
pub(super) struct Body {
    items: Vec<String>,
    typed: Vec<(&'static str, String)>,
}

impl Body {
    /// `key=value`, typed by the user as `typed` (or the tool's spelling of a default).
    pub fn set(&mut self, key: &'static str, value: impl std::fmt::Display, typed: &str) {
        self.items.push(format!("{key}={value}"));
        self.typed.push((key, typed.to_string()));
    }

    /// A bare key (a flag, or cyclictest's `t` alone).
    pub fn flag(&mut self, key: &'static str, typed: &str) {
        self.items.push(key.to_string());
        self.typed.push((key, typed.to_string()));
    }

    /// The body for the tool's key parser.
    pub fn text(&self) -> String {
        self.items.join(",")
    }

    /// Rewrites an error of the key parser (`TOOL: KEY: ...`) to name the tool as
    /// `shown` and the option as the user typed it (`schbench@2016: -t: ...`).
    pub fn rename(&self, tool: &str, shown: &str, e: EngineError) -> EngineError {
        let EngineError::Workload(msg) = e else {
            return e;
        };
        let Some(rest) = msg.strip_prefix(&format!("{tool}: ")) else {
            return EngineError::Workload(msg);
        };
        for (key, typed) in self.typed.iter().rev() {
            if let Some(tail) = rest.strip_prefix(&format!("{key}: ")) {
                return EngineError::Workload(format!("{shown}: {typed}: {tail}"));
            }
        }
        EngineError::Workload(format!("{shown}: {rest}"))
    }
}

/// The error for words a tool does not take.
pub(super) fn extra(tool: &str, words: &[String], allowed: &str) -> EngineError {
    err(format!(
        "{tool}: unexpected argument '{}'; allowed: {allowed}",
        words.join(" ")
    ))
}
