//! `schbench ...` and `schbench@2016 ...`.
//!
//! `schbench` is the schbench whose workers spin for `-c` usec of think time and whose
//! message threads sleep `-s` usec, and which honours `-m`: the tree Chris Mason kept
//! from April 2016 until the 2020 additions, read at masoncl/schbench commit `dd2adce`
//! (2019-12-13). Its `parse_options` is `getopt_long` with `"p:am:t:s:c:r:R:"` and the
//! long names `auto`, `pipe`, `message-threads`, `threads`, `runtime`, `rps`,
//! `sleeptime`, `cputime`, `help`; `-s`/`-c` are usec and `-r` seconds, each read with
//! `atoi`. Later trees add a warm-up (2020) and a message-thread think time, and the
//! 2023 rewrite drops `-c` altogether; fairsim's schbench model is this tree's loop.
//!
//! `schbench@2016` is the binary printed in seed 001: `"am:t:s:c:r:"`, the same long
//! names less `pipe` and `rps`, and a switch with `case 'd'` but no `case 'm'`, so `-m N`
//! is read and ignored (`version=2016`). Its `-d` is not in the option string: getopt
//! refuses it.
//!
//! `-a` (auto bench), `-p` (pipe mode) and `-R` (requests per second) are not modelled.

use crate::Schbench;
use fairsim_engine::error::EngineError;

use super::body::Body;
use super::getopt::{number, Arg, Grammar, Opt};

const fn opt(short: char, long: &'static str, value: &'static str) -> Opt {
    Opt::new(Some(short), Some(long), Arg::Required, value)
}

/// The option table of schbench `dd2adce` (`option_string` and `long_options`).
const CURRENT: &[Opt] = &[
    opt('m', "message-threads", "a number of message threads"),
    opt('t', "threads", "a number of workers per message thread"),
    opt('r', "runtime", "a number of seconds"),
    opt('s', "sleeptime", "a number of usec"),
    opt('c', "cputime", "a number of usec"),
    Opt::unmodelled(Some('a'), Some("auto"), Arg::No),
    Opt::unmodelled(Some('p'), Some("pipe"), Arg::Required),
    Opt::unmodelled(Some('R'), Some("rps"), Arg::Required),
    Opt::unmodelled(None, Some("help"), Arg::No),
];

/// The option table of seed 001's binary.
const V2016: &[Opt] = &[
    opt('m', "message-threads", "a number (ignored by this binary)"),
    opt('t', "threads", "a number of workers per message thread"),
    opt('r', "runtime", "a number of seconds"),
    opt('s', "sleeptime", "a number of usec"),
    opt('c', "cputime", "a number of usec"),
    Opt::unmodelled(Some('a'), Some("auto"), Arg::No),
    Opt::unmodelled(None, Some("help"), Arg::No),
];

/// schbench's defaults, the same in both trees: `static int worker_threads = 16;`,
/// `runtime = 30;`, `sleeptime = 30000;`, `unsigned long long cputime = 30000;`
/// (`dd2adce` schbench.c lines 36-42; seed 001's printed source lines 175-181). The
/// usage text's "def: 10000" for `-s`/`-c` is stale in both; the variables decide.
pub(super) const DEFAULT_THREADS: u64 = 16;
/// See [`DEFAULT_THREADS`].
pub(super) const DEFAULT_RUNTIME_S: u64 = 30;
/// See [`DEFAULT_THREADS`].
pub(super) const DEFAULT_USEC: u64 = 30_000;

/// Parses schbench's arguments (`v2016`: seed 001's binary).
pub(super) fn parse(v2016: bool, args: &[String]) -> Result<Schbench, EngineError> {
    let tool = if v2016 { "schbench@2016" } else { "schbench" };
    let grammar = Grammar {
        tool,
        opts: if v2016 { V2016 } else { CURRENT },
        negatable: false,
    };
    let scan = grammar.scan_options_only(args)?;
    let mut m = None;
    let mut t = (DEFAULT_THREADS, "-t".to_string());
    let mut r = (DEFAULT_RUNTIME_S, "-r".to_string());
    let mut s = (DEFAULT_USEC, "-s".to_string());
    let mut c = (DEFAULT_USEC, "-c".to_string());
    for g in &scan.given {
        let short = grammar.opts[g.index].short;
        let n = number(tool, g, grammar.opts[g.index].value)?;
        let slot = match short {
            Some('m') => {
                m = Some((n, g.typed.clone()));
                continue;
            }
            Some('t') => &mut t,
            Some('r') => &mut r,
            Some('s') => &mut s,
            _ => &mut c,
        };
        *slot = (n, g.typed.clone());
    }
    let mut body = Body::default();
    if v2016 {
        body.set("version", "2016", tool);
    }
    if let Some((n, typed)) = &m {
        body.set("m", n, typed);
    }
    body.set("t", t.0, &t.1);
    body.set("c", c.0, &c.1);
    body.set("s", s.0, &s.1);
    body.set("r", r.0, &r.1);
    Schbench::parse(&body.text()).map_err(|e| body.rename("schbench", tool, e))
}
