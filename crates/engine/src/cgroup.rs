//! Task groups as a run declares them: cgroup v2's cpu controller, from `--cgroup
//! '/PATH:cpu.weight=N'`, a scenario's `[cgroup."/PATH"]` tables, a workload's
//! `cgroup=/PATH` and rt-app's per-task `"taskgroup"`. The text of a declaration is read
//! by `fairsim_workloads::cgroups` into a [`Declared`]; this module holds the tree it
//! builds.
//!
//! The scheduler side is `fairsim_balance::group`; this module holds what comes before
//! it: the paths and their checks, the weights written to each group (`cpu.weight` or
//! `cpu.weight.nice`, the only cpu controller files modelled), the tree in creation
//! order with the parents `mkdir -p` would make, who joins which group, and the era
//! check. [`Cgroups::install`] replays the tree on a `Sched` as cgroupfs would: every
//! `mkdir` in order (`create_task_group`), then the weight writes
//! (`set_group_shares`). The group of each task is set at its fork
//! (`world/wake.rs`), before its first enqueue.
//!
//! Only Linux 6.12.117's group scheduling is ported: a CFS-era kernel with any group
//! declared or joined is refused in one line.
//!
//! With `kernel.sched_autogroup_enabled=1` the groups end with one autogroup per
//! session, created after the declared ones ([`crate::autogroup`]).
//!
//! The cpuset controller lives in the same tree: `cpuset.cpus=LIST` bounds the affinity
//! of a group's tasks (its effective CPUs, inherited by children that write none), and
//! `cpuset.cpus.partition=root` on a child of `/` makes the group an exclusive partition,
//! its own root domain, as `--cpuset LIST` does ([`Cgroups::cpusets`]). cgroup v2 enables
//! each controller per subtree, and the two are separate: a group has the cpu controller
//! (is a scheduler task group) when it writes a `cpu.*` file, is declared with no file at
//! all (`--cgroup /PATH`, a task group at the defaults, as before cpusets were modelled),
//! is an rt-app `taskgroup`, or has a descendant that has it (the controller is enabled
//! down to it through every ancestor's `cgroup.subtree_control`). A group that writes only
//! `cpuset.*` files, with no such descendant, creates no task group: its tasks run in its
//! nearest ancestor that has one (the root if none), so a run with cpusets alone schedules
//! as a flat run does.

use fairsim_balance::group::{
    shares_from_cpu_weight, shares_from_cpu_weight_nice, GroupError, GroupId, ROOT_GROUP,
};
use fairsim_balance::{Kernel, Sched};
use fairsim_topology::{check_cpusets, parse_cpulist, CpuMask};

use crate::error::{ConfigError, EngineError};

/// The most groups a run may declare or create, the root not counted: each has a
/// runqueue and an entity on every CPU, so the bound keeps a large machine's state
/// within reach of the memory estimate.
pub const MAX_CGROUPS: usize = 1024;

/// The longest cgroup path taken, in bytes (`PATH_MAX` less its terminating NUL).
pub const MAX_PATH_BYTES: usize = 4095;

/// The longest path component, in bytes (`NAME_MAX`, as kernfs allows a name).
pub const MAX_NAME_BYTES: usize = 255;

pub use crate::error::{KeyError, PathError, KEYS_ALLOWED, PATH_ALLOWED};

/// Checks `path` as a cgroup path: `/` (the root) or `/`-separated components under it,
/// each a name cgroupfs would take and that fairsim's option syntax can carry (no `,`,
/// `:` or `=`, which separate keys and values in `--cgroup` and `--workload`). Returns
/// why not.
pub fn check_path(path: &str) -> Result<(), PathError> {
    if path == "/" {
        return Ok(());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(PathError::NotAbsolute);
    };
    if path.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong {
            max: MAX_PATH_BYTES,
        });
    }
    for name in rest.split('/') {
        if name.is_empty() {
            return Err(PathError::EmptyComponent);
        }
        if name == "." || name == ".." {
            return Err(PathError::DotComponent {
                name: name.to_string(),
            });
        }
        if name.len() > MAX_NAME_BYTES {
            return Err(PathError::ComponentTooLong {
                max: MAX_NAME_BYTES,
            });
        }
        if let Some(c) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "-_.@+".contains(*c)))
        {
            return Err(PathError::Character { c });
        }
    }
    Ok(())
}

/// Checks the path of a declaration before its files are read: a cgroup path
/// ([`check_path`]) other than the root; `field` names the declaration in the error.
pub fn check_declared_path(field: &str, path: &str) -> Result<(), EngineError> {
    check_path(path).map_err(|why| ConfigError::CgroupPath {
        field: field.to_string(),
        path: path.to_string(),
        why,
    })?;
    if path == "/" {
        // The kernel refuses the root's cpu.weight (EINVAL), and the root always exists:
        // a declaration of it could only be refused or do nothing.
        return Err(ConfigError::DeclaresRoot {
            field: field.to_string(),
        }
        .into());
    }
    Ok(())
}

/// The parent path of a path other than the root (`/a/b` -> `/a`, `/a` -> `/`).
fn parent_path(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The weight a declaration writes: `cpu.weight` or `cpu.weight.nice`, both of which set
/// the group's shares (`sched_group_set_shares`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuWeight {
    /// `cpu.weight`, 1..=10000.
    Weight(u64),
    /// `cpu.weight.nice`, -20..=19.
    Nice(i64),
}

impl CpuWeight {
    /// The unscaled shares the write sets (`sched_weight_from_cgroup`, or the nice
    /// level's weight).
    pub fn shares(self) -> Result<u64, GroupError> {
        match self {
            CpuWeight::Weight(w) => shares_from_cpu_weight(w),
            CpuWeight::Nice(n) => shares_from_cpu_weight_nice(n),
        }
    }

    /// The write as a declaration spells it: `cpu.weight=200`.
    pub fn describe(self) -> String {
        match self {
            CpuWeight::Weight(w) => format!("cpu.weight={w}"),
            CpuWeight::Nice(n) => format!("cpu.weight.nice={n}"),
        }
    }
}

/// Where a group came from, which names it in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `--cgroup`.
    Option,
    /// A scenario's `[cgroup."/PATH"]` table.
    Scenario,
    /// The parent of a declared group, made as `mkdir -p` would.
    Parent,
    /// An rt-app file's `taskgroup`, which rt-app creates in cgroupfs itself.
    Rtapp,
}

impl Origin {
    /// The field an error about a group of this origin names.
    pub fn field(self) -> &'static str {
        match self {
            Origin::Option | Origin::Parent => "--cgroup",
            Origin::Scenario => "scenario table [cgroup]",
            Origin::Rtapp => "rtapp taskgroup",
        }
    }
}

/// One write to a group's bandwidth files. Each write is a `tg_set_cfs_bandwidth()` call
/// of its own, and each call refills the group's runtime (`__refill_cfs_bandwidth_runtime`),
/// so their order decides what the group starts with: `cpu.max` then `cpu.max.burst`
/// starts it at quota + burst, the other order at the quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandwidthWrite {
    /// `cpu.max`: the quota in us (`None` for "max") and the period in us if given.
    Max {
        /// The quota in us, `None` for `max`.
        quota_us: Option<u64>,
        /// The period in us, `None` to keep the group's.
        period_us: Option<u64>,
    },
    /// `cpu.max.burst` in us.
    Burst(u64),
}

/// A group's `cpu.idle`, `cpu.max` and `cpu.max.burst` writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writes {
    /// `cpu.idle`.
    pub idle: Option<bool>,
    /// `cpu.max` and `cpu.max.burst`, in the order written.
    pub bandwidth: Vec<BandwidthWrite>,
}

impl Writes {
    /// Takes `other`'s writes on top of these, as writing the files again would: a later
    /// bandwidth write is one more `tg_set_cfs_bandwidth()` call after the earlier ones.
    fn overlay(&mut self, other: Writes) {
        self.idle = other.idle.or(self.idle);
        self.bandwidth.extend(other.bandwidth);
    }
}

/// cgroup v2's `cpuset.cpus.partition` values fairsim models (`isolated` is refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partition {
    /// `member`, the default: the group's CPUs stay in its parent's partition.
    Member,
    /// `root`: the group's CPUs are an exclusive partition, a root domain of their own.
    Root,
}

/// A group's cpuset controller writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpusetWrites {
    /// `cpuset.cpus`, as written (a kernel cpulist, checked for syntax).
    pub cpus: Option<String>,
    /// `cpuset.cpus.partition`.
    pub partition: Option<Partition>,
}

impl CpusetWrites {
    /// Whether any `cpuset.*` file is written.
    pub fn any(&self) -> bool {
        self.cpus.is_some() || self.partition.is_some()
    }

    fn overlay(&mut self, other: CpusetWrites) {
        self.cpus = other.cpus.or(self.cpus.take());
        self.partition = other.partition.or(self.partition);
    }
}

/// One group other than the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cgroup {
    /// Its path, `/a/b`.
    pub path: String,
    /// Its parent's position in [`Cgroups::all`] plus one (the root is 0); for a group
    /// of the cpu controller, [`Cgroups::iter`] gives the scheduler's id of its parent.
    pub parent: GroupId,
    /// The weight written to it, if any (the default is `cpu.weight` 100).
    pub weight: Option<CpuWeight>,
    /// Its other cpu controller writes.
    pub writes: Writes,
    /// Its cpuset controller writes.
    pub cpuset: CpusetWrites,
    /// Whether it has the cpu controller, so is a scheduler task group (see the module
    /// documentation).
    pub cpu: bool,
    /// Where it came from.
    pub origin: Origin,
}

/// The groups of a run in creation order, parents before children. The `i`-th group of
/// the cpu controller is the scheduler's group `i + 1` (`fairsim_balance::group::GroupId`;
/// 0 is the root, which always exists and is not listed), then come the sessions'
/// autogroups; groups with the cpuset controller alone have no scheduler id. Empty: no
/// task groups, and the run is scheduled as it was without them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cgroups {
    groups: Vec<Cgroup>,
    /// Sessions given an autogroup, in launch order: session `i`'s is the scheduler's
    /// group `groups.len() + 1 + i` ([`Cgroups::autogroup_of`]).
    autogroups: usize,
}

/// A task group some workload's tasks join, for [`Cgroups::resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Join {
    /// The path joined (checked by [`check_path`]).
    pub path: String,
    /// The field that named it, for errors: `--workload: schbench: cgroup`.
    pub field: String,
    /// Whether joining creates the group when it was not declared (rt-app's
    /// `taskgroup`), rather than being refused.
    pub creates: bool,
}

impl Cgroups {
    /// Whether no task group but the root exists (groups of the cpuset controller alone
    /// do not count).
    pub fn is_empty(&self) -> bool {
        self.task_groups() == 0 && self.autogroups == 0
    }

    /// The number of task groups, autogroups included and the root not counted.
    pub fn len(&self) -> usize {
        self.task_groups() + self.autogroups
    }

    /// The number of declared groups of the cpu controller.
    fn task_groups(&self) -> usize {
        self.groups.iter().filter(|g| g.cpu).count()
    }

    /// Whether some group writes a `cpuset.*` file.
    pub fn has_cpusets(&self) -> bool {
        self.groups.iter().any(|g| g.cpuset.any())
    }

    /// Every group, of either controller, in creation order.
    pub fn all(&self) -> impl Iterator<Item = &Cgroup> {
        self.groups.iter()
    }

    /// For each group of [`Cgroups::all`], the scheduler's group its tasks run in: its
    /// own id with the cpu controller, else its nearest such ancestor's (the root's, 0).
    fn sched_ids(&self) -> Vec<GroupId> {
        let mut ids = Vec::with_capacity(self.groups.len());
        let mut next = 0;
        for g in &self.groups {
            let id = if g.cpu {
                next += 1;
                next
            } else if g.parent == ROOT_GROUP {
                ROOT_GROUP
            } else {
                ids[g.parent - 1]
            };
            ids.push(id);
        }
        ids
    }

    /// Gives the group at position `i` of [`Cgroups::all`] and its ancestors the cpu
    /// controller.
    fn enable_cpu(&mut self, mut i: usize) {
        loop {
            self.groups[i].cpu = true;
            match self.groups[i].parent {
                ROOT_GROUP => break,
                p => i = p - 1,
            }
        }
    }

    /// The position in [`Cgroups::all`] of the group at `path`.
    fn index(&self, path: &str) -> Option<usize> {
        self.groups.iter().position(|g| g.path == path)
    }

    /// The number of autogroups, one per session, created after the declared groups.
    pub fn autogroups(&self) -> usize {
        self.autogroups
    }

    /// Gives the run `n` autogroups, after the groups there are now
    /// ([`crate::autogroup`] checks `n` first).
    pub(crate) fn set_autogroups(&mut self, n: usize) {
        self.autogroups = n;
    }

    /// The autogroup of session `i` (`p->signal->autogroup->tg` of its tasks), or the
    /// root (`autogroup_default`) without autogroups.
    pub fn autogroup_of(&self, i: usize) -> GroupId {
        if i < self.autogroups {
            self.task_groups() + 1 + i
        } else {
            ROOT_GROUP
        }
    }

    /// The declared groups of the cpu controller, in creation order, with their
    /// scheduler ids, each with its `parent` as the scheduler's id of its parent.
    pub fn iter(&self) -> impl Iterator<Item = (GroupId, Cgroup)> + '_ {
        let ids = self.sched_ids();
        self.groups
            .iter()
            .enumerate()
            .filter(|(_, g)| g.cpu)
            .map(move |(i, g)| {
                let mut g = g.clone();
                if g.parent != ROOT_GROUP {
                    g.parent = ids[g.parent - 1];
                }
                (ids[i], g)
            })
    }

    /// The scheduler's group the tasks of the group at `path` run in (`/` is the root,
    /// 0): its own, or for a group of the cpuset controller alone its nearest ancestor's
    /// with the cpu controller.
    pub fn id(&self, path: &str) -> Option<GroupId> {
        if path == "/" {
            return Some(ROOT_GROUP);
        }
        let i = self.index(path)?;
        Some(self.sched_ids()[i])
    }

    /// The paths a `cgroup=` key may name, for errors.
    fn allowed_paths(&self) -> String {
        let mut paths = vec!["/".to_string()];
        paths.extend(self.groups.iter().map(|g| g.path.clone()));
        paths.join(", ")
    }

    /// Makes the group at `path` and any missing ancestor (`mkdir -p`), the ancestors
    /// as [`Origin::Parent`]; an existing group is left as it is. Returns its id.
    fn mkdir_p(&mut self, path: &str, origin: Origin) -> Result<GroupId, EngineError> {
        if path == "/" {
            return Ok(ROOT_GROUP);
        }
        if let Some(i) = self.index(path) {
            return Ok(i + 1);
        }
        let parent = parent_path(path);
        let parent_id = self.mkdir_p(parent, Origin::Parent)?;
        if self.groups.len() >= MAX_CGROUPS {
            return Err(ConfigError::TooManyCgroups {
                field: origin.field().to_string(),
                path: path.to_string(),
                max: MAX_CGROUPS,
            }
            .into());
        }
        self.groups.push(Cgroup {
            path: path.to_string(),
            parent: parent_id,
            weight: None,
            writes: Writes::default(),
            cpuset: CpusetWrites::default(),
            cpu: false,
            origin,
        });
        Ok(self.groups.len())
    }

    /// Declares the group at `path` with the parsed writes `keys`, from `origin`; `field`
    /// names the declaration in errors (`--cgroup '/a:...'`). A path
    /// declared before by the same source is refused; one the other source declared
    /// (a scenario's, then the option's) takes the new writes on top, as writing the
    /// file again would.
    pub fn declare(
        &mut self,
        field: &str,
        path: &str,
        keys: Declared,
        origin: Origin,
    ) -> Result<(), EngineError> {
        check_declared_path(field, path)?;
        let (weight, writes, cpuset) = (keys.weight, keys.writes, keys.cpuset);
        if let Some(i) = self.index(path) {
            if keys.cpu {
                self.enable_cpu(i);
            }
            let g = &mut self.groups[i];
            if g.origin == origin {
                return Err(ConfigError::DeclaredTwice {
                    field: field.to_string(),
                    path: path.to_string(),
                }
                .into());
            }
            g.origin = origin;
            if weight.is_some() {
                g.weight = weight;
            }
            g.writes.overlay(writes);
            g.cpuset.overlay(cpuset);
            return Ok(());
        }
        let id = self.mkdir_p(path, origin).map_err(|e| e.for_field(field))?;
        self.groups[id - 1].weight = weight;
        self.groups[id - 1].writes = writes;
        self.groups[id - 1].cpuset = cpuset;
        if keys.cpu {
            self.enable_cpu(id - 1);
        }
        Ok(())
    }

    /// The groups a run creates: these declared ones, and the ones `joins` create (rt-app's
    /// taskgroups not declared, with their parents), after checking that `kernel` models
    /// task groups and that every other join names a declared group (or the root).
    pub fn resolve(&self, joins: &[Join], kernel: Kernel) -> Result<Cgroups, EngineError> {
        if kernel.is_cfs() {
            // Groups of the cpuset controller alone, and joining them, need no task group.
            let cpuset_only = |p: &str| self.index(p).is_some_and(|i| !self.groups[i].cpu);
            let first_cpu = self.groups.iter().find(|g| g.cpu);
            let first_join = joins.iter().find(|j| j.creates || !cpuset_only(&j.path));
            let (field, what) = match (first_cpu, first_join) {
                (Some(g), _) => (g.origin.field().to_string(), "no --cgroup"),
                (None, Some(j)) if j.creates => (j.field.clone(), "no taskgroup"),
                (None, Some(j)) => (j.field.clone(), "no cgroup="),
                (None, None) => (String::new(), ""),
            };
            if !field.is_empty() {
                return Err(ConfigError::GroupsNeedKernel {
                    field,
                    release: kernel.release(),
                    instead: what,
                }
                .into());
            }
        }
        let mut all = self.clone();
        for j in joins {
            if let Some(i) = all.index(&j.path) {
                // rt-app's taskgroup is a group of the cpu controller.
                if j.creates {
                    all.enable_cpu(i);
                }
                continue;
            }
            if j.path == "/" {
                continue;
            }
            if !j.creates {
                return Err(ConfigError::NotDeclared {
                    field: j.field.clone(),
                    path: j.path.clone(),
                    allowed: self.allowed_paths(),
                }
                .into());
            }
            let id = all
                .mkdir_p(&j.path, Origin::Rtapp)
                .map_err(|e| e.for_field(&j.field))?;
            all.enable_cpu(id - 1);
        }
        Ok(all)
    }

    /// The cpuset side of the groups on a machine of `nr_cpus` CPUs, after `--cpuset`'s
    /// partitions `base`: every `cpuset.cpus` checked against the machine, the
    /// partitions (`base`, then each group with `cpuset.cpus.partition=root` in creation
    /// order, all checked together by `check_cpusets`), and each group's effective CPUs.
    /// A partition root takes its `cpuset.cpus`; another group with `cpuset.cpus` takes
    /// them within its parent's effective CPUs (the root's: the CPUs no partition takes);
    /// a group without inherits its parent's. Groups with no `cpuset.cpus` on the way to
    /// the root have none: their tasks keep the affinity they had.
    pub fn cpusets(&self, nr_cpus: usize, base: &[CpuMask]) -> Result<CpusetPlan, EngineError> {
        let last = nr_cpus.saturating_sub(1);
        let mut own: Vec<Option<CpuMask>> = Vec::with_capacity(self.groups.len());
        let mut partitions = base.to_vec();
        let mut first_root: Option<&Cgroup> = None;
        for g in &self.groups {
            let field = || g.origin.field().to_string();
            let mask = match &g.cpuset.cpus {
                Some(text) => {
                    let m =
                        parse_cpulist(nr_cpus, text).map_err(|why| ConfigError::CpusetList {
                            field: field(),
                            path: g.path.clone(),
                            got: text.clone(),
                            why,
                            last,
                        })?;
                    if m.is_empty() {
                        return Err(ConfigError::CpusetEmpty {
                            field: field(),
                            path: g.path.clone(),
                            got: text.clone(),
                            last,
                        }
                        .into());
                    }
                    Some(m)
                }
                None => None,
            };
            if g.cpuset.partition == Some(Partition::Root) {
                let Some(m) = &mask else {
                    return Err(ConfigError::PartitionWithoutCpus {
                        field: field(),
                        path: g.path.clone(),
                    }
                    .into());
                };
                if g.parent != ROOT_GROUP {
                    return Err(ConfigError::NestedPartition {
                        field: field(),
                        path: g.path.clone(),
                    }
                    .into());
                }
                partitions.push(m.clone());
                first_root.get_or_insert(g);
            }
            own.push(mask);
        }
        if let Some(g) = first_root {
            let field = format!("{} cpuset.cpus", g.origin.field());
            check_cpusets(nr_cpus, &partitions, &field).map_err(ConfigError::Partitions)?;
        }
        let mut top = CpuMask::full(nr_cpus);
        for p in &partitions {
            top.andnot_with(p);
        }
        let mut effective: Vec<Option<CpuMask>> = Vec::with_capacity(self.groups.len());
        for (g, mask) in self.groups.iter().zip(own) {
            let parent = match g.parent {
                ROOT_GROUP => None,
                p => effective[p - 1].clone(),
            };
            let eff = match mask {
                Some(m) if g.cpuset.partition == Some(Partition::Root) => Some(m),
                Some(m) => {
                    let within = parent.unwrap_or_else(|| top.clone());
                    let e = m.and(&within);
                    if e.is_empty() {
                        return Err(ConfigError::NoEffectiveCpu {
                            field: g.origin.field().to_string(),
                            path: g.path.clone(),
                            cpus: m.to_list(),
                            parent: (!within.is_empty()).then(|| within.to_list()),
                        }
                        .into());
                    }
                    Some(e)
                }
                None => parent,
            };
            effective.push(eff);
        }
        let paths = self.groups.iter().map(|g| g.path.clone()).collect();
        Ok(CpusetPlan {
            partitions,
            paths,
            effective,
        })
    }

    /// Creates the groups on `sched` as cgroupfs would: each `mkdir` in order, then its
    /// writes at time 0, before any task exists: the weight, `cpu.idle`, then `cpu.max`
    /// and `cpu.max.burst` in the order they were written (a burst above the quota is
    /// refused as the kernel refuses it).
    /// The autogroups come after them ([`crate::autogroup::install`]).
    pub fn install(&self, sched: &mut Sched) -> Result<(), EngineError> {
        for (id, g) in self.iter() {
            let fail = |err: GroupError| ConfigError::Group {
                field: g.origin.field().to_string(),
                path: g.path.clone(),
                err,
            };
            let made = sched.create_task_group(g.parent, &g.path).map_err(fail)?;
            if made != id {
                return Err(crate::error::InvariantError::CgroupId {
                    path: g.path.clone(),
                    made,
                    expected: id,
                }
                .into());
            }
            if let Some(w) = g.weight {
                let shares = w.shares().map_err(fail)?;
                sched.set_group_shares(id, shares, 0).map_err(fail)?;
            }
            if let Some(idle) = g.writes.idle {
                sched.set_group_idle(id, idle, 0).map_err(fail)?;
            }
            install_bandwidth(sched, id, &g.writes.bandwidth).map_err(fail)?;
        }
        Ok(())
    }
}

/// A group's `cpu.max` and `cpu.max.burst` writes made one by one, in order, each as the
/// kernel makes it: `cpu_max_write()` keeps the group's burst and, without a period, its
/// period; `tg_set_cfs_burst()` keeps its quota and period; both end in
/// `tg_set_cfs_bandwidth()`, which refills the runtime.
///
/// A value whose nanoseconds overflow 64 bits is refused as cgroup v1's
/// `tg_set_cfs_quota()` and `tg_set_cfs_burst()` refuse it (`EINVAL`): v2's
/// `cpu_period_quota_parse()` multiplies without a check, and its wrapped product is then
/// out of `tg_set_cfs_bandwidth()`'s range for any quota a person would write.
fn install_bandwidth(
    sched: &mut Sched,
    id: GroupId,
    writes: &[BandwidthWrite],
) -> Result<(), GroupError> {
    let ns = |us: u64, what: &'static str| us.checked_mul(1000).ok_or(GroupError::Bandwidth(what));
    let mut period = fairsim_balance::group::DEFAULT_CFS_PERIOD;
    let mut quota = fairsim_balance::group::RUNTIME_INF;
    let mut burst = 0;
    for w in writes {
        match *w {
            BandwidthWrite::Max {
                quota_us,
                period_us,
            } => {
                if let Some(p) = period_us {
                    period = ns(p, "period must be at most 1000000 us (its ns overflow u64)")?;
                }
                quota = match quota_us {
                    Some(q) => ns(q, "quota exceeds max_cfs_runtime (its ns overflow u64)")?,
                    None => fairsim_balance::group::RUNTIME_INF,
                };
            }
            BandwidthWrite::Burst(b) => {
                burst = ns(
                    b,
                    "cpu.max.burst exceeds max_cfs_runtime (its ns overflow u64)",
                )?;
            }
        }
        sched.set_group_bandwidth(id, period, quota, burst, 0)?;
    }
    Ok(())
}

/// The cpuset side of a run's groups on its machine ([`Cgroups::cpusets`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpusetPlan {
    /// The exclusive partitions: `--cpuset`'s, then the groups' root partitions.
    pub partitions: Vec<CpuMask>,
    paths: Vec<String>,
    effective: Vec<Option<CpuMask>>,
}

impl CpusetPlan {
    /// The effective CPUs of the group at `path` (`None` for the root, an unknown path,
    /// or a group with no `cpuset.cpus` on the way to the root).
    pub fn effective(&self, path: &str) -> Option<&CpuMask> {
        let i = self.paths.iter().position(|p| p == path)?;
        self.effective[i].as_ref()
    }
}

/// What one declaration of a group writes, parsed (`fairsim_workloads::cgroups` reads
/// it from a `--cgroup` option or a scenario's table).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declared {
    /// `cpu.weight` or `cpu.weight.nice`.
    pub weight: Option<CpuWeight>,
    /// `cpu.idle`, `cpu.max` and `cpu.max.burst`.
    pub writes: Writes,
    /// `cpuset.cpus` and `cpuset.cpus.partition`.
    pub cpuset: CpusetWrites,
    /// Whether the declaration gives the group the cpu controller: a `cpu.*` file, or
    /// no file at all.
    pub cpu: bool,
}

/// Estimated bytes of the scheduler state `groups` task groups add on `cpus` CPUs: a
/// runqueue, an entity and its group-only fields per group and CPU, doubled for the
/// allocator's slack, plus each group's path and tree fields.
pub fn estimate_memory(groups: usize, cpus: usize) -> u64 {
    let per_cpu = std::mem::size_of::<fairsim_balance::cfs_rq::CfsRq>()
        + std::mem::size_of::<fairsim_balance::task::SchedEntity>()
        + std::mem::size_of::<fairsim_balance::group::GroupSeMeta>();
    2 * groups as u64 * (cpus as u64 * per_cpu as u64 + 512)
}
