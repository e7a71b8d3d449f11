//! Waker/wakee affinity: `record_wakee`, `wake_wide` and `wake_affine` with its WA_IDLE
//! and WA_WEIGHT halves (fair.c).

use fairsim_topology::SdId;

use crate::features::Feature;
use crate::lb::view::LbRead;
use crate::sched::Sched;
use crate::task::TaskId;

impl Sched {
    /// `record_wakee(p)` (fair.c) for the waker running on `this_cpu`: halve the waker's
    /// `wakee_flips` at most once a second (`HZ` jiffies), then count a flip when it wakes
    /// a different task than last time.
    ///
    /// A wakeup from the idle task (interrupt context) records nothing: fairsim keeps no
    /// state for the per-CPU idle tasks.
    pub fn record_wakee(&mut self, p: TaskId, this_cpu: usize, now: u64) {
        let Some(cur) = self.current_of(this_cpu) else {
            return;
        };
        let jiffies = self.jiffies(now);
        let hz = u64::from(self.params.hz);
        let waker = &mut self.tasks[cur];
        // time_after(jiffies, decay_ts + HZ), wrap-safe as the kernel computes it.
        if (waker
            .wakee_flip_decay_ts
            .wrapping_add(hz)
            .wrapping_sub(jiffies) as i64)
            < 0
        {
            waker.wakee_flips >>= 1;
            waker.wakee_flip_decay_ts = jiffies;
        }
        if waker.last_wakee != Some(p) {
            waker.last_wakee = Some(p);
            waker.wakee_flips = waker.wakee_flips.wrapping_add(1);
        }
    }

    /// `wake_wide(p)` (fair.c): the wakeup should spread beyond the LLC when both the
    /// waker and the wakee flip partners often: the less flipping of the two at least
    /// `sd_llc_size` times, the other at least `sd_llc_size` times as often.
    pub fn wake_wide(&self, p: TaskId, this_cpu: usize) -> bool {
        let mut master = self
            .current_of(this_cpu)
            .map_or(0, |c| self.tasks[c].wakee_flips);
        let mut slave = self.tasks[p].wakee_flips;
        let factor = self.topo.cpus[this_cpu].sd_llc_size as u32;
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave.wrapping_mul(factor))
    }

    /// `wake_affine_idle(this_cpu, prev_cpu, sync)` (fair.c): decide on idleness alone.
    /// Returns `None` for the kernel's `nr_cpumask_bits` (no decision).
    pub fn wake_affine_idle(&self, this_cpu: usize, prev_cpu: usize, sync: bool) -> Option<usize> {
        // An idle waking CPU means an interrupt woke the task: pull it only within the
        // cache, and keep it on an idle previous CPU rather than migrating.
        if self.rqs[this_cpu].available_idle_cpu() && self.cpus_share_cache(this_cpu, prev_cpu) {
            return Some(if self.rqs[prev_cpu].available_idle_cpu() {
                prev_cpu
            } else {
                this_cpu
            });
        }
        if sync {
            let rq = &self.rqs[this_cpu];
            let delayed = rq.cfs.h_nr_queued - rq.cfs.h_nr_runnable;
            if rq.nr_running.wrapping_sub(delayed) == 1 {
                return Some(this_cpu);
            }
        }
        if self.rqs[prev_cpu].available_idle_cpu() {
            return Some(prev_cpu);
        }
        None
    }

    /// `wake_affine_weight(sd, p, this_cpu, prev_cpu, sync)` (fair.c): pull to the
    /// waker's CPU when its load with `p` added, scaled by the previous CPU's capacity, is
    /// below the previous CPU's load without `p` scaled by the waker's capacity (with
    /// WA_BIAS's half-imbalance_pct margin in favour of the previous CPU). Signed 64-bit
    /// arithmetic as in the kernel. Returns `None` for no decision.
    pub fn wake_affine_weight(
        &self,
        sd: SdId,
        p: TaskId,
        this_cpu: usize,
        prev_cpu: usize,
        sync: bool,
    ) -> Option<usize> {
        let bias = self.fair.features.has(Feature::WA_BIAS);
        let mut this_eff_load = self.cpu_load(this_cpu) as i64;
        if sync {
            let current_load = self.current_of(this_cpu).map_or(0, |c| self.task_h_load(c)) as i64;
            if current_load > this_eff_load {
                return Some(this_cpu);
            }
            this_eff_load -= current_load;
        }
        let task_load = self.task_h_load(p) as i64;
        this_eff_load += task_load;
        if bias {
            this_eff_load *= 100;
        }
        this_eff_load *= self.capacity_of(prev_cpu) as i64;

        let mut prev_eff_load = self.cpu_load(prev_cpu) as i64;
        prev_eff_load -= task_load;
        if bias {
            let pct = i64::from(self.topo.domain(sd).imbalance_pct);
            prev_eff_load *= 100 + (pct - 100) / 2;
        }
        prev_eff_load *= self.capacity_of(this_cpu) as i64;
        // With sync, equal loads let select_idle_sibling consider stacking the wakee on
        // the waker.
        if sync {
            prev_eff_load += 1;
        }
        (this_eff_load < prev_eff_load).then_some(this_cpu)
    }

    /// `wake_affine(sd, p, this_cpu, prev_cpu, sync)` (fair.c): the waker's CPU if
    /// WA_IDLE or WA_WEIGHT choose it (counting `ttwu_move_affine` on `sd`), else the
    /// previous CPU.
    pub fn wake_affine(
        &mut self,
        sd: SdId,
        p: TaskId,
        this_cpu: usize,
        prev_cpu: usize,
        sync: bool,
    ) -> usize {
        let mut target = None;
        if self.fair.features.has(Feature::WA_IDLE) {
            target = self.wake_affine_idle(this_cpu, prev_cpu, sync);
        }
        if self.fair.features.has(Feature::WA_WEIGHT) && target.is_none() {
            target = self.wake_affine_weight(sd, p, this_cpu, prev_cpu, sync);
        }
        if target != Some(this_cpu) {
            return prev_cpu;
        }
        self.sd_stats[sd].ttwu_move_affine += 1;
        this_cpu
    }
}
