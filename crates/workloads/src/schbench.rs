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
//!
//! `version=2016` is the binary seed 001 printed: its `getopt_long` string lists `m:`,
//! but the option `switch` has a `case 'd'` for the message threads and no `case 'm'`,
//! so `-m N` is accepted and ignored and the default of 2 message threads runs. The
//! seed's `-m 6 -t 24` therefore ran 2 x 24 workers. Later schbench versions (and
//! fairsim's default, `version=current`) honour `-m`.

use fairsim_des::time::{format_duration, SEC, US};
use fairsim_engine::error::EngineError;
use fairsim_engine::program::{DurSpec, Op, Program, Target};
use fairsim_engine::world::{Blueprint, Outcome, WorkloadRt};

use super::keys::Keys;
use super::report::WorkloadReport;
use super::tasks::{add_program, new_task};
use fairsim_engine::plat::PlatStats;

/// Which schbench binary is emulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchbenchVersion {
    /// The April 2016 posting (seed 001): `-m` is parsed and ignored.
    V2016,
    /// Later versions: `-m` sets the message threads.
    Current,
}

/// The message threads of the 2016 binary, whatever `-m` says (`message_threads = 2`).
pub const SCHBENCH_2016_MESSAGE_THREADS: u64 = 2;

/// schbench options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schbench {
    /// Which binary: decides whether `-m` is honoured.
    pub version: SchbenchVersion,
    /// `-m` as given (`None` when absent); see [`Schbench::message_threads`] for the
    /// number that runs.
    pub m: Option<u64>,
    /// Message threads that run: `-m` (default 2), or always 2 for `version=2016`.
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
    /// Parses the keys `m`, `t`, `c`, `s`, `r` (or their long names) and `version`
    /// (`2016` or `current`).
    pub fn parse(body: &str) -> Result<Schbench, EngineError> {
        let k = Keys::parse(
            "schbench",
            body,
            &[
                &["version"],
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
        let version = match k.text("version") {
            None | Some("current") => SchbenchVersion::Current,
            Some("2016") => SchbenchVersion::V2016,
            Some(v) => return Err(k.invalid("version", v, "2016 or current")),
        };
        let m = if k.raw("m").is_some() {
            Some(k.int("m", 2, 1, 65_536)?)
        } else {
            None
        };
        let message_threads = match version {
            SchbenchVersion::V2016 => SCHBENCH_2016_MESSAGE_THREADS,
            SchbenchVersion::Current => m.unwrap_or(2),
        };
        Ok(Schbench {
            version,
            m,
            message_threads,
            threads: k.int("t", 16, 1, 65_536)?,
            cputime: k.dur("c", 30_000 * US, US, 0, 10 * SEC)?,
            sleeptime: k.dur("s", 30_000 * US, US, US, 10 * SEC)?,
            runtime,
        })
    }

    /// What the user should know about how the options were read: the 2016 binary's
    /// ignored `-m`, said once (the CLI prints it on stderr).
    pub fn notes(&self) -> Vec<String> {
        match (self.version, self.m) {
            (SchbenchVersion::V2016, Some(m)) if m != SCHBENCH_2016_MESSAGE_THREADS => {
                vec![format!(
                "schbench version=2016 ignores m={m} as the 2016 binary did (its option switch \
                 has no case 'm'): {} message threads x {} workers run",
                SCHBENCH_2016_MESSAGE_THREADS, self.threads
            )]
            }
            _ => Vec::new(),
        }
    }

    /// Every option spelled out (the message threads that run, not an ignored `-m`).
    pub fn canonical(&self) -> String {
        let version = match self.version {
            SchbenchVersion::V2016 => "version=2016,",
            SchbenchVersion::Current => "",
        };
        let mut s = format!(
            "schbench:{version}m={},t={},c={},s={}",
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
            let mut task = new_task(
                format!("schbench-msg{i}"),
                prog,
                Some(main),
                (first, first + t),
                w,
            );
            // schbench creates its message threads and workers with pthread_create.
            task.thread = true;
            bp.tasks.push(task);
        }
        for i in 0..m {
            for j in 0..t {
                let me = worker0 + i * t + j;
                let mut task = new_task(
                    format!("schbench-w{i}.{j}"),
                    worker_prog,
                    Some(msg0 + i),
                    (me, me),
                    w,
                );
                task.thread = true;
                bp.tasks.push(task);
            }
        }
    }

    pub(super) fn report(&self, index: usize, outcome: &Outcome) -> WorkloadReport {
        let stats = &outcome.workloads()[index].hists[0];
        let mut text = stats.show_latencies();
        // With `-r` schbench has a length of its own; a --duration shorter than it ends
        // the run first, and the table is then the wakeups so far, which is said.
        let duration = outcome.config().duration;
        let cut = self.runtime.filter(|&r| duration < r);
        if let Some(r) = cut {
            text.push_str(&format!(
                "(not finished within --duration: the run ended at {} of schbench's -r {}; the table holds the wakeups so far)\n",
                format_duration(duration),
                format_duration(r)
            ));
        }
        let pct = stats.percentiles();
        let mut json = serde_json::Map::new();
        for (i, p) in fairsim_engine::plat::PLIST.iter().enumerate() {
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
            finished: cut.is_none(),
        }
    }
}
