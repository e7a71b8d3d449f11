//! The scheduler's side of uclamp: the `sched_uclamp_used` key, the effective clamps
//! against the system defaults, `sched_setattr`'s clamps and each runqueue's bucket
//! refcounts (`uclamp_rq_inc`/`uclamp_rq_dec`). These read and write `Sched`, so they sit
//! apart from the clamp types of [`super`], which `Task` and `Rq` hold without importing
//! the scheduler.

use super::{uclamp_none, ClampId, UclampError, UclampSe, CLAMP_IDS, SCALE};
use crate::sched::Sched;
use crate::task::TaskId;

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
