//! `select_idle_sibling(p, target)` of Linux 4.5 (LEGACY_SIS) and seed 001's patch on it
//! (SIS_FIRST_IDLE), beside 6.12's [`super::sis`].
//!
//! # Source
//!
//! Ported from `kernel/sched/fair.c` (lines 4979-5019) and `idle_cpu()` from
//! `kernel/sched/core.c` (lines 3664-3685) of **Linux 4.5.7**, read in the vendor tree
//! `github:everestdavid/sound-linux-4.5.7` (its Makefile says 4.5.7, "Blurry Fish Butt";
//! none of the tree's later commits touches `kernel/sched/`). No copy of 4.5.0 itself
//! was found to compare with; the seed's patch removes exactly the lines of this function
//! as they stand in 4.5.7, and its hunk places the function at line 4974 of its base,
//! eight lines earlier than in 4.5.7 (stable updates earlier in the file, or the
//! poster's tree).
//! SIS_FIRST_IDLE is the last patch of Chris Mason's "[PATCH RFC] select_idle_sibling
//! experiments" (5 April 2016, `shared/seeds/001_c8bc339f0081e7d8.txt`).
//!
//! # What 4.5 does
//!
//! 1. An idle `target` is kept.
//! 2. An idle previous CPU (`task_cpu(p)`) that shares the LLC with `target` is kept.
//! 3. From `sd_llc(target)` down through its children (`for_each_lower_domain`), each
//!    domain's groups are walked from the one holding `target`: a group with no CPU the
//!    task may use is skipped; the first group whose CPUs are all idle and do not include
//!    `target` gives its first allowed CPU. At the LLC level the groups are cores (or
//!    clusters), so an idle core wins; below it, at the SMT level, the groups are single
//!    threads, so an idle sibling of `target` is the fallback. A half-idle core other than
//!    `target`'s is never chosen.
//! 4. Otherwise `target`.
//!
//! With SIS_FIRST_IDLE, step 3 becomes the patch's scan: the first CPU of
//! `sd_llc(target)`'s span, in CPU order, that the task may use and that is active and
//! idle; `target` if there is none or there is no LLC domain.
//!
//! # `idle_cpu()`: 4.5 against 6.12
//!
//! 4.5's `idle_cpu()` says busy when the idle task is not current, when `nr_running` is
//! not 0, or (on SMP) when the CPU's `wake_list` is not empty. 6.12's says the same with
//! `rq->ttwu_pending` in place of the list, and the 6.12 scans use
//! `available_idle_cpu()` (also busy when the vCPU is preempted, never in fairsim) or
//! `sched_idle_cpu()` (no SCHED_IDLE tasks in fairsim). fairsim's `Rq::ttwu_pending`
//! counts the wakeups queued on the CPU's wake list and not yet enqueued, so "the list is
//! not empty" is `ttwu_pending != 0`, and [`Sched::idle_cpu_v4_5`] reads `curr`,
//! `nr_running` and `ttwu_pending` as 4.5 reads its three fields. The one difference
//! fairsim cannot show: 4.5's `sched_ttwu_pending()` empties the list before it enqueues
//! the tasks, so for a moment a CPU reads idle, while 6.12 clears `ttwu_pending` only
//! after the enqueue; fairsim's IPI empties the list and enqueues in one instant.
//! Which wakeups go through the wake list is decided by the 6.12 `ttwu_queue_cond`
//! (also the idle CPUs of the waker's LLC), where 4.5 queued only across LLCs.
//!
//! # `select_task_rq_fair` around it: 4.5 against 6.12
//!
//! LEGACY_SIS replaces `select_idle_sibling` only; the rest of `select_task_rq_fair`
//! stays 6.12's. 4.5's `select_task_rq_fair(p, prev_cpu, sd_flag, wake_flags)` differs
//! in these steps:
//!
//! - **Wakeup test.** 4.5 takes `sd_flag` from its caller and tests
//!   `sd_flag & SD_BALANCE_WAKE` both for `want_affine` and for calling
//!   `select_idle_sibling` ("XXX always ?"); 6.12 tests `wake_flags & WF_TTWU` and
//!   derives `sd_flag` from `wake_flags & 0xF`. Same cases.
//! - **`record_wakee`.** 4.5 calls it from `task_waking_fair()`, which `try_to_wake_up()`
//!   runs just before `select_task_rq()`; 6.12 calls it first thing in
//!   `select_task_rq_fair` under `WF_TTWU`. Same order relative to `wake_wide`, same
//!   body (halve `wakee_flips` once per `HZ`, count a flip per new wakee).
//! - **`sync`.** 4.5: `wake_flags & WF_SYNC`; 6.12 also requires that the waker is not
//!   exiting (`PF_EXITING`, never in fairsim).
//! - **EAS and `WF_CURRENT_CPU`.** 6.12 returns `find_energy_efficient_cpu()`'s CPU when
//!   the root domain is not overutilized, and `this_cpu` for `WF_CURRENT_CPU` wakeups;
//!   4.5 has neither (fairsim has no energy model and no such wakeups).
//! - **`want_affine`.** Both are `!wake_wide(p) && this_cpu allowed`; `wake_wide` is the
//!   same in both (slave flips >= `sd_llc_size` and master >= slave * `sd_llc_size`).
//! - **The domain loop.** 4.5 stops at the first domain without `SD_LOAD_BALANCE` (every
//!   fairsim domain balances); otherwise the same: the first `SD_WAKE_AFFINE` domain
//!   spanning `prev_cpu` becomes `affine_sd` and clears `sd`; the highest domain with
//!   `sd_flag` is `sd`; without `want_affine` the loop stops at the first domain lacking
//!   `sd_flag`.
//! - **`wake_affine`'s form.** 4.5: `wake_affine(sd, p, sync)` returns yes/no and the
//!   caller sets `new_cpu = cpu` on yes. It has no idle shortcuts (6.12's
//!   `wake_affine_idle`, WA_IDLE) and no separate WA_WEIGHT/WA_BIAS switches. It compares
//!   `source_load(prev, wake_idx)` and `target_load(this, wake_idx)` (`wake_idx` is 0, so
//!   both are `weighted_cpuload()`, the runnable load average); with `sync` it subtracts
//!   the waker's `se.avg.load_avg` from this CPU's load (through `effective_load`); then
//!   `this_eff = 100 * capacity_of(prev)` and
//!   `prev_eff = (100 + (imbalance_pct - 100) / 2) * capacity_of(this)`, multiplied by
//!   `this_load + load_avg(p)` and `load(prev)` respectively only when `this_load > 0`;
//!   affine when `this_eff <= prev_eff`. So a sync wakeup whose waker carried all of its
//!   CPU's load is always affine on symmetric machines. 6.12's `wake_affine_weight` uses
//!   `cpu_load()` (blocked load included), returns `this` at once when the waker's
//!   `task_h_load` exceeds this CPU's load, subtracts `task_h_load(p)` from `prev`'s
//!   load, adds 1 to `prev_eff` under `sync`, and is affine on `this_eff < prev_eff`.
//!   Both count `ttwu_move_affine` on success.
//! - **The slow path.** 4.5 runs the `find_idlest_group`/`find_idlest_cpu` loop inline
//!   (load indexes `forkexec_idx`/`wake_idx`, an `imbalance_pct` margin, descending when
//!   the answer is -1 or `cpu`); 6.12 calls `sched_balance_find_dst_cpu()`, which first
//!   returns `prev_cpu` when the domain has no allowed CPU and syncs the task's load
//!   unless it forks. A wakeup takes it in both when a domain has `SD_BALANCE_WAKE` and
//!   no affine domain was found (the `sd_flag & SD_BALANCE_WAKE` path); it stays 6.12's
//!   under LEGACY_SIS.
//! - **The fast path's arguments.** 4.5 calls `select_idle_sibling(p, new_cpu)` and reads
//!   the previous CPU as `task_cpu(p)`; 6.12 passes `prev_cpu` (`p->wake_cpu`). They are
//!   the same CPU whenever a wakeup selects a CPU in fairsim.
//! - **`recent_used_cpu`.** 4.5 has no such field. 6.12's `select_idle_sibling` sets
//!   `p->recent_used_cpu = prev` on every fast-path wakeup; under LEGACY_SIS it is left
//!   alone (nothing else reads it).
//!
//! `select_task_rq()` around both: 4.5 asks the class only when `nr_cpus_allowed > 1` and
//! falls back with `select_fallback_rq()` on a disallowed or offline answer, as 6.12 does
//! (with `is_cpu_allowed()`).
//!
//! # Cost
//!
//! Each CPU whose runqueue the walk or the scan reads counts as one visit for the
//! engine's `idle_scan_per_cpu` cost, as the 6.12 scans do; the checks of `target` and
//! the previous CPU are not counted, as in 6.12.

use fairsim_topology::{GroupId, SdId};

use crate::features::Feature;
use crate::lb::view::LbRead;
use crate::sched::Sched;
use crate::select::stats::SisOutcome;
use crate::task::TaskId;

impl Sched {
    /// `idle_cpu(cpu)` of Linux 4.5 (kernel/sched/core.c): the idle task is current
    /// (`curr` is `None` in fairsim), nothing is queued (`nr_running == 0`), and no
    /// wakeup waits on the CPU's `wake_list` (`ttwu_pending == 0`, the count of the
    /// wakeups on that list).
    pub fn idle_cpu_v4_5(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        if rq.curr.is_some() {
            return false;
        }
        if rq.nr_running != 0 {
            return false;
        }
        // A queued remote wakeup will make the CPU busy as soon as its IPI lands.
        if rq.ttwu_pending != 0 {
            return false;
        }
        true
    }

    /// `select_idle_sibling(p, target)` of Linux 4.5 (kernel/sched/fair.c), with seed
    /// 001's patch when SIS_FIRST_IDLE is on: an idle `target`, else an idle previous CPU
    /// that shares `target`'s LLC, else [`Sched::sis_v4_5_lower_domains`] (or, patched,
    /// [`Sched::sis_first_idle_llc`]).
    ///
    /// The previous CPU is read as 4.5 reads it, `task_cpu(p)`, and is not checked
    /// against the task's allowed CPUs: `select_task_rq()`'s fallback handles a
    /// disallowed answer.
    pub fn select_idle_sibling_v4_5(&self, p: TaskId, target: usize) -> usize {
        let prev = self.tasks[p].cpu;

        if self.idle_cpu_v4_5(target) {
            return target;
        }

        // Moving away from an idle CPU that shares the cache gains nothing.
        if prev != target && self.cpus_share_cache(prev, target) && self.idle_cpu_v4_5(prev) {
            return prev;
        }

        if self.fair.features.has(Feature::SIS_FIRST_IDLE) {
            return self.sis_first_idle_llc(p, target);
        }
        self.sis_v4_5_lower_domains(p, target)
    }

    /// The domain walk of Linux 4.5's `select_idle_sibling(p, target)` (kernel/sched/
    /// fair.c), after its `target` and previous-CPU checks: from `sd_llc(target)` down
    /// through each child domain (`for_each_lower_domain`), the first group, in 4.5's
    /// list order from the one holding `target`, that intersects the task's allowed
    /// CPUs, whose CPUs are all idle (4.5's `idle_cpu`) and which does not contain
    /// `target`, gives `cpumask_first_and(group, allowed)`. Returns `target` when no
    /// group qualifies or `target` has no LLC domain.
    ///
    /// The `i == target` test rejects `target`'s own group even when all of it reads
    /// idle: the function only gets here after finding `target` busy, and seed 001's
    /// first experiment removed that test because `target` may have gone idle since.
    /// fairsim's state does not change within a call, so the test only shows when the
    /// walk is called on its own.
    pub fn sis_v4_5_lower_domains(&self, p: TaskId, target: usize) -> usize {
        let allowed = &self.tasks[p].cpus_allowed;
        let mut sd = self.topo.cpus[target].sd_llc;
        while let Some(id) = sd {
            for g in self.v4_5_group_list(id) {
                let span = &self.topo.group(g).span;
                if !span.intersects(allowed) {
                    continue;
                }
                // A group qualifies only if every CPU in it is idle and none is target;
                // target is compared before its runqueue is read, as in 4.5.
                let mut all_idle = true;
                for i in span.iter() {
                    if i == target {
                        all_idle = false;
                        break;
                    }
                    self.count_cpu_visit();
                    if !self.idle_cpu_v4_5(i) {
                        all_idle = false;
                        break;
                    }
                }
                if all_idle {
                    // The group intersects the allowed CPUs, so there is a first one.
                    return span.and(allowed).first().unwrap_or(target);
                }
            }
            sd = self.topo.domain(id).child;
        }
        target
    }

    /// Seed 001's replacement for the domain walk of Linux 4.5's `select_idle_sibling`
    /// (SIS_FIRST_IDLE): the first CPU of `sd_llc(target)`'s span that the task may use
    /// and that is active and idle (4.5's `idle_cpu`), in increasing CPU order
    /// (`for_each_cpu_and`), so `target` itself and its SMT siblings are as good as any
    /// other CPU. Returns `target` when none is idle or there is no LLC domain.
    pub fn sis_first_idle_llc(&self, p: TaskId, target: usize) -> usize {
        let Some(sd) = self.topo.cpus[target].sd_llc else {
            return target;
        };
        let cpus = self.topo.domain(sd).span.and(&self.tasks[p].cpus_allowed);
        for i in cpus.iter() {
            self.count_cpu_visit();
            // cpu_active(i) always holds: fairsim has no CPU hotplug.
            if self.idle_cpu_v4_5(i) {
                return i;
            }
        }
        target
    }

    /// The groups of domain `sd` in the order Linux 4.5 walks them: 4.5's
    /// `build_sched_groups` links the groups in the order of their first CPU into one
    /// circular list and points `sd->groups` at the group holding the domain's CPU, so
    /// the walk starts there and wraps. 6.12 builds the list from the domain's CPU
    /// upwards instead (`for_each_cpu_wrap`), which is the same order on the usual
    /// numberings but not on every one, hence the re-sort.
    fn v4_5_group_list(&self, sd: SdId) -> Vec<GroupId> {
        let groups = &self.topo.domain(sd).groups;
        let mut list = groups.to_vec();
        list.sort_by_key(|&g| self.topo.group(g).span.first());
        if let Some(pos) = groups
            .first()
            .and_then(|first| list.iter().position(|g| g == first))
        {
            list.rotate_left(pos);
        }
        list
    }
}

impl Sched {
    /// The era's `select_idle_sibling` of Linux 3.9 or 4.5 (LEGACY_SIS, SIS_FIRST_IDLE
    /// included) for `p` around `target`, its outcome counted.
    ///
    /// Those functions only read the machine, and their checks come in one order: an
    /// idle `target`, an idle cache-affine previous CPU (`task_cpu(p)`), then a search of
    /// the LLC that returns an idle CPU (of a wholly idle group, or with SIS_FIRST_IDLE
    /// the first idle one), else `target`. So the CPU returned names the check that
    /// returned it, and the function's body stays the era's own.
    pub(crate) fn select_idle_sibling_legacy_counted(&mut self, p: TaskId, target: usize) -> usize {
        let prev = self.tasks[p].cpu;
        let v3_9 = self.fair.features.kernel() == crate::kernel::Kernel::V3_9;
        let chosen = if v3_9 {
            self.select_idle_sibling_v3_9(p, target)
        } else {
            self.select_idle_sibling_v4_5(p, target)
        };
        let idle = |s: &Sched, cpu: usize| {
            if v3_9 {
                s.idle_cpu_v3_9(cpu)
            } else {
                s.idle_cpu_v4_5(cpu)
            }
        };
        let o = if chosen == target && idle(self, target) {
            SisOutcome::Target
        } else if chosen == prev && prev != target && idle(self, prev) {
            SisOutcome::Prev
        } else if chosen != target && idle(self, chosen) {
            if self
                .fair
                .features
                .has(crate::features::Feature::SIS_FIRST_IDLE)
            {
                SisOutcome::IdleCpu
            } else {
                SisOutcome::IdleCore
            }
        } else {
            SisOutcome::NoneIdle
        };
        self.sis_done(o, chosen)
    }
}
