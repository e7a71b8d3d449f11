//! The world: the scheduler state, the CPUs executing task programs, timers, pipes and the
//! event loop that drives them in virtual time.
//!
//! Every scheduler decision is a call into [`fairsim_balance::Sched`] at the virtual
//! instant it happens. The world adds what the scheduler does not own: time passing while
//! tasks run, the cost of kernel work on the CPU that does it ([`crate::cost::CostTable`]),
//! interrupts and IPIs arriving late, and the task programs themselves.
//!
//! Modules, one concept each:
//! - `cpu`: run segments, charging kernel work, the scheduler tick and `schedule()`.
//! - `exec`: the program interpreter; `loop_stack`: the counters of a task's open loops.
//! - `wake`: wakeups, forks, hrtimers and pipes.
//! - `balance`: the balance softirq, the nohz kick, active and newidle balancing.
//! - `idle`: `do_idle` over the cpuidle governors; `cpufreq`: schedutil's work and
//!   frequency transitions.
//! - `locks`: runqueue locks, their holders and spinners.
//! - `bandwidth`: CFS bandwidth control's period and slack timers.
//! - `net`: the system calls on loopback sockets; `sockets`: the sockets' model itself
//!   (connections, queues, windows).
//! - `config`: `WorldConfig` and the named choices it holds; `invariants`: the checks
//!   run after every event.
//! - `outcome`: a finished run as data ([`World::finish`]), what outputs and reports read.
//! - `workload`: what the world keeps per workload (random stream, latency histograms,
//!   sockets, the tool's model behind `Op::Hook`); `task`: how a task starts out.
//! - `tracing`: the tracer's hooks; `progress`: the guard against a run stuck at one
//!   instant, with its bounds in the leaf `progress_bounds`, which `error.rs` reads.
//! - `cpu_state`, `idle_state`, `cpufreq_state`, `lock_state`, `trace_state`: the state
//!   that `cpu`, `idle`, `cpufreq`, `locks` and `tracing` drive, in modules that do not
//!   name `World`, so that `World`'s fields, the metrics and the profile can hold it
//!   without an import cycle through the code that drives it.

mod balance;
mod bandwidth;
mod config;
mod cpu;
mod cpu_state;
mod cpufreq;
mod cpufreq_state;
mod exec;
mod idle;
mod idle_state;
mod invariants;
mod lock_state;
mod locks;
mod loop_stack;
mod net;
mod outcome;
mod progress;
mod progress_bounds;
pub mod sockets;
mod task;
mod trace_state;
mod tracing;
mod wake;
mod workload;

pub use loop_stack::LoopStack;

use std::sync::Arc;

use fairsim_balance::{Sched, TaskId};
use fairsim_topology::{CpuMask, Machine, SchedDomains};

use crate::error::{ConfigError, EngineError, InvariantError};
use crate::event::{Event, EventQueue, Tid};
use crate::metrics::{CpuMetrics, Metrics, TaskMetrics};
use crate::noise::Noise;
use crate::profile::{Ctx, Site};
use crate::program::Program;
use fairsim_des::time::Time;

pub use config::{Cpuidle, Launch, TimerExpiry, WorldConfig, DEFAULT_TIMER_SLACK};
pub use cpu_state::{CpuRt, Overhead, Seg, SegKind};
pub use cpufreq_state::{CpufreqRt, FreqChange, MAX_TIMELINE, TIMELINE_ENTRY_BYTES};
pub use outcome::Outcome;
pub use progress::{events_per_instant_limit, guard_memory, queue_limit};
pub use progress_bounds::{
    EVENTS_PER_ENTITY, MIN_EVENTS, MIN_QUEUE, QUEUE_PER_CPU, QUEUE_PER_TASK,
};
pub use trace_state::pid_of;
pub use workload::WorkloadRt;

/// What a task is doing, from the engine's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtState {
    /// Not forked yet.
    Unborn,
    /// Forked or woken, not yet enqueued (the wakeup is in flight).
    Waking,
    /// Running or queued on a runqueue.
    Runnable,
    /// Blocked on a timer, a token or a pipe.
    Blocked,
    /// Exited.
    Exited,
}

impl RtState {
    /// The state's name (`Blocked`), for the errors.
    pub fn name(self) -> &'static str {
        match self {
            RtState::Unborn => "Unborn",
            RtState::Waking => "Waking",
            RtState::Runnable => "Runnable",
            RtState::Blocked => "Blocked",
            RtState::Exited => "Exited",
        }
    }
}

/// A task's last computed work rate and the inputs of it that can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateMemo {
    /// The CPU.
    pub cpu: usize,
    /// The CPU's `freq_capacity` then.
    pub freq_capacity: u64,
    /// The task's home node then.
    pub home_node: Option<usize>,
    /// Work units per ns.
    pub rate: u64,
}

/// A task as the engine sees it: its program, position and synchronisation state.
///
/// Laid out in declaration order, 64-byte aligned: what running a task's program reads
/// and writes on every event (its position, loop counters, pipe base, blocking state, saved
/// segment and rate memo) comes first, in the first cache lines.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct TaskRt {
    /// Program index.
    pub prog: usize,
    /// Index of the next operation.
    pub pc: usize,
    /// Base of the task's pipe indices.
    pub pipe_base: usize,
    /// Remaining iterations of the open loops, innermost last.
    pub loops: LoopStack,
    /// Futex/semaphore tokens.
    pub tokens: u32,
    /// Lifecycle state.
    pub state: RtState,
    /// The task's timer fired since the blocking operation began.
    pub timer_fired: bool,
    /// Blocked in a `Wait`.
    pub waiting_sem: bool,
    /// Progress of an interrupted run segment.
    pub saved: Option<SegKind>,
    /// The last rate [`World::rate`] computed for the task, with what it depends on that
    /// can change (the CPU, its frequency scale, the task's home node): a task that runs
    /// segment after segment on one CPU (a hackbench sender's writes) reuses it.
    pub rate_memo: Option<RateMemo>,
    /// The node the task's memory is on ([`crate::memory`]): set where it first runs
    /// after its fork or its exec, a thread's from its process; `None` before.
    pub home_node: Option<usize>,
    /// Workload index.
    pub workload: usize,
    /// The scheduler's id once forked.
    pub sched_id: Option<TaskId>,
    /// Mark slots.
    pub marks: [Option<u64>; 2],
    /// Name (`comm`).
    pub name: String,
    /// The forking task.
    pub parent: Option<Tid>,
    /// Children, a contiguous range of engine ids.
    pub children: (Tid, Tid),
    /// Next child to fork.
    pub next_child: Tid,
    /// Nice level.
    pub nice: i32,
    /// Affinity (`None`: every CPU).
    pub cpus_allowed: Option<CpuMask>,
    /// The armed timer, if any.
    pub timer: Option<usize>,
    /// Tasks waiting on this task's list (`xlist`).
    pub list: Vec<Tid>,
    /// Wake stamp written by a `WakeList` (ns).
    pub stamp: u64,
    /// When the pending wakeup was issued, for the wakeup-latency metric.
    pub woken_at: Option<u64>,
    /// CPU the task last ran on (for migration costs).
    pub last_cpu: Option<usize>,
    /// A thread of its parent's process (`CLONE_THREAD`), not a process of its own: traces
    /// give it the parent's thread group, and it is reaped at exit (`X`, not `Z`).
    pub thread: bool,
    /// Its `sched_setattr` utilization clamps (`util_min`, `util_max`), set when it is
    /// created; `None`: the defaults.
    pub uclamp: Option<(u32, u32)>,
    /// Its scheduling policy, inherited from its launcher (`chrt`, `policy=`, rt-app's
    /// `policy`).
    pub policy: fairsim_balance::Policy,
    /// Its task group (`fairsim_balance::group::GroupId`; 0, the root, without
    /// groups), inherited from its launcher (`cgroup=`, rt-app's `taskgroup`).
    pub cgroup: usize,
    /// Its session's autogroup (`p->signal->autogroup->tg`; 0, the root, for
    /// `autogroup_default`), which it runs in while `kernel.sched_autogroup_enabled` is
    /// 1 and `cgroup` is the root ([`crate::autogroup`]).
    pub autogroup: usize,
}

/// A pipe or a stream socket with a bounded buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipe {
    /// Buffer capacity in bytes.
    pub capacity: u64,
    /// Bytes charged against the capacity per byte written is 1 for pipes; a socket
    /// charges each message its skb truesize instead.
    pub charge_per_msg: Option<u64>,
    /// Bytes currently charged.
    pub used: u64,
    /// Readers blocked on an empty buffer.
    pub readers: Vec<Tid>,
    /// Writers blocked on a full buffer.
    pub writers: Vec<Tid>,
    /// Sockets wake a blocked writer only once half the buffer is free
    /// (`unix_writable`); pipes as soon as the message fits.
    pub socket: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Timer {
    cpu: usize,
    task: Tid,
    soft: u64,
    /// When the timer fires if no earlier interrupt on its CPU runs it.
    fire: u64,
    armed: bool,
    gen: u64,
}

/// The emulated machine in virtual time.
pub struct World {
    /// The scheduler state.
    sched: Sched,
    /// Settings.
    config: WorldConfig,
    /// Per-CPU engine state.
    cpus: Vec<CpuRt>,
    /// Every task of every workload, forked or not.
    tasks: Vec<TaskRt>,
    /// Programs, shared by tasks.
    programs: Vec<Program>,
    /// Pipes and sockets.
    pipes: Vec<Pipe>,
    /// Per-workload runtime state (RNG, histograms).
    workloads: Vec<WorkloadRt>,
    /// Per workload, the speed its work runs at on each CPU when the machine's speed
    /// table gives its kind one (`None`: at the CPU's capacity).
    speeds: Vec<Option<Vec<u64>>>,
    /// Per workload, the memory intensity of its work (per mille).
    mem: Vec<u32>,
    /// The machine's nodes and distances, for the off-node slowdown.
    locality: crate::memory::Locality,
    /// Metrics.
    metrics: Metrics,
    /// Engine task id of each scheduler task id.
    by_sched_id: Vec<Tid>,
    queue: EventQueue,
    timers: Vec<Timer>,
    /// Each runqueue lock's latest reservation.
    rq_locks: Vec<lock_state::RqLock>,
    /// The run's noise stream.
    noise: Noise,
    /// The idle loop's states and governors.
    idle: idle_state::IdleRt,
    /// Start of the measurement window.
    window_start: u64,
    /// Each task's scheduler counters when the window opened.
    window_base: Vec<TaskMetrics>,
    /// Events at the current instant, against the bound of a world that makes progress.
    instant: progress::InstantGuard,
    /// The tracer, when the run traces.
    tracer: Option<Box<trace_state::Recorder>>,
    /// CPU frequency's timing and outputs, when the machine has cpufreq.
    cpufreq: Option<cpufreq_state::CpufreqRt>,
    now: Time,
    ended: bool,
    events: u64,
    live_tasks: usize,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("now", &self.now)
            .field("cpus", &self.cpus.len())
            .field("tasks", &self.tasks.len())
            .finish_non_exhaustive()
    }
}

/// Everything a workload generator adds to a world before it starts.
#[derive(Debug, Default)]
pub struct Blueprint {
    /// Tasks; the ones without parent are spawned at time 0.
    pub tasks: Vec<TaskRt>,
    /// Programs.
    pub programs: Vec<Program>,
    /// Pipes.
    pub pipes: Vec<Pipe>,
    /// Per-workload runtime state.
    pub workloads: Vec<WorkloadRt>,
    /// Each workload's speed on each CPU, from the machine's speed table, or `None` to
    /// run at capacity (as does a workload past the end of the list). Without a speed a
    /// CPU does `capacity_orig * freq_capacity / 1024` work units per nanosecond; a speed
    /// replaces `capacity_orig` in that product for that workload's tasks only, so the
    /// scheduler's `capacity_orig`, `cpu_capacity`, PELT's capacity invariance and misfit
    /// detection keep the capacity, as the kernel's do on a machine whose cores run some
    /// code faster than their capacity says. The workloads crate reads the table
    /// (`fairsim_workloads::speed`), whose keys name its tools.
    pub workload_speeds: Vec<Option<Vec<u64>>>,
    /// Each workload's memory intensity, per mille ([`crate::memory`]); a workload past
    /// the end of the list touches no DRAM.
    pub workload_mem: Vec<u32>,
}

impl World {
    /// A world for `machine` with its sched domains, ready to run `blueprint`.
    pub fn new(
        machine: impl Into<Arc<Machine>>,
        topo: SchedDomains,
        config: WorldConfig,
        blueprint: Blueprint,
    ) -> Result<World, EngineError> {
        let machine: Arc<Machine> = machine.into();
        let n = machine.nr_cpus();
        if n == 0 {
            return Err(EngineError::NoCpus);
        }
        for t in &blueprint.tasks {
            if let Some(mask) = &t.cpus_allowed {
                if mask.is_empty() || mask.iter().any(|c| c >= n) {
                    return Err(EngineError::BadAffinity {
                        task: t.name.clone(),
                    });
                }
            }
        }
        // The scheduler's own random state (sched_rng for NI_RANDOM) is a sub-stream of
        // the world seed, apart from the workloads' streams.
        let mut params = config.params;
        params.seed = fairsim_des::rng::SimRng::derive(config.seed, u64::MAX).next_u64();
        params.idle_scan_per_cpu = config.cost.idle_scan_per_cpu;
        let states = match (&config.idle_states, &machine.idle_states) {
            (Some(s), _) => s.clone(),
            (None, Some(spec)) => {
                fairsim_cpuidle::parse_idle_states_with(spec, n, config.cost.idle_exit).map_err(
                    |err| ConfigError::MachineIdleStates {
                        machine: machine.name.to_string(),
                        err,
                    },
                )?
            }
            (None, None) => fairsim_cpuidle::flat(config.cost.idle_exit, n),
        };
        if states.cpu_table.len() != n {
            return Err(ConfigError::IdleTableCpus {
                covers: states.cpu_table.len(),
                cpus: n,
            }
            .into());
        }
        let idle = idle_state::IdleRt::new(states, config.cpuidle.kind(), n);
        let speeds = blueprint.workload_speeds.clone();
        let locality = crate::memory::Locality::new(&machine);
        let mut sched = Sched::new(machine, topo, params);
        // Task groups exist before any task is forked into them, as a launcher's
        // cgroups exist before it starts the tool.
        config.cgroups.install(&mut sched)?;
        crate::autogroup::install(&config.cgroups, &mut sched)?;
        let cpufreq_rt = if config.governor.is_some() || !sched.machine.cpufreq.is_empty() {
            let caps: Vec<u64> = sched.rqs.iter().map(|rq| rq.capacity_orig).collect();
            let governor = config
                .governor
                .unwrap_or(fairsim_balance::cpufreq::Governor::DEFAULT);
            let cf = fairsim_balance::cpufreq::Cpufreq::new(&sched.machine, governor, &caps, 0)?;
            let rt = cpufreq_state::CpufreqRt::new(&cf, n);
            sched.install_cpufreq(cf);
            Some(rt)
        } else {
            None
        };
        sched.check_energy_aware_write()?;
        let noise = Noise::new(config.noise, config.seed);
        let cpus = (0..n).map(|_| CpuRt::default()).collect();
        let metrics = Metrics::new(n, blueprint.tasks.len());
        let instant = progress::InstantGuard::new(blueprint.tasks.len(), n);
        let mut world = World {
            sched,
            config,
            cpus,
            tasks: blueprint.tasks,
            programs: blueprint.programs,
            pipes: blueprint.pipes,
            workloads: blueprint.workloads,
            speeds,
            mem: blueprint.workload_mem,
            locality,
            metrics,
            by_sched_id: Vec::new(),
            queue: EventQueue::new(),
            timers: Vec::new(),
            rq_locks: vec![lock_state::RqLock::default(); n],
            noise,
            idle,
            window_start: 0,
            window_base: Vec::new(),
            instant,
            tracer: None,
            cpufreq: cpufreq_rt,
            now: Time::ZERO,
            ended: false,
            events: 0,
            live_tasks: 0,
        };
        world.timers = (0..world.tasks.len())
            .map(|t| Timer {
                cpu: 0,
                task: t,
                soft: 0,
                fire: 0,
                armed: false,
                gen: 0,
            })
            .collect();
        if let Some(cfg) = world.config.trace.clone() {
            world.tracer = Some(Box::new(world.new_recorder(&cfg)));
            if cfg.events {
                world.sched.migration_log = Some(Vec::new());
                if world.sched.eas.present {
                    world.sched.enable_eas_tracepoints();
                }
                if world.sched.task_groups().active() {
                    world.sched.enable_bandwidth_tracepoints();
                }
                if cfg.pelt {
                    world.sched.enable_pelt_tracepoints();
                }
            }
        }
        world.queue.push(Time(world.config.duration), Event::End);
        if world.config.warmup > 0 && world.config.warmup < world.config.duration {
            world
                .queue
                .push(Time(world.config.warmup), Event::WindowStart);
        }
        // Every CPU starts in the idle loop (its tick stopped), in the state its
        // governor picks for a CPU with nothing ahead.
        if world.config.cpuidle.kind().is_some() {
            for cpu in 0..n {
                world.cpuidle_enter(cpu, 0);
            }
        }
        let roots: Vec<Tid> = (0..world.tasks.len())
            .filter(|&t| world.tasks[t].parent.is_none())
            .collect();
        let tick = world.sched.tick_nsec;
        // A sub-stream of its own, so that other draws do not move with the launch CPU.
        let mut launch_rng = fairsim_des::rng::SimRng::derive(world.config.seed, u64::MAX - 1);
        for t in roots {
            let cpu = match world.config.launch {
                Launch::Cpu(c) => c.min(n - 1),
                Launch::Random => (launch_rng.next_u64() % n as u64) as usize,
            };
            let at = world.noise.phase(tick);
            if at == 0 {
                world.fork_task(t, cpu, 0);
            } else {
                world.queue.push(Time(at), Event::Launch { task: t, cpu });
            }
        }
        // cpu.max writes at setup started their groups' period timers.
        if world.sched.task_groups().active() {
            world.arm_bandwidth_timers();
        }
        Ok(world)
    }

    /// The current virtual time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Pending events in the queue (stale ones included).
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The scheduler's state.
    pub fn sched(&self) -> &Sched {
        &self.sched
    }

    /// The run's settings.
    pub fn config(&self) -> &WorldConfig {
        &self.config
    }

    /// Per-CPU engine state.
    pub fn cpus(&self) -> &[CpuRt] {
        &self.cpus
    }

    /// Every task of every workload, forked or not, by engine id.
    pub fn tasks(&self) -> &[TaskRt] {
        &self.tasks
    }

    /// The programs the tasks run.
    pub fn programs(&self) -> &[Program] {
        &self.programs
    }

    /// Pipes and sockets' byte buffers.
    pub fn pipes(&self) -> &[Pipe] {
        &self.pipes
    }

    /// Per-workload runtime state: random streams, histograms, sockets and tool models.
    pub fn workloads(&self) -> &[WorkloadRt] {
        &self.workloads
    }

    /// The run's metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The engine id of each scheduler task id.
    pub fn by_sched_id(&self) -> &[Tid] {
        &self.by_sched_id
    }

    /// Whether the run has ended (duration reached or every task exited).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Holds the event queue of a world that stops making progress to `bytes` of memory
    /// (the run's budget minus its estimate, as the workload crate's `run::prepare` computes it), so
    /// that such a world fails inside its budget; never below the guard's floor.
    pub fn cap_queue_memory(&mut self, bytes: u64) {
        self.instant.cap_queue_bytes(bytes);
        if let Some(tr) = self.tracer.as_deref_mut() {
            tr.cap_memory(bytes);
        }
    }

    /// Runs to the end. `progress` is called every few thousand events with the current
    /// and the final virtual time.
    pub fn run(&mut self, progress: &mut dyn FnMut(u64, u64)) -> Result<(), EngineError> {
        while !self.ended {
            self.step_batch(4096)?;
            if self.events % 4096 == 0 {
                progress(self.now.0, self.config.duration);
            }
        }
        progress(self.now.0, self.config.duration);
        Ok(())
    }

    /// Processes events until the count of events processed is a multiple of `every`
    /// (at least one event) or the run is over, exactly as that many calls of
    /// [`World::step`] would. A caller that reports progress every few thousand events
    /// calls this instead of `step`: the loop inside keeps the step inlined, which saves
    /// a call and the return of a `Result` per event.
    pub fn step_batch(&mut self, every: u64) -> Result<(), EngineError> {
        let every = every.max(1);
        while self.step_inline()? {
            if self.events % every == 0 {
                break;
            }
        }
        Ok(())
    }

    /// Processes one event. Returns false when the run is over.
    pub fn step(&mut self) -> Result<bool, EngineError> {
        self.step_inline()
    }

    /// [`World::step`]'s body, inlined into [`World::step_batch`]'s loop.
    #[inline(always)]
    fn step_inline(&mut self) -> Result<bool, EngineError> {
        if self.ended {
            return Ok(false);
        }
        let Some((t, ev)) = self.queue.pop() else {
            self.ended = true;
            return Ok(false);
        };
        if t < self.now {
            return Err(InvariantError::TimeBackwards {
                next: t,
                now: self.now,
            }
            .into());
        }
        self.instant
            .observe(t, self.queue.len(), &self.config.cost)?;
        self.now = t;
        self.events += 1;
        let now = t.0;
        match ev {
            Event::End => {
                self.ended = true;
                return Ok(false);
            }
            Event::Continue { cpu, gen } => {
                if self.cpus[cpu].gen == gen {
                    self.cpus[cpu].continue_pending = false;
                    self.exec(cpu, now);
                }
            }
            Event::SegmentEnd { cpu, gen } => {
                if self.cpus[cpu].gen == gen {
                    self.segment_end(cpu, now);
                }
            }
            Event::Tick { cpu, gen } => {
                if self.cpus[cpu].tick_gen == gen {
                    self.tick(cpu, now);
                }
            }
            Event::TimerExpire { timer, gen } => {
                let tm = self.timers[timer];
                if tm.armed && tm.gen == gen {
                    if self.cpus[tm.cpu].newidle.is_some() {
                        // Interrupts are off inside schedule(): taken once it is done.
                        let at = now.max(self.cpus[tm.cpu].kernel_until).max(now + 1);
                        self.queue.push(Time(at), Event::TimerExpire { timer, gen });
                    } else {
                        self.timer_interrupt(tm.cpu, now);
                    }
                }
            }
            Event::TimerHandler { cpu } => {
                if self.cpus[cpu].newidle.is_some() {
                    let at = now.max(self.cpus[cpu].kernel_until).max(now + 1);
                    self.queue.push(Time(at), Event::TimerHandler { cpu });
                } else {
                    self.timer_handler(cpu, now);
                }
            }
            Event::WakeArrive {
                task,
                wake_flags,
                via_wakelist,
                from_cpu,
            } => self.wake_arrive(task, wake_flags, via_wakelist, from_cpu, now),
            Event::NewTaskArrive { task, from_cpu } => self.new_task_arrive(task, from_cpu, now),
            Event::NewidleStep { cpu, gen } => {
                if self.cpus[cpu].gen == gen {
                    self.newidle_step(cpu, now);
                }
            }
            Event::NohzKick { cpu } => self.nohz_kick(cpu, now),
            Event::Launch { task, cpu } => self.fork_task(task, cpu, now),
            Event::WindowStart => self.open_window(now),
            Event::IdleReenter { cpu, gen } => self.idle_reenter(cpu, gen, now),
            Event::PollLimit { cpu, gen } => self.poll_limit(cpu, gen, now),
            Event::ActiveBalance { cpu } => self.active_balance(cpu, now),
            Event::CpufreqWork { policy } => self.cpufreq_work(policy, now),
            Event::CpufreqTransitionEnd { policy, khz } => {
                self.cpufreq_transition_end(policy, khz, now)
            }
            Event::BandwidthTimer { group, slack, at } => {
                self.bandwidth_timer(group, slack, at, now)
            }
            Event::Resched { cpu } => {
                if self.sched.rqs[cpu].need_resched {
                    self.charge(
                        cpu,
                        now,
                        self.config.cost.ipi_handle,
                        Site::fixed(Ctx::ReschedIpi),
                    );
                    // __schedule() runs on the interrupt's exit, after the handler: its
                    // clock read is the handler's end, as after the tick.
                    let at = now.max(self.cpus[cpu].kernel_until);
                    self.schedule_cpu(cpu, at);
                }
            }
        }
        if self.cpufreq.is_some() {
            self.cpufreq_drain(now);
        }
        if self.sched.task_groups().active() {
            self.arm_bandwidth_timers();
        }
        if self.tracer.is_some() {
            self.trace_migrations(now);
            self.trace_eas(now);
            self.trace_bandwidth(now);
            self.trace_pelt(now);
            if let Some(tr) = self.tracer.as_deref() {
                if let Some(at) = tr.overflow_at() {
                    return Err(EngineError::TraceTooBig {
                        records: tr.len() as u64,
                        at: Time(at),
                    });
                }
            }
        }
        if self.config.check_invariants {
            self.check_invariants()?;
        }
        if self.live_tasks == 0 && self.all_forked() {
            self.ended = true;
        }
        Ok(!self.ended)
    }

    fn all_forked(&self) -> bool {
        !self.tasks.is_empty()
            && self
                .tasks
                .iter()
                .all(|t| t.state != RtState::Unborn && t.state != RtState::Waking)
    }

    /// Per-task metrics, with the scheduler's `sched_info` and migrations folded in.
    pub fn task_metrics(&self, t: Tid) -> TaskMetrics {
        let mut m = self.metrics.tasks[t].clone();
        if let Some(s) = self.tasks[t].sched_id {
            let st = &self.sched.tasks[s];
            let base = self.window_base.get(t).cloned().unwrap_or_default();
            m.run_delay_ns = st.sched_info.run_delay - base.run_delay_ns;
            m.pcount = st.sched_info.pcount - base.pcount;
            m.migrations = st.se.nr_migrations - base.migrations;
            m.runtime_ns = st.se.sum_exec_runtime - base.runtime_ns;
        }
        m
    }

    /// Opens the measurement window at `now`: the metrics, the schedstat counters and the
    /// workloads' histograms start again from zero, and the scheduler's per-task counters
    /// are remembered so that the window reports their growth. Task exits keep their
    /// times (a finite workload's own elapsed time is its tool's, not the window's).
    fn open_window(&mut self, now: u64) {
        // Work in progress when the window opens (a segment, a newidle balance) is
        // counted from here on: its earlier part stays in the warm-up.
        for cpu in 0..self.cpus.len() {
            self.advance_seg(cpu, now);
            if let Some((nb, prev, started)) = self.cpus[cpu].newidle.take() {
                self.cpus[cpu].newidle = Some((nb, prev, started.max(now)));
            }
        }
        let exited: Vec<Option<u64>> = self.metrics.tasks.iter().map(|m| m.exited_at).collect();
        self.metrics = Metrics::new(self.cpus.len(), self.tasks.len());
        for (m, e) in self.metrics.tasks.iter_mut().zip(exited) {
            m.exited_at = e;
        }
        self.window_base = (0..self.tasks.len())
            .map(|t| match self.tasks[t].sched_id {
                Some(s) => {
                    let st = &self.sched.tasks[s];
                    TaskMetrics {
                        run_delay_ns: st.sched_info.run_delay,
                        pcount: st.sched_info.pcount,
                        migrations: st.se.nr_migrations,
                        runtime_ns: st.se.sum_exec_runtime,
                        ..TaskMetrics::default()
                    }
                }
                None => TaskMetrics::default(),
            })
            .collect();
        self.sched.reset_schedstat();
        self.sched.reset_group_bandwidth_stats();
        self.cpufreq_open_window(now);
        self.trace_window_reset();
        self.open_idle_window(now);
        for w in &mut self.workloads {
            for h in &mut w.hists {
                *h = crate::plat::PlatStats::default();
            }
        }
        self.window_start = now;
    }

    /// Each workload's memory intensity, per mille ([`crate::memory`]).
    pub fn workload_mem(&self) -> &[u32] {
        &self.mem
    }

    /// The machine's nodes as the memory model reads them.
    pub fn locality(&self) -> &crate::memory::Locality {
        &self.locality
    }

    /// Start of the measurement window (0 without `--warmup`).
    pub fn window_start(&self) -> u64 {
        self.window_start
    }

    /// Length of the measurement window so far: from its start to now.
    pub fn window_ns(&self) -> u64 {
        self.now.0 - self.window_start
    }

    /// The run's profile over the window: kernel time by site, task time, idle time,
    /// for `cpu` or (with `None`) the whole machine.
    pub fn profile(&self, cpu: Option<usize>) -> crate::profile::Profile {
        let elapsed = self.window_ns();
        let mut p = crate::profile::Profile::new();
        for (c, m) in self.metrics.cpus.iter().enumerate() {
            if cpu.is_some_and(|x| x != c) {
                continue;
            }
            let busy = m.task_ns + m.overhead_total();
            p.add(&m.site_ns, m.task_ns, elapsed.saturating_sub(busy));
        }
        p
    }

    /// Per-CPU metrics at the end of the run.
    pub fn cpu_metrics(&self, cpu: usize) -> CpuMetrics {
        self.metrics.cpus[cpu].clone()
    }

    /// Tasks that were forked and have not exited.
    pub fn live_tasks(&self) -> usize {
        self.live_tasks
    }
}
