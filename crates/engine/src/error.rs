//! Errors of the engine: bad workload specifications, impossible runs, broken invariants.

use std::fmt::Display;

use fairsim_balance::group::GroupError;

/// Everything that can go wrong when setting up or running a world.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The machine has no CPUs.
    #[error("machine: no CPUs; allowed: at least one CPU")]
    NoCpus,
    /// A workload specification could not be parsed.
    #[error("--workload: {0}")]
    Workload(#[from] SpecError),
    /// No workload was given.
    #[error("--workload: none given; allowed: schbench, hackbench, nanosleep, sysbench-cpu (e.g. --workload schbench:m=2,t=4)")]
    NoWorkload,
    /// A task's affinity mask names no CPU of the machine.
    #[error("workload task {task}: cpus_allowed is empty or names CPUs the machine does not have")]
    BadAffinity {
        /// The task's name.
        task: String,
    },
    /// The run would need more memory than the budget.
    #[error("{what}: {tasks} tasks on {cpus} CPUs need about {need_mib} MiB, more than the {budget_mib} MiB budget; allowed: fewer tasks or CPUs (or raise --memory-budget)")]
    TooBig {
        /// What asked for it.
        what: String,
        /// Task count.
        tasks: u64,
        /// CPU count.
        cpus: usize,
        /// Estimated need.
        need_mib: u64,
        /// The budget.
        budget_mib: u64,
    },
    /// A scenario file could not be read or parsed.
    #[error("scenario: {0}")]
    Scenario(#[from] ScenarioError),
    /// A run parameter is out of range.
    #[error("{field}: invalid value '{got}'; allowed: {allowed}")]
    Invalid {
        /// The option.
        field: String,
        /// What was given.
        got: String,
        /// What is allowed.
        allowed: String,
    },
    /// A run's configuration cannot be set up: its cgroups, autogroups, launch CPU,
    /// idle states, or a feature the kernel does not have.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Virtual time stopped: the world processed more events at one instant than any
    /// run that makes progress does (see `world::progress`).
    #[error("no progress: {events} events at t={at} without virtual time advancing, {queued} events queued; allowed: at most {limit} events at one instant ({per} per task and CPU, at least {min}) and {queue_limit} queued ({qtask} per task and {qcpu} per CPU within what --memory-budget leaves, at least {qmin}); {hint}",
        per = crate::world::EVENTS_PER_ENTITY, min = crate::world::MIN_EVENTS,
        qtask = crate::world::QUEUE_PER_TASK, qcpu = crate::world::QUEUE_PER_CPU,
        qmin = crate::world::MIN_QUEUE)]
    NoProgress {
        /// Events processed at the instant.
        events: u64,
        /// The instant.
        at: fairsim_des::time::Time,
        /// The most events allowed at one instant.
        limit: u64,
        /// Events queued.
        queued: u64,
        /// The most events the queue may hold.
        queue_limit: u64,
        /// What probably stopped time (the costs the run set to 0).
        hint: String,
    },
    /// The trace outgrew what the memory budget leaves for it.
    #[error("--trace: {records} events recorded by t={at} fill what the memory budget leaves for the trace; allowed: a shorter --trace-window (e.g. 1s..1.01s) or a larger --memory-budget")]
    TraceTooBig {
        /// Records kept.
        records: u64,
        /// When the budget ran out.
        at: fairsim_des::time::Time,
    },
    /// The machine's cpufreq policies cannot start under the governor.
    #[error(transparent)]
    Cpufreq(#[from] fairsim_balance::cpufreq::CpufreqError),
    /// The kernel refuses the `kernel.sched_energy_aware` write on this machine.
    #[error(transparent)]
    EnergyAware(#[from] fairsim_balance::energy::EnergyAwareRefused),
    /// The scheduler or the engine broke an invariant (a bug, reported by checks).
    #[error("invariant violated: {0}")]
    Invariant(#[from] InvariantError),
}

/// An invariant of the world or of its scheduler found broken (a bug): which one, with
/// the CPU, task and values it concerns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvariantError {
    /// The scheduler's runqueue invariants ([`fairsim_balance::Sched::check_invariants`]).
    #[error(transparent)]
    Sched(#[from] fairsim_balance::InvariantError),
    /// The next event is before the present.
    #[error("time went backwards: {next} after {now}")]
    TimeBackwards {
        /// The event's time.
        next: fairsim_des::time::Time,
        /// The present.
        now: fairsim_des::time::Time,
    },
    /// The engine and the scheduler disagree on a CPU's current task.
    #[error("cpu{cpu}: engine runs {engine:?}, scheduler {sched:?}")]
    CurrDiffers {
        /// The CPU.
        cpu: usize,
        /// The engine's current task.
        engine: Option<usize>,
        /// The scheduler's, as an engine task.
        sched: Option<usize>,
    },
    /// A task is current on two CPUs.
    #[error("task {task} current twice")]
    CurrentTwice {
        /// The task.
        task: usize,
    },
    /// A CPU runs a task that is not runnable (outside a newidle balance).
    #[error("cpu{cpu} runs task {task} in state {state}")]
    RunsNotRunnable {
        /// The CPU.
        cpu: usize,
        /// The task.
        task: usize,
        /// Its state, as the engine names it (`Blocked`).
        state: &'static str,
    },
    /// A CPU executes a segment of a task that is not its current one.
    #[error("cpu{cpu}: segment of task {task} but current {curr:?}")]
    SegmentNotCurrent {
        /// The CPU.
        cpu: usize,
        /// The segment's task.
        task: usize,
        /// The CPU's current task.
        curr: Option<usize>,
    },
    /// A runnable task is not on a runqueue.
    #[error("task {task} runnable but not queued")]
    RunnableNotQueued {
        /// The task.
        task: usize,
    },
    /// A task is queued on a CPU its affinity does not allow.
    #[error("task {task} queued on disallowed cpu{cpu}")]
    QueuedDisallowed {
        /// The task.
        task: usize,
        /// The CPU.
        cpu: usize,
    },
    /// Virtual time passed the run's duration.
    #[error("time beyond the run")]
    BeyondRun,
    /// A cgroup became another task group than its declaration order gives.
    #[error("cgroup {path} was created as task group {made}, expected {expected}")]
    CgroupId {
        /// The cgroup's path.
        path: String,
        /// The task group it became.
        made: usize,
        /// The one expected.
        expected: usize,
    },
    /// An autogroup became another task group than expected.
    #[error("autogroup {autogroup} was created as task group {made}, expected {expected}")]
    AutogroupId {
        /// The autogroup (1 for the first workload's).
        autogroup: usize,
        /// The task group it became.
        made: usize,
        /// The one expected.
        expected: usize,
    },
}

/// A run's configuration that cannot be set up: each names the option or file it comes
/// from (`field`), what was given and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Creating a cgroup (with its parents) would pass the most cgroups modelled.
    #[error("{field}: creating {path} makes more than {max} cgroups; allowed: at most {max}, parents included")]
    TooManyCgroups {
        /// The declaration or join that creates it.
        field: String,
        /// The cgroup.
        path: String,
        /// The most cgroups.
        max: usize,
    },
    /// A declaration's path is not a cgroup path.
    #[error("{field}: invalid path '{path}' ({why}); allowed: {allowed}", allowed = PATH_ALLOWED)]
    CgroupPath {
        /// The declaration.
        field: String,
        /// The path given.
        path: String,
        /// Why it is not one.
        why: PathError,
    },
    /// A declaration names the root cgroup.
    #[error("{field}: '/' is the root cgroup, which always exists and whose cpu.weight cannot be written (EINVAL); allowed: a child path such as /a")]
    DeclaresRoot {
        /// The declaration.
        field: String,
    },
    /// A declaration's write is refused.
    #[error("{field}: {key}")]
    CgroupKey {
        /// The declaration.
        field: String,
        /// The refused write.
        key: KeyError,
    },
    /// A path is declared twice by the same source.
    #[error("{field}: {path} is declared twice; allowed: each path once (its keys comma-separated in one declaration)")]
    DeclaredTwice {
        /// The second declaration.
        field: String,
        /// The path.
        path: String,
    },
    /// Task groups on a kernel whose group scheduling is not ported.
    #[error("{field}: task groups are modelled for --kernel 6.12 only (Linux {release}'s group scheduling is not ported); allowed: --kernel 6.12, or {instead}")]
    GroupsNeedKernel {
        /// What asks for a task group.
        field: String,
        /// The kernel's release.
        release: &'static str,
        /// What to leave out instead (`no --cgroup`).
        instead: &'static str,
    },
    /// A workload joins a cgroup that no declaration makes.
    #[error("{field}: '{path}' is not a declared cgroup; allowed: {allowed} (declare others with --cgroup /PATH or a scenario's [cgroup.\"/PATH\"] table)")]
    NotDeclared {
        /// The join.
        field: String,
        /// The path joined.
        path: String,
        /// The declared paths.
        allowed: String,
    },
    /// A group's `cpuset.cpus` is not a CPU list of the machine.
    #[error("{field}: {path}: cpuset.cpus: invalid value '{got}' ({why}); allowed: a CPU list of CPUs 0-{last}, e.g. 0-3,8-11")]
    CpusetList {
        /// The declaration.
        field: String,
        /// The group.
        path: String,
        /// The list given.
        got: String,
        /// Why it is not one.
        why: fairsim_topology::CpuListError,
        /// The machine's last CPU.
        last: usize,
    },
    /// A group's `cpuset.cpus` names no CPU.
    #[error("{field}: {path}: cpuset.cpus: '{got}' names no CPU; allowed: a non-empty CPU list of CPUs 0-{last} (or no cpuset.cpus, to take the parent's CPUs)")]
    CpusetEmpty {
        /// The declaration.
        field: String,
        /// The group.
        path: String,
        /// The list given.
        got: String,
        /// The machine's last CPU.
        last: usize,
    },
    /// A partition root without its own `cpuset.cpus`.
    #[error("{field}: {path}: cpuset.cpus.partition=root needs the group's own cpuset.cpus; allowed: cpuset.cpus=LIST with it")]
    PartitionWithoutCpus {
        /// The declaration.
        field: String,
        /// The group.
        path: String,
    },
    /// A partition root below another group.
    #[error("{field}: {path}: cpuset.cpus.partition=root below another group is not modelled (nested partitions); allowed: root partitions on children of /")]
    NestedPartition {
        /// The declaration.
        field: String,
        /// The group.
        path: String,
    },
    /// The partitions overlap or leave no CPU.
    #[error("{0}")]
    Partitions(fairsim_topology::TopologyError),
    /// A group's `cpuset.cpus` shares no CPU with its parent's effective CPUs.
    #[error("{field}: {path}: cpuset.cpus={cpus} shares no CPU with its parent's effective CPUs ({p}); allowed: CPUs of {a}",
        p = parent.as_deref().unwrap_or("none"), a = parent.as_deref().unwrap_or("another parent"))]
    NoEffectiveCpu {
        /// The declaration.
        field: String,
        /// The group.
        path: String,
        /// Its `cpuset.cpus`.
        cpus: String,
        /// The parent's effective CPUs, if any.
        parent: Option<String>,
    },
    /// The scheduler refuses a group's creation or write.
    #[error("{field}: {path}: {err}")]
    Group {
        /// The declaration.
        field: String,
        /// The group.
        path: String,
        /// The kernel's refusal.
        err: GroupError,
    },
    /// Autogroups on a kernel whose group scheduling is not ported.
    #[error("{0}")]
    AutogroupKernel(fairsim_balance::TunableError),
    /// A declared cgroup has an autogroup's path.
    #[error("{field}: {path} is the name autogroup {id} goes by with kernel.sched_autogroup_enabled=1, and the outputs name groups by path; allowed: another path, or kernel.sched_autogroup_enabled=0")]
    AutogroupPath {
        /// The declaration.
        field: String,
        /// The path.
        path: String,
        /// The autogroup.
        id: u64,
    },
    /// The cgroups and autogroups together pass the most task groups modelled.
    #[error("--sysctl: kernel.sched_autogroup_enabled=1 gives each of the {sessions} workloads an autogroup, which makes {total} task groups with the {cgroups} cgroups; allowed: at most {max} cgroups and autogroups together")]
    TooManyAutogroups {
        /// Workloads (sessions).
        sessions: usize,
        /// Task groups in all.
        total: usize,
        /// Declared cgroups.
        cgroups: usize,
        /// The most task groups.
        max: usize,
    },
    /// The scheduler refuses an autogroup.
    #[error("autogroup {autogroup}: {err}")]
    Autogroup {
        /// The autogroup (1 for the first).
        autogroup: usize,
        /// The kernel's refusal.
        err: GroupError,
    },
    /// `--launch-cpu` names no CPU of the machine.
    #[error("--launch-cpu: '{got}'; allowed: random or a CPU number from 0 to {last}")]
    LaunchCpu {
        /// What was given.
        got: String,
        /// The machine's last CPU.
        last: usize,
    },
    /// A machine file's `idle_states` do not parse.
    #[error("machine {machine}: {err}")]
    MachineIdleStates {
        /// The machine.
        machine: String,
        /// Why.
        err: fairsim_cpuidle::IdleSpecError,
    },
    /// The idle-state table covers another number of CPUs than the machine has.
    #[error("--idle-states: the table covers {covers} CPUs; allowed: one entry per CPU of the {cpus}-CPU machine")]
    IdleTableCpus {
        /// CPUs the table covers.
        covers: usize,
        /// CPUs of the machine.
        cpus: usize,
    },
    /// Utilization clamps on a kernel without them.
    #[error("uclamp: Linux {release} had no utilization clamps (uclamp came in 5.3); allowed: --kernel 6.5 or 6.12, or no uclamp=, util_min or util_max")]
    NoUclamp {
        /// The kernel's release.
        release: &'static str,
    },
    /// SCHED_BATCH or SCHED_IDLE on a kernel whose rules for them are not ported.
    #[error("policy: Linux {release}'s SCHED_BATCH and SCHED_IDLE rules are not ported (fairsim models them for 6.12); allowed: --kernel 6.12, or no policy=, chrt or rt-app policy SCHED_IDLE")]
    PolicyKernel {
        /// The kernel's release.
        release: &'static str,
    },
}

impl EngineError {
    /// A cgroup error as the declaration or join `field` gives it: the field a
    /// [`ConfigError::TooManyCgroups`] names becomes `field`.
    pub(crate) fn for_field(self, field: &str) -> EngineError {
        match self {
            EngineError::Config(ConfigError::TooManyCgroups { path, max, .. }) => {
                ConfigError::TooManyCgroups {
                    field: field.to_string(),
                    path,
                    max,
                }
                .into()
            }
            other => other,
        }
    }
}

/// A workload specification that cannot be run (`--workload`, a scenario's `workload`):
/// the tool, the key or option it names, what was given and what is allowed. The
/// workloads crate fills these; the engine knows no tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// A key's value out of what the tool takes.
    #[error("{tool}: {key}: invalid value '{got}'; allowed: {allowed}")]
    Invalid {
        /// The tool (`schbench`, or as typed: `schbench@2016`).
        tool: String,
        /// The key or option (`t`, or as typed: `-t`).
        key: String,
        /// What was given.
        got: String,
        /// What is allowed.
        allowed: String,
    },
    /// A key's value out of what the tool takes, and why.
    #[error("{tool}: {key}: invalid value '{got}' ({why}); allowed: {allowed}")]
    InvalidBecause {
        /// The tool.
        tool: String,
        /// The key or option.
        key: String,
        /// What was given.
        got: String,
        /// Why it is refused.
        why: String,
        /// What is allowed.
        allowed: String,
    },
    /// A key given twice.
    #[error("{tool}: {key}: given twice; allowed: {allowed}")]
    GivenTwice {
        /// The tool.
        tool: String,
        /// The key or option.
        key: String,
        /// What is allowed.
        allowed: String,
    },
    /// A key the tool needs is missing.
    #[error("{tool}: {key}: missing; allowed: {allowed}")]
    Missing {
        /// The tool.
        tool: String,
        /// The key or option.
        key: String,
        /// What is allowed.
        allowed: String,
    },
    /// A key the tool does not have.
    #[error("{tool}: unknown key '{key}'; allowed: {allowed}")]
    UnknownKey {
        /// The tool.
        tool: String,
        /// The key given.
        key: String,
        /// The keys allowed.
        allowed: String,
    },
    /// A workload name fairsim does not model.
    #[error("unknown workload '{got}'; allowed: {allowed}")]
    UnknownWorkload {
        /// The name given.
        got: String,
        /// The names allowed.
        allowed: String,
    },
    /// A command line whose program fairsim does not model.
    #[error("unknown program '{got}' in the command line '{line}'; allowed: {allowed}")]
    UnknownProgram {
        /// The program.
        got: String,
        /// The command line.
        line: String,
        /// The programs allowed.
        allowed: String,
    },
    /// Words a tool's command line does not take.
    #[error("{tool}: unexpected argument '{got}'; allowed: {allowed}")]
    Unexpected {
        /// The tool.
        tool: String,
        /// The words.
        got: String,
        /// What the tool takes.
        allowed: String,
    },
    /// A key or option refused for another reason than its value's form (a
    /// combination, a range that depends on others, a feature not modelled).
    #[error("{tool}: {key}: {detail}")]
    Key {
        /// The tool.
        tool: String,
        /// The key or option.
        key: String,
        /// What is wrong and what is allowed.
        detail: String,
    },
    /// A tool, launcher or command line refused as a whole (an option not modelled, a
    /// missing argument, exclusive options).
    #[error("{tool}: {detail}")]
    Refused {
        /// What is refused: the tool or launcher (`cyclictest`, `taskset`), or the
        /// command line quoted.
        tool: String,
        /// What is wrong and what is allowed.
        detail: String,
    },
    /// A tool's or launcher's command line refused, with its usage.
    #[error("{tool}: {detail}; allowed: {allowed}")]
    Usage {
        /// The tool or launcher (`taskset`, `rt-app`).
        tool: String,
        /// What is wrong.
        detail: String,
        /// Its usage (`taskset -c LIST COMMAND`).
        allowed: String,
    },
    /// A tool's input file refused (unreadable, not its format).
    #[error("{tool} {file}: {detail}")]
    File {
        /// The tool.
        tool: String,
        /// The file.
        file: String,
        /// What is wrong and what is allowed.
        detail: String,
    },
    /// An entry of a tool's input file refused.
    #[error("{tool} {file}: {path}: {detail}")]
    FileEntry {
        /// The tool.
        tool: String,
        /// The file.
        file: String,
        /// The entry's path in the file (`tasks.t1.policy`).
        path: String,
        /// What is wrong and what is allowed.
        detail: String,
    },
}

impl SpecError {
    /// [`SpecError::Invalid`].
    pub fn invalid(
        tool: impl Display,
        key: impl Display,
        got: impl Display,
        allowed: impl Display,
    ) -> Self {
        SpecError::Invalid {
            tool: tool.to_string(),
            key: key.to_string(),
            got: got.to_string(),
            allowed: allowed.to_string(),
        }
    }

    /// [`SpecError::InvalidBecause`].
    pub fn invalid_because(
        tool: impl Display,
        key: impl Display,
        got: impl Display,
        why: impl Display,
        allowed: impl Display,
    ) -> Self {
        SpecError::InvalidBecause {
            tool: tool.to_string(),
            key: key.to_string(),
            got: got.to_string(),
            why: why.to_string(),
            allowed: allowed.to_string(),
        }
    }

    /// [`SpecError::GivenTwice`].
    pub fn given_twice(tool: impl Display, key: impl Display, allowed: impl Display) -> Self {
        SpecError::GivenTwice {
            tool: tool.to_string(),
            key: key.to_string(),
            allowed: allowed.to_string(),
        }
    }

    /// [`SpecError::Missing`].
    pub fn missing(tool: impl Display, key: impl Display, allowed: impl Display) -> Self {
        SpecError::Missing {
            tool: tool.to_string(),
            key: key.to_string(),
            allowed: allowed.to_string(),
        }
    }

    /// [`SpecError::Key`].
    pub fn key(tool: impl Display, key: impl Display, detail: impl Display) -> Self {
        SpecError::Key {
            tool: tool.to_string(),
            key: key.to_string(),
            detail: detail.to_string(),
        }
    }

    /// [`SpecError::Refused`].
    pub fn refused(tool: impl Display, detail: impl Display) -> Self {
        SpecError::Refused {
            tool: tool.to_string(),
            detail: detail.to_string(),
        }
    }

    /// [`SpecError::File`].
    pub fn file(tool: impl Display, file: impl Display, detail: impl Display) -> Self {
        SpecError::File {
            tool: tool.to_string(),
            file: file.to_string(),
            detail: detail.to_string(),
        }
    }

    /// [`SpecError::FileEntry`].
    pub fn file_entry(
        tool: impl Display,
        file: impl Display,
        path: impl Display,
        detail: impl Display,
    ) -> Self {
        SpecError::FileEntry {
            tool: tool.to_string(),
            file: file.to_string(),
            path: path.to_string(),
            detail: detail.to_string(),
        }
    }

    /// The error with every text it carries passed through `f` (to escape what a
    /// message must not hold, such as line breaks).
    pub fn map_text(self, f: impl Fn(&str) -> String) -> SpecError {
        use SpecError::*;
        match self {
            Invalid {
                tool,
                key,
                got,
                allowed,
            } => Invalid {
                tool: f(&tool),
                key: f(&key),
                got: f(&got),
                allowed: f(&allowed),
            },
            InvalidBecause {
                tool,
                key,
                got,
                why,
                allowed,
            } => InvalidBecause {
                tool: f(&tool),
                key: f(&key),
                got: f(&got),
                why: f(&why),
                allowed: f(&allowed),
            },
            GivenTwice { tool, key, allowed } => GivenTwice {
                tool: f(&tool),
                key: f(&key),
                allowed: f(&allowed),
            },
            Missing { tool, key, allowed } => Missing {
                tool: f(&tool),
                key: f(&key),
                allowed: f(&allowed),
            },
            UnknownKey { tool, key, allowed } => UnknownKey {
                tool: f(&tool),
                key: f(&key),
                allowed: f(&allowed),
            },
            UnknownWorkload { got, allowed } => UnknownWorkload {
                got: f(&got),
                allowed: f(&allowed),
            },
            UnknownProgram { got, line, allowed } => UnknownProgram {
                got: f(&got),
                line: f(&line),
                allowed: f(&allowed),
            },
            Unexpected { tool, got, allowed } => Unexpected {
                tool: f(&tool),
                got: f(&got),
                allowed: f(&allowed),
            },
            Key { tool, key, detail } => Key {
                tool: f(&tool),
                key: f(&key),
                detail: f(&detail),
            },
            Refused { tool, detail } => Refused {
                tool: f(&tool),
                detail: f(&detail),
            },
            Usage {
                tool,
                detail,
                allowed,
            } => Usage {
                tool: f(&tool),
                detail: f(&detail),
                allowed: f(&allowed),
            },
            File { tool, file, detail } => File {
                tool: f(&tool),
                file: f(&file),
                detail: f(&detail),
            },
            FileEntry {
                tool,
                file,
                path,
                detail,
            } => FileEntry {
                tool: f(&tool),
                file: f(&file),
                path: f(&path),
                detail: f(&detail),
            },
        }
    }

    /// The error of `tool`'s key parser as the user typed the command: the tool named
    /// `shown`, and a key in `typed` (`(key, as typed)`, the last match wins) named as
    /// typed. Errors of other tools, and of files, are left as they are.
    pub fn renamed(self, tool: &str, shown: &str, typed: &[(&str, String)]) -> SpecError {
        use SpecError::*;
        let as_typed = |key: String| {
            typed
                .iter()
                .rev()
                .find(|(k, _)| *k == key)
                .map_or(key, |(_, t)| t.clone())
        };
        let ours = |t: &str| t == tool;
        match self {
            Invalid {
                tool: t,
                key,
                got,
                allowed,
            } if ours(&t) => Invalid {
                tool: shown.to_string(),
                key: as_typed(key),
                got,
                allowed,
            },
            InvalidBecause {
                tool: t,
                key,
                got,
                why,
                allowed,
            } if ours(&t) => InvalidBecause {
                tool: shown.to_string(),
                key: as_typed(key),
                got,
                why,
                allowed,
            },
            GivenTwice {
                tool: t,
                key,
                allowed,
            } if ours(&t) => GivenTwice {
                tool: shown.to_string(),
                key: as_typed(key),
                allowed,
            },
            Missing {
                tool: t,
                key,
                allowed,
            } if ours(&t) => Missing {
                tool: shown.to_string(),
                key: as_typed(key),
                allowed,
            },
            UnknownKey {
                tool: t,
                key,
                allowed,
            } if ours(&t) => UnknownKey {
                tool: shown.to_string(),
                key,
                allowed,
            },
            Unexpected {
                tool: t,
                got,
                allowed,
            } if ours(&t) => Unexpected {
                tool: shown.to_string(),
                got,
                allowed,
            },
            Key {
                tool: t,
                key,
                detail,
            } if ours(&t) => Key {
                tool: shown.to_string(),
                key: as_typed(key),
                detail,
            },
            Refused { tool: t, detail } if ours(&t) => {
                // A detail that starts with a key (`KEY: ...`) names it as typed.
                for (key, typed) in typed.iter().rev() {
                    if let Some(tail) = detail.strip_prefix(&format!("{key}: ")) {
                        return Key {
                            tool: shown.to_string(),
                            key: typed.clone(),
                            detail: tail.to_string(),
                        };
                    }
                }
                Refused {
                    tool: shown.to_string(),
                    detail,
                }
            }
            Usage {
                tool: t,
                detail,
                allowed,
            } if ours(&t) => Refused {
                tool: t,
                detail: format!("{detail}; allowed: {allowed}"),
            }
            .renamed(tool, shown, typed),
            other => other,
        }
    }
}

/// A scenario file that cannot be read or parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{path}: {why}")]
    Read {
        /// The file.
        path: String,
        /// Why (the operating system's reason, or the size limit).
        why: String,
    },
    /// The file is not TOML, or has a key or value the scenario does not take.
    #[error("{message}; allowed keys: {allowed}")]
    Syntax {
        /// The TOML parser's message, on one line.
        message: String,
        /// The keys a scenario takes.
        allowed: &'static str,
    },
    /// More than one machine source is set.
    #[error("{given} are all set; allowed: at most one of topology, smp, machine", given = given.join(" and "))]
    MachineTwice {
        /// The keys set.
        given: Vec<&'static str>,
    },
    /// `numa_distance` without `smp`.
    #[error("numa_distance without smp; allowed: numa_distance only with smp")]
    NumaWithoutSmp,
}

/// What a path may be, for the errors.
pub const PATH_ALLOWED: &str = "an absolute path such as /a or /a/b, each component 1 to 255 letters, digits or '-', '_', '.', '@', '+' (not '.' or '..')";

/// The cpu controller files a declaration may write, for the errors.
pub const KEYS_ALLOWED: &str = "cpu.weight=N (1 to 10000) or cpu.weight.nice=N (-20 to 19), cpu.idle=0|1, cpu.max='QUOTA_US|max [PERIOD_US]', cpu.max.burst=US, cpuset.cpus=LIST, cpuset.cpus.partition=root|member";

/// Why a path is not a cgroup path ([`crate::cgroup::check_path`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// It does not start with `/`.
    #[error("not absolute")]
    NotAbsolute,
    /// It is longer than the most bytes a path may have.
    #[error("longer than {max} bytes")]
    TooLong {
        /// The most bytes.
        max: usize,
    },
    /// Two `/` in a row, or one at the end.
    #[error("an empty component")]
    EmptyComponent,
    /// A component `.` or `..`.
    #[error("the component '{name}'")]
    DotComponent {
        /// The component.
        name: String,
    },
    /// A component longer than the most bytes a name may have.
    #[error("a component longer than {max} bytes")]
    ComponentTooLong {
        /// The most bytes.
        max: usize,
    },
    /// A character a name may not have.
    #[error("the character {c:?}")]
    Character {
        /// The character.
        c: char,
    },
}

/// A refused write of a cgroup declaration ([`crate::cgroup::Cgroups::declare`]): the file named, what
/// was given and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// A value the file does not take.
    #[error("{key}: invalid value '{got}'; allowed: {allowed}")]
    Invalid {
        /// The file.
        key: &'static str,
        /// What was given.
        got: String,
        /// What is allowed.
        allowed: &'static str,
    },
    /// A value the kernel refuses with an errno.
    #[error("{key}: invalid value '{got}' ({errno}); allowed: {allowed}")]
    Refused {
        /// The file.
        key: &'static str,
        /// What was given.
        got: String,
        /// The errno (`EINVAL`).
        errno: &'static str,
        /// What is allowed.
        allowed: &'static str,
    },
    /// A `cpuset.cpus` that is not a CPU list.
    #[error("cpuset.cpus: invalid value '{got}' ({why}); allowed: a CPU list such as 0-3,8-11")]
    CpuList {
        /// What was given.
        got: String,
        /// Why it is not one.
        why: fairsim_topology::CpuListError,
    },
    /// A file written twice.
    #[error("{key}: given twice; allowed: each file once")]
    GivenTwice {
        /// The file.
        key: String,
    },
    /// `cpu.uclamp.min` or `cpu.uclamp.max`.
    #[error("{key}: group utilization clamps are not modelled yet; allowed: {KEYS_ALLOWED} (or uclamp= on the workload)")]
    Uclamp {
        /// The file.
        key: String,
    },
    /// `cpuset.cpus.partition=isolated`.
    #[error("cpuset.cpus.partition: 'isolated' (a partition without load balancing) is not modelled; allowed: root or member")]
    Isolated,
    /// Another file of the cpuset controller.
    #[error("{key}: this cpuset controller file is not modelled; allowed: {KEYS_ALLOWED}")]
    CpusetFile {
        /// The file.
        key: String,
    },
    /// A file of no controller modelled.
    #[error("'{key}' is not a cpu controller file fairsim models; allowed: {KEYS_ALLOWED}")]
    UnknownFile {
        /// The file.
        key: String,
    },
    /// A weight out of the kernel's range.
    #[error("{0}")]
    Weight(GroupError),
    /// Both `cpu.weight` and `cpu.weight.nice`, or one twice.
    #[error("{key}: given after {first}, which sets the same weight; allowed: one of cpu.weight or cpu.weight.nice, once")]
    WeightTwice {
        /// The later file.
        key: String,
        /// The earlier one.
        first: String,
    },
}
