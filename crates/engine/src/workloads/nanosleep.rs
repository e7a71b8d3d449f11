//! The nanosleep stress of seed 000 (`stress_nanosleep <ns>`, started N times from a
//! shell loop): N tasks, each looping `nanosleep(sleep)`.
//!
//! Compiled to the IR: a launcher (the shell) forks the N tasks and exits; each task loops
//! `Run(run)` then `Sleep(sleep)`. `run` (default 1 us of work at capacity 1024) is the
//! user-space loop plus the `nanosleep` system call's own path (entry/exit,
//! `hrtimer_nanosleep`, arming the timer), which the scheduler-cost table does not cover;
//! `run=0` removes it. `pin` pins task i to CPU i mod N, as starting each instance under
//! `taskset -c i` would.
//!
//! The sleep is an hrtimer armed with the task's timer slack (50 us by default,
//! `--timer-slack`), so a `nanosleep(1us)` on an otherwise quiet CPU really sleeps about
//! 51 us: the timer's hard expiry is sleep + slack, and only an earlier interrupt on the same
//! CPU (a tick, another timer) fires it sooner (see `TimerExpiry`). The tool prints
//! nothing; fairsim prints the loop rate and the wakeup latency.

use fairsim_topology::CpuMask;

use crate::error::EngineError;
use crate::program::{DurSpec, Op, Program};
use crate::time::{format_duration, SEC, US};
use crate::world::{Blueprint, World};

use super::{add_program, new_task, task_range, Keys, WorkloadReport};

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
}

impl Nanosleep {
    /// Parses `tasks`, `sleep`, `run`, `pin`.
    pub fn parse(body: &str) -> Result<Nanosleep, EngineError> {
        let k = Keys::parse(
            "nanosleep",
            body,
            &[&["tasks", "n"], &["sleep"], &["run"], &["pin"]],
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
        })
    }

    fn count(&self, ncpus: usize) -> u64 {
        self.tasks.unwrap_or(ncpus as u64)
    }

    /// Every option spelled out.
    pub fn canonical(&self, ncpus: usize) -> String {
        format!(
            "nanosleep:tasks={},sleep={},run={}{}",
            self.count(ncpus),
            format_duration(self.sleep),
            format_duration(self.run),
            if self.pin { ",pin" } else { "" }
        )
    }

    /// Launcher + tasks.
    pub fn nr_tasks(&self, ncpus: usize) -> u64 {
        1 + self.count(ncpus)
    }

    pub(super) fn build(&self, w: usize, bp: &mut Blueprint, ncpus: usize) {
        let n = self.count(ncpus) as usize;
        let launcher = bp.tasks.len();
        let first = launcher + 1;
        let launch_prog = add_program(bp, Program::new().op(Op::ForkChildren).op(Op::Exit));
        let mut p = Program::new().begin_loop(None);
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
        for i in 0..n {
            let me = first + i;
            let mut t = new_task(format!("nano_sleep{i}"), prog, Some(launcher), (me, me), w);
            if self.pin {
                t.cpus_allowed = Some(CpuMask::single(ncpus, i % ncpus));
            }
            bp.tasks.push(t);
        }
    }

    pub(super) fn report(&self, index: usize, world: &World) -> WorkloadReport {
        let range = task_range(world, index);
        let n = range.len() - 1;
        let mut wakeups = 0u64;
        let mut lat_sum = 0u64;
        let mut lat_max = 0u64;
        for t in range.skip(1) {
            let m = &world.metrics.tasks[t];
            wakeups += m.wakeups;
            lat_sum += m.wake_lat_sum_ns;
            lat_max = lat_max.max(m.wake_lat_max_ns);
        }
        let secs_ns = world.now().0.max(1);
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
            format_duration(world.config.timer_slack),
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
