//! A workload specification: the tool with its options ([`Workload`]) and the
//! attributes its launchers give every task (`cpus=`, `mem=`, `uclamp=`, `nice=`,
//! `policy=`, `cgroup=`), and the dispatch from a specification to its tool. The tools
//! know nothing of this module; reading a specification from text is in [`parse`].

mod parse;

use fairsim_des::rng::SimRng;
use fairsim_engine::error::{EngineError, SpecError};
use fairsim_engine::world::{Blueprint, Outcome, TaskRt, WorkloadRt};

use crate::affinity::CpuList;
use crate::cyclictest::Cyclictest;
use crate::forkbench::Forkbench;
use crate::hackbench::Hackbench;
use crate::nanosleep::Nanosleep;
use crate::netperf::Netperf;
use crate::report::WorkloadReport;
use crate::rtapp::Rtapp;
use crate::schbench::Schbench;
use crate::sysbench::SysbenchCpu;
use crate::tbench::Tbench;

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

impl WorkloadSpec {
    /// Checks what depends on the machine: the CPU list names only CPUs it has.
    pub fn check(&self, ncpus: usize) -> Result<(), EngineError> {
        match &self.workload {
            Workload::Rtapp(w) => w.check(ncpus)?,
            Workload::Cyclictest(w) => w.check(ncpus)?,
            _ => {}
        }
        if let Some(l) = &self.cpus {
            l.mask(ncpus).map_err(|why| {
                SpecError::invalid_because(
                    self.name(),
                    "cpus",
                    l.canonical(),
                    why,
                    "CPUs of the machine",
                )
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
                return Err(SpecError::key(
                    self.name(),
                    "cgroup",
                    format!(
                        "the affinity {own} of task {} shares no CPU with {}'s cpuset.cpus (effective CPUs {}); allowed: cpus= that overlaps the group's CPUs",
                        t.name,
                        path.unwrap_or("/"),
                        eff.to_list()
                    ),
                )
                .into());
            }
            t.cpus_allowed = Some(mask);
        }
        Ok(())
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
    pub fn report(&self, index: usize, outcome: &Outcome) -> WorkloadReport {
        match &self.workload {
            Workload::Schbench(w) => w.report(index, outcome),
            Workload::Hackbench(w) => w.report(index, outcome),
            Workload::Nanosleep(w) => w.report(index, outcome),
            Workload::SysbenchCpu(w) => w.report(index, outcome),
            Workload::Rtapp(w) => w.report(index, outcome),
            Workload::Cyclictest(w) => w.report(index, outcome),
            Workload::Forkbench(w) => w.report(index, outcome),
            Workload::Netperf(w) => w.report(index, outcome),
            Workload::Tbench(w) => w.report(index, outcome),
        }
    }
}
