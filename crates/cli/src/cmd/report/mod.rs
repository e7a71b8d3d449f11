//! `fairsim report latency|timehist|map [FILE]`: `perf sched latency`, `perf sched
//! timehist` and `perf sched map` of a trace in ftrace's text layout (a run's
//! `--trace-text`, a real kernel's `/sys/kernel/tracing/trace`, or `perf script` of a
//! `perf sched record`), in perf's layouts; and `fairsim run --report KIND`, which
//! prints them after the run's summary from the run's own trace.
//!
//! The reports follow tools/perf/builtin-sched.c of Linux 6.12 (the perf of the kernel
//! fairsim emulates); perf before 6.10 heads latency's count column `Switches` rather
//! than `Count`, and is otherwise the same.

mod latency;
mod map;
pub(crate) mod parse;
mod timehist;
mod usec;

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use crate::error::CliError;
use parse::{Events, Reader};

/// `fairsim report`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    #[command(subcommand)]
    kind: ReportKind,
}

#[derive(Debug, clap::Subcommand)]
enum ReportKind {
    /// perf sched latency: per task, run time, count of waits for a CPU, their average
    /// and maximum, with when the longest began and ended; tasks with the same comm are
    /// merged (`-p` keeps them apart).
    Latency {
        /// The trace: ftrace text (`fairsim run --trace-text FILE`,
        /// /sys/kernel/tracing/trace, or `perf script` output); `-` or none for stdin.
        file: Option<PathBuf>,
        /// One row per pid, not per comm.
        #[arg(short = 'p', long)]
        pids: bool,
        /// Sort keys, most significant first: pid, avg, max, switch, runtime.
        #[arg(short = 's', long, value_name = "KEYS", default_value = latency::DEFAULT_SORT)]
        sort: String,
    },
    /// perf sched timehist: a line per context switch with the task leaving the CPU,
    /// its wait before the run, its scheduling delay and its run time (ms).
    Timehist {
        /// The trace, as for `latency`.
        file: Option<PathBuf>,
    },
    /// perf sched map: a line per context switch with the task on every CPU as a
    /// two-character short name, and a legend line when a task first appears.
    Map {
        /// The trace, as for `latency`.
        file: Option<PathBuf>,
    },
}

/// A report `run --report` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Report {
    /// `perf sched latency`.
    Latency,
    /// `perf sched timehist`.
    Timehist,
    /// `perf sched map`.
    Map,
}

impl Report {
    /// The report's name as perf and the options spell it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Report::Latency => "latency",
            Report::Timehist => "timehist",
            Report::Map => "map",
        }
    }
}

/// Parses `run --report` values (repeatable; a value may also be a comma list).
pub(crate) fn parse_reports(values: &[String]) -> Result<Vec<Report>, CliError> {
    let mut out = Vec::new();
    for v in values {
        for tok in v.split(',') {
            let r = match tok.trim() {
                "latency" => Report::Latency,
                "timehist" => Report::Timehist,
                "map" => Report::Map,
                _ => {
                    return Err(CliError::msg(format!(
                        "--report: invalid value '{tok}'; allowed: latency, timehist or map (repeatable)"
                    )))
                }
            };
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    Ok(out)
}

/// The report `which` of `events` with default options.
fn render(which: Report, events: &Events) -> String {
    match which {
        Report::Latency => latency::render(events, &latency::Options::default()),
        Report::Timehist => timehist::render(events),
        Report::Map => map::render(events),
    }
}

/// Reads the trace at `file` (`None` or `-`: stdin); with the events, the name errors
/// about them give the input (`FILE PATH` or `stdin`).
fn read_events(file: Option<&Path>) -> Result<(Events, String), CliError> {
    match file {
        None => read_stdin(),
        Some(p) if p.as_os_str() == "-" => read_stdin(),
        Some(p) => {
            let what = format!("FILE {}", p.display());
            check_kind(p).map_err(|why| CliError::msg(format!("{what}: {why}")))?;
            let f = std::fs::File::open(p).map_err(|e| CliError::msg(format!("{what}: {e}")))?;
            let events = Reader::new()
                .read_all(&mut std::io::BufReader::new(f))
                .map_err(|e| CliError::msg(format!("{what}: {e}")))?;
            Ok((events, what))
        }
    }
}

/// Refuses, before it is opened, a path that cannot hold a trace: a directory, a device
/// (`/dev/zero` never ends) or a socket, and a regular file larger than
/// [`parse::MAX_TRACE_BYTES`]. A FIFO is read (`<(perf script ...)` is one), through the
/// same caps per line and per trace as stdin.
fn check_kind(p: &Path) -> Result<(), String> {
    const ALLOWED: &str = "allowed: a trace in ftrace text (fairsim run --trace-text FILE), or - with the trace piped in";
    let meta = std::fs::metadata(p).map_err(|e| e.to_string())?;
    let ft = meta.file_type();
    if ft.is_file() {
        if meta.len() > parse::MAX_TRACE_BYTES {
            let max = parse::MAX_TRACE_BYTES;
            return Err(format!(
                "larger than {max} bytes; allowed: a trace of at most {max} bytes (cut a longer capture to a window first)"
            ));
        }
        return Ok(());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return Ok(());
        }
        if ft.is_char_device() {
            return Err(format!("a character device; {ALLOWED}"));
        }
        if ft.is_block_device() {
            return Err(format!("a block device; {ALLOWED}"));
        }
        if ft.is_socket() {
            return Err(format!("a socket; {ALLOWED}"));
        }
    }
    if ft.is_dir() {
        return Err(format!("a directory; {ALLOWED}"));
    }
    Err(format!("not a regular file; {ALLOWED}"))
}

fn read_stdin() -> Result<(Events, String), CliError> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(CliError::msg(
            "FILE: none given and stdin is a terminal; allowed: a trace file (fairsim run --trace-text FILE), or - with the trace piped in",
        ));
    }
    let mut lock = stdin.lock();
    let input: &mut dyn BufRead = &mut lock;
    let what = "FILE - (stdin)".to_string();
    let events = Reader::new()
        .read_all(input)
        .map_err(|e| CliError::msg(format!("{what}: {e}")))?;
    Ok((events, what))
}

/// Refuses a trace with no `sched_switch`, as perf does ("No sched_switch events
/// found"), rather than printing an empty table.
fn check_switches(events: &Events, what: &str) -> Result<(), CliError> {
    if events
        .events
        .iter()
        .any(|e| matches!(e.kind, parse::Kind::Switch { .. }))
    {
        return Ok(());
    }
    Err(CliError::msg(format!(
        "{what}: no sched_switch events in the trace; allowed: a trace with the sched events (fairsim run --trace-text FILE, or the kernel's events/sched enabled)"
    )))
}

/// Runs `fairsim report`.
pub(crate) fn run(args: &ReportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let text = match &args.kind {
        ReportKind::Latency { file, pids, sort } => {
            let sort = latency::parse_sort(sort).map_err(CliError::msg)?;
            let (events, what) = read_events(file.as_deref())?;
            check_switches(&events, &what)?;
            let opts = latency::Options { pids: *pids, sort };
            latency::render(&events, &opts)
        }
        ReportKind::Timehist { file } => {
            let (events, what) = read_events(file.as_deref())?;
            check_switches(&events, &what)?;
            timehist::render(&events)
        }
        ReportKind::Map { file } => {
            let (events, what) = read_events(file.as_deref())?;
            check_switches(&events, &what)?;
            map::render(&events)
        }
    };
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// A `Write` that reads ftrace text line by line as the trace writer produces it, so
/// that `run --report` goes through the same text as `--trace-text` without holding it.
struct LineSink {
    reader: Reader,
    partial: Vec<u8>,
}

impl Write for LineSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
            self.partial.extend_from_slice(&rest[..nl]);
            let line = String::from_utf8_lossy(&self.partial).into_owned();
            self.partial.clear();
            self.reader.line(&line).map_err(std::io::Error::other)?;
            rest = &rest[nl + 1..];
        }
        self.partial.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The events of a run's trace, read back from the ftrace text the trace writer makes.
pub(crate) fn events_of_trace(trace: &fairsim_trace::Trace) -> Result<Events, CliError> {
    let mut sink = LineSink {
        reader: Reader::new(),
        partial: Vec::new(),
    };
    fairsim_trace::write_ftrace_text(trace, &mut sink).map_err(|e| {
        CliError::internal(format!(
            "--report: the run's own trace text did not read back ({e}); please report it"
        ))
    })?;
    if !sink.partial.is_empty() {
        let line = String::from_utf8_lossy(&sink.partial).into_owned();
        sink.reader
            .line(&line)
            .map_err(|e| CliError::internal(format!("--report: {e}")))?;
    }
    Ok(sink.reader.finish())
}

/// Prints `run --report`'s reports after the run's summary, each under a heading that
/// names the traced window.
pub(crate) fn print_run_reports(
    reports: &[Report],
    trace: &fairsim_trace::Trace,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if reports.is_empty() {
        return Ok(());
    }
    let events = events_of_trace(trace)?;
    let (a, b) = trace.window;
    let fmt = fairsim_des::time::format_duration;
    for &r in reports {
        writeln!(
            out,
            "\n== perf sched {} of the trace [{}, {}) ==",
            r.name(),
            fmt(a),
            fmt(b)
        )?;
        out.write_all(render(r, &events).as_bytes())?;
    }
    Ok(())
}
