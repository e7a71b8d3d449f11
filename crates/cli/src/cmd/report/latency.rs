//! `perf sched latency`: per task, the CPU time it ran, how many times it waited for a
//! CPU, and the average and longest waits, as tools/perf/builtin-sched.c of Linux 6.12
//! computes and prints them (`latency_switch_event`, `latency_wakeup_event`,
//! `latency_runtime_event`, `perf_sched__merge_lat`, `perf_sched__sort_lat`,
//! `output_lat_thread`, `perf_sched__lat`).
//!
//! A wait starts when the task is woken (`sched_waking`, or `sched_wakeup` when the
//! trace has no `sched_waking`; `sched_wakeup_new` for a new task) or when it leaves a
//! CPU still runnable (`R`, `R+`), and ends when a `sched_switch` puts it on a CPU. The
//! run time is the sum of `sched_stat_runtime`; a trace without that event (fairsim's,
//! or a kernel capture that did not enable it) gets each task's time between being
//! switched in and out instead, which leaves out only the slice a task was already
//! running when the trace began.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::parse::{Events, Kind, WakeKind};
use super::usec::fmt_usec;

/// One of `perf sched latency --sort`'s keys (`sort_dimension__add`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SortKey {
    /// The task's pid.
    Pid,
    /// Average delay.
    Avg,
    /// Maximum delay.
    Max,
    /// The count of delays measured (the `Count` column, `Switches` before perf 6.10).
    Switch,
    /// Total run time.
    Runtime,
}

/// perf's default `--sort`: `avg, max, switch, runtime`.
pub(super) const DEFAULT_SORT: &str = "avg, max, switch, runtime";

/// Parses `--sort` as `setup_sorting` does: keys separated by commas or spaces.
pub(super) fn parse_sort(text: &str) -> Result<Vec<SortKey>, String> {
    let mut keys = Vec::new();
    for tok in text.split([',', ' ']).filter(|t| !t.is_empty()) {
        keys.push(match tok {
            "pid" => SortKey::Pid,
            "avg" => SortKey::Avg,
            "max" => SortKey::Max,
            "switch" => SortKey::Switch,
            "runtime" => SortKey::Runtime,
            _ => {
                return Err(format!(
                    "--sort: unknown key '{tok}'; allowed: a list of pid, avg, max, switch, runtime (default: {DEFAULT_SORT})"
                ))
            }
        });
    }
    if keys.is_empty() {
        return Err(format!(
            "--sort: no key given; allowed: a list of pid, avg, max, switch, runtime (default: {DEFAULT_SORT})"
        ));
    }
    Ok(keys)
}

/// The options of the report.
#[derive(Debug, Clone)]
pub(super) struct Options {
    /// `-p`: one row per pid rather than per comm.
    pub pids: bool,
    /// `-s`: the sort keys.
    pub sort: Vec<SortKey>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            pids: false,
            sort: parse_sort(DEFAULT_SORT).unwrap_or_default(),
        }
    }
}

/// `enum thread_state` of builtin-sched.c.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AtomState {
    Sleeping,
    WaitCpu,
    SchedIn,
    Ignore,
}

/// The last `struct work_atom` of a task: every handler reads or changes only the last
/// one, so the list itself is not kept.
#[derive(Debug, Clone, Copy)]
struct Atom {
    state: AtomState,
    sched_out_time: u64,
    wake_up_time: u64,
}

/// `struct work_atoms`: one task's (or, merged, one comm's) totals.
#[derive(Debug, Clone)]
struct WorkAtoms {
    pid: u32,
    comm: String,
    last: Atom,
    max_lat: u64,
    max_lat_start: u64,
    max_lat_end: u64,
    total_lat: u64,
    nb_atoms: u64,
    total_runtime: u64,
    num_merged: u32,
}

impl WorkAtoms {
    fn new(pid: u32, state: u8, ts: u64) -> Self {
        WorkAtoms {
            pid,
            comm: String::new(),
            last: Atom::out(state, ts),
            max_lat: 0,
            max_lat_start: 0,
            max_lat_end: 0,
            total_lat: 0,
            nb_atoms: 0,
            total_runtime: 0,
            num_merged: 0,
        }
    }

    /// `add_sched_out_event`.
    fn sched_out(&mut self, state: u8, ts: u64) {
        self.last = Atom::out(state, ts);
    }

    /// `add_sched_in_event`.
    fn sched_in(&mut self, ts: u64) {
        let atom = &mut self.last;
        if atom.state != AtomState::WaitCpu {
            return;
        }
        if ts < atom.wake_up_time {
            atom.state = AtomState::Ignore;
            return;
        }
        atom.state = AtomState::SchedIn;
        let delta = ts - atom.wake_up_time;
        self.total_lat += delta;
        if delta > self.max_lat {
            self.max_lat = delta;
            self.max_lat_start = atom.wake_up_time;
            self.max_lat_end = ts;
        }
        self.nb_atoms += 1;
    }

    fn avg(&self) -> u64 {
        self.total_lat.checked_div(self.nb_atoms).unwrap_or(0)
    }
}

impl Atom {
    /// A new atom at a sched-out (or at a task's first sighting): waiting for a CPU
    /// from `ts` when the state is `R`, asleep otherwise.
    fn out(state: u8, ts: u64) -> Atom {
        if state == b'R' {
            Atom {
                state: AtomState::WaitCpu,
                sched_out_time: ts,
                wake_up_time: ts,
            }
        } else {
            Atom {
                state: AtomState::Sleeping,
                sched_out_time: ts,
                wake_up_time: 0,
            }
        }
    }
}

/// The counters `print_bad_events` reports.
#[derive(Debug, Default)]
struct Bad {
    timestamps: u64,
    unordered: u64,
    context_switch_bugs: u64,
}

/// Renders `perf sched latency` of `events`.
pub(super) fn render(events: &Events, opts: &Options) -> String {
    let mut tasks: BTreeMap<u32, WorkAtoms> = BTreeMap::new();
    let mut last_switched: Vec<u64> = vec![0; events.nr_cpus() as usize];
    let mut curr_pid: Vec<Option<u32>> = vec![None; events.nr_cpus() as usize];
    let mut comms: BTreeMap<u32, u32> = BTreeMap::new();
    let mut bad = Bad::default();
    // Without sched_stat_runtime, a task's run time is what each of its sched_switch
    // events says it ran since the CPU's previous switch.
    let derive_runtime = !events.has_runtime;
    for e in &events.events {
        let ts = e.ts;
        let cpu = e.cpu as usize;
        match e.kind {
            Kind::Switch {
                prev_pid,
                prev_comm,
                prev_state,
                next_pid,
                next_comm,
            } => {
                comms.insert(prev_pid, prev_comm);
                comms.insert(next_pid, next_comm);
                // process_sched_switch_event: switching away a task that is not the
                // CPU's current one.
                if curr_pid[cpu].is_some_and(|c| c != prev_pid) {
                    bad.context_switch_bugs += 1;
                }
                curr_pid[cpu] = Some(next_pid);
                let t0 = last_switched[cpu];
                last_switched[cpu] = ts;
                let delta = if t0 != 0 { ts.saturating_sub(t0) } else { 0 };
                let out = tasks
                    .entry(prev_pid)
                    .or_insert_with(|| WorkAtoms::new(prev_pid, b'S', ts));
                out.sched_out(prev_state, ts);
                if derive_runtime && prev_pid != 0 {
                    out.total_runtime += delta;
                }
                let inn = tasks
                    .entry(next_pid)
                    .or_insert_with(|| WorkAtoms::new(next_pid, b'R', ts));
                inn.sched_in(ts);
            }
            Kind::Runtime { pid, comm, runtime } => {
                comms.insert(pid, comm);
                let atoms = tasks
                    .entry(pid)
                    .or_insert_with(|| WorkAtoms::new(pid, b'R', ts));
                atoms.total_runtime += runtime;
            }
            Kind::Wakeup { kind, pid, comm } => {
                comms.insert(pid, comm);
                if kind == WakeKind::Wakeup && events.has_waking {
                    continue;
                }
                let atoms = tasks
                    .entry(pid)
                    .or_insert_with(|| WorkAtoms::new(pid, b'S', ts));
                let atom = &mut atoms.last;
                // The wakeup of a task that is already runnable only sets its state.
                if atom.state != AtomState::Sleeping {
                    continue;
                }
                bad.timestamps += 1;
                if atom.sched_out_time > ts {
                    bad.unordered += 1;
                    continue;
                }
                atom.state = AtomState::WaitCpu;
                atom.wake_up_time = ts;
            }
            // latency_migrate_task_event acts only with --cpu (one CPU profiled).
            Kind::Migrate { pid, comm } => {
                comms.insert(pid, comm);
            }
        }
    }
    for (pid, t) in tasks.iter_mut() {
        // perf names a thread by its comm at the end; pid 0 is its "swapper".
        t.comm = match pid {
            0 => "swapper".to_string(),
            _ => comms
                .get(pid)
                .map_or_else(|| format!("<{pid}>"), |&c| events.comm(c).to_string()),
        };
    }
    // atom_root is ordered by pid, and rb_first is the highest: merging and sorting
    // take the tasks in that order.
    let by_pid_desc: Vec<WorkAtoms> = tasks.into_values().rev().collect();
    let rows = if opts.pids {
        by_pid_desc
    } else {
        merge_by_comm(by_pid_desc)
    };
    let rows = sort(rows, &opts.sort);
    print(&rows, &bad, events)
}

/// `perf_sched__merge_lat`: one row per comm, holding the sums, the largest delay (the
/// first task's on ties) and the count of tasks merged; the rows come out in decreasing
/// comm order, as the merged tree's `rb_first` is the greatest.
fn merge_by_comm(tasks: Vec<WorkAtoms>) -> Vec<WorkAtoms> {
    let mut merged: BTreeMap<String, WorkAtoms> = BTreeMap::new();
    for data in tasks {
        match merged.get_mut(&data.comm) {
            Some(this) => {
                this.num_merged += 1;
                this.total_runtime += data.total_runtime;
                this.nb_atoms += data.nb_atoms;
                this.total_lat += data.total_lat;
                if this.max_lat < data.max_lat {
                    this.max_lat = data.max_lat;
                    this.max_lat_start = data.max_lat_start;
                    this.max_lat_end = data.max_lat_end;
                }
            }
            None => {
                let mut data = data;
                data.num_merged += 1;
                merged.insert(data.comm.clone(), data);
            }
        }
    }
    merged.into_values().rev().collect()
}

/// `perf_sched__sort_lat`: decreasing by the keys in turn; `__thread_latency_insert`
/// sends equal rows right, so ties keep the order the rows came in. `avg_cmp` ranks a
/// row without delays below every other.
fn sort(mut rows: Vec<WorkAtoms>, keys: &[SortKey]) -> Vec<WorkAtoms> {
    let cmp = |l: &WorkAtoms, r: &WorkAtoms| -> Ordering {
        for key in keys {
            let o = match key {
                SortKey::Pid => l.pid.cmp(&r.pid),
                SortKey::Avg => match (l.nb_atoms, r.nb_atoms) {
                    (0, 0) => Ordering::Equal,
                    (0, _) => Ordering::Less,
                    (_, 0) => Ordering::Greater,
                    _ => l.avg().cmp(&r.avg()),
                },
                SortKey::Max => l.max_lat.cmp(&r.max_lat),
                SortKey::Switch => l.nb_atoms.cmp(&r.nb_atoms),
                SortKey::Runtime => l.total_runtime.cmp(&r.total_runtime),
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    };
    rows.sort_by(|a, b| cmp(b, a));
    rows
}

/// `perf_sched__lat`'s output with `output_lat_thread`'s rows and `print_bad_events`.
fn print(rows: &[WorkAtoms], bad: &Bad, events: &Events) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let wide = "-".repeat(139);
    s.push('\n');
    let _ = writeln!(s, " {wide}");
    s.push_str("  Task                  |   Runtime ms  |  Count   | Avg delay ms    | Max delay ms    | Max delay start           | Max delay end          |\n");
    let _ = writeln!(s, " {wide}");
    let mut all_runtime = 0u64;
    let mut all_count = 0u64;
    for w in rows {
        // output_lat_thread skips rows without delays and the idle task.
        if w.nb_atoms == 0 || w.comm == "swapper" {
            continue;
        }
        all_runtime += w.total_runtime;
        all_count += w.nb_atoms;
        let name = if w.num_merged > 1 {
            format!("  {}:({}) ", w.comm, w.num_merged)
        } else {
            format!("  {}:{} ", w.comm, w.pid)
        };
        // printf's return value counts bytes.
        let pad = 24usize.saturating_sub(name.len());
        let _ = writeln!(
            s,
            "{name}{:pad$}|{:11.3} ms |{:9} | avg:{:8.3} ms | max:{:8.3} ms | max start: {:>12} s | max end: {:>12} s",
            "",
            w.total_runtime as f64 / 1e6,
            w.nb_atoms,
            w.avg() as f64 / 1e6,
            w.max_lat as f64 / 1e6,
            fmt_usec(w.max_lat_start),
            fmt_usec(w.max_lat_end),
        );
    }
    let _ = writeln!(s, " {}", "-".repeat(113));
    let _ = writeln!(
        s,
        "  TOTAL:                |{:11.3} ms |{:9} |",
        all_runtime as f64 / 1e6,
        all_count
    );
    let _ = writeln!(s, " {}", "-".repeat(51));
    if bad.unordered > 0 && bad.timestamps > 0 {
        let _ = writeln!(
            s,
            "  INFO: {:.3}% unordered timestamps ({} out of {})",
            bad.unordered as f64 / bad.timestamps as f64 * 100.0,
            bad.unordered,
            bad.timestamps
        );
    }
    let (lost, chunks) = events.lost;
    if lost > 0 && events.lines > 0 {
        let _ = writeln!(
            s,
            "  INFO: {:.3}% lost events ({lost} out of {}, in {chunks} chunks)",
            lost as f64 / events.lines as f64 * 100.0,
            events.lines
        );
    }
    if bad.context_switch_bugs > 0 && bad.timestamps > 0 {
        let _ = write!(
            s,
            "  INFO: {:.3}% context switch bugs ({} out of {})",
            bad.context_switch_bugs as f64 / bad.timestamps as f64 * 100.0,
            bad.context_switch_bugs,
            bad.timestamps
        );
        if lost > 0 {
            s.push_str(" (due to lost events?)");
        }
        s.push('\n');
    }
    s.push('\n');
    s
}
