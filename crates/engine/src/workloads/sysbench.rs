//! sysbench cpu: N threads each doing a fixed number of CPU-bound events.
//!
//! Compiled to the IR: the main thread forks the N threads and reaps them; each thread
//! marks its start, runs `events` times `Run(event)` and marks its end. `event` is work in
//! ns at capacity 1024 and full frequency (default 1 ms, about one `--cpu-max-prime=10000`
//! event on a ~3 GHz core), so a thread on a CPU of capacity 430 takes 1024/430 as long.
//!
//! sysbench 1.0's `--events` caps the events of all threads together, taken from a shared
//! counter; here each thread does `events` events (default 10000), so that per-thread
//! completion times can be compared, as seed 002 does for big and LITTLE CPUs. The output
//! follows sysbench's "General statistics" and "Threads fairness" blocks, plus the
//! completion time of each thread.

use crate::error::EngineError;
use crate::program::{Op, Program};
use crate::time::{format_duration, MS, SEC};
use crate::world::{Blueprint, World};

use super::{add_program, new_task, task_range, Keys, WorkloadReport};

/// sysbench cpu options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysbenchCpu {
    /// `--threads`.
    pub threads: u64,
    /// Events per thread.
    pub events: u64,
    /// Work per event in ns at capacity 1024.
    pub event: u64,
}

impl SysbenchCpu {
    /// Parses `threads`, `events`, `event`.
    pub fn parse(body: &str) -> Result<SysbenchCpu, EngineError> {
        let k = Keys::parse(
            "sysbench-cpu",
            body,
            &[
                &["threads", "num-threads"],
                &["events"],
                &["event", "event-work"],
            ],
        )?;
        Ok(SysbenchCpu {
            threads: k.int("threads", 1, 1, 1 << 20)?,
            events: k.int("events", 10_000, 1, 1 << 40)?,
            event: k.dur("event", MS, 1, 1, 10 * SEC)?,
        })
    }

    /// Every option spelled out.
    pub fn canonical(&self) -> String {
        format!(
            "sysbench-cpu:threads={},events={},event={}",
            self.threads,
            self.events,
            format_duration(self.event)
        )
    }

    /// Main + threads.
    pub fn nr_tasks(&self) -> u64 {
        1 + self.threads
    }

    pub(super) fn build(&self, w: usize, bp: &mut Blueprint) {
        let n = self.threads as usize;
        let main = bp.tasks.len();
        let first = main + 1;
        let main_prog = add_program(
            bp,
            Program::new()
                .op(Op::Mark { slot: 0 })
                .op(Op::ForkChildren)
                .begin_loop(Some(n as u64))
                .op(Op::Wait { timeout: None })
                .end_loop()
                .op(Op::Mark { slot: 1 })
                .op(Op::Exit),
        );
        let prog = add_program(
            bp,
            Program::new()
                .op(Op::Mark { slot: 0 })
                .begin_loop(Some(self.events))
                .op(Op::Run { work: self.event })
                .end_loop()
                .op(Op::Mark { slot: 1 })
                .op(Op::Exit),
        );
        bp.tasks.push(new_task(
            "sysbench".into(),
            main_prog,
            None,
            (first, first + n),
            w,
        ));
        for i in 0..n {
            let me = first + i;
            let mut task = new_task(format!("sysbench{i}"), prog, Some(main), (me, me), w);
            // sysbench's workers are pthreads of one process.
            task.thread = true;
            bp.tasks.push(task);
        }
    }

    pub(super) fn report(&self, index: usize, world: &World) -> WorkloadReport {
        let range = task_range(world, index);
        let main = range.start;
        let mut times = Vec::new();
        for t in range.skip(1) {
            if let [Some(a), Some(b)] = world.tasks[t].marks {
                times.push(b - a);
            }
        }
        let finished = times.len() as u64 == self.threads;
        let secs = |ns: u64| ns as f64 / 1e9;
        let total = match world.tasks[main].marks {
            [Some(a), Some(b)] => Some(b - a),
            _ => None,
        };
        let mut text = format!(
            "Running the test with following options:\nNumber of threads: {}\n\n",
            self.threads
        );
        let done_events = times.len() as u64 * self.events;
        let avg_time = if times.is_empty() {
            0.0
        } else {
            times.iter().map(|&t| secs(t)).sum::<f64>() / times.len() as f64
        };
        let stddev = if times.is_empty() {
            0.0
        } else {
            (times
                .iter()
                .map(|&t| (secs(t) - avg_time).powi(2))
                .sum::<f64>()
                / times.len() as f64)
                .sqrt()
        };
        match total {
            Some(t) => text.push_str(&format!(
                "General statistics:\n    total time:                          {:.4}s\n    total number of events:              {done_events}\n\n",
                secs(t)
            )),
            None => text.push_str(&format!(
                "General statistics:\n    total time:                          (not finished within --duration; {}/{} threads done)\n\n",
                times.len(),
                self.threads
            )),
        }
        let per_event_ms: Vec<f64> = times
            .iter()
            .map(|&t| secs(t) * 1e3 / self.events as f64)
            .collect();
        if !per_event_ms.is_empty() {
            let min = per_event_ms.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = per_event_ms.iter().cloned().fold(0.0, f64::max);
            let avg = per_event_ms.iter().sum::<f64>() / per_event_ms.len() as f64;
            text.push_str(&format!(
                "Latency (ms), per-thread mean event time:\n         min: {min:>12.2}\n         avg: {avg:>12.2}\n         max: {max:>12.2}\n\n"
            ));
        }
        text.push_str(&format!(
            "Threads fairness:\n    events (avg/stddev):           {:.4}/0.00\n    execution time (avg/stddev):   {avg_time:.4}/{stddev:.2}\n\n",
            self.events as f64
        ));
        text.push_str("Per-thread completion time (s):");
        for (i, t) in times.iter().enumerate() {
            if i % 8 == 0 {
                text.push_str("\n   ");
            }
            text.push_str(&format!(" {:.4}", secs(*t)));
        }
        text.push('\n');
        let json = serde_json::json!({
            "threads": self.threads,
            "total_time_ns": total,
            "thread_time_ns": times,
        });
        WorkloadReport {
            text,
            json,
            finished,
        }
    }
}
