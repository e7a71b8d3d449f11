//! A finished run as data: what its outputs and its workloads' reports read.
//!
//! [`World::finish`] turns a world that has run into an [`Outcome`]. The outcome holds the
//! scheduler's final state (its schedstat counters, domains, groups and clamps), the
//! world's metrics and per-task counters, the profile's sites, the cpuidle and cpufreq
//! tallies, the workloads' own state and the trace's records, and offers them read-only;
//! it cannot be stepped or run, and the event queue's memory is released before the
//! outputs are rendered. Outputs and reports are functions of it.

use fairsim_balance::Sched;
use fairsim_cpuidle::{IdleStates, StateUsage};
use fairsim_trace::{NewidleSeries, Trace};

use crate::error::EngineError;
use crate::event::{EventQueue, Tid};
use crate::metrics::{CpuMetrics, Metrics, TaskMetrics};
use crate::program::Program;
use crate::world::{CpuRt, CpufreqRt, Pipe, TaskRt, WorkloadRt, World, WorldConfig};
use fairsim_des::time::Time;

/// A finished run: the state a world ended in, read-only.
#[derive(Debug)]
pub struct Outcome {
    world: World,
}

impl World {
    /// Ends the world's life as a simulation: the run's state becomes an [`Outcome`]
    /// and the event queue (what would have happened next) is dropped.
    pub fn finish(mut self) -> Outcome {
        self.queue = EventQueue::new();
        Outcome { world: self }
    }
}

impl Outcome {
    /// When the run stopped.
    pub fn now(&self) -> Time {
        self.world.now()
    }

    /// Events the run processed.
    pub fn events(&self) -> u64 {
        self.world.events()
    }

    /// Whether the run ended by itself or at its duration (rather than being stopped).
    pub fn ended(&self) -> bool {
        self.world.ended()
    }

    /// The scheduler's final state.
    pub fn sched(&self) -> &Sched {
        self.world.sched()
    }

    /// The run's settings.
    pub fn config(&self) -> &WorldConfig {
        self.world.config()
    }

    /// Per-CPU engine state at the end.
    pub fn cpus(&self) -> &[CpuRt] {
        self.world.cpus()
    }

    /// Every task of every workload, forked or not, by engine id.
    pub fn tasks(&self) -> &[TaskRt] {
        self.world.tasks()
    }

    /// The programs the tasks ran.
    pub fn programs(&self) -> &[Program] {
        self.world.programs()
    }

    /// Pipes and sockets' byte buffers at the end.
    pub fn pipes(&self) -> &[Pipe] {
        self.world.pipes()
    }

    /// Per-workload state: histograms, sockets and the tools' models.
    pub fn workloads(&self) -> &[WorkloadRt] {
        self.world.workloads()
    }

    /// The run's metrics.
    pub fn metrics(&self) -> &Metrics {
        self.world.metrics()
    }

    /// The engine id of each scheduler task id.
    pub fn by_sched_id(&self) -> &[Tid] {
        self.world.by_sched_id()
    }

    /// Task `t`'s counters over the measurement window ([`World::task_metrics`]).
    pub fn task_metrics(&self, t: Tid) -> TaskMetrics {
        self.world.task_metrics(t)
    }

    /// CPU `cpu`'s counters over the measurement window.
    pub fn cpu_metrics(&self, cpu: usize) -> CpuMetrics {
        self.world.cpu_metrics(cpu)
    }

    /// Each workload's memory intensity, per mille.
    pub fn workload_mem(&self) -> &[u32] {
        self.world.workload_mem()
    }

    /// The machine's nodes and distances, as the work rates read them.
    pub fn locality(&self) -> &crate::memory::Locality {
        self.world.locality()
    }

    /// When the measurement window opened.
    pub fn window_start(&self) -> u64 {
        self.world.window_start()
    }

    /// The measurement window's length.
    pub fn window_ns(&self) -> u64 {
        self.world.window_ns()
    }

    /// The perf-style profile of the window, of one CPU or of all.
    pub fn profile(&self, cpu: Option<usize>) -> crate::profile::Profile {
        self.world.profile(cpu)
    }

    /// Tasks that had not exited when the run stopped.
    pub fn live_tasks(&self) -> usize {
        self.world.live_tasks()
    }

    /// The engine's cpufreq tallies, when the machine has cpufreq.
    pub fn cpufreq_rt(&self) -> Option<&CpufreqRt> {
        self.world.cpufreq_rt()
    }

    /// `cpu`'s busy ns in the window at each OPP of its policy.
    pub fn cpufreq_busy_by_opp(&self, cpu: usize) -> Vec<u64> {
        self.world.cpufreq_busy_by_opp(cpu)
    }

    /// Per CPU and idle state, the window's time and entries.
    pub fn cpuidle_usage(&self) -> Vec<Vec<StateUsage>> {
        self.world.cpuidle_usage()
    }

    /// The machine's idle states.
    pub fn idle_states(&self) -> &IdleStates {
        self.world.idle_states()
    }

    /// The per-level newidle series, when the run kept one.
    pub fn newidle_series(&self) -> Option<NewidleSeries> {
        self.world.newidle_series()
    }

    /// Takes the trace's records out ([`World::take_trace`]); a second call returns an
    /// empty trace.
    pub fn take_trace(&mut self) -> Option<Trace> {
        self.world.take_trace()
    }

    /// The scheduler's and the engine's invariants at the end of the run.
    pub fn check_invariants(&self) -> Result<(), EngineError> {
        self.world.check_invariants()
    }
}
