//! The nanosleep stress of seed 000 (`stress_nanosleep <ns>`, started N times from a
//! shell loop): N tasks, each looping `nanosleep(sleep)`.
//!
//! Compiled to the IR: a launcher (the shell) runs `launch` of its own work, forks one
//! task, and goes round again N times, then exits. Each task `exec`s the tool (the exec
//! balance `sched_exec`, then `exec` of start-up work: the ELF load, the dynamic loader and
//! libc's initialisation), then loops `Run(run)` then `Sleep(sleep)`. `run` (default 1 us
//! of work at capacity 1024) is the user-space loop plus the `nanosleep` system call's own
//! path (entry/exit, `hrtimer_nanosleep`, arming the timer), which the scheduler-cost table
//! does not cover; `run=0` removes it. `pin` pins task i to CPU i mod N, as starting each
//! instance under `taskset -c i` would.
//!
//! The launch defaults are measured, not fitted: on the project's build host (an x86 VM),
//! `perf stat -r 200` of a minimal dynamically linked C program that calls `nanosleep`
//! once reports 0.38 ms of task-clock for exec, start-up and exit; the start-up without
//! the exit is taken as `exec=350us`. `perf stat --no-inherit` of seed 000's own bash loop
//! (`while [ $i -le 224 ]; do ./nano_sleep 1000 & ...`) reports 26.5 ms of bash's own
//! task-clock, 118 us per iteration, of which the fork is the cost table's `fork`; the
//! rest is `launch=100us`. `exec=0` and `launch=0` give a program that forks its workers in
//! a tight loop, like the ground truth's `nsleep` tool.
//!
//! The sleep is an hrtimer armed with the task's timer slack (50 us by default,
//! `--timer-slack`), so a `nanosleep(1us)` on an otherwise quiet CPU really sleeps about
//! 51 us: the timer's hard expiry is sleep + slack, and only an earlier interrupt on the same
//! CPU (a tick, another timer) fires it sooner (see `TimerExpiry`). The tool prints
//! nothing; fairsim prints the loop rate and the wakeup latency.

use fairsim_topology::CpuMask;

use fairsim_des::time::{format_duration, SEC, US};
use fairsim_engine::error::EngineError;
use fairsim_engine::program::{DurSpec, Op, Program};
use fairsim_engine::world::{Blueprint, Outcome};

use super::keys::Keys;
use super::report::WorkloadReport;
use super::tasks::{add_program, new_task, task_range};

/// nanosleep stress options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nanosleep {
    /// Task count (`None`: one per CPU).
    pub tasks: Option<u64>,
    /// Requested sleep in ns.
    pub sleep: u64,
    /// Work between sleeps in ns at capacity 1024.
    pub run: u64,
    /// Pin task i to CPU i mod N (as `taskset -c i` would).
    pub pin: bool,
    /// The launcher's own work per iteration, ns at capacity 1024.
    pub launch: u64,
    /// Start-up work of the exec'd tool, ns at capacity 1024; 0: no exec.
    pub exec: u64,
}

/// The shell loop's own work per started instance (see the module docs).
const DEFAULT_LAUNCH: u64 = 100 * US;
/// The tool's exec and start-up work (see the module docs).
const DEFAULT_EXEC: u64 = 350 * US;

impl Nanosleep {
    /// Parses `tasks`, `sleep`, `run`, `pin`.
    pub fn parse(body: &str) -> Result<Nanosleep, EngineError> {
        let k = Keys::parse(
            "nanosleep",
            body,
            &[
                &["tasks", "n"],
                &["sleep"],
                &["run"],
                &["pin"],
                &["launch"],
                &["exec"],
            ],
        )?;
        let tasks = if k.raw("tasks").is_some() {
            Some(k.int("tasks", 1, 1, 1 << 24)?)
        } else {
            None
        };
        Ok(Nanosleep {
            tasks,
            sleep: k.dur("sleep", US, 1, 0, 10 * SEC)?,
            run: k.dur("run", US, 1, 0, 10 * SEC)?,
            pin: k.flag("pin")?,
            launch: k.dur("launch", DEFAULT_LAUNCH, US, 0, 10 * SEC)?,
            exec: k.dur("exec", DEFAULT_EXEC, US, 0, 10 * SEC)?,
        })
    }

    fn count(&self, ncpus: usize) -> u64 {
        self.tasks.unwrap_or(ncpus as u64)
    }

    /// Every option spelled out.
    pub fn canonical(&self, ncpus: usize) -> String {
        format!(
            "nanosleep:tasks={},sleep={},run={},launch={},exec={}{}",
            self.count(ncpus),
            format_duration(self.sleep),
            format_duration(self.run),
            format_duration(self.launch),
            format_duration(self.exec),
            if self.pin { ",pin" } else { "" }
        )
    }

    /// Launcher + tasks.
    pub fn nr_tasks(&self, ncpus: usize) -> u64 {
        1 + self.count(ncpus)
    }

    /// Adds the launcher and the tasks; with `cpus`, `pin` places task i on the i-th CPU
    /// of the list (round robin), as `taskset -c` with the list's CPUs one by one would.
    pub(super) fn build(&self, w: usize, bp: &mut Blueprint, ncpus: usize, cpus: Option<&CpuMask>) {
        let n = self.count(ncpus) as usize;
        let launcher = bp.tasks.len();
        let first = launcher + 1;
        let mut sh = Program::new().begin_loop(Some(n as u64));
        if self.launch > 0 {
            sh = sh.op(Op::Run { work: self.launch });
        }
        let launch_prog = add_program(bp, sh.op(Op::ForkNext).end_loop().op(Op::Exit));
        let mut p = Program::new();
        if self.exec > 0 {
            p = p.op(Op::Exec).op(Op::Run { work: self.exec });
        }
        let mut p = p.begin_loop(None);
        if self.run > 0 {
            p = p.op(Op::Run { work: self.run });
        }
        let prog = add_program(
            bp,
            p.op(Op::Sleep {
                dur: DurSpec::Fixed(self.sleep),
            })
            .end_loop(),
        );
        bp.tasks.push(new_task(
            "sh".into(),
            launch_prog,
            None,
            (first, first + n),
            w,
        ));
        let pins: Vec<usize> = match cpus {
            Some(m) => m.iter().collect(),
            None => (0..ncpus).collect(),
        };
        for i in 0..n {
            let me = first + i;
            let mut t = new_task(format!("nano_sleep{i}"), prog, Some(launcher), (me, me), w);
            if self.pin && !pins.is_empty() {
                t.cpus_allowed = Some(CpuMask::single(ncpus, pins[i % pins.len()]));
            }
            bp.tasks.push(t);
        }
    }

    pub(super) fn report(&self, index: usize, outcome: &Outcome) -> WorkloadReport {
        let range = task_range(outcome, index);
        let n = range.len() - 1;
        let mut wakeups = 0u64;
        let mut lat_sum = 0u64;
        let mut lat_max = 0u64;
        for t in range.skip(1) {
            let m = &outcome.metrics().tasks[t];
            wakeups += m.wakeups;
            lat_sum += m.wake_lat_sum_ns;
            lat_max = lat_max.max(m.wake_lat_max_ns);
        }
        let secs_ns = outcome.window_ns().max(1);
        let per_task_rate = wakeups as f64 * 1e9 / secs_ns as f64 / n.max(1) as f64;
        let period_us = if per_task_rate > 0.0 {
            1e6 / per_task_rate
        } else {
            0.0
        };
        let mean_lat = lat_sum.checked_div(wakeups).unwrap_or(0);
        let text = format!(
            "nanosleep stress: {n} tasks x nanosleep({}) (timer slack {})\n\
             \tloops completed: {wakeups} ({per_task_rate:.0}/s per task, one every {period_us:.1} us)\n\
             \twakeup latency (timer wakeup to running): mean {:.1} us, max {:.1} us\n",
            format_duration(self.sleep),
            format_duration(outcome.config().timer_slack),
            mean_lat as f64 / 1e3,
            lat_max as f64 / 1e3,
        );
        let json = serde_json::json!({
            "tasks": n,
            "loops": wakeups,
            "wakeup_latency_mean_ns": mean_lat,
            "wakeup_latency_max_ns": lat_max,
        });
        WorkloadReport {
            text,
            json,
            finished: true,
        }
    }
}
