//! `hackbench ...` (rt-tests) and `perf bench sched messaging ...` (perf's port of it).
//!
//! rt-tests' hackbench, `src/hackbench/hackbench.c` `process_options` (read in
//! jlelli/rt-tests at `857cdd5`, 2012): `getopt_long` with `"ps:l:g:f:TPFh"` and the long
//! names `pipe`, `datasize`, `loops`, `groups`, `fds`, `threads`, `processes`, `fifo`,
//! `help`. `-s`, `-l`, `-g`, `-f` require "an integer > 0"; `-T` and `-P` set the same
//! `process_mode`, so the last one wins. `-F` (SCHED_FIFO) is not modelled: fairsim has
//! only the fair class.
//!
//! perf's `tools/perf/bench/sched-messaging.c` (Linux 6.12): `parse_options` with
//! `-p`/`--pipe`, `-t`/`--thread`, `-g`/`--group`, `-l`/`--nr_loops` (`--loop` up to
//! at least 3.9, also taken); the group size is
//! fixed (`unsigned int num_fds = 20;` in `bench_sched_messaging`) and so is the message
//! (`#define DATASIZE 100`). `perf bench`'s own `-f`/`--format` and `-r`/`--repeat`
//! (before the collection's name) are not modelled. fairsim runs it as its hackbench
//! model (same groups, messages and wakeups) and prints hackbench's output.

use crate::Hackbench;
use fairsim_engine::error::{EngineError, SpecError};

use super::body::{extra, Body};
use super::getopt::{number, Arg, Grammar, Opt};

/// rt-tests hackbench's option table.
const HACKBENCH: &[Opt] = &[
    Opt::new(Some('p'), Some("pipe"), Arg::No, ""),
    Opt::new(Some('s'), Some("datasize"), Arg::Required, "a number"),
    Opt::new(Some('l'), Some("loops"), Arg::Required, "a number"),
    Opt::new(Some('g'), Some("groups"), Arg::Required, "a number"),
    Opt::new(Some('f'), Some("fds"), Arg::Required, "a number"),
    Opt::new(Some('T'), Some("threads"), Arg::No, ""),
    Opt::new(Some('P'), Some("processes"), Arg::No, ""),
    Opt::unmodelled(Some('F'), Some("fifo"), Arg::No),
    Opt::unmodelled(Some('h'), Some("help"), Arg::No),
];

/// perf bench sched messaging's option table (6.12's `options[]`).
const PERF: &[Opt] = &[
    Opt::new(Some('p'), Some("pipe"), Arg::No, ""),
    Opt::new(Some('t'), Some("thread"), Arg::No, ""),
    Opt::new(Some('g'), Some("group"), Arg::Required, "a number"),
    Opt::new(Some('l'), Some("nr_loops"), Arg::Required, "a number"),
    // Linux 3.9's table spelled -l's long name `loop` (seed 003 writes `--loop 5000`);
    // 4.5 and later spell it `nr_loops`. Both are taken.
    Opt::new(None, Some("loop"), Arg::Required, "a number"),
    Opt::unmodelled(Some('h'), Some("help"), Arg::No),
];

/// `perf bench`'s own options (builtin-bench.c `bench_options`).
const PERF_BENCH: &[Opt] = &[
    Opt::unmodelled(Some('f'), Some("format"), Arg::Required),
    Opt::unmodelled(Some('r'), Some("repeat"), Arg::Required),
    Opt::unmodelled(Some('h'), Some("help"), Arg::No),
];

/// rt-tests hackbench's defaults: `datasize = 100`, `loops = 100`, `num_groups = 10`,
/// `num_fds = 20`, `process_mode = PROCESS_MODE`, `use_pipes = 0` (hackbench.c lines
/// 33-47). perf's: `nr_loops = 100`, `num_groups = 10` (sched-messaging.c lines 36-38),
/// `num_fds = 20` (line 296), `DATASIZE 100` (line 33), `use_pipes = false`,
/// `thread_mode = false`.
const GROUPS: u64 = 10;
const LOOPS: u64 = 100;
const FDS: u64 = 20;
const DATASIZE: u64 = 100;

/// Parses rt-tests hackbench's arguments.
pub(super) fn parse(args: &[String]) -> Result<Hackbench, EngineError> {
    let tool = "hackbench";
    let grammar = Grammar {
        tool,
        opts: HACKBENCH,
        negatable: false,
    };
    let scan = grammar.scan_options_only(args)?;
    let mut g = (GROUPS, "-g".to_string());
    let mut l = (LOOPS, "-l".to_string());
    let mut f = (FDS, "-f".to_string());
    let mut s = (DATASIZE, "-s".to_string());
    let mut pipe = false;
    let mut threads = None;
    for given in &scan.given {
        let slot = match HACKBENCH[given.index].short {
            Some('p') => {
                pipe = true;
                continue;
            }
            Some('T') => {
                threads = Some(given.typed.clone());
                continue;
            }
            Some('P') => {
                threads = None;
                continue;
            }
            Some('g') => &mut g,
            Some('l') => &mut l,
            Some('f') => &mut f,
            _ => &mut s,
        };
        *slot = (number(tool, given, "a number")?, given.typed.clone());
    }
    let mut body = Body::default();
    body.set("g", g.0, &g.1);
    body.set("l", l.0, &l.1);
    body.set("f", f.0, &f.1);
    body.set("s", s.0, &s.1);
    if pipe {
        body.flag("pipe", "-p");
    }
    if let Some(typed) = &threads {
        body.flag("threads", typed);
    }
    Hackbench::parse(&body.text()).map_err(|e| body.rename(tool, tool, e))
}

/// Parses `perf`'s arguments: `bench [OPTIONS] sched messaging [OPTIONS]`.
pub(super) fn parse_perf(args: &[String]) -> Result<Hackbench, EngineError> {
    let tool = "perf bench sched messaging";
    let allowed = "perf bench sched messaging [-p] [-t] [-g N] [-l N]";
    let Some(("bench", args)) = args.split_first().map(|(a, r)| (a.as_str(), r)) else {
        return Err(extra("perf", args, allowed));
    };
    // perf bench's options come before the collection (PARSE_OPT_STOP_AT_NON_OPTION).
    let split = args
        .iter()
        .position(|a| !a.starts_with('-'))
        .unwrap_or(args.len());
    let bench = Grammar {
        tool: "perf bench",
        opts: PERF_BENCH,
        negatable: true,
    };
    bench.scan(&args[..split])?;
    let args = &args[split..];
    match args {
        [c, b, ..] if c == "sched" && b == "messaging" => {}
        _ => {
            return Err(SpecError::refused(
                "perf bench",
                format!(
                    "'{}' is not modelled; allowed: {allowed}",
                    args.iter().take(2).cloned().collect::<Vec<_>>().join(" ")
                ),
            )
            .into())
        }
    }
    let grammar = Grammar {
        tool,
        opts: PERF,
        negatable: true,
    };
    let scan = grammar.scan_options_only(&args[2..])?;
    let mut g = (GROUPS, "-g".to_string());
    let mut l = (LOOPS, "-l".to_string());
    let mut pipe = false;
    let mut thread = false;
    for given in &scan.given {
        // The one long-only entry is `--loop`, -l's old name.
        match PERF[given.index].short.unwrap_or('l') {
            'p' => pipe = !given.negated,
            't' => thread = !given.negated,
            'g' => g = (number(tool, given, "a number")?, given.typed.clone()),
            _ => l = (number(tool, given, "a number")?, given.typed.clone()),
        }
    }
    let mut body = Body::default();
    body.set("g", g.0, &g.1);
    body.set("l", l.0, &l.1);
    body.set("f", FDS, "num_fds");
    body.set("s", DATASIZE, "DATASIZE");
    if pipe {
        body.flag("pipe", "-p");
    }
    if thread {
        body.flag("threads", "-t");
    }
    Hackbench::parse(&body.text()).map_err(|e| body.rename("hackbench", tool, e))
}
