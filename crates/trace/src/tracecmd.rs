//! A run's trace as the text `trace-cmd report` prints for its `--trace-dat` file, and as
//! `trace-cmd report -R` prints it (`--trace-text-format trace-cmd` and
//! `trace-cmd-raw`), so that tools which read trace-cmd's text read fairsim's traces
//! without trace-cmd: LISA's `TxtTraceParser` reads the raw layout.
//!
//! # Layout, from trace-cmd 3.1.6 and libtraceevent 1.7 (Debian 12's packages)
//!
//! - A first line `cpus=N`.
//! - Events in trace-cmd's merge order: by time, and among events of the same nanosecond
//!   the lowest CPU first (`tracecmd_read_next_data` takes the first CPU whose next
//!   event is strictly earliest); a CPU's own events keep their order.
//! - Each line: `"%16s-%-5d [%03d]"` with the comm of `common_pid` (`<idle>` for pid 0,
//!   `<...>` for a pid without a saved cmdline), the pid and the CPU; then
//!   `" %5llu.%06llu:"`, the time in microseconds rounded to the nearest
//!   (`print_event_time` with trace-cmd's `"%6.1000d"`, as the local clock is in ns);
//!   then `" NAME: "` padded with spaces to 20 characters of name; then the event's text.
//!   trace-cmd 3.1.6 prints no latency columns without `-l` (later versions add them).
//! - Text: the event's `print fmt`, except where libtraceevent's sched_switch plugin
//!   (installed with trace-cmd) rewrites it: `sched_switch` as `prev_comm:prev_pid
//!   [prev_prio] STATE ==> next_comm:next_pid [next_prio]`, where STATE is the letters of
//!   the set bits among the plugin's own `S D T t Z X x W` (libtraceevent 1.7; 1.8 reads
//!   `S D T t X Z P I` from the format, so an exited thread, 16, prints `X` there and `Z`
//!   here) joined by `|`, or `R` (the preempted bit, 0x100, has no letter there), and
//!   `sched_wakeup`/`sched_wakeup_new` as `comm:pid [prio] CPU:%03d`. A trace-cmd
//!   without the plugins (the static 3.1.5 that LISA 3.1 bundles) prints those three
//!   with their `print fmt` too; its `-R` output is the same either way.
//! - Raw text (`-R`): every field after the common ones as ` name=value` in the format's
//!   order: strings as they are, a field the `print fmt` prints directly with its
//!   conversion (so `target_cpu=003` and `state=4294967295`), others (`prev_state`) as
//!   the plain integer, so a preempted task's `prev_state` is `256`.
//!
//! The values are those of the trace.dat ([`crate::tracedat`]): a comm is cut to 15
//! bytes and `sched_overutilized`'s span to 31 characters, as the events' `char` arrays
//! hold them.

use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};

use super::current::{cpu_slots, CurrentTasks};
use super::ftrace::cut;
use super::record::{Record, Trace, TraceEvent};
use super::tracedat::format::{event_index, EVENTS};

/// The layout of `--trace-text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextLayout {
    /// `/sys/kernel/tracing/trace` ([`crate::ftrace`]).
    Ftrace,
    /// What `trace-cmd report` prints.
    TraceCmd,
    /// What `trace-cmd report -R` prints.
    TraceCmdRaw,
}

impl TextLayout {
    /// The layout a `--trace-text-format` value names, or the one-line message that
    /// refuses it.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "ftrace" => Ok(Self::Ftrace),
            "trace-cmd" => Ok(Self::TraceCmd),
            "trace-cmd-raw" => Ok(Self::TraceCmdRaw),
            _ => Err(format!(
                "--trace-text-format: invalid value '{text}'; allowed: ftrace, trace-cmd, trace-cmd-raw"
            )),
        }
    }
}

/// Writes what `trace-cmd report` prints for the trace's `trace.dat`.
pub fn write_report(trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
    write(trace, out, false)
}

/// Writes what `trace-cmd report -R` prints for the trace's `trace.dat`.
pub fn write_report_raw(trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
    write(trace, out, true)
}

fn write(trace: &Trace, out: &mut dyn Write, raw: bool) -> io::Result<()> {
    let mut out = BufWriter::new(out);
    writeln!(out, "cpus={}", cpu_slots(trace))?;
    let mut cur = CurrentTasks::new(trace);
    let pids: Vec<u32> = trace.records.iter().map(|r| cur.observe(r)).collect();
    let mut order: Vec<usize> = (0..trace.records.len()).collect();
    // Stable: a CPU's events of one nanosecond keep their order.
    order.sort_by_key(|&i| (trace.records[i].ts, trace.records[i].cpu));
    let mut line = String::new();
    for i in order {
        line.clear();
        format_line(&mut line, trace, &trace.records[i], pids[i], raw);
        out.write_all(line.as_bytes())?;
    }
    out.flush()
}

/// Appends `rec`'s line, logged while `pid` was current, ending in a newline.
pub fn format_line(line: &mut String, trace: &Trace, rec: &Record, pid: u32, raw: bool) {
    let comm = match pid {
        0 => "<idle>".to_string(),
        p => trace
            .task(p)
            .map_or_else(|| "<...>".to_string(), |t| cut(&t.comm, 16).to_string()),
    };
    let us = rec.ts.saturating_add(500) / 1000;
    let name = EVENTS[event_index(&rec.event)].name;
    // Writing to a String cannot fail.
    let _ = write!(
        line,
        "{comm:>16}-{pid:<5} [{:03}] {:>5}.{:06}: {name}: {:pad$}",
        rec.cpu,
        us / 1_000_000,
        us % 1_000_000,
        "",
        pad = 20usize.saturating_sub(name.len())
    );
    if raw {
        raw_fields(line, trace, rec);
    } else {
        fields(line, trace, rec);
    }
    line.push('\n');
}

/// The event's text as trace-cmd report prints it.
fn fields(s: &mut String, trace: &Trace, rec: &Record) {
    let cpu = rec.cpu;
    let comm = |pid: u32| cut(&trace.comm(pid, cpu), 16).to_string();
    let prio = |pid: u32| trace.prio(pid);
    // Writing to a String cannot fail.
    let _ = match rec.event {
        TraceEvent::Switch {
            prev,
            prev_state,
            next,
        } => write!(
            s,
            "{}:{prev} [{}] {} ==> {}:{next} [{}]",
            comm(prev),
            prio(prev),
            plugin_state(prev_state.bits()),
            comm(next),
            prio(next)
        ),
        TraceEvent::Wakeup { pid, target_cpu } | TraceEvent::WakeupNew { pid, target_cpu } => {
            write!(s, "{}:{pid} [{}] CPU:{target_cpu:03}", comm(pid), prio(pid))
        }
        TraceEvent::Waking { pid, target_cpu } => write!(
            s,
            "comm={} pid={pid} prio={} target_cpu={target_cpu:03}",
            comm(pid),
            prio(pid)
        ),
        TraceEvent::Overutilized { rd, overutilized } => write!(
            s,
            "overutilized={} span=0x{}",
            u8::from(overutilized),
            span(trace, rd)
        ),
        _ => {
            // Every other event prints its print fmt: the ftrace text's fields with the
            // names cut as the event holds them.
            let mut text = String::new();
            crate::ftrace::fields_with(&mut text, trace, rec, &comm);
            s.push_str(&text);
            Ok(())
        }
    };
}

/// `sched_overutilized`'s span as its `char[32]` holds it.
fn span(trace: &Trace, rd: u32) -> &str {
    cut(trace.root_domain_span(rd), 32)
}

/// The letters the sched_switch plugin of libtraceevent 1.7 prints for `prev_state`:
/// its own table `SDTtZXxW` by bit, whatever the kernel's format says (1.8 and later read
/// the letters from the format's `__print_flags` and print `X` for 16 and `Z` for 32).
fn plugin_state(bits: i64) -> String {
    const LETTERS: [char; 8] = ['S', 'D', 'T', 't', 'Z', 'X', 'x', 'W'];
    let mut s = String::new();
    for (i, c) in LETTERS.iter().enumerate() {
        if bits & (1 << i) != 0 {
            if !s.is_empty() {
                s.push('|');
            }
            s.push(*c);
        }
    }
    if s.is_empty() {
        s.push('R');
    }
    s
}

/// The event's fields as trace-cmd report -R prints them: ` name=value` each.
fn raw_fields(s: &mut String, trace: &Trace, rec: &Record) {
    let cpu = rec.cpu;
    let comm = |pid: u32| cut(&trace.comm(pid, cpu), 16).to_string();
    let prio = |pid: u32| trace.prio(pid);
    // Writing to a String cannot fail.
    let _ = match rec.event {
        TraceEvent::Switch {
            prev,
            prev_state,
            next,
        } => write!(
            s,
            " prev_comm={} prev_pid={prev} prev_prio={} prev_state={} next_comm={} next_pid={next} next_prio={}",
            comm(prev),
            prio(prev),
            prev_state.bits(),
            comm(next),
            prio(next)
        ),
        TraceEvent::Waking { pid, target_cpu }
        | TraceEvent::Wakeup { pid, target_cpu }
        | TraceEvent::WakeupNew { pid, target_cpu } => write!(
            s,
            " comm={} pid={pid} prio={} target_cpu={target_cpu:03}",
            comm(pid),
            prio(pid)
        ),
        TraceEvent::Fork { parent, child } => write!(
            s,
            " parent_comm={} parent_pid={parent} child_comm={} child_pid={child}",
            comm(parent),
            comm(child)
        ),
        TraceEvent::Overutilized { rd, overutilized } => write!(
            s,
            " overutilized={} span={}",
            u8::from(overutilized),
            span(trace, rd)
        ),
        _ => {
            // The other events' fields are their print fmt's, in its order.
            s.push(' ');
            crate::ftrace::fields_with(s, trace, rec, &comm);
            Ok(())
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_state_has_no_letter_for_preemption() {
        assert_eq!(plugin_state(0), "R");
        assert_eq!(plugin_state(256), "R");
        assert_eq!(plugin_state(1), "S");
        assert_eq!(plugin_state(3), "S|D");
        assert_eq!(plugin_state(16), "Z");
        assert_eq!(plugin_state(32), "X");
    }

    #[test]
    fn layouts_parse_and_refuse_in_one_line() {
        assert_eq!(TextLayout::parse("trace-cmd"), Ok(TextLayout::TraceCmd));
        let e = TextLayout::parse("perfetto").unwrap_err();
        assert!(e.starts_with("--trace-text-format: invalid value 'perfetto'"));
        assert!(e.ends_with("allowed: ftrace, trace-cmd, trace-cmd-raw"));
        assert!(!e.contains('\n'));
    }
}
