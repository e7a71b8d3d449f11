//! `netperf ... [-- TEST-SPECIFIC ...]` (netperf 2.7.0).
//!
//! Read in HewlettPackard/netperf at tag `netperf-2.7.0`: `src/netsh.c` `scan_cmd_line`,
//! plain `getopt` with `GLOBAL_CMD_LINE_ARGS`
//! `"A:a:b:B:CcdD:f:F:H:hi:I:jk:K:l:L:n:NO:o:P:p:rSs:t:T:v:VW:w:y:Y:Z:46"`; after `--`,
//! the test's own options, which the "MIGRATED" TCP/UDP tests read in
//! `src/nettest_omni.c` `scan_omni_args` with `OMNI_ARGS`
//! `"aBb:cCd:De:FgG:hH:i:Ij:kK:l:L:m:M:nNoOp:P:r:R:s:S:t:T:u:UVw:W:46"`.
//!
//! Modelled: global `-t` (the test, any case: `convert_to_upper`), `-l` (seconds),
//! `-H` (loopback only), `-c`, `-C`, `-4`; test-specific `-m` (local send size) and
//! `-r REQ[,RSP]`. Defaults: `test_name = "TCP_STREAM"` and `test_time = 10` (netsh.c
//! lines 106 and 148), the key form's. One command line is one netperf: the key form's
//! `instances=N` has no netperf option.

use crate::Netperf;
use fairsim_engine::error::EngineError;

use super::body::{extra, Body};
use super::getopt::{number, Arg, Grammar, Opt};

const fn other(short: char, arg: Arg) -> Opt {
    Opt::unmodelled(Some(short), None, arg)
}

/// netperf's global options.
const GLOBAL: &[Opt] = &[
    Opt::new(Some('t'), None, Arg::Required, "a test name"),
    Opt::new(Some('l'), None, Arg::Required, "a number of seconds"),
    Opt::new(Some('H'), None, Arg::Required, "a host"),
    Opt::new(Some('c'), None, Arg::OptionalDigit, ""),
    Opt::new(Some('C'), None, Arg::OptionalDigit, ""),
    Opt::new(Some('4'), None, Arg::No, ""),
    other('A', Arg::Required),
    other('a', Arg::Required),
    other('b', Arg::Required),
    other('B', Arg::Required),
    other('d', Arg::No),
    other('D', Arg::Required),
    other('f', Arg::Required),
    other('F', Arg::Required),
    other('h', Arg::No),
    other('i', Arg::Required),
    other('I', Arg::Required),
    other('j', Arg::No),
    other('k', Arg::Required),
    other('K', Arg::Required),
    other('L', Arg::Required),
    other('n', Arg::Required),
    other('N', Arg::No),
    other('O', Arg::Required),
    other('o', Arg::Required),
    other('P', Arg::Required),
    other('p', Arg::Required),
    other('r', Arg::No),
    other('S', Arg::No),
    other('s', Arg::Required),
    other('T', Arg::Required),
    other('v', Arg::Required),
    other('V', Arg::No),
    other('W', Arg::Required),
    other('w', Arg::Required),
    other('y', Arg::Required),
    other('Y', Arg::Required),
    other('Z', Arg::Required),
    other('6', Arg::No),
];

/// The omni tests' own options.
const TEST: &[Opt] = &[
    Opt::new(Some('m'), None, Arg::Required, "a send size in bytes"),
    Opt::new(Some('r'), None, Arg::Required, "REQ,RSP sizes in bytes"),
    other('a', Arg::No),
    other('B', Arg::No),
    other('b', Arg::Required),
    other('c', Arg::No),
    other('C', Arg::No),
    other('d', Arg::Required),
    other('D', Arg::No),
    other('e', Arg::Required),
    other('F', Arg::No),
    other('g', Arg::No),
    other('G', Arg::Required),
    other('h', Arg::No),
    other('H', Arg::Required),
    other('i', Arg::Required),
    other('I', Arg::No),
    other('j', Arg::Required),
    other('k', Arg::No),
    other('K', Arg::Required),
    other('l', Arg::Required),
    other('L', Arg::Required),
    other('M', Arg::Required),
    other('n', Arg::No),
    other('N', Arg::No),
    other('o', Arg::No),
    other('O', Arg::No),
    other('p', Arg::Required),
    other('P', Arg::Required),
    other('R', Arg::Required),
    other('s', Arg::Required),
    other('S', Arg::Required),
    other('t', Arg::Required),
    other('T', Arg::Required),
    other('u', Arg::Required),
    other('U', Arg::No),
    other('V', Arg::No),
    other('w', Arg::Required),
    other('W', Arg::Required),
    other('4', Arg::No),
    other('6', Arg::No),
];

/// Parses netperf's arguments.
pub(super) fn parse(args: &[String]) -> Result<Netperf, EngineError> {
    let tool = "netperf";
    let grammar = Grammar {
        tool,
        opts: GLOBAL,
        negatable: false,
    };
    let scan = grammar.scan(args)?;
    if !scan.positional.is_empty() {
        return Err(extra(
            tool,
            &scan.positional,
            "options, then -- and the test's options",
        ));
    }
    let mut body = Body::default();
    let mut test = ("TCP_STREAM".to_string(), "-t".to_string());
    let mut length = (10, "-l".to_string());
    for g in &scan.given {
        match GLOBAL[g.index].short {
            Some('t') => {
                test = (
                    g.value.clone().unwrap_or_default().to_uppercase(),
                    g.typed.clone(),
                )
            }
            Some('l') => length = (number(tool, g, "a number of seconds")?, g.typed.clone()),
            Some('H') => body.set("H", g.value.as_deref().unwrap_or(""), &g.typed),
            Some(c @ ('c' | 'C')) => {
                if let Some(rate) = &g.value {
                    return Err(grammar.err(format!(
                        "-{c} {rate}: a CPU rate is not modelled (fairsim measures utilisation from the machine's busy time); allowed: -{c} alone"
                    )));
                }
                body.flag(if c == 'c' { "c" } else { "C" }, &g.typed);
            }
            _ => body.flag("4", &g.typed),
        }
    }
    body.set("t", &test.0, &test.1);
    body.set("l", length.0, &length.1);
    if let Some(words) = &scan.after_dashdash {
        let shown = "netperf (test-specific)";
        let grammar = Grammar {
            tool: shown,
            opts: TEST,
            negatable: false,
        };
        let scan = grammar.scan(words)?;
        if !scan.positional.is_empty() || scan.after_dashdash.is_some() {
            return Err(extra(shown, &scan.positional, "-m SIZE, -r REQ,RSP"));
        }
        for g in &scan.given {
            let v = g.value.clone().unwrap_or_default();
            if TEST[g.index].short == Some('m') {
                if v.contains(',') {
                    return Err(grammar.err(format!(
                        "-m {v}: a remote send size is not modelled; allowed: -m SIZE"
                    )));
                }
                body.set("m", number(shown, g, "a send size in bytes")?, &g.typed);
            } else {
                body.set("r", v, &g.typed);
            }
        }
    }
    Netperf::parse(&body.text()).map_err(|e| body.rename(tool, tool, e))
}
