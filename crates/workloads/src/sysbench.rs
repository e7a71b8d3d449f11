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

use fairsim_des::time::{format_duration, MS, SEC};
use fairsim_engine::error::EngineError;
use fairsim_engine::program::{Op, Program};
use fairsim_engine::world::{Blueprint, Outcome};

use super::keys::Keys;
use super::report::WorkloadReport;
use super::tasks::{add_program, new_task, task_range};

/// sysbench cpu options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysbenchCpu {
    /// `--threads`.
    pub threads: u64,
    /// Events per thread; 0 is no limit (then `time` must end the run).
    pub events: u64,
    /// Work per event in ns at capacity 1024.
    pub event: u64,
    /// sysbench 1.0's `--time`: the run stops after this many ns whatever the events
    /// done, and the report counts the events each thread finished by then.
    pub time: Option<u64>,
}

impl SysbenchCpu {
    /// Parses `threads`, `events`, `event`, `time`.
    pub fn parse(body: &str) -> Result<SysbenchCpu, EngineError> {
        let k = Keys::parse(
            "sysbench-cpu",
            body,
            &[
                &["threads", "num-threads"],
                &["events"],
                &["event", "event-work"],
                &["time", "max-time"],
            ],
        )?;
        let time = match k.text("time") {
            Some(_) => Some(k.dur("time", 0, SEC, MS, 24 * 3600 * SEC)?),
            None => None,
        };
        let events = k.int("events", 10_000, 0, 1 << 40)?;
        if events == 0 && time.is_none() {
            return Err(k.invalid(
                "events",
                "0",
                "an integer in 1..=1099511627776, or 0 (no limit) with time=D",
            ));
        }
        Ok(SysbenchCpu {
            threads: k.int("threads", 1, 1, 1 << 20)?,
            events,
            event: k.dur("event", MS, 1, 1, 10 * SEC)?,
            time,
        })
    }

    /// Every option spelled out.
    pub fn canonical(&self) -> String {
        let mut text = format!(
            "sysbench-cpu:threads={},events={},event={}",
            self.threads,
            self.events,
            format_duration(self.event)
        );
        if let Some(t) = self.time {
            text.push_str(&format!(",time={}", format_duration(t)));
        }
        text
    }

    /// The iterations of a thread's event loop: `events`, or for no limit a count no
    /// run reaches (a finite one, so that the loop's counter says how many were done;
    /// the engine's endless loop keeps no count).
    fn loop_count(&self) -> u64 {
        if self.events == 0 {
            1 << 62
        } else {
            self.events
        }
    }

    /// The run length `--time` sets, if given.
    pub fn own_duration(&self) -> Option<u64> {
        self.time
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
        let mut thread = Program::new()
            .op(Op::Mark { slot: 0 })
            .begin_loop(Some(self.loop_count()));
        // sysbench 1.0's `--time`: each thread checks the clock before every event and
        // stops once the limit has passed since it started, keeping its loop's count
        // for the report.
        let brk = self.time.map(|dur| {
            let at = thread.ops.len();
            thread.ops.push(Op::BreakAfter {
                slot: 0,
                dur,
                after: 0,
                keep_count: true,
            });
            (at, dur)
        });
        thread = thread.op(Op::Run { work: self.event }).end_loop();
        if let Some((at, dur)) = brk {
            thread.ops[at] = Op::BreakAfter {
                slot: 0,
                dur,
                after: thread.ops.len(),
                keep_count: true,
            };
        }
        let prog = add_program(bp, thread.op(Op::Mark { slot: 1 }).op(Op::Exit));
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

    /// sysbench's report. A thread still running when `--duration` ends counts the events
    /// it finished and the time since it started, as sysbench's own statistics do for a
    /// run its `--time` limit stops, so the fairness block never contradicts the
    /// completion line.
    pub(super) fn report(&self, index: usize, outcome: &Outcome) -> WorkloadReport {
        let range = task_range(outcome, index);
        let main = range.start;
        let mut times = Vec::new();
        // Per thread: (events finished, time in its event loop).
        let mut threads: Vec<(u64, u64)> = Vec::new();
        // Per finished thread that did any: its mean event time in ms.
        let mut event_ms: Vec<f64> = Vec::new();
        for t in range.skip(1) {
            let task = &outcome.tasks()[t];
            match task.marks {
                [Some(a), Some(b)] => {
                    // A thread that `time` stopped kept its loop's count: the events
                    // not started.
                    let limit = self.loop_count();
                    let left = task.loops.innermost().unwrap_or(0);
                    let done = limit.saturating_sub(left.min(limit));
                    times.push(b - a);
                    event_ms.extend((done > 0).then(|| (b - a) as f64 / 1e6 / done as f64));
                    threads.push((done, b - a));
                }
                [Some(a), None] => {
                    // The innermost counter still includes the event under way.
                    let limit = self.loop_count();
                    let left = task.loops.innermost().unwrap_or(limit);
                    let done = limit.saturating_sub(left.min(limit));
                    threads.push((done, outcome.now().0.saturating_sub(a)));
                }
                _ => threads.push((0, 0)),
            }
        }
        let finished = times.len() as u64 == self.threads;
        let secs = |ns: u64| ns as f64 / 1e9;
        let total = match outcome.tasks()[main].marks {
            [Some(a), Some(b)] => Some(b - a),
            _ => None,
        };
        let mut text = format!(
            "Running the test with following options:\nNumber of threads: {}\n\n",
            self.threads
        );
        let done_events: u64 = threads.iter().map(|&(e, _)| e).sum();
        let mean_sd = |xs: &[f64]| -> (f64, f64) {
            if xs.is_empty() {
                return (0.0, 0.0);
            }
            let mean = xs.iter().sum::<f64>() / xs.len() as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
            (mean, var.sqrt())
        };
        let (avg_time, stddev) =
            mean_sd(&threads.iter().map(|&(_, t)| secs(t)).collect::<Vec<_>>());
        let (avg_events, sd_events) =
            mean_sd(&threads.iter().map(|&(e, _)| e as f64).collect::<Vec<_>>());
        // A run that `time` ended stopped as sysbench 1.0's `--time` stops it: its total
        // time is the time since the launch, and its events those done by then.
        let stopped_by_time = total.is_none() && self.time.is_some_and(|t| outcome.now().0 >= t);
        let total = match (total, outcome.tasks()[main].marks) {
            (None, [Some(a), None]) if stopped_by_time => Some(outcome.now().0.saturating_sub(a)),
            (t, _) => t,
        };
        let finished = finished || stopped_by_time;
        match total {
            Some(t) => text.push_str(&format!(
                "General statistics:\n    total time:                          {:.4}s\n    total number of events:              {done_events}\n\n",
                secs(t)
            )),
            None => {
                let of = if self.events == 0 {
                    "no event limit".to_string()
                } else {
                    format!("of {}", self.events * self.threads)
                };
                text.push_str(&format!(
                    "General statistics:\n    total time:                          (not finished within --duration; {}/{} threads done)\n    total number of events:              {done_events} ({of}, by the end of --duration)\n\n",
                    times.len(),
                    self.threads,
                ))
            }
        }
        let per_event_ms = event_ms;
        if !per_event_ms.is_empty() {
            let min = per_event_ms.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = per_event_ms.iter().cloned().fold(0.0, f64::max);
            let avg = per_event_ms.iter().sum::<f64>() / per_event_ms.len() as f64;
            text.push_str(&format!(
                "Latency (ms), per-thread mean event time:\n         min: {min:>12.2}\n         avg: {avg:>12.2}\n         max: {max:>12.2}\n\n"
            ));
        }
        text.push_str(&format!(
            "Threads fairness:\n    events (avg/stddev):           {avg_events:.4}/{sd_events:.2}\n    execution time (avg/stddev):   {avg_time:.4}/{stddev:.2}\n\n"
        ));
        // A thread that a time limit stopped has no completion time to list.
        if !(stopped_by_time && times.is_empty()) {
            text.push_str("Per-thread completion time (s):");
            for (i, t) in times.iter().enumerate() {
                if i % 8 == 0 {
                    text.push_str("\n   ");
                }
                text.push_str(&format!(" {:.4}", secs(*t)));
            }
            // The threads --duration stopped have no completion time: say how many,
            // rather than leave the list short or empty.
            let running = (self.threads as usize).saturating_sub(times.len());
            if !finished && running > 0 {
                text.push_str(&format!(
                    "\n    ({running} of {} threads still running at the end of --duration)",
                    self.threads
                ));
            }
            text.push('\n');
        }
        let mut json = serde_json::json!({
            "threads": self.threads,
            "total_time_ns": total,
            "thread_time_ns": times,
        });
        // Only an unfinished run carries the per-thread counts, so that finished runs'
        // JSON stays as it was.
        if !finished {
            json["thread_events_done"] = threads.iter().map(|&(e, _)| e).collect();
        }
        WorkloadReport {
            text,
            json,
            finished,
        }
    }
}
