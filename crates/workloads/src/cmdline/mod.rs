//! The tools' own command lines as workload specifications: `-w 'schbench -m 2 -t 4'`.
//!
//! A specification is a command line when, after trimming, its first word (up to the
//! first whitespace) contains no `:` and the rest does not start with `:`; a bare
//! `schbench@2016` is one too. Every other specification is `NAME[:key=value,...]` as
//! before: no workload name contains whitespace, so no specification that parsed before
//! reads differently now (`hackbench :g=4` stays a key list).
//!
//! The line is split into words as a shell would (`words.rs`), an optional `sudo` and
//! the launchers in front are read (`launch.rs`), in any order (`taskset -c LIST`, `uclampset`,
//! `nice`, `chrt -o|-b|-i 0` and `cgexec -g cpu:/PATH`, which become the workload's
//! `cpus=`, `uclamp=`, `nice=`, `policy=` and `cgroup=`, as the key form's), and the program (its path dropped: `./schbench`) picks the tool.
//! Each tool's arguments are then read with that tool's own grammar and defaults, from
//! its source (cited in each module), and turned into the `key=value` body the tool's
//! existing parser reads, so that a command line and its key form give the same
//! [`WorkloadSpec`] and are checked by the same ranges. Where a tool's default differs
//! from fairsim's key default, the body spells the tool's value out (schbench's `-r 30`,
//! hackbench's fixed 20 fds in perf). Options a tool has but fairsim does not model are
//! refused by name, never ignored.

mod body;
mod cyclictest;
mod getopt;
mod hackbench;
mod launch;
mod netperf;
mod rtapp;
mod schbench;
mod sysbench;
mod tbench;
pub(crate) mod tool_parsers;
mod words;

use fairsim_engine::error::{EngineError, SpecError};

use crate::spec::WorkloadSpec;

use launch::{cgexec, chrt, nice_cmd, taskset, uclampset};

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

/// The note a command line starting with `sudo` gets: the word is dropped (the run's
/// tasks are not privileged or not, fairsim models no permission), and the user is told
/// so rather than left to wonder whether it mattered.
pub fn sudo_note(spec: &str) -> Option<String> {
    let t = spec.trim();
    if !is_command_line(t) || t.split_whitespace().next() != Some("sudo") {
        return None;
    }
    Some(format!(
        "workload '{}': sudo dropped; the command runs as it would under sudo (fairsim models no privileges)",
        t.replace('\n', "\\n").replace('\r', "\\r")
    ))
}

/// Parses a command line (one for which [`is_command_line`] holds).
pub fn parse(spec: &str) -> Result<WorkloadSpec, EngineError> {
    // An error quotes what the user wrote, which may span lines (a pasted script with
    // continuations): it stays one line.
    parse_words(spec).map_err(|e| match e {
        EngineError::Workload(spec) => {
            EngineError::Workload(spec.map_text(|t| t.replace('\n', "\\n").replace('\r', "\\r")))
        }
        other => other,
    })
}

fn parse_words(spec: &str) -> Result<WorkloadSpec, EngineError> {
    let words = words::split(spec.trim())
        .map_err(|why| SpecError::refused(format!("command line '{}'", spec.trim()), why))?;
    let mut rest: &[String] = &words;
    if rest.first().is_some_and(|w| w == "sudo") {
        if rest.get(1).is_some_and(|w| w.starts_with('-')) {
            return Err(SpecError::Usage {
                tool: "sudo".into(),
                detail: "options are not supported".into(),
                allowed: "sudo COMMAND, or the command alone".into(),
            }
            .into());
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
        return Err(SpecError::Usage {
            tool: format!("command line '{}'", spec.trim()),
            detail: "no program".into(),
            allowed: crate::tools::programs(),
        }
        .into());
    };
    let name = program_name(program);
    let Some((_, prog)) = crate::tools::by_program(name) else {
        return Err(SpecError::UnknownProgram {
            got: name.to_string(),
            line: spec.trim().to_string(),
            allowed: format!("{} (or NAME:key=value,...)", crate::tools::programs()),
        }
        .into());
    };
    let workload = (prog.parse)(args)?;
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
