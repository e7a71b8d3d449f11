//! Linux 6.5.0's wakeup placement: `select_task_rq_fair`, `select_idle_sibling`,
//! `select_idle_smt`, `select_idle_cpu` with SIS_PROP and SIS_UTIL, `select_idle_core`
//! and `select_idle_capacity`, read in `github:sndrzt/linux-6.5` @ f5744aac
//! (`kernel/sched/fair.c` 6887-7215 and 7727; `kernel/sched/core.c` 3801 and 10027 for
//! `wake_avg_idle`).
//!
//! What differs from 6.12.117 (items 1 to 8 of the list in [`crate::lb::v6_5`], which
//! also says what is the same and runs as 6.12's: `wake_affine`, `wake_wide`, the slow
//! path):
//!
//! - `select_task_rq_fair`: no `WF_CURRENT_CPU` shortcut; EAS gated by
//!   `sched_energy_enabled()` and 6.5's `find_energy_efficient_cpu`
//!   ([`crate::energy::v6_5_feec`], which tests the overutilized state itself);
//!   otherwise 6.12's.
//! - `select_idle_sibling`: no cluster pass. An idle cache-affine `prev` or
//!   `recent_used_cpu` is returned at once, and a failed scan falls back to `target`.
//! - `select_idle_smt(p, target)`: no test that the sibling is in the LLC domain.
//! - `select_idle_cpu`: SIS_PROP (off by default) limits the CPU scan to
//!   `span_weight * wake_avg_idle / (avg_scan_cost + 1)` CPUs (at least 4), where
//!   `wake_avg_idle` is the *waking* CPU's (`this_rq()`), halved for every jiffy since
//!   its `wake_stamp`, and `avg_scan_cost` is the waking CPU's LLC domain's; a scan that
//!   was not cut short subtracts its time from `wake_avg_idle` and folds it into
//!   `avg_scan_cost` (weight 1/8). SIS_UTIL, when on, replaces that depth with
//!   `nr_idle_scan + 1`. `!--nr` stops the scan (6.12: `--nr <= 0`), which differs only
//!   for a depth that wrapped negative in the kernel's `int`.
//! - `select_idle_core`: the fallback idle thread must be one `p` may use (6.12: one
//!   still in the scan mask).
//! - `select_idle_capacity`: the scan starts at `target + 1`.
//!
//! SIS_PROP's scan time: the kernel reads `cpu_clock()` around the scan. fairsim's scan
//! takes no virtual time inside the call (the engine charges the CPUs it read
//! afterwards), so the time is the CPUs this scan read times the cost table's
//! `idle_scan_per_cpu` ([`crate::sched::SchedParams::idle_scan_per_cpu`]), as for 4.15's
//! SIS_PROP ([`super::v4_15_sis`]). `rq->wake_stamp` and `rq->wake_avg_idle` live in
//! [`crate::lb::RqLb`], set at boot as `sched_init` sets them and after each wakeup of a
//! CPU that went idle through a newidle balance (`Sched::sis_prop_wakeup_v6_5`, from
//! `ttwu_do_activate`); `sd->avg_scan_cost` is [`crate::lb::SdRuntime::avg_scan_cost`].

use fairsim_topology::{CpuMask, SdFlags, SdId};

use crate::cpu_util::{UCLAMP_MAX_DEFAULT, UCLAMP_MIN_DEFAULT};
use crate::features::Feature;
use crate::lb::view::LbRead;
use crate::sched::{update_avg, wf, Sched};
use crate::select::sis::TaskFit;
use crate::select::stats::SisOutcome;
use crate::task::TaskId;

impl Sched {
    /// `available_idle_cpu(cpu) || sched_idle_cpu(cpu)`, the idleness test of 6.5's scans.
    fn idle_v6_5(&self, cpu: usize) -> bool {
        self.rqs[cpu].available_idle_cpu() || self.rqs[cpu].sched_idle_rq()
    }

    /// `select_task_rq_fair(p, prev_cpu, wake_flags)` of Linux 6.5 run on `this_cpu`
    /// (`smp_processor_id()`) at engine time `now`: 6.12's walk of the waker's domains
    /// for an affine domain or one with the balance flag, 6.5's `select_idle_sibling` on
    /// the fast path and `find_idlest_cpu` (6.12's `sched_balance_find_dst_cpu`, the same
    /// code) on the slow path. With EAS on (perf domains built), a wakeup first asks
    /// 6.5's `find_energy_efficient_cpu`. fairsim makes no `WF_CURRENT_CPU` wakeups.
    pub(crate) fn select_task_rq_fair_v6_5(
        &mut self,
        p: TaskId,
        prev_cpu: usize,
        wake_flags: u32,
        this_cpu: usize,
        now: u64,
    ) -> usize {
        let sync = wake_flags & wf::SYNC != 0;
        let cpu = this_cpu;
        let mut new_cpu = prev_cpu;
        let mut want_affine = false;
        // SD_BALANCE_* and WF_* share their low nibble.
        let sd_flag = SdFlags(wake_flags & 0xF);

        if wake_flags & wf::TTWU != 0 {
            self.record_wakee(p, this_cpu, now);
            // 6.5 asks find_energy_efficient_cpu whenever EAS is on; the overutilized
            // test is inside it. The counters split the wakeups as 6.12's do.
            if self.sched_energy_enabled() {
                let overutilized = self.is_rd_overutilized(this_cpu);
                let target = self.find_energy_efficient_cpu_v6_5(p, prev_cpu, this_cpu);
                if overutilized {
                    self.eas.stats.overutilized_wakeups += 1;
                } else {
                    self.note_feec(p, this_cpu, prev_cpu, target);
                }
                if let Some(c) = target {
                    self.wake_stats.eas += 1;
                    return c;
                }
                new_cpu = prev_cpu;
            }
            let wide = self.wake_wide(p, this_cpu);
            self.wake_stats.wake_wide += u64::from(wide);
            want_affine = !wide && self.tasks[p].allowed_on(cpu);
        }

        // Both CPUs in one SD_WAKE_AFFINE domain: wake_affine decides, ahead of the balance
        // flags; usually only fork and exec match a flag (SD_BALANCE_WAKE is off).
        let (affine_sd, sd) = self.wake_domain_walk(cpu, prev_cpu, want_affine, sd_flag);
        if let Some(asd) = affine_sd {
            if cpu != prev_cpu {
                new_cpu = self.wake_affine(asd, p, cpu, prev_cpu, sync);
                self.count_wake_affine(cpu, new_cpu);
            }
        }

        if let Some(sd) = sd {
            if wake_flags & wf::TTWU != 0 {
                self.wake_stats.wake_slow_path += 1;
            }
            new_cpu = self.sched_balance_find_dst_cpu(sd, p, cpu, prev_cpu, sd_flag);
        } else if wake_flags & wf::TTWU != 0 {
            new_cpu = self.select_idle_sibling_v6_5(p, prev_cpu, new_cpu, this_cpu);
        }
        new_cpu
    }

    /// `select_idle_sibling(p, prev, target)` of Linux 6.5, run on `this_cpu` (whose
    /// SIS_PROP state `select_idle_cpu` reads): an idle `target`, an idle cache-affine
    /// `prev`, an idle cache-affine `recent_used_cpu`; on asymmetric machines an idle CPU
    /// that fits from `sd_asym_cpucapacity`; else an idle SMT sibling of `prev` when no
    /// core is idle, then the LLC scan; `target` when all fail. Every candidate must fit
    /// on asymmetric machines. The per-CPU-kthread stacking case never applies (fairsim
    /// has no kthreads).
    pub fn select_idle_sibling_v6_5(
        &mut self,
        p: TaskId,
        prev: usize,
        target: usize,
        this_cpu: usize,
    ) -> usize {
        let mut fit = TaskFit {
            util: 0,
            util_min: UCLAMP_MIN_DEFAULT,
            util_max: UCLAMP_MAX_DEFAULT,
        };
        // The task's utilization is brought up to date to check it, with its clamps,
        // against capacities.
        if self.sched_asym_cpucap_active() {
            self.sync_entity_load_avg(p);
            fit.util = self.task_util_est(p);
            fit.util_min = self.uclamp_eff_value(p, crate::uclamp::ClampId::Min);
            fit.util_max = self.uclamp_eff_value(p, crate::uclamp::ClampId::Max);
        }

        if self.idle_v6_5(target) && self.asym_fits_cpu(&fit, target) {
            return self.sis_done(SisOutcome::Target, target);
        }

        // An idle, cache-affine previous CPU is kept rather than migrating.
        if prev != target
            && self.cpus_share_cache(prev, target)
            && self.idle_v6_5(prev)
            && self.asym_fits_cpu(&fit, prev)
        {
            return self.sis_done(SisOutcome::Prev, prev);
        }

        // A recently used CPU is a candidate too.
        let r = self.tasks[p].recent_used_cpu;
        self.tasks[p].recent_used_cpu = prev;
        if r != prev
            && r != target
            && r < self.nr_cpus()
            && self.cpus_share_cache(r, target)
            && self.idle_v6_5(r)
            && self.tasks[p].allowed_on(r)
            && self.asym_fits_cpu(&fit, r)
        {
            return self.sis_done(SisOutcome::RecentUsed, r);
        }

        // On asymmetric machines the domain of interest spans the capacities. A cpuset
        // island of one capacity has no such domain and takes the symmetric path.
        if self.sched_asym_cpucap_active() {
            if let Some(sd) = self.topo.cpus[target].sd_asym_cpucapacity {
                return match self.select_idle_capacity_v6_5(p, sd, target, &fit) {
                    Some(c) => self.sis_done(SisOutcome::Capacity, c),
                    None => self.sis_done(SisOutcome::NoneIdle, target),
                };
            }
        }

        let Some(sd) = self.topo.cpus[target].sd_llc else {
            return self.sis_done(SisOutcome::NoneIdle, target);
        };

        let mut has_idle_core = false;
        if self.sched_smt_active() {
            has_idle_core = self.test_idle_cores(target);
            if !has_idle_core && self.cpus_share_cache(prev, target) {
                if let Some(i) = self.select_idle_smt_v6_5(p, prev) {
                    return self.sis_done(SisOutcome::SmtSibling, i);
                }
            }
        }

        match self.select_idle_cpu_v6_5(p, sd, has_idle_core, target, this_cpu) {
            Some(i) if has_idle_core => self.sis_done(SisOutcome::IdleCore, i),
            Some(i) => self.sis_done(SisOutcome::IdleCpu, i),
            None => self.sis_done(SisOutcome::NoneIdle, target),
        }
    }

    /// `select_idle_smt(p, target)` of Linux 6.5: the first idle hardware thread of
    /// `target`'s core, other than `target`, that `p` may use.
    pub fn select_idle_smt_v6_5(&self, p: TaskId, target: usize) -> Option<usize> {
        self.cpu_smt_mask(target)
            .iter()
            .find(|&cpu| cpu != target && self.tasks[p].allowed_on(cpu) && self.idle_v6_5(cpu))
    }

    /// `select_idle_core(p, core, cpus, &idle_cpu)` of Linux 6.5: `core` if all its
    /// threads are idle; otherwise its threads leave `cpus`, and the first idle thread
    /// `p` may use is remembered in `idle_cpu` for the caller.
    pub fn select_idle_core_v6_5(
        &self,
        p: TaskId,
        core: usize,
        cpus: &mut CpuMask,
        idle_cpu: &mut Option<usize>,
    ) -> Option<usize> {
        let mut idle = true;
        for cpu in self.cpu_smt_mask(core).iter() {
            self.count_cpu_visit();
            if !self.rqs[cpu].available_idle_cpu() {
                idle = false;
                if idle_cpu.is_none() {
                    if self.rqs[cpu].sched_idle_rq() && self.tasks[p].allowed_on(cpu) {
                        *idle_cpu = Some(cpu);
                        break;
                    }
                    continue;
                }
                break;
            }
            if idle_cpu.is_none() && self.tasks[p].allowed_on(cpu) {
                *idle_cpu = Some(cpu);
            }
        }
        if idle {
            return Some(core);
        }
        cpus.andnot_with(self.cpu_smt_mask(core));
        None
    }

    /// `select_idle_cpu(p, sd, has_idle_core, target)` of Linux 6.5 run on `this_cpu`:
    /// scan the LLC `sd` from `target + 1`, wrapping, for an idle core (when
    /// `has_idle_core`, without a depth limit) or an idle CPU, at most `nr - 1` CPUs with
    /// SIS_PROP's or SIS_UTIL's `nr` (SIS_UTIL's overrides); an overloaded LLC
    /// (`nr_idle_scan` 0) is not scanned. A failed idle-core scan clears
    /// `has_idle_cores`; a CPU scan that was not cut short feeds SIS_PROP's averages.
    pub fn select_idle_cpu_v6_5(
        &mut self,
        p: TaskId,
        sd: SdId,
        has_idle_core: bool,
        target: usize,
        this_cpu: usize,
    ) -> Option<usize> {
        let mut cpus = self.topo.domain(sd).span.and(&self.tasks[p].cpus_allowed);
        let mut idle_cpu: Option<usize> = None;
        let mut nr: i32 = i32::MAX;
        let mut this_sd: Option<SdId> = None;

        if self.fair.features.has(Feature::SIS_PROP) && !has_idle_core {
            // The waking CPU's LLC; without one, no scan.
            let tsd = self.topo.cpus[this_cpu].sd_llc?;
            this_sd = Some(tsd);
            self.age_wake_avg_idle_v6_5(this_cpu);
            let avg_idle = self.lb.rq[this_cpu].wake_avg_idle;
            let avg_cost = self.lb.sd[tsd].avg_scan_cost.wrapping_add(1);
            let span_avg = u64::from(self.topo.domain(sd).span_weight).wrapping_mul(avg_idle);
            // The quotient lands in the kernel's int.
            nr = if span_avg > avg_cost.wrapping_mul(4) {
                (span_avg / avg_cost) as i32
            } else {
                4
            };
        }

        if self.fair.features.has(Feature::SIS_UTIL) {
            if let Some(sds) = self.topo.cpus[target].sd_llc_shared {
                // `!--nr` ends the scan, hence the + 1.
                nr = self.topo.shared[sds]
                    .nr_idle_scan
                    .load(std::sync::atomic::Ordering::Relaxed)
                    .wrapping_add(1);
                // An overloaded LLC is unlikely to have an idle CPU or core.
                if nr == 1 {
                    self.wake_stats.scans_skipped += 1;
                    return None;
                }
                self.wake_stats.nr_idle_scan_sum += u64::from(nr.wrapping_sub(1).max(0) as u32);
                self.wake_stats.nr_idle_scan_reads += 1;
            }
        }
        self.wake_stats.scans += 1;

        // The kernel walks the live mask, from which select_idle_core removes whole
        // cores; walking a snapshot and skipping the CPUs removed since is the same walk.
        let mut reads = 0u64;
        let snapshot = cpus.clone();
        for cpu in snapshot.iter_wrap(target + 1) {
            if !cpus.test(cpu) {
                continue;
            }
            self.count_cpu_visit();
            if has_idle_core {
                if let Some(i) = self.select_idle_core_v6_5(p, cpu, &mut cpus, &mut idle_cpu) {
                    return Some(i);
                }
            } else {
                nr = nr.wrapping_sub(1);
                if nr == 0 {
                    self.wake_stats.scans_limited += 1;
                    return None;
                }
                reads += 1;
                idle_cpu = self.__select_idle_cpu(cpu, p);
                if idle_cpu.is_some() {
                    break;
                }
            }
        }

        if has_idle_core {
            self.set_idle_cores(target, false);
        }

        if let Some(tsd) = this_sd {
            // The scan's time, as the engine will charge the CPUs it read, is taken from
            // the predicted idle time and averaged into the LLC's scan cost.
            let time = reads * self.params.idle_scan_per_cpu;
            let w = &mut self.lb.rq[this_cpu].wake_avg_idle;
            *w -= (*w).min(time);
            update_avg(&mut self.lb.sd[tsd].avg_scan_cost, time);
        }
        idle_cpu
    }

    /// SIS_PROP's ageing in Linux 6.5's `select_idle_cpu`: a CPU that has been busy since
    /// its last wakeup from idle no longer predicts its idle time by that period, so
    /// `wake_avg_idle` halves for each jiffy since `wake_stamp`.
    fn age_wake_avg_idle_v6_5(&mut self, cpu: usize) {
        let now = self.jiffies_now();
        let rq = &mut self.lb.rq[cpu];
        while rq.wake_stamp < now && rq.wake_avg_idle != 0 {
            rq.wake_stamp += 1;
            rq.wake_avg_idle >>= 1;
        }
    }

    /// The SIS_PROP lines of Linux 6.5's `ttwu_do_activate` (kernel/sched/core.c), after
    /// a CPU that went idle through a newidle balance (`idle_stamp` set) gets its wakeup
    /// and has folded the idle period into `avg_idle`: restart the prediction from half
    /// of `avg_idle` now.
    pub(crate) fn sis_prop_wakeup_v6_5(&mut self, cpu: usize) {
        let stamp = self.jiffies_now();
        let avg_idle = self.rqs[cpu].avg_idle;
        let rq = &mut self.lb.rq[cpu];
        rq.wake_stamp = stamp;
        rq.wake_avg_idle = avg_idle / 2;
    }

    /// `select_idle_capacity(p, sd, target)` of Linux 6.5: in `sd` (the
    /// `sd_asym_cpucapacity` domain), from `target + 1` and wrapping, the first idle CPU
    /// the task fits; failing that the idle CPU that fits best (-1 before 0), then with
    /// the highest capacity, the first found on a tie.
    pub fn select_idle_capacity_v6_5(
        &self,
        p: TaskId,
        sd: SdId,
        target: usize,
        fit: &TaskFit,
    ) -> Option<usize> {
        let cpus = self.topo.domain(sd).span.and(&self.tasks[p].cpus_allowed);
        let mut best_cap = 0u64;
        let mut best_fits = 0i32;
        let mut best_cpu = None;
        for cpu in cpus.iter_wrap(target + 1) {
            self.count_cpu_visit();
            let mut cpu_cap = self.capacity_of(cpu);
            if !self.idle_v6_5(cpu) {
                continue;
            }
            let fits = self.util_fits_cpu(fit.util, fit.util_min, fit.util_max, cpu);
            if fits > 0 {
                return Some(cpu);
            } else if fits < 0 {
                // Only uclamp_min does not fit: compare what the CPU can deliver,
                // `capacity_orig - thermal_load_avg`, with no thermal pressure here.
                cpu_cap = self.arch_scale_cpu_capacity(cpu);
            }
            if fits < best_fits || (fits == best_fits && cpu_cap > best_cap) {
                best_cap = cpu_cap;
                best_cpu = Some(cpu);
                best_fits = fits;
            }
        }
        best_cpu
    }
}
