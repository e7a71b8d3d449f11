//! `fairsim pelt`: one task's PELT signals on one CPU (issue #3).
//!
//! The emulation itself lives in `fairsim_pelt::sim`; this module parses and validates
//! the arguments and renders the samples as CSV or as a table with a summary.

use std::io::Write;

use fairsim_pelt::sim::{
    samples, tick_nsec, Event, InitMode, Pattern, Phase, Sample, SimParams, SummaryAcc,
    WAKE_LIST_CAP,
};
use fairsim_pelt::UtilEstMode;

use crate::error::{invalid, CliError};

/// The longest emulation accepted, so that a typo cannot ask for days of output.
const MAX_DURATION_NS: u64 = 3_600 * 1_000_000_000;

/// The most updates one run may print: 10^8 lines is about 4 GB of CSV. Output is
/// streamed, so memory stays flat below this; the cap keeps a nanosecond pattern over a
/// long span from running for hours.
const MAX_UPDATES: u128 = 100_000_000;

const AFTER_HELP: &str = "\
Semantics (Linux 6.12.117, integer arithmetic identical to the kernel's):
  One nice-0 task (weight 1024) on one otherwise idle CPU. The task is new and starts
  runnable at time 0; time 0 is a 1024-us PELT period boundary. The pattern repeats until
  --duration. Updates happen where the kernel makes them:
    wake   enqueue_task_fair at wakeup (the first is wake_up_new_task); the PELT clock
           first syncs to clock_task because the CPU was idle;
    tick   sched_tick -> entity_tick while the task runs, at absolute multiples of the
           tick period TICK_NSEC = (1e9 + HZ/2) / HZ;
    sleep  dequeue_task_fair as the task blocks, then the CPU goes idle
           (update_idle_rq_clock_pelt: clock sync and lost-idle-time rule).
  A tick at the same instant as a sleep is processed (and printed) first; a tick at the
  same instant as a wakeup is not processed; events at exactly --duration are included.
  While running, the PELT clock advances by cap_scale(cap_scale(delta, capacity), freq).
  util_est, 6.12 form: util_est_update runs before the PELT update at dequeue (as in
  6.12.117); legacy form (v6.7): after it.

Columns (--format csv: time_ns,event,util_avg,runnable_avg,load_avg,util_est):
  the task's sched_entity signals after the update; util_est is the task's estimate
  without the UTIL_AVG_UNCHANGED flag (the ewma in the 6.12 form, max(ewma, enqueued)
  in the legacy form, 0 with --util-est off).

Table summary: first time util_avg reaches 50% and 80% of --capacity; min/max of
util_avg and util_est over events in the second half of --duration (the settled swing
once the run is long enough, ~10 half-lives of 32 ms); util_est at each wakeup.

Not modelled: other tasks, irq/steal time, rt/dl/HW-pressure signals (taken as 0),
blocked-load updates by the load-balance softirq, clock updates other than at events.

Example:
  fairsim pelt --pattern run=8ms,sleep=8ms --duration 300ms --capacity 446 --freq 0.6";

/// Arguments of `fairsim pelt`.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Emulate one task's PELT signals (util_avg, runnable_avg, load_avg) and \
util_est on one CPU, bit-exact with Linux 6.12.117, and print one line per update.",
    after_long_help = AFTER_HELP
)]
pub(crate) struct PeltArgs {
    /// Run/sleep pattern, repeated: `run=D,sleep=D[,run=D,sleep=D...]`, starting with run
    /// and ending with sleep; or a single `run=D` (or `always`) for a task that never
    /// sleeps. D is an integer or decimal with unit ns, us, ms or s (e.g. 8ms, 1.5ms).
    #[arg(long, default_value = "run=8ms,sleep=8ms", value_name = "PATTERN")]
    pattern: String,

    /// Emulated time span (events at exactly this time are included), at most 3600s.
    #[arg(long, default_value = "300ms", value_name = "D")]
    duration: String,

    /// CPU capacity, arch_scale_cpu_capacity(): an integer in 1..=1024.
    #[arg(long, default_value = "1024", value_name = "N")]
    capacity: String,

    /// Frequency as a ratio of the maximum in (0, 1]; arch_scale_freq_capacity() is
    /// round(freq * 1024).
    #[arg(long, default_value = "1", value_name = "RATIO")]
    freq: String,

    /// Tick rate HZ, an integer in 1..=10000 (the kernel offers 100, 250, 300, 1000).
    #[arg(long, default_value = "250", value_name = "HZ")]
    hz: String,

    /// util_est form: `6.12` (single value), `legacy-fastup` (v4.17-v6.7 {enqueued, ewma}
    /// with UTIL_EST_FASTUP; `legacy` says the same), `legacy-nofastup` (as v4.17 merged
    /// it), or `off` (NO_UTIL_EST).
    #[arg(long = "util-est", default_value = "6.12", value_name = "FORM")]
    util_est: String,

    /// New-task signals: `kernel` (init_entity_runnable_average +
    /// post_init_entity_util_avg: load_avg = weight, util_avg = runnable_avg =
    /// capacity / 2 on the idle CPU) or `zero` (all signals 0).
    #[arg(long, default_value = "kernel", value_name = "MODE")]
    init: String,

    /// Output: `table` (aligned rows and a summary) or `csv` (one line per update).
    #[arg(long, default_value = "table", value_name = "FORMAT")]
    format: String,
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Table,
    Csv,
}

/// Parses a duration such as `8ms`, `1.5ms`, `500us`, `20ns` or `1s` into ns, exactly.
fn parse_duration(field: &str, text: &str) -> Result<u64, CliError> {
    const ALLOWED: &str = "a positive integer or decimal followed by ns, us, ms or s (e.g. 8ms)";
    let bad = || invalid(field, text, ALLOWED);
    let s = text.trim();
    let (num, mult): (&str, u64) = if let Some(n) = s.strip_suffix("ns") {
        (n, 1)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1_000)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1_000_000)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1_000_000_000)
    } else {
        return Err(bad());
    };
    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    let digits_ok = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if (int_part.is_empty() && frac_part.is_empty())
        || !digits_ok(int_part)
        || !digits_ok(frac_part)
        || (num.contains('.') && frac_part.is_empty())
    {
        return Err(bad());
    }
    let int: u64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|_| bad())?
    };
    let mut ns = int.checked_mul(mult).ok_or_else(bad)?;
    // Each fractional digit is worth mult / 10^k ns; it must come out whole.
    let mut unit = mult;
    for b in frac_part.bytes() {
        let d = (b - b'0') as u64;
        if unit % 10 != 0 {
            if d != 0 {
                return Err(invalid(field, text, "a whole number of nanoseconds"));
            }
            continue;
        }
        unit /= 10;
        ns = ns.checked_add(d * unit).ok_or_else(bad)?;
    }
    if ns == 0 {
        return Err(bad());
    }
    Ok(ns)
}

/// Parses `--pattern`.
fn parse_pattern(text: &str) -> Result<Pattern, CliError> {
    const FIELD: &str = "--pattern";
    const ALLOWED: &str =
        "run=D,sleep=D[,run=D,sleep=D...] starting with run and ending with sleep, or run=D, or always";
    let t = text.trim();
    if t == "always" {
        return Ok(Pattern::always_running());
    }
    let mut phases = Vec::new();
    for item in t.split(',') {
        let (key, val) = item
            .trim()
            .split_once('=')
            .ok_or_else(|| invalid(FIELD, text, ALLOWED))?;
        let ns = parse_duration(FIELD, val)?;
        phases.push(match key.trim() {
            "run" => Phase::Run(ns),
            "sleep" => Phase::Sleep(ns),
            _ => return Err(invalid(FIELD, text, ALLOWED)),
        });
    }
    if phases.len() == 1 {
        return match phases[0] {
            Phase::Run(_) => Ok(Pattern::always_running()),
            Phase::Sleep(_) => Err(invalid(FIELD, text, ALLOWED)),
        };
    }
    Pattern::new(phases).map_err(|_| invalid(FIELD, text, ALLOWED))
}

/// Parses an integer in `lo..=hi`.
fn parse_int(field: &str, text: &str, lo: u64, hi: u64) -> Result<u64, CliError> {
    let allowed = format!("an integer in {lo}..={hi}");
    match text.trim().parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(invalid(field, text, &allowed)),
    }
}

/// Parses `--freq` and converts it once to `round(freq * 1024)`.
fn parse_freq(text: &str) -> Result<u64, CliError> {
    const ALLOWED: &str = "a ratio in (0, 1], e.g. 0.6 (converted to round(freq * 1024) >= 1)";
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| invalid("--freq", text, ALLOWED))?;
    if !v.is_finite() || v <= 0.0 || v > 1.0 {
        return Err(invalid("--freq", text, ALLOWED));
    }
    let scaled = (v * 1024.0).round() as u64;
    if scaled == 0 {
        return Err(invalid("--freq", text, ALLOWED));
    }
    Ok(scaled)
}

fn parse_util_est(text: &str) -> Result<UtilEstMode, CliError> {
    UtilEstMode::parse(text).ok_or_else(|| invalid("--util-est", text, UtilEstMode::NAMES))
}

fn parse_init(text: &str) -> Result<InitMode, CliError> {
    match text.trim() {
        "kernel" => Ok(InitMode::Kernel),
        "zero" => Ok(InitMode::Zero),
        _ => Err(invalid("--init", text, "kernel, zero")),
    }
}

fn parse_format(text: &str) -> Result<Format, CliError> {
    match text.trim() {
        "table" => Ok(Format::Table),
        "csv" => Ok(Format::Csv),
        _ => Err(invalid("--format", text, "table, csv")),
    }
}

/// Validates every argument and builds the emulation parameters.
fn build_params(args: &PeltArgs) -> Result<(SimParams, Format), CliError> {
    let pattern = parse_pattern(&args.pattern)?;
    let duration_ns = parse_duration("--duration", &args.duration)?;
    if duration_ns > MAX_DURATION_NS {
        return Err(invalid("--duration", &args.duration, "at most 3600s"));
    }
    let mut params = SimParams::new(pattern, duration_ns);
    params.cpu_capacity = parse_int("--capacity", &args.capacity, 1, 1024)?;
    params.freq_capacity = parse_freq(&args.freq)?;
    params.tick_ns = tick_nsec(parse_int("--hz", &args.hz, 1, 10_000)?);
    let updates = params
        .pattern
        .max_updates(params.duration_ns, params.tick_ns);
    if updates > MAX_UPDATES {
        return Err(CliError::msg(format!(
            "--pattern/--duration: '{}' over {} makes about {updates} updates; allowed: at most \
             {MAX_UPDATES} (longer phases or a shorter --duration)",
            args.pattern.trim(),
            args.duration.trim()
        )));
    }
    params.util_est = parse_util_est(&args.util_est)?;
    params.init = parse_init(&args.init)?;
    Ok((params, parse_format(&args.format)?))
}

/// Formats ns as milliseconds with all six decimals, without floating point.
fn ms(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000, ns % 1_000_000)
}

fn write_csv(out: &mut dyn Write, samples: impl Iterator<Item = Sample>) -> Result<(), CliError> {
    writeln!(out, "time_ns,event,util_avg,runnable_avg,load_avg,util_est")?;
    for s in samples {
        writeln!(
            out,
            "{},{},{},{},{},{}",
            s.time_ns,
            s.event.as_str(),
            s.util_avg,
            s.runnable_avg,
            s.load_avg,
            s.util_est
        )?;
    }
    Ok(())
}

fn util_est_name(mode: UtilEstMode) -> &'static str {
    match mode {
        UtilEstMode::Off => "off",
        UtilEstMode::V6_12 => "6.12",
        UtilEstMode::Legacy { fastup: true } => "legacy (v6.7, UTIL_EST_FASTUP)",
        UtilEstMode::Legacy { fastup: false } => "legacy (v6.7, NO_UTIL_EST_FASTUP)",
    }
}

fn write_table(
    out: &mut dyn Write,
    args: &PeltArgs,
    params: &SimParams,
    samples: impl Iterator<Item = Sample>,
) -> Result<(), CliError> {
    writeln!(
        out,
        "# fairsim pelt: pattern {}, duration {} ms, capacity {}, freq {}/1024, tick {} ns, util_est {}, init {}",
        args.pattern.trim(),
        ms(params.duration_ns),
        params.cpu_capacity,
        params.freq_capacity,
        params.tick_ns,
        util_est_name(params.util_est),
        match params.init {
            InitMode::Kernel => "kernel",
            InitMode::Zero => "zero",
        }
    )?;
    writeln!(
        out,
        "{:>14}  {:<5}  {:>8}  {:>12}  {:>8}  {:>8}",
        "time_ms", "event", "util_avg", "runnable_avg", "load_avg", "util_est"
    )?;
    let mut acc = SummaryAcc::new(params.duration_ns, params.cpu_capacity);
    let mut last: Option<Sample> = None;
    for s in samples {
        // Keep the event names referenced so a new event kind cannot be silently unprinted.
        debug_assert!(matches!(s.event, Event::Wake | Event::Sleep | Event::Tick));
        acc.push(&s);
        writeln!(
            out,
            "{:>14}  {:<5}  {:>8}  {:>12}  {:>8}  {:>8}",
            ms(s.time_ns),
            s.event.as_str(),
            s.util_avg,
            s.runnable_avg,
            s.load_avg,
            s.util_est
        )?;
        last = Some(s);
    }

    let sum = acc.finish();
    let cap = params.cpu_capacity;
    let reach = |t: Option<u64>| match t {
        Some(t) => format!("{} ms", ms(t)),
        None => "not reached".to_string(),
    };
    writeln!(out)?;
    writeln!(out, "summary")?;
    writeln!(
        out,
        "  util_avg >= 50% of capacity ({}):  {}",
        cap.div_ceil(2),
        reach(sum.t50_ns)
    )?;
    writeln!(
        out,
        "  util_avg >= 80% of capacity ({}):  {}",
        (cap * 8).div_ceil(10),
        reach(sum.t80_ns)
    )?;
    match (sum.settled_util, sum.settled_util_est) {
        (Some((lo, hi)), Some((elo, ehi))) => {
            writeln!(
                out,
                "  settled util_avg (t >= {} ms): min {lo}, max {hi}, swing {}",
                ms(params.duration_ns / 2),
                hi - lo
            )?;
            writeln!(out, "  settled util_est: min {elo}, max {ehi}")?;
        }
        _ => writeln!(out, "  settled util_avg: no events in the second half")?,
    }
    if let Some(last) = last {
        writeln!(
            out,
            "  last event ({} ms): util_avg {}, runnable_avg {}, load_avg {}, util_est {}",
            ms(last.time_ns),
            last.util_avg,
            last.runnable_avg,
            last.load_avg,
            last.util_est
        )?;
    }
    if sum.wakeups > WAKE_LIST_CAP as u64 {
        writeln!(
            out,
            "  util_est at the first {WAKE_LIST_CAP} of {} wakeups (--format csv lists all):",
            sum.wakeups
        )?;
    } else {
        writeln!(out, "  util_est at each wakeup ({}):", sum.wakeups)?;
    }
    for chunk in sum.util_est_at_wake.chunks(8) {
        let row: Vec<String> = chunk
            .iter()
            .map(|(t, v)| format!("{}ms:{v}", t / 1_000_000))
            .collect();
        writeln!(out, "    {}", row.join("  "))?;
    }
    Ok(())
}

/// Runs `fairsim pelt`.
pub(crate) fn run(args: &PeltArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (params, format) = build_params(args)?;
    let samples = samples(&params).map_err(|e| CliError::msg(format!("--pattern: {e}")))?;
    match format {
        Format::Csv => write_csv(out, samples),
        Format::Table => write_table(out, args, &params, samples),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("--d", "8ms").unwrap(), 8_000_000);
        assert_eq!(parse_duration("--d", "1s").unwrap(), 1_000_000_000);
        assert_eq!(parse_duration("--d", "500us").unwrap(), 500_000);
        assert_eq!(parse_duration("--d", "20ns").unwrap(), 20);
        assert_eq!(parse_duration("--d", "1.5ms").unwrap(), 1_500_000);
        assert_eq!(parse_duration("--d", ".25s").unwrap(), 250_000_000);
        for bad in [
            "",
            "ms",
            "8",
            "8 m",
            "-1ms",
            "1.5ns",
            "0ms",
            "1.ms",
            "x1ms",
            "99999999999999999999s",
        ] {
            assert!(parse_duration("--d", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn patterns_and_freq() {
        assert_eq!(
            parse_pattern("run=8ms,sleep=8ms").unwrap().phases(),
            &[Phase::Run(8_000_000), Phase::Sleep(8_000_000)]
        );
        assert_eq!(parse_pattern("run=1s").unwrap(), Pattern::always_running());
        for bad in [
            "sleep=1ms",
            "run=1ms,run=2ms",
            "run=1ms,sleep=1ms,run=1ms",
            "walk=1ms",
            "run",
        ] {
            assert!(parse_pattern(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_freq("0.6").unwrap(), 614);
        assert_eq!(parse_freq("1").unwrap(), 1024);
        for bad in ["0", "1.01", "nan", "-0.5", "0.0001"] {
            assert!(parse_freq(bad).is_err(), "{bad}");
        }
    }
}
