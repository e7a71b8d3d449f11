//! The Completely Fair Scheduler as the kernels before EEVDF ran it (3.9 to 6.5), for
//! `--kernel 3.9|4.5|4.15|4.16|6.5`: virtual runtime ordered by weight, `min_vruntime`,
//! slices from `sysctl_sched_latency` and `sysctl_sched_min_granularity`, sleeper credit
//! and START_DEBIT placement, tick and wakeup preemption with `wakeup_gran`, and the
//! next, last and skip buddies.
//!
//! Read from each era's kernel/sched/fair.c and core.c (the trees are listed in
//! [`crate::kernel`]). The functions are the same in all five eras except where a
//! function's doc says otherwise; the differences found, by era:
//!
//! - 3.9: `calc_delta_mine` (rounded, `WMULT_CONST` 2^32) instead of `__calc_delta`;
//!   `pick_next_entity(cfs_rq)` after `put_prev_task` (no current-entity candidate);
//!   `task_waking_fair` normalises every wakeup; `exec_start` survives a migration;
//!   `cfs_tasks` is not reordered at pick.
//! - 4.5: `pick_next_entity(cfs_rq, curr)`; still `task_waking_fair`; `exec_start`
//!   cleared in `migrate_task_rq_fair`.
//! - 4.15, 4.16: `migrate_task_rq_fair` normalises a waking task and the enqueue
//!   renormalises on `ENQUEUE_MIGRATED`; `update_min_vruntime` ignores a dequeued
//!   current entity; `dequeue_entity` advances `min_vruntime` only for a `DEQUEUE_SAVE`
//!   without `DEQUEUE_MOVE`. 4.16's `wakeup_gran` lost its unused `curr` argument.
//! - 6.5: `entity_is_long_sleeper` in `place_entity`; ALT_PERIOD and BASE_SLICE in
//!   `sched_slice`; `check_preempt_tick` caps the slice at `sysctl_sched_latency`;
//!   the next buddy is preferred to the last and buddies are cleared in
//!   `set_next_entity`; `exec_start` is cleared at an `ENQUEUE_MIGRATED` enqueue.
//!
//! Left out, as fairsim has no task groups, SCHED_IDLE/SCHED_BATCH tasks, bandwidth
//! control or hrtick: `for_each_sched_entity` walks (one level here), `update_cfs_shares`,
//! the idle-policy rules of `check_preempt_wakeup` and `sched_slice`, throttling and
//! `hrtick_update`.

pub mod calc;
mod class;
pub mod entity;
pub mod pick;
