//! `perf sched map`: one line per `sched_switch` with a column per CPU showing the
//! two-character short name of the task on it, `*` marking the CPU that switched, and a
//! `XX => comm:tid` legend the first time a task appears (or after its comm changed),
//! as tools/perf/builtin-sched.c of Linux 6.12 prints it with no options
//! (`map_switch_event`, `print_sched_map`).
//!
//! Short names run `A0`..`Z0`, `A1`..`Z9`, then `A0` again; the idle task is `.`. perf
//! prints a column for every CPU of the machine it runs on (`sysconf`); here the columns
//! are the trace's CPUs (`#P:N`, or one past the highest CPU seen).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::parse::{Events, Kind};
use super::usec::fmt_usec;

/// `struct thread_runtime`'s map fields.
#[derive(Debug, Clone, Default)]
struct Short {
    /// The two characters, empty until the task is first switched in.
    name: [u8; 2],
    assigned: bool,
    /// The comm the legend last named.
    comm: u32,
    comm_changed: bool,
}

/// Renders `perf sched map` of `events`.
pub(super) fn render(events: &Events) -> String {
    let ncpus = events.nr_cpus() as usize;
    let mut curr: Vec<Option<u32>> = vec![None; ncpus];
    let mut threads: BTreeMap<u32, Short> = BTreeMap::new();
    let (mut next1, mut next2) = (b'A', b'0');
    let mut s = String::new();
    for e in &events.events {
        // A comm seen in any event replaces the thread's: perf learns it from COMM
        // records and prints the legend again at the task's next switch-in.
        let named: [(u32, u32); 2] = match e.kind {
            Kind::Switch {
                prev_pid,
                prev_comm,
                next_pid,
                next_comm,
                ..
            } => [(prev_pid, prev_comm), (next_pid, next_comm)],
            Kind::Wakeup { pid, comm, .. }
            | Kind::Migrate { pid, comm }
            | Kind::Runtime { pid, comm, .. } => [(pid, comm); 2],
        };
        for (pid, comm) in named {
            if let Some(t) = threads.get_mut(&pid).filter(|_| pid != 0) {
                if t.assigned && t.comm != comm {
                    t.comm_changed = true;
                }
                t.comm = comm;
            }
        }
        let Kind::Switch {
            next_pid,
            next_comm,
            ..
        } = e.kind
        else {
            continue;
        };
        let this_cpu = e.cpu as usize;
        let tr = threads.entry(next_pid).or_insert_with(|| Short {
            comm: next_comm,
            ..Short::default()
        });
        let mut new_shortname = false;
        if !tr.assigned {
            if next_pid == 0 {
                // Don't allocate a letter-number for swapper:0; use '.'.
                tr.name = *b". ";
            } else {
                tr.name = [next1, next2];
                if next1 < b'Z' {
                    next1 += 1;
                } else {
                    next1 = b'A';
                    next2 = if next2 < b'9' { next2 + 1 } else { b'0' };
                }
            }
            tr.assigned = true;
            new_shortname = true;
        }
        curr[this_cpu] = Some(next_pid);
        s.push_str("  ");
        for (cpu, cur) in curr.iter().enumerate() {
            s.push(if cpu == this_cpu { '*' } else { ' ' });
            match cur.and_then(|p| threads.get(&p)) {
                Some(t) => {
                    let _ = write!(s, "{:>2} ", short_text(t));
                }
                None => s.push_str("   "),
            }
        }
        let _ = write!(s, "  {:>12} secs ", fmt_usec(e.ts));
        let Some(tr) = threads.get_mut(&next_pid) else {
            continue;
        };
        if new_shortname || tr.comm_changed {
            let comm = if next_pid == 0 {
                "swapper"
            } else {
                events.comm(tr.comm)
            };
            let _ = write!(s, "{} => {comm}:{next_pid}", short_text(tr));
            tr.comm_changed = false;
        }
        s.push('\n');
    }
    s
}

/// The short name as text (its two bytes are ASCII).
fn short_text(t: &Short) -> &str {
    std::str::from_utf8(&t.name).unwrap_or("??")
}
