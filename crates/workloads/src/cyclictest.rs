//! cyclictest (rt-tests): threads that sleep until absolute instants one interval apart and
//! measure how late they run. `cyclictest:t=2,a,n,D=10`.
//!
//! The port follows rt-tests **0.85** (tag `v0.85`, November 2012, the release current when
//! seed 002 was posted in March 2013), `src/cyclictest/cyclictest.c`: `process_options` for the
//! options, `main` for the threads' parameters and its display loop, `timerthread` for a
//! thread's loop (`workloads::CyclicRt`), `print_stat` for the output.
//!
//! Options, with cyclictest's letters and long names:
//! - `t`/`threads`: thread count (default 1); `t` without a number makes one thread per
//!   CPU, as `-t` alone does (`max_cpus`).
//! - `i`/`interval` (us, default 1000) and `d`/`distance` (us, default 500): thread k's
//!   interval is `i + k*d`, as `main` adds the distance after each thread.
//! - `a`/`affinity`: alone, thread k is pinned to CPU `k mod ncpus` (`AFFINITY_USEALL`);
//!   `a=CPU` pins every thread to CPU (`AFFINITY_SPECIFIED`). Each thread sets its own
//!   mask (`pthread_setaffinity_np`), which replaces the one it inherited, so `cpus=LIST`
//!   confines `main` and, without `a`, the threads, but not a thread that `a` pinned. The
//!   pin is given at creation: the migration the real call makes when the thread starts
//!   elsewhere is not modelled.
//! - `n`/`nanosleep`: `clock_nanosleep(TIMER_ABSTIME)` (`MODE_CLOCK_NANOSLEEP`). It is
//!   required: without it 0.85 uses a POSIX interval timer and `sigwait`
//!   (`MODE_CYCLIC`), which is not modelled.
//! - `D`/`duration`: run length; bare numbers are seconds, and the `m`, `h`, `d` suffixes
//!   are minutes, hours and days as `parse_time_string` reads them (fairsim's `ms`, `us`
//!   and `s` units are taken too). Each thread's `stop` is its start plus D; the first
//!   thread past it sets `shutdown` and every thread leaves its loop at its next wakeup.
//!   Without D cyclictest runs until the run's `--duration`.
//! - `l`/`loops`: cycles per thread. As in 0.85, `main` ends the run for every thread as
//!   soon as one thread has done its loops (its `allstopped` test).
//! - `p`/`priority` (0-99): accepted and printed in `P:`, but fairsim has only the fair
//!   class: the threads run as `SCHED_OTHER` (what 0.85 does without `-p`), keeping the
//!   timer slack the kernel drops for real-time tasks. The header says so.
//! - `q`/`quiet`: `main` prints nothing while it runs (less work in its 10 ms loop).
//!
//! Not modelled: 0.85's `set_latency_target` writes 0 to `/dev/cpu_dma_latency`, a PM QoS
//! request that keeps cpuidle in state 0 while cyclictest runs; fairsim's governors see
//! no PM QoS request, so on a machine with deeper idle states the header says so and
//! `--idle-states ...,no-STATE` gives the kernel's behaviour.
//!
//! Compiled to the IR: `main` (task 0) creates the threads (`ForkChildren`), then loops
//! `Run(display)`, `Sleep(10 ms)` and `CyclicCall::Poll` (its `usleep(10000)` and the test that
//! ends the loop), sleeps 50 ms, signals the threads (`PostChildren`, its
//! `pthread_kill(SIGTERM)`), joins them and exits. A thread runs its start-up, then loops
//! `CyclicCall::Sleep` (an absolute hrtimer with the task's timer slack, through the engine's
//! timer interrupt and wakeup path) and `Run(LOOP_WORK)`. The latency is read when the
//! thread runs again after the wakeup, as its `clock_gettime` does.

use fairsim_topology::CpuMask;

use fairsim_des::time::{format_duration, parse_duration, MS, SEC, US};
use fairsim_engine::error::{EngineError, SpecError};
use fairsim_engine::program::{Op, Program};
use fairsim_engine::world::{pid_of, Blueprint, Outcome, WorkloadRt};

use super::cyclictest_stats::{CyclicCall, CyclicRt, CyclicThread};
use super::keys::Keys;
use super::report::WorkloadReport;
use super::tasks::{add_program, new_task, task_range};

/// The most threads a specification may ask for.
const MAX_THREADS: u64 = 1 << 16;
/// cyclictest keeps intervals in a C `int` of microseconds.
const MAX_US: u64 = i32::MAX as u64;
/// The longest `D`: a year.
const MAX_DURATION: u64 = 365 * 86_400 * SEC;

/// A thread's work per cycle, at capacity 1024: `clock_gettime`, the statistics update
/// and the `clock_nanosleep` system call's entry with the hrtimer's arming. 1 us, the
/// figure `nanosleep`'s `run` default takes for its loop and system call path (a few
/// hundred ns for the call on current x86, plus the loop's own code).
pub(crate) const LOOP_WORK: u64 = US;
/// A thread's start before its first `clock_gettime`: `pthread_setaffinity_np`,
/// `gettid`, `sigprocmask` and `sched_setscheduler`, four system calls at about 1 us
/// each, as `LOOP_WORK` counts one.
pub(crate) const THREAD_START: u64 = 4 * US;
/// `main`'s display loop round with `q`: the loop's test and `usleep`'s system call path,
/// 1 us as `LOOP_WORK`.
pub(crate) const DISPLAY_QUIET: u64 = US;
/// `main`'s display loop round without `q`: reading `/proc/loadavg` (open, read, close)
/// and formatting the header, 10 us, plus one `printf` of a thread's line, 2 us per
/// thread. These are estimates of a few system calls and some formatting on a current
/// core, not measurements; the terminal that reads the output is not modelled.
pub(crate) const DISPLAY_BASE: u64 = 10 * US;
/// See [`DISPLAY_BASE`].
pub(crate) const DISPLAY_PER_THREAD: u64 = 2 * US;
/// `main`'s `usleep(10000)` between two displays.
const DISPLAY_PERIOD: u64 = 10 * MS;
/// `main`'s `usleep(50000)` after the loop, before it signals the threads.
const SHUTDOWN_WAIT: u64 = 50 * MS;

/// Where the threads run (`setaffinity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Affinity {
    /// No `-a`: wherever the scheduler puts them.
    Unspecified,
    /// `-a` alone: thread k on CPU `k mod ncpus`.
    UseAll,
    /// `-a CPU`: every thread on that CPU.
    Cpu(usize),
}

/// cyclictest options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cyclictest {
    /// `-t N`; `None` for `-t` alone (one thread per CPU).
    pub threads: Option<u64>,
    /// `-i`, in us.
    pub interval_us: u64,
    /// `-d`, in us.
    pub distance_us: u64,
    /// `-a`.
    pub affinity: Affinity,
    /// `-D` in ns.
    pub duration: Option<u64>,
    /// `-l`.
    pub loops: Option<u64>,
    /// `-p`.
    pub priority: u64,
    /// `-q`.
    pub quiet: bool,
}

impl Cyclictest {
    /// Parses the options, as `process_options` reads them.
    pub fn parse(body: &str) -> Result<Cyclictest, EngineError> {
        let k = Keys::parse(
            "cyclictest",
            body,
            &[
                &["t", "threads"],
                &["a", "affinity"],
                &["n", "nanosleep"],
                &["i", "interval"],
                &["d", "distance"],
                &["D", "duration"],
                &["l", "loops"],
                &["p", "priority"],
                &["q", "quiet"],
            ],
        )?;
        if !k.flag("n")? {
            return Err(SpecError::missing(
                "cyclictest",
                "n",
                "n (clock_nanosleep with TIMER_ABSTIME, -n): without it cyclictest 0.85 uses POSIX interval timers and sigwait, which fairsim does not model",
            )
            .into());
        }
        let threads = match k.raw("t") {
            Some(None) => None,
            _ => Some(k.int("t", 1, 1, MAX_THREADS)?),
        };
        let affinity = match k.raw("a") {
            None => Affinity::Unspecified,
            Some(None) => Affinity::UseAll,
            Some(Some(_)) => Affinity::Cpu(k.int("a", 0, 0, 8191)? as usize),
        };
        let duration = match k.text("D") {
            None if k.raw("D").is_none() => None,
            text => Some(duration(&k, text.unwrap_or(""))?),
        };
        let loops = match k.raw("l") {
            None => None,
            Some(_) => Some(k.int("l", 1, 1, u64::MAX >> 1)?),
        };
        let c = Cyclictest {
            threads,
            interval_us: k.int("i", 1_000, 1, MAX_US)?,
            distance_us: k.int("d", 500, 0, MAX_US)?,
            affinity,
            duration,
            loops,
            priority: k.int("p", 0, 0, 99)?,
            quiet: k.flag("q")?,
        };
        if let Some(n) = c.threads {
            c.check_intervals(n)?;
        }
        Ok(c)
    }

    /// The largest interval must fit cyclictest's `int` of microseconds.
    fn check_intervals(&self, n: u64) -> Result<(), EngineError> {
        let last = self.interval_us + (n - 1).saturating_mul(self.distance_us);
        if last > MAX_US {
            return Err(SpecError::key(
                "cyclictest",
                "d",
                format!(
                    "invalid value '{}': thread {} would get an interval of {last} us; allowed: i + (t-1)*d up to {MAX_US} us",
                    self.distance_us,
                    n - 1
                ),
            )
            .into());
        }
        Ok(())
    }

    /// Checks what depends on the machine: `a=CPU` names one of its CPUs (cyclictest:
    /// "CPU #%d not found"), and `t` alone gives intervals that fit.
    pub fn check(&self, ncpus: usize) -> Result<(), EngineError> {
        if let Affinity::Cpu(c) = self.affinity {
            if c >= ncpus {
                return Err(SpecError::invalid_because(
                    "cyclictest",
                    "a",
                    c,
                    format!("CPU {c} is not on the {ncpus}-CPU machine"),
                    format!("0..={}", ncpus - 1),
                )
                .into());
            }
        }
        self.check_intervals(self.count(ncpus))
    }

    /// Threads on a machine of `ncpus` CPUs.
    pub fn count(&self, ncpus: usize) -> u64 {
        self.threads.unwrap_or(ncpus as u64)
    }

    /// Thread `k`'s interval in us: `i + k*d`.
    pub fn interval_of(&self, k: u64) -> u64 {
        self.interval_us + k * self.distance_us
    }

    /// The CPU thread `k` is pinned to, if any.
    pub fn cpu_of(&self, k: u64, ncpus: usize) -> Option<usize> {
        match self.affinity {
            Affinity::Unspecified => None,
            Affinity::UseAll => Some((k % ncpus.max(1) as u64) as usize),
            Affinity::Cpu(c) => Some(c),
        }
    }

    /// Whether the tool never stops by itself (neither `D` nor `l`).
    pub fn endless(&self) -> bool {
        self.duration.is_none() && self.loops.is_none()
    }

    /// The run length the tool takes with `D`: thread 0 sets `shutdown` within one of
    /// its intervals after D, `main` sees it within its 10 ms round and signals the
    /// threads still asleep 50 ms later; D + i + 100 ms leaves room to spare (the world
    /// ends earlier, when the tool has exited).
    pub fn own_duration(&self) -> Option<u64> {
        self.duration.map(|d| d + self.interval_us * US + 100 * MS)
    }

    /// Every option spelled out.
    pub fn canonical(&self, ncpus: usize) -> String {
        let mut s = format!(
            "cyclictest:t={},n,i={},d={}",
            self.count(ncpus),
            self.interval_us,
            self.distance_us
        );
        match self.affinity {
            Affinity::Unspecified => {}
            Affinity::UseAll => s.push_str(",a"),
            Affinity::Cpu(c) => s.push_str(&format!(",a={c}")),
        }
        if let Some(d) = self.duration {
            s.push_str(&format!(",D={}", format_duration(d)));
        }
        if let Some(l) = self.loops {
            s.push_str(&format!(",l={l}"));
        }
        if self.priority > 0 {
            s.push_str(&format!(",p={}", self.priority));
        }
        if self.quiet {
            s.push_str(",q");
        }
        s
    }

    /// The options as cyclictest's command line, `-D` apart (the header gives the
    /// duration in fairsim's units, which cyclictest would read otherwise).
    fn args(&self, ncpus: usize) -> String {
        let mut s = format!(
            "-t {} -n -i {} -d {}",
            self.count(ncpus),
            self.interval_us,
            self.distance_us
        );
        match self.affinity {
            Affinity::Unspecified => {}
            Affinity::UseAll => s.push_str(" -a"),
            Affinity::Cpu(c) => s.push_str(&format!(" -a {c}")),
        }
        if let Some(l) = self.loops {
            s.push_str(&format!(" -l {l}"));
        }
        if self.priority > 0 {
            s.push_str(&format!(" -p {}", self.priority));
        }
        if self.quiet {
            s.push_str(" -q");
        }
        s
    }

    /// `main` + threads.
    pub fn nr_tasks(&self, ncpus: usize) -> u64 {
        1 + self.count(ncpus)
    }

    /// Adds `main` and the threads to `bp`, with their state in `rt`: `main`'s set-up loop
    /// over the threads (`par->interval` growing by the distance, `par->cpu` from the
    /// affinity mode, `stat->min = 1000000`) and its display loop.
    pub(super) fn build(&self, w: usize, bp: &mut Blueprint, rt: &mut WorkloadRt, ncpus: usize) {
        let n = self.count(ncpus);
        let main = bp.tasks.len();
        let first = main + 1;
        let display = if self.quiet {
            DISPLAY_QUIET
        } else {
            DISPLAY_BASE + n * DISPLAY_PER_THREAD
        };
        let mut model = CyclicRt {
            threads: Vec::with_capacity(n as usize),
            duration: self.duration,
            shutdown: false,
            calls: Vec::new(),
        };
        let mut p = Program::new()
            .op(Op::ForkChildren)
            .begin_loop(None)
            .op(Op::Run { work: display })
            .op(Op::Sleep {
                dur: fairsim_engine::program::DurSpec::Fixed(DISPLAY_PERIOD),
            });
        // The loop's test leaves it for the op after its end: the test, then LoopEnd.
        let after = p.ops.len() + 2;
        p = p.op(model.op(CyclicCall::Poll { after })).end_loop();
        let main_prog = add_program(
            bp,
            p.op(Op::Sleep {
                dur: fairsim_engine::program::DurSpec::Fixed(SHUTDOWN_WAIT),
            })
            .op(Op::PostChildren)
            .begin_loop(Some(n))
            .op(Op::Wait { timeout: None })
            .end_loop()
            .op(Op::Exit),
        );
        let thread_prog = add_program(
            bp,
            Program::new()
                .op(Op::Run { work: THREAD_START })
                .begin_loop(None)
                .op(model.op(CyclicCall::Sleep))
                .op(Op::Run { work: LOOP_WORK })
                .end_loop()
                .op(Op::Exit),
        );
        bp.tasks.push(new_task(
            "cyclictest".into(),
            main_prog,
            None,
            (first, first + n as usize),
            w,
        ));
        let max_cycles = self.loops;
        for k in 0..n {
            let me = first + k as usize;
            let mut t = new_task("cyclictest".into(), thread_prog, Some(main), (me, me), w);
            t.thread = true;
            if let Some(cpu) = self.cpu_of(k, ncpus).filter(|&c| c < ncpus) {
                t.cpus_allowed = Some(CpuMask::single(ncpus, cpu));
            }
            bp.tasks.push(t);
            model
                .threads
                .push(CyclicThread::new(self.interval_of(k) * US, max_cycles));
        }
        rt.model = Some(Box::new(model));
    }

    /// `print_stat`'s line per thread, as `cyclictest -q` prints them at the end, after
    /// fairsim's header lines; the statistics per thread and over all threads as JSON.
    pub(super) fn report(&self, index: usize, outcome: &Outcome) -> WorkloadReport {
        let range = task_range(outcome, index);
        let ncpus = outcome.sched().nr_cpus();
        let empty = CyclicRt::default();
        let cyc = outcome.workloads()[index]
            .model::<CyclicRt>()
            .unwrap_or(&empty);
        let mut text = format!(
            "# fairsim: cyclictest 0.85 {}: clock_nanosleep(TIMER_ABSTIME), SCHED_OTHER, timer slack {}{}\n",
            self.args(ncpus),
            format_duration(outcome.config().timer_slack),
            match self.duration {
                Some(d) => format!(", duration {}", format_duration(d)),
                None => String::new(),
            },
        );
        if self.priority > 0 {
            text.push_str(&format!(
                "# P: {}: not modelled: SCHED_FIFO threads run as SCHED_OTHER (fair class) in fairsim, with the timer slack the kernel drops for real-time tasks\n",
                self.priority
            ));
        }
        if let Some(deeper) = deeper_idle_states(outcome) {
            text.push_str(&format!(
                "# not modelled: /dev/cpu_dma_latency set to 0us (cyclictest's PM QoS request keeps cpuidle in state 0); this run may enter {deeper} (--idle-states ...,no-NAME disables a state)\n"
            ));
        }
        let mut rows = Vec::new();
        let (mut cycles, mut sum, mut min, mut max) = (0u64, 0i64, None::<i64>, 0i64);
        let mut finished = true;
        for (k, (th, t)) in cyc.threads.iter().zip(range.skip(1)).enumerate() {
            let tid = pid_of(t);
            text.push_str(&format!(
                "T:{k:2} ({tid:5}) P:{:2} I:{} C:{:7} Min:{:7} Act:{:5} Avg:{:5} Max:{:8}\n",
                self.priority,
                self.interval_of(k as u64),
                th.cycles,
                th.min,
                th.act,
                th.avg(),
                th.max
            ));
            if !self.endless() && outcome.metrics().tasks[t].exited_at.is_none() {
                finished = false;
            }
            if th.cycles > 0 {
                cycles += th.cycles;
                sum += th.sum;
                min = Some(min.map_or(th.min, |m| m.min(th.min)));
                max = max.max(th.max);
            }
            rows.push(serde_json::json!({
                "thread": k,
                "tid": tid,
                "priority": self.priority,
                "interval_us": self.interval_of(k as u64),
                "cpu": self.cpu_of(k as u64, ncpus),
                "cycles": th.cycles,
                "min_us": (th.cycles > 0).then_some(th.min),
                "act_us": th.act,
                "avg_us": th.avg(),
                "max_us": th.max,
                "cpus": th.cpus.iter().collect::<Vec<_>>(),
            }));
        }
        let avg = if cycles > 0 {
            Some(sum as f64 / cycles as f64)
        } else {
            None
        };
        let json = serde_json::json!({
            "threads": rows,
            "cycles": cycles,
            "latency_min_us": min,
            "latency_avg_us": avg,
            "latency_max_us": (cycles > 0).then_some(max),
        });
        WorkloadReport {
            text,
            json,
            finished,
        }
    }
}

/// The enabled idle states below state 0 that the run's CPUs have (`None` when state 0 is
/// all there is), named once each in table order.
fn deeper_idle_states(outcome: &Outcome) -> Option<String> {
    let states = outcome.idle_states();
    let mut names: Vec<&str> = Vec::new();
    for cpu in 0..outcome.sched().nr_cpus() {
        for s in states.table_of(cpu).states.iter().skip(1) {
            if !s.disabled && !names.contains(&s.name.as_str()) {
                names.push(&s.name);
            }
        }
    }
    (!names.is_empty()).then(|| names.join(", "))
}

/// `-D`'s value in ns: `parse_time_string`'s seconds with `m`, `h`, `d` suffixes, or a
/// fairsim duration whose bare numbers are seconds. 0 (cyclictest's "no limit") is
/// refused: leaving `D` out is the way to say it.
fn duration(k: &Keys, text: &str) -> Result<u64, EngineError> {
    let allowed = "a duration above 0 and up to a year: seconds, or with a unit m, h, d (cyclictest's), ms, us, s; leave D out to run until --duration";
    let t = text.trim();
    let suffixed = t
        .strip_suffix(['m', 'M'])
        .map(|n| (n, 60))
        .or_else(|| t.strip_suffix(['h', 'H']).map(|n| (n, 3_600)))
        .or_else(|| t.strip_suffix(['d', 'D']).map(|n| (n, 86_400)))
        .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let ns = match suffixed {
        Some((n, scale)) => n
            .parse::<u64>()
            .ok()
            .and_then(|v| v.checked_mul(scale * SEC)),
        None => parse_duration(t, SEC).ok(),
    };
    match ns {
        Some(ns) if (1..=MAX_DURATION).contains(&ns) => Ok(ns),
        _ => Err(k.invalid("D", t, allowed)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Result<Cyclictest, String> {
        Cyclictest::parse(body).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_and_long_names_are_cyclictests() {
        let c = parse("n").unwrap();
        assert_eq!(
            (c.threads, c.interval_us, c.distance_us, c.affinity),
            (Some(1), 1_000, 500, Affinity::Unspecified)
        );
        let l = parse("threads=3,affinity,nanosleep,interval=200,distance=0,duration=2m,loops=9,priority=80,quiet").unwrap();
        assert_eq!(
            (l.threads, l.affinity, l.interval_of(2), l.duration, l.loops),
            (Some(3), Affinity::UseAll, 200, Some(120 * SEC), Some(9))
        );
        assert_eq!((l.priority, l.quiet), (80, true));
        assert_eq!(parse("t,n").unwrap().count(5), 5);
        assert_eq!(parse("n,a=3").unwrap().cpu_of(7, 5), Some(3));
        assert_eq!(parse("n,a").unwrap().cpu_of(7, 5), Some(2));
        assert_eq!(parse("n,D=10").unwrap().duration, Some(10 * SEC));
        assert_eq!(parse("n,D=250ms").unwrap().duration, Some(250 * MS));
        assert_eq!(parse("n,D=1h").unwrap().duration, Some(3_600 * SEC));
        assert_eq!(
            parse("t=2,a,n,D=10").unwrap().canonical(5),
            "cyclictest:t=2,n,i=1000,d=500,a,D=10s"
        );
    }

    #[test]
    fn bad_values_name_the_field() {
        for (body, want) in [
            ("t=2", "n: missing"),
            ("n,t=0", "t: invalid value '0'"),
            ("n,i=0", "i: invalid value '0'"),
            ("n,i=-5", "i: invalid value '-5'"),
            ("n,d=-1", "d: invalid value '-1'"),
            ("n,D=0", "D: invalid value '0'"),
            ("n,D=-3", "D: invalid value '-3'"),
            ("n,D=10x", "D: invalid value '10x'"),
            ("n,l=0", "l: invalid value '0'"),
            ("n,p=100", "p: invalid value '100'"),
            ("n,a=x", "a: invalid value 'x'"),
            ("n,h=100", "unknown key 'h'"),
            ("n,t=3,i=2147483000,d=1000", "d: invalid value '1000'"),
        ] {
            let e = parse(body).unwrap_err();
            assert!(e.contains(want), "{body}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = parse("n,a=9").unwrap().check(5).unwrap_err().to_string();
        assert!(
            e.contains("a: invalid value '9'") && e.contains("0..=4"),
            "{e}"
        );
    }
}
