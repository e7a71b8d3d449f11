//! Autogroup (`CONFIG_SCHED_AUTOGROUP`, kernel/sched/autogroup.c of 6.12.117): every
//! session (`setsid`) gets a task group of its own under the root, and while
//! `kernel.sched_autogroup_enabled` is 1 a task that cgroups left in the root task group
//! runs in its session's autogroup instead. A desktop's or a server's sessions then
//! share the CPUs by session, not by thread count.
//!
//! What is ported: `autogroup_create` (the group, its id from `autogroup_seq_nr`, its
//! nice), `task_wants_autogroup` and `autogroup_task_group` (read at each fork by
//! `sched_cgroup_fork`), `task_group_is_autogroup` and `autogroup_path`. The session a
//! task belongs to (`p->signal->autogroup`) is the caller's to track: the engine knows
//! which task launched which. Not ported: the moves of `sched_move_task`
//! (`autogroup_move_group` when a running process calls `setsid`, a sysctl write after
//! the tasks exist, `sched_autogroup_exit_task` moving an exiting task to the root), as
//! fairsim creates every session before its first fork and never moves a task between
//! groups; and `/proc/PID/autogroup` writes (`proc_sched_autogroup_set_nice`), so every
//! autogroup keeps nice 0.

use super::{GroupError, GroupId, TaskGroups, ROOT_GROUP};
use crate::weight::{scale_load, SCHED_PRIO_TO_WEIGHT};
use crate::Sched;

/// `struct autogroup`: what a task group made for a session carries (`tg->autogroup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Autogroup {
    /// `ag->id`: `autogroup_seq_nr` after the increment, 1 for the first.
    pub id: u64,
    /// `ag->nice`: 0 at creation (`kzalloc`), the group's shares being those of nice 0.
    pub nice: i32,
}

/// `autogroup_path`: the name an autogroup goes by in `/proc/sched_debug` and
/// `/proc/PID/autogroup` (`/autogroup-1`).
pub fn autogroup_path(id: u64) -> String {
    format!("/autogroup-{id}")
}

/// `task_wants_autogroup`: only a task whose cgroup is the root task group runs in its
/// session's autogroup; one an explicit cgroup holds stays there. The kernel's
/// `PF_EXITING` clause does not arise: fairsim never moves an exiting task.
pub fn task_wants_autogroup(tg: GroupId) -> bool {
    tg == ROOT_GROUP
}

impl TaskGroups {
    /// `task_group_is_autogroup`.
    pub fn is_autogroup(&self, g: GroupId) -> bool {
        self.tgs.get(g).is_some_and(|t| t.autogroup.is_some())
    }
}

impl Sched {
    /// `autogroup_create`: a new task group under the root (`sched_create_group` +
    /// `sched_online_group`), its id the next of `autogroup_seq_nr`, its path as
    /// `autogroup_path` prints it and its shares those of its nice, 0 (1024, the
    /// default). The kernel creates one at every `setsid` whatever the sysctl says;
    /// the caller creates them only while it is 1, since an autogroup no task can join
    /// changes nothing but the list of groups.
    pub fn autogroup_create(&mut self) -> Result<GroupId, GroupError> {
        let id = self.groups.autogroup_seq_nr + 1;
        let g = self.create_task_group(ROOT_GROUP, &autogroup_path(id))?;
        self.groups.autogroup_seq_nr = id;
        let ag = Autogroup { id, nice: 0 };
        self.groups.tgs[g].shares = scale_load(SCHED_PRIO_TO_WEIGHT[(ag.nice + 20) as usize]);
        self.groups.tgs[g].autogroup = Some(ag);
        Ok(g)
    }

    /// `autogroup_task_group(p, tg)`: the task group a task whose cgroup is `tg` runs
    /// in, `session` being its session's autogroup (`p->signal->autogroup->tg`; the root
    /// for `autogroup_default`, a task outside any autogroup): the session's while
    /// `sysctl_sched_autogroup_enabled` is 1 and the task wants it, else `tg`.
    pub fn autogroup_task_group(&self, tg: GroupId, session: GroupId) -> GroupId {
        if self.groups.autogroup_enabled && task_wants_autogroup(tg) {
            session
        } else {
            tg
        }
    }

    /// `sysctl_sched_autogroup_enabled`, as the run's tunables left it at boot.
    pub fn autogroup_enabled(&self) -> bool {
        self.groups.autogroup_enabled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tunables::{Place, Tunables};
    use crate::{Kernel, SchedParams};

    fn sched(autogroup: bool) -> Sched {
        use fairsim_topology::source::{parse_spec, SpecOptions};
        use fairsim_topology::{build_sched_domains, Arch, BuildOptions};
        let m = parse_spec(&SpecOptions::new("2", Arch::X86)).unwrap();
        let topo = build_sched_domains(&m, BuildOptions::default()).unwrap();
        let mut params = SchedParams::default();
        let mut t = Tunables::default();
        let v = if autogroup { "1" } else { "0" };
        t.write(
            Kernel::V6_12,
            Place::Sysctl,
            &format!("kernel.sched_autogroup_enabled={v}"),
        )
        .unwrap();
        params.tunables = t;
        Sched::new(m, topo, params)
    }

    #[test]
    fn autogroups_are_root_children_numbered_from_one_at_nice_0() {
        let mut s = sched(true);
        let x = s.create_task_group(ROOT_GROUP, "/x").unwrap();
        let a = s.autogroup_create().unwrap();
        let b = s.autogroup_create().unwrap();
        let tg = s.task_groups();
        assert_eq!(
            (tg.tgs[a].path.as_str(), tg.tgs[b].path.as_str()),
            ("/autogroup-1", "/autogroup-2")
        );
        assert_eq!((tg.tgs[a].parent, tg.tgs[a].depth), (Some(ROOT_GROUP), 0));
        assert_eq!(tg.tgs[b].autogroup, Some(Autogroup { id: 2, nice: 0 }));
        assert_eq!(tg.tgs[a].shares, scale_load(1024));
        assert!(tg.is_autogroup(a) && !tg.is_autogroup(x) && !tg.is_autogroup(ROOT_GROUP));
    }

    #[test]
    fn only_tasks_left_in_the_root_join_their_session_and_only_when_enabled() {
        let mut on = sched(true);
        let x = on.create_task_group(ROOT_GROUP, "/x").unwrap();
        let ag = on.autogroup_create().unwrap();
        assert!(on.autogroup_enabled());
        assert_eq!(on.autogroup_task_group(ROOT_GROUP, ag), ag);
        assert_eq!(on.autogroup_task_group(x, ag), x);
        // autogroup_default: a task outside any session stays in the root.
        assert_eq!(on.autogroup_task_group(ROOT_GROUP, ROOT_GROUP), ROOT_GROUP);
        let mut off = sched(false);
        let ag = off.autogroup_create().unwrap();
        assert!(!off.autogroup_enabled());
        assert_eq!(off.autogroup_task_group(ROOT_GROUP, ag), ROOT_GROUP);
    }
}
