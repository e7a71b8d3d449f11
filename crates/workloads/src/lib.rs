//! Workloads, named and parametrised like the real tools and compiled to the engine's
//! behaviour IR; and runs: a scenario resolved to a run specification ([`resolve`],
//! [`scenario`]), built into a world and run ([`run`]).
//!
//! This crate sits on the engine and never the reverse: a tool's programs use the IR's
//! generic operations, and what only the tool does goes through the engine's one hook
//! ([`fairsim_engine::hook::WorkloadModel`], implemented here by rt-app's, cyclictest's
//! and tbench's models). A report reads its workload's model and tasks back from the
//! finished world.
//!
//! A specification is `NAME:key=value,...` with the tool's own option letters or long
//! names as keys (`schbench:m=6,t=24,c=30ms,s=30ms`, `hackbench:g=4,l=1000,pipe`,
//! `nanosleep:tasks=224,sleep=1us`, `sysbench-cpu:threads=5`, `cyclictest:t=2,a,n,D=10`,
//! `netperf:t=TCP_RR,instances=224,l=100`, `tbench:t=100,clients=224`), or the tool's own
//! command line (`schbench -m 6 -t 24`, `hackbench -g 4 -l 1000 -p`; see [`cmdline`]).

mod affinity;
mod attrs;
pub mod cmdline;
mod cyclictest;
mod cyclictest_stats;
mod forkbench;
mod forkbench_stats;
mod hackbench;
mod nanosleep;
mod net_pairs;
mod netperf;
pub mod resolve;
mod rtapp;
mod rtapp_json;
mod rtapp_log;
mod rtapp_pass;
mod rtapp_report;
mod rtapp_stats;
pub mod run;
pub mod scenario;
mod schbench;
mod sysbench;
mod tbench;
pub mod tbench_mix;
pub mod tbench_stats;

pub use affinity::CpuList;
pub use cyclictest::{Affinity, Cyclictest};
pub use cyclictest_stats::{calcdiff, CyclicCall, CyclicRt, CyclicStep, CyclicThread};
pub use forkbench::{Forkbench, PIPE_COPY_NS_PER_KIB};
pub use forkbench_stats::{cputime_adjust, exp2_q16, log2_q16, Cputime, WorkDist};
pub use hackbench::Hackbench;
pub use nanosleep::Nanosleep;
pub use netperf::{hmean, Netperf, NetperfTest};
pub use rtapp::{RtEvent, RtPhase, RtTask, Rtapp};
pub use rtapp_log::{
    Activation, ActivationLog, PassEnd, ThreadLog, FILE_TOTAL, JSON_PER_THREAD, JSON_TOTAL,
};
pub use rtapp_pass::PhaseAcc;
pub use rtapp_stats::{Periodic, PeriodicClock, PhaseRows, RtCall, RtPoint, UsDist};
pub use run::{
    check_machine, default_duration, estimate_json_memory, estimate_memory, estimate_run_memory,
    prepare, run, RunResult, RunSpec,
};
pub use schbench::{Schbench, SchbenchVersion, SCHBENCH_2016_MESSAGE_THREADS};
pub use sysbench::SysbenchCpu;
pub use tbench::{fmt_g, Tbench};

use fairsim_engine::error::EngineError;
use fairsim_engine::event::Tid;
use fairsim_engine::program::Program;
use fairsim_engine::rng::SimRng;
use fairsim_engine::time::parse_duration;
use fairsim_engine::world::{Blueprint, TaskRt, WorkloadRt, World};

/// One workload specification: the tool and its options, and the CPUs its tasks may
/// run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadSpec {
    /// The tool and its options.
    pub workload: Workload,
    /// `cpus=LIST`: every task of the workload (its launcher included) is confined to
    /// these CPUs, as starting the tool under `taskset -c LIST` does (children inherit
    /// `cpus_allowed`). `None`: every CPU.
    pub cpus: Option<CpuList>,
    /// `mem=PERMILLE`: the memory intensity of the workload's work ([`fairsim_engine::memory`]);
    /// `None`: the tool's default.
    pub mem: Option<u32>,
    /// `uclamp=MIN..MAX`: every task of the workload gets these utilization clamps, as
    /// starting the tool under `uclampset -m MIN -M MAX` does (children inherit them);
    /// `None`: the defaults (rt-app's own `util_min`/`util_max` still apply).
    pub uclamp: Option<(u32, u32)>,
    /// `nice=N`: every task of the workload runs at nice `N` (-20..19), as starting the
    /// tool under `nice -n N` does; `None`: nice 0. rt-app workloads take their tasks'
    /// own `priority` key instead.
    pub nice: Option<i32>,
    /// `policy=normal|batch|idle`: every task of the workload runs under this policy, as
    /// starting the tool under `chrt -b 0` or `chrt -i 0` does; `None`: SCHED_NORMAL.
    /// rt-app workloads take their tasks' own `policy` key instead.
    pub policy: Option<fairsim_balance::Policy>,
    /// `cgroup=/PATH`: every task of the workload runs in this task group, as starting
    /// the tool from a shell in that cgroup does (children inherit it); `None`: the root
    /// group. An rt-app task's own `taskgroup` moves its threads on from there.
    pub cgroup: Option<String>,
}

/// A tool with its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workload {
    /// schbench (2016, seed 001).
    Schbench(Schbench),
    /// hackbench (rt-tests).
    Hackbench(Hackbench),
    /// The nanosleep stress of seed 000.
    Nanosleep(Nanosleep),
    /// sysbench cpu.
    SysbenchCpu(SysbenchCpu),
    /// An rt-app JSON file.
    Rtapp(Rtapp),
    /// cyclictest (rt-tests 0.85).
    Cyclictest(Cyclictest),
    /// Shell scripts forking short-lived commands (git's test suite, seed 004).
    Forkbench(Forkbench),
    /// netperf 2.7.0 over loopback.
    Netperf(Netperf),
    /// tbench (dbench 4.0) over loopback.
    Tbench(Tbench),
}

/// The workloads `--workload` accepts.
pub const WORKLOAD_NAMES: &str = "schbench, hackbench, nanosleep, sysbench-cpu, cyclictest, forkbench, netperf, tbench, rtapp:FILE.json";

/// What a workload prints and reports after a run.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadReport {
    /// The tool-style text.
    pub text: String,
    /// Results for `--json`.
    pub json: serde_json::Value,
    /// Whether the workload ran to completion (always true for endless workloads).
    pub finished: bool,
}

/// Parsed `key=value` pairs of a specification, checked against the allowed keys.
pub(crate) struct Keys {
    tool: &'static str,
    pairs: Vec<(String, Option<String>)>,
}

impl Keys {
    /// Splits `body` and rejects keys outside `allowed` (each entry lists the aliases of
    /// one option, e.g. `["m", "message-threads"]`).
    pub(crate) fn parse(
        tool: &'static str,
        body: &str,
        allowed: &[&[&str]],
    ) -> Result<Keys, EngineError> {
        let mut pairs = Vec::new();
        for item in body.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = match item.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
                None => (item, None),
            };
            let k = k.trim_start_matches('-');
            let Some(canon) = allowed.iter().find(|a| a.contains(&k)) else {
                let names: Vec<String> = allowed.iter().map(|a| a.join("|")).collect();
                return Err(EngineError::Workload(format!(
                    "{tool}: unknown key '{k}'; allowed: {}",
                    names.join(", ")
                )));
            };
            pairs.push((canon[0].to_string(), v));
        }
        Ok(Keys { tool, pairs })
    }

    /// A text value, if the key was given with one.
    pub(crate) fn text(&self, key: &str) -> Option<&str> {
        self.raw(key).and_then(|v| v.as_deref())
    }

    /// The error for a value outside `allowed`.
    pub(crate) fn invalid(&self, key: &str, got: &str, allowed: &str) -> EngineError {
        self.bad(key, got, allowed)
    }

    fn raw(&self, key: &str) -> Option<&Option<String>> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// A flag (present without value, or `=1/true/yes`).
    pub(crate) fn flag(&self, key: &str) -> Result<bool, EngineError> {
        match self.raw(key) {
            None => Ok(false),
            Some(None) => Ok(true),
            Some(Some(v)) => match v.as_str() {
                "1" | "true" | "yes" | "on" => Ok(true),
                "0" | "false" | "no" | "off" => Ok(false),
                _ => Err(self.bad(key, v, "a flag: present, or =1/=0")),
            },
        }
    }

    /// An integer in `lo..=hi`.
    pub(crate) fn int(
        &self,
        key: &str,
        default: u64,
        lo: u64,
        hi: u64,
    ) -> Result<u64, EngineError> {
        match self.raw(key) {
            None => Ok(default),
            Some(None) => Err(self.bad(key, "", &format!("an integer in {lo}..={hi}"))),
            Some(Some(v)) => match v.parse::<u64>() {
                Ok(n) if (lo..=hi).contains(&n) => Ok(n),
                _ => Err(self.bad(key, v, &format!("an integer in {lo}..={hi}"))),
            },
        }
    }

    /// A duration (bare numbers in `unit` ns) in `lo..=hi` ns.
    pub(crate) fn dur(
        &self,
        key: &str,
        default: u64,
        unit: u64,
        lo: u64,
        hi: u64,
    ) -> Result<u64, EngineError> {
        let allowed = format!(
            "a duration from {} to {} (bare numbers in {})",
            fairsim_engine::time::format_duration(lo),
            fairsim_engine::time::format_duration(hi),
            match unit {
                1 => "ns",
                1_000 => "us",
                1_000_000 => "ms",
                _ => "s",
            }
        );
        match self.raw(key) {
            None => Ok(default),
            Some(None) => Err(self.bad(key, "", &allowed)),
            Some(Some(v)) => match parse_duration(v, unit) {
                Ok(n) if (lo..=hi).contains(&n) => Ok(n),
                _ => Err(self.bad(key, v, &allowed)),
            },
        }
    }

    fn bad(&self, key: &str, got: &str, allowed: &str) -> EngineError {
        EngineError::Workload(format!(
            "{}: {key}: invalid value '{got}'; allowed: {allowed}",
            self.tool
        ))
    }
}

impl WorkloadSpec {
    /// Parses `NAME[:key=value,...]`, or a tool's own command line (`schbench -m 2 -t 4`)
    /// when [`cmdline::is_command_line`] says it is one.
    pub fn parse(spec: &str) -> Result<WorkloadSpec, EngineError> {
        if cmdline::is_command_line(spec) {
            return cmdline::parse(spec);
        }
        let (name, body) = spec.split_once(':').unwrap_or((spec, ""));
        let tool = match name.trim() {
            "schbench" => "schbench",
            "hackbench" => "hackbench",
            "nanosleep" => "nanosleep",
            "sysbench-cpu" | "sysbench" => "sysbench-cpu",
            "rtapp" | "rt-app" => "rtapp",
            "cyclictest" => "cyclictest",
            "forkbench" => "forkbench",
            "netperf" => "netperf",
            "tbench" => "tbench",
            other => {
                return Err(EngineError::Workload(format!(
                    "unknown workload '{other}'; allowed: {WORKLOAD_NAMES}"
                )))
            }
        };
        // Every tool takes cpus=LIST; the rest of the options are the tool's own.
        let (body, cpus) = affinity::split_cpus(tool, body)?;
        // ... and mem=PERMILLE, the memory intensity of its work.
        let (body, mem) = attrs::split_mem(tool, &body)?;
        // ... and uclamp=MIN..MAX, the tasks' utilization clamps.
        let (body, uclamp) = attrs::split_uclamp(tool, &body)?;
        // ... and nice=N.
        let (body, nice) = attrs::split_nice(tool, &body)?;
        if nice.is_some() && tool == "rtapp" {
            return Err(EngineError::Workload(
                "rtapp: nice: not for an rt-app file, whose tasks have their own; allowed: each task's \"priority\" key".into(),
            ));
        }
        // ... and policy=normal|batch|idle.
        let (body, policy) = attrs::split_policy(tool, &body)?;
        if policy.is_some() && tool == "rtapp" {
            return Err(EngineError::Workload(
                "rtapp: policy: not for an rt-app file, whose tasks have their own; allowed: each task's \"policy\" key".into(),
            ));
        }
        // ... and cgroup=/PATH.
        let (body, cgroup) = attrs::split_cgroup(tool, &body)?;
        let body = body.as_str();
        let workload = match tool {
            "schbench" => Workload::Schbench(Schbench::parse(body)?),
            "hackbench" => Workload::Hackbench(Hackbench::parse(body)?),
            "nanosleep" => Workload::Nanosleep(Nanosleep::parse(body)?),
            // The body is the file's path (after any cpus=LIST was taken out).
            "rtapp" => Workload::Rtapp(Rtapp::load(body.trim())?),
            "cyclictest" => Workload::Cyclictest(Cyclictest::parse(body)?),
            "forkbench" => Workload::Forkbench(Forkbench::parse(body)?),
            "netperf" => Workload::Netperf(Netperf::parse(body)?),
            "tbench" => Workload::Tbench(Tbench::parse(body)?),
            _ => Workload::SysbenchCpu(SysbenchCpu::parse(body)?),
        };
        Ok(WorkloadSpec {
            workload,
            cpus,
            mem,
            uclamp,
            nice,
            policy,
            cgroup,
        })
    }

    /// Checks what depends on the machine: the CPU list names only CPUs it has.
    pub fn check(&self, ncpus: usize) -> Result<(), EngineError> {
        match &self.workload {
            Workload::Rtapp(w) => w.check(ncpus)?,
            Workload::Cyclictest(w) => w.check(ncpus)?,
            _ => {}
        }
        if let Some(l) = &self.cpus {
            l.mask(ncpus).map_err(|why| {
                EngineError::Workload(format!(
                    "{}: cpus: invalid value '{}' ({why}); allowed: CPUs of the machine",
                    self.name(),
                    l.canonical()
                ))
            })?;
        }
        Ok(())
    }

    /// The tool name.
    pub fn name(&self) -> &'static str {
        match &self.workload {
            Workload::Schbench(_) => "schbench",
            Workload::Hackbench(_) => "hackbench",
            Workload::Nanosleep(_) => "nanosleep",
            Workload::SysbenchCpu(_) => "sysbench-cpu",
            Workload::Rtapp(_) => "rtapp",
            Workload::Cyclictest(_) => "cyclictest",
            Workload::Forkbench(_) => "forkbench",
            Workload::Netperf(_) => "netperf",
            Workload::Tbench(_) => "tbench",
        }
    }

    /// The specification with every option spelled out, for headers.
    pub fn canonical(&self, ncpus: usize) -> String {
        let tool = match &self.workload {
            Workload::Schbench(w) => w.canonical(),
            Workload::Hackbench(w) => w.canonical(),
            Workload::Nanosleep(w) => w.canonical(ncpus),
            Workload::SysbenchCpu(w) => w.canonical(),
            Workload::Rtapp(w) => w.canonical(),
            Workload::Cyclictest(w) => w.canonical(ncpus),
            Workload::Forkbench(w) => w.canonical(),
            Workload::Netperf(w) => w.canonical(),
            Workload::Tbench(w) => w.canonical(),
        };
        let tool = match &self.cpus {
            Some(l) => format!("{tool},cpus={}", l.canonical()),
            None => tool,
        };
        let tool = match self.mem {
            Some(m) => format!("{tool},mem={m}"),
            None => tool,
        };
        let tool = match self.uclamp {
            Some((min, max)) => format!("{tool},uclamp={min}..{max}"),
            None => tool,
        };
        let tool = match self.nice {
            Some(n) => format!("{tool},nice={n}"),
            None => tool,
        };
        let tool = match self.policy {
            Some(p) => format!("{tool},policy={}", p.name()),
            None => tool,
        };
        match &self.cgroup {
            Some(path) => format!("{tool},cgroup={path}"),
            None => tool,
        }
    }

    /// The task groups the workload's tasks join, for [`fairsim_engine::cgroup::Cgroups::resolve`]:
    /// its `cgroup=` (which must be declared), and an rt-app file's `taskgroup`s (which
    /// rt-app creates when they do not exist).
    pub fn cgroup_joins(&self) -> Vec<fairsim_engine::cgroup::Join> {
        let mut joins = Vec::new();
        if let Some(path) = &self.cgroup {
            joins.push(fairsim_engine::cgroup::Join {
                path: path.clone(),
                field: format!("--workload: {}: cgroup", self.name()),
                creates: false,
            });
        }
        if let Workload::Rtapp(r) = &self.workload {
            joins.extend(r.taskgroup_joins());
        }
        joins
    }

    /// Puts the workload's tasks, `tasks` as [`WorkloadSpec::build`] made them, in their
    /// groups of `groups` (which [`fairsim_engine::cgroup::Cgroups::resolve`] made from
    /// [`WorkloadSpec::cgroup_joins`], so every path is there): the workload's group,
    /// and an rt-app thread's own `taskgroup` over it. Every task is also in the
    /// workload's session, `session` (its index: one launched tool, one session), whose
    /// autogroup it runs in when its group is the root ([`fairsim_engine::autogroup`]).
    pub fn place_in_cgroups(
        &self,
        groups: &fairsim_engine::cgroup::Cgroups,
        session: usize,
        tasks: &mut [TaskRt],
    ) {
        let id = |path: Option<&str>| path.and_then(|p| groups.id(p));
        let base = id(self.cgroup.as_deref()).unwrap_or(fairsim_balance::group::ROOT_GROUP);
        let autogroup = groups.autogroup_of(session);
        for t in tasks.iter_mut() {
            t.cgroup = base;
            t.autogroup = autogroup;
        }
        if let Workload::Rtapp(r) = &self.workload {
            for (t, tg) in tasks.iter_mut().zip(r.thread_taskgroups()) {
                if let Some(g) = id(tg) {
                    t.cgroup = g;
                }
            }
        }
    }

    /// Bounds the affinity of the workload's tasks, `tasks` as [`WorkloadSpec::build`]
    /// made them, by their cgroup's effective CPUs (`cpus` from
    /// [`fairsim_engine::cgroup::Cgroups::cpusets`]): the workload's group, or an rt-app thread's
    /// own `taskgroup`. A task's own affinity (`cpus=`, nanosleep's `pin`) is intersected
    /// with them; an empty intersection is refused in one line.
    pub fn restrict_to_cpusets(
        &self,
        cpus: &fairsim_engine::cgroup::CpusetPlan,
        tasks: &mut [TaskRt],
    ) -> Result<(), EngineError> {
        let base = self.cgroup.as_deref();
        let own: Vec<Option<&str>> = match &self.workload {
            Workload::Rtapp(r) => r.thread_taskgroups().collect(),
            _ => Vec::new(),
        };
        for (i, t) in tasks.iter_mut().enumerate() {
            let path = own.get(i).copied().flatten().or(base);
            let Some(eff) = path.and_then(|p| cpus.effective(p)) else {
                continue;
            };
            let mask = match &t.cpus_allowed {
                Some(m) => m.and(eff),
                None => eff.clone(),
            };
            if mask.is_empty() {
                let own = t
                    .cpus_allowed
                    .as_ref()
                    .map_or_else(String::new, |m| m.to_list());
                return Err(EngineError::Workload(format!(
                    "{}: cgroup: the affinity {own} of task {} shares no CPU with {}'s cpuset.cpus (effective CPUs {}); allowed: cpus= that overlaps the group's CPUs",
                    self.name(),
                    t.name,
                    path.unwrap_or("/"),
                    eff.to_list()
                )));
            }
            t.cpus_allowed = Some(mask);
        }
        Ok(())
    }

    /// The memory intensity of the workload's work, per mille: `mem=` or the tool's
    /// default ([`fairsim_engine::memory::default_intensity`]).
    pub fn mem_intensity(&self) -> u32 {
        self.mem
            .unwrap_or_else(|| fairsim_engine::memory::default_intensity(self.name()))
    }

    /// Tasks the workload creates on a machine of `ncpus` CPUs.
    pub fn nr_tasks(&self, ncpus: usize) -> u64 {
        match &self.workload {
            Workload::Schbench(w) => w.nr_tasks(),
            Workload::Hackbench(w) => w.nr_tasks(),
            Workload::Nanosleep(w) => w.nr_tasks(ncpus),
            Workload::SysbenchCpu(w) => w.nr_tasks(),
            Workload::Rtapp(w) => w.nr_tasks(),
            Workload::Cyclictest(w) => w.nr_tasks(ncpus),
            Workload::Forkbench(w) => w.nr_tasks(),
            Workload::Netperf(w) => w.nr_tasks(),
            Workload::Tbench(w) => w.nr_tasks(),
        }
    }

    /// Notes on how the options were read, for stderr (e.g. schbench 2016's ignored
    /// `-m`).
    pub fn notes(&self) -> Vec<String> {
        match &self.workload {
            Workload::Schbench(w) => w.notes(),
            Workload::Rtapp(w) => w.notes(),
            _ => Vec::new(),
        }
    }

    /// The run length the tool itself would use (schbench's `-r`, cyclictest's `-D`), if
    /// any.
    pub fn own_duration(&self) -> Option<u64> {
        match &self.workload {
            Workload::Schbench(w) => w.runtime,
            Workload::Rtapp(w) => w.duration,
            Workload::Cyclictest(w) => w.own_duration(),
            Workload::SysbenchCpu(w) => w.own_duration(),
            _ => None,
        }
    }

    /// Adds the workload's tasks, programs and pipes to `bp` as workload number `index`.
    pub fn build(&self, index: usize, seed: u64, bp: &mut Blueprint, ncpus: usize) {
        let first = bp.tasks.len();
        let mut rt = WorkloadRt::new(SimRng::derive(seed, index as u64), first);
        // `check` has accepted the list for this machine; a list that does not fit leaves
        // the tasks unconfined rather than panicking.
        let mask = self.cpus.as_ref().and_then(|l| l.mask(ncpus).ok());
        match &self.workload {
            Workload::Schbench(w) => w.build(index, bp, &mut rt),
            Workload::Hackbench(w) => w.build(index, bp),
            Workload::Nanosleep(w) => w.build(index, bp, ncpus, mask.as_ref()),
            Workload::SysbenchCpu(w) => w.build(index, bp),
            Workload::Rtapp(w) => w.build(index, bp, &mut rt, ncpus, mask.as_ref()),
            Workload::Cyclictest(w) => w.build(index, bp, &mut rt, ncpus),
            Workload::Forkbench(w) => w.build(index, bp, &mut rt),
            Workload::Netperf(w) => w.build(index, bp, &mut rt),
            Workload::Tbench(w) => w.build(index, bp, &mut rt),
        }
        if let Some(n) = self.nice {
            for t in &mut bp.tasks[first..] {
                t.nice = n;
            }
        }
        if let Some(p) = self.policy {
            for t in &mut bp.tasks[first..] {
                t.policy = p;
            }
        }
        if let Some(clamps) = self.uclamp {
            for t in &mut bp.tasks[first..] {
                // An rt-app task's own util_min/util_max come after uclampset's.
                if t.uclamp.is_none() {
                    t.uclamp = Some(clamps);
                }
            }
        }
        if let Some(mask) = &mask {
            for t in &mut bp.tasks[first..] {
                // nanosleep's `pin` has already placed each task on one CPU of the list.
                if t.cpus_allowed.is_none() {
                    t.cpus_allowed = Some(mask.clone());
                }
            }
        }
        rt.tasks.1 = bp.tasks.len();
        bp.workloads.push(rt);
    }

    /// The tool-style results of workload `index` in `world`.
    pub fn report(&self, index: usize, world: &World) -> WorkloadReport {
        match &self.workload {
            Workload::Schbench(w) => w.report(index, world),
            Workload::Hackbench(w) => w.report(index, world),
            Workload::Nanosleep(w) => w.report(index, world),
            Workload::SysbenchCpu(w) => w.report(index, world),
            Workload::Rtapp(w) => w.report(index, world),
            Workload::Cyclictest(w) => w.report(index, world),
            Workload::Forkbench(w) => w.report(index, world),
            Workload::Netperf(w) => w.report(index, world),
            Workload::Tbench(w) => w.report(index, world),
        }
    }
}

/// Adds a program and returns its index.
pub(crate) fn add_program(bp: &mut Blueprint, p: Program) -> usize {
    debug_assert!(p.is_closed());
    bp.programs.push(p);
    bp.programs.len() - 1
}

/// A task of workload `workload` running program `prog` ([`TaskRt::new`]).
pub(crate) fn new_task(
    name: String,
    prog: usize,
    parent: Option<Tid>,
    children: (Tid, Tid),
    workload: usize,
) -> TaskRt {
    TaskRt::new(name, prog, parent, children, workload)
}

/// Engine ids of the tasks of workload `index`.
pub(crate) fn task_range(world: &World, index: usize) -> std::ops::Range<Tid> {
    let (a, b) = world.workloads[index].tasks;
    a..b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_issue_examples() {
        for s in [
            "schbench:m=6,t=24,c=30ms,s=30ms",
            "hackbench:g=4,l=1000,pipe",
            "nanosleep:tasks=224,sleep=1us",
            "sysbench-cpu:threads=5",
            "cyclictest:t=2,a,n,D=10",
            "schbench",
        ] {
            WorkloadSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
    }

    #[test]
    fn schbench_2016_ignores_m_as_the_binary_did() {
        let Ok(WorkloadSpec {
            workload: Workload::Schbench(old),
            ..
        }) = WorkloadSpec::parse("schbench:version=2016,m=6,t=24,c=30ms,s=30ms")
        else {
            panic!("parse");
        };
        assert_eq!(old.message_threads, 2);
        assert_eq!(old.nr_tasks(), 1 + 2 * 25);
        assert_eq!(old.notes().len(), 1);
        assert!(old.notes()[0].contains("ignores m=6"), "{:?}", old.notes());
        assert!(old
            .canonical()
            .starts_with("schbench:version=2016,m=2,t=24"));
        let Ok(WorkloadSpec {
            workload: Workload::Schbench(new),
            ..
        }) = WorkloadSpec::parse("schbench:m=6,t=24")
        else {
            panic!("parse");
        };
        assert_eq!(new.message_threads, 6);
        assert!(new.notes().is_empty());
        // Naming the 2016 default is not worth a note.
        let Ok(w) = WorkloadSpec::parse("schbench:version=2016,m=2") else {
            panic!("parse");
        };
        assert!(w.notes().is_empty());
        let e = WorkloadSpec::parse("schbench:version=2019")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("version: invalid value '2019'") && e.contains("2016"),
            "{e}"
        );
    }

    #[test]
    fn rejects_unknown_names_keys_and_values() {
        let e = WorkloadSpec::parse("fio:x=1").unwrap_err().to_string();
        assert!(
            e.contains("unknown workload 'fio'") && e.contains("schbench"),
            "{e}"
        );
        let e = WorkloadSpec::parse("schbench:q=1").unwrap_err().to_string();
        assert!(e.contains("unknown key 'q'"), "{e}");
        let e = WorkloadSpec::parse("schbench:c=-5ms")
            .unwrap_err()
            .to_string();
        assert!(e.contains("c: invalid value '-5ms'"), "{e}");
        assert!(WorkloadSpec::parse("hackbench:g=0").is_err());
        assert!(WorkloadSpec::parse("sysbench-cpu:threads=x").is_err());
    }
}
