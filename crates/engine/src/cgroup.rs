//! Task groups as a run declares them: cgroup v2's cpu controller, from `--cgroup
//! '/PATH:cpu.weight=N'`, a scenario's `[cgroup."/PATH"]` tables, a workload's
//! `cgroup=/PATH` and rt-app's per-task `"taskgroup"`.
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

use std::collections::BTreeMap;

use fairsim_balance::group::{
    shares_from_cpu_weight, shares_from_cpu_weight_nice, GroupError, GroupId, ROOT_GROUP,
};
use fairsim_balance::{Kernel, Sched};
use fairsim_topology::{check_cpusets, parse_cpulist, CpuMask};

use crate::error::{ConfigError, EngineError};
use crate::tunable::{tunable_writes, TunableValue};

/// The most groups a run may declare or create, the root not counted: each has a
/// runqueue and an entity on every CPU, so the bound keeps a large machine's state
/// within reach of the memory estimate.
pub const MAX_CGROUPS: usize = 1024;

/// The longest cgroup path taken, in bytes (`PATH_MAX` less its terminating NUL).
pub const MAX_PATH_BYTES: usize = 4095;

/// The longest path component, in bytes (`NAME_MAX`, as kernfs allows a name).
pub const MAX_NAME_BYTES: usize = 255;

pub use crate::error::{KeyError, PathError, KEYS_ALLOWED, PATH_ALLOWED};

/// The most CPUs a `cpuset.cpus` list is checked against before the machine is known
/// (its syntax only; the machine's range is checked by [`Cgroups::cpusets`]).
const CPULIST_SYNTAX_CPUS: usize = 8192;

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

/// A group's `cpu.idle`, `cpu.max` and `cpu.max.burst` writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Writes {
    /// `cpu.idle`.
    pub idle: Option<bool>,
    /// `cpu.max`: the quota in us (`None` for "max") and the period in us if given.
    pub max: Option<(Option<u64>, Option<u64>)>,
    /// `cpu.max.burst` in us.
    pub burst: Option<u64>,
}

impl Writes {
    /// Takes `other`'s writes on top of these, as writing the files again would.
    fn overlay(&mut self, other: Writes) {
        self.idle = other.idle.or(self.idle);
        self.max = other.max.or(self.max);
        self.burst = other.burst.or(self.burst);
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

    /// Declares the group at `path` with the writes `keys` (`cpu.weight=200`), from
    /// `origin`; `field` names the declaration in errors (`--cgroup '/a:...'`). A path
    /// declared before by the same source is refused; one the other source declared
    /// (a scenario's, then the option's) takes the new writes on top, as writing the
    /// file again would.
    pub fn declare<'a>(
        &mut self,
        field: &str,
        path: &str,
        keys: impl IntoIterator<Item = &'a str>,
        origin: Origin,
    ) -> Result<(), EngineError> {
        check_path(path).map_err(|why| ConfigError::CgroupPath {
            field: field.to_string(),
            path: path.to_string(),
            why,
        })?;
        if path == "/" {
            // The kernel refuses the root's cpu.weight (EINVAL), and the root always
            // exists: a declaration of it could only be refused or do nothing.
            return Err(ConfigError::DeclaresRoot {
                field: field.to_string(),
            }
            .into());
        }
        let keys = parse_keys(keys).map_err(|key| ConfigError::CgroupKey {
            field: field.to_string(),
            key,
        })?;
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

    /// Declares the group of one `--cgroup` option: `/PATH` or `/PATH:KEY=V,...`. An item
    /// without `=` after `cpuset.cpus=` continues its list (`cpuset.cpus=0-3,8-11`).
    pub fn declare_option(&mut self, text: &str) -> Result<(), EngineError> {
        let field = format!("--cgroup '{text}'");
        let (path, keys) = text.split_once(':').unwrap_or((text, ""));
        let mut items: Vec<String> = Vec::new();
        for k in keys.split(',').map(str::trim).filter(|k| !k.is_empty()) {
            match items.last_mut() {
                Some(last) if !k.contains('=') && last.starts_with("cpuset.cpus=") => {
                    last.push(',');
                    last.push_str(k);
                }
                _ => items.push(k.to_string()),
            }
        }
        self.declare(
            &field,
            path.trim(),
            items.iter().map(String::as_str),
            Origin::Option,
        )
    }

    /// The groups of a run: a scenario's `[cgroup."/PATH"]` tables (in path order, so
    /// parents first), then the `--cgroup` options in the order given.
    pub fn from_sources(
        tables: &BTreeMap<String, BTreeMap<String, TunableValue>>,
        options: &[String],
    ) -> Result<Cgroups, EngineError> {
        let mut c = Cgroups::default();
        for (path, table) in tables {
            let writes = tunable_writes(table);
            c.declare(
                &format!("scenario table [cgroup.\"{path}\"]"),
                path,
                writes.iter().map(String::as_str),
                Origin::Scenario,
            )?;
        }
        for o in options {
            c.declare_option(o)?;
        }
        Ok(c)
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
    /// writes at time 0, before any task exists: the weight, `cpu.idle`, `cpu.max`, then
    /// `cpu.max.burst` (a burst above the quota is refused as the kernel refuses it).
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
            if g.writes.max.is_some() || g.writes.burst.is_some() {
                let (quota_us, period_us) = g.writes.max.unwrap_or((None, None));
                let period = period_us.map_or(fairsim_balance::group::DEFAULT_CFS_PERIOD, |p| {
                    p.saturating_mul(1000)
                });
                let quota = quota_us.map_or(fairsim_balance::group::RUNTIME_INF, |q| {
                    q.saturating_mul(1000)
                });
                let burst = g.writes.burst.unwrap_or(0).saturating_mul(1000);
                sched
                    .set_group_bandwidth(id, period, quota, burst, 0)
                    .map_err(fail)?;
            }
        }
        Ok(())
    }
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

/// A declaration's writes, as [`parse_keys`] reads them.
struct Keys {
    weight: Option<CpuWeight>,
    writes: Writes,
    cpuset: CpusetWrites,
    /// Whether the declaration gives the group the cpu controller: a `cpu.*` file, or
    /// no file at all.
    cpu: bool,
}

/// Parses a declaration's writes: at most one of `cpu.weight` and `cpu.weight.nice`,
/// each in the kernel's range (its `ERANGE` message), `cpu.idle` (0 or 1), `cpu.max`
/// (`QUOTA_US|max [PERIOD_US]`, as `cpu_period_quota_parse` reads it) and
/// `cpu.max.burst` (us), `cpuset.cpus` (a cpulist, its syntax checked here) and
/// `cpuset.cpus.partition` (`root` or `member`), each once; every other key refused by
/// name.
fn parse_keys<'a>(keys: impl IntoIterator<Item = &'a str>) -> Result<Keys, KeyError> {
    let mut weight: Option<(&str, CpuWeight)> = None;
    let mut writes = Writes::default();
    let mut cpuset = CpusetWrites::default();
    let mut cpu_keys = 0usize;
    let mut cpuset_keys = 0usize;
    let mut seen: Vec<&str> = Vec::new();
    for item in keys {
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (item.trim(), ""),
        };
        if key.starts_with("cpu.") {
            cpu_keys += 1;
        }
        let w = match key {
            "cpu.weight" => {
                let w = value.parse::<u64>().map_err(|_| KeyError::Invalid {
                    key: "cpu.weight",
                    got: value.to_string(),
                    allowed: "an integer from 1 to 10000",
                })?;
                CpuWeight::Weight(w)
            }
            "cpu.weight.nice" => {
                let n = value.parse::<i64>().map_err(|_| KeyError::Invalid {
                    key: "cpu.weight.nice",
                    got: value.to_string(),
                    allowed: "an integer from -20 to 19",
                })?;
                CpuWeight::Nice(n)
            }
            "cpu.idle" | "cpu.max" | "cpu.max.burst" => {
                if seen.contains(&key) {
                    return Err(KeyError::GivenTwice {
                        key: key.to_string(),
                    });
                }
                seen.push(key);
                match key {
                    "cpu.idle" => {
                        writes.idle = Some(match value {
                            "0" => false,
                            "1" => true,
                            _ => {
                                return Err(KeyError::Refused {
                                    key: "cpu.idle",
                                    got: value.to_string(),
                                    errno: "EINVAL",
                                    allowed: "0 or 1",
                                })
                            }
                        })
                    }
                    "cpu.max" => writes.max = Some(parse_cpu_max(value)?),
                    _ => {
                        writes.burst =
                            Some(value.parse::<u64>().map_err(|_| KeyError::Invalid {
                                key: "cpu.max.burst",
                                got: value.to_string(),
                                allowed: "microseconds, an integer up to the cpu.max quota",
                            })?)
                    }
                }
                continue;
            }
            "cpu.uclamp.min" | "cpu.uclamp.max" => {
                return Err(KeyError::Uclamp {
                    key: key.to_string(),
                })
            }
            "cpuset.cpus" | "cpuset.cpus.partition" => {
                if seen.contains(&key) {
                    return Err(KeyError::GivenTwice {
                        key: key.to_string(),
                    });
                }
                seen.push(key);
                cpuset_keys += 1;
                if key == "cpuset.cpus" {
                    parse_cpulist(CPULIST_SYNTAX_CPUS, value).map_err(|why| KeyError::CpuList {
                        got: value.to_string(),
                        why,
                    })?;
                    cpuset.cpus = Some(value.to_string());
                } else {
                    cpuset.partition = Some(match value {
                        "root" => Partition::Root,
                        "member" => Partition::Member,
                        "isolated" => return Err(KeyError::Isolated),
                        _ => {
                            return Err(KeyError::Invalid {
                                key: "cpuset.cpus.partition",
                                got: value.to_string(),
                                allowed: "root or member",
                            })
                        }
                    });
                }
                continue;
            }
            k if k.starts_with("cpuset.") => {
                return Err(KeyError::CpusetFile { key: k.to_string() })
            }
            k => return Err(KeyError::UnknownFile { key: k.to_string() }),
        };
        w.shares().map_err(KeyError::Weight)?;
        if let Some((first, _)) = weight {
            return Err(KeyError::WeightTwice {
                key: key.to_string(),
                first: first.to_string(),
            });
        }
        weight = Some((key, w));
    }
    Ok(Keys {
        weight: weight.map(|(_, w)| w),
        writes,
        cpuset,
        cpu: cpu_keys > 0 || cpuset_keys == 0,
    })
}

/// `cpu_period_quota_parse`: `max` or a quota in us, then optionally a period in us; the
/// ranges are `tg_set_cfs_bandwidth`'s, checked when the write is made.
fn parse_cpu_max(value: &str) -> Result<(Option<u64>, Option<u64>), KeyError> {
    let bad = || {
        KeyError::Refused {
        key: "cpu.max",
        got: value.to_string(),
        errno: "EINVAL",
        allowed: "'QUOTA_US [PERIOD_US]' or 'max [PERIOD_US]', quota and period at least 1000 us, period at most 1000000 us",
    }
    };
    let mut it = value.split_whitespace();
    let quota = match it.next().ok_or_else(bad)? {
        "max" => None,
        q => Some(q.parse::<u64>().map_err(|_| bad())?),
    };
    let period = match it.next() {
        Some(p) => Some(p.parse::<u64>().map_err(|_| bad())?),
        None => None,
    };
    if it.next().is_some() {
        return Err(bad());
    }
    Ok((quota, period))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(options: &[&str]) -> Result<Cgroups, String> {
        let options: Vec<String> = options.iter().map(|s| s.to_string()).collect();
        Cgroups::from_sources(&BTreeMap::new(), &options).map_err(|e| e.to_string())
    }

    #[test]
    fn paths_are_checked() {
        for ok in [
            "/",
            "/a",
            "/a/b",
            "/user.slice/user@1000.service",
            "/x-1_2+3",
        ] {
            assert_eq!(check_path(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("", "not absolute"),
            ("a", "not absolute"),
            ("/a/", "an empty component"),
            ("//a", "an empty component"),
            ("/a/../b", "'..'"),
            ("/.", "'.'"),
            ("/a b", "' '"),
            ("/a,b", "','"),
            ("/a:b", "':'"),
        ] {
            let e = check_path(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(check_path(&format!("/{}", "a".repeat(256))).is_err());
        assert!(check_path(&format!("/{}", "a".repeat(255))).is_ok());
    }

    #[test]
    fn declarations_make_parents_first_and_keep_order() {
        let c = declared(&["/b/c:cpu.weight=200", "/a", "/b:cpu.weight.nice=-5"]).unwrap();
        let got: Vec<(GroupId, String, GroupId, Option<CpuWeight>, Origin)> = c
            .iter()
            .map(|(id, g)| (id, g.path, g.parent, g.weight, g.origin))
            .collect();
        assert_eq!(
            got,
            [
                (1, "/b".into(), 0, Some(CpuWeight::Nice(-5)), Origin::Option),
                (
                    2,
                    "/b/c".into(),
                    1,
                    Some(CpuWeight::Weight(200)),
                    Origin::Option
                ),
                (3, "/a".into(), 0, None, Origin::Option),
            ]
        );
        assert_eq!(c.id("/"), Some(0));
        assert_eq!(c.id("/b/c"), Some(2));
        assert_eq!(c.id("/z"), None);
    }

    #[test]
    fn bad_declarations_name_the_field_and_what_is_allowed() {
        for (spec, needles) in [
            (
                "a:cpu.weight=1",
                &[
                    "--cgroup 'a:cpu.weight=1'",
                    "not absolute",
                    "allowed: an absolute path",
                ][..],
            ),
            (
                "/:cpu.weight=100",
                &["root cgroup", "EINVAL", "allowed: a child path"],
            ),
            ("/", &["root cgroup", "allowed: a child path"]),
            (
                "/a:cpu.weight=0",
                &[
                    "cpu.weight: 0 is out of range (ERANGE)",
                    "allowed: 1 to 10000",
                ],
            ),
            ("/a:cpu.weight=10001", &["ERANGE", "allowed: 1 to 10000"]),
            (
                "/a:cpu.weight=x",
                &[
                    "cpu.weight: invalid value 'x'",
                    "allowed: an integer from 1 to 10000",
                ],
            ),
            ("/a:cpu.weight", &["cpu.weight: invalid value ''"]),
            (
                "/a:cpu.weight.nice=20",
                &["cpu.weight.nice: 20 is out of range", "allowed: -20 to 19"],
            ),
            (
                "/a:cpu.max=50000 x",
                &[
                    "cpu.max: invalid value '50000 x'",
                    "allowed: 'QUOTA_US [PERIOD_US]'",
                ],
            ),
            (
                "/a:cpu.max.burst=-1",
                &["cpu.max.burst: invalid value '-1'"],
            ),
            ("/a:cpu.idle=yes", &["cpu.idle: invalid value 'yes'"]),
            ("/a:cpu.max=1 2 3", &["cpu.max: invalid value '1 2 3'"]),
            (
                "/a:cpuset.cpus=0-x",
                &["cpuset.cpus: invalid value '0-x'", "allowed: a CPU list"],
            ),
            (
                "/a:cpuset.cpus.partition=isolated",
                &[
                    "cpuset.cpus.partition: 'isolated'",
                    "not modelled",
                    "allowed: root or member",
                ],
            ),
            (
                "/a:cpuset.cpus.partition=other",
                &["cpuset.cpus.partition: invalid value 'other'"],
            ),
            (
                "/a:cpuset.mems=0",
                &["cpuset.mems: this cpuset controller file is not modelled"],
            ),
            (
                "/a:cpuset.cpus=1,cpuset.cpus=2",
                &["cpuset.cpus: given twice"],
            ),
            (
                "/a:memory.max=1G",
                &["'memory.max' is not a cpu controller file"],
            ),
            (
                "/a:cpu.weight=5,cpu.weight.nice=3",
                &["given after cpu.weight", "allowed: one of"],
            ),
            ("/a:cpu.weight=5,cpu.weight=6", &["given after cpu.weight"]),
        ] {
            let e = declared(&[spec]).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
            for n in needles {
                assert!(e.contains(n), "{spec}: {n:?} not in {e}");
            }
        }
        let e = declared(&["/a", "/a:cpu.weight=5"]).unwrap_err();
        assert!(e.contains("/a is declared twice"), "{e}");
        // A parent made by `mkdir -p` may still be declared with its own weight.
        let c = declared(&["/a/b", "/a:cpu.weight=5"]).unwrap();
        assert_eq!(
            c.iter().next().unwrap().1.weight,
            Some(CpuWeight::Weight(5))
        );
    }

    #[test]
    fn scenario_tables_come_first_and_options_write_on_top() {
        let mut tables = BTreeMap::new();
        let mut a = BTreeMap::new();
        a.insert("cpu.weight".to_string(), TunableValue::Int(300));
        tables.insert("/a".to_string(), a);
        tables.insert("/b".to_string(), BTreeMap::new());
        let c = Cgroups::from_sources(&tables, &["/a:cpu.weight=50".into(), "/c".into()]).unwrap();
        let got: Vec<(&str, Option<CpuWeight>)> =
            c.all().map(|g| (g.path.as_str(), g.weight)).collect();
        assert_eq!(
            got,
            [
                ("/a", Some(CpuWeight::Weight(50))),
                ("/b", None),
                ("/c", None)
            ]
        );
        let mut bad = BTreeMap::new();
        let mut t = BTreeMap::new();
        t.insert("cpu.max".to_string(), TunableValue::Str("most".into()));
        bad.insert("/x".to_string(), t);
        let e = Cgroups::from_sources(&bad, &[]).unwrap_err().to_string();
        assert!(
            e.starts_with("scenario table [cgroup.\"/x\"]: cpu.max:"),
            "{e}"
        );
    }

    #[test]
    fn joins_need_a_declared_group_unless_they_create_it() {
        let c = declared(&["/a"]).unwrap();
        let key = |p: &str| Join {
            path: p.into(),
            field: "--workload: schbench: cgroup".into(),
            creates: false,
        };
        let rtapp = |p: &str| Join {
            path: p.into(),
            field: "rtapp t.json: tasks.t.taskgroup".into(),
            creates: true,
        };
        assert_eq!(c.resolve(&[key("/a"), key("/")], Kernel::V6_12).unwrap(), c);
        let e = c
            .resolve(&[key("/b")], Kernel::V6_12)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "--workload: schbench: cgroup: '/b' is not a declared cgroup; allowed: /, /a"
            ),
            "{e}"
        );
        let all = c.resolve(&[rtapp("/r/s")], Kernel::V6_12).unwrap();
        let got: Vec<(&str, Origin)> = all.all().map(|g| (g.path.as_str(), g.origin)).collect();
        assert_eq!(
            got,
            [
                ("/a", Origin::Option),
                ("/r", Origin::Parent),
                ("/r/s", Origin::Rtapp)
            ]
        );
    }

    #[test]
    fn cfs_kernels_refuse_groups_in_one_line() {
        let c = declared(&["/a:cpu.weight=100"]).unwrap();
        for k in [
            Kernel::V6_5,
            Kernel::V4_16,
            Kernel::V4_15,
            Kernel::V4_5,
            Kernel::V3_9,
        ] {
            let e = c.resolve(&[], k).unwrap_err().to_string();
            assert!(
                e.starts_with("--cgroup: task groups are modelled for --kernel 6.12 only")
                    && e.ends_with("allowed: --kernel 6.12, or no --cgroup"),
                "{e}"
            );
            let join = Join {
                path: "/".into(),
                field: "--workload: sysbench-cpu: cgroup".into(),
                creates: false,
            };
            let e = Cgroups::default()
                .resolve(&[join], k)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("--workload: sysbench-cpu: cgroup: task groups"),
                "{e}"
            );
            assert!(Cgroups::default().resolve(&[], k).is_ok());
        }
    }

    #[test]
    fn cpuset_only_groups_make_no_task_group_and_keep_the_ids() {
        let c = declared(&[
            "/p:cpuset.cpus=4-7,cpuset.cpus.partition=root",
            "/a:cpu.weight=200",
            "/s/t:cpuset.cpus=0-1",
            "/s/t/u:cpu.weight=50",
            "/q/r:cpuset.cpus=2",
            "/bare",
        ])
        .unwrap();
        let cpu: Vec<(&str, bool)> = c.all().map(|g| (g.path.as_str(), g.cpu)).collect();
        assert_eq!(
            cpu,
            [
                ("/p", false),
                ("/a", true),
                ("/s", true),
                ("/s/t", true),
                ("/s/t/u", true),
                ("/q", false),
                ("/q/r", false),
                ("/bare", true),
            ]
        );
        let ids: Vec<(GroupId, String, GroupId)> =
            c.iter().map(|(id, g)| (id, g.path, g.parent)).collect();
        assert_eq!(
            ids,
            [
                (1, "/a".into(), 0),
                (2, "/s".into(), 0),
                (3, "/s/t".into(), 2),
                (4, "/s/t/u".into(), 3),
                (5, "/bare".into(), 0),
            ]
        );
        assert_eq!(c.len(), 5);
        assert_eq!(c.id("/p"), Some(0));
        assert_eq!(c.id("/q/r"), Some(0));
        assert_eq!(c.id("/s/t/u"), Some(4));
        // A cpuset-only run has no task group, and its joins pass on a CFS kernel.
        let only = declared(&["/p:cpuset.cpus=4-7,cpuset.cpus.partition=root"]).unwrap();
        assert!(only.is_empty() && only.has_cpusets());
        let join = Join {
            path: "/p".into(),
            field: "--workload: schbench: cgroup".into(),
            creates: false,
        };
        assert!(only.resolve(&[join], Kernel::V6_5).is_ok());
        // A later cpu write gives the group the cpu controller.
        let both = declared(&["/p:cpuset.cpus=1", "/p/c:cpu.weight=10"]).unwrap();
        assert_eq!(both.len(), 2);
        // The comma of a CPU list continues cpuset.cpus in --cgroup.
        let lists = declared(&["/x:cpuset.cpus=0-1,4,cpu.weight=5"]).unwrap();
        let g = lists.all().next().unwrap();
        assert_eq!(g.cpuset.cpus.as_deref(), Some("0-1,4"));
        assert_eq!(g.weight, Some(CpuWeight::Weight(5)));
    }

    #[test]
    fn cpusets_give_partitions_and_effective_cpus() {
        let c = declared(&[
            "/p:cpuset.cpus=4-7,cpuset.cpus.partition=root",
            "/p/c",
            "/p/d:cpuset.cpus=5-6,cpuset.cpus.partition=member",
            "/m:cpuset.cpus=2-5",
            "/free",
        ])
        .unwrap();
        let base = vec![CpuMask::from_cpus(8, [0])];
        let plan = c.cpusets(8, &base).unwrap();
        let lists: Vec<String> = plan.partitions.iter().map(CpuMask::to_list).collect();
        assert_eq!(lists, ["0", "4-7"]);
        let eff = |p: &str| plan.effective(p).map(CpuMask::to_list);
        assert_eq!(eff("/p").as_deref(), Some("4-7"));
        assert_eq!(eff("/p/c").as_deref(), Some("4-7"));
        assert_eq!(eff("/p/d").as_deref(), Some("5-6"));
        // A member under the root keeps the CPUs no partition takes.
        assert_eq!(eff("/m").as_deref(), Some("2-3"));
        assert_eq!(eff("/free"), None);
        assert_eq!(eff("/"), None);
    }

    #[test]
    fn bad_cpusets_name_the_field_in_one_line() {
        for (opts, base, needles) in [
            (
                &["/p:cpuset.cpus.partition=root"][..],
                None,
                &["--cgroup: /p: cpuset.cpus.partition=root needs the group's own cpuset.cpus"][..],
            ),
            (
                &["/p:cpuset.cpus=8"],
                None,
                &[
                    "--cgroup: /p: cpuset.cpus: invalid value '8'",
                    "out of range 0-7",
                ],
            ),
            (
                &["/p:cpuset.cpus=0-5:0/3"],
                None,
                &["cpuset.cpus: '0-5:0/3' names no CPU"],
            ),
            (
                &["/a/p:cpuset.cpus=1,cpuset.cpus.partition=root"],
                None,
                &["/a/p: cpuset.cpus.partition=root below another group is not modelled"],
            ),
            (
                &[
                    "/p:cpuset.cpus=0-3,cpuset.cpus.partition=root",
                    "/q:cpuset.cpus=3-4,cpuset.cpus.partition=root",
                ],
                None,
                &["--cgroup cpuset.cpus: 3-4 and 0-3 share CPUs 3"],
            ),
            (
                &["/p:cpuset.cpus=0-3,cpuset.cpus.partition=root"],
                Some(2),
                &["share CPUs 2"],
            ),
            (
                &[
                    "/p:cpuset.cpus=0-3,cpuset.cpus.partition=root",
                    "/p/c:cpuset.cpus=5",
                ],
                None,
                &["/p/c: cpuset.cpus=5 shares no CPU with its parent's effective CPUs (0-3)"],
            ),
        ] {
            let c = declared(opts).unwrap();
            let base: Vec<CpuMask> = base.iter().map(|&b| CpuMask::from_cpus(8, [b])).collect();
            let e = c.cpusets(8, &base).unwrap_err().to_string();
            assert!(!e.contains('\n'), "{e}");
            for n in needles {
                assert!(e.contains(n), "{opts:?}: {n:?} not in {e}");
            }
        }
    }

    #[test]
    fn the_group_count_is_bounded() {
        let many: Vec<String> = (0..=MAX_CGROUPS).map(|i| format!("/g{i}")).collect();
        let e = Cgroups::from_sources(&BTreeMap::new(), &many)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 1024 cgroups"), "{e}");
    }
}
