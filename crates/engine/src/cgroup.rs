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

use std::collections::BTreeMap;

use fairsim_balance::group::{
    shares_from_cpu_weight, shares_from_cpu_weight_nice, GroupError, GroupId, ROOT_GROUP,
};
use fairsim_balance::{Kernel, Sched};

use crate::error::EngineError;
use crate::scenario::{tunable_writes, TunableValue};

/// The most groups a run may declare or create, the root not counted: each has a
/// runqueue and an entity on every CPU, so the bound keeps a large machine's state
/// within reach of the memory estimate.
pub const MAX_CGROUPS: usize = 1024;

/// The longest cgroup path taken, in bytes (`PATH_MAX` less its terminating NUL).
pub const MAX_PATH_BYTES: usize = 4095;

/// The longest path component, in bytes (`NAME_MAX`, as kernfs allows a name).
pub const MAX_NAME_BYTES: usize = 255;

/// What a path may be, for the errors.
pub const PATH_ALLOWED: &str = "an absolute path such as /a or /a/b, each component 1 to 255 letters, digits or '-', '_', '.', '@', '+' (not '.' or '..')";

/// The cpu controller files a declaration may write, for the errors.
pub const KEYS_ALLOWED: &str = "cpu.weight=N (1 to 10000) or cpu.weight.nice=N (-20 to 19), cpu.idle=0|1, cpu.max='QUOTA_US|max [PERIOD_US]', cpu.max.burst=US";

/// Checks `path` as a cgroup path: `/` (the root) or `/`-separated components under it,
/// each a name cgroupfs would take and that fairsim's option syntax can carry (no `,`,
/// `:` or `=`, which separate keys and values in `--cgroup` and `--workload`). Returns
/// why not.
pub fn check_path(path: &str) -> Result<(), String> {
    if path == "/" {
        return Ok(());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err("not absolute".into());
    };
    if path.len() > MAX_PATH_BYTES {
        return Err(format!("longer than {MAX_PATH_BYTES} bytes"));
    }
    for name in rest.split('/') {
        if name.is_empty() {
            return Err("an empty component".into());
        }
        if name == "." || name == ".." {
            return Err(format!("the component '{name}'"));
        }
        if name.len() > MAX_NAME_BYTES {
            return Err(format!("a component longer than {MAX_NAME_BYTES} bytes"));
        }
        if let Some(c) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "-_.@+".contains(*c)))
        {
            return Err(format!("the character {c:?}"));
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

/// One group other than the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cgroup {
    /// Its path, `/a/b`.
    pub path: String,
    /// Its parent's id (the root is 0).
    pub parent: GroupId,
    /// The weight written to it, if any (the default is `cpu.weight` 100).
    pub weight: Option<CpuWeight>,
    /// Its other cpu controller writes.
    pub writes: Writes,
    /// Where it came from.
    pub origin: Origin,
}

/// The groups of a run in creation order, parents before children: group `i` here is
/// the scheduler's group `i + 1` (`fairsim_balance::group::GroupId`; 0 is the root,
/// which always exists and is not listed), then the sessions' autogroups. Empty: no
/// task groups, and the run is what it was without them.
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
    /// Whether no group but the root exists.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty() && self.autogroups == 0
    }

    /// The number of groups, autogroups included and the root not counted.
    pub fn len(&self) -> usize {
        self.groups.len() + self.autogroups
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
            self.groups.len() + 1 + i
        } else {
            ROOT_GROUP
        }
    }

    /// The declared groups with their scheduler ids, in creation order.
    pub fn iter(&self) -> impl Iterator<Item = (GroupId, &Cgroup)> {
        self.groups.iter().enumerate().map(|(i, g)| (i + 1, g))
    }

    /// The id of the group at `path` (`/` is the root, 0).
    pub fn id(&self, path: &str) -> Option<GroupId> {
        if path == "/" {
            return Some(ROOT_GROUP);
        }
        self.groups
            .iter()
            .position(|g| g.path == path)
            .map(|i| i + 1)
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
        if let Some(id) = self.id(path) {
            return Ok(id);
        }
        let parent = parent_path(path);
        let parent_id = self.mkdir_p(parent, Origin::Parent)?;
        if self.groups.len() >= MAX_CGROUPS {
            return Err(EngineError::Config(format!(
                "{}: creating {path} makes more than {MAX_CGROUPS} cgroups; allowed: at most {MAX_CGROUPS}, parents included",
                origin.field()
            )));
        }
        self.groups.push(Cgroup {
            path: path.to_string(),
            parent: parent_id,
            weight: None,
            writes: Writes::default(),
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
        let bad = |what: String| EngineError::Config(format!("{field}: {what}"));
        check_path(path).map_err(|why| {
            bad(format!(
                "invalid path '{path}' ({why}); allowed: {PATH_ALLOWED}"
            ))
        })?;
        if path == "/" {
            // The kernel refuses the root's cpu.weight (EINVAL), and the root always
            // exists: a declaration of it could only be refused or do nothing.
            return Err(bad(
                "'/' is the root cgroup, which always exists and whose cpu.weight cannot be written (EINVAL); allowed: a child path such as /a".into(),
            ));
        }
        let (weight, writes) = parse_keys(keys).map_err(bad)?;
        if let Some(i) = self.id(path).map(|id| id - 1) {
            let g = &mut self.groups[i];
            if g.origin == origin {
                return Err(bad(format!(
                    "{path} is declared twice; allowed: each path once (its keys comma-separated in one declaration)"
                )));
            }
            g.origin = origin;
            if weight.is_some() {
                g.weight = weight;
            }
            g.writes.overlay(writes);
            return Ok(());
        }
        let id = self.mkdir_p(path, origin).map_err(|e| match e {
            EngineError::Config(m) => bad(m.replacen(&format!("{}: ", origin.field()), "", 1)),
            other => other,
        })?;
        self.groups[id - 1].weight = weight;
        self.groups[id - 1].writes = writes;
        Ok(())
    }

    /// Declares the group of one `--cgroup` option: `/PATH` or `/PATH:KEY=V,...`.
    pub fn declare_option(&mut self, text: &str) -> Result<(), EngineError> {
        let field = format!("--cgroup '{text}'");
        let (path, keys) = text.split_once(':').unwrap_or((text, ""));
        let keys = keys.split(',').map(str::trim).filter(|k| !k.is_empty());
        self.declare(&field, path.trim(), keys, Origin::Option)
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
            let (field, what) = match (self.groups.first(), joins.first()) {
                (Some(g), _) => (g.origin.field().to_string(), "no --cgroup"),
                (None, Some(j)) if j.creates => (j.field.clone(), "no taskgroup"),
                (None, Some(j)) => (j.field.clone(), "no cgroup="),
                (None, None) => return Ok(self.clone()),
            };
            return Err(EngineError::Config(format!(
                "{field}: task groups are modelled for --kernel 6.12 only (Linux {}'s group scheduling is not ported); allowed: --kernel 6.12, or {what}",
                kernel.release()
            )));
        }
        let mut all = self.clone();
        for j in joins {
            if all.id(&j.path).is_some() {
                continue;
            }
            if !j.creates {
                return Err(EngineError::Config(format!(
                    "{}: '{}' is not a declared cgroup; allowed: {} (declare others with --cgroup /PATH or a scenario's [cgroup.\"/PATH\"] table)",
                    j.field,
                    j.path,
                    self.allowed_paths()
                )));
            }
            all.mkdir_p(&j.path, Origin::Rtapp).map_err(|e| match e {
                EngineError::Config(m) => {
                    EngineError::Config(m.replacen(Origin::Rtapp.field(), &j.field, 1))
                }
                other => other,
            })?;
        }
        Ok(all)
    }

    /// Creates the groups on `sched` as cgroupfs would: each `mkdir` in order, then its
    /// writes at time 0, before any task exists: the weight, `cpu.idle`, `cpu.max`, then
    /// `cpu.max.burst` (a burst above the quota is refused as the kernel refuses it).
    /// The autogroups come after them ([`crate::autogroup::install`]).
    pub fn install(&self, sched: &mut Sched) -> Result<(), EngineError> {
        for (id, g) in self.iter() {
            let made = sched.create_task_group(g.parent, &g.path).map_err(|e| {
                EngineError::Config(format!("{}: {}: {e}", g.origin.field(), g.path))
            })?;
            if made != id {
                return Err(EngineError::Invariant(format!(
                    "cgroup {} was created as task group {made}, expected {id}",
                    g.path
                )));
            }
            if let Some(w) = g.weight {
                let shares = w.shares().map_err(|e| {
                    EngineError::Config(format!("{}: {}: {e}", g.origin.field(), g.path))
                })?;
                sched.set_group_shares(id, shares, 0).map_err(|e| {
                    EngineError::Config(format!("{}: {}: {e}", g.origin.field(), g.path))
                })?;
            }
            let fail = |e: GroupError| {
                EngineError::Config(format!("{}: {}: {e}", g.origin.field(), g.path))
            };
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

/// Parses a declaration's writes: at most one of `cpu.weight` and `cpu.weight.nice`,
/// each in the kernel's range (its `ERANGE` message), `cpu.idle` (0 or 1), `cpu.max`
/// (`QUOTA_US|max [PERIOD_US]`, as `cpu_period_quota_parse` reads it) and
/// `cpu.max.burst` (us), each once; every other key refused by name.
fn parse_keys<'a>(
    keys: impl IntoIterator<Item = &'a str>,
) -> Result<(Option<CpuWeight>, Writes), String> {
    let mut weight: Option<(&str, CpuWeight)> = None;
    let mut writes = Writes::default();
    let mut seen: Vec<&str> = Vec::new();
    for item in keys {
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (item.trim(), ""),
        };
        let w = match key {
            "cpu.weight" => {
                let w = value.parse::<u64>().map_err(|_| {
                    format!("cpu.weight: invalid value '{value}'; allowed: an integer from 1 to 10000")
                })?;
                CpuWeight::Weight(w)
            }
            "cpu.weight.nice" => {
                let n = value.parse::<i64>().map_err(|_| {
                    format!("cpu.weight.nice: invalid value '{value}'; allowed: an integer from -20 to 19")
                })?;
                CpuWeight::Nice(n)
            }
            "cpu.idle" | "cpu.max" | "cpu.max.burst" => {
                if seen.contains(&key) {
                    return Err(format!("{key}: given twice; allowed: each file once"));
                }
                seen.push(key);
                match key {
                    "cpu.idle" => {
                        writes.idle = Some(match value {
                            "0" => false,
                            "1" => true,
                            _ => {
                                return Err(format!(
                                    "cpu.idle: invalid value '{value}' (EINVAL); allowed: 0 or 1"
                                ))
                            }
                        })
                    }
                    "cpu.max" => writes.max = Some(parse_cpu_max(value)?),
                    _ => {
                        writes.burst = Some(value.parse::<u64>().map_err(|_| {
                            format!("cpu.max.burst: invalid value '{value}'; allowed: microseconds, an integer up to the cpu.max quota")
                        })?)
                    }
                }
                continue;
            }
            "cpu.uclamp.min" | "cpu.uclamp.max" => {
                return Err(format!(
                    "{key}: group utilization clamps are not modelled yet; allowed: {KEYS_ALLOWED} (or uclamp= on the workload)"
                ))
            }
            k if k.starts_with("cpuset.") => {
                return Err(format!(
                    "{k}: the cpuset controller's files are not modelled per group; allowed: {KEYS_ALLOWED} (exclusive partitions: --cpuset LIST)"
                ))
            }
            k => {
                return Err(format!(
                    "'{k}' is not a cpu controller file fairsim models; allowed: {KEYS_ALLOWED}"
                ))
            }
        };
        w.shares().map_err(|e| e.to_string())?;
        if let Some((first, _)) = weight {
            return Err(format!(
                "{key}: given after {first}, which sets the same weight; allowed: one of cpu.weight or cpu.weight.nice, once"
            ));
        }
        weight = Some((key, w));
    }
    Ok((weight.map(|(_, w)| w), writes))
}

/// `cpu_period_quota_parse`: `max` or a quota in us, then optionally a period in us; the
/// ranges are `tg_set_cfs_bandwidth`'s, checked when the write is made.
fn parse_cpu_max(value: &str) -> Result<(Option<u64>, Option<u64>), String> {
    let bad = || {
        format!(
            "cpu.max: invalid value '{value}' (EINVAL); allowed: 'QUOTA_US [PERIOD_US]' or 'max [PERIOD_US]', quota and period at least 1000 us, period at most 1000000 us"
        )
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
            let e = check_path(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(check_path(&format!("/{}", "a".repeat(256))).is_err());
        assert!(check_path(&format!("/{}", "a".repeat(255))).is_ok());
    }

    #[test]
    fn declarations_make_parents_first_and_keep_order() {
        let c = declared(&["/b/c:cpu.weight=200", "/a", "/b:cpu.weight.nice=-5"]).unwrap();
        let got: Vec<(GroupId, &str, GroupId, Option<CpuWeight>, Origin)> = c
            .iter()
            .map(|(id, g)| (id, g.path.as_str(), g.parent, g.weight, g.origin))
            .collect();
        assert_eq!(
            got,
            [
                (1, "/b", 0, Some(CpuWeight::Nice(-5)), Origin::Option),
                (2, "/b/c", 1, Some(CpuWeight::Weight(200)), Origin::Option),
                (3, "/a", 0, None, Origin::Option),
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
            ("/a:cpuset.cpus=0-3", &["cpuset.cpus", "--cpuset LIST"]),
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
            c.iter().map(|(_, g)| (g.path.as_str(), g.weight)).collect();
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
        let got: Vec<(&str, Origin)> = all
            .iter()
            .map(|(_, g)| (g.path.as_str(), g.origin))
            .collect();
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
    fn the_group_count_is_bounded() {
        let many: Vec<String> = (0..=MAX_CGROUPS).map(|i| format!("/g{i}")).collect();
        let e = Cgroups::from_sources(&BTreeMap::new(), &many)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 1024 cgroups"), "{e}");
    }
}
