//! rt-app (github.com/scheduler-tools/rt-app): periodic and phased tasks described in
//! JSON, as LISA and the EAS/util_est studies write them. `rtapp:FILE.json`.
//!
//! The file is read as rt-app v1.0's `rt-app_parse_config.c` reads it (the JSON dialect is
//! in `rtapp_json`):
//! - `tasks` (required): each key is a task definition, in file order. `instance`
//!   (default 1) threads are made of it, named `NAME-IDX` with IDX counting every thread of the
//!   file (`thread_data_set_unique_name`); a name over 15 bytes cannot be set by
//!   `pthread_setname_np`, so such a thread keeps the `rt-app` comm.
//! - events are the keys that *start with* an event's name (`obj_is_event`: `strncmp`
//!   against rt-app's event list), so `run0`, `run1`, `sleep_a` repeat events; a key that
//!   starts with `run` or `sleep` is `sleep` if it starts with `sleep`, `runtime` if it
//!   starts with `runtime`, and `run` otherwise (so `running` is a `run`).
//!   `run` is work at capacity 1024 (`Op::Run`: rt-app's calibrated loop scales with
//!   capacity and frequency), `runtime` a wall-clock busy loop (`Op::Spin`), `sleep` a
//!   relative `nanosleep` (`Op::Sleep`), `timer` rt-app's periodic timer
//!   (an absolute sleep of the workload's model, [`RtCall::Timer`]). rt-app's other events (locks, conditions,
//!   barriers, memory, I/O, fork, yield, semaphores) are refused.
//! - `phases` (an object, in file order) each with events and `loop` (default 1; 0 or
//!   negative: forever, as `phase_loop == loop` never holds); the task's `loop` (default
//!   -1: forever; 0: nothing runs) repeats the phase list. Without `phases` the task
//!   object is its one phase and its `loop` is the phase's, run once.
//! - `delay` (us) sleeps before the first phase; `cpus` (array) sets `cpus_allowed`;
//!   `policy` is `SCHED_OTHER`, `SCHED_BATCH` or `SCHED_IDLE` (default
//!   `global.default_policy`; rt-app's `string_to_policy` took `SCHED_BATCH` in 2026;
//!   `SCHED_BATCH` and `SCHED_IDLE` on `--kernel 6.12` only) and `priority` is its nice
//!   value (`_set_thread_cfs`); `util_min` and `util_max` (0..1024; -1, the default,
//!   sets nothing) are its
//!   utilization clamps (`_set_thread_uclamp`'s `sched_setattr`, `--kernel 6.12` only),
//!   in effect from the thread's creation (rt-app sets them as the thread starts, before
//!   its first phase). `taskgroup` (a path that starts with `/`; `""` for none) puts the
//!   task's threads in that cgroup, `--kernel 6.12` only: a group declared with
//!   `--cgroup` (with its weight), else one made as rt-app's `cgroup_mkdir` makes it,
//!   parents included, at the default weight; at most 32 per file (`max_nbr_tgs`).
//!   Threads without one run in the workload's `cgroup=`, or the root.
//! - A phase's own `cpus` (`parse_cpuset_data`) is applied as rt-app's
//!   `set_thread_affinity` does at the start of every pass ([`RtCall::SetAffinity`]): the
//!   phase's set, else the task's `cpus`, else the affinity the thread started with (the
//!   workload's `cpus=LIST`, or every CPU); rt-app calls `sched_setaffinity` only when
//!   that set differs from the one it set last, and the kernel moves a thread whose CPU
//!   left the set (`Sched::set_cpus_allowed_ptr`). Only the threads of a task with some
//!   phase-level `cpus` carry these operations.
//! - A phase's own `policy`, `priority`, `util_min`, `util_max` and `taskgroup` are
//!   applied as `thread_body` applies them at the phase's start (`rtapp_sched`): what
//!   they leave in effect must be the same in every phase that runs, and is then the
//!   thread's from its creation (LISA writes a task's properties into its first phase);
//!   a phase that changes them mid-run is refused with one line naming the key, as are
//!   deadline parameters. A phase's `nodes_membind` is ignored with a note.
//! - `global`: `duration` (s; the run's own length unless `--duration` is given),
//!   `cumulative_slack` and `default_policy` are used; `calibration` (fairsim's work is
//!   already in capacity units), logging, ftrace, `lock_pages`, `pi_enabled`,
//!   `io_device`, `mem_buffer_size` and `gnuplot` have no meaning here and are ignored
//!   with a note; so are `resources` and `nodes_membind`.
//!
//! Every key outside these is refused with its path (rt-app would ignore it silently).
//! The report is rt-app's per-thread log reduced to distributions: per thread and
//! phase, the passes and the `slack` and `wu_lat` columns (us) of the passes that used a
//! timer. The log itself, one line per pass, is `rtapp_log`'s.

use std::collections::BTreeMap;
use std::path::Path;

use fairsim_engine::error::{EngineError, SpecError};
use fairsim_topology::CpuMask;

use fairsim_des::time::{SEC, US};
use fairsim_engine::program::{DurSpec, Op, Program};
use fairsim_engine::world::{Blueprint, WorkloadRt};

use super::rtapp_json::{self, Json};
use super::rtapp_log::ActivationLog;
use super::rtapp_pass::PhaseAcc;
use super::rtapp_sched;
use super::rtapp_stats::{Periodic, PeriodicClock, PhaseRows, RtCall, RtPoint};
use super::tasks::{add_program, new_task};

/// The largest file read (rt-app files are a few kB).
const MAX_FILE_BYTES: u64 = 4 << 20;
/// The most threads a file may create.
const MAX_THREADS: i64 = 1 << 16;
/// rt-app reads every duration with `json_object_get_int`: a C `int` of microseconds.
const MAX_US: i64 = i32::MAX as i64;

/// One event of a phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RtEvent {
    /// `run`: work in us at capacity 1024.
    Run(u64),
    /// `runtime`: wall-clock busy loop in us.
    Runtime(u64),
    /// `sleep`: relative sleep in us.
    Sleep(u64),
    /// `timer`: the reference, its period in us.
    Timer {
        /// `ref`.
        reference: String,
        /// `period` in us.
        period: u64,
    },
}

/// One phase of a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtPhase {
    /// Its key (`""` for a task without `phases`).
    pub name: String,
    /// `loop` (0 or negative: forever).
    pub repeat: i64,
    /// The events in file order.
    pub events: Vec<RtEvent>,
    /// The phase's own `cpus`.
    pub cpus: Option<Vec<usize>>,
}

/// One task definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtTask {
    /// Its key.
    pub name: String,
    /// `instance`.
    pub instances: u64,
    /// `delay` in us.
    pub delay: u64,
    /// Nice value (`priority` under SCHED_OTHER; the task's, or the one its phases set).
    pub nice: i32,
    /// `policy`: SCHED_OTHER, SCHED_BATCH or SCHED_IDLE (the task's, or the one its
    /// phases set).
    pub policy: fairsim_balance::Policy,
    /// `util_min` and `util_max`: the clamps rt-app sets with `sched_setattr` (each
    /// defaulting to the kernel's, 0 and 1024, when only the other is given).
    pub uclamp: Option<(u32, u32)>,
    /// `cpus`.
    pub cpus: Option<Vec<usize>>,
    /// `taskgroup`: the cgroup the task's threads run in (rt-app creates it when it does
    /// not exist); `None` (absent or `""`): the group rt-app itself runs in.
    pub taskgroup: Option<String>,
    /// The task's `loop` over the phase list (0: nothing; negative: forever).
    pub repeat: i64,
    /// Phases in file order.
    pub phases: Vec<RtPhase>,
}

/// An rt-app file, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rtapp {
    /// The file as named.
    pub file: String,
    /// `global.duration` in ns, when positive.
    pub duration: Option<u64>,
    /// `global.cumulative_slack`.
    pub cumulative_slack: bool,
    /// Task definitions in file order.
    pub tasks: Vec<RtTask>,
    /// Timer references named `absolute` somewhere (rt-app's per-resource mode).
    pub absolute: Vec<String>,
    notes: Vec<String>,
    /// Paths of the phases' `nodes_membind` keys (ignored, in one note).
    membind: Vec<String>,
}

/// The keys a task or phase object may hold besides events.
const TASK_KEYS: &str = "instance, delay, loop, phases, cpus, policy, priority, util_min, util_max, taskgroup, nodes_membind";
/// The most task groups one rt-app process keeps (`max_nbr_tgs` in
/// rt-app_taskgroups.c); `alloc_taskgroup` fails past it and rt-app exits.
const MAX_TASKGROUPS: usize = 32;
const PHASE_KEYS: &str =
    "loop, cpus, policy, priority, util_min, util_max, taskgroup, nodes_membind";
const EVENTS: &str = "run*, runtime*, sleep*, timer* (any key that starts with an event's name)";
/// rt-app's events this port does not run.
const OTHER_EVENTS: [&str; 16] = [
    "lock", "unlock", "wait", "signal", "broad", "sync", "suspend", "resume", "memrun", "mem",
    "iorun", "yield", "barrier", "fork", "sem_post", "sem_wait",
];
/// `global` keys with no meaning in fairsim, accepted and ignored.
const IGNORED_GLOBAL: [&str; 11] = [
    "calibration",
    "logdir",
    "log_basename",
    "log_size",
    "gnuplot",
    "ftrace",
    "lock_pages",
    "pi_enabled",
    "io_device",
    "mem_buffer_size",
    "spacing",
];

struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn err(&self, path: &str, what: &str) -> EngineError {
        SpecError::file_entry("rtapp", self.file, path, what).into()
    }

    fn int(&self, path: &str, v: &Json, lo: i64, hi: i64) -> Result<i64, EngineError> {
        match v {
            Json::Int(n) if (lo..=hi).contains(n) => Ok(*n),
            Json::Int(n) => Err(self.err(
                path,
                &format!("{n} is out of range; allowed: an integer in {lo}..={hi}"),
            )),
            other => Err(self.err(
                path,
                &format!(
                    "{} is not allowed; allowed: an integer in {lo}..={hi}",
                    other.kind()
                ),
            )),
        }
    }

    fn text<'v>(&self, path: &str, v: &'v Json) -> Result<&'v str, EngineError> {
        match v {
            Json::Str(s) => Ok(s),
            other => Err(self.err(
                path,
                &format!("{} is not allowed; allowed: a string", other.kind()),
            )),
        }
    }

    fn object<'v>(&self, path: &str, v: &'v Json) -> Result<&'v [(String, Json)], EngineError> {
        match v {
            Json::Object(f) => Ok(f),
            other => Err(self.err(
                path,
                &format!("{} is not allowed; allowed: an object", other.kind()),
            )),
        }
    }
}

/// A task's `taskgroup` as `parse_taskgroup_data` reads it: a string, `""` for none, else
/// a path that starts with `/` (rt-app exits otherwise), which must also be a path
/// fairsim's cgroups take ([`fairsim_engine::cgroup::check_path`]).
fn taskgroup(c: &Ctx, path: &str, v: &Json) -> Result<Option<String>, EngineError> {
    let name = c.text(path, v)?;
    if name.is_empty() {
        return Ok(None);
    }
    fairsim_engine::cgroup::check_path(name).map_err(|why| {
        c.err(
            path,
            &format!(
                "invalid value '{name}' ({why}); allowed: \"\" (none) or {}",
                fairsim_engine::cgroup::PATH_ALLOWED
            ),
        )
    })?;
    Ok(Some(name.to_string()))
}

fn join(path: &str, key: &str) -> String {
    format!("{path}.{key}")
}

impl Rtapp {
    /// Reads and parses `file`.
    pub fn load(file: &str) -> Result<Rtapp, EngineError> {
        if file.is_empty() {
            return Err(SpecError::refused("rtapp", "no file; allowed: rtapp:FILE.json").into());
        }
        let text = fairsim_topology::source::read_bounded(Path::new(file), MAX_FILE_BYTES)
            .map_err(|e| SpecError::file("rtapp", file, e))?;
        Rtapp::parse(file, &text)
    }

    /// Parses the text of an rt-app file named `file`.
    pub fn parse(file: &str, text: &str) -> Result<Rtapp, EngineError> {
        let c = Ctx { file };
        let doc = rtapp_json::parse(text).map_err(|e| {
            SpecError::file(
                "rtapp",
                file,
                format!("{e}; allowed: rt-app's JSON (json-c)"),
            )
        })?;
        let mut notes = Vec::new();
        for path in &doc.repeated {
            notes.push(format!(
                "rtapp {file}: {path} is given more than once: json-c keeps the last value at the first one's place (name repeated events run0, run1, ...)"
            ));
        }
        let root = c.object("(root)", &doc.root)?;
        let mut global = None;
        let mut tasks = None;
        for (k, v) in root {
            match k.as_str() {
                "global" => global = Some(c.object(k, v)?),
                "tasks" => tasks = Some(c.object(k, v)?),
                "resources" => notes.push(format!(
                    "rtapp {file}: resources ignored (rt-app creates resources as events name them)"
                )),
                _ => return Err(c.err(k, "unknown key; allowed: global, tasks, resources")),
            }
        }
        let Some(tasks) = tasks else {
            return Err(c.err("tasks", "missing; allowed: an object of task definitions"));
        };
        let mut rt = Rtapp {
            file: file.to_string(),
            duration: None,
            cumulative_slack: false,
            tasks: Vec::new(),
            absolute: Vec::new(),
            notes,
            membind: Vec::new(),
        };
        let mut default_policy = "SCHED_OTHER".to_string();
        let mut ignored = Vec::new();
        for (k, v) in global.unwrap_or(&[]) {
            let path = join("global", k);
            match k.as_str() {
                "duration" => {
                    let s = c.int(&path, v, -1, 86_400 * 365)?;
                    rt.duration = (s > 0).then(|| s as u64 * SEC);
                }
                "cumulative_slack" => match v {
                    Json::Bool(b) => rt.cumulative_slack = *b,
                    other => {
                        return Err(c.err(
                            &path,
                            &format!("{} is not allowed; allowed: true or false", other.kind()),
                        ))
                    }
                },
                "default_policy" => default_policy = c.text(&path, v)?.to_string(),
                _ if IGNORED_GLOBAL.contains(&k.as_str()) => ignored.push(k.clone()),
                _ => {
                    return Err(c.err(
                        &path,
                        &format!(
                            "unknown key; allowed: duration, cumulative_slack, default_policy, {}",
                            IGNORED_GLOBAL.join(", ")
                        ),
                    ))
                }
            }
        }
        if !ignored.is_empty() {
            rt.notes.push(format!(
                "rtapp {file}: global {} ignored (no meaning in fairsim: work is in capacity units, nothing is logged to files)",
                ignored.join(", ")
            ));
        }
        let mut threads = 0i64;
        for (name, v) in tasks {
            let task = rt.parse_task(&c, name, v, &default_policy)?;
            threads += task.instances as i64;
            if threads > MAX_THREADS {
                return Err(c.err(&join("tasks", name), &format!("instance: more than {MAX_THREADS} threads in the file; allowed: at most {MAX_THREADS}")));
            }
            rt.tasks.push(task);
        }
        if let Some(first) = rt.membind.first() {
            rt.notes.push(format!(
                "rtapp {file}: nodes_membind of {} phase(s) ignored (memory placement is not modelled): {first}{}",
                rt.membind.len(),
                if rt.membind.len() > 1 { ", ..." } else { "" }
            ));
        }
        // rt-app itself starts no thread and waits for none, so the run would measure an
        // empty machine: refuse, as for any other input that does nothing.
        if threads == 0 {
            return Err(c.err(
                "tasks",
                "no thread to run (no task, or every instance 0); allowed: at least one task with instance 1 or more",
            ));
        }
        let mut groups: Vec<&str> = rt
            .tasks
            .iter()
            .filter_map(|t| t.taskgroup.as_deref())
            .collect();
        groups.sort_unstable();
        groups.dedup();
        if groups.len() > MAX_TASKGROUPS {
            return Err(c.err(
                "tasks",
                &format!("{} distinct taskgroups; allowed: at most {MAX_TASKGROUPS} (rt-app's max_nbr_tgs)", groups.len()),
            ));
        }
        Ok(rt)
    }

    fn parse_task(
        &mut self,
        c: &Ctx,
        name: &str,
        v: &Json,
        default_policy: &str,
    ) -> Result<RtTask, EngineError> {
        let path = join("tasks", name);
        let obj = c.object(&path, v)?;
        let mut task = RtTask {
            name: name.to_string(),
            instances: 1,
            delay: 0,
            nice: 0,
            policy: fairsim_balance::Policy::Normal,
            uclamp: None,
            cpus: None,
            taskgroup: None,
            repeat: -1,
            phases: Vec::new(),
        };
        let mut policy = (
            "global.default_policy".to_string(),
            default_policy.to_string(),
        );
        let mut priority = None;
        let mut phases = None;
        let mut loop_given = None;
        let mut util = (None, None);
        for (k, v) in obj {
            let p = join(&path, k);
            match k.as_str() {
                "instance" => task.instances = c.int(&p, v, 0, MAX_THREADS)? as u64,
                "delay" => task.delay = c.int(&p, v, 0, MAX_US)? as u64,
                "loop" => loop_given = Some(c.int(&p, v, i64::from(i32::MIN), MAX_US)?),
                "phases" => phases = Some(c.object(&p, v)?),
                "cpus" => task.cpus = Some(cpus(c, &p, v)?),
                "policy" => policy = (p.clone(), c.text(&p, v)?.to_string()),
                "priority" => priority = Some((p.clone(), v)),
                "util_min" => util.0 = clamp(c, &p, v)?,
                "util_max" => util.1 = clamp(c, &p, v)?,
                "taskgroup" => task.taskgroup = taskgroup(c, &p, v)?,
                "dl-runtime" | "dl-period" | "dl-deadline" | "period" | "deadline" => {
                    return Err(c.err(&p, "deadline parameters are not modelled; allowed: a SCHED_OTHER, SCHED_BATCH or SCHED_IDLE task with priority (nice), util_min, util_max and taskgroup"));
                }
                "nodes_membind" => self.notes.push(format!(
                    "rtapp {}: {p} ignored (memory placement is not modelled)",
                    c.file
                )),
                _ if event_kind(k).is_some() => {}
                _ => return Err(unknown(c, &p, TASK_KEYS)),
            }
        }
        // The policy first: a real-time priority is refused for its policy.
        task.policy = rtapp_sched::policy(&policy.1).map_err(|why| c.err(&policy.0, &why))?;
        if let Some((p, v)) = priority {
            task.nice = c.int(&p, v, -20, 19)? as i32;
        }
        let thread = rtapp_sched::Sched {
            policy: task.policy,
            nice: task.nice,
            util_min: util.0,
            util_max: util.1,
            taskgroup: task.taskgroup.clone(),
        };
        if let Some((min, max)) = thread.uclamp().filter(|(min, max)| min > max) {
            // sched_setattr's uclamp_validate refuses it, and rt-app exits.
            return Err(c.err(
                &join(&path, "util_min"),
                &format!(
                "{min} above util_max {max} (uclamp_validate); allowed: util_min not above util_max"
            ),
            ));
        }
        task.uclamp = thread.uclamp();
        match phases {
            Some(list) => {
                if let Some((k, _)) = obj.iter().find(|(k, _)| event_kind(k).is_some()) {
                    return Err(c.err(&join(&path, k), "an event beside phases (rt-app would ignore it); allowed: events inside the phases"));
                }
                if list.is_empty() {
                    return Err(c.err(
                        &join(&path, "phases"),
                        "no phase; allowed: at least one phase object",
                    ));
                }
                task.repeat = loop_given.unwrap_or(-1);
                let mut keys = Vec::new();
                // A phase runs when the task loops at all and no phase before it loops
                // for ever.
                let mut runs = task.repeat != 0;
                for (pname, pv) in list {
                    let pp = join(&join(&path, "phases"), pname);
                    let pobj = c.object(&pp, pv)?;
                    let (phase, sched) = self.parse_phase(c, &pp, pname, pobj, true)?;
                    keys.push((sched, runs));
                    runs &= phase.repeat > 0;
                    task.phases.push(phase);
                }
                let s = rtapp_sched::fold(&thread, &keys).map_err(|r| c.err(&r.path, &r.what))?;
                task.policy = s.policy;
                task.nice = s.nice;
                task.uclamp = s.uclamp();
                task.taskgroup = s.taskgroup;
            }
            None => {
                // The task object is its own phase: its `loop` counts the phase's passes
                // and the phase list runs once (forever without `loop`).
                task.repeat = if loop_given.is_some() { 1 } else { -1 };
                task.phases
                    .push(self.parse_phase(c, &path, "", obj, false)?.0);
            }
        }
        Ok(task)
    }

    fn parse_phase(
        &mut self,
        c: &Ctx,
        path: &str,
        name: &str,
        obj: &[(String, Json)],
        own_object: bool,
    ) -> Result<(RtPhase, rtapp_sched::PhaseKeys), EngineError> {
        let mut phase = RtPhase {
            name: name.to_string(),
            repeat: 1,
            events: Vec::new(),
            cpus: None,
        };
        let mut sched = rtapp_sched::PhaseKeys::default();
        let mut priority = None;
        for (k, v) in obj {
            let p = join(path, k);
            let Some(kind) = event_kind(k) else {
                match k.as_str() {
                    "loop" => phase.repeat = c.int(&p, v, i64::from(i32::MIN), MAX_US)?,
                    "cpus" if own_object => phase.cpus = Some(cpus(c, &p, v)?),
                    "policy" if own_object => {
                        let policy =
                            rtapp_sched::policy(c.text(&p, v)?).map_err(|why| c.err(&p, &why))?;
                        sched.policy = rtapp_sched::key(policy, &p);
                    }
                    "priority" if own_object => priority = Some((p, v)),
                    "util_min" if own_object => {
                        sched.util_min = clamp(c, &p, v)?.and_then(|x| rtapp_sched::key(x, &p));
                    }
                    "util_max" if own_object => {
                        sched.util_max = clamp(c, &p, v)?.and_then(|x| rtapp_sched::key(x, &p));
                    }
                    "taskgroup" if own_object => {
                        sched.taskgroup =
                            taskgroup(c, &p, v)?.and_then(|g| rtapp_sched::key(g, &p));
                    }
                    "nodes_membind" if own_object => self.membind.push(p),
                    "dl-runtime" | "dl-period" | "dl-deadline" if own_object => {
                        return Err(c.err(&p, "deadline parameters are not modelled; allowed: a SCHED_OTHER, SCHED_BATCH or SCHED_IDLE task with priority (nice), util_min, util_max and taskgroup"));
                    }
                    _ if own_object => return Err(unknown(c, &p, PHASE_KEYS)),
                    // A task object's other keys were checked with the task.
                    _ => {}
                }
                continue;
            };
            let us = |v: &Json| -> Result<u64, EngineError> {
                match v {
                    Json::Int(n) if (0..=MAX_US).contains(n) => Ok(*n as u64),
                    other => Err(c.err(
                        &p,
                        &format!(
                        "{} is not allowed; allowed: an integer of microseconds in 0..={MAX_US}",
                        match other { Json::Int(n) => n.to_string(), o => o.kind().to_string() }
                    ),
                    )),
                }
            };
            let ev = match kind {
                Kind::Run => RtEvent::Run(us(v)?),
                Kind::Runtime => RtEvent::Runtime(us(v)?),
                Kind::Sleep => RtEvent::Sleep(us(v)?),
                Kind::Timer => self.parse_timer(c, &p, v)?,
                Kind::Other(e) => {
                    return Err(c.err(
                        &p,
                        &format!("rt-app's '{e}' event is not modelled; allowed: {EVENTS}"),
                    ))
                }
            };
            phase.events.push(ev);
        }
        if phase.events.is_empty() {
            return Err(c.err(
                path,
                &format!("no event (rt-app refuses a phase without events); allowed: {EVENTS}"),
            ));
        }
        // The policy first: a real-time priority is refused for its policy.
        if let Some((p, v)) = priority {
            sched.priority = rtapp_sched::key(c.int(&p, v, -20, 19)? as i32, &p);
        }
        Ok((phase, sched))
    }

    fn parse_timer(&mut self, c: &Ctx, path: &str, v: &Json) -> Result<RtEvent, EngineError> {
        let obj = c.object(path, v)?;
        let mut reference = "unknown".to_string();
        let mut period = None;
        let mut absolute = false;
        for (k, v) in obj {
            let p = join(path, k);
            match k.as_str() {
                "ref" => reference = c.text(&p, v)?.to_string(),
                "period" => period = Some(c.int(&p, v, 1, MAX_US)? as u64),
                "mode" => match c.text(&p, v)? {
                    "relative" => absolute = false,
                    "absolute" => absolute = true,
                    m => {
                        return Err(c.err(
                            &p,
                            &format!("'{m}' is not allowed; allowed: relative or absolute"),
                        ))
                    }
                },
                _ => return Err(unknown(c, &p, "ref, period, mode")),
            }
        }
        let Some(period) = period else {
            return Err(c.err(
                &join(path, "period"),
                "missing; allowed: the period in us, above 0",
            ));
        };
        if absolute && !self.absolute.contains(&reference) {
            self.absolute.push(reference.clone());
        }
        Ok(RtEvent::Timer { reference, period })
    }

    /// Whether a task runs for ever: its `loop` over the phases is negative, or one of
    /// its phases loops for ever (rt-app then runs until `global.duration`, or until
    /// stopped).
    pub fn endless(&self) -> bool {
        self.tasks
            .iter()
            .any(|t| t.repeat != 0 && (t.repeat < 0 || t.phases.iter().any(|p| p.repeat <= 0)))
    }

    /// Notes for stderr: ignored keys, repeated keys.
    pub fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    /// The specification as given.
    pub fn canonical(&self) -> String {
        format!("rtapp:{}", self.file)
    }

    /// Threads the file creates.
    pub fn nr_tasks(&self) -> u64 {
        self.tasks.iter().map(|t| t.instances).sum()
    }

    /// The task groups the file's tasks name, for `Cgroups::resolve` (each created
    /// when not declared, as rt-app's `cgroup_mkdir` makes it).
    pub(super) fn taskgroup_joins(&self) -> Vec<fairsim_engine::cgroup::Join> {
        self.tasks
            .iter()
            .filter_map(|t| {
                t.taskgroup.as_ref().map(|g| fairsim_engine::cgroup::Join {
                    path: g.clone(),
                    field: format!(
                        "--workload: rtapp {}: tasks.{}.taskgroup",
                        self.file, t.name
                    ),
                    creates: true,
                })
            })
            .collect()
    }

    /// Each thread's `taskgroup`, in the order [`Rtapp::build`] creates the threads
    /// (every instance of a task in turn, the tasks in file order).
    pub(super) fn thread_taskgroups(&self) -> impl Iterator<Item = Option<&str>> {
        self.tasks
            .iter()
            .flat_map(|t| std::iter::repeat_n(t.taskgroup.as_deref(), t.instances as usize))
    }

    /// Checks the task and phase `cpus` lists against a machine of `ncpus` CPUs.
    pub fn check(&self, ncpus: usize) -> Result<(), EngineError> {
        let off = |path: String, list: &Option<Vec<usize>>| match list
            .iter()
            .flatten()
            .find(|&&c| c >= ncpus)
        {
            Some(&cpu) => Err(SpecError::file_entry(
                "rtapp",
                &self.file,
                path,
                format!(
                    "CPU {cpu} is not on the {ncpus}-CPU machine; allowed: 0..={}",
                    ncpus.saturating_sub(1)
                ),
            )),
            None => Ok(()),
        };
        for t in &self.tasks {
            off(format!("tasks.{}.cpus", t.name), &t.cpus)?;
            for p in t.phases.iter().filter(|p| !p.name.is_empty()) {
                off(format!("tasks.{}.phases.{}.cpus", t.name, p.name), &p.cpus)?;
            }
        }
        Ok(())
    }

    /// Adds one root task per thread, with its timers, affinity sets and log rows, to
    /// `bp`. `inherited` is the workload's `cpus=LIST`, the affinity a thread starts with.
    pub(super) fn build(
        &self,
        w: usize,
        bp: &mut Blueprint,
        rt: &mut WorkloadRt,
        ncpus: usize,
        inherited: Option<&CpuMask>,
    ) {
        let mut global: BTreeMap<String, usize> = BTreeMap::new();
        let mut periodic = Periodic::default();
        let p = &mut periodic;
        p.cumulative_slack = self.cumulative_slack;
        let inherited = inherited.cloned().unwrap_or_else(|| CpuMask::full(ncpus));
        let mut idx = 0usize;
        for task in &self.tasks {
            let task_mask = task.cpus.as_ref().map(|l| mask_of(l, ncpus));
            let task_mask = task_mask.filter(|m| !m.is_empty());
            let per_phase = task.phases.iter().any(|ph| ph.cpus.is_some());
            for _ in 0..task.instances {
                let mut unique: BTreeMap<&str, usize> = BTreeMap::new();
                let mut prog = Program::new();
                if task.delay > 0 {
                    prog = prog.op(Op::Sleep {
                        dur: DurSpec::Fixed(task.delay * US),
                    });
                }
                if task.repeat != 0 {
                    prog = prog.begin_loop((task.repeat > 0).then_some(task.repeat as u64));
                    for phase in &task.phases {
                        prog = prog.begin_loop((phase.repeat > 0).then_some(phase.repeat as u64));
                        if per_phase {
                            // set_thread_affinity's order: the phase's set, the task's,
                            // then the one the thread started with.
                            let m = phase
                                .cpus
                                .as_ref()
                                .map(|l| mask_of(l, ncpus))
                                .filter(|m| !m.is_empty())
                                .or_else(|| task_mask.clone())
                                .unwrap_or_else(|| inherited.clone());
                            let set = mask_index(p, m);
                            prog = prog.op(p.op(RtCall::SetAffinity { set }));
                        }
                        prog = prog.op(p.op(RtCall::Stamp(RtPoint::PassStart)));
                        for ev in &phase.events {
                            let op = match ev {
                                RtEvent::Run(0) | RtEvent::Runtime(0) => continue,
                                RtEvent::Run(us) => Op::Run { work: us * US },
                                RtEvent::Runtime(us) => Op::Spin { dur: us * US },
                                RtEvent::Sleep(us) => Op::Sleep {
                                    dur: DurSpec::Fixed(us * US),
                                },
                                RtEvent::Timer { reference, period } => {
                                    let relative = !self.absolute.contains(reference);
                                    let slot = if reference.starts_with("unique") {
                                        unique.get(reference.as_str()).copied()
                                    } else {
                                        global.get(reference).copied()
                                    };
                                    let clock = slot.unwrap_or_else(|| {
                                        p.clocks.push(PeriodicClock {
                                            next: None,
                                            relative,
                                        });
                                        let i = p.clocks.len() - 1;
                                        if reference.starts_with("unique") {
                                            unique.insert(reference, i);
                                        } else {
                                            global.insert(reference.clone(), i);
                                        }
                                        i
                                    });
                                    p.op(RtCall::Timer {
                                        clock,
                                        period: period * US,
                                    })
                                }
                            };
                            prog = match ev {
                                RtEvent::Run(us) | RtEvent::Runtime(us) => prog
                                    .op(p.op(RtCall::Stamp(RtPoint::EventStart)))
                                    .op(op)
                                    .op(p.op(RtCall::Stamp(RtPoint::EventEnd { us: *us }))),
                                _ => prog.op(op),
                            };
                        }
                        p.rows.push(PhaseRows::default());
                        let row = p.rows.len() - 1;
                        prog = prog.op(p.op(RtCall::PhaseEnd { row })).end_loop();
                    }
                    prog = prog.end_loop();
                }
                let prog = add_program(bp, prog.op(Op::Exit));
                let me = bp.tasks.len();
                let full = format!("{}-{idx}", task.name);
                // pthread_setname_np refuses names over 15 bytes; the thread keeps rt-app's.
                let comm = if full.len() > 15 {
                    "rt-app".to_string()
                } else {
                    full
                };
                let mut t = new_task(comm, prog, None, (me, me), w);
                t.nice = task.nice;
                t.policy = task.policy;
                t.uclamp = task.uclamp;
                t.cpus_allowed = task_mask.clone();
                bp.tasks.push(t);
                p.acc.push(PhaseAcc::default());
                let start = mask_index(p, inherited.clone());
                p.curr_set.push(start);
                idx += 1;
            }
        }
        p.log = ActivationLog::new(idx, false);
        rt.model = Some(Box::new(periodic));
    }
}

/// The mask of a `cpus` list on a machine of `ncpus` CPUs (`check` refused CPUs off it).
fn mask_of(list: &[usize], ncpus: usize) -> CpuMask {
    CpuMask::from_cpus(ncpus, list.iter().copied().filter(|&c| c < ncpus))
}

/// The index of `m` in the workload's affinity sets, added once per content so that
/// equal sets have equal indices (rt-app's `CPU_EQUAL`).
fn mask_index(p: &mut Periodic, m: CpuMask) -> usize {
    match p.masks.iter().position(|x| *x == m) {
        Some(i) => i,
        None => {
            p.masks.push(m);
            p.masks.len() - 1
        }
    }
}

fn unknown(c: &Ctx, path: &str, keys: &str) -> EngineError {
    c.err(
        path,
        &format!("unknown key; allowed: events {EVENTS}, and {keys}"),
    )
}

/// A `util_min` or `util_max` as `parse_sched_data` reads it: -1 (the default) changes
/// nothing, else a clamp in 0..=1024.
fn clamp(c: &Ctx, path: &str, v: &Json) -> Result<Option<u32>, EngineError> {
    let x = c.int(path, v, -1, 1024)?;
    Ok((x >= 0).then_some(x as u32))
}

fn cpus(c: &Ctx, path: &str, v: &Json) -> Result<Vec<usize>, EngineError> {
    let allowed = "an array of CPU numbers such as [0, 1]";
    let Json::Array(items) = v else {
        return Err(c.err(
            path,
            &format!("{} is not allowed; allowed: {allowed}", v.kind()),
        ));
    };
    if items.is_empty() {
        return Err(c.err(path, &format!("an empty list; allowed: {allowed}")));
    }
    items
        .iter()
        .map(|i| match i {
            Json::Int(n) if (0..=8191).contains(n) => Ok(*n as usize),
            other => Err(c.err(
                path,
                &format!(
                    "{} is not a CPU; allowed: {allowed}",
                    match other {
                        Json::Int(n) => n.to_string(),
                        o => o.kind().to_string(),
                    }
                ),
            )),
        })
        .collect()
}

/// What rt-app makes of a key in a task or phase object.
enum Kind {
    Run,
    Runtime,
    Sleep,
    Timer,
    Other(&'static str),
}

/// rt-app's `obj_is_event` and `parse_task_event_data`: a key is an event when it starts
/// with an event's name; `run`/`sleep` come first, and `runtime` is told from `run` by
/// its longer prefix.
fn event_kind(key: &str) -> Option<Kind> {
    if key.starts_with("sleep") {
        return Some(Kind::Sleep);
    }
    if key.starts_with("runtime") {
        return Some(Kind::Runtime);
    }
    if key.starts_with("run") {
        return Some(Kind::Run);
    }
    if key.starts_with("timer") {
        return Some(Kind::Timer);
    }
    OTHER_EVENTS
        .iter()
        .find(|e| key.starts_with(*e))
        .map(|e| Kind::Other(e))
}
