//! Threaded race mode (`fairsim race`): emulated CPUs on real OS threads over shared
//! runqueues, running the balance crate's newidle and periodic balancing as they are,
//! so that the scan's real cost under true concurrency, the contention on runqueue locks
//! and the conservation of tasks under real interleavings can be measured.
//!
//! The crate stands on the scheduler crates (balance, topology) and not on the
//! virtual-time engine: race mode runs outside virtual time, so nothing of the engine's
//! event loop, costs or trace applies to it, and keeping it apart lets either change
//! without building the other.
//!
//! - [`spec`]: what defines a run ([`RaceSpec`]) and the ranges accepted.
//! - [`error`]: what can go wrong ([`RaceError`]).
//! - [`rq`]: runqueues with published lockless fields and a mutex for the rest.
//! - [`cpu`]: the shared [`RaceWorld`] and the per-CPU [`CpuCtx`], which implements the
//!   balance crate's `LbRead`, `MoveTasks` and `BalanceHost`.
//! - [`step`]: one turn of an emulated CPU (timers, tick, run a token, newidle balance).
//! - [`report`]: merging the CPUs' measurements and printing them.
//! - [`control`]: the default thread count, the start gate, each thread's deadline and
//!   the watchdog's heartbeats.
//! - [`hist`]: the fixed-size histogram of `update_sd_lb_stats` timings, so memory does
//!   not grow with a run's length.
//! - [`storm`]: the fixed state the `newidle_storm` bench times.
//! - [`sync`]: std's locks and atomics, or loom's under `--cfg loom`.
//!
//! Unlike the virtual-time engine, a race run is a measurement of this host: two runs
//! differ. What is fixed by the seed is only each CPU's `sched_rng` stream.

pub mod control;
pub mod cpu;
pub mod error;
pub mod hist;
pub mod report;
pub mod rq;
pub mod spec;
pub mod step;
pub mod storm;
pub mod sync;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fairsim_balance::lb::LbState;
use fairsim_balance::{Feature, SchedParams, TaskId};
use fairsim_pelt::UtilEstMode;
use fairsim_topology::{build_sched_domains, BuildOptions, Machine};

use control::Control;
use cpu::{CpuCtx, RaceWorld};
use error::invalid;
pub use error::{RaceError, StuckThread};
use report::{CpuResult, RaceReport};
use rq::{RaceRq, RqInner, Token};
pub use spec::{validate, Placement, RaceSpec, MAX_RACE_DURATION, MAX_RACE_TASKS};
pub use step::TokenProgram;
use sync::{AtomicBool, AtomicU64, AtomicUsize};

fn util_est_mode(params: &SchedParams) -> UtilEstMode {
    if params.features.has(Feature::UTIL_EST) {
        params.util_est
    } else {
        UtilEstMode::Off
    }
}

/// Builds the shared world for `machine` with `tasks` tokens, token `p` queued on CPU
/// `place(p)`, and the initial per-domain state ([`LbState::new`]'s, from which each
/// [`CpuCtx`] takes its own). `rd->overloaded` starts set when some CPU holds two tokens.
pub fn build_world(
    machine: &Machine,
    build: BuildOptions,
    params: &SchedParams,
    tasks: usize,
    place: impl Fn(TaskId) -> usize,
) -> Result<(RaceWorld, LbState), RaceError> {
    let topo = build_sched_domains(machine, build)
        .map_err(|e| invalid("machine", &machine.name, &e.to_string()))?;
    let n = machine.nr_cpus();
    let hz = u64::from(params.hz.max(1));
    let tick_nsec = (1_000_000_000 + hz / 2) / hz;
    let boot = CpuCtx::kclock(0);
    let lb = LbState::new(&topo, hz, boot / tick_nsec, boot, params.seed);
    let util_est = util_est_mode(params);
    let mut inners: Vec<RqInner> = (0..n)
        .map(|_| RqInner {
            clock: boot,
            avg_idle: 2 * params.migration_cost,
            max_idle_balance_cost: params.migration_cost,
            ..RqInner::default()
        })
        .collect();
    for p in 0..tasks as TaskId {
        inners[place(p) % n].enqueue(p, Token::default(), util_est);
    }
    let stacked = inners.iter().any(|r| r.nr_running() >= 2);
    let rqs = inners
        .into_iter()
        .enumerate()
        .map(|(cpu, inner)| RaceRq::new(topo.cpus[cpu].cpu_capacity, inner))
        .collect();
    let smt_active = machine.smt_present();
    let world = RaceWorld {
        machine: machine.clone(),
        topo,
        features: params.features,
        util_est,
        hz,
        tick_nsec,
        max_load_balance_interval: lb.max_load_balance_interval,
        migration_cost: params.migration_cost,
        nr_migrate: params.nr_migrate,
        smt_active,
        rqs,
        rd_overloaded: AtomicBool::new(stacked),
        balance_running: AtomicBool::new(false),
        asleep_on: (0..tasks).map(|_| AtomicUsize::new(usize::MAX)).collect(),
        threads: std::sync::OnceLock::new(),
        serialize_failed: AtomicU64::new(0),
        start: Instant::now(),
        stop: AtomicBool::new(false),
    };
    Ok((world, lb))
}

/// One driving thread: once the gate opens, turn to each of its CPUs in order until the
/// deadline, sleeping when all of them are idle until the earliest of their timers, the
/// next tick or the deadline.
///
/// The thread reads the wall clock after every CPU it turns to and stops by itself once
/// the deadline has passed: on an oversubscribed host the thread that started it may not
/// get a time slice to raise the stop flag in time, and a round over many CPUs lasts long.
fn drive(
    w: &RaceWorld,
    k: usize,
    cpus: Vec<usize>,
    lb: &LbState,
    prog: TokenProgram,
    ctl: &Control,
) -> Vec<CpuResult> {
    let deadline = ctl.wait_for_start();
    let mut ctxs: Vec<CpuCtx<'_>> = cpus
        .iter()
        .map(|&c| CpuCtx::new(w, c, &lb.sd, lb.rnd[c]))
        .collect();
    'run: while !w.stop.load(Ordering::Relaxed) {
        let mut ran = false;
        let mut wake = u64::MAX;
        for ctx in ctxs.iter_mut() {
            match ctx.step(prog) {
                step::StepOutcome::Ran => ran = true,
                step::StepOutcome::Idle(t) => wake = wake.min(t.unwrap_or(u64::MAX)),
            }
            let now = w.now_ns();
            ctl.last[k].store(now, Ordering::Relaxed);
            if now >= deadline {
                break 'run;
            }
        }
        if !ran {
            // Idle: halt until a timer or the next tick, as an idle CPU waits for an
            // interrupt, and no later than the deadline. Waits too short to sleep for
            // are spent yielding.
            let now = w.now_ns();
            let next_tick = (now / w.tick_nsec + 1) * w.tick_nsec;
            let until = wake.min(next_tick).min(deadline);
            if until > now + 20_000 {
                std::thread::park_timeout(Duration::from_nanos(until - now));
            } else {
                std::thread::yield_now();
            }
        }
    }
    ctl.stop(k, w.now_ns());
    ctxs.into_iter()
        .map(|c| {
            let sd_stats = c.schedstats().map(|(sd, s)| (sd, s.clone())).collect();
            let in_flight = c.in_flight();
            CpuResult {
                cpu: c.cpu,
                stats: c.stats,
                sd_stats,
                in_flight,
            }
        })
        .collect()
}

/// Runs `spec` on real threads and reports.
///
/// The watchdog covers the whole run: starting the threads, the run and their stop. A run
/// whose threads have not all stopped `spec.watchdog_ns` after the deadline fails with an
/// error naming `--watchdog`; its threads are left to stop on their own.
pub fn run_race(spec: &RaceSpec) -> Result<RaceReport, RaceError> {
    validate(spec)?;
    let n = spec.machine.nr_cpus();
    let (world, lb) =
        build_world(
            &spec.machine,
            spec.build,
            &spec.params,
            spec.tasks,
            |p| match spec.placement {
                Placement::Cpu0 => 0,
                Placement::Spread => p % n,
            },
        )?;
    let world = Arc::new(world);
    let lb = Arc::new(lb);
    let ctl = Arc::new(Control::new(spec.threads));
    // Until the gate opens, the watchdog counts from the world's start: starting the
    // threads may not take longer than the run and the watchdog's grace together.
    let give_up = spec.duration_ns.saturating_add(spec.watchdog_ns);
    let mut handles = Vec::with_capacity(spec.threads);
    for k in 0..spec.threads {
        let cpus: Vec<usize> = (k..n).step_by(spec.threads).collect();
        let (w, lb, c) = (Arc::clone(&world), Arc::clone(&lb), Arc::clone(&ctl));
        let prog = spec.program;
        let h = std::thread::Builder::new()
            .name(format!("race-cpu{k}"))
            .stack_size(256 * 1024)
            .spawn(move || drive(&w, k, cpus, &lb, prog, &c));
        let failed = match h {
            Ok(h) => {
                handles.push(h);
                None
            }
            Err(e) => Some(invalid(
                "--threads",
                spec.threads,
                &format!("as many as the host can start ({e})"),
            )),
        };
        let late = world.now_ns() > give_up;
        if failed.is_some() || late {
            // Let the threads already started stop on their own: open the gate with a
            // deadline already past.
            world.stop.store(true, Ordering::Relaxed);
            ctl.open(0);
            handles.iter().for_each(|h| h.thread().unpark());
            return Err(failed.unwrap_or(RaceError::StartTimeout {
                limit_ns: give_up,
                started: handles.len(),
                threads: spec.threads,
            }));
        }
    }
    let _ = world
        .threads
        .set(handles.iter().map(|h| h.thread().clone()).collect());
    let released = world.now_ns();
    let deadline = released.saturating_add(spec.duration_ns);
    ctl.open(deadline);
    handles.iter().for_each(|h| h.thread().unpark());
    // The threads stop by themselves at the deadline; the stop flag is only a second
    // way for them to learn it. A thread that returned or panicked is finished; the join
    // below reports a panic.
    while !handles.iter().all(|h| h.is_finished()) {
        let now = world.now_ns();
        if now >= deadline {
            world.stop.store(true, Ordering::Relaxed);
        }
        if now.saturating_sub(deadline) > spec.watchdog_ns {
            let stuck: Vec<StuckThread> = (0..spec.threads)
                .filter(|&k| !handles[k].is_finished())
                .map(|k| match ctl.last[k].load(Ordering::Relaxed) {
                    0 => StuckThread::NoStep { thread: k },
                    t => StuckThread::LastStep {
                        thread: k,
                        last_ns: t.saturating_sub(released),
                    },
                })
                .collect();
            return Err(RaceError::StopTimeout {
                stuck,
                threads: spec.threads,
                watchdog_ns: spec.watchdog_ns,
                duration_ns: spec.duration_ns,
            });
        }
        let left = deadline.saturating_sub(now).max(1_000_000);
        std::thread::sleep(Duration::from_nanos(left.min(5_000_000)));
    }
    // The CPUs ran from the gate's opening to the last thread's stop.
    let stopped = ctl.last_stop().saturating_sub(released);
    let mut cpus = Vec::with_capacity(n);
    for h in handles {
        match h.join() {
            Ok(r) => cpus.extend(r),
            Err(_) => return Err(RaceError::ThreadPanicked),
        }
    }
    cpus.sort_by_key(|c| c.cpu);
    let wall_ns = stopped;
    let contended: u64 = world
        .rqs
        .iter()
        .map(|r| r.contended.load(Ordering::Relaxed))
        .sum();
    let serialize_failed = world.serialize_failed.load(Ordering::Relaxed);
    let world = Arc::try_unwrap(world).map_err(|_| RaceError::WorldShared)?;
    let topo = world.topo.clone();
    let mut seen = vec![0u32; spec.tasks];
    let mut tokens: Vec<Token> = Vec::new();
    for rq in world.rqs {
        let inner = rq.into_inner();
        for p in inner.all_tokens() {
            if let Some(s) = seen.get_mut(p) {
                *s += 1;
            }
        }
        tokens.extend(inner.tokens.into_values());
        tokens.extend(inner.asleep.into_values());
    }
    for c in &cpus {
        for &p in &c.in_flight {
            if let Some(s) = seen.get_mut(p) {
                *s += 1;
            }
        }
    }
    Ok(RaceReport::new(
        spec,
        topo,
        cpus,
        &seen,
        &tokens,
        wall_ns,
        contended,
        serialize_failed,
    ))
}
