//! `perf sched timehist`: one line per `sched_switch`, for the task leaving the CPU:
//! how long it had waited off the CPU before this run (sleeping, or preempted), how
//! long it waited from its wakeup to being switched in (scheduling delay), and how long
//! it ran, as tools/perf/builtin-sched.c of Linux 6.12 prints them with no options
//! (`timehist_header`, `timehist_sched_change_event`, `timehist_update_runtime_stats`,
//! `timehist_print_sample`, `timehist_sched_wakeup_event`).
//!
//! Each CPU's idle task is its own `<idle>` thread, as `get_idle_thread` keeps them. A
//! task is printed `comm[tid]`: perf prints `comm[tid/pid]` for a thread of a
//! multi-threaded process, which an ftrace text without `record-tgid` cannot tell.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::parse::{Events, Kind, WakeKind};
use super::usec::fmt_usec;

/// `comm_width`'s starting value; it grows to the longest task name printed.
const COMM_WIDTH: usize = 30;

/// perf's `graph_dotted_line`, long enough for every column it is cut to.
fn dots(n: usize) -> String {
    "-".repeat(n)
}

/// `struct thread_runtime`'s fields that the default output reads.
#[derive(Debug, Clone, Copy, Default)]
struct Runtime {
    last_time: u64,
    ready_to_run: u64,
    dt_run: u64,
    dt_delay: u64,
    dt_wait: u64,
}

impl Runtime {
    /// `timehist_update_runtime_stats`: the run from `tprev` (the CPU's previous switch,
    /// 0 when none) to `t`, the delay from the wakeup to `tprev`, and the wait from the
    /// last switch-out to `tprev` (sleep, iowait and preemption together, as the wait
    /// column sums them).
    fn update(&mut self, t: u64, tprev: u64) {
        self.dt_run = 0;
        self.dt_delay = 0;
        self.dt_wait = 0;
        if tprev == 0 {
            return;
        }
        self.dt_run = t.saturating_sub(tprev);
        if self.ready_to_run != 0 && self.ready_to_run <= tprev {
            self.dt_delay = tprev - self.ready_to_run;
        }
        if self.last_time != 0 && self.last_time <= tprev {
            self.dt_wait = tprev - self.last_time;
        }
    }
}

/// `print_sched_time`: ns as `msec.usec` in `width` digits before the point, and a space.
fn sched_time(s: &mut String, ns: u64, width: usize) {
    let ms = ns / 1_000_000;
    let us = (ns % 1_000_000) / 1_000;
    let _ = write!(s, "{ms:width$}.{us:03} ");
}

/// The header `timehist_header` prints without `--cpu-visual`, `--state` or `--prio`.
fn header(s: &mut String, w: usize) {
    let _ = writeln!(
        s,
        "{:>15} {:>6}  {:<w$}  {:>9}  {:>9}  {:>9}",
        "time", "cpu", "task name", "wait time", "sch delay", "run time"
    );
    let _ = writeln!(
        s,
        "{:>15} {:<6}  {:<w$}  {:>9}  {:>9}  {:>9}",
        "", "", "[tid/pid]", "(msec)", "(msec)", "(msec)"
    );
    let _ = writeln!(
        s,
        "{} {}  {}  {}  {}  {}",
        dots(15),
        dots(6),
        dots(w),
        dots(9),
        dots(9),
        dots(9)
    );
}

/// Renders `perf sched timehist` of `events`.
pub(super) fn render(events: &Events) -> String {
    let ncpus = events.nr_cpus() as usize;
    let mut idle = vec![Runtime::default(); ncpus];
    let mut tasks: BTreeMap<u32, Runtime> = BTreeMap::new();
    let mut cpu_last = vec![0u64; ncpus];
    let mut comm_width = COMM_WIDTH;
    let mut s = String::new();
    header(&mut s, comm_width);
    for e in &events.events {
        match e.kind {
            Kind::Wakeup { kind, pid, .. } => {
                // perf prefers sched_waking when the trace has it.
                if kind == WakeKind::Wakeup && events.has_waking {
                    continue;
                }
                let tr = tasks.entry(pid).or_default();
                if tr.ready_to_run == 0 {
                    tr.ready_to_run = e.ts;
                }
            }
            Kind::Switch {
                prev_pid,
                prev_comm,
                prev_state,
                ..
            } => {
                let cpu = e.cpu as usize;
                let t = e.ts;
                let tr = if prev_pid == 0 {
                    &mut idle[cpu]
                } else {
                    tasks.entry(prev_pid).or_default()
                };
                let tprev = cpu_last[cpu];
                tr.update(t, tprev);
                let name = if prev_pid == 0 {
                    "<idle>".to_string()
                } else {
                    format!("{}[{prev_pid}]", events.comm(prev_comm))
                };
                comm_width = comm_width.max(name.len());
                let _ = write!(
                    s,
                    "{:>15} [{:04}]  {name:<comm_width$} ",
                    fmt_usec(t),
                    e.cpu
                );
                sched_time(&mut s, tr.dt_wait, 6);
                sched_time(&mut s, tr.dt_delay, 6);
                sched_time(&mut s, tr.dt_run, 6);
                s.push('\n');
                tr.last_time = t;
                tr.ready_to_run = if prev_state == b'R' { t } else { 0 };
                cpu_last[cpu] = t;
            }
            Kind::Migrate { .. } | Kind::Runtime { .. } => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_print_as_msec_dot_usec() {
        let mut s = String::new();
        sched_time(&mut s, 1_234_567, 6);
        sched_time(&mut s, 999, 6);
        assert_eq!(s, "     1.234      0.000 ");
    }
}
