//! The wakeup fast path: `select_idle_sibling` and the scans it runs, `select_idle_cpu`
//! (limited by SIS_UTIL), `select_idle_smt` and, on asymmetric-capacity machines,
//! `select_idle_capacity` (fair.c).

use fairsim_topology::{SdFlags, SdId};

use crate::cpu_util::{UCLAMP_MAX_DEFAULT, UCLAMP_MIN_DEFAULT};
use crate::features::Feature;
use crate::lb::view::LbRead;
use crate::sched::Sched;
use crate::select::stats::SisOutcome;
use crate::task::TaskId;

/// The task's utilization and clamps, read once by `select_idle_sibling` on asymmetric
/// machines (`task_util`, `util_min`, `util_max` there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskFit {
    /// `task_util_est(p)`.
    pub util: u64,
    /// `uclamp_eff_value(p, UCLAMP_MIN)`.
    pub util_min: u64,
    /// `uclamp_eff_value(p, UCLAMP_MAX)`.
    pub util_max: u64,
}

impl Sched {
    /// `available_idle_cpu(cpu) || sched_idle_cpu(cpu)`: the idleness test of the scans.
    #[inline]
    fn idle_or_sched_idle(&self, cpu: usize) -> bool {
        self.rqs[cpu].available_idle_cpu() || self.rqs[cpu].sched_idle_rq()
    }

    /// `asym_fits_cpu(util, util_min, util_max, cpu)` (fair.c): on asymmetric-capacity
    /// machines, whether the task fully fits `cpu`; always true elsewhere (`fit` is only
    /// read when the key is on, as in the kernel).
    pub fn asym_fits_cpu(&self, fit: &TaskFit, cpu: usize) -> bool {
        if self.sched_asym_cpucap_active() {
            return self.util_fits_cpu(fit.util, fit.util_min, fit.util_max, cpu) > 0;
        }
        true
    }

    /// `select_idle_sibling(p, prev, target)` (fair.c):
    /// keep an idle `target`, else an idle cache-affine `prev`, else an idle recently used
    /// CPU; on asymmetric machines search `sd_asym_cpucapacity` for an idle CPU that fits;
    /// otherwise look for an idle SMT sibling of `prev`, then scan the LLC (cluster
    /// first). Falls back to a remembered cluster-external candidate, then `target`.
    ///
    /// The per-CPU-kthread stacking case never applies: fairsim has no kthreads.
    pub fn select_idle_sibling(&mut self, p: TaskId, prev: usize, target: usize) -> usize {
        let mut fit = TaskFit {
            util: 0,
            util_min: UCLAMP_MIN_DEFAULT,
            util_max: UCLAMP_MAX_DEFAULT,
        };
        // On asymmetric machines the task's utilization is brought up to date because it
        // is checked against the CPUs' capacities.
        if self.sched_asym_cpucap_active() {
            self.sync_entity_load_avg(p);
            fit.util = self.task_util_est(p);
            fit.util_min = self.uclamp_eff_value(p, crate::uclamp::ClampId::Min);
            fit.util_max = self.uclamp_eff_value(p, crate::uclamp::ClampId::Max);
        }
        let cluster_active = self.sched_cluster_active();

        if self.idle_or_sched_idle(target) && self.asym_fits_cpu(&fit, target) {
            return self.sis_done(SisOutcome::Target, target);
        }

        // A cache-affine, idle previous CPU is kept rather than migrating.
        let mut prev_aff = None;
        if prev != target
            && self.cpus_share_cache(prev, target)
            && self.idle_or_sched_idle(prev)
            && self.asym_fits_cpu(&fit, prev)
        {
            if !cluster_active || self.cpus_share_resources(prev, target) {
                return self.sis_done(SisOutcome::Prev, prev);
            }
            prev_aff = Some(prev);
        }

        // A recently used CPU is a candidate too.
        let r = self.tasks[p].recent_used_cpu;
        self.tasks[p].recent_used_cpu = prev;
        let mut recent_used_cpu = None;
        if r != prev
            && r != target
            && r < self.nr_cpus()
            && self.cpus_share_cache(r, target)
            && self.idle_or_sched_idle(r)
            && self.tasks[p].allowed_on(r)
            && self.asym_fits_cpu(&fit, r)
        {
            if !cluster_active || self.cpus_share_resources(r, target) {
                return self.sis_done(SisOutcome::RecentUsed, r);
            }
            recent_used_cpu = Some(r);
        }

        // On asymmetric machines the domain of interest spans the capacities, not the LLC.
        if self.sched_asym_cpucap_active() {
            if let Some(sd) = self.topo.cpus[target].sd_asym_cpucapacity {
                return match self.select_idle_capacity(p, sd, target, &fit) {
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
                if let Some(i) = self.select_idle_smt(p, sd, prev) {
                    return self.sis_done(SisOutcome::SmtSibling, i);
                }
            }
        }

        let found = self.select_idle_cpu_counted(p, sd, has_idle_core, target);
        if let Some(i) = found {
            let o = if has_idle_core {
                SisOutcome::IdleCore
            } else {
                SisOutcome::IdleCpu
            };
            return self.sis_done(o, i);
        }

        // With clusters, the scan looked in target's cluster first; a cache-affine prev
        // or recent CPU outside it is still better than a busy target.
        let fallback = prev_aff.or(recent_used_cpu).unwrap_or(target);
        self.sis_done(SisOutcome::NoneIdle, fallback)
    }

    /// [`Sched::select_idle_cpu`], counting the scan for [`crate::select::stats`]: a scan
    /// SIS_UTIL skips, the limit it read, and a scan that ran out of its limit.
    fn select_idle_cpu_counted(
        &mut self,
        p: TaskId,
        sd: SdId,
        has_idle_core: bool,
        target: usize,
    ) -> Option<usize> {
        // The limit select_idle_cpu reads: 0 skips both scans, and it bounds the CPU scan
        // (not the idle-core scan).
        let limit = self
            .fair
            .features
            .has(Feature::SIS_UTIL)
            .then(|| self.topo.cpus[target].sd_llc_shared)
            .flatten()
            .map(|sds| {
                self.topo.shared[sds]
                    .nr_idle_scan
                    .load(std::sync::atomic::Ordering::Relaxed)
            });
        let before = self.cpus_visited_so_far();
        let found = self.select_idle_cpu(p, sd, has_idle_core, target);
        let read = self.cpus_visited_so_far() - before;
        // The scan stopped at its limit (`!--nr`) only where the LLC had more CPUs to read
        // than the limit allows; otherwise it ended with the mask.
        let more_than_limit = |nr: u64| {
            self.topo
                .domain(sd)
                .span
                .weight_and(&self.tasks[p].cpus_allowed) as u64
                > nr
        };
        let limited = match limit {
            Some(nr) if found.is_none() && !has_idle_core && nr > 0 => {
                let nr = u64::from(nr as u32);
                read >= nr && more_than_limit(nr)
            }
            _ => false,
        };
        let st = &mut self.wake_stats;
        match limit {
            // SIS_UTIL's early return comes before either scan.
            Some(0) => st.scans_skipped += 1,
            Some(nr) => {
                st.scans += 1;
                st.nr_idle_scan_sum += u64::from(nr.max(0) as u32);
                st.nr_idle_scan_reads += 1;
                st.scans_limited += u64::from(limited);
            }
            None => st.scans += 1,
        }
        found
    }

    /// `__select_idle_cpu(cpu, p)` (fair.c): `cpu` if it is idle or runs only SCHED_IDLE
    /// tasks (core-scheduling cookies always match in fairsim).
    pub fn __select_idle_cpu(&self, cpu: usize, _p: TaskId) -> Option<usize> {
        self.idle_or_sched_idle(cpu).then_some(cpu)
    }

    /// `select_idle_smt(p, sd, target)` (fair.c): the first idle hardware thread of
    /// `target`'s core, other than `target`, that `p` may use and that is in `sd`.
    pub fn select_idle_smt(&self, p: TaskId, sd: SdId, target: usize) -> Option<usize> {
        let span = &self.topo.domain(sd).span;
        self.cpu_smt_mask(target).iter().find(|&cpu| {
            cpu != target
                && self.tasks[p].allowed_on(cpu)
                && span.test(cpu)
                && self.idle_or_sched_idle(cpu)
        })
    }

    /// `select_idle_cpu(p, sd, has_idle_core, target)` (fair.c): scan the LLC `sd` from
    /// `target + 1`, wrapping, for an idle core (when `has_idle_core`) or an idle CPU.
    /// SIS_UTIL limits the CPU scan to `nr_idle_scan` CPUs and skips it when that is 0;
    /// the idle-core scan is not limited. With clusters, `target`'s cluster is scanned
    /// first. A failed idle-core scan clears `has_idle_cores`.
    pub fn select_idle_cpu(
        &self,
        p: TaskId,
        sd: SdId,
        has_idle_core: bool,
        target: usize,
    ) -> Option<usize> {
        let d = self.topo.domain(sd);
        let mut cpus = d.span.and(&self.tasks[p].cpus_allowed);
        let mut idle_cpu: Option<usize> = None;
        let mut nr: i64 = i64::from(i32::MAX);

        if self.fair.features.has(Feature::SIS_UTIL) {
            if let Some(sds) = self.topo.cpus[target].sd_llc_shared {
                // `!--nr` ends the scan, hence the + 1.
                nr = i64::from(
                    self.topo.shared[sds]
                        .nr_idle_scan
                        .load(std::sync::atomic::Ordering::Relaxed),
                ) + 1;
                // An overloaded LLC is unlikely to have an idle CPU or core.
                if nr == 1 {
                    return None;
                }
            }
        }

        if self.sched_cluster_active() {
            if let Some(&g) = d.groups.first() {
                let sg = self.topo.group(g);
                if sg.flags.contains(SdFlags::CLUSTER) {
                    for cpu in sg.span.iter_wrap(target + 1) {
                        if !cpus.test(cpu) {
                            continue;
                        }
                        self.count_cpu_visit();
                        if has_idle_core {
                            if let Some(i) = self.select_idle_core(p, cpu, &mut cpus, &mut idle_cpu)
                            {
                                return Some(i);
                            }
                        } else {
                            nr -= 1;
                            if nr <= 0 {
                                return None;
                            }
                            idle_cpu = self.__select_idle_cpu(cpu, p);
                            if idle_cpu.is_some() {
                                return idle_cpu;
                            }
                        }
                    }
                    cpus.andnot_with(&sg.span);
                }
            }
        }

        // The kernel walks the live mask, from which select_idle_core removes whole
        // cores; walking a snapshot and skipping CPUs removed since is the same walk. The
        // snapshot is walked lazily: the scan usually stops after a few CPUs of the LLC.
        let snapshot = cpus.clone();
        for cpu in snapshot.iter_wrap(target + 1) {
            if !cpus.test(cpu) {
                continue;
            }
            self.count_cpu_visit();
            if has_idle_core {
                if let Some(i) = self.select_idle_core(p, cpu, &mut cpus, &mut idle_cpu) {
                    return Some(i);
                }
            } else {
                nr -= 1;
                if nr <= 0 {
                    return None;
                }
                idle_cpu = self.__select_idle_cpu(cpu, p);
                if idle_cpu.is_some() {
                    break;
                }
            }
        }

        if has_idle_core {
            self.set_idle_cores(target, false);
        }
        idle_cpu
    }

    /// `select_idle_capacity(p, sd, target)` (fair.c): in `sd` (the
    /// `sd_asym_cpucapacity` domain), from `target` and wrapping, the first idle CPU the
    /// task fits; failing that, the idle CPU that fits best (-1 before 0), then with the
    /// highest capacity.
    pub fn select_idle_capacity(
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
        for cpu in cpus.iter_wrap(target) {
            self.count_cpu_visit();
            let mut cpu_cap = self.capacity_of(cpu);
            if !self.idle_or_sched_idle(cpu) {
                continue;
            }
            let fits = self.util_fits_cpu(fit.util, fit.util_min, fit.util_max, cpu);
            if fits > 0 {
                return Some(cpu);
            } else if fits < 0 {
                // Only uclamp_min does not fit: compare what the CPU can really deliver.
                cpu_cap = self.get_actual_cpu_capacity(cpu);
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
