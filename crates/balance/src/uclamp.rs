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

use crate::cpu_util::{UCLAMP_MAX_DEFAULT, UCLAMP_MIN_DEFAULT};
use crate::sched::Sched;
use crate::task::TaskId;

/// `SCHED_CAPACITY_SCALE`, as the clamps' `unsigned int`.
const SCALE: u32 = fairsim_pelt::SCHED_CAPACITY_SCALE as u32;
/// `UCLAMP_BUCKETS` (`CONFIG_UCLAMP_BUCKETS_COUNT`, default 5).
pub const UCLAMP_BUCKETS: usize = 5;

/// Why `uclamp_validate` refused a pair of clamps ([`Sched::sched_setattr_uclamp`]), with
/// the pair as asked, so that a caller can tell the two rules apart.
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

impl Sched {
    /// `uclamp_is_used()`: the `sched_uclamp_used` static key.
    #[inline]
    pub fn uclamp_is_used(&self) -> bool {
        self.uclamp_used
    }

    /// `uclamp_rq_get(rq, clamp_id)`.
    #[inline]
    pub fn uclamp_rq_get(&self, cpu: usize, id: ClampId) -> u64 {
        u64::from(self.rqs[cpu].uclamp.clamp[id as usize].value)
    }

    /// `uclamp_rq_is_idle(rq)`.
    #[inline]
    pub fn uclamp_rq_is_idle(&self, cpu: usize) -> bool {
        self.rqs[cpu].uclamp.idle
    }

    /// `uclamp_eff_get(p, clamp_id)` without task groups (`uclamp_tg_restrict` returns the
    /// request in the root group): the request, unless it is above the system default
    /// (`uclamp_default`: `init_uclamp` sets both clamps' to `uclamp_none(UCLAMP_MAX)`,
    /// 1024, which the `sched_util_clamp_*` sysctls lower).
    fn uclamp_eff_get(&self, p: TaskId, id: ClampId) -> UclampSe {
        let req = self.tasks[p].uclamp.req[id as usize];
        let max = UclampSe::new(self.uclamp_default[id as usize], false);
        if req.value > max.value {
            return max;
        }
        req
    }

    /// `uclamp_eff_value(p, clamp_id)`: the clamp in effect while the task is enqueued,
    /// else the one it would get.
    pub fn uclamp_eff_value(&self, p: TaskId, id: ClampId) -> u64 {
        let eff = self.tasks[p].uclamp.eff[id as usize];
        if eff.active {
            return u64::from(eff.value);
        }
        u64::from(self.uclamp_eff_get(p, id).value)
    }

    /// `sched_setattr(p, {SCHED_FLAG_UTIL_CLAMP_MIN | _MAX})` before the task first runs:
    /// `uclamp_validate` (each in 0..=1024, min not above max) turns the static key on,
    /// `__setscheduler_uclamp` stores the user-defined requests. `Err` names the rule.
    pub fn sched_setattr_uclamp(
        &mut self,
        p: TaskId,
        min: u32,
        max: u32,
    ) -> Result<(), UclampError> {
        if min > SCALE || max > SCALE {
            return Err(UclampError::OutOfScale { min, max });
        }
        if min > max {
            return Err(UclampError::MinAboveMax { min, max });
        }
        self.uclamp_used = true;
        let t = &mut self.tasks[p].uclamp;
        t.req[ClampId::Min as usize] = UclampSe::new(min, true);
        t.req[ClampId::Max as usize] = UclampSe::new(max, true);
        Ok(())
    }

    /// `uclamp_rq_inc(rq, p)`, from `enqueue_task` after the class's enqueue.
    pub(crate) fn uclamp_rq_inc(&mut self, cpu: usize, p: TaskId) {
        if !self.uclamp_used || self.tasks[p].se.sched_delayed {
            return;
        }
        for id in CLAMP_IDS {
            self.uclamp_rq_inc_id(cpu, p, id);
        }
        self.rqs[cpu].uclamp.idle = false;
    }

    /// `uclamp_rq_dec(rq, p)`, from `dequeue_task` before the class's dequeue.
    pub(crate) fn uclamp_rq_dec(&mut self, cpu: usize, p: TaskId) {
        if !self.uclamp_used || self.tasks[p].se.sched_delayed {
            return;
        }
        for id in CLAMP_IDS {
            self.uclamp_rq_dec_id(cpu, p, id);
        }
    }

    /// `uclamp_rq_inc_id(rq, p, clamp_id)`.
    fn uclamp_rq_inc_id(&mut self, cpu: usize, p: TaskId, id: ClampId) {
        let eff = self.uclamp_eff_get(p, id);
        let uc_se = &mut self.tasks[p].uclamp.eff[id as usize];
        *uc_se = eff;
        uc_se.active = true;
        let (value, bucket_id) = (uc_se.value, uc_se.bucket_id);
        let u = &mut self.rqs[cpu].uclamp;
        // uclamp_idle_reset: the first task after idle sets the clamp outright.
        if u.idle {
            u.clamp[id as usize].value = value;
        }
        let uc_rq = &mut u.clamp[id as usize];
        let bucket = &mut uc_rq.bucket[bucket_id];
        bucket.tasks += 1;
        if bucket.tasks == 1 || value > bucket.value {
            bucket.value = value;
        }
        if value > uc_rq.value {
            uc_rq.value = value;
        }
    }

    /// `uclamp_rq_dec_id(rq, p, clamp_id)`.
    fn uclamp_rq_dec_id(&mut self, cpu: usize, p: TaskId, id: ClampId) {
        let uc_se = &mut self.tasks[p].uclamp.eff[id as usize];
        if !uc_se.active {
            return;
        }
        uc_se.active = false;
        let (value, bucket_id) = (uc_se.value, uc_se.bucket_id);
        let u = &mut self.rqs[cpu].uclamp;
        let bucket = &mut u.clamp[id as usize].bucket[bucket_id];
        bucket.tasks = bucket.tasks.saturating_sub(1);
        if bucket.tasks != 0 {
            return;
        }
        let bucket_value = bucket.value;
        let rq_clamp = u.clamp[id as usize].value;
        if bucket_value >= rq_clamp {
            // uclamp_rq_max_value: the highest bucket still holding tasks, or the idle
            // value (the minimum resets; the maximum keeps the last task's clamp).
            let uc_rq = &u.clamp[id as usize];
            let highest = uc_rq
                .bucket
                .iter()
                .rev()
                .find(|b| b.tasks != 0)
                .map(|b| b.value);
            let new = match highest {
                Some(v) => v,
                None => match id {
                    ClampId::Max => {
                        u.idle = true;
                        value
                    }
                    ClampId::Min => uclamp_none(ClampId::Min),
                },
            };
            u.clamp[id as usize].value = new;
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
