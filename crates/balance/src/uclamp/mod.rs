//! Utilization clamping (uclamp) of Linux 6.12.117, per task: `p->uclamp_req` as
//! `sched_setattr` sets it, the effective value against the system defaults, and each
//! runqueue's max-aggregation in buckets, which schedutil, `util_fits_cpu` and EAS read.
//!
//! Sources (Debian's `linux-source-6.12` 6.12.117): `kernel/sched/core.c`
//! (`uclamp_idle_value`, `uclamp_idle_reset`, `uclamp_rq_max_value`, `uclamp_eff_get`,
//! `uclamp_eff_value`, `uclamp_rq_inc_id`/`uclamp_rq_dec_id`, `uclamp_rq_inc`/
//! `uclamp_rq_dec` called from `enqueue_task` after the class's enqueue and from
//! `dequeue_task` before the class's dequeue, `uclamp_validate`, `__setscheduler_uclamp`),
//! `kernel/sched/sched.h` (`UCLAMP_BUCKET_DELTA`, `uclamp_bucket_id`, `uclamp_rq_get`,
//! `uclamp_rq_is_idle`). `CONFIG_UCLAMP_BUCKETS_COUNT` is 5, the default Debian keeps.
//!
//! The static key `sched_uclamp_used` turns on with the first task given a clamp (or a
//! `sched_util_clamp_*` sysctl write that changes a value), so a run without clamps never
//! touches the buckets and reads the runqueues' initial values (0 and 1024), as the
//! kernel does. The system defaults (`uclamp_default[]`) are `init_uclamp`'s 1024 for
//! both clamps unless `kernel.sched_util_clamp_min`/`_max` lower them
//! ([`crate::tunables`]); every task's effective clamp is capped by them. fairsim runs no
//! RT task, so `sched_util_clamp_min_rt_default` only turns the key on. Task groups'
//! `cpu.uclamp.*` wait for task groups.
//!
//! This module holds the clamp types and pure functions that `Task` and `Rq` embed, and
//! imports nothing above them; the `impl Sched` methods live in `sched_side`, so that the
//! data modules need not import the scheduler.

mod sched_side;

use fairsim_pelt::SCHED_CAPACITY_SCALE;

/// `uclamp_none(UCLAMP_MIN)`: the default minimum clamp of a task.
pub const UCLAMP_MIN_DEFAULT: u64 = 0;

/// `uclamp_none(UCLAMP_MAX)`: the default maximum clamp of a task.
pub const UCLAMP_MAX_DEFAULT: u64 = SCHED_CAPACITY_SCALE;

/// `SCHED_CAPACITY_SCALE`, as the clamps' `unsigned int`.
const SCALE: u32 = SCHED_CAPACITY_SCALE as u32;
/// `UCLAMP_BUCKETS` (`CONFIG_UCLAMP_BUCKETS_COUNT`, default 5).
pub const UCLAMP_BUCKETS: usize = 5;

/// Why `uclamp_validate` refused a pair of clamps
/// ([`crate::Sched::sched_setattr_uclamp`]), with the pair as asked, so that a caller can
/// tell the two rules apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UclampError {
    /// A clamp above `SCHED_CAPACITY_SCALE`.
    #[error("uclamp {min}..{max}: each clamp is 0 to {SCALE} (uclamp_validate)")]
    OutOfScale {
        /// `util_min` as asked.
        min: u32,
        /// `util_max` as asked.
        max: u32,
    },
    /// `util_min` above `util_max`.
    #[error("uclamp {min}..{max}: util_min above util_max (uclamp_validate)")]
    MinAboveMax {
        /// `util_min` as asked.
        min: u32,
        /// `util_max` as asked.
        max: u32,
    },
}
/// `UCLAMP_BUCKET_DELTA`: `DIV_ROUND_CLOSEST(SCHED_CAPACITY_SCALE, UCLAMP_BUCKETS)`.
const UCLAMP_BUCKET_DELTA: u32 = (SCALE + UCLAMP_BUCKETS as u32 / 2) / UCLAMP_BUCKETS as u32;

/// `enum uclamp_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClampId {
    /// `UCLAMP_MIN`.
    Min = 0,
    /// `UCLAMP_MAX`.
    Max = 1,
}

/// Both clamps, in the kernel's order (`for_each_clamp_id`).
const CLAMP_IDS: [ClampId; 2] = [ClampId::Min, ClampId::Max];

/// `uclamp_none(clamp_id)`: 0 for the minimum, 1024 for the maximum.
pub fn uclamp_none(id: ClampId) -> u32 {
    match id {
        ClampId::Min => UCLAMP_MIN_DEFAULT as u32,
        ClampId::Max => UCLAMP_MAX_DEFAULT as u32,
    }
}

/// `uclamp_bucket_id(clamp_value)`.
fn uclamp_bucket_id(value: u32) -> usize {
    ((value / UCLAMP_BUCKET_DELTA) as usize).min(UCLAMP_BUCKETS - 1)
}

/// `struct uclamp_se`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UclampSe {
    /// `value`.
    pub value: u32,
    /// `bucket_id`.
    pub bucket_id: usize,
    /// `active`: the task is refcounted in its runqueue's bucket.
    pub active: bool,
    /// `user_defined`: set by `sched_setattr`.
    pub user_defined: bool,
}

impl UclampSe {
    /// `uclamp_se_set(uc_se, value, user_defined)`.
    pub fn new(value: u32, user_defined: bool) -> UclampSe {
        UclampSe {
            value,
            bucket_id: uclamp_bucket_id(value),
            active: false,
            user_defined,
        }
    }

    /// A new task's request: `uclamp_none` (what `init_uclamp` and `uclamp_fork` give a
    /// task without a clamp of its own).
    pub fn none(id: ClampId) -> UclampSe {
        UclampSe::new(uclamp_none(id), false)
    }
}

/// `struct uclamp_bucket`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UclampBucket {
    /// `value`: the largest clamp of the tasks in the bucket.
    pub value: u32,
    /// `tasks`: how many tasks are in it.
    pub tasks: u32,
}

/// `struct uclamp_rq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UclampRq {
    /// `value`: the runqueue's clamp, the max-aggregation of its tasks'.
    pub value: u32,
    /// `bucket`.
    pub bucket: [UclampBucket; UCLAMP_BUCKETS],
}

/// A runqueue's uclamp state: `rq->uclamp[]` and `UCLAMP_FLAG_IDLE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RqUclamp {
    /// `rq->uclamp[UCLAMP_MIN]`, `rq->uclamp[UCLAMP_MAX]`.
    pub clamp: [UclampRq; 2],
    /// `rq->uclamp_flags & UCLAMP_FLAG_IDLE`: the last task left, and the maximum clamp
    /// kept its value.
    pub idle: bool,
}

impl Default for RqUclamp {
    /// `init_uclamp_rq`: values at `uclamp_none`, empty buckets, flagged idle.
    fn default() -> RqUclamp {
        RqUclamp {
            clamp: CLAMP_IDS.map(|id| UclampRq {
                value: uclamp_none(id),
                bucket: [UclampBucket::default(); UCLAMP_BUCKETS],
            }),
            idle: true,
        }
    }
}

/// A task's clamps: `p->uclamp_req[]` (requested) and `p->uclamp[]` (effective while
/// enqueued).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskUclamp {
    /// `uclamp_req`.
    pub req: [UclampSe; 2],
    /// `uclamp`.
    pub eff: [UclampSe; 2],
}

impl Default for TaskUclamp {
    fn default() -> TaskUclamp {
        let none = CLAMP_IDS.map(UclampSe::none);
        TaskUclamp {
            req: none,
            eff: none,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_205_wide_and_the_top_one_takes_the_rest() {
        assert_eq!(UCLAMP_BUCKET_DELTA, 205);
        assert_eq!(uclamp_bucket_id(0), 0);
        assert_eq!(uclamp_bucket_id(204), 0);
        assert_eq!(uclamp_bucket_id(205), 1);
        assert_eq!(uclamp_bucket_id(819), 3);
        assert_eq!(uclamp_bucket_id(820), 4);
        assert_eq!(uclamp_bucket_id(1024), 4);
    }
}
