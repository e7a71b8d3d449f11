//! An rt-app thread's scheduling settings through its phases: the task object's and each
//! phase's `policy`, `priority`, `util_min`, `util_max` and `taskgroup`, applied as
//! rt-app's `thread_body` applies them.
//!
//! rt-app reads a task object's settings with `parse_sched_data(obj, default_policy)` and a
//! phase's with `parse_sched_data(obj, same)`: a phase without `policy` keeps the thread's
//! (`same`), and its `priority` then defaults to "unchanged"; a phase *with* `policy`
//! takes `priority` 0 (`DEFAULT_THREAD_NICE`) when it gives none, so naming a policy
//! resets the nice value. `util_min` and `util_max` default to -1, "no change"
//! (`_set_thread_uclamp` sets only the clamps that are not -1, with
//! `SCHED_FLAG_KEEP_ALL`); LISA writes -1 to mean "no clamp" on kernels from 5.11, and
//! rt-app reads it as "unchanged". `taskgroup` `""` (or absent) leaves the group alone.
//! `thread_body` sets the task object's settings as the thread starts, then at the start
//! of each phase's first pass calls `set_thread_param` and `set_thread_taskgroup` with
//! the phase's, which change only what the phase names.
//!
//! fairsim sets a thread's policy, nice value, clamps and group once, when the thread is
//! created; the engine has no operation that changes them mid-run. So [`fold`] runs the
//! phases' settings in order, as rt-app would, and accepts the file when the settings in
//! effect are the same in every phase that runs: the thread then runs with the first
//! phase's (rt-app sets them before the first phase's work, so no work runs with any
//! other). A phase that changes them is refused with the path of the key that does.
//! LISA writes every property into each phase, and drops the ones a phase repeats from
//! the one before, so a LISA task whose properties do not change reads as the first
//! phase setting them.

use fairsim_balance::Policy;

/// The settings in effect on a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sched {
    /// The fair-class policy.
    pub(crate) policy: Policy,
    /// The nice value.
    pub(crate) nice: i32,
    /// `util_min` as set (`None`: never set).
    pub(crate) util_min: Option<u32>,
    /// `util_max` as set (`None`: never set).
    pub(crate) util_max: Option<u32>,
    /// The task group (`None`: the group rt-app runs in).
    pub(crate) taskgroup: Option<String>,
}

impl Sched {
    /// The clamps as the task carries them: `None` when neither was set, else both, the
    /// one not set at the kernel's default (0 for the minimum, 1024 for the maximum).
    pub(crate) fn uclamp(&self) -> Option<(u32, u32)> {
        (self.util_min.is_some() || self.util_max.is_some())
            .then(|| (self.util_min.unwrap_or(0), self.util_max.unwrap_or(1024)))
    }
}

/// A key of a task or phase object, with its path for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key<T> {
    /// The value.
    pub(crate) value: T,
    /// The key's path (`tasks.NAME.phases.PHASE.KEY`).
    pub(crate) path: String,
}

/// `value` as the key at `path`.
pub(crate) fn key<T>(value: T, path: &str) -> Option<Key<T>> {
    Some(Key {
        value,
        path: path.to_string(),
    })
}

/// The scheduling keys one phase names (each `None` when absent, a clamp of -1 and a
/// `taskgroup` of `""` included).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PhaseKeys {
    /// `policy`.
    pub(crate) policy: Option<Key<Policy>>,
    /// `priority` (a nice value).
    pub(crate) priority: Option<Key<i32>>,
    /// `util_min`.
    pub(crate) util_min: Option<Key<u32>>,
    /// `util_max`.
    pub(crate) util_max: Option<Key<u32>>,
    /// `taskgroup`.
    pub(crate) taskgroup: Option<Key<String>>,
}

/// Why a file's phases cannot run: the key's path and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The key's path.
    pub(crate) path: String,
    /// What is wrong, then what is allowed.
    pub(crate) what: String,
}

/// What rt-app's `string_to_policy` makes of a `policy` string, in fairsim: a fair-class
/// policy, or why not (rt-app exits on a name it does not know).
pub(crate) fn policy(name: &str) -> Result<Policy, String> {
    const ALLOWED: &str =
        "SCHED_OTHER, SCHED_BATCH or SCHED_IDLE (fairsim emulates the fair class)";
    match name {
        "SCHED_OTHER" => Ok(Policy::Normal),
        "SCHED_BATCH" => Ok(Policy::Batch),
        "SCHED_IDLE" => Ok(Policy::Idle),
        "SCHED_FIFO" | "SCHED_RR" | "SCHED_DEADLINE" => {
            Err(format!("'{name}' is not modelled; allowed: {ALLOWED}"))
        }
        _ => Err(format!(
            "'{name}' is not a policy rt-app knows (it exits); allowed: {ALLOWED}"
        )),
    }
}

/// rt-app's name of a fair-class policy (`policy_to_string`).
pub(crate) fn policy_name(p: Policy) -> &'static str {
    match p {
        Policy::Normal => "SCHED_OTHER",
        Policy::Batch => "SCHED_BATCH",
        Policy::Idle => "SCHED_IDLE",
    }
}

/// The kernel's `uclamp_validate`: the clamps in effect after a `sched_setattr` must
/// not cross (rt-app exits when it fails).
fn check_clamps(s: &Sched, path: &str) -> Result<(), Refusal> {
    match s.uclamp() {
        Some((min, max)) if min > max => Err(Refusal {
            path: path.to_string(),
            what: format!(
                "leaves util_min {min} above util_max {max} (uclamp_validate fails and rt-app exits); allowed: util_min not above util_max"
            ),
        }),
        _ => Ok(()),
    }
}

/// `thread`'s settings after the phases' keys, as rt-app applies them, when they are the
/// same in every phase that runs; else the key that changes them. `runs[i]` says
/// whether phase `i` ever runs (a phase after one that loops for ever does not).
pub(crate) fn fold(thread: &Sched, phases: &[(PhaseKeys, bool)]) -> Result<Sched, Refusal> {
    let mut s = thread.clone();
    let mut first: Option<Sched> = None;
    for (keys, runs) in phases {
        if !runs {
            break;
        }
        // Which key set each setting in this phase (for the message).
        let mut nice_by = None;
        if let Some(p) = &keys.policy {
            s.policy = p.value;
            // A named policy brings priority 0 when the phase gives none.
            s.nice = 0;
            nice_by = Some((
                p.path.clone(),
                "names a policy without a priority, which rt-app reads as priority 0",
            ));
        }
        if let Some(p) = &keys.priority {
            s.nice = p.value;
            nice_by = Some((p.path.clone(), "sets the priority (nice value)"));
        }
        // One sched_setattr sets both clamps, so they are checked together.
        if let Some(m) = &keys.util_min {
            s.util_min = Some(m.value);
        }
        if let Some(m) = &keys.util_max {
            s.util_max = Some(m.value);
        }
        if let Some(m) = keys.util_min.as_ref().or(keys.util_max.as_ref()) {
            check_clamps(&s, &m.path)?;
        }
        if let Some(g) = &keys.taskgroup {
            s.taskgroup = Some(g.value.clone());
        }
        let Some(before) = &first else {
            first = Some(s.clone());
            continue;
        };
        let show = |x: Option<u32>| x.map_or("unset".to_string(), |v| v.to_string());
        let group = |g: &Option<String>| g.clone().unwrap_or_else(|| "none".to_string());
        let changed: Option<(String, String)> = if s.policy != before.policy {
            keys.policy.as_ref().map(|p| {
                (
                    p.path.clone(),
                    format!(
                        "changes the policy from {} to {}",
                        policy_name(before.policy),
                        policy_name(s.policy)
                    ),
                )
            })
        } else if s.nice != before.nice {
            nice_by.map(|(path, how)| {
                (
                    path,
                    format!(
                        "{how}: the nice value goes from {} to {}",
                        before.nice, s.nice
                    ),
                )
            })
        } else if s.util_min != before.util_min {
            keys.util_min.as_ref().map(|m| {
                (
                    m.path.clone(),
                    format!(
                        "changes util_min from {} to {}",
                        show(before.util_min),
                        show(s.util_min)
                    ),
                )
            })
        } else if s.util_max != before.util_max {
            keys.util_max.as_ref().map(|m| {
                (
                    m.path.clone(),
                    format!(
                        "changes util_max from {} to {}",
                        show(before.util_max),
                        show(s.util_max)
                    ),
                )
            })
        } else if s.taskgroup != before.taskgroup {
            keys.taskgroup.as_ref().map(|g| {
                (
                    g.path.clone(),
                    format!(
                        "changes the task group from {} to {}",
                        group(&before.taskgroup),
                        group(&s.taskgroup)
                    ),
                )
            })
        } else {
            None
        };
        if let Some((path, how)) = changed {
            return Err(Refusal {
                path,
                what: format!(
                    "{how} mid-run, which is not modelled (a thread's settings are fixed when it is created); allowed: the same policy, priority, util_min, util_max and taskgroup in every phase (a clamp of -1 or a taskgroup of \"\" leaves it unchanged)"
                ),
            });
        }
    }
    Ok(first.unwrap_or(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread() -> Sched {
        Sched {
            policy: Policy::Normal,
            nice: 0,
            util_min: None,
            util_max: None,
            taskgroup: None,
        }
    }

    #[test]
    fn settings_named_once_hold_from_the_first_phase() {
        let first = PhaseKeys {
            priority: key(5, "p0.priority"),
            util_min: key(200, "p0.util_min"),
            util_max: key(900, "p0.util_max"),
            taskgroup: key("/g".to_string(), "p0.taskgroup"),
            ..PhaseKeys::default()
        };
        // A later phase that repeats a setting, or names none, changes nothing.
        let again = PhaseKeys {
            priority: key(5, "p1.priority"),
            ..PhaseKeys::default()
        };
        let s = fold(
            &thread(),
            &[(first, true), (again, true), (PhaseKeys::default(), true)],
        )
        .unwrap();
        assert_eq!(s.nice, 5);
        assert_eq!(s.uclamp(), Some((200, 900)));
        assert_eq!(s.taskgroup.as_deref(), Some("/g"));
    }

    #[test]
    fn a_change_is_refused_at_the_key_that_makes_it() {
        let p0 = PhaseKeys {
            util_min: key(135, "p0.util_min"),
            util_max: key(135, "p0.util_max"),
            ..PhaseKeys::default()
        };
        let p1 = PhaseKeys {
            util_min: key(190, "p1.util_min"),
            util_max: key(190, "p1.util_max"),
            ..PhaseKeys::default()
        };
        let e = fold(&thread(), &[(p0.clone(), true), (p1.clone(), true)]).unwrap_err();
        // Both clamps move together (one sched_setattr): no crossing on the way.
        assert_eq!(e.path, "p1.util_min", "{e:?}");
        assert!(
            e.what.contains("changes util_min from 135 to 190"),
            "{}",
            e.what
        );
        // The same phase after one that loops for ever never runs.
        assert!(fold(&thread(), &[(p0, true), (p1, false)]).is_ok());
    }

    #[test]
    fn naming_a_policy_resets_the_nice_value() {
        let p0 = PhaseKeys {
            priority: key(5, "p0.priority"),
            ..PhaseKeys::default()
        };
        let p1 = PhaseKeys {
            policy: key(Policy::Normal, "p1.policy"),
            ..PhaseKeys::default()
        };
        let e = fold(&thread(), &[(p0, true), (p1, true)]).unwrap_err();
        assert_eq!(e.path, "p1.policy");
        assert!(e.what.contains("from 5 to 0"), "{}", e.what);
    }

    #[test]
    fn crossed_clamps_are_refused_as_uclamp_validate_does() {
        let p0 = PhaseKeys {
            util_max: key(100, "p0.util_max"),
            ..PhaseKeys::default()
        };
        let p1 = PhaseKeys {
            util_min: key(300, "p1.util_min"),
            ..PhaseKeys::default()
        };
        let e = fold(&thread(), &[(p0, true), (p1, true)]).unwrap_err();
        assert_eq!(e.path, "p1.util_min");
        assert!(e.what.contains("uclamp_validate"));
    }

    #[test]
    fn policies_as_rt_app_names_them() {
        assert_eq!(policy("SCHED_IDLE"), Ok(Policy::Idle));
        assert_eq!(policy("SCHED_BATCH"), Ok(Policy::Batch));
        assert!(policy("SCHED_FIFO").unwrap_err().contains("not modelled"));
        assert!(policy("sched_other").unwrap_err().contains("not a policy"));
    }
}
