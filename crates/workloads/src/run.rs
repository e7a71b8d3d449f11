//! One run from a specification: build the world, run it, collect the reports.

use std::collections::BTreeSet;
use std::sync::Arc;

use fairsim_topology::{estimate_build_memory, partition_sched_domains, CpuMask, Machine};

use crate::{Workload, WorkloadReport, WorkloadSpec};
use fairsim_des::time::SEC;
use fairsim_engine::cgroup::Cgroups;
use fairsim_engine::cost::CostTableName;
use fairsim_engine::error::{ConfigError, EngineError};
use fairsim_engine::world::{guard_memory, Blueprint, Outcome, World, WorldConfig};

/// Default memory budget for a run's state: 4 GiB.
pub const DEFAULT_MEMORY_BUDGET: u64 = 4 << 30;

/// Run length when neither `--duration` nor a workload sets one and some workload never
/// finishes by itself (nanosleep): 5 s, the interval of seed 000's schedstat deltas.
pub const DEFAULT_ENDLESS_DURATION: u64 = 5 * SEC;

/// Cap on the run length of workloads that finish by themselves (hackbench, sysbench).
pub const DEFAULT_FINITE_CAP: u64 = 3_600 * SEC;

/// Estimated bytes of state for `tasks` tasks on `cpus` CPUs, on the high side.
///
/// Per task: the engine's task (~300 B with its name and loop stack), the scheduler's
/// task (~400 B plus an affinity mask of `cpus / 8` bytes), metrics and timer slots
/// (~150 B). Per CPU: runqueue, engine CPU, idle device and metrics (~4 KiB) plus the
/// per-CPU masks the balancer and the machine keep (eight of `cpus / 8` bytes). The sum
/// is doubled for allocator slack and the event heap. [`estimate_run_memory`] adds the
/// sched domains (`estimate_build_memory`) and the progress guard's allowance;
/// [`estimate_json_memory`] is what rendering the JSON results adds.
pub fn estimate_memory(tasks: u64, cpus: usize) -> u64 {
    let mask = (cpus as u64).div_ceil(64) * 8;
    let per_task = 850 + mask;
    let per_cpu = 4 * 1024 + 8 * mask;
    2 * (tasks * per_task + cpus as u64 * per_cpu)
}

/// Estimated peak bytes of a run's JSON results as they are rendered: the document is
/// built as a tree before it is written (about ten times the bytes of its text), and each
/// CPU's entry carries its counters, its idle states and one schedstat block per domain
/// level. Measured on this build host: 76 KiB per CPU on spr-2s56c2t (three levels) and
/// about 23 KiB per CPU and level on a 64-node machine (51 levels) at the peak of
/// `run --json`; the bound takes 16 KiB per CPU plus 32 KiB per CPU and level, and 2 KiB
/// per task. The summary text is small beside it (a few KiB) and is not counted.
pub fn estimate_output_memory(tasks: u64, cpus: usize, levels: u64) -> u64 {
    cpus as u64 * (16 * 1024 + 32 * 1024 * levels) + tasks * 2 * 1024
}

/// [`estimate_output_memory`] for the run `spec` describes, with the cpufreq tables and
/// each rt-app workload's activation lists: what rendering its JSON adds to
/// [`estimate_run_memory`]. Callers that render it (`run --json`) check the sum.
pub fn estimate_json_memory(spec: &RunSpec) -> u64 {
    let ncpus = spec.machine.nr_cpus();
    let tasks: u64 = spec.workloads.iter().map(|w| w.nr_tasks(ncpus)).sum();
    estimate_output_memory(tasks, ncpus, max_levels(&spec.machine))
        .saturating_add(estimate_cpufreq_json_memory(&spec.machine))
        .saturating_add(rtapp_workloads(spec) * RTAPP_ACTIVATIONS_JSON_BYTES)
}

/// Bytes of the JSON that rt-app's activation lists render to, per workload, at their
/// bound ([`crate::JSON_TOTAL`] entries of about 200 bytes), doubled for
/// serde_json's values.
const RTAPP_ACTIVATIONS_JSON_BYTES: u64 = 2 * 200 * crate::JSON_TOTAL as u64;

/// How many of `spec`'s workloads are rt-app files.
fn rtapp_workloads(spec: &RunSpec) -> u64 {
    spec.workloads
        .iter()
        .filter(|w| matches!(w.workload, crate::Workload::Rtapp(_)))
        .count() as u64
}

/// Bytes of the cpufreq state of a run on `m`, on the high side; 0 without cpufreq.
///
/// Per policy and OPP: the frequency table, its inefficiency flag, the energy model's
/// state (about 40 bytes), the stats' time (8 bytes) and a row of the transition table
/// (8 bytes per OPP); per CPU, schedutil's state and the busy time at each OPP of its
/// policy (8 bytes each); and the frequency timeline at its bound,
/// [`fairsim_engine::world::MAX_TIMELINE`] entries of [`fairsim_engine::world::TIMELINE_ENTRY_BYTES`]. The
/// sum is doubled for allocator slack.
pub fn estimate_cpufreq_memory(m: &Machine) -> u64 {
    if m.cpufreq.is_empty() {
        return 0;
    }
    let tables: u64 = m
        .cpufreq
        .iter()
        .map(|d| {
            let opps = d.opps.len() as u64;
            let cpus = d.cpus.weight() as u64;
            512 + opps * (64 + 8 * opps) + cpus * (128 + 8 * opps)
        })
        .sum();
    let timeline =
        fairsim_engine::world::MAX_TIMELINE as u64 * fairsim_engine::world::TIMELINE_ENTRY_BYTES;
    2 * (tables + timeline)
}

/// What rendering the `cpufreq` object of the JSON adds, 0 without cpufreq: the timeline
/// at its bound, each entry a three-number array of about 30 bytes of text, built as a
/// tree of about 256 bytes before it is written (serde_json's `Value`s), and 1 KiB per
/// OPP of every policy and CPU for the tables, stats and busy times.
pub fn estimate_cpufreq_json_memory(m: &Machine) -> u64 {
    if m.cpufreq.is_empty() {
        return 0;
    }
    let opps: u64 = m
        .cpufreq
        .iter()
        .map(|d| d.opps.len() as u64 * (1 + d.cpus.weight() as u64 + d.opps.len() as u64))
        .sum();
    fairsim_engine::world::MAX_TIMELINE as u64 * 256 + opps * 1024
}

/// The most domain levels a CPU of `m` keeps: the architecture's (SMT, CLS, MC, PKG) and
/// NODE, plus the NUMA levels, one per distinct distance (`sched_init_numa`) but no more
/// than there are nodes, since `cpu_attach_domain` removes a level whose span does not
/// grow and each NUMA level that stays adds at least one node.
fn max_levels(m: &Machine) -> u64 {
    let distances: BTreeSet<u32> = m.distance.iter().flatten().copied().collect();
    5 + (distances.len() as u64).min(m.node_cpus.len() as u64)
}

/// Estimated peak bytes of the run `spec` describes, up to its text summary: its state,
/// what the progress guard lets a stuck world take before it stops it, the
/// sched-domain build, and each rt-app workload's activation log at its bound
/// ([`crate::ActivationLog::bound_bytes`]). [`prepare`] refuses a run above its budget; rendering the JSON
/// results adds [`estimate_json_memory`].
pub fn estimate_run_memory(spec: &RunSpec) -> u64 {
    let ncpus = spec.machine.nr_cpus();
    let tasks: u64 = spec.workloads.iter().map(|w| w.nr_tasks(ncpus)).sum();
    // A run whose groups cannot be resolved is refused before it is built; its declared
    // groups stand for the estimate until then.
    let groups = resolve_cgroups(spec).map_or(spec.config.cgroups.len(), |c| c.len());
    estimate_memory(tasks, ncpus)
        .saturating_add(fairsim_engine::cgroup::estimate_memory(groups, ncpus))
        .saturating_add(guard_memory(tasks as usize, ncpus))
        .saturating_add(estimate_build_memory(&spec.machine, spec.build))
        .saturating_add(estimate_cpufreq_memory(&spec.machine))
        .saturating_add(
            rtapp_workloads(spec) * crate::ActivationLog::bound_bytes(spec.config.rtapp_log),
        )
}

/// Everything that defines a run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The machine, shared with the worlds made from this run (`prepare` hands each a
    /// reference, not a copy: at 4096 CPUs the machine's per-CPU sibling masks are 6 MiB).
    pub machine: Arc<Machine>,
    /// Sched-domain build options.
    pub build: fairsim_topology::BuildOptions,
    /// Exclusive cpuset partitions (cgroup v2 `cpuset.cpus.partition = root`), each its
    /// own root domain; the CPUs none takes form the top cpuset's. Empty: one root domain
    /// spanning the machine. Checked by `fairsim_topology::check_cpusets`.
    pub cpusets: Vec<CpuMask>,
    /// Workloads, run side by side.
    pub workloads: Vec<WorkloadSpec>,
    /// World settings; `config.duration` is used as given.
    pub config: WorldConfig,
    /// Largest estimated state accepted, in bytes.
    pub memory_budget: u64,
}

/// The run length for `workloads` when the user gave none: the tool's own (`schbench -r`,
/// default 30 s as schbench's), else [`DEFAULT_ENDLESS_DURATION`] when a workload never
/// ends, else [`DEFAULT_FINITE_CAP`].
pub fn default_duration(workloads: &[WorkloadSpec]) -> u64 {
    if let Some(d) = workloads
        .iter()
        .filter_map(WorkloadSpec::own_duration)
        .max()
    {
        return d;
    }
    if workloads
        .iter()
        .any(|w| matches!(w.workload, Workload::Schbench(_)))
    {
        return 30 * SEC;
    }
    let endless = |w: &WorkloadSpec| match &w.workload {
        Workload::Nanosleep(_) => true,
        Workload::Rtapp(r) => r.endless(),
        Workload::Cyclictest(c) => c.endless(),
        _ => false,
    };
    if workloads.iter().any(endless) {
        return DEFAULT_ENDLESS_DURATION;
    }
    DEFAULT_FINITE_CAP
}

/// Whether a run of `workloads` lasts its whole `duration`: some workload runs until the
/// end (nanosleep, an endless rt-app or cyclictest, schbench without a length of its own)
/// or for at least that long by its own length (schbench's `-r`, sysbench's `--time`,
/// cyclictest's `-D`, rt-app's `global.duration`). Otherwise every workload ends by
/// itself (hackbench, netperf, tbench, ...) and the duration is only a cap, which a
/// progress estimate must not read as the run's length.
pub fn lasts_its_duration(workloads: &[WorkloadSpec], duration: u64) -> bool {
    workloads.iter().any(|w| match &w.workload {
        _ if w.own_duration().is_some_and(|d| d >= duration) => true,
        Workload::Nanosleep(_) => true,
        Workload::Rtapp(r) => r.endless() && w.own_duration().is_none(),
        Workload::Cyclictest(c) => c.endless() && w.own_duration().is_none(),
        Workload::Schbench(_) => w.own_duration().is_none(),
        _ => false,
    })
}

/// Checks the memory budget and builds the world.
///
/// The budget covers [`estimate_run_memory`]: the run's state, building the sched domains
/// (one NUMA level per distinct distance, their domains and groups) and the progress
/// guard's allowance, estimated before anything is allocated. What the budget leaves
/// above that bounds the event queue of a world that stops making progress.
pub fn prepare(spec: &RunSpec) -> Result<World, EngineError> {
    if spec.workloads.is_empty() {
        return Err(EngineError::NoWorkload);
    }
    let ncpus = spec.machine.nr_cpus();
    let tasks: u64 = spec.workloads.iter().map(|w| w.nr_tasks(ncpus)).sum();
    let need = estimate_run_memory(spec);
    if need > spec.memory_budget {
        // The machine is to blame when it is too big without a single task: its domains
        // and its per-CPU state exceed the budget by themselves.
        let machine_only = estimate_memory(0, ncpus)
            .saturating_add(estimate_build_memory(&spec.machine, spec.build));
        let what = if machine_only > spec.memory_budget {
            "--machine"
        } else {
            "--workload"
        };
        return Err(EngineError::TooBig {
            what: what.into(),
            tasks,
            cpus: ncpus,
            need_mib: need >> 20,
            budget_mib: spec.memory_budget >> 20,
        });
    }
    // The whole machine's estimate bounds a partitioned build too: every domain of a
    // partition spans no more than the same level's domain on the whole machine.
    let cgroups = resolve_cgroups(spec)?;
    let cpusets = cgroups.cpusets(ncpus, &spec.cpusets)?;
    let topo =
        partition_sched_domains(&spec.machine, spec.build, &cpusets.partitions).map_err(|e| {
            EngineError::Invalid {
                field: "machine".into(),
                got: spec.machine.name.clone(),
                allowed: e.to_string(),
            }
        })?;
    for w in &spec.workloads {
        w.check(ncpus)?;
    }
    check_machine(&spec.machine, &format!("machine {}", spec.machine.name))?;
    let kernel = spec.config.params.features.kernel();
    let mut bp = Blueprint::default();
    for (i, w) in spec.workloads.iter().enumerate() {
        w.build(i, spec.config.seed, &mut bp, ncpus);
        if !cgroups.is_empty() {
            let (a, b) = bp.workloads[i].tasks;
            w.place_in_cgroups(&cgroups, i, &mut bp.tasks[a..b]);
        }
        if cgroups.has_cpusets() {
            let (a, b) = bp.workloads[i].tasks;
            w.restrict_to_cpusets(&cpusets, &mut bp.tasks[a..b])?;
        }
    }
    if !kernel.has_uclamp() && bp.tasks.iter().any(|t| t.uclamp.is_some()) {
        return Err(ConfigError::NoUclamp {
            release: kernel.release(),
        }
        .into());
    }
    if kernel != fairsim_balance::Kernel::V6_12
        && bp
            .tasks
            .iter()
            .any(|t| t.policy != fairsim_balance::Policy::Normal)
    {
        return Err(ConfigError::PolicyKernel {
            release: kernel.release(),
        }
        .into());
    }
    if spec.config.rtapp_log {
        for w in &mut bp.workloads {
            if let Some(p) = w.model_mut::<crate::Periodic>() {
                let threads = p.log.threads.len();
                if threads > 0 {
                    p.log = crate::ActivationLog::new(threads, true);
                }
            }
        }
    }
    bp.workload_speeds = spec
        .workloads
        .iter()
        .map(|w| crate::speed::speeds_of(&spec.machine, w.name()))
        .collect();
    bp.workload_mem = spec
        .workloads
        .iter()
        .map(WorkloadSpec::mem_intensity)
        .collect();
    let config = WorldConfig {
        cgroups,
        ..spec.config.clone()
    };
    let mut world = World::new(Arc::clone(&spec.machine), topo, config, bp)?;
    world.cap_queue_memory(spec.memory_budget - need);
    Ok(world)
}

/// The task groups of the run `spec` describes: the declared ones and those its rt-app
/// files create, once its kernel is known to model them and every workload's `cgroup=`
/// names a declared group ([`Cgroups::resolve`]), then with
/// `kernel.sched_autogroup_enabled=1` one autogroup per workload, its session
/// ([`fairsim_engine::autogroup::with_autogroups`]). `prepare` creates them; the command line
/// calls it to refuse a bad run before anything is built.
pub fn resolve_cgroups(spec: &RunSpec) -> Result<Cgroups, EngineError> {
    let groups = resolve_task_groups(spec)?;
    // The groups' cpusets on this machine, checked with `--cpuset`'s partitions.
    groups.cpusets(spec.machine.nr_cpus(), &spec.cpusets)?;
    Ok(groups)
}

/// The exclusive partitions of the run `spec` made as `w`: `--cpuset`'s, then those of
/// the groups with `cpuset.cpus.partition=root` ([`Cgroups::cpusets`]).
pub fn partitions(spec: &RunSpec, w: &Outcome) -> Vec<CpuMask> {
    if !w.config().cgroups.has_cpusets() {
        return spec.cpusets.clone();
    }
    w.config()
        .cgroups
        .cpusets(spec.machine.nr_cpus(), &spec.cpusets)
        .map_or_else(|_| spec.cpusets.clone(), |p| p.partitions)
}

/// [`resolve_cgroups`] without the cpuset checks, which need the machine's CPUs.
fn resolve_task_groups(spec: &RunSpec) -> Result<Cgroups, EngineError> {
    let joins: Vec<_> = spec
        .workloads
        .iter()
        .flat_map(WorkloadSpec::cgroup_joins)
        .collect();
    let kernel = spec.config.params.features.kernel();
    let groups = spec.config.cgroups.resolve(&joins, kernel)?;
    if spec.config.params.tunables.autogroup_enabled() {
        fairsim_engine::autogroup::with_autogroups(groups, spec.workloads.len(), kernel)
    } else {
        Ok(groups)
    }
}

/// Checks what a machine names for the engine to resolve: its cost table
/// ([`CostTableName::of_machine`]) and its speed table's workload kinds
/// ([`crate::speed::check_speed`]); errors name the field after `source`, where the
/// machine came from (`--machine m.toml`). `prepare` calls it, and so does the command
/// line as soon as it has loaded a machine, so that a machine file naming a table or a
/// kind that does not exist is refused before anything runs.
pub fn check_machine(m: &Machine, source: &str) -> Result<(), EngineError> {
    CostTableName::of_machine(m, source)?;
    crate::speed::check_speed(m, source)
}

/// A finished run: its outcome as data and one report per workload.
#[derive(Debug)]
pub struct RunResult {
    /// The state the run ended in ([`fairsim_engine::Outcome`]), read-only.
    pub outcome: Outcome,
    /// One report per workload.
    pub reports: Vec<WorkloadReport>,
}

impl RunResult {
    /// The result of `spec` from its world at the end: the world finished into its
    /// outcome, and one report per workload read from it. For callers that step the
    /// world themselves ([`prepare`], then [`World::step`]).
    pub fn from_world(spec: &RunSpec, world: World) -> RunResult {
        let outcome = world.finish();
        let reports = spec
            .workloads
            .iter()
            .enumerate()
            .map(|(i, w)| w.report(i, &outcome))
            .collect();
        RunResult { outcome, reports }
    }
}

/// Builds and runs `spec`; `progress` sees (now, end) every few thousand events.
pub fn run(spec: &RunSpec, progress: &mut dyn FnMut(u64, u64)) -> Result<RunResult, EngineError> {
    let mut world = prepare(spec)?;
    world.run(progress)?;
    Ok(RunResult::from_world(spec, world))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_estimate_scales_and_fits_the_target() {
        // The issue's target: 4096 CPUs and 65536 tasks within 4 GiB.
        assert!(estimate_memory(65_536, 4096) < DEFAULT_MEMORY_BUDGET);
        assert!(estimate_memory(10_000_000, 224) > DEFAULT_MEMORY_BUDGET);
    }

    #[test]
    fn many_numa_distances_count_against_the_budget() {
        // 2048 CPUs in 64 nodes with 245 distinct remote distances: the run's own
        // estimate is under 128 MiB, building the sched domains takes about 600 MiB.
        let nodes = 64;
        let rows: Vec<String> = (0..nodes)
            .map(|i: usize| {
                let row: Vec<String> = (0..nodes)
                    .map(|j: usize| {
                        let d = if i == j {
                            10
                        } else {
                            11 + ((i + j) * 7 + i.abs_diff(j) * 13) % 245
                        };
                        d.to_string()
                    })
                    .collect();
                row.join(",")
            })
            .collect();
        let mut o = fairsim_topology::source::SpecOptions::new(
            "sockets=64,cores=16,threads=2",
            fairsim_topology::Arch::X86,
        );
        o.numa_distance = Some(rows.join(";"));
        let machine = fairsim_topology::source::parse_spec(&o).unwrap();
        assert!(estimate_memory(2048, 2048) < 128 << 20);
        let spec = RunSpec {
            cpusets: Vec::new(),
            machine: machine.into(),
            build: fairsim_topology::BuildOptions::default(),
            workloads: vec![WorkloadSpec::parse("nanosleep").unwrap()],
            config: WorldConfig::default(),
            memory_budget: 512 << 20,
        };
        match prepare(&spec) {
            Err(EngineError::TooBig { what, need_mib, .. }) => {
                assert_eq!(what, "--machine");
                assert!(need_mib > 512, "{need_mib}");
            }
            Err(other) => panic!("refused for another reason: {other}"),
            Ok(_) => panic!("a build estimated above the budget was accepted"),
        }
    }

    /// Issue 50 row 10: a run whose workloads all end by themselves has a duration that
    /// is only a cap, and progress gives no estimate from it.
    #[test]
    fn a_run_lasts_its_duration_only_if_a_workload_runs_that_long() {
        let w = |s: &str| WorkloadSpec::parse(s).unwrap();
        assert!(!lasts_its_duration(&[w("hackbench")], DEFAULT_FINITE_CAP));
        assert!(!lasts_its_duration(&[w("netperf")], DEFAULT_FINITE_CAP));
        assert!(lasts_its_duration(&[w("hackbench"), w("nanosleep")], SEC));
        assert!(lasts_its_duration(&[w("schbench:r=2")], 2 * SEC));
        assert!(!lasts_its_duration(&[w("schbench:r=2")], 3 * SEC));
        assert!(lasts_its_duration(&[w("schbench")], 3 * SEC));
    }

    #[test]
    fn default_durations() {
        let s = WorkloadSpec::parse("schbench:r=2").unwrap();
        assert_eq!(default_duration(&[s]), 2 * SEC);
        let n = WorkloadSpec::parse("nanosleep").unwrap();
        assert_eq!(default_duration(&[n]), DEFAULT_ENDLESS_DURATION);
        let h = WorkloadSpec::parse("hackbench").unwrap();
        assert_eq!(default_duration(&[h]), DEFAULT_FINITE_CAP);
        // rt-app: global.duration when given; else endless tasks get the endless default
        // and finite ones run to their end.
        let rtapp = |text: &str| WorkloadSpec {
            workload: Workload::Rtapp(crate::Rtapp::parse("t.json", text).unwrap()),
            cpus: None,
            mem: None,
            uclamp: None,
            nice: None,
            policy: None,
            cgroup: None,
        };
        let endless = r#"{"tasks": {"t": {"run": 1000, "sleep": 1000}}}"#;
        assert_eq!(
            default_duration(&[rtapp(endless)]),
            DEFAULT_ENDLESS_DURATION
        );
        let finite = r#"{"tasks": {"t": {"loop": 5, "run": 1000, "sleep": 1000}}}"#;
        assert_eq!(default_duration(&[rtapp(finite)]), DEFAULT_FINITE_CAP);
        let timed = r#"{"tasks": {"t": {"run": 1000}}, "global": {"duration": 2}}"#;
        assert_eq!(default_duration(&[rtapp(timed)]), 2 * SEC);
    }
}
