//! A run's trace as the text of `/sys/kernel/tracing/trace` of Linux 6.12 with the `nop`
//! tracer and the default options (`irq-info` on, `record-tgid` off).
//!
//! # Layout, from the kernel sources
//!
//! - Header: `s_show` prints `# tracer: nop` and `#`; `trace_default_header` calls
//!   `print_func_help_header_irq` (kernel/trace/trace.c), which starts with
//!   `print_event_info` (`# entries-in-buffer/entries-written: %lu/%lu   #P:%d` and `#`)
//!   and prints the 5-column legend of 5.18 to 6.12 (irqs-off/BH-disabled, need-resched,
//!   hardirq/softirq, preempt-depth, migrate-disable; 6.13 added the lazy columns).
//! - Each line: `trace_print_context` (kernel/trace/trace_output.c) prints
//!   `"%16s-%-7d "` with the comm of the task current on the CPU (`<idle>` for pid 0, as
//!   `trace_find_cmdline` names it), `"[%03d] "`, the five flag characters of
//!   `trace_print_lat_fmt`, then `trace_print_time`'s `" %5llu.%06lu"` and `": "`; the
//!   event's output function adds `"%s: "` with its name and its `TP_printk` text.
//! - Time: `ns2usecs` rounds to the nearest microsecond (`(ns + 500) / 1000`), so two
//!   events less than a microsecond apart may print the same time; lines keep the records'
//!   order, so ties within a microsecond keep their logging order.
//! - Fields: the `TP_printk` formats of include/trace/events/sched.h (`sched_switch`,
//!   `sched_wakeup_template` for `sched_waking`/`sched_wakeup`/`sched_wakeup_new`,
//!   `sched_migrate_task`, `sched_process_template` for `sched_process_exit`,
//!   `sched_process_fork`) and include/trace/events/power.h (the `cpu` class of
//!   `cpu_idle` and `cpu_frequency`, `state=%lu cpu_id=%lu`, so leaving idle prints
//!   `state=4294967295`). `prev_state` is `__print_flags` of the low bits
//!   (`S D T t X Z P I`) or `R`, with `+` when `TASK_REPORT_MAX` (0x100) is set.
//!
//! Checked against copies of the sources in a code index, which had no tagged 6.12 tree:
//! `trace_print_context` and `trace_print_time` from a 6.6-or-later trace_output.c,
//! `print_func_help_header_irq` from the 5.18 patch that named the BH-disabled column
//! and the 6.13 patch that replaced the 5-column legend, and the `TP_printk` formats
//! from post-4.x sched.h copies; the `prev_state` flag table (with `P` and `I`) is the
//! 4.14-and-later one, unchanged in 6.12.
//!
//! The flag characters are not emulated (fairsim has no irq or preempt counts); each
//! event prints the flags its kernel call site typically shows: `d..2.` for
//! `sched_switch`, `sched_waking` and `sched_migrate_task` (irqs off under a lock),
//! `d..3.` for `sched_wakeup` and `sched_wakeup_new` (the runqueue lock on top),
//! `d..1.` for `cpu_idle` and `cpu_frequency` (the idle loop), `.....` for fork and exit
//! (preemptible process context) and for fairsim's own lines.
//!
//! fairsim's own events, which have no tracepoint, print as
//! `fairsim_balance: kind=newidle domain=MC groups=4 pulled=1 dur_ns=1234`,
//! `fairsim_lock_spin: rq=3 dur_ns=250` and, on a machine with EAS, one line per wakeup
//! that `find_energy_efficient_cpu` saw, `fairsim_feec: comm=rt-app pid=12 prev_cpu=0
//! dst_cpu=4` (`dst_cpu=-1` when it left the wakeup to the usual path).
//!
//! CFS bandwidth control has no tracepoint in 6.12 (none in include/trace/events/sched.h,
//! none fired by `throttle_cfs_rq`, `unthrottle_cfs_rq` or the period timer), so its
//! events are fairsim's own too, each on the CPU where the kernel does the work: a
//! group runqueue's throttle on its CPU, `fairsim_cfs_throttle: cgroup=/lim cpu=0
//! runtime_remaining=-159423 h_nr_queued=1 pool=0`; its unthrottle on the same CPU (where
//! the kernel's `unthrottle_cfs_rq_async` IPI runs it), `fairsim_cfs_unthrottle:
//! cgroup=/lim cpu=3 throttled_ns=90799308 h_nr_queued=1 pool=46999999` (what it added
//! to `throttled_usec`, the tasks that come back, the pool once it was paid); and each
//! refill on the CPU the period timer is pinned to, `fairsim_cfs_refill: cgroup=/lim
//! runtime=50000000 periods=1 throttled=4` (the pool after the refill, the periods
//! counted, the runqueues throttled when it ran).
//!
//! The root domain's overutilized flag has a bare tracepoint in 6.12
//! (`sched_overutilized_tp`, fired by every `set_rd_overutilized`) and no trace event;
//! the sched_tp module (github.com/qais-yousef/sched_tp, `sched_tp/sched_events.h`),
//! which LISA-style tooling loads to expose it, prints `sched_overutilized:
//! overutilized=%d span=0x%s` with the span from `cpumap_print_to_pagebuf(false, ...)`.
//! fairsim prints the same, without the newline `cpumap_print_to_pagebuf` appends to the
//! span (the module copies it into the event, so the kernel's line breaks there) and
//! without the module's 32-character cut (`SPAN_SIZE`, enough for 128 CPUs).
//!
//! Under `--trace-events pelt` the run adds the sched_tp module's load-tracking events
//! on the bare tracepoints `pelt_cfs_tp`, `pelt_se_tp`, `sched_util_est_cfs_tp`,
//! `sched_util_est_se_tp` and `sched_cpu_capacity_tp` (see [`crate::tracedat::format`]
//! for the module and `fairsim_balance::pelt_tp` for where they fire), e.g.
//! `sched_pelt_se: cpu=0 path=(null) comm=ramp-0 pid=1 load=1024 runnable=207 util=207
//! update_time=1074929664` and `sched_pelt_cfs: cpu=0 path=/ load=1024 ...`, with the
//! flags `d..2.` (under the runqueue lock); their strings print as the events' `char`
//! arrays hold them (a 63-byte `path`, a 15-byte `comm`).

use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};

use super::current::CurrentTasks;
use super::perfetto::level_name;
use super::record::{Record, Trace, TraceEvent};
use super::tracedat::format::TASK_PATH;

/// `TASK_REPORT_MAX` of 6.12: the `prev_state` bit of a preempted task (printed `+`).
const TASK_REPORT_MAX: i64 = 0x100;

/// The header legend lines of `print_func_help_header_irq` without `record-tgid`.
const LEGEND: &str = "\
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
";

/// Writes `trace` as ftrace text (see the module doc). The same trace always gives the
/// same bytes.
pub fn write_ftrace_text(trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
    let mut out = BufWriter::new(out);
    let n = trace.records.len();
    write!(
        out,
        "# tracer: nop\n#\n# entries-in-buffer/entries-written: {n}/{n}   #P:{}\n#\n{LEGEND}",
        trace.cpus
    )?;
    let mut cur = CurrentTasks::new(trace);
    let mut line = String::new();
    for rec in &trace.records {
        let pid = cur.observe(rec);
        line.clear();
        format_line(&mut line, trace, rec, pid);
        out.write_all(line.as_bytes())?;
    }
    out.flush()
}

/// Appends the line of `rec`, logged while `pid` was current, ending in a newline.
pub fn format_line(line: &mut String, trace: &Trace, rec: &Record, pid: u32) {
    let comm = match pid {
        0 => "<idle>".to_string(),
        p => trace
            .task(p)
            .map_or_else(|| "<...>".to_string(), |t| t.comm.clone()),
    };
    let us = rec.ts.saturating_add(500) / 1000;
    let (name, flags) = name_and_flags(&rec.event);
    // Writing to a String cannot fail.
    let _ = write!(
        line,
        "{comm:>16}-{pid:<7} [{:03}] {flags} {:>5}.{:06}: {name}: ",
        rec.cpu,
        us / 1_000_000,
        us % 1_000_000
    );
    fields(line, trace, rec);
    line.push('\n');
}

/// The event name and the flag columns its line shows.
fn name_and_flags(e: &TraceEvent) -> (&'static str, &'static str) {
    match e {
        TraceEvent::Switch { .. } => ("sched_switch", "d..2."),
        TraceEvent::Waking { .. } => ("sched_waking", "d..2."),
        TraceEvent::Wakeup { .. } => ("sched_wakeup", "d..3."),
        TraceEvent::WakeupNew { .. } => ("sched_wakeup_new", "d..3."),
        TraceEvent::Migrate { .. } => ("sched_migrate_task", "d..2."),
        TraceEvent::Fork { .. } => ("sched_process_fork", "....."),
        TraceEvent::Exit { .. } => ("sched_process_exit", "....."),
        TraceEvent::CpuIdle { .. } => ("cpu_idle", "d..1."),
        TraceEvent::CpuFrequency { .. } => ("cpu_frequency", "d..1."),
        TraceEvent::Balance { .. } => ("fairsim_balance", "....."),
        TraceEvent::LockSpin { .. } => ("fairsim_lock_spin", "....."),
        TraceEvent::Overutilized { .. } => ("sched_overutilized", "d..2."),
        TraceEvent::PeltCfs { .. } => ("sched_pelt_cfs", "d..2."),
        TraceEvent::PeltSe { .. } => ("sched_pelt_se", "d..2."),
        TraceEvent::UtilEstCfs { .. } => ("sched_util_est_cfs", "d..2."),
        TraceEvent::UtilEstSe { .. } => ("sched_util_est_se", "d..2."),
        TraceEvent::CpuCapacity { .. } => ("sched_cpu_capacity", "d..2."),
        TraceEvent::Feec { .. } => ("fairsim_feec", "....."),
        TraceEvent::CfsThrottle { .. } => ("fairsim_cfs_throttle", "....."),
        TraceEvent::CfsUnthrottle { .. } => ("fairsim_cfs_unthrottle", "....."),
        TraceEvent::CfsRefill { .. } => ("fairsim_cfs_refill", "....."),
    }
}

/// Appends the `TP_printk` text of the record's event.
fn fields(s: &mut String, trace: &Trace, rec: &Record) {
    let cpu = rec.cpu;
    fields_with(s, trace, rec, &|pid| trace.comm(pid, cpu));
}

/// [`fields`] with the task names from `comm`: the trace-cmd layouts print the same
/// fields with the names cut as the events' `char` arrays hold them.
pub(crate) fn fields_with(
    s: &mut String,
    trace: &Trace,
    rec: &Record,
    comm: &dyn Fn(u32) -> String,
) {
    let cpu = rec.cpu;
    let prio = |pid: u32| trace.prio(pid);
    // Writing to a String cannot fail.
    let _ = match rec.event {
        TraceEvent::Switch { prev, prev_state, next } => write!(
            s,
            "prev_comm={} prev_pid={prev} prev_prio={} prev_state={} ==> next_comm={} next_pid={next} next_prio={}",
            comm(prev),
            prio(prev),
            prev_state_text(prev_state.bits()),
            comm(next),
            prio(next)
        ),
        TraceEvent::Waking { pid, target_cpu }
        | TraceEvent::Wakeup { pid, target_cpu }
        | TraceEvent::WakeupNew { pid, target_cpu } => write!(
            s,
            "comm={} pid={pid} prio={} target_cpu={target_cpu:03}",
            comm(pid),
            prio(pid)
        ),
        TraceEvent::Migrate { pid, orig_cpu, dest_cpu } => write!(
            s,
            "comm={} pid={pid} prio={} orig_cpu={orig_cpu} dest_cpu={dest_cpu}",
            comm(pid),
            prio(pid)
        ),
        TraceEvent::Fork { parent, child } => write!(
            s,
            "comm={} pid={parent} child_comm={} child_pid={child}",
            comm(parent),
            comm(child)
        ),
        TraceEvent::Exit { pid } => write!(s, "comm={} pid={pid} prio={}", comm(pid), prio(pid)),
        TraceEvent::CpuIdle { state } => write!(s, "state={state} cpu_id={cpu}"),
        TraceEvent::CpuFrequency { khz } => write!(s, "state={khz} cpu_id={cpu}"),
        TraceEvent::Balance { kind, level, groups, pulled, dur } => write!(
            s,
            "kind={} domain={} groups={groups} pulled={pulled} dur_ns={dur}",
            kind.name(),
            level_name(trace, level)
        ),
        TraceEvent::LockSpin { rq, dur } => write!(s, "rq={rq} dur_ns={dur}"),
        TraceEvent::Overutilized { rd, overutilized } => write!(
            s,
            "overutilized={} span=0x{}",
            u8::from(overutilized),
            trace.root_domain_span(rd)
        ),
        TraceEvent::Feec {
            pid,
            prev_cpu,
            dst_cpu,
        } => write!(
            s,
            "comm={} pid={pid} prev_cpu={prev_cpu} dst_cpu={dst_cpu}",
            comm(pid)
        ),
        TraceEvent::PeltCfs { .. }
        | TraceEvent::PeltSe { .. }
        | TraceEvent::UtilEstCfs { .. }
        | TraceEvent::UtilEstSe { .. }
        | TraceEvent::CpuCapacity { .. } => {
            load_tracking_fields(s, trace, rec, comm);
            Ok(())
        }
        TraceEvent::CfsThrottle { group, h_nr_queued, runtime_remaining, pool } => write!(
            s,
            "cgroup={} cpu={cpu} runtime_remaining={runtime_remaining} h_nr_queued={h_nr_queued} pool={pool}",
            trace.cgroup(group)
        ),
        TraceEvent::CfsUnthrottle { group, h_nr_queued, throttled_ns, pool } => write!(
            s,
            "cgroup={} cpu={cpu} throttled_ns={throttled_ns} h_nr_queued={h_nr_queued} pool={pool}",
            trace.cgroup(group)
        ),
        TraceEvent::CfsRefill { group, throttled, runtime, periods } => write!(
            s,
            "cgroup={} runtime={runtime} periods={periods} throttled={throttled}",
            trace.cgroup(group)
        ),
    };
}

/// Appends the `TP_printk` text of a sched_tp load-tracking event (see
/// [`crate::tracedat::format`] for the module these come from), with its strings as
/// the event's `char` arrays hold them (`path` at most 63 bytes, `comm` 15), which every
/// layout prints alike; `comm` names a pid.
pub(crate) fn load_tracking_fields(
    s: &mut String,
    trace: &Trace,
    rec: &Record,
    comm: &dyn Fn(u32) -> String,
) {
    let cpu = rec.cpu;
    let path = |group: u32| cut(trace.cfs_rq_path(group), 64).to_string();
    let task = cut(TASK_PATH, 64);
    // Writing to a String cannot fail.
    let _ = match rec.event {
        TraceEvent::PeltCfs {
            group,
            load,
            runnable,
            util,
            update_time,
        } => write!(
            s,
            "cpu={cpu} path={} load={load} runnable={runnable} util={util} update_time={update_time}",
            path(group)
        ),
        TraceEvent::PeltSe {
            pid,
            load,
            runnable,
            util,
            update_time,
        } => write!(
            s,
            "cpu={cpu} path={task} comm={} pid={pid} load={load} runnable={runnable} util={util} update_time={update_time}",
            cut(&comm(pid), 16)
        ),
        TraceEvent::UtilEstCfs {
            group,
            util,
            util_est,
        } => write!(
            s,
            "cpu={cpu} path={} enqueued={util_est} ewma=0 util={util}",
            path(group)
        ),
        TraceEvent::UtilEstSe {
            pid,
            util,
            util_est,
        } => write!(
            s,
            "cpu={cpu} path={task} comm={} pid={pid} enqueued={util_est} ewma={util_est} util={util}",
            cut(&comm(pid), 16)
        ),
        TraceEvent::CpuCapacity {
            capacity,
            capacity_orig,
            capacity_curr,
        } => write!(
            s,
            "cpu={cpu} capacity={capacity} capacity_orig={capacity_orig} capacity_curr={capacity_curr}"
        ),
        _ => Ok(()),
    };
}

/// `s` cut to what a `char[len]` event field holds (`len - 1` bytes and the NUL).
pub(crate) fn cut(s: &str, len: usize) -> &str {
    let mut n = s.len().min(len - 1);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    &s[..n]
}

/// `prev_state` as 6.12's `sched_switch` prints it: `__print_flags` of the bits below
/// `TASK_REPORT_MAX` joined by `|`, or `R` when none, then `+` for `TASK_REPORT_MAX`.
pub fn prev_state_text(bits: i64) -> String {
    const NAMES: [(i64, &str); 8] = [
        (0x01, "S"),
        (0x02, "D"),
        (0x04, "T"),
        (0x08, "t"),
        (0x10, "X"),
        (0x20, "Z"),
        (0x40, "P"),
        (0x80, "I"),
    ];
    let low = bits & (TASK_REPORT_MAX - 1);
    let mut s = String::new();
    if low == 0 {
        s.push('R');
    } else {
        for (bit, name) in NAMES {
            if low & bit != 0 {
                if !s.is_empty() {
                    s.push('|');
                }
                s.push_str(name);
            }
        }
    }
    if bits & TASK_REPORT_MAX != 0 {
        s.push('+');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PrevState;

    #[test]
    fn trace_prev_state_letters_follow_the_tracepoint() {
        for st in [
            PrevState::Running,
            PrevState::Sleeping,
            PrevState::Dead,
            PrevState::Zombie,
        ] {
            assert_eq!(prev_state_text(st.bits()), st.letter());
        }
        assert_eq!(prev_state_text(TASK_REPORT_MAX), "R+");
        assert_eq!(prev_state_text(3), "S|D");
    }
}
