//! The scheduler's tunables under their kernel names, where each era kept them:
//! `/proc/sys/kernel/sched_*` sysctls up to 5.12, `/sys/kernel/debug/sched/*` from 5.13
//! (which moved them there), and 6.6's EEVDF set (`base_slice_ns` instead of the latency
//! and granularity knobs). Each tunable is declared once in [`DECLARATIONS`] with its
//! homes per era: the name, the place and the handler the kernel ran on a write.
//!
//! What was read, per era (the trees of [`crate::kernel`]):
//!
//! - 3.9, 4.5, 4.15, 4.16 (`kernel/sysctl.c`'s `kern_table`): `sched_latency_ns` and
//!   `sched_min_granularity_ns` (100000 to 1000000000, `min_sched_granularity_ns` /
//!   `max_sched_granularity_ns`), `sched_wakeup_granularity_ns` (0 to 1000000000) and
//!   `sched_tunable_scaling` (0 to 2) go through `sched_proc_update_handler`
//!   (`proc_dointvec_minmax`, then `sched_nr_latency = DIV_ROUND_UP(latency,
//!   min_granularity)` and every `normalized_sysctl_X = sysctl_X / factor` with the
//!   factor of the scaling now in force); `sched_migration_cost_ns`, `sched_nr_migrate`
//!   and `sched_child_runs_first` are plain `proc_dointvec` (any int, stored in an
//!   `unsigned int`: -1 reads as 4294967295, which `task_hot` takes as "always hot").
//! - 6.5 (`kernel/sched/debug.c`'s `sched_init_debug`): `latency_ns`,
//!   `min_granularity_ns`, `wakeup_granularity_ns`, `migration_cost_ns` and `nr_migrate`
//!   are `debugfs_create_u32` files (a write stores the value and nothing else: no
//!   `sched_nr_latency`, no normalized values); `tunable_scaling` is `sched_scaling_write`
//!   (`kstrtouint` base 10, below `SCHED_TUNABLESCALING_END`, then
//!   `sched_update_scaling`, which re-derives `sched_nr_latency` and the normalized
//!   values). `sched_child_runs_first` is still a sysctl (`sched_fair_sysctls`).
//! - 6.12: `base_slice_ns`, `migration_cost_ns` and `nr_migrate` are `debugfs_create_u32`;
//!   `tunable_scaling` re-derives `normalized_sysctl_sched_base_slice`. No
//!   `sched_child_runs_first`.
//! - Every era: `sched_autogroup_enabled` (`CONFIG_SCHED_AUTOGROUP`, since 2.6.38),
//!   `proc_dointvec_minmax` over 0..1, in `kern_table` up to 5.x and in autogroup.c's
//!   own `sched_autogroup_sysctls` in 6.5 and 6.12. fairsim boots it at 0, where a
//!   distribution kernel boots it at 1 (unless `noautogroup`), so that a run without
//!   the write keeps its task placement flat ([`TunableState::boot`]); a 1 is refused
//!   on the CFS kernels, whose group scheduling is not ported.
//!
//! A write happens after boot, as one to the running kernel does: `sched_init` has set
//! every runqueue's `avg_idle` and `max_idle_balance_cost` from the boot value of
//! `sysctl_sched_migration_cost` ([`crate::rq::SYSCTL_SCHED_MIGRATION_COST`]) already.
//! The normalized values only matter to `update_sysctl` on CPU hotplug, which fairsim
//! does not model; they are kept so that the handlers read as the kernel's.

use crate::kernel::{CfsTunables, Kernel};

/// `SCHED_CAPACITY_SCALE`, the uclamp sysctls' upper bound.
const UCLAMP_SCALE: u32 = fairsim_pelt::SCHED_CAPACITY_SCALE as u32;

/// Where a tunable lives in an era.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `/proc/sys/kernel/NAME`, written with `--sysctl kernel.NAME=V`.
    Sysctl,
    /// `/sys/kernel/debug/sched/NAME`, written with `--debugfs NAME=V`.
    Debugfs,
}

impl Place {
    /// The option that writes to this place.
    pub fn option(self) -> &'static str {
        match self {
            Place::Sysctl => "--sysctl",
            Place::Debugfs => "--debugfs",
        }
    }

    /// How the option spells `name` (`kernel.` before a sysctl's).
    fn spell(self, name: &str) -> String {
        match self {
            Place::Sysctl => format!("kernel.{name}"),
            Place::Debugfs => name.to_string(),
        }
    }
}

/// The kernel function that takes a write, which decides what is accepted and what else
/// the write changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handler {
    /// `proc_dointvec`: any `int` (base-0 text, as `proc_get_long` reads it), stored in
    /// the `unsigned int` as its bit pattern.
    ProcDointvec,
    /// `sched_proc_update_handler` (before 5.13): `proc_dointvec_minmax` with the table's
    /// `extra1`/`extra2`, then `sched_nr_latency` and the normalized values re-derived.
    SchedProcUpdate {
        /// `*extra1`.
        min: i64,
        /// `*extra2`.
        max: i64,
    },
    /// `sched_energy_aware_handler` (topology.c): `proc_dointvec_minmax` over 0..1; in
    /// 6.12 a write on a machine where EAS is not possible fails with `EOPNOTSUPP` (6.5
    /// has no such refusal; checked when
    /// the machine is known, [`crate::sched::Sched::check_energy_aware_write`]), and a
    /// change rebuilds the perf domains.
    EnergyAware,
    /// `debugfs_create_u32`: `kstrtoull` base 0; the value is stored and nothing else
    /// runs. The kernel keeps the low 32 bits of a larger value; fairsim refuses one.
    DebugfsU32,
    /// `sched_scaling_write`: `kstrtouint` base 10, below `SCHED_TUNABLESCALING_END` (3),
    /// then `sched_update_scaling`.
    DebugfsScaling,
    /// `proc_dointvec_minmax` with `extra1 = SYSCTL_ONE` and no maximum, as
    /// `sched_cfs_bandwidth_slice_us` takes a write: 1 to `INT_MAX`, `EINVAL` below.
    MinOne,
    /// `proc_dointvec_minmax` over `extra1..extra2` = 0..1 and nothing else, as
    /// `sched_autogroup_enabled` takes a write (the new value is read at each fork, by
    /// `autogroup_task_group`); a 1 on a CFS kernel is refused
    /// ([`autogroup_era_error`]).
    Autogroup,
    /// `sysctl_sched_uclamp_handler` (core.c, the same in 6.5 and 6.12.117):
    /// `proc_dointvec` into the `unsigned int`,
    /// then `EINVAL` (and the old values back) unless `util_clamp_min <= util_clamp_max
    /// <= 1024` and `util_clamp_min_rt_default <= 1024`; a changed value turns the
    /// `sched_uclamp_used` key on and updates `uclamp_default`.
    Uclamp,
}

/// One tunable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tunable {
    /// `sysctl_sched_latency`: CFS's targeted preemption latency.
    Latency,
    /// `sysctl_sched_min_granularity`: CFS's minimal slice.
    MinGranularity,
    /// `sysctl_sched_wakeup_granularity`: how far ahead a wakee must be to preempt.
    WakeupGranularity,
    /// `sysctl_sched_base_slice`: EEVDF's slice.
    BaseSlice,
    /// `sysctl_sched_migration_cost`: how long a task stays cache hot, and the idle time
    /// below which a newly idle CPU does not balance.
    MigrationCost,
    /// `sysctl_sched_nr_migrate`: the most tasks one balance moves (`loop_max`).
    NrMigrate,
    /// `sysctl_sched_tunable_scaling`: 0 none, 1 log (default), 2 linear.
    TunableScaling,
    /// `sysctl_sched_child_runs_first`: a forked child runs before its parent.
    ChildRunsFirst,
    /// `sysctl_sched_energy_aware`: energy-aware scheduling where it is possible (1, the
    /// default) or never (0).
    EnergyAware,
    /// `sysctl_sched_uclamp_util_min`: the system's cap on every task's minimum clamp
    /// (`uclamp_default[UCLAMP_MIN]`, 1024 at boot).
    UclampMin,
    /// `sysctl_sched_uclamp_util_max`: the system's cap on every task's maximum clamp
    /// (`uclamp_default[UCLAMP_MAX]`, 1024 at boot).
    UclampMax,
    /// `sysctl_sched_uclamp_util_min_rt_default`: the minimum clamp of RT tasks without
    /// one of their own (1024 at boot).
    UclampMinRtDefault,
    /// `sysctl_sched_autogroup_enabled`: a task forked into the root task group runs in
    /// its session's autogroup (1) or in the root (0, fairsim's boot value).
    AutogroupEnabled,
    /// `sysctl_sched_cfs_bandwidth_slice` (us): what a group runqueue under `cpu.max`
    /// takes from its group's pool at a time (5000 at boot).
    CfsBandwidthSlice,
}

/// Where one era range kept a tunable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Home {
    /// The first era of the range.
    pub from: Kernel,
    /// The last era of the range.
    pub to: Kernel,
    /// sysctl or debugfs.
    pub place: Place,
    /// The file's name (without `kernel.` for a sysctl).
    pub name: &'static str,
    /// The kernel function that takes a write.
    pub handler: Handler,
}

/// One tunable's declaration: its homes per era, and what became of it where it is gone.
#[derive(Debug, Clone, Copy)]
pub struct TunableDecl {
    /// The tunable.
    pub tunable: Tunable,
    /// Where each era range kept it.
    pub homes: &'static [Home],
    /// What the eras without it had instead, for the error of a write to one of them.
    pub gone: &'static str,
}

/// `min_sched_granularity_ns` .. `max_sched_granularity_ns` of kernel/sysctl.c.
const GRANULARITY: Handler = Handler::SchedProcUpdate {
    min: 100_000,
    max: 1_000_000_000,
};

/// The eras whose tunables were sysctls.
const fn sysctl(name: &'static str, handler: Handler) -> Home {
    Home {
        from: Kernel::V3_9,
        to: Kernel::V4_16,
        place: Place::Sysctl,
        name,
        handler,
    }
}

/// A debugfs home from `from` to `to`.
const fn debugfs(from: Kernel, to: Kernel, name: &'static str, handler: Handler) -> Home {
    Home {
        from,
        to,
        place: Place::Debugfs,
        name,
        handler,
    }
}

/// Every tunable fairsim models, declared once.
pub const DECLARATIONS: &[TunableDecl] = &[
    TunableDecl {
        tunable: Tunable::Latency,
        homes: &[
            sysctl("sched_latency_ns", GRANULARITY),
            debugfs(
                Kernel::V6_5,
                Kernel::V6_5,
                "latency_ns",
                Handler::DebugfsU32,
            ),
        ],
        gone: "6.6 replaced it with debugfs base_slice_ns",
    },
    TunableDecl {
        tunable: Tunable::MinGranularity,
        homes: &[
            sysctl("sched_min_granularity_ns", GRANULARITY),
            debugfs(
                Kernel::V6_5,
                Kernel::V6_5,
                "min_granularity_ns",
                Handler::DebugfsU32,
            ),
        ],
        gone: "6.6 replaced it with debugfs base_slice_ns",
    },
    TunableDecl {
        tunable: Tunable::WakeupGranularity,
        homes: &[
            sysctl(
                "sched_wakeup_granularity_ns",
                Handler::SchedProcUpdate {
                    min: 0,
                    max: 1_000_000_000,
                },
            ),
            debugfs(
                Kernel::V6_5,
                Kernel::V6_5,
                "wakeup_granularity_ns",
                Handler::DebugfsU32,
            ),
        ],
        gone: "6.6's EEVDF has no wakeup granularity; its slice is debugfs base_slice_ns",
    },
    TunableDecl {
        tunable: Tunable::BaseSlice,
        homes: &[debugfs(
            Kernel::V6_12,
            Kernel::V6_12,
            "base_slice_ns",
            Handler::DebugfsU32,
        )],
        gone: "it came with 6.6's EEVDF; CFS kernels have latency and min_granularity instead",
    },
    TunableDecl {
        tunable: Tunable::MigrationCost,
        homes: &[
            sysctl("sched_migration_cost_ns", Handler::ProcDointvec),
            debugfs(
                Kernel::V6_5,
                Kernel::V6_12,
                "migration_cost_ns",
                Handler::DebugfsU32,
            ),
        ],
        gone: "",
    },
    TunableDecl {
        tunable: Tunable::NrMigrate,
        homes: &[
            sysctl("sched_nr_migrate", Handler::ProcDointvec),
            debugfs(
                Kernel::V6_5,
                Kernel::V6_12,
                "nr_migrate",
                Handler::DebugfsU32,
            ),
        ],
        gone: "",
    },
    TunableDecl {
        tunable: Tunable::TunableScaling,
        homes: &[
            sysctl(
                "sched_tunable_scaling",
                Handler::SchedProcUpdate { min: 0, max: 2 },
            ),
            debugfs(
                Kernel::V6_5,
                Kernel::V6_12,
                "tunable_scaling",
                Handler::DebugfsScaling,
            ),
        ],
        gone: "",
    },
    TunableDecl {
        tunable: Tunable::ChildRunsFirst,
        homes: &[Home {
            from: Kernel::V3_9,
            to: Kernel::V6_5,
            place: Place::Sysctl,
            name: "sched_child_runs_first",
            handler: Handler::ProcDointvec,
        }],
        gone: "EEVDF's fork placement does not read it, and 6.12 has no such sysctl",
    },
    TunableDecl {
        tunable: Tunable::EnergyAware,
        // Linux 6.5 registers it in topology.c (sched_energy_aware_sysctl_init), with a
        // handler that refuses no write (Sched::check_energy_aware_write).
        homes: &[Home {
            from: Kernel::V6_5,
            to: Kernel::V6_12,
            place: Place::Sysctl,
            name: "sched_energy_aware",
            handler: Handler::EnergyAware,
        }],
        gone: "EAS came in 5.0 and this sysctl in 5.2",
    },
    TunableDecl {
        tunable: Tunable::UclampMin,
        homes: &[uclamp_sysctl("sched_util_clamp_min")],
        gone: UCLAMP_GONE,
    },
    TunableDecl {
        tunable: Tunable::UclampMax,
        homes: &[uclamp_sysctl("sched_util_clamp_max")],
        gone: UCLAMP_GONE,
    },
    TunableDecl {
        tunable: Tunable::UclampMinRtDefault,
        homes: &[uclamp_sysctl("sched_util_clamp_min_rt_default")],
        gone: UCLAMP_GONE,
    },
    TunableDecl {
        tunable: Tunable::AutogroupEnabled,
        // Every era had it (2.6.38 on); only 6.12 runs a 1 (TunableState::apply).
        homes: &[Home {
            from: Kernel::V3_9,
            to: Kernel::V6_12,
            place: Place::Sysctl,
            name: "sched_autogroup_enabled",
            handler: Handler::Autogroup,
        }],
        gone: "",
    },
    TunableDecl {
        tunable: Tunable::CfsBandwidthSlice,
        // CONFIG_CFS_BANDWIDTH's sysctl, in kern_table from 3.2 and in fair.c's own
        // sched_fair_sysctls in 6.5 and 6.12; only 6.12 runs groups that read it.
        homes: &[Home {
            from: Kernel::V3_9,
            to: Kernel::V6_12,
            place: Place::Sysctl,
            name: "sched_cfs_bandwidth_slice_us",
            handler: Handler::MinOne,
        }],
        gone: "",
    },
];

/// The refusal of `kernel.sched_autogroup_enabled=1` on a CFS kernel: an autogroup is a
/// task group, and only 6.12.117's group scheduling is ported. The engine gives the same
/// line for a run whose writes reached it without [`Tunables::write`].
pub fn autogroup_era_error(kernel: Kernel) -> TunableError {
    TunableError::AutogroupKernel {
        release: kernel.release(),
    }
}

/// Where the uclamp sysctls are in the eras fairsim models uclamp for.
const fn uclamp_sysctl(name: &'static str) -> Home {
    Home {
        from: Kernel::V6_5,
        to: Kernel::V6_12,
        place: Place::Sysctl,
        name,
        handler: Handler::Uclamp,
    }
}

/// What a write to a uclamp sysctl in an era without it is told.
const UCLAMP_GONE: &str = "uclamp came in 5.3; fairsim models uclamp for 6.5 and 6.12";

impl Tunable {
    /// The tunable's declaration.
    pub fn decl(self) -> &'static TunableDecl {
        DECLARATIONS
            .iter()
            .find(|d| d.tunable == self)
            .unwrap_or(&DECLARATIONS[0])
    }

    /// Where `kernel` kept the tunable, if it had it.
    pub fn home(self, kernel: Kernel) -> Option<&'static Home> {
        self.decl()
            .homes
            .iter()
            .find(|h| (h.from..=h.to).contains(&kernel))
    }
}

/// The names `kernel` has at `place`, as the option takes them, for messages.
pub fn names_at(kernel: Kernel, place: Place) -> Vec<String> {
    DECLARATIONS
        .iter()
        .filter_map(|d| d.tunable.home(kernel))
        .filter(|h| h.place == place)
        .map(|h| place.spell(h.name))
        .collect()
}

/// A refused tunable write: the option (`--sysctl`, `--debugfs`), the write or tunable
/// named, and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TunableError {
    /// Not `NAME=VALUE`.
    #[error("{opt}: '{text}' is not {form}; allowed: {allowed}")]
    Malformed {
        /// The option.
        opt: &'static str,
        /// The write given.
        text: String,
        /// Its form (`kernel.sched_NAME=VALUE`).
        form: &'static str,
        /// The names allowed.
        allowed: String,
    },
    /// A name no era has.
    #[error("{opt}: unknown tunable '{name}' for Linux {kernel}; allowed: {allowed}")]
    Unknown {
        /// The option.
        opt: &'static str,
        /// The name given.
        name: String,
        /// The kernel.
        kernel: &'static str,
        /// The names allowed.
        allowed: String,
    },
    /// A tunable the era does not have.
    #[error("{opt}: {name} does not exist in Linux {kernel} ({why}); allowed: {allowed}")]
    Gone {
        /// The option.
        opt: &'static str,
        /// The name given.
        name: String,
        /// The kernel.
        kernel: &'static str,
        /// When it came or went.
        why: &'static str,
        /// The names allowed.
        allowed: String,
    },
    /// A tunable the era keeps at the other place.
    #[error(
        "{opt}: Linux {kernel} keeps this tunable at {home}{moved}; allowed: {home} {right}=VALUE"
    )]
    Elsewhere {
        /// The option given.
        opt: &'static str,
        /// The kernel.
        kernel: &'static str,
        /// The option it is at.
        home: &'static str,
        /// When it moved (` (5.13 moved it to debugfs)`), or nothing.
        moved: &'static str,
        /// Its name there.
        right: String,
    },
    /// A value that is not an integer.
    #[error("{opt}: {name}={value}: not an integer; allowed: {allowed}")]
    NotInteger {
        /// The option.
        opt: &'static str,
        /// The tunable as the option spells it.
        name: String,
        /// The value given.
        value: String,
        /// The range allowed.
        allowed: String,
    },
    /// A value out of the handler's range.
    #[error("{opt}: {name}={value} is out of Linux {kernel}'s range; allowed: {allowed}")]
    OutOfRange {
        /// The option.
        opt: &'static str,
        /// The tunable as the option spells it.
        name: String,
        /// The value given.
        value: String,
        /// The kernel.
        kernel: &'static str,
        /// The range allowed.
        allowed: String,
    },
    /// More writes than a run keeps.
    #[error("{opt}: more than {max} tunable writes; allowed: at most {max} --sysctl and --debugfs together")]
    TooMany {
        /// The option.
        opt: &'static str,
        /// The most writes.
        max: usize,
    },
    /// `kernel.sched_autogroup_enabled=1` on a kernel whose group scheduling is not ported.
    #[error("--sysctl: kernel.sched_autogroup_enabled=1 puts each session in an autogroup, a task group, and task groups are modelled for --kernel 6.12 only (Linux {release}'s group scheduling is not ported); allowed: --kernel 6.12, or kernel.sched_autogroup_enabled=0")]
    AutogroupKernel {
        /// The kernel's release.
        release: &'static str,
    },
    /// `tunable_scaling` after `min_granularity_ns=0`, which divides by zero.
    #[error("--debugfs: tunable_scaling after min_granularity_ns=0 would divide by zero in Linux {kernel}'s sched_update_scaling (DIV_ROUND_UP(latency, min_granularity)); allowed: min_granularity_ns above 0 first")]
    ScalingByZero {
        /// The kernel.
        kernel: &'static str,
    },
    /// uclamp sysctls in an order the handler refuses.
    #[error("--sysctl: the write would leave sched_util_clamp_min={min}, sched_util_clamp_max={max}, sched_util_clamp_min_rt_default={rt}, which sysctl_sched_uclamp_handler refuses (EINVAL); allowed: sched_util_clamp_min <= sched_util_clamp_max <= 1024 and sched_util_clamp_min_rt_default <= 1024 (write them in an order that keeps the minimum at or below the maximum)")]
    UclampOrder {
        /// `sched_util_clamp_min` after the write.
        min: u32,
        /// `sched_util_clamp_max` after the write.
        max: u32,
        /// `sched_util_clamp_min_rt_default` after the write.
        rt: u32,
    },
}

/// One accepted write: the tunable, where it went, and the value as the kernel stored it
/// (the `unsigned int`'s bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TunableWrite {
    /// The tunable.
    pub tunable: Tunable,
    /// Its home in the kernel written to.
    pub home: Home,
    /// The stored value.
    pub value: u32,
}

impl TunableWrite {
    /// The write as its option takes it, with the value as reading the file back shows
    /// it: `kernel.sched_migration_cost_ns=-1` (an `int` sysctl), `nr_migrate=8`.
    pub fn describe(&self) -> String {
        let shown = match self.home.handler {
            Handler::ProcDointvec | Handler::SchedProcUpdate { .. } => {
                (self.value as i32).to_string()
            }
            _ => self.value.to_string(),
        };
        format!("{}={shown}", self.home.place.spell(self.home.name))
    }

    /// The file the write went to.
    pub fn path(&self) -> String {
        match self.home.place {
            Place::Sysctl => format!("/proc/sys/kernel/{}", self.home.name),
            Place::Debugfs => format!("/sys/kernel/debug/sched/{}", self.home.name),
        }
    }
}

/// Parses `text` as the kernel's base-0 integer readers do (`simple_strtoul(.., 0)`,
/// `kstrtoull(.., 0)`): `0x` hexadecimal, a leading `0` octal, else decimal; with `base10`
/// only decimal (`kstrtouint(.., 10)`). A `-` is allowed when `signed`.
fn parse_int(text: &str, signed: bool, base10: bool) -> Option<i128> {
    let t = text.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) if signed => (true, r),
        Some(_) => return None,
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (digits, radix) = if base10 {
        (t, 10)
    } else if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    if digits.is_empty() || digits.len() > 40 {
        return None;
    }
    let v = i128::from_str_radix(digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

/// A list of writes to one kernel's tunables, in the order given (a later write sees
/// what the earlier ones left, as the kernel's handlers do). Kept as a small array so
/// that [`crate::SchedParams`] stays `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tunables {
    writes: [Option<TunableWrite>; Tunables::MAX],
}

impl Tunables {
    /// The most writes one run takes.
    pub const MAX: usize = 16;

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.writes[0].is_none()
    }

    /// The writes, in order.
    pub fn writes(&self) -> impl Iterator<Item = &TunableWrite> {
        self.writes.iter().map_while(Option::as_ref)
    }

    /// Checks and appends one write, `kernel.NAME=V` (`--sysctl`, also `kernel/NAME`) or
    /// `NAME=V` (`--debugfs`), to `kernel`'s tunables. Refused with one line: a malformed
    /// write, a name the era lacks (saying what it had instead), a name the era kept in
    /// the other place, a value outside the handler's range, or a write that would divide
    /// by zero in the kernel.
    pub fn write(&mut self, kernel: Kernel, place: Place, text: &str) -> Result<(), TunableError> {
        let opt = place.option();
        let k = kernel.name();
        let form = match place {
            Place::Sysctl => "kernel.sched_NAME=VALUE",
            Place::Debugfs => "NAME=VALUE",
        };
        let allowed = || {
            let here = names_at(kernel, place);
            let other = match place {
                Place::Sysctl => Place::Debugfs,
                Place::Debugfs => Place::Sysctl,
            };
            let there = names_at(kernel, other);
            if here.is_empty() {
                format!(
                    "none: Linux {k} has its scheduler tunables at {} ({})",
                    other.option(),
                    there.join(", ")
                )
            } else if there.is_empty() {
                here.join(", ")
            } else {
                format!(
                    "{} (and at {}: {})",
                    here.join(", "),
                    other.option(),
                    there.join(", ")
                )
            }
        };
        let Some((name, value)) = text.split_once('=') else {
            return Err(TunableError::Malformed {
                opt,
                text: text.to_string(),
                form,
                allowed: allowed(),
            });
        };
        let name = name.trim();
        let bare = match place {
            Place::Sysctl => name
                .strip_prefix("kernel.")
                .or_else(|| name.strip_prefix("kernel/"))
                .unwrap_or(""),
            Place::Debugfs => name,
        };
        // The tunable this name is in any era, wherever it was kept there.
        let named = DECLARATIONS.iter().find_map(|d| {
            d.homes
                .iter()
                .find(|h| h.name == bare)
                .map(|h| (d.tunable, h.place))
        });
        let Some((tunable, named_place)) = named else {
            return Err(TunableError::Unknown {
                opt,
                name: name.to_string(),
                kernel: k,
                allowed: allowed(),
            });
        };
        let Some(home) = tunable.home(kernel) else {
            return Err(TunableError::Gone {
                opt,
                name: name.to_string(),
                kernel: k,
                why: tunable.decl().gone,
                allowed: allowed(),
            });
        };
        if home.place != place || named_place != place {
            let right = home.place.spell(home.name);
            let moved = match (named_place, home.place) {
                (Place::Sysctl, Place::Debugfs) => " (5.13 moved it to debugfs)",
                (Place::Debugfs, Place::Sysctl) => " (it moved to debugfs in 5.13)",
                _ => "",
            };
            return Err(TunableError::Elsewhere {
                opt,
                kernel: k,
                home: home.place.option(),
                moved,
                right,
            });
        }
        let value = value.trim();
        let spelled = place.spell(home.name);
        let (lo, hi, base10, what) = match home.handler {
            Handler::ProcDointvec => (
                i128::from(i32::MIN),
                i128::from(i32::MAX),
                false,
                "an int (proc_dointvec)".to_string(),
            ),
            Handler::SchedProcUpdate { min, max } => (
                i128::from(min),
                i128::from(max),
                false,
                format!("{min} to {max} (sched_proc_update_handler's extra1..extra2)"),
            ),
            Handler::DebugfsU32 => (
                0,
                i128::from(u32::MAX),
                false,
                format!(
                    "0 to {} (debugfs_create_u32; the kernel would keep only the low 32 bits of more)",
                    u32::MAX
                ),
            ),
            Handler::EnergyAware => (
                0,
                1,
                false,
                "0 or 1 (sched_energy_aware_handler's proc_dointvec_minmax)".to_string(),
            ),
            Handler::Autogroup => (
                0,
                1,
                false,
                "0 or 1 (proc_dointvec_minmax over extra1..extra2, EINVAL)".to_string(),
            ),
            Handler::MinOne => (
                1,
                i128::from(i32::MAX),
                false,
                format!(
                    "1 to {} (proc_dointvec_minmax with extra1 = SYSCTL_ONE, EINVAL)",
                    i32::MAX
                ),
            ),
            Handler::DebugfsScaling => (
                0,
                2,
                true,
                "0 (none), 1 (log) or 2 (linear), below SCHED_TUNABLESCALING_END".to_string(),
            ),
            Handler::Uclamp => (
                i128::from(i32::MIN),
                i128::from(i32::MAX),
                false,
                "0 to 1024, with sched_util_clamp_min <= sched_util_clamp_max (sysctl_sched_uclamp_handler)"
                    .to_string(),
            ),
        };
        let signed = lo < 0;
        let v = parse_int(value, signed, base10).ok_or_else(|| TunableError::NotInteger {
            opt,
            name: spelled.clone(),
            value: value.to_string(),
            allowed: what.clone(),
        })?;
        if v < lo || v > hi {
            return Err(TunableError::OutOfRange {
                opt,
                name: spelled,
                value: value.to_string(),
                kernel: k,
                allowed: what,
            });
        }
        let w = TunableWrite {
            tunable,
            home: *home,
            value: v as i64 as u32,
        };
        let Some(slot) = self.writes.iter().position(Option::is_none) else {
            return Err(TunableError::TooMany {
                opt,
                max: Self::MAX,
            });
        };
        // Replaying the list finds a write that would divide by zero in the kernel. The
        // CPU count only scales the boot values, which are never 0.
        let mut st = TunableState::boot(kernel, 1, 0, 0);
        for x in self.writes() {
            st.apply(x)?;
        }
        st.apply(&w)?;
        self.writes[slot] = Some(w);
        Ok(())
    }

    /// The tunables' values after the writes, on `ncpus` CPUs, starting from the boot
    /// values (`migration_cost` and `nr_migrate` as the caller's parameters give them).
    pub fn state(
        &self,
        kernel: Kernel,
        ncpus: usize,
        migration_cost: u64,
        nr_migrate: u32,
    ) -> TunableState {
        let mut st = TunableState::boot(kernel, ncpus, migration_cost, nr_migrate);
        for w in self.writes() {
            // Every write was replayed when it was accepted ([`Tunables::write`]); one that
            // failed would not be in the list.
            let _ = st.apply(w);
        }
        st
    }

    /// The writes as the options take them, in order (`kernel.sched_nr_migrate=8`).
    pub fn describe(&self) -> Vec<String> {
        self.writes().map(TunableWrite::describe).collect()
    }

    /// Whether the last `kernel.sched_autogroup_enabled` write left it at 1 (fairsim
    /// boots it at 0). Read without a kernel, so that the engine can refuse a 1 that
    /// reached a CFS kernel ([`autogroup_era_error`]).
    pub fn autogroup_enabled(&self) -> bool {
        self.writes()
            .filter(|w| w.tunable == Tunable::AutogroupEnabled)
            .last()
            .is_some_and(|w| w.value != 0)
    }
}

/// The tunables' values in one kernel: the sysctl variables and what the handlers derive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TunableState {
    /// The kernel.
    pub kernel: Kernel,
    /// Online CPUs, for `get_update_sysctl_factor`.
    pub ncpus: usize,
    /// `sysctl_sched_tunable_scaling`.
    pub scaling: u32,
    /// `sysctl_sched_latency`.
    pub latency: u32,
    /// `sysctl_sched_min_granularity`.
    pub min_granularity: u32,
    /// `sysctl_sched_wakeup_granularity`.
    pub wakeup_granularity: u32,
    /// `sched_nr_latency`.
    pub nr_latency: u32,
    /// `normalized_sysctl_sched_latency`.
    pub normalized_latency: u32,
    /// `normalized_sysctl_sched_min_granularity`.
    pub normalized_min_granularity: u32,
    /// `normalized_sysctl_sched_wakeup_granularity`.
    pub normalized_wakeup_granularity: u32,
    /// `sysctl_sched_base_slice`.
    pub base_slice: u32,
    /// `normalized_sysctl_sched_base_slice`.
    pub normalized_base_slice: u32,
    /// `sysctl_sched_migration_cost`.
    pub migration_cost: u64,
    /// `sysctl_sched_nr_migrate`.
    pub nr_migrate: u32,
    /// `sysctl_sched_child_runs_first`.
    pub child_runs_first: u32,
    /// `sysctl_sched_energy_aware`.
    pub energy_aware: u32,
    /// `sysctl_sched_uclamp_util_min` (`uclamp_default[UCLAMP_MIN]`).
    pub uclamp_min: u32,
    /// `sysctl_sched_uclamp_util_max` (`uclamp_default[UCLAMP_MAX]`).
    pub uclamp_max: u32,
    /// `sysctl_sched_uclamp_util_min_rt_default`.
    pub uclamp_min_rt_default: u32,
    /// A uclamp sysctl write changed a value, which turned `sched_uclamp_used` on.
    pub uclamp_key: bool,
    /// `sysctl_sched_autogroup_enabled`.
    pub autogroup_enabled: u32,
    /// `sysctl_sched_cfs_bandwidth_slice` (us).
    pub cfs_bandwidth_slice_us: u32,
}

/// `sysctl_sched_base_slice` for `ncpus` online CPUs: 0.7 ms x (1 + ilog2(min(ncpus, 8))),
/// `SCHED_TUNABLESCALING_LOG` as `update_sysctl` sets it.
pub fn base_slice_for(ncpus: usize) -> u64 {
    let cpus = ncpus.clamp(1, 8) as u64;
    let factor = 1 + u64::from(63 - cpus.leading_zeros());
    700_000 * factor
}

impl TunableState {
    /// The values after boot: `sched_init_granularity`'s `update_sysctl` scaled the
    /// normalized defaults by the log factor of `ncpus` CPUs.
    pub fn boot(kernel: Kernel, ncpus: usize, migration_cost: u64, nr_migrate: u32) -> Self {
        let cfs = CfsTunables::for_cpus(ncpus);
        let base = base_slice_for(ncpus);
        TunableState {
            kernel,
            ncpus,
            scaling: 1,
            latency: cfs.latency as u32,
            min_granularity: cfs.min_granularity as u32,
            wakeup_granularity: cfs.wakeup_granularity as u32,
            nr_latency: cfs.nr_latency as u32,
            normalized_latency: CfsTunables::NORMALIZED_LATENCY as u32,
            normalized_min_granularity: CfsTunables::NORMALIZED_MIN_GRANULARITY as u32,
            normalized_wakeup_granularity: CfsTunables::NORMALIZED_WAKEUP_GRANULARITY as u32,
            base_slice: base as u32,
            normalized_base_slice: (base / CfsTunables::factor(ncpus)) as u32,
            migration_cost,
            nr_migrate,
            child_runs_first: 0,
            energy_aware: 1,
            uclamp_min: UCLAMP_SCALE,
            uclamp_max: UCLAMP_SCALE,
            uclamp_min_rt_default: UCLAMP_SCALE,
            uclamp_key: false,
            // A distribution kernel boots with 1 (CONFIG_SCHED_AUTOGROUP=y, unless
            // `noautogroup`); fairsim boots with 0, so that a run that does not ask for
            // autogroups keeps every task in the root task group and its outputs as
            // they were.
            autogroup_enabled: 0,
            cfs_bandwidth_slice_us: 5000,
        }
    }

    /// `get_update_sysctl_factor()`: 1 (none), `min(ncpus, 8)` (linear) or `1 +
    /// ilog2(min(ncpus, 8))` (log, and any other value).
    pub fn factor(&self) -> u32 {
        let cpus = self.ncpus.clamp(1, 8) as u32;
        match self.scaling {
            0 => 1,
            2 => cpus,
            _ => 1 + (31 - cpus.leading_zeros()),
        }
    }

    /// `sched_update_scaling` (6.5: with `sched_nr_latency`) and the end of
    /// `sched_proc_update_handler` (before 5.13): `sched_nr_latency` from the current
    /// latency and granularity, and the normalized values from the current ones.
    fn rederive(&mut self) -> Result<(), TunableError> {
        let factor = self.factor();
        if self.kernel.is_cfs() {
            if self.min_granularity == 0 {
                return Err(TunableError::ScalingByZero {
                    kernel: self.kernel.name(),
                });
            }
            self.nr_latency = self.latency.div_ceil(self.min_granularity);
            self.normalized_min_granularity = self.min_granularity / factor;
            self.normalized_latency = self.latency / factor;
            self.normalized_wakeup_granularity = self.wakeup_granularity / factor;
        } else {
            self.normalized_base_slice = self.base_slice / factor;
        }
        Ok(())
    }

    /// One write as the era's handler performs it.
    pub fn apply(&mut self, w: &TunableWrite) -> Result<(), TunableError> {
        let v = w.value;
        match w.tunable {
            Tunable::Latency => self.latency = v,
            Tunable::MinGranularity => self.min_granularity = v,
            Tunable::WakeupGranularity => self.wakeup_granularity = v,
            Tunable::BaseSlice => self.base_slice = v,
            Tunable::MigrationCost => self.migration_cost = u64::from(v),
            Tunable::NrMigrate => self.nr_migrate = v,
            Tunable::TunableScaling => self.scaling = v,
            Tunable::ChildRunsFirst => self.child_runs_first = v,
            Tunable::EnergyAware => self.energy_aware = v,
            Tunable::CfsBandwidthSlice => self.cfs_bandwidth_slice_us = v,
            Tunable::AutogroupEnabled => {
                if v != 0 && self.kernel.is_cfs() {
                    return Err(autogroup_era_error(self.kernel));
                }
                self.autogroup_enabled = v;
            }
            Tunable::UclampMin | Tunable::UclampMax | Tunable::UclampMinRtDefault => {
                return self.sysctl_sched_uclamp_handler(w.tunable, v);
            }
        }
        match w.home.handler {
            Handler::SchedProcUpdate { .. } | Handler::DebugfsScaling => self.rederive(),
            Handler::ProcDointvec
            | Handler::DebugfsU32
            | Handler::EnergyAware
            | Handler::Autogroup
            | Handler::MinOne
            | Handler::Uclamp => Ok(()),
        }
    }

    /// `sysctl_sched_uclamp_handler` (6.12.117 core.c) writing `v` to one of the three
    /// uclamp sysctls: the values are compared as the `unsigned int`s they are, a
    /// refused write leaves all three as they were, and a changed value turns the
    /// `sched_uclamp_used` key on.
    fn sysctl_sched_uclamp_handler(&mut self, t: Tunable, v: u32) -> Result<(), TunableError> {
        let old = (self.uclamp_min, self.uclamp_max, self.uclamp_min_rt_default);
        match t {
            Tunable::UclampMin => self.uclamp_min = v,
            Tunable::UclampMax => self.uclamp_max = v,
            _ => self.uclamp_min_rt_default = v,
        }
        if self.uclamp_min > self.uclamp_max
            || self.uclamp_max > UCLAMP_SCALE
            || self.uclamp_min_rt_default > UCLAMP_SCALE
        {
            let (min, max, rt) = (self.uclamp_min, self.uclamp_max, self.uclamp_min_rt_default);
            (self.uclamp_min, self.uclamp_max, self.uclamp_min_rt_default) = old;
            return Err(TunableError::UclampOrder { min, max, rt });
        }
        if (self.uclamp_min, self.uclamp_max, self.uclamp_min_rt_default) != old {
            self.uclamp_key = true;
        }
        Ok(())
    }

    /// The CFS tunables the fair class reads.
    pub fn cfs(&self) -> CfsTunables {
        CfsTunables {
            latency: u64::from(self.latency),
            min_granularity: u64::from(self.min_granularity),
            wakeup_granularity: u64::from(self.wakeup_granularity),
            nr_latency: u64::from(self.nr_latency),
            child_runs_first: self.child_runs_first != 0,
        }
    }
}

#[cfg(test)]
#[path = "tunables_tests.rs"]
mod tests;
