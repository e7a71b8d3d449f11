//! Linux 4.15 and 4.16's wakeup fast path: `select_idle_sibling`, `select_idle_core`,
//! `select_idle_cpu` with SIS_AVG_CPU and SIS_PROP, and `select_idle_smt`
//! (kernel/sched/fair.c), beside 6.12's [`super::sis`].
//!
//! # Sources
//!
//! - **Linux 4.15.0**: `github:sndrzt/linux-4.15` @ `6ea06264`, `kernel/sched/fair.c`
//!   lines 6012-6059 (`set_idle_cores`, `test_idle_cores`, `__update_idle_core`),
//!   6066-6118 (`select_idle_core`, `select_idle_smt`), 6139-6186 (`select_idle_cpu`),
//!   6191-6222 (`select_idle_sibling`); `kernel/sched/core.c` 3906-3922 (`idle_cpu`),
//!   5748-5756 (`sched_init_smt`); `include/linux/cpumask.h` 246-258
//!   (`for_each_cpu_wrap`) with `lib/cpumask.c`'s `cpumask_next_wrap`; `kernel/sched/
//!   features.h` (SIS_AVG_CPU off, SIS_PROP on).
//! - **Linux 4.16.13**: `github:lizuobin/linux-4.16.13_tiny4412` @ `92bab218`,
//!   `kernel/sched/fair.c` 6197-6243 (`select_idle_sibling`), 6339-6405
//!   (`select_task_rq_fair`); `kernel/sched/core.c` 2465 (`wake_up_new_task`).
//!
//! # 4.15 against 4.16
//!
//! The one difference in these functions: 4.16's `select_idle_sibling` tries
//! `p->recent_used_cpu` after the previous CPU (not the previous CPU or `target`, in
//! `target`'s LLC, idle, allowed), and when it takes it sets `p->recent_used_cpu = prev`.
//! The field is written in two more places in 4.16: `wake_up_new_task` sets it to the
//! parent's CPU before fork placement (fairsim's [`Sched::wake_up_new_task_select`]
//! does the same for every kernel, and 4.15 never reads it), and 4.16's
//! `select_task_rq_fair` sets the *waker's* `recent_used_cpu` to the waking CPU after a
//! fast-path wakeup with `want_affine` ([`super::v4_15_select`]). 6.12 instead writes
//! `p->recent_used_cpu = prev` on every fast-path wakeup, whether or not it takes the
//! recent CPU, and no longer writes the waker's.
//!
//! # 4.15 against 6.12
//!
//! - **Order.** 4.15: idle `target`; idle cache-affine `prev`; then in `target`'s LLC an
//!   idle core (`select_idle_core`, only while `has_idle_cores`), an idle CPU
//!   (`select_idle_cpu`), an idle SMT sibling of `target` (`select_idle_smt`); `target`.
//!   6.12 tries `prev`'s sibling before the LLC scan, folds the core scan into
//!   `select_idle_cpu`, and has the asymmetric-capacity and cluster paths.
//! - **Scan start.** 4.15's `for_each_cpu_wrap(cpu, mask, start)` starts at `start`
//!   itself (`cpumask_next_wrap(start - 1, ...)`), so both scans begin at `target`, which
//!   the caller already found busy; 6.12 starts at `target + 1`.
//! - **The idle-core scan** (`select_idle_core`) covers the whole LLC and allowed CPUs
//!   with no depth limit, reads every thread of each core it visits, removes the core
//!   from the mask, and clears `has_idle_cores` when no core is idle. It has no
//!   fallback idle CPU (6.12 remembers one); `select_idle_cpu` follows.
//! - **The CPU scan** (`select_idle_cpu`) is limited by SIS_PROP, not SIS_UTIL: with
//!   `avg_idle = this_rq()->avg_idle / 512` (the *waking* CPU's average idle time) and
//!   `avg_cost = this_sd->avg_scan_cost + 1` (`this_sd` the waking CPU's LLC domain),
//!   SIS_AVG_CPU (off by default) skips the scan when `avg_idle < avg_cost`, and SIS_PROP
//!   allows `nr = span_weight * avg_idle / avg_cost` CPUs (`span_weight` of `target`'s
//!   LLC), at least 4 (when `span_weight * avg_idle <= 4 * avg_cost`). The loop's
//!   `!--nr` ends the scan before the `nr`-th CPU, so it reads at most `nr - 1`, and
//!   counts the CPUs the task may not use (the span is walked, not span & allowed).
//!   When the scan ran to its end or found a CPU (not when `nr` ran out), its duration
//!   updates `this_sd->avg_scan_cost += (time - avg_scan_cost) / 8`, signed.
//! - **`select_idle_smt(p, sd, target)`** reads every thread of `target`'s core that the
//!   task may use, `target` included, without 6.12's domain-span test.
//! - **Idleness** is `idle_cpu()` everywhere (6.12: `available_idle_cpu() ||
//!   sched_idle_cpu()`); fairsim has neither preempted vCPUs nor SCHED_IDLE tasks, so
//!   both are [`crate::rq::Rq::idle_cpu`].
//! - **`sched_smt_present`** is enabled by 4.15's `sched_init_smt` when CPU 0 has an SMT
//!   sibling ([`Sched::sched_smt_present_v4_15`]); 6.12 enables it when any CPU has one.
//!   The idle-core hint itself (`__update_idle_core` when a CPU switches to idle, under
//!   6.12's key) is the same in both: 4.15's `test_idle_cores(core, true)` early exit on
//!   a CPU without `sd_llc_shared` and 6.12's `set_idle_cores` on such a CPU both do
//!   nothing, and `idle_cpu` is `available_idle_cpu` here. [`super::idle_core`]'s
//!   `test_idle_cores`/`set_idle_cores` are reused.
//!
//! # Time and cost
//!
//! `select_idle_cpu` times its scan with `local_clock()`. fairsim's scan takes no
//! virtual time inside the call: the engine charges each CPU it reads, afterwards, at
//! the cost table's `idle_scan_per_cpu` ([`crate::sched::SchedParams::idle_scan_per_cpu`]
//! carries that figure here), so the scan's duration is its CPU reads times that figure,
//! the mean of what the engine will charge (the engine's noise, when on, is not known
//! here, nor the loop's own few instructions). Every CPU whose runqueue a scan reads
//! counts one `count_cpu_visit`; the checks of `target`, `prev` and `recent_used_cpu` are
//! not counted, as in 6.12's [`super::sis`], nor the CPUs the task may not use (only its
//! affinity mask is read for them).

use fairsim_topology::SdId;

use crate::features::Feature;
use crate::kernel::Kernel;
use crate::lb::view::LbRead;
use crate::sched::Sched;
use crate::select::stats::SisOutcome;
use crate::task::TaskId;

/// SIS_PROP's scan depth of Linux 4.15 (`select_idle_cpu`, kernel/sched/fair.c) for an
/// LLC of `span_weight` CPUs, the waking CPU's `avg_idle / 512` and
/// `avg_cost = avg_scan_cost + 1`: `span_weight * avg_idle / avg_cost` when that product
/// exceeds `4 * avg_cost`, else 4. The kernel stores the quotient in an `int`.
pub fn sis_prop_nr_v4_15(span_weight: u32, avg_idle: u64, avg_cost: u64) -> i32 {
    let span_avg = u64::from(span_weight).wrapping_mul(avg_idle);
    if span_avg > avg_cost.wrapping_mul(4) {
        (span_avg / avg_cost) as i32
    } else {
        4
    }
}

impl Sched {
    /// `sched_smt_present` as Linux 4.15's `sched_init_smt` (kernel/sched/core.c) sets it:
    /// CPU 0 has more than one hardware thread.
    pub fn sched_smt_present_v4_15(&self) -> bool {
        self.nr_cpus() > 0 && self.cpu_smt_mask(0).weight() > 1
    }

    /// `select_idle_sibling(p, prev, target)` of Linux 4.15, with 4.16's
    /// `recent_used_cpu` step when the kernel is 4.16 (kernel/sched/fair.c), for a wakeup
    /// run on `this_cpu` (whose `avg_idle` and LLC `avg_scan_cost` limit the CPU scan).
    ///
    /// An idle `target` is kept; else an idle `prev` in `target`'s LLC; else (4.16) an
    /// idle, allowed `recent_used_cpu` in that LLC other than both, which then becomes
    /// `prev`; else an idle core, an idle CPU, an idle sibling of `target`, in `target`'s
    /// LLC; else `target`.
    pub fn select_idle_sibling_v4_15(
        &mut self,
        p: TaskId,
        prev: usize,
        target: usize,
        this_cpu: usize,
    ) -> usize {
        if self.rqs[target].idle_cpu() {
            return self.sis_done(SisOutcome::Target, target);
        }

        // An idle previous CPU that shares the cache is as good as any: no migration.
        if prev != target && self.cpus_share_cache(prev, target) && self.rqs[prev].idle_cpu() {
            return self.sis_done(SisOutcome::Prev, prev);
        }

        if self.fair.features.kernel() == Kernel::V4_16 {
            let r = self.tasks[p].recent_used_cpu;
            if r != prev
                && r != target
                && self.cpus_share_cache(r, target)
                && self.rqs[r].idle_cpu()
                && self.tasks[p].allowed_on(r)
            {
                // The previous CPU is the candidate for the next wakeup.
                self.tasks[p].recent_used_cpu = prev;
                return self.sis_done(SisOutcome::RecentUsed, r);
            }
        }

        let Some(sd) = self.topo.cpus[target].sd_llc else {
            return self.sis_done(SisOutcome::NoneIdle, target);
        };
        if let Some(i) = self.select_idle_core_v4_15(p, sd, target) {
            return self.sis_done(SisOutcome::IdleCore, i);
        }
        if let Some(i) = self.select_idle_cpu_v4_15(p, sd, target, this_cpu) {
            return self.sis_done(SisOutcome::IdleCpu, i);
        }
        if let Some(i) = self.select_idle_smt_v4_15(p, target) {
            return self.sis_done(SisOutcome::SmtSibling, i);
        }
        self.sis_done(SisOutcome::NoneIdle, target)
    }

    /// `select_idle_core(p, sd, target)` of Linux 4.15 (kernel/sched/fair.c): while the
    /// LLC says it has idle cores, walk the allowed CPUs of `sd` from `target`, wrapping,
    /// one core at a time: read every thread of the core and drop them from the walk; the
    /// first core whose threads are all idle gives its visited CPU. When none is, clear
    /// `has_idle_cores` so that the next wakeups skip this scan.
    pub fn select_idle_core_v4_15(&self, p: TaskId, sd: SdId, target: usize) -> Option<usize> {
        if !self.sched_smt_present_v4_15() {
            return None;
        }
        if !self.test_idle_cores(target) {
            return None;
        }
        let mut cpus = self.topo.domain(sd).span.and(&self.tasks[p].cpus_allowed);
        // The kernel walks the live mask, from which each visited core is removed;
        // walking a snapshot and skipping the CPUs removed since is the same walk.
        let snapshot = cpus.clone();
        for core in snapshot.iter_wrap(target) {
            if !cpus.test(core) {
                continue;
            }
            let mut idle = true;
            for cpu in self.cpu_smt_mask(core).iter() {
                cpus.clear(cpu);
                self.count_cpu_visit();
                if !self.rqs[cpu].idle_cpu() {
                    idle = false;
                }
            }
            if idle {
                return Some(core);
            }
        }
        // No idle core in the LLC: stop looking for one until a core goes idle.
        self.set_idle_cores(target, false);
        None
    }

    /// `select_idle_smt(p, sd, target)` of Linux 4.15 (kernel/sched/fair.c): the first
    /// idle thread of `target`'s core that the task may use, `target` included, on SMT
    /// machines (4.15's `sched_smt_present`). The domain is not read.
    pub fn select_idle_smt_v4_15(&self, p: TaskId, target: usize) -> Option<usize> {
        if !self.sched_smt_present_v4_15() {
            return None;
        }
        for cpu in self.cpu_smt_mask(target).iter() {
            if !self.tasks[p].allowed_on(cpu) {
                continue;
            }
            self.count_cpu_visit();
            if self.rqs[cpu].idle_cpu() {
                return Some(cpu);
            }
        }
        None
    }

    /// `select_idle_cpu(p, sd, target)` of Linux 4.15 (kernel/sched/fair.c) run on
    /// `this_cpu`: walk `sd`'s span from `target`, wrapping, for an idle CPU the task may
    /// use, at most `nr - 1` CPUs of the span with SIS_PROP's `nr`
    /// ([`sis_prop_nr_v4_15`]); SIS_AVG_CPU skips the walk when the waking CPU's
    /// `avg_idle / 512` is below its LLC's `avg_scan_cost + 1`; no LLC domain on
    /// `this_cpu`, no walk. A walk that found a CPU or reached its end folds its
    /// duration (CPUs read x [`crate::sched::SchedParams::idle_scan_per_cpu`]) into that
    /// LLC domain's `avg_scan_cost` with weight 1/8; one cut short by `nr` does not.
    pub fn select_idle_cpu_v4_15(
        &mut self,
        p: TaskId,
        sd: SdId,
        target: usize,
        this_cpu: usize,
    ) -> Option<usize> {
        let this_sd = self.topo.cpus[this_cpu].sd_llc?;

        // The large divisor is a fuzz factor against avg_idle's variance.
        let avg_idle = self.rqs[this_cpu].avg_idle / 512;
        let avg_cost = self.lb.sd[this_sd].avg_scan_cost.wrapping_add(1);

        if self.fair.features.has(Feature::SIS_AVG_CPU) && avg_idle < avg_cost {
            return None;
        }

        let d = self.topo.domain(sd);
        let mut nr = i32::MAX;
        if self.fair.features.has(Feature::SIS_PROP) {
            nr = sis_prop_nr_v4_15(d.span_weight, avg_idle, avg_cost);
        }

        let mut reads = 0u64;
        let mut found = None;
        for cpu in d.span.iter_wrap(target) {
            nr = nr.wrapping_sub(1);
            if nr == 0 {
                return None;
            }
            if !self.tasks[p].allowed_on(cpu) {
                continue;
            }
            self.count_cpu_visit();
            reads += 1;
            if self.rqs[cpu].idle_cpu() {
                found = Some(cpu);
                break;
            }
        }

        // The scan's duration, as the engine will charge the CPUs it read.
        let time = reads * self.params.idle_scan_per_cpu;
        let rt = &mut self.lb.sd[this_sd];
        let delta = (time.wrapping_sub(rt.avg_scan_cost) as i64) / 8;
        rt.avg_scan_cost = rt.avg_scan_cost.wrapping_add(delta as u64);
        found
    }
}
