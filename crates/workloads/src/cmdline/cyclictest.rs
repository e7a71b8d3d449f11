//! `cyclictest ...` (rt-tests).
//!
//! `src/cyclictest/cyclictest.c` `process_options` (read in jlelli/rt-tests at `857cdd5`,
//! 2012; fairsim's model follows 0.85, whose table is the same for the options below):
//! `getopt_long` with `"a::b:Bc:Cd:Efh:H:i:Il:MnNo:O:p:PmqQrsSt::uUvD:wWT:y:e:"`.
//! `-a` and `-t` take an optional value: attached (`-t2`, `--threads=2`), or the next
//! word when `atoi` of it is non-zero (`-t 2`, `-a 3`); alone, `-t` is one thread per CPU
//! and `-a` pins thread k to CPU k. `-S` (`--smp`) is `-t -a -n` and overrides them.
//!
//! Modelled: `-a`, `-t`, `-n`, `-i`, `-d`, `-D`, `-l`, `-p`, `-q`, `-S`, and `-m`
//! (`mlockall`), which fairsim accepts as a no-op: it has no page faults to avoid. `-n`
//! is required, as with the key form: without it cyclictest uses POSIX interval timers
//! and `sigwait`, which fairsim does not model. The tracing, histogram, output, clock,
//! policy and NUMA options are refused by name.

use crate::Cyclictest;
use fairsim_engine::error::{EngineError, SpecError};

use super::body::Body;
use super::getopt::{number, Arg, Grammar, Opt};

const fn req(short: char, long: &'static str, value: &'static str) -> Opt {
    Opt::new(Some(short), Some(long), Arg::Required, value)
}

const fn flag(short: char, long: &'static str) -> Opt {
    Opt::new(Some(short), Some(long), Arg::No, "")
}

const fn other(short: char, long: &'static str, arg: Arg) -> Opt {
    Opt::unmodelled(Some(short), Some(long), arg)
}

/// cyclictest's `long_options` with the option string's letters.
const OPTS: &[Opt] = &[
    Opt::new(
        Some('a'),
        Some("affinity"),
        Arg::OptionalNumber,
        "a CPU number",
    ),
    Opt::new(
        Some('t'),
        Some("threads"),
        Arg::OptionalNumber,
        "a number of threads",
    ),
    flag('n', "nanosleep"),
    req('i', "interval", "a number of usec"),
    req('d', "distance", "a number of usec"),
    req('D', "duration", "a duration"),
    req('l', "loops", "a number of loops"),
    req('p', "priority", "a priority"),
    flag('q', "quiet"),
    flag('m', "mlockall"),
    flag('S', "smp"),
    other('b', "breaktrace", Arg::Required),
    other('B', "preemptirqs", Arg::No),
    other('c', "clock", Arg::Required),
    other('C', "context", Arg::No),
    other('E', "event", Arg::No),
    other('f', "ftrace", Arg::No),
    other('h', "histogram", Arg::Required),
    other('H', "histofall", Arg::Required),
    other('I', "irqsoff", Arg::No),
    other('M', "refresh_on_max", Arg::No),
    other('N', "nsecs", Arg::No),
    other('o', "oscope", Arg::Required),
    other('y', "policy", Arg::Required),
    other('P', "preemptoff", Arg::No),
    other('Q', "priospread", Arg::No),
    other('r', "relative", Arg::No),
    other('s', "system", Arg::No),
    other('u', "unbuffered", Arg::No),
    other('v', "verbose", Arg::No),
    other('w', "wakeup", Arg::No),
    other('W', "wakeuprt", Arg::No),
    other('T', "tracer", Arg::Required),
    other('O', "traceopt", Arg::Required),
    other('U', "numa", Arg::No),
    other('e', "latency", Arg::Required),
    Opt::unmodelled(Some('?'), Some("help"), Arg::No),
];

/// Parses cyclictest's arguments. Omitted options keep cyclictest's defaults, which are
/// the key form's: `num_threads = 1`, `interval = DEFAULT_INTERVAL` (1000),
/// `distance = -1` then `DEFAULT_DISTANCE` (500), `priority` 0, no `-D` (run until
/// stopped), no `-l` (cyclictest.c lines 41-42, 974-981, 1247).
pub(super) fn parse(args: &[String]) -> Result<Cyclictest, EngineError> {
    let tool = "cyclictest";
    let grammar = Grammar {
        tool,
        opts: OPTS,
        negatable: false,
    };
    let scan = grammar.scan_options_only(args)?;
    let mut body = Body::default();
    let mut nanosleep = false;
    let mut smp = false;
    for g in &scan.given {
        let o = &OPTS[g.index];
        let Some(letter) = o.short else { continue };
        match letter {
            'a' | 't' => {
                let key = if letter == 'a' { "a" } else { "t" };
                match &g.value {
                    Some(_) => body.set(key, number(tool, g, o.value)?, &g.typed),
                    None => body.flag(key, &g.typed),
                }
            }
            'n' => nanosleep = true,
            'S' => smp = true,
            'q' => body.flag("q", &g.typed),
            'm' => {}
            'D' => body.set("D", g.value.as_deref().unwrap_or(""), &g.typed),
            'i' | 'd' | 'l' | 'p' => {
                let key = match letter {
                    'i' => "i",
                    'd' => "d",
                    'l' => "l",
                    _ => "p",
                };
                body.set(key, number(tool, g, o.value)?, &g.typed);
            }
            _ => {}
        }
    }
    if smp {
        // `case 'S'`: `num_threads = max_cpus; setaffinity = AFFINITY_USEALL;
        // use_nanosleep = MODE_CLOCK_NANOSLEEP;`, and later -t/-a are ignored. The key
        // parser reads the last t and a, so these come last.
        body.flag("t", "-S");
        body.flag("a", "-S");
        nanosleep = true;
    }
    if !nanosleep {
        return Err(SpecError::refused(
            "cyclictest",
            "-n is required: without it cyclictest uses POSIX interval timers and sigwait (MODE_CYCLIC), which fairsim does not model; allowed: -n (clock_nanosleep, TIMER_ABSTIME)",
        )
        .into());
    }
    body.flag("n", "-n");
    Cyclictest::parse(&body.text()).map_err(|e| body.rename(tool, tool, e))
}
