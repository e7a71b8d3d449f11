//! One task on one CPU: the emulation behind `fairsim pelt`.
//!
//! A single nice-0 task alternates between running and sleeping on an otherwise idle
//! CPU. The rq clock, the PELT clock, the task's sched_entity and the root cfs_rq are
//! updated exactly where 6.12.117 updates them, in the kernel's order of calls:
//!
//! - **wake** (`try_to_wake_up` / `wake_up_new_task`): `update_rq_clock` with the idle
//!   task current (the PELT clock syncs to `clock_task`); for the first wake, the new-task
//!   initialisation; `enqueue_task_fair`: `util_est_enqueue`, then `enqueue_entity`'s
//!   `update_load_avg(UPDATE_TG | DO_ATTACH)` (the entity decays as blocked, the cfs_rq
//!   with no weight yet; a new task is attached here), then the weight is accounted;
//!   then `set_next_entity`'s `update_load_avg(UPDATE_TG)` at the same instant.
//! - **tick** (`sched_tick`, only while the task runs): `update_rq_clock` (the PELT clock
//!   advances by the capacity- and frequency-scaled delta), then `entity_tick`'s
//!   `update_load_avg(UPDATE_TG)`.
//! - **sleep** (`__schedule` with the task blocking): `update_rq_clock`, then
//!   `dequeue_task_fair`: in the 6.12 form `util_est_dequeue`, `util_est_update`, then
//!   `dequeue_entity`'s `update_load_avg(UPDATE_TG)`; in the legacy (v6.7) form the PELT
//!   update comes before `util_est_update`. Then `put_prev_entity` (no update, the task
//!   is off the queue) and `set_next_task_idle`'s `update_idle_rq_clock_pelt`, which
//!   syncs the PELT clock and books lost idle time if the rq was fully busy.
//!
//! Conventions (shared with the CLI): the task is new and starts runnable at time 0;
//! time 0 is a PELT period boundary (the internal clocks start at [`CLOCK_BASE_NS`],
//! a whole number of 1024-us periods, because the kernel treats a `last_update_time` of
//! 0 as "not attached"); ticks fall at absolute multiples of the tick period; a tick at
//! the instant of a sleep is processed first, a tick at the instant of a wakeup is not
//! processed; events at exactly `duration` are included.
//!
//! What the single cfs_rq does: it is the root cfs_rq of the CPU and holds only this
//! task. Its `load.weight` is the task's weight while queued and 0 otherwise, its
//! runnable count 1 or 0 (no delayed dequeue: the only entity is always eligible, so
//! `DELAY_DEQUEUE` never defers its sleep), and `curr` is the task while it runs. It is
//! updated after the entity at every event, as `update_load_avg` does; its `util_sum` is
//! what the lost-idle-time test reads. Not modelled: blocked-load updates from the
//! load-balance softirq (they touch only the cfs_rq while the task sleeps), irq and
//! steal time, HW pressure, rt/dl utilization (taken as 0), and `update_rq_clock` calls
//! other than at the three events (each one truncates the scaled clock separately).

use crate::avg::SchedAvg;
use crate::clock::PeltClock;
use crate::entity::{update_load_avg_task, CfsRqAvg, CfsRqInputs, SeInputs, UpdateFlags};
use crate::init::{init_entity_runnable_average, post_init_entity_util_avg};
use crate::util_est::{
    task_util_est_only, util_est_dequeue, util_est_enqueue, util_est_update, UtilEstMode,
};
use crate::SCHED_CAPACITY_SCALE;

/// Where the emulated rq clocks start: one 1024-us PELT period (2^20 ns) so that user
/// time 0 is a period boundary and no `last_update_time` is ever 0.
pub const CLOCK_BASE_NS: u64 = 1 << 20;

/// `TICK_NSEC` for a given `HZ`: `(NSEC_PER_SEC + HZ / 2) / HZ`.
pub fn tick_nsec(hz: u64) -> u64 {
    (1_000_000_000 + hz / 2) / hz
}

/// One phase of a run/sleep pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The task is runnable (and runs, being alone) for this many ns.
    Run(u64),
    /// The task sleeps for this many ns.
    Sleep(u64),
}

/// Invalid emulation parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// The pattern is empty, does not start with a run, does not alternate, or has a
    /// zero-length phase.
    #[error("pattern: {what}")]
    Pattern {
        /// What is wrong with the pattern.
        what: String,
    },
    /// CPU capacity outside 1..=1024.
    #[error("cpu capacity {0} is outside 1..=1024")]
    Capacity(u64),
    /// Frequency capacity outside 1..=1024.
    #[error("frequency capacity {0} is outside 1..=1024")]
    Freq(u64),
    /// Tick period of 0 ns.
    #[error("tick period must be positive")]
    Tick,
    /// Task weight of 0.
    #[error("task weight must be positive")]
    Weight,
}

/// A run/sleep pattern repeated until the end of the emulation.
///
/// Either a single `Run` (the task never sleeps) or alternating `Run`/`Sleep` phases
/// that start with a run and end with a sleep; every phase lasts at least 1 ns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    phases: Vec<Phase>,
}

impl Pattern {
    /// Validates and wraps the phases.
    pub fn new(phases: Vec<Phase>) -> Result<Self, SimError> {
        if phases.is_empty() {
            return Err(SimError::Pattern {
                what: "no phases".into(),
            });
        }
        for (i, p) in phases.iter().enumerate() {
            let (is_run, ns) = match *p {
                Phase::Run(ns) => (true, ns),
                Phase::Sleep(ns) => (false, ns),
            };
            if ns == 0 {
                return Err(SimError::Pattern {
                    what: format!("phase {} has zero length", i + 1),
                });
            }
            if is_run != (i % 2 == 0) {
                return Err(SimError::Pattern {
                    what: "phases must alternate, starting with run".into(),
                });
            }
        }
        if phases.len() > 1 && phases.len() % 2 == 1 {
            return Err(SimError::Pattern {
                what: "a repeating pattern must end with a sleep".into(),
            });
        }
        Ok(Pattern { phases })
    }

    /// A task that runs `run_ns` then sleeps `sleep_ns`, forever.
    pub fn duty(run_ns: u64, sleep_ns: u64) -> Result<Self, SimError> {
        Pattern::new(vec![Phase::Run(run_ns), Phase::Sleep(sleep_ns)])
    }

    /// A task that never sleeps.
    pub fn always_running() -> Self {
        Pattern {
            phases: vec![Phase::Run(1)],
        }
    }

    /// The phases, as given.
    pub fn phases(&self) -> &[Phase] {
        &self.phases
    }

    /// The run intervals `(start, end)` that begin at or before `duration_ns`, in order.
    /// A never-sleeping task has one interval ending at `u64::MAX`.
    pub fn run_intervals(&self, duration_ns: u64) -> Vec<(u64, u64)> {
        self.intervals(duration_ns).collect()
    }

    /// The same intervals as [`Pattern::run_intervals`], produced one at a time so that
    /// a fine pattern over a long span never holds them all.
    pub fn intervals(&self, duration_ns: u64) -> RunIntervals {
        RunIntervals {
            phases: self.phases.clone(),
            duration_ns,
            t: 0,
            idx: 0,
            done: false,
        }
    }

    /// Upper bound on the number of updates [`samples`] yields for this pattern over
    /// `duration_ns` with ticks every `tick_ns`: a wakeup and a sleep per run interval
    /// plus every tick instant of the span (ticks only fall inside run intervals).
    pub fn max_updates(&self, duration_ns: u64, tick_ns: u64) -> u128 {
        let ticks = u128::from(duration_ns / tick_ns.max(1)) + 1;
        if self.phases.len() == 1 {
            return ticks + 1;
        }
        let period: u128 = self
            .phases
            .iter()
            .map(|p| match *p {
                Phase::Run(ns) | Phase::Sleep(ns) => u128::from(ns),
            })
            .sum();
        let pairs = (self.phases.len() / 2) as u128;
        let cycles = u128::from(duration_ns) / period.max(1) + 1;
        2 * cycles * pairs + ticks
    }
}

/// The run intervals of a [`Pattern`] up to a duration, lazily.
#[derive(Debug, Clone)]
pub struct RunIntervals {
    phases: Vec<Phase>,
    duration_ns: u64,
    t: u64,
    idx: usize,
    done: bool,
}

impl Iterator for RunIntervals {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        if self.done {
            return None;
        }
        if self.phases.len() == 1 {
            self.done = true;
            return Some((0, u64::MAX));
        }
        if self.t > self.duration_ns {
            self.done = true;
            return None;
        }
        let (Phase::Run(run), Phase::Sleep(sleep)) =
            (self.phases[self.idx], self.phases[self.idx + 1])
        else {
            unreachable!("validated in Pattern::new");
        };
        let start = self.t;
        let end = start.saturating_add(run);
        self.t = end.saturating_add(sleep);
        self.idx = (self.idx + 2) % self.phases.len();
        Some((start, end))
    }
}

/// How the new task's signals start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InitMode {
    /// `init_entity_runnable_average` + `post_init_entity_util_avg`, as the kernel does.
    #[default]
    Kernel,
    /// Every signal 0 (then attached as the kernel attaches any entity).
    Zero,
}

/// Parameters of a one-task emulation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimParams {
    /// The run/sleep pattern.
    pub pattern: Pattern,
    /// Emulated time span; events at exactly this time are included.
    pub duration_ns: u64,
    /// `arch_scale_cpu_capacity()` of the CPU, 1..=1024.
    pub cpu_capacity: u64,
    /// `arch_scale_freq_capacity()` of the CPU, 1..=1024 (1024 = max frequency).
    pub freq_capacity: u64,
    /// Tick period in ns (see [`tick_nsec`]).
    pub tick_ns: u64,
    /// util_est form, or off.
    pub util_est: UtilEstMode,
    /// New-task initialisation.
    pub init: InitMode,
    /// `se_weight()` of the task, 1024 for nice 0.
    pub weight: u64,
}

impl SimParams {
    /// Defaults matching a nice-0 task on a full-capacity CPU at max frequency, HZ=250.
    pub fn new(pattern: Pattern, duration_ns: u64) -> Self {
        SimParams {
            pattern,
            duration_ns,
            cpu_capacity: SCHED_CAPACITY_SCALE,
            freq_capacity: SCHED_CAPACITY_SCALE,
            tick_ns: tick_nsec(250),
            util_est: UtilEstMode::V6_12,
            init: InitMode::Kernel,
            weight: 1024,
        }
    }

    fn validate(&self) -> Result<(), SimError> {
        if !(1..=SCHED_CAPACITY_SCALE).contains(&self.cpu_capacity) {
            return Err(SimError::Capacity(self.cpu_capacity));
        }
        if !(1..=SCHED_CAPACITY_SCALE).contains(&self.freq_capacity) {
            return Err(SimError::Freq(self.freq_capacity));
        }
        if self.tick_ns == 0 {
            return Err(SimError::Tick);
        }
        if self.weight == 0 {
            return Err(SimError::Weight);
        }
        Ok(())
    }
}

/// The kind of update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Enqueue at wakeup (the first one is the new task's).
    Wake,
    /// Dequeue as the task goes to sleep.
    Sleep,
    /// Scheduler tick while the task runs.
    Tick,
}

impl Event {
    /// The name used in CSV output.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Wake => "wake",
            Event::Sleep => "sleep",
            Event::Tick => "tick",
        }
    }
}

/// The state right after one update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// User time of the event, ns from the start.
    pub time_ns: u64,
    /// What happened.
    pub event: Event,
    /// The task's `util_avg`.
    pub util_avg: u64,
    /// The task's `runnable_avg`.
    pub runnable_avg: u64,
    /// The task's `load_avg`.
    pub load_avg: u64,
    /// The task's estimate without flag bits (`_task_util_est`).
    pub util_est: u32,
    /// The task's full `sched_avg`.
    pub se: SchedAvg,
    /// The root cfs_rq's `sched_avg`.
    pub cfs: SchedAvg,
    /// The rq clocks (internal, offset by [`CLOCK_BASE_NS`]).
    pub clock: PeltClock,
}

/// The emulated CPU with its one task.
#[derive(Debug, Clone)]
pub struct OneTaskSim {
    params: SimParams,
    clock: PeltClock,
    last_clock_update: u64,
    cfs: CfsRqAvg,
    se: SchedAvg,
    on_rq: bool,
    running: bool,
    started: bool,
}

impl OneTaskSim {
    /// A CPU at time 0 with the task not yet created.
    pub fn new(params: SimParams) -> Result<Self, SimError> {
        params.validate()?;
        Ok(OneTaskSim {
            params,
            clock: PeltClock::new(CLOCK_BASE_NS),
            last_clock_update: 0,
            cfs: CfsRqAvg::default(),
            se: SchedAvg::default(),
            on_rq: false,
            running: false,
            started: false,
        })
    }

    /// `update_rq_clock()` at user time `t`.
    fn update_rq_clock(&mut self, t: u64) {
        let delta = t - self.last_clock_update;
        self.last_clock_update = t;
        self.clock.update_rq_clock_task(
            delta,
            !self.running,
            self.params.cpu_capacity,
            self.params.freq_capacity,
        );
    }

    fn se_inputs(&self) -> SeInputs {
        SeInputs {
            weight: self.params.weight,
            on_rq: self.on_rq,
            runnable: self.on_rq as u64,
            running: self.running,
        }
    }

    fn cfs_inputs(&self) -> CfsRqInputs {
        CfsRqInputs {
            load: if self.on_rq { self.params.weight } else { 0 },
            runnable: self.on_rq as u64,
            running: self.running,
        }
    }

    fn update_load_avg(&mut self, flags: UpdateFlags) {
        let now = self.clock.rq_clock_pelt();
        let (cfs_inp, se_inp) = (self.cfs_inputs(), self.se_inputs());
        update_load_avg_task(
            now,
            &mut self.cfs,
            cfs_inp,
            &mut self.se,
            se_inp,
            flags,
            self.params.util_est.enabled(),
        );
    }

    fn sample(&self, t: u64, event: Event) -> Sample {
        Sample {
            time_ns: t,
            event,
            util_avg: self.se.util_avg,
            runnable_avg: self.se.runnable_avg,
            load_avg: self.se.load_avg,
            util_est: task_util_est_only(&self.se, self.params.util_est),
            se: self.se,
            cfs: self.cfs.avg,
            clock: self.clock,
        }
    }

    /// The task wakes (or, the first time, is created and woken) at user time `t`.
    pub fn wake(&mut self, t: u64) -> Sample {
        self.update_rq_clock(t);
        if !self.started {
            self.started = true;
            self.se = match self.params.init {
                InitMode::Kernel => {
                    let mut se = init_entity_runnable_average(true, self.params.weight);
                    post_init_entity_util_avg(
                        &mut se,
                        &self.cfs.avg,
                        self.params.cpu_capacity,
                        self.params.weight,
                    );
                    se
                }
                InitMode::Zero => SchedAvg::default(),
            };
        }
        // enqueue_task_fair
        util_est_enqueue(&mut self.cfs.avg, &self.se, self.params.util_est);
        self.update_load_avg(UpdateFlags {
            update_tg: true,
            do_attach: true,
            ..UpdateFlags::default()
        });
        self.on_rq = true;
        // __schedule: update_rq_clock (no time passed), then set_next_entity.
        self.update_rq_clock(t);
        self.update_load_avg(UpdateFlags {
            update_tg: true,
            ..UpdateFlags::default()
        });
        self.running = true;
        self.sample(t, Event::Wake)
    }

    /// A scheduler tick at user time `t` while the task runs.
    pub fn tick(&mut self, t: u64) -> Sample {
        self.update_rq_clock(t);
        self.update_load_avg(UpdateFlags {
            update_tg: true,
            ..UpdateFlags::default()
        });
        self.sample(t, Event::Tick)
    }

    /// The task blocks at user time `t`.
    pub fn sleep(&mut self, t: u64) -> Sample {
        self.update_rq_clock(t);
        let mode = self.params.util_est;
        let cap = self.params.cpu_capacity;
        let flags = UpdateFlags {
            update_tg: true,
            ..UpdateFlags::default()
        };
        util_est_dequeue(&mut self.cfs.avg, &self.se, mode);
        match mode {
            UtilEstMode::Legacy { .. } => {
                // v6.7 dequeue_task_fair: dequeue_entity first, util_est_update last.
                self.update_load_avg(flags);
                util_est_update(&mut self.se, true, cap, mode);
            }
            UtilEstMode::Off | UtilEstMode::V6_12 => {
                // 6.12.117 dequeue_task_fair: util_est_update before dequeue_entities.
                util_est_update(&mut self.se, true, cap, mode);
                self.update_load_avg(flags);
            }
        }
        self.on_rq = false;
        // put_prev_entity: the task is off the queue, so no update; curr = NULL.
        self.running = false;
        // set_next_task_idle: rt and dl util_sum are 0 on this CPU.
        self.clock.update_idle_rq_clock_pelt(self.cfs.avg.util_sum);
        self.sample(t, Event::Sleep)
    }

    /// The current task `sched_avg`.
    pub fn se(&self) -> &SchedAvg {
        &self.se
    }

    /// The root cfs_rq's PELT state.
    pub fn cfs_rq(&self) -> &CfsRqAvg {
        &self.cfs
    }

    /// The rq clocks.
    pub fn clock(&self) -> &PeltClock {
        &self.clock
    }
}

/// Runs the whole pattern and returns one sample per update, in time order.
pub fn simulate(params: &SimParams) -> Result<Vec<Sample>, SimError> {
    Ok(samples(params)?.collect())
}

/// The updates of a run, one at a time, in time order: memory stays constant however
/// long the run or fine the pattern.
pub fn samples(params: &SimParams) -> Result<Samples, SimError> {
    let sim = OneTaskSim::new(params.clone())?;
    Ok(Samples {
        intervals: params.pattern.intervals(params.duration_ns),
        duration_ns: params.duration_ns,
        tick_ns: params.tick_ns,
        stage: Stage::Wake,
        sim,
    })
}

/// Where [`Samples`] is within the current run interval.
#[derive(Debug, Clone, Copy)]
enum Stage {
    /// The next update is the wakeup that starts the next interval.
    Wake,
    /// Ticks of the interval ending at `end`; the next one is tick number `k`.
    Ticks { end: u64, k: u64 },
}

/// Iterator over the updates of a run; see [`samples`].
#[derive(Debug, Clone)]
pub struct Samples {
    sim: OneTaskSim,
    intervals: RunIntervals,
    duration_ns: u64,
    tick_ns: u64,
    stage: Stage,
}

impl Iterator for Samples {
    type Item = Sample;

    fn next(&mut self) -> Option<Sample> {
        match self.stage {
            Stage::Wake => {
                let (start, end) = self.intervals.next()?;
                // Ticks strictly after the wakeup, up to and including the sleep instant.
                self.stage = Stage::Ticks {
                    end,
                    k: start / self.tick_ns + 1,
                };
                Some(self.sim.wake(start))
            }
            Stage::Ticks { end, k } => {
                let last = end.min(self.duration_ns);
                if let Some(t) = k.checked_mul(self.tick_ns) {
                    if t <= last {
                        self.stage = Stage::Ticks { end, k: k + 1 };
                        return Some(self.sim.tick(t));
                    }
                }
                self.stage = Stage::Wake;
                if end <= self.duration_ns {
                    Some(self.sim.sleep(end))
                } else {
                    self.next()
                }
            }
        }
    }
}

/// How many wakeups [`Summary::util_est_at_wake`] lists; the rest are only counted.
pub const WAKE_LIST_CAP: usize = 256;

/// A summary of a run for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// First event time at which `util_avg * 2 >= capacity`.
    pub t50_ns: Option<u64>,
    /// First event time at which `util_avg * 10 >= capacity * 8`.
    pub t80_ns: Option<u64>,
    /// Minimum and maximum `util_avg` over the events in the second half of the run
    /// (`time >= duration / 2`), i.e. the settled swing once the run is long enough.
    pub settled_util: Option<(u64, u64)>,
    /// Minimum and maximum `util_est` over the same window.
    pub settled_util_est: Option<(u32, u32)>,
    /// `(time, util_est)` at the first [`WAKE_LIST_CAP`] wakeups, as the task is enqueued.
    pub util_est_at_wake: Vec<(u64, u32)>,
    /// Number of wakeups in the run, listed or not.
    pub wakeups: u64,
}

/// Builds a [`Summary`] one sample at a time, in constant memory.
#[derive(Debug, Clone)]
pub struct SummaryAcc {
    duration_ns: u64,
    capacity: u64,
    sum: Summary,
}

impl SummaryAcc {
    /// An empty summary of a run of length `duration_ns` on a CPU of `capacity`.
    pub fn new(duration_ns: u64, capacity: u64) -> Self {
        SummaryAcc {
            duration_ns,
            capacity,
            sum: Summary {
                t50_ns: None,
                t80_ns: None,
                settled_util: None,
                settled_util_est: None,
                util_est_at_wake: Vec::new(),
                wakeups: 0,
            },
        }
    }

    /// Adds the next sample, in time order.
    pub fn push(&mut self, s: &Sample) {
        let sum = &mut self.sum;
        if sum.t50_ns.is_none() && s.util_avg * 2 >= self.capacity {
            sum.t50_ns = Some(s.time_ns);
        }
        if sum.t80_ns.is_none() && s.util_avg * 10 >= self.capacity * 8 {
            sum.t80_ns = Some(s.time_ns);
        }
        if s.time_ns >= self.duration_ns / 2 {
            sum.settled_util = Some(match sum.settled_util {
                Some((lo, hi)) => (lo.min(s.util_avg), hi.max(s.util_avg)),
                None => (s.util_avg, s.util_avg),
            });
            sum.settled_util_est = Some(match sum.settled_util_est {
                Some((lo, hi)) => (lo.min(s.util_est), hi.max(s.util_est)),
                None => (s.util_est, s.util_est),
            });
        }
        if s.event == Event::Wake {
            sum.wakeups += 1;
            if sum.util_est_at_wake.len() < WAKE_LIST_CAP {
                sum.util_est_at_wake.push((s.time_ns, s.util_est));
            }
        }
    }

    /// The summary of the samples pushed so far.
    pub fn finish(self) -> Summary {
        self.sum
    }
}

/// Summarises samples of a run of length `duration_ns` on a CPU of `capacity`.
pub fn summarize(samples: &[Sample], duration_ns: u64, capacity: u64) -> Summary {
    let mut acc = SummaryAcc::new(duration_ns, capacity);
    for s in samples {
        acc.push(s);
    }
    acc.finish()
}
