//! Task groups: `CONFIG_FAIR_GROUP_SCHED` as cgroup v2's cpu controller drives it.
//!
//! A task group (`struct task_group`) has, on every CPU, a group runqueue (`tg->cfs_rq[cpu]`)
//! and a group entity (`tg->se[cpu]`) that represents that runqueue in its parent's
//! runqueue. The root task group is the CPUs' own runqueues (`rq->cfs`) and has no
//! entities. A group entity's weight follows its runqueue's share of the group's load
//! (`calc_group_shares`), and the load balancer weighs each task by its hierarchical load
//! (`task_h_load`).
//!
//! Nothing here runs until a group other than the root exists: a machine without groups
//! runs the fair class's flat entry points (each of the kernel's `for_each_sched_entity`
//! walks has one step there), so its outputs do not change. Only 6.12.117's group code is
//! ported; the engine refuses groups on the CFS kernels in one line.
//!
//! Layout: `store.rs` is the entity store the EEVDF entity operations run on (task and
//! group entities behind one id), `shares.rs` the group weight (`calc_group_shares`,
//! `update_cfs_group`, `reweight_entity`, `update_tg_load_avg`), `class.rs` the fair
//! class's entry points walking the hierarchy, `h_load.rs` the balancer's hierarchical
//! load, `blocked.rs` the blocked-load decay of group runqueues, `bandwidth.rs` (the
//! pool), `runtime.rs` (a runqueue's accounting), `bandwidth_sched.rs` (the timers and
//! `cpu.max`) and `throttle.rs` CFS bandwidth control, `tp.rs` what it shows a tracer
//! (`tp_log.rs` logs it), `sched_side.rs` the API the engine calls, and `autogroup.rs` the
//! per-session groups of `kernel.sched_autogroup_enabled`. This file holds the groups'
//! data, which `Sched` embeds, and imports no `Sched`.

use crate::cfs_rq::CfsRq;
use crate::task::{SchedEntity, TaskId};
use crate::weight::{scale_load, SCHED_PRIO_TO_WEIGHT};

mod autogroup;
mod bandwidth;
mod bandwidth_sched;
mod blocked;
mod class;
mod h_load;
mod invariants;
mod runtime;
mod sched_side;
mod shares;
mod store;
mod throttle;
pub mod tp;
mod tp_log;

pub use autogroup::{autogroup_path, task_wants_autogroup, Autogroup};
pub use bandwidth::{
    BwTimer, BwTimerKind, CfsBandwidth, CFS_BANDWIDTH_SLICE, DEFAULT_CFS_PERIOD, RUNTIME_INF,
};
pub(crate) use store::{CfsRef, Hier};

pub use crate::task::{GroupId, ROOT_GROUP};

/// `MIN_SHARES`, unscaled.
pub const MIN_SHARES: u64 = 2;
/// `MAX_SHARES`, unscaled.
pub const MAX_SHARES: u64 = 1 << 18;
/// `CGROUP_WEIGHT_MIN`.
pub const CGROUP_WEIGHT_MIN: u64 = 1;
/// `CGROUP_WEIGHT_DFL`.
pub const CGROUP_WEIGHT_DFL: u64 = 100;
/// `CGROUP_WEIGHT_MAX`.
pub const CGROUP_WEIGHT_MAX: u64 = 10_000;

/// The bit that marks an entity id as a group entity's (the rest is its index in
/// [`TaskGroups`]' per-CPU arrays); a task entity's id is its [`TaskId`].
pub const GROUP_SE_BIT: usize = 1 << (usize::BITS - 2);

/// Whether entity id `id` names a group entity.
pub fn is_group_se(id: usize) -> bool {
    id & GROUP_SE_BIT != 0
}

/// Why a task-group operation was refused, with the kernel's errno.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupError {
    /// `cpu.weight` outside 1..=10000 (`-ERANGE`).
    WeightRange(u64),
    /// `cpu.weight.nice` outside -20..=19 (`-ERANGE`).
    NiceRange(i64),
    /// The root group's weight and idleness cannot change (`-EINVAL`).
    Root,
    /// An idle group's weight cannot be set (`sched_group_set_shares` on an idle group,
    /// `-EINVAL`).
    IdleGroupShares,
    /// A `cpu.max`/`cpu.max.burst` value `tg_set_cfs_bandwidth` refuses (`-EINVAL`).
    Bandwidth(&'static str),
    /// No such group.
    NoGroup(GroupId),
}

impl std::fmt::Display for GroupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GroupError::WeightRange(w) => write!(
                f,
                "cpu.weight: {w} is out of range (ERANGE); allowed: {CGROUP_WEIGHT_MIN} to {CGROUP_WEIGHT_MAX}"
            ),
            GroupError::NiceRange(n) => write!(
                f,
                "cpu.weight.nice: {n} is out of range (ERANGE); allowed: -20 to 19"
            ),
            GroupError::Root => write!(
                f,
                "the root cgroup's cpu.weight and cpu.idle cannot be written (EINVAL); allowed: a child cgroup"
            ),
            GroupError::IdleGroupShares => write!(
                f,
                "cpu.weight: the cgroup has cpu.idle=1 (EINVAL); allowed: a weight on a cgroup that is not idle"
            ),
            GroupError::Bandwidth(why) => write!(f, "cpu.max: {why} (EINVAL)"),
            GroupError::NoGroup(g) => write!(f, "task group {g} does not exist"),
        }
    }
}

impl std::error::Error for GroupError {}

/// `sched_weight_from_cgroup`: a `cpu.weight` (1..=10000, 100 the default) as unscaled
/// shares, `DIV_ROUND_CLOSEST(weight * 1024, 100)`.
pub fn shares_from_cpu_weight(weight: u64) -> Result<u64, GroupError> {
    if !(CGROUP_WEIGHT_MIN..=CGROUP_WEIGHT_MAX).contains(&weight) {
        return Err(GroupError::WeightRange(weight));
    }
    Ok((weight * 1024 + CGROUP_WEIGHT_DFL / 2) / CGROUP_WEIGHT_DFL)
}

/// `sched_weight_to_cgroup`: unscaled shares as the `cpu.weight` reads back,
/// `clamp(DIV_ROUND_CLOSEST(shares * 100, 1024), 1, 10000)`.
pub fn cpu_weight_from_shares(shares: u64) -> u64 {
    ((shares * CGROUP_WEIGHT_DFL + 512) / 1024).clamp(CGROUP_WEIGHT_MIN, CGROUP_WEIGHT_MAX)
}

/// `cpu_weight_nice_write_s64`: a `cpu.weight.nice` (-20..=19) as unscaled shares,
/// `sched_prio_to_weight[nice + 20]`.
pub fn shares_from_cpu_weight_nice(nice: i64) -> Result<u64, GroupError> {
    if !(-20..=19).contains(&nice) {
        return Err(GroupError::NiceRange(nice));
    }
    Ok(SCHED_PRIO_TO_WEIGHT[(nice + 20) as usize])
}

/// `cpu_weight_nice_read_s64`: the nice level whose weight is closest to the group's
/// (the first of two equally close), as `cpu.weight.nice` reads back.
pub fn cpu_weight_nice_from_shares(shares: u64) -> i64 {
    let mut best = 0usize;
    let mut last_delta = u64::MAX;
    for (i, &w) in SCHED_PRIO_TO_WEIGHT.iter().enumerate() {
        let delta = w.abs_diff(shares);
        if delta >= last_delta {
            break;
        }
        last_delta = delta;
        best = i;
    }
    best as i64 - 20
}

/// One `struct task_group`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskGroup {
    /// Its path in the cgroup tree (`/` for the root).
    pub path: String,
    /// `tg->parent` (`None` for the root).
    pub parent: Option<GroupId>,
    /// `tg->shares`, scaled (`scale_load`).
    pub shares: u64,
    /// `tg->idle`.
    pub idle: bool,
    /// `tg->load_avg`: the sum of the group runqueues' `tg_load_avg_contrib`.
    pub load_avg: i64,
    /// `se->depth` of the group's entities (0 for a child of the root).
    pub depth: u32,
    /// `cfs_bandwidth`: `cpu.max`.
    pub bw: CfsBandwidth,
    /// `tg->autogroup`: set on a session's autogroup (`autogroup_create`), `None` on a
    /// cgroup's group and the root.
    pub autogroup: Option<Autogroup>,
}

/// Per-CPU data of a group entity that only group entities have.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupSeMeta {
    /// `se->runnable_weight`: the group runqueue's `h_nr_runnable` (`se_update_runnable`).
    pub runnable_weight: u64,
}

/// Every task group of the machine: the tree and, for each group but the root, its
/// runqueue and entity on every CPU.
#[derive(Debug, Clone, Default)]
pub struct TaskGroups {
    /// The groups; `tgs[0]` is the root task group.
    pub tgs: Vec<TaskGroup>,
    /// Number of CPUs.
    pub(crate) ncpus: usize,
    /// `tg->cfs_rq[cpu]` of group `g >= 1` at `(g - 1) * ncpus + cpu`.
    pub(crate) cfs: Vec<CfsRq>,
    /// `tg->se[cpu]`, indexed as `cfs`.
    pub(crate) se: Vec<SchedEntity>,
    /// Group-entity-only fields, indexed as `cfs`.
    pub(crate) meta: Vec<GroupSeMeta>,
    /// The group of each task, by [`TaskId`] (tasks past the end are in the root).
    pub(crate) task_group: Vec<GroupId>,
    /// Scratch list of the entities whose `next` buddy mark an operation cleared.
    pub(crate) cleared_next: Vec<usize>,
    /// Bandwidth timers armed and not yet taken by the engine.
    pub(crate) timer_arms: Vec<BwTimer>,
    /// `sysctl_sched_autogroup_enabled`, from the run's tunables ([`crate::Sched::new`]).
    pub(crate) autogroup_enabled: bool,
    /// `autogroup_seq_nr`: autogroups created so far.
    pub(crate) autogroup_seq_nr: u64,
    /// `sched_cfs_bandwidth_slice()` in ns, from the run's tunables ([`crate::Sched::new`]);
    /// each group created takes it into its `cfs_bandwidth`.
    pub(crate) bw_slice: u64,
    /// The bandwidth tracepoints logged for a tracer, `None` when no tracer listens
    /// ([`tp`]).
    pub(crate) tp: Option<Vec<tp::BandwidthTracepoint>>,
}

impl TaskGroups {
    /// The root task group alone, for `ncpus` CPUs.
    pub fn new(ncpus: usize) -> TaskGroups {
        TaskGroups {
            tgs: vec![TaskGroup {
                path: "/".to_string(),
                parent: None,
                shares: scale_load(1024),
                idle: false,
                load_avg: 0,
                depth: 0,
                bw: CfsBandwidth::default(),
                autogroup: None,
            }],
            ncpus,
            bw_slice: CFS_BANDWIDTH_SLICE,
            ..TaskGroups::default()
        }
    }

    /// Whether any group besides the root exists: the fair class then walks the
    /// hierarchy.
    pub fn active(&self) -> bool {
        self.tgs.len() > 1
    }

    /// Index of group `g >= 1`'s runqueue and entity on `cpu` in the per-CPU arrays.
    pub(crate) fn idx(&self, g: GroupId, cpu: usize) -> usize {
        (g - 1) * self.ncpus + cpu
    }

    /// The group of an index into the per-CPU arrays, and the CPU.
    pub(crate) fn group_cpu_of(&self, idx: usize) -> (GroupId, usize) {
        (idx / self.ncpus + 1, idx % self.ncpus)
    }

    /// The entity id of group `g`'s entity on `cpu`.
    pub(crate) fn se_id(&self, g: GroupId, cpu: usize) -> usize {
        GROUP_SE_BIT | self.idx(g, cpu)
    }

    /// The group task `p` belongs to.
    pub fn group_of(&self, p: TaskId) -> GroupId {
        self.task_group.get(p).copied().unwrap_or(ROOT_GROUP)
    }

    /// Group `g` and its ancestors up to (not including) the root, innermost first.
    pub fn ancestry(&self, g: GroupId) -> impl Iterator<Item = GroupId> + '_ {
        std::iter::successors(Some(g), move |&x| self.tgs[x].parent).filter(|&x| x != ROOT_GROUP)
    }

    /// Group `g`'s runqueue on `cpu` (`tg->cfs_rq[cpu]`); `g` must not be the root,
    /// whose runqueues are the CPUs' own.
    pub fn cfs_rq(&self, g: GroupId, cpu: usize) -> &CfsRq {
        &self.cfs[self.idx(g, cpu)]
    }

    /// Group `g`'s entity on `cpu` (`tg->se[cpu]`); `g` must not be the root.
    pub fn entity(&self, g: GroupId, cpu: usize) -> &SchedEntity {
        &self.se[self.idx(g, cpu)]
    }

    /// The group with this path, if it exists.
    pub fn find(&self, path: &str) -> Option<GroupId> {
        self.tgs.iter().position(|t| t.path == path)
    }
}
