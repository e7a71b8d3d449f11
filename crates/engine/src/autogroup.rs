//! Autogroup as a run asks for it: `--sysctl kernel.sched_autogroup_enabled=1` (or a
//! scenario's `[sysctl]` table) gives each workload's session an autogroup, a task
//! group under the root that its tasks run in unless a cgroup holds them
//! (`fairsim_balance::group`'s `autogroup.rs` has the kernel's side).
//!
//! What a session is. Each workload (`-w`, a scenario's `workload`) is one tool
//! launched as its own session, as from its own login or a shell job started with
//! `setsid`: `ksys_setsid` ran `sched_autogroup_create_attach` before the tool started,
//! and every task the tool forks or clones keeps that autogroup
//! (`sched_autogroup_fork`: threads share the `signal_struct`, a child process copies
//! its parent's pointer). That covers the helpers a workload starts itself: netperf's
//! launching `sh` and its `netserver` with its children, tbench's `tbench_srv`,
//! hackbench's and forkbench's children, schbench's and rt-app's threads. (A netserver
//! started on its own would daemonize with `setsid` and have an autogroup of its own;
//! fairsim's netperf starts it with the clients.) Session `i` (0-based, in workload
//! order, which is launch order) has `/autogroup-{i + 1}`, as `/proc/PID/autogroup`
//! prints it; the kernel's `autogroup_seq_nr` counts every `setsid` since boot, so a
//! real machine's numbers are higher.
//!
//! The autogroups are created after the declared cgroups, at boot like them, and only
//! while the sysctl is 1: the kernel creates one at every `setsid` whatever the sysctl
//! says, but with it 0 no task joins one, and creating none keeps such a run's outputs
//! as they were. Autogroups need 6.12's group scheduling: a CFS kernel is refused.

use fairsim_balance::group::{autogroup_path, GroupId};
use fairsim_balance::tunables::autogroup_era_error;
use fairsim_balance::{Kernel, Sched};

use crate::cgroup::{Cgroups, MAX_CGROUPS};
use crate::error::{ConfigError, EngineError};

/// `groups` with one autogroup for each of `sessions` sessions, after checking that
/// `kernel` models task groups, that no declared group has an autogroup's path (the
/// outputs name groups by path) and that the groups stay within [`MAX_CGROUPS`].
pub fn with_autogroups(
    mut groups: Cgroups,
    sessions: usize,
    kernel: Kernel,
) -> Result<Cgroups, EngineError> {
    if kernel.is_cfs() {
        return Err(ConfigError::AutogroupKernel(autogroup_era_error(kernel)).into());
    }
    for id in 1..=sessions as u64 {
        let path = autogroup_path(id);
        if let Some((_, g)) = groups.iter().find(|(_, g)| g.path == path) {
            return Err(ConfigError::AutogroupPath {
                field: g.origin.field().to_string(),
                path,
                id,
            }
            .into());
        }
    }
    let total = groups.len() + sessions;
    if total > MAX_CGROUPS {
        return Err(ConfigError::TooManyAutogroups {
            sessions,
            total,
            cgroups: groups.len(),
            max: MAX_CGROUPS,
        }
        .into());
    }
    groups.set_autogroups(sessions);
    Ok(groups)
}

/// Creates `groups`' autogroups on `sched` (`autogroup_create`, in session order),
/// after [`Cgroups::install`] has made the declared groups, so that each gets the id
/// [`Cgroups::autogroup_of`] gave its session's tasks.
pub fn install(groups: &Cgroups, sched: &mut Sched) -> Result<(), EngineError> {
    for i in 0..groups.autogroups() {
        let want: GroupId = groups.autogroup_of(i);
        let made = sched
            .autogroup_create()
            .map_err(|err| ConfigError::Autogroup {
                autogroup: i + 1,
                err,
            })?;
        if made != want {
            return Err(crate::error::InvariantError::AutogroupId {
                autogroup: i + 1,
                made,
                expected: want,
            }
            .into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Groups at `paths` with no file written (a bare `--cgroup /PATH` each).
    fn declared(paths: &[&str]) -> Cgroups {
        let mut c = Cgroups::default();
        for p in paths {
            let bare = crate::cgroup::Declared {
                cpu: true,
                ..Default::default()
            };
            c.declare("--cgroup", p, bare, crate::cgroup::Origin::Option)
                .unwrap();
        }
        c
    }

    #[test]
    fn sessions_get_the_ids_after_the_declared_groups() {
        let g = with_autogroups(declared(&["/a/b", "/c"]), 2, Kernel::V6_12).unwrap();
        assert_eq!((g.len(), g.autogroups()), (5, 2));
        assert_eq!(
            (0..3).map(|i| g.autogroup_of(i)).collect::<Vec<_>>(),
            [4, 5, 0]
        );
        let none = with_autogroups(Cgroups::default(), 0, Kernel::V6_12).unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn refusals_name_the_field_and_what_is_allowed_in_one_line() {
        for k in Kernel::ALL.into_iter().filter(|k| k.is_cfs()) {
            let e = with_autogroups(Cgroups::default(), 1, k)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(
                    "--sysctl: kernel.sched_autogroup_enabled=1 puts each session in an autogroup"
                ) && e.contains(&format!("(Linux {}'s group scheduling", k.release()))
                    && e.ends_with("allowed: --kernel 6.12, or kernel.sched_autogroup_enabled=0"),
                "{e}"
            );
        }
        let e = with_autogroups(declared(&["/autogroup-2"]), 2, Kernel::V6_12)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--cgroup: /autogroup-2 is the name autogroup 2 goes by")
                && e.ends_with("allowed: another path, or kernel.sched_autogroup_enabled=0"),
            "{e}"
        );
        // A path no session takes is any cgroup's.
        assert!(with_autogroups(declared(&["/autogroup-3"]), 2, Kernel::V6_12).is_ok());
        let e = with_autogroups(declared(&["/a"]), MAX_CGROUPS, Kernel::V6_12)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("at most 1024 cgroups and autogroups together") && !e.contains('\n'),
            "{e}"
        );
    }
}
