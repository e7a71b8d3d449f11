//! The `--idle-states` option: a preset or an explicit list of states, with states to
//! disable.
//!
//! Grammar (entries separated by commas, spaces around them ignored):
//!
//! - `PRESET`: a name of [`PRESETS`] or [`ALIASES`], ASCII case ignored (`spr`, `tc2`).
//! - `flat:DURATION`: the `flat` table with its C1 at `DURATION` instead of the engine's
//!   `idle_exit` cost.
//! - `NAME:EXIT:TARGET[:timer-stop]`, one entry per state, shallowest first: exit latency
//!   and target residency as durations with a `ns`, `us` or `ms` unit, a bare number being
//!   microseconds as in the kernel's tables (`C1:2:2,C1E:10us:20us,C6:133us:600us`).
//!   Decimals are allowed when they make whole nanoseconds (`0.5us`). `timer-stop` sets
//!   `CPUIDLE_FLAG_TIMER_STOP`; it is off by default because the x86 tables fairsim ports
//!   run on CPUs with ARAT, where intel_idle sets it on no state, and fairsim does not
//!   guess it from the latencies.
//!
//!   A `POLL` state (0/0, polling) is put first, as x86 drivers have it, unless the list
//!   starts with `POLL` (which may then be given bare, or with its own latencies) or with
//!   `WFI` (an ARM-style table without a polling state). `POLL` anywhere else is an error.
//! - `no-NAME`: after the table is built, mark the state `NAME` disabled in every table
//!   that has it (`spr,no-C6`, `tc2,no-WFI`), as writing `stateK/disable` does. A name no
//!   table has is an error.
//!
//! An explicit list is checked as the governors need it: names distinct, exit latencies
//! and target residencies never decreasing from one state to the next, and no target
//! residency below its exit latency. Every error is one line naming `--idle-states`, the
//! offending token and what is allowed.

use crate::states::{poll_state, IdleState, IdleStates, IdleTable};
use crate::tables::{canonical, flat, preset, ALIASES, FLAT_DEFAULT_EXIT_NS, PRESETS, TC2_CPUS};

/// The entry form, repeated in error messages so each says what is allowed.
const ENTRY_FORM: &str = "NAME:EXIT:TARGET[:timer-stop] entries (durations in ns/us/ms, bare numbers us), then no-NAME to disable a state";

/// Why an `--idle-states` value was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdleSpecError {
    /// Nothing was given.
    #[error("--idle-states: empty value ''; allowed: a preset ({presets}) or a comma-separated list of {ENTRY_FORM}")]
    Empty {
        /// The preset names, for the message.
        presets: String,
    },
    /// A single name that is not a preset.
    #[error("--idle-states: unknown preset '{token}'; allowed: {presets}, or a comma-separated list of {ENTRY_FORM}")]
    UnknownPreset {
        /// The name given.
        token: String,
        /// The preset names and aliases.
        presets: String,
    },
    /// `no-NAME` for a state no table has.
    #[error("--idle-states: '{token}' names no state of this table; allowed: no- followed by one of {states}")]
    UnknownState {
        /// The `no-NAME` token.
        token: String,
        /// The states the table has.
        states: String,
    },
    /// An entry that does not parse.
    #[error(
        "--idle-states: malformed entry '{token}': {reason}; allowed: a preset or {ENTRY_FORM}"
    )]
    Malformed {
        /// The entry as given.
        token: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A state whose exit latency or target residency is below the previous state's.
    #[error("--idle-states: '{token}': {field} {value_ns} ns is below the {prev_value_ns} ns of the state before it ({prev}); allowed: exit latencies and target residencies that do not decrease from one state to the next")]
    OutOfOrder {
        /// The entry as given.
        token: String,
        /// `exit latency` or `target residency`.
        field: &'static str,
        /// The entry's value.
        value_ns: u64,
        /// The previous state's name.
        prev: String,
        /// The previous state's value.
        prev_value_ns: u64,
    },
    /// A state that saves nothing before it has even woken up.
    #[error("--idle-states: '{token}': target residency {target_ns} ns is below the exit latency {exit_ns} ns; allowed: a target residency at least the exit latency")]
    ResidencyBelowLatency {
        /// The entry as given.
        token: String,
        /// Its target residency.
        target_ns: u64,
        /// Its exit latency.
        exit_ns: u64,
    },
    /// Two states with one name (ASCII case ignored, as `no-NAME` matches).
    #[error("--idle-states: '{token}': the state name '{name}' is already used; allowed: distinct names (POLL comes first unless the list starts with POLL or WFI)")]
    DuplicateName {
        /// The entry as given.
        token: String,
        /// The repeated name.
        name: String,
    },
    /// The TC2 preset on a machine that is not the 5-CPU TC2.
    #[error("--idle-states: preset '{token}' is the TC2's (CPUs 0-1 big, 2-4 LITTLE, {need} CPUs) but the machine has {got}; allowed: another preset or a list")]
    CpuCount {
        /// The name given.
        token: String,
        /// The CPUs the preset describes.
        need: usize,
        /// The machine's CPUs.
        got: usize,
    },
}

/// Parses `--idle-states` for a machine of `nr_cpus` CPUs; `flat` gets
/// [`FLAT_DEFAULT_EXIT_NS`].
pub fn parse_idle_states(spec: &str, nr_cpus: usize) -> Result<IdleStates, IdleSpecError> {
    parse_idle_states_with(spec, nr_cpus, FLAT_DEFAULT_EXIT_NS)
}

/// Parses `--idle-states` for a machine of `nr_cpus` CPUs, giving a bare `flat` the
/// engine's `idle_exit` cost `flat_exit_ns`.
pub fn parse_idle_states_with(
    spec: &str,
    nr_cpus: usize,
    flat_exit_ns: u64,
) -> Result<IdleStates, IdleSpecError> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Err(IdleSpecError::Empty {
            presets: preset_names(),
        });
    }
    let tokens: Vec<&str> = spec.split(',').map(str::trim).collect();
    if tokens.iter().any(|t| t.is_empty()) {
        return Err(malformed(spec, "an empty entry between commas"));
    }
    let (disables, entries): (Vec<&str>, Vec<&str>) = tokens.iter().partition(|t| is_disable(t));
    let mut states = match entries.as_slice() {
        [] => {
            return Err(malformed(
                disables.first().copied().unwrap_or(spec),
                "a disable needs a preset or a state list before it",
            ))
        }
        [one] if !one.contains(':') => named_preset(one, nr_cpus, flat_exit_ns)?,
        [one] if is_flat_override(one) => {
            let (_, dur) = one.split_once(':').unwrap_or((one, ""));
            let ns = parse_duration(dur).map_err(|r| malformed(one, r))?;
            flat(ns, nr_cpus)
        }
        list => IdleStates::uniform(parse_list(list, spec)?, nr_cpus),
    };
    for token in disables {
        disable(&mut states, token)?;
    }
    Ok(states)
}

/// Checks a table as an explicit list is checked: exit latencies and target residencies
/// non-decreasing and each target residency at least its exit latency (the state's name
/// stands for the token in errors). The shipped presets pass it.
pub fn check_table(states: &[IdleState]) -> Result<(), IdleSpecError> {
    let mut prev: Option<&IdleState> = None;
    for s in states {
        check_state(prev, s, &s.name)?;
        prev = Some(s);
    }
    Ok(())
}

fn malformed(token: &str, reason: impl std::fmt::Display) -> IdleSpecError {
    IdleSpecError::Malformed {
        token: token.to_string(),
        reason: reason.to_string(),
    }
}

/// The preset names with their aliases, one line.
fn preset_names() -> String {
    let names: Vec<&str> = PRESETS.iter().map(|&(n, _)| n).collect();
    let aliases: Vec<&str> = ALIASES.iter().map(|&(a, _)| a).collect();
    format!("{} (aliases {})", names.join(", "), aliases.join(", "))
}

/// `no-NAME`; an entry with a colon is a state even if its name starts with `no-`.
fn is_disable(token: &str) -> bool {
    token
        .get(..3)
        .is_some_and(|p| p.eq_ignore_ascii_case("no-"))
        && !token.contains(':')
}

/// `flat:DURATION`: two fields, the first `flat`.
fn is_flat_override(token: &str) -> bool {
    let mut parts = token.split(':');
    matches!(parts.next(), Some(n) if n.trim().eq_ignore_ascii_case("flat")) && parts.count() == 1
}

fn named_preset(
    token: &str,
    nr_cpus: usize,
    flat_exit_ns: u64,
) -> Result<IdleStates, IdleSpecError> {
    let unknown = || IdleSpecError::UnknownPreset {
        token: token.to_string(),
        presets: preset_names(),
    };
    match canonical(token) {
        None => Err(unknown()),
        Some("flat") => Ok(flat(flat_exit_ns, nr_cpus)),
        Some("big_little") if nr_cpus != TC2_CPUS => Err(IdleSpecError::CpuCount {
            token: token.to_string(),
            need: TC2_CPUS,
            got: nr_cpus,
        }),
        Some(name) => preset(name, nr_cpus).ok_or_else(unknown),
    }
}

/// An explicit list: `POLL` first unless the list starts with `POLL` or `WFI`, then each
/// entry checked against the state before it.
fn parse_list(entries: &[&str], spec: &str) -> Result<IdleTable, IdleSpecError> {
    let first = entries[0].split(':').next().unwrap_or("").trim();
    let mut states: Vec<IdleState> = Vec::with_capacity(entries.len() + 1);
    if !(first.eq_ignore_ascii_case("POLL") || first.eq_ignore_ascii_case("WFI")) {
        states.push(poll_state());
    }
    for (i, &entry) in entries.iter().enumerate() {
        let s = parse_entry(entry, i == 0)?;
        if states.iter().any(|p| p.name.eq_ignore_ascii_case(&s.name)) {
            return Err(IdleSpecError::DuplicateName {
                token: entry.to_string(),
                name: s.name,
            });
        }
        check_state(states.last(), &s, entry)?;
        states.push(s);
    }
    Ok(IdleTable {
        driver: "fairsim".to_string(),
        source: format!("--idle-states {spec}"),
        states,
    })
}

/// One `NAME:EXIT:TARGET[:timer-stop]` entry (or a bare `POLL` when `first`).
fn parse_entry(entry: &str, first: bool) -> Result<IdleState, IdleSpecError> {
    let fields: Vec<&str> = entry.split(':').map(str::trim).collect();
    let name = fields[0];
    if name.is_empty() {
        return Err(malformed(entry, "the state name is empty"));
    }
    let is_poll = name.eq_ignore_ascii_case("POLL");
    if is_poll && !first {
        return Err(malformed(entry, "POLL can only be the first state"));
    }
    match fields.len() {
        1 if is_poll => return Ok(poll_state()),
        1 if canonical(name).is_some() => {
            return Err(malformed(
                entry,
                "a preset cannot be combined with state entries",
            ))
        }
        1 => {
            return Err(malformed(
                entry,
                "the exit latency and target residency are missing",
            ))
        }
        2 => return Err(malformed(entry, "the target residency is missing")),
        3 | 4 => {}
        _ => return Err(malformed(entry, "too many ':' fields")),
    }
    let exit_ns = parse_duration(fields[1]).map_err(|r| malformed(entry, r))?;
    let target_ns = parse_duration(fields[2]).map_err(|r| malformed(entry, r))?;
    let timer_stop = match fields.get(3) {
        None => false,
        Some(f) if f.eq_ignore_ascii_case("timer-stop") => true,
        Some(f) => {
            return Err(malformed(
                entry,
                format!("unknown flag '{f}' (the only flag is timer-stop)"),
            ))
        }
    };
    Ok(IdleState {
        name: if is_poll {
            "POLL".to_string()
        } else {
            name.to_string()
        },
        exit_latency_ns: exit_ns,
        target_residency_ns: target_ns,
        polling: is_poll,
        timer_stop,
        disabled: false,
    })
}

/// `s` against the state before it (if any) and against itself.
fn check_state(prev: Option<&IdleState>, s: &IdleState, token: &str) -> Result<(), IdleSpecError> {
    if let Some(p) = prev {
        let pairs = [
            ("exit latency", s.exit_latency_ns, p.exit_latency_ns),
            (
                "target residency",
                s.target_residency_ns,
                p.target_residency_ns,
            ),
        ];
        for (field, value_ns, prev_value_ns) in pairs {
            if value_ns < prev_value_ns {
                return Err(IdleSpecError::OutOfOrder {
                    token: token.to_string(),
                    field,
                    value_ns,
                    prev: p.name.clone(),
                    prev_value_ns,
                });
            }
        }
    }
    if s.target_residency_ns < s.exit_latency_ns {
        return Err(IdleSpecError::ResidencyBelowLatency {
            token: token.to_string(),
            target_ns: s.target_residency_ns,
            exit_ns: s.exit_latency_ns,
        });
    }
    Ok(())
}

/// Why a duration of an idle-state entry was refused, with the text as trimmed. Each
/// message is a phrase for [`malformed`], which puts it after the entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum DurationError {
    /// Not digits with an optional fraction and unit.
    #[error("'{got}' is not a duration")]
    NotDuration {
        /// The text as given.
        got: String,
    },
    /// More nanoseconds than a `u64` holds.
    #[error("'{got}' is too long a duration")]
    TooLong {
        /// The text as given.
        got: String,
    },
    /// A fraction finer than any unit's nanosecond.
    #[error("'{got}' has more than 9 decimals")]
    TooManyDecimals {
        /// The text as given.
        got: String,
    },
    /// A fraction that does not come to whole nanoseconds.
    #[error("'{got}' is not a whole number of nanoseconds")]
    NotWholeNanoseconds {
        /// The text as given.
        got: String,
    },
}

/// A duration in nanoseconds: digits with an optional fraction, then `ns`, `us` or `ms`;
/// no unit means microseconds.
fn parse_duration(text: &str) -> Result<u64, DurationError> {
    let t = text.trim();
    let (num, unit_ns) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1_000)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1_000_000)
    } else {
        (t, 1_000)
    };
    let bad = || DurationError::NotDuration { got: t.to_string() };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return Err(bad());
    }
    let too_long = || DurationError::TooLong { got: t.to_string() };
    let whole: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| too_long())?
    };
    let mut ns = whole.checked_mul(unit_ns).ok_or_else(too_long)?;
    if !frac.is_empty() {
        // At most 9 fractional digits: finer than a nanosecond in every unit.
        let scale = u32::try_from(frac.len())
            .ok()
            .filter(|&n| n <= 9)
            .map(|n| 10u64.pow(n))
            .ok_or_else(|| DurationError::TooManyDecimals { got: t.to_string() })?;
        let part: u64 = frac.parse().map_err(|_| bad())?;
        let scaled = part * unit_ns;
        if scaled % scale != 0 {
            return Err(DurationError::NotWholeNanoseconds { got: t.to_string() });
        }
        ns = ns.checked_add(scaled / scale).ok_or_else(too_long)?;
    }
    Ok(ns)
}

/// `no-NAME`: disables `NAME` in every table that has it.
fn disable(states: &mut IdleStates, token: &str) -> Result<(), IdleSpecError> {
    let name = token.get(3..).unwrap_or("").trim();
    if name.is_empty() {
        return Err(malformed(token, "no state name after no-"));
    }
    let mut found = false;
    for s in states.tables.iter_mut().flat_map(|t| t.states.iter_mut()) {
        if s.name.eq_ignore_ascii_case(name) {
            s.disabled = true;
            found = true;
        }
    }
    if found {
        return Ok(());
    }
    let mut names: Vec<&str> = Vec::new();
    for s in states.tables.iter().flat_map(|t| t.states.iter()) {
        if !names.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    Err(IdleSpecError::UnknownState {
        token: token.to_string(),
        states: names.join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (name, exit ns, target ns, polling, timer_stop, disabled) of table `i`.
    fn rows(m: &IdleStates, i: usize) -> Vec<(String, u64, u64, bool, bool, bool)> {
        m.tables[i]
            .states
            .iter()
            .map(|s| {
                let n = s.name.clone();
                (
                    n,
                    s.exit_latency_ns,
                    s.target_residency_ns,
                    s.polling,
                    s.timer_stop,
                    s.disabled,
                )
            })
            .collect()
    }

    fn row(n: &str, e: u64, t: u64) -> (String, u64, u64, bool, bool, bool) {
        (n.to_string(), e, t, false, false, false)
    }

    fn poll() -> (String, u64, u64, bool, bool, bool) {
        ("POLL".to_string(), 0, 0, true, false, false)
    }

    fn err(spec: &str) -> IdleSpecError {
        parse_idle_states(spec, 4).expect_err(spec)
    }

    /// Every message is one line naming the option and the offending token.
    fn assert_message(e: &IdleSpecError, token: &str) {
        let m = e.to_string();
        assert!(!m.contains('\n'), "{m}");
        assert!(m.starts_with("--idle-states: "), "{m}");
        assert!(m.contains(&format!("'{token}'")), "{m} names {token}");
        assert!(m.contains("allowed: "), "{m}");
    }

    #[test]
    fn presets_by_name_and_alias() {
        assert_eq!(parse_idle_states("spr", 224).ok(), preset("spr", 224));
        assert_eq!(parse_idle_states(" SPR-2s56c2t ", 8).ok(), preset("spr", 8));
        assert_eq!(parse_idle_states("2s24c2t", 96).ok(), preset("bdx", 96));
        assert_eq!(parse_idle_states("e5-2690v2", 40).ok(), preset("ivt", 40));
        assert_eq!(parse_idle_states("haltpoll", 2).ok(), preset("haltpoll", 2));
        let tc2 = parse_idle_states("tc2", 5).expect("tc2");
        assert_eq!(tc2.tables.len(), 2);
        assert_eq!(tc2.cpu_table, vec![0, 0, 1, 1, 1]);
    }

    #[test]
    fn flat_takes_the_engine_cost_or_its_own() {
        assert_eq!(parse_idle_states("flat", 3).ok(), Some(flat(1_000, 3)));
        assert_eq!(
            parse_idle_states_with("flat", 3, 2_500).ok(),
            Some(flat(2_500, 3))
        );
        assert_eq!(
            parse_idle_states_with("flat:700ns", 3, 2_500).ok(),
            Some(flat(700, 3))
        );
        assert_eq!(parse_idle_states("FLAT:2", 1).ok(), Some(flat(2_000, 1)));
    }

    #[test]
    fn explicit_list_gets_poll_first() {
        let m = parse_idle_states("C1:2us:2us, C1E:10us:20us ,C6:133us:600us", 4).expect("list");
        assert_eq!(m.cpu_table, vec![0; 4]);
        assert_eq!(m.tables[0].driver, "fairsim");
        assert!(m.tables[0].source.contains("C6:133us:600us"));
        assert_eq!(
            rows(&m, 0),
            vec![
                poll(),
                row("C1", 2_000, 2_000),
                row("C1E", 10_000, 20_000),
                row("C6", 133_000, 600_000)
            ]
        );
    }

    #[test]
    fn units_and_bare_numbers() {
        let m = parse_idle_states("A:500ns:0.75us,B:2:3,C:1ms:1.5ms", 1).expect("units");
        assert_eq!(
            rows(&m, 0)[1..],
            [
                row("A", 500, 750),
                row("B", 2_000, 3_000),
                row("C", 1_000_000, 1_500_000)
            ]
        );
        assert_eq!(parse_duration(".5us"), Ok(500));
        assert_eq!(parse_duration("0"), Ok(0));
        assert_eq!(
            parse_duration("1.000000001ms"),
            Err(DurationError::NotWholeNanoseconds {
                got: "1.000000001ms".into()
            })
        );
    }

    #[test]
    fn list_starting_with_poll_or_wfi() {
        let m = parse_idle_states("POLL,C1:1:1", 1).expect("bare POLL");
        assert_eq!(rows(&m, 0), vec![poll(), row("C1", 1_000, 1_000)]);
        let m = parse_idle_states("poll:0:0,C1:1:1", 1).expect("POLL with values");
        assert_eq!(rows(&m, 0), vec![poll(), row("C1", 1_000, 1_000)]);
        let m = parse_idle_states("WFI:1:1,cluster:1700us:2000us:timer-stop", 2).expect("arm");
        let mut deep = row("cluster", 1_700_000, 2_000_000);
        deep.4 = true;
        assert_eq!(rows(&m, 0), vec![row("WFI", 1_000, 1_000), deep]);
    }

    #[test]
    fn timer_stop_is_explicit() {
        let m = parse_idle_states("C1:1:1,C6:100:400:Timer-Stop", 1).expect("flag");
        let flags: Vec<bool> = m.tables[0].states.iter().map(|s| s.timer_stop).collect();
        assert_eq!(flags, vec![false, false, true]);
    }

    #[test]
    fn disable_states() {
        let m = parse_idle_states("spr,no-C6", 4).expect("no-C6");
        let disabled: Vec<bool> = m.tables[0].states.iter().map(|s| s.disabled).collect();
        assert_eq!(disabled, vec![false, false, false, true]);
        let m = parse_idle_states("no-c1e, spr, no-C6", 4).expect("order free, case free");
        let disabled: Vec<bool> = m.tables[0].states.iter().map(|s| s.disabled).collect();
        assert_eq!(disabled, vec![false, false, true, true]);
        let m = parse_idle_states("C1:1:1,C6:100:400,no-C6,no-C6", 1).expect("list, twice");
        assert!(m.tables[0].states[2].disabled && !m.tables[0].states[1].disabled);
        // On TC2 WFI is in both tables; a cluster state only in its own.
        let m = parse_idle_states("tc2,no-WFI,no-cluster-sleep-l", 5).expect("tc2");
        assert!(m.tables[0].states[0].disabled && m.tables[1].states[0].disabled);
        assert!(!m.tables[0].states[1].disabled && m.tables[1].states[1].disabled);
        let m = parse_idle_states("haltpoll,no-haltpoll idle,no-POLL", 2).expect("haltpoll");
        assert!(m.tables[0].states.iter().all(|s| s.disabled));
    }

    #[test]
    fn empty_values() {
        for spec in ["", "   "] {
            let e = err(spec);
            assert!(matches!(e, IdleSpecError::Empty { .. }), "{e:?}");
            let m = e.to_string();
            assert!(
                m.starts_with("--idle-states: empty value ''") && m.contains("spr"),
                "{m}"
            );
            assert!(!m.contains('\n'));
        }
    }

    #[test]
    fn unknown_preset_lists_the_presets() {
        let e = err("skx");
        assert!(matches!(e, IdleSpecError::UnknownPreset { .. }));
        assert_message(&e, "skx");
        let m = e.to_string();
        for (name, _) in PRESETS {
            assert!(m.contains(name), "{m} lists {name}");
        }
        assert!(m.contains("2s24c2t"));
        // A single name without latencies is taken as a preset; the message shows the
        // list form too.
        let e = err("C1");
        assert!(matches!(e, IdleSpecError::UnknownPreset { .. }));
        assert!(e.to_string().contains("NAME:EXIT:TARGET"));
        assert_message(&err("nö"), "nö");
    }

    #[test]
    fn unknown_state_lists_the_states() {
        let e = err("spr,no-C3");
        assert!(matches!(e, IdleSpecError::UnknownState { .. }));
        assert_message(&e, "no-C3");
        assert!(e.to_string().contains("POLL, C1, C1E, C6"), "{e}");
        assert_message(&err("C1:1:1,no-C2"), "no-C2");
    }

    #[test]
    fn malformed_entries() {
        let cases = [
            ("no-C6", "no-C6"),
            ("spr,no-", "no-"),
            ("C1,C6:1:2", "C1"),
            ("C1:2us", "C1:2us"),
            ("C1:2:2:timer-stop:x", "C1:2:2:timer-stop:x"),
            ("C1:2:2:stop", "C1:2:2:stop"),
            (":2:2", ":2:2"),
            ("C1:two:2", "C1:two:2"),
            ("C1:2s:3s", "C1:2s:3s"),
            ("C1:-1:2", "C1:-1:2"),
            ("C1:.:2", "C1:.:2"),
            ("C1:0.0001ns:2", "C1:0.0001ns:2"),
            ("C1:99999999999999999999:1", "C1:99999999999999999999:1"),
            ("C1:20000000000000ms:1", "C1:20000000000000ms:1"),
            ("C1:1:1,,C6:2:2", "C1:1:1,,C6:2:2"),
            ("spr,C6:1:2", "spr"),
            ("C1:1:1,POLL", "POLL"),
            ("WFI:1:1,POLL:0:0", "POLL:0:0"),
            ("flat:x", "flat:x"),
            ("nö,C1:1:1", "nö"),
        ];
        for (spec, token) in cases {
            let e = err(spec);
            assert!(
                matches!(e, IdleSpecError::Malformed { .. }),
                "{spec}: {e:?}"
            );
            assert_message(&e, token);
        }
    }

    #[test]
    fn latencies_out_of_order() {
        let e = err("C1:10us:20us,C1E:5us:30us");
        assert_eq!(
            e,
            IdleSpecError::OutOfOrder {
                token: "C1E:5us:30us".into(),
                field: "exit latency",
                value_ns: 5_000,
                prev: "C1".into(),
                prev_value_ns: 10_000,
            }
        );
        assert_message(&e, "C1E:5us:30us");
        let e = err("C1:10us:40us,C1E:20us:30us");
        assert!(
            matches!(
                e,
                IdleSpecError::OutOfOrder {
                    field: "target residency",
                    ..
                }
            ),
            "{e:?}"
        );
        assert_message(&e, "C1E:20us:30us");
        // The prepended POLL takes part: a list cannot go below it.
        assert!(parse_idle_states("C1:0:0", 1).is_ok());
    }

    #[test]
    fn residency_below_latency() {
        let e = err("C6:133us:100us");
        assert_eq!(
            e,
            IdleSpecError::ResidencyBelowLatency {
                token: "C6:133us:100us".into(),
                target_ns: 100_000,
                exit_ns: 133_000
            }
        );
        assert_message(&e, "C6:133us:100us");
        assert!(matches!(
            err("POLL:1:0,C1:1:1"),
            IdleSpecError::ResidencyBelowLatency { .. }
        ));
    }

    #[test]
    fn duplicate_names() {
        let e = err("C1:1:1,c1:2:2");
        assert_eq!(
            e,
            IdleSpecError::DuplicateName {
                token: "c1:2:2".into(),
                name: "c1".into()
            }
        );
        assert_message(&e, "c1:2:2");
        // WFI first means no POLL is added, so WFI twice is the duplicate.
        assert!(matches!(
            err("WFI:1:1,WFI:2:2"),
            IdleSpecError::DuplicateName { .. }
        ));
    }

    #[test]
    fn tc2_needs_its_five_cpus() {
        let e = parse_idle_states("tc2-2big3little", 8).expect_err("8 CPUs");
        assert_eq!(
            e,
            IdleSpecError::CpuCount {
                token: "tc2-2big3little".into(),
                need: 5,
                got: 8
            }
        );
        assert_message(&e, "tc2-2big3little");
        // An explicit ARM list works on any machine.
        assert!(parse_idle_states("WFI:1:1,C1:1700us:2000us:timer-stop", 8).is_ok());
    }

    #[test]
    fn every_preset_builds_and_is_ordered() {
        for &(name, desc) in PRESETS {
            assert!(!desc.is_empty());
            let n = if name == "big_little" { TC2_CPUS } else { 8 };
            let m = preset(name, n).unwrap_or_else(|| panic!("{name} builds"));
            assert_eq!(m.cpu_table.len(), n, "{name}");
            for t in &m.tables {
                check_table(&t.states).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(!t.source.is_empty() && !t.driver.is_empty());
            }
        }
    }

    #[test]
    fn presets_pass_the_list_checks() {
        for (name, _) in PRESETS {
            let n = if *name == "big_little" { TC2_CPUS } else { 2 };
            let m = preset(name, n).expect(name);
            for t in &m.tables {
                assert_eq!(check_table(&t.states), Ok(()), "{name}");
            }
        }
        let bad = [poll_state(), crate::states::state_us("C1", 3, 2, false)];
        assert!(matches!(
            check_table(&bad),
            Err(IdleSpecError::ResidencyBelowLatency { .. })
        ));
    }
}
