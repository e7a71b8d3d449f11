//! `tbench [-t SECONDS] NPROCS [SERVER]` (dbench 4.0's tbench).
//!
//! Read in sahlberg/dbench at `23ba06d` (`VERSION=4.00`): `dbench.c` `process_opts`,
//! popt with `-t`/`--timelimit` (an integer) and `-c`, `-D`, `-T`, `-R`, `-s`, `-S`,
//! `-F`, `-x` and a few long-only options; the first remaining word is `nprocs` (required:
//! "You need to specify NPROCS") and the second the server. The default time limit is
//! `.timelimit = 600` (dbench.c line 30), the key form's. Only `-t` is modelled.

use crate::Tbench;
use fairsim_engine::error::EngineError;

use super::body::{extra, Body};
use super::getopt::{number, Arg, Grammar, Opt};

/// dbench 4.0's popt table.
const OPTS: &[Opt] = &[
    Opt::new(
        Some('t'),
        Some("timelimit"),
        Arg::Required,
        "a number of seconds",
    ),
    Opt::unmodelled(Some('c'), Some("loadfile"), Arg::Required),
    Opt::unmodelled(Some('D'), Some("directory"), Arg::Required),
    Opt::unmodelled(Some('T'), Some("tcp-options"), Arg::Required),
    Opt::unmodelled(Some('R'), Some("target-rate"), Arg::Required),
    Opt::unmodelled(Some('s'), Some("sync"), Arg::No),
    Opt::unmodelled(Some('S'), Some("sync-dir"), Arg::No),
    Opt::unmodelled(Some('F'), Some("fsync"), Arg::No),
    Opt::unmodelled(Some('x'), Some("xattr"), Arg::No),
    Opt::unmodelled(None, Some("no-resolve"), Arg::No),
    Opt::unmodelled(None, Some("clients-per-process"), Arg::Required),
    Opt::unmodelled(None, Some("one-byte-write-fix"), Arg::No),
    Opt::unmodelled(None, Some("stat-check"), Arg::No),
    Opt::unmodelled(None, Some("fake-io"), Arg::No),
    Opt::unmodelled(None, Some("skip-cleanup"), Arg::No),
    Opt::unmodelled(None, Some("per-client-results"), Arg::No),
    Opt::unmodelled(Some('?'), Some("help"), Arg::No),
    Opt::unmodelled(None, Some("usage"), Arg::No),
];

/// Parses tbench's arguments.
pub(super) fn parse(args: &[String]) -> Result<Tbench, EngineError> {
    let tool = "tbench";
    let grammar = Grammar {
        tool,
        opts: OPTS,
        negatable: false,
    };
    let scan = grammar.scan(args)?;
    let words = scan.words();
    let mut body = Body::default();
    for g in &scan.given {
        body.set("t", number(tool, g, "a number of seconds")?, &g.typed);
    }
    match words.as_slice() {
        [] => {
            return Err(grammar.err(
                "no NPROCS (\"You need to specify NPROCS\"); allowed: tbench [-t SECONDS] NPROCS [SERVER]".into(),
            ))
        }
        [n, rest @ ..] => {
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return Err(grammar.err(format!("NPROCS needs a number, not '{n}'")));
            }
            body.set("clients", n, "NPROCS");
            match rest {
                [] => {}
                [server] => body.set("server", server, "SERVER"),
                [_, more @ ..] => return Err(extra(tool, more, "tbench [-t SECONDS] NPROCS [SERVER]")),
            }
        }
    }
    Tbench::parse(&body.text()).map_err(|e| body.rename(tool, tool, e))
}
