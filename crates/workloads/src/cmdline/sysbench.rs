//! `sysbench --test=cpu ... run` (0.4) and `sysbench cpu ... run` (1.0).
//!
//! sysbench reads its own options, not getopt's: a word starting `--` is `--name=value`
//! (a bare `--name` is a flag), and every other word is the test's name (1.0) or the
//! command. Read in akopytov/sysbench: branch `0.4` `sysbench/sysbench.c`
//! `parse_arguments` and `general_args`, `sysbench/tests/cpu/sb_cpu.c`; tag `1.0.20`
//! `src/sysbench.c` `parse_general_arguments` and `general_args`, `src/tests/cpu/sb_cpu.c`.
//!
//! Which spelling: a test named as a word (`sysbench cpu run`) or a 1.0-only option
//! (`--threads`, `--events`, `--time`) is 1.0; otherwise (`--test=cpu`) it is 0.4. The
//! defaults differ: 0.4 has `--max-requests=10000` and `--max-time=0` (no limit); 1.0 has
//! `--events=0` (no limit) and `--time=10`; both have one thread and
//! `--cpu-max-prime=10000`.
//!
//! The mapping onto fairsim's sysbench model, which runs a fixed number of events on
//! each thread:
//! - the event limit is the total of all threads, as sysbench's shared counter makes it,
//!   so `events` per thread is the total divided by the threads; a total that is not a
//!   multiple of the threads, and no event limit at all (1.0's default), are refused;
//! - the time limit is not something the model stops on, so a limit that the events
//!   could not meet even at full speed (capacity 1024) is refused; a reachable one is
//!   met by the events and has nothing to cut;
//! - `--cpu-max-prime=N` scales the work of an event: fairsim's 1 ms event is
//!   `--cpu-max-prime=10000`, and an event's work is proportional to the trial divisions
//!   of `cpu_execute_event`'s loop (`for (c = 3; c < max_prime; c++)`, dividing by `l`
//!   from 2 while `l <= sqrt(c)` until one divides), plus one per candidate for the
//!   `sqrt`.

use crate::SysbenchCpu;
use fairsim_des::time::MS;
use fairsim_engine::error::{EngineError, SpecError};

use super::body::Body;

/// The work of one event at `--cpu-max-prime=10000`: fairsim's default event.
const EVENT_AT_10000: u64 = MS;
/// The largest `--cpu-max-prime` taken: an event of about 0.7 s, and a count that takes
/// milliseconds.
const MAX_PRIME: u64 = 1_000_000;

/// Options of 0.4's `general_args` and the cpu test's `cpu_args` that fairsim does not
/// model.
const OTHER_04: &[&str] = &[
    "forced-shutdown",
    "thread-stack-size",
    "init-rng",
    "seed-rng",
    "tx-rate",
    "tx-jitter",
    "report-interval",
    "report-checkpoints",
    "debug",
    "validate",
    "help",
    "version",
];

/// Options of 1.0's `general_args` that fairsim does not model.
const OTHER_10: &[&str] = &[
    "warmup-time",
    "thread-stack-size",
    "thread-init-timeout",
    "rate",
    "report-interval",
    "report-checkpoints",
    "debug",
    "validate",
    "help",
    "version",
    "config-file",
    "luajit-cmd",
    "tx-rate",
    "forced-shutdown",
    "percentile",
    "histogram",
    "verbosity",
];

/// One option's canonical meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Threads,
    Events,
    Time,
    Prime,
    Test,
}

/// Parses sysbench's arguments.
pub(super) fn parse(args: &[String]) -> Result<SysbenchCpu, EngineError> {
    let tool = "sysbench";
    let fail = |what: String| EngineError::from(SpecError::refused(tool, what));
    let v10 = args.iter().any(|a| {
        !a.starts_with("--") && a != "run" && a != "prepare" && a != "cleanup" && a != "help"
            || ["threads", "events", "time"].contains(&long_name(a))
    });
    let allowed = if v10 {
        "--threads --events --time --cpu-max-prime (and --num-threads --max-requests --max-time)"
    } else {
        "--test=cpu --num-threads --max-requests --max-time --cpu-max-prime"
    };
    let mut words = Vec::new();
    let mut set: Vec<(Key, u64, String)> = Vec::new();
    let mut test = None;
    for a in args {
        let Some(body) = a.strip_prefix("--") else {
            words.push(a.clone());
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let key = match name {
            "num-threads" => Key::Threads,
            "max-requests" => Key::Events,
            "max-time" => Key::Time,
            "cpu-max-prime" => Key::Prime,
            "test" => Key::Test,
            "threads" if v10 => Key::Threads,
            "events" if v10 => Key::Events,
            "time" if v10 => Key::Time,
            n if (if v10 { OTHER_10 } else { OTHER_04 }).contains(&n) => {
                return Err(fail(format!(
                    "option --{n} is not modelled by fairsim (allowed: {allowed})"
                )))
            }
            _ => {
                return Err(fail(format!(
                    "unknown option --{name} (allowed: {allowed})"
                )))
            }
        };
        let Some(value) = value else {
            return Err(fail(format!("--{name} needs a value (--{name}=VALUE)")));
        };
        if key == Key::Test {
            test = Some((value.to_string(), a.clone()));
            continue;
        }
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
            return Err(fail(format!("--{name} needs a number, not '{value}'")));
        }
        let n = value
            .parse::<u64>()
            .map_err(|_| fail(format!("--{name} needs a number, not '{value}'")))?;
        set.push((key, n, format!("--{name}")));
    }
    // 1.0: the test's name, then the command; 0.4: the command only (`--test=` names the
    // test).
    let (name, command) = match (v10, words.as_slice()) {
        (true, [t, c]) => (Some(t.clone()), c.as_str()),
        (true, [t]) => (Some(t.clone()), ""),
        (false, [c]) => (None, c.as_str()),
        (_, []) => (None, ""),
        (_, more) => {
            return Err(super::body::extra(
                tool,
                more,
                "a test name (1.0) and the command run",
            ))
        }
    };
    let (name, command) = match (name, test) {
        // 1.0 with `--test=cpu` reads the word as the command.
        (Some(t), Some((test, _))) if command.is_empty() => (test, t),
        (Some(t), _) => (t, command.to_string()),
        (None, Some((test, _))) => (test, command.to_string()),
        (None, None) => {
            return Err(fail(
                "no test; allowed: sysbench cpu [OPTIONS] run (1.0) or sysbench --test=cpu [OPTIONS] run (0.4)".into(),
            ))
        }
    };
    if name != "cpu" {
        return Err(fail(format!(
            "test '{name}' is not modelled by fairsim; allowed: cpu"
        )));
    }
    match command.as_str() {
        "run" => {}
        "" => return Err(fail("no command; allowed: run".into())),
        other => {
            return Err(fail(format!(
                "command '{other}' is not modelled by fairsim; allowed: run"
            )))
        }
    }
    let value = |key: Key, default: u64, spelled: &str| {
        set.iter()
            .rev()
            .find(|(k, _, _)| *k == key)
            .map(|(_, n, t)| (*n, t.clone()))
            .unwrap_or((default, spelled.to_string()))
    };
    // 0.4: `{"num-threads", ..., "1"}`, `{"max-requests", ..., "10000"}`,
    // `{"max-time", ..., "0"}` (sysbench.c lines 83-85). 1.0: `SB_OPT("threads", ...,
    // "1")`, `SB_OPT("events", ..., "0")`, `SB_OPT("time", ..., "10")` (src/sysbench.c
    // lines 97-99). Both: `{"cpu-max-prime", ..., "10000"}` (sb_cpu.c line 34).
    let (threads, threads_t) = value(
        Key::Threads,
        1,
        if v10 { "--threads" } else { "--num-threads" },
    );
    let (events, events_t) = value(
        Key::Events,
        if v10 { 0 } else { 10_000 },
        if v10 { "--events" } else { "--max-requests" },
    );
    let (time, time_t) = value(
        Key::Time,
        if v10 { 10 } else { 0 },
        if v10 { "--time" } else { "--max-time" },
    );
    let (prime, prime_t) = value(Key::Prime, 10_000, "--cpu-max-prime");
    if threads == 0 {
        return Err(SpecError::invalid(tool, threads_t, 0, "1 or more threads").into());
    }
    if !(1..=MAX_PRIME).contains(&prime) {
        return Err(SpecError::invalid(tool, prime_t, prime, format!("1..={MAX_PRIME}")).into());
    }
    // No event limit: the run is the time limit, and each thread counts what it did.
    if events == 0 {
        if time == 0 {
            return Err(fail(format!(
                "{events_t}=0 and {time_t}=0 would run for ever; allowed: a limit on one of them"
            )));
        }
        let mut body = Body::default();
        body.set("threads", threads, &threads_t);
        body.set("events", 0, &events_t);
        body.set("event", format!("{}ns", event_work(prime).max(1)), &prime_t);
        body.set("time", format!("{time}s"), &time_t);
        return SysbenchCpu::parse(&body.text()).map_err(|e| body.rename("sysbench-cpu", tool, e));
    }
    if events % threads != 0 {
        return Err(fail(format!(
            "{events_t}={events} is not a multiple of {threads_t}={threads}: fairsim's sysbench runs the same number of events on each thread; allowed: a multiple of {threads}"
        )));
    }
    let event = event_work(prime).max(1);
    let per_thread = events / threads;
    if time > 0 && per_thread.saturating_mul(event) > time.saturating_mul(fairsim_des::time::SEC) {
        return Err(fail(format!(
            "{time_t}={time} would stop the run before {events_t}={events} even at full speed ({per_thread} events of {} per thread): fairsim's sysbench ends on its events only; allowed: {time_t}=0, or fewer events",
            fairsim_des::time::format_duration(event)
        )));
    }
    let mut body = Body::default();
    body.set("threads", threads, &threads_t);
    body.set("events", per_thread, &events_t);
    body.set("event", format!("{event}ns"), &prime_t);
    SysbenchCpu::parse(&body.text()).map_err(|e| body.rename("sysbench-cpu", tool, e))
}

/// The name of a `--name[=value]` word, or "".
fn long_name(word: &str) -> &str {
    word.strip_prefix("--")
        .map(|b| b.split_once('=').map_or(b, |(n, _)| n))
        .unwrap_or("")
}

/// The work of one event at `--cpu-max-prime=prime`, in ns at capacity 1024: fairsim's
/// 1 ms event scaled by [`prime_ops`].
pub(super) fn event_work(prime: u64) -> u64 {
    let at = |p| prime_ops(p) as u128;
    (u128::from(EVENT_AT_10000) * at(prime) / at(10_000)) as u64
}

/// The operations of sysbench's `cpu_execute_event` at `max_prime`: for each candidate
/// `c` in `3..max_prime`, one for its `sqrt` plus one per trial division (by `l` from 2
/// while `l <= sqrt(c)`, stopping at the first divisor). The smallest prime factors come
/// from a sieve, so the count is exact without dividing.
fn prime_ops(max_prime: u64) -> u64 {
    let n = max_prime as usize;
    if n <= 3 {
        return 0;
    }
    // spf[c]: the smallest prime factor of c (0 until sieved: then c is prime).
    let mut spf = vec![0u32; n];
    let mut p = 2;
    while p * p < n {
        if spf[p] == 0 {
            let mut m = p * p;
            while m < n {
                if spf[m] == 0 {
                    spf[m] = p as u32;
                }
                m += p;
            }
        }
        p += 1;
    }
    let mut ops = 0u64;
    for (c, &f) in spf.iter().enumerate().skip(3) {
        let root = (c as f64).sqrt() as u64;
        // A composite stops at its smallest factor (divisions 2..=f); a prime tries every
        // l up to its root.
        let divisions = if f != 0 {
            u64::from(f) - 1
        } else {
            root.saturating_sub(1)
        };
        ops += 1 + divisions;
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prime_ops_counts_the_loop() {
        // c = 3: sqrt 1.7, no division; c = 4: 4 % 2 == 0 after one; c = 5: l = 2 only;
        // c = 6: one; c = 7: l = 2 only; c = 8: one; c = 9: l = 2, 3.
        let divisions: u64 = [0, 1, 1, 1, 1, 1, 2].iter().sum();
        assert_eq!(prime_ops(10), 7 + divisions);
        assert_eq!(event_work(10_000), MS);
        assert!(event_work(20_000) > 2 * MS && event_work(20_000) < 3 * MS);
        assert!(event_work(MAX_PRIME) < 10 * fairsim_des::time::SEC);
    }
}
