//! The launchers a command line may start with (`taskset`, `uclampset`, `nice`, `chrt`,
//! `cgexec`): each sets one attribute of the command it execs, which becomes the
//! workload's `cpus=`, `uclamp=`, `nice=`, `policy=` or `cgroup=`.

use fairsim_engine::error::{EngineError, SpecError};

use crate::affinity::CpuList;

/// A launcher's error: what is wrong, and its usage.
fn usage(launcher: &str, what: String, allowed: &str) -> EngineError {
    SpecError::Usage {
        tool: launcher.to_string(),
        detail: what,
        allowed: allowed.to_string(),
    }
    .into()
}

/// Reads util-linux `chrt [-o | -b | -i] 0 COMMAND` (short or long options): the fair
/// class's policy for the command's tasks. Their static priority must be 0, as chrt
/// requires for these policies; the real-time and deadline policies, `-R` and `-p` are
/// refused (fairsim emulates the fair class only).
pub(super) fn chrt(args: &[String]) -> Result<(fairsim_balance::Policy, &[String]), EngineError> {
    use fairsim_balance::Policy;
    let bad = |what: String| {
        usage(
            "chrt",
            what,
            "chrt -o|-b|-i 0 COMMAND (SCHED_OTHER, SCHED_BATCH or SCHED_IDLE)",
        )
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
pub(super) fn cgexec(args: &[String]) -> Result<(String, &[String]), EngineError> {
    let bad = |what: String| usage("cgexec", what, "cgexec -g cpu:/PATH COMMAND");
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
pub(super) fn taskset(args: &[String]) -> Result<(CpuList, &[String]), EngineError> {
    let bad = |what: String| usage("taskset", what, "taskset -c LIST COMMAND");
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
pub(super) fn nice_cmd(args: &[String]) -> Result<(i32, &[String]), EngineError> {
    let bad = |what: String| usage("nice", what, "nice [-n N] COMMAND, N an integer");
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
pub(super) fn uclampset(args: &[String]) -> Result<((u32, u32), &[String]), EngineError> {
    let bad = |what: String| {
        usage(
            "uclampset",
            what,
            "uclampset [-m MIN] [-M MAX] COMMAND, each 0 to 1024 and MIN not above MAX",
        )
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
