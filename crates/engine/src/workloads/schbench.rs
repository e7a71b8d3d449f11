//! schbench as Chris Mason posted it in 2016 (seed 001): message threads and workers
//! trading futex wakeups, measuring the wakeup latency of the workers.
//!
//! Compiled to the IR:
//! - main: forks the `-m` message threads, then waits forever (`pthread_join`);
//! - message thread: forks its `-t` workers, then loops: `futex = BLOCKED`
//!   (`ClearTokens`), wake every worker on its list with one time stamp (`WakeList`),
//!   `fwait` on its futex with a timeout of `sleeptime + jitter0` (`Wait`), and
//!   `usleep(sleeptime + rand % (sleeptime / 4))` (`Sleep` with jitter). The jitter is
//!   drawn in microseconds as schbench does; `jitter0` is drawn once per thread.
//! - worker: loops `usec_spin(cputime)` (`Spin`: wall-clock busy loop, not capacity-scaled
//!   work, because schbench spins on `gettimeofday`), adds itself to its message thread's
//!   list, posts the message thread's futex, waits on its own futex, and records
//!   `now - wake_time` in microseconds when positive (`RecordLatency`).
//!
//! The run lasts `-r` seconds unless `--duration` says otherwise; the output is schbench's
//! "Latency percentiles (usec)" table over every worker's samples.

use crate::error::EngineError;
use crate::program::{DurSpec, Op, Program, Target};
use crate::time::{format_duration, SEC, US};
use crate::world::{Blueprint, World};

use super::{add_program, new_task, Keys, PlatStats, WorkloadReport, WorkloadRt};

/// schbench options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schbench {
    /// `-m`: message threads.
    pub message_threads: u64,
    /// `-t`: workers per message thread.
    pub threads: u64,
    /// `-c`: think time in ns (schbench takes usec).
    pub cputime: u64,
    /// `-s`: message-thread sleep in ns (schbench takes usec).
    pub sleeptime: u64,
    /// `-r`: runtime in ns, if given.
    pub runtime: Option<u64>,
}

impl Schbench {
    /// Parses the keys `m`, `t`, `c`, `s`, `r` (or their long names).
    pub fn parse(body: &str) -> Result<Schbench, EngineError> {
        let k = Keys::parse(
            "schbench",
            body,
            &[
                &["m", "message-threads"],
                &["t", "threads"],
                &["c", "cputime"],
                &["s", "sleeptime"],
                &["r", "runtime"],
            ],
        )?;
        let runtime = if k.raw("r").is_some() {
            Some(k.dur("r", 30 * SEC, SEC, 1_000_000, 3_600 * SEC)?)
        } else {
            None
        };
        Ok(Schbench {
            message_threads: k.int("m", 2, 1, 65_536)?,
            threads: k.int("t", 16, 1, 65_536)?,
            cputime: k.dur("c", 30_000 * US, US, 0, 10 * SEC)?,
            sleeptime: k.dur("s", 30_000 * US, US, US, 10 * SEC)?,
            runtime,
        })
    }

    /// Every option spelled out.
    pub fn canonical(&self) -> String {
        let mut s = format!(
            "schbench:m={},t={},c={},s={}",
            self.message_threads,
            self.threads,
            format_duration(self.cputime),
            format_duration(self.sleeptime)
        );
        if let Some(r) = self.runtime {
            s.push_str(&format!(",r={}", format_duration(r)));
        }
        s
    }

    /// main + message threads + workers.
    pub fn nr_tasks(&self) -> u64 {
        1 + self.message_threads * (1 + self.threads)
    }

    pub(super) fn build(&self, w: usize, bp: &mut Blueprint, rt: &mut WorkloadRt) {
        let m = self.message_threads as usize;
        let t = self.threads as usize;
        let main = bp.tasks.len();
        let msg0 = main + 1;
        let worker0 = msg0 + m;
        let sleep_us = self.sleeptime / US;
        let max_jitter = sleep_us / 4;
        rt.hists.push(PlatStats::default());

        let main_prog = add_program(
            bp,
            Program::new()
                .op(Op::ForkChildren)
                .begin_loop(None)
                .op(Op::Wait { timeout: None })
                .end_loop(),
        );
        let worker_prog = add_program(
            bp,
            Program::new()
                .begin_loop(None)
                .op(Op::Spin { dur: self.cputime })
                .op(Op::ListAdd { to: Target::Parent })
                .op(Op::Post { to: Target::Parent })
                .op(Op::Wait { timeout: None })
                .op(Op::RecordLatency { hist: 0 })
                .end_loop(),
        );
        bp.tasks.push(new_task(
            "schbench".into(),
            main_prog,
            None,
            (msg0, msg0 + m),
            w,
        ));
        for i in 0..m {
            let jitter0 = if max_jitter > 0 {
                rt.rng.below(max_jitter)
            } else {
                0
            };
            let prog = add_program(
                bp,
                Program::new()
                    .op(Op::ForkChildren)
                    .begin_loop(None)
                    .op(Op::ClearTokens)
                    .op(Op::WakeList)
                    .op(Op::Wait {
                        timeout: Some(DurSpec::Fixed((sleep_us + jitter0) * US)),
                    })
                    .op(Op::Sleep {
                        dur: DurSpec::JitterUs {
                            base_us: sleep_us,
                            max_jitter_us: max_jitter,
                        },
                    })
                    .end_loop(),
            );
            let first = worker0 + i * t;
            bp.tasks.push(new_task(
                format!("schbench-msg{i}"),
                prog,
                Some(main),
                (first, first + t),
                w,
            ));
        }
        for i in 0..m {
            for j in 0..t {
                let me = worker0 + i * t + j;
                bp.tasks.push(new_task(
                    format!("schbench-w{i}.{j}"),
                    worker_prog,
                    Some(msg0 + i),
                    (me, me),
                    w,
                ));
            }
        }
    }

    pub(super) fn report(&self, index: usize, world: &World) -> WorkloadReport {
        let stats = &world.workloads[index].hists[0];
        let text = stats.show_latencies();
        let pct = stats.percentiles();
        let mut json = serde_json::Map::new();
        for (i, p) in super::plat::PLIST.iter().enumerate() {
            if let Some(v) = pct.get(i) {
                json.insert(format!("wakeup_latency_pct{p:.1}"), (*v).into());
            }
        }
        json.insert(
            "wakeup_latency_min".into(),
            (if stats.nr_samples == 0 { 0 } else { stats.min }).into(),
        );
        json.insert("wakeup_latency_max".into(), stats.max.into());
        json.insert("over".into(), stats.over.into());
        json.insert("samples".into(), stats.nr_samples.into());
        WorkloadReport {
            text,
            json: serde_json::Value::Object(json),
            finished: true,
        }
    }
}
