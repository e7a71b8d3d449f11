//! Wakeup, fork and exec placement: `select_task_rq_fair` and its helpers.
//!
//! - [`wake_affine`]: `record_wakee`, `wake_wide`, `wake_affine` (WA_IDLE, WA_WEIGHT);
//! - [`sis`]: `select_idle_sibling`, `select_idle_cpu` (SIS_UTIL), `select_idle_smt`,
//!   `select_idle_capacity`;
//! - [`idle_core`]: `has_idle_cores` bookkeeping and `select_idle_core`;
//! - [`slow_path`]: `sched_balance_find_dst_cpu` / `_group` / `_group_cpu` for fork, exec
//!   and `SD_BALANCE_WAKE`;
//! - [`idle_scan`]: `update_idle_cpu_scan`, SIS_UTIL's scan-depth update;
//! - [`stats`]: where wakeups went (the paths taken and `select_idle_sibling`'s
//!   outcomes), fairsim's own counters;
//! - [`v4_5_sis`]: Linux 4.5's `select_idle_sibling` (LEGACY_SIS) and seed 001's patch on
//!   it (SIS_FIRST_IDLE), with the list of 4.5's `select_task_rq_fair` steps that differ
//!   from 6.12's around it;
//! - [`v4_15_find_idlest`]: Linux 4.15's `find_idlest_cpu` / `_group` / `_group_cpu`
//!   (LEGACY_FIND_IDLEST) with seed 004's `SD_NUMA` clause (FIND_IDLEST_NUMA), and how
//!   4.15's runnable load is read from 6.12's runqueues.
//!
//! Energy-aware placement (`find_energy_efficient_cpu`) is in [`crate::energy`]: it
//! applies on machines with an energy model under schedutil, for 6.12 and 6.5 (each its
//! own). fairsim has no `WF_CURRENT_CPU` wakeups, no per-CPU kthreads, no core
//! scheduling cookies and no exiting wakers (`PF_EXITING`).

pub mod idle_core;
pub mod idle_scan;
pub mod sis;
pub mod slow_path;
pub mod stats;
pub mod v3_9_find_idlest;
pub mod v3_9_select;
pub mod v3_9_sis;
pub mod v3_9_wake_affine;
pub mod v4_15_find_idlest;
pub mod v4_15_select;
pub mod v4_15_sis;
pub mod v4_15_wake_affine;
pub mod v4_5_find_idlest;
pub mod v4_5_select;
pub mod v4_5_sis;
pub mod v4_5_wake_affine;
pub mod v6_5_select;
pub mod wake_affine;

use fairsim_topology::{SdFlags, SdId};

use crate::features::Feature;
use crate::kernel::Kernel;
use crate::sched::{wf, Sched};
use crate::select::stats::SisOutcome;
use crate::task::TaskId;

impl Sched {
    /// The fair class's `select_task_rq` for wakeups, forks and execs of `p` run on
    /// `this_cpu` at `now`, dispatched once to the run's kernel: 6.12's
    /// `select_task_rq_fair` or the era's own ([`v6_5_select`], [`v4_15_select`] for 4.15
    /// and 4.16, [`v4_5_select`], [`v3_9_select`]).
    pub fn select_task_rq_fair(
        &mut self,
        p: TaskId,
        prev_cpu: usize,
        wake_flags: u32,
        this_cpu: usize,
        now: u64,
    ) -> usize {
        let visited = self.cpus_visited_so_far();
        let cpu = match self.fair.features.kernel() {
            Kernel::V6_12 => self.select_task_rq_fair_v6_12(p, prev_cpu, wake_flags, this_cpu, now),
            Kernel::V6_5 => self.select_task_rq_fair_v6_5(p, prev_cpu, wake_flags, this_cpu, now),
            Kernel::V4_15 | Kernel::V4_16 => {
                self.select_task_rq_fair_v4_15(p, prev_cpu, wake_flags, this_cpu, now)
            }
            Kernel::V4_5 => self.select_task_rq_fair_v4_5(p, prev_cpu, wake_flags, this_cpu, now),
            Kernel::V3_9 => self.select_task_rq_fair_v3_9(p, prev_cpu, wake_flags, this_cpu, now),
        };
        let kind = if wake_flags & wf::TTWU != 0 {
            stats::SelectKind::Wakeup
        } else if wake_flags & wf::FORK != 0 {
            stats::SelectKind::Fork
        } else {
            stats::SelectKind::Exec
        };
        // The CPUs the call read are the cost model's visits it counted (the idle tests
        // and scans of the fast path, the groups' CPUs of the slow path).
        let read = self.cpus_visited_so_far() - visited;
        let busy = !self.rqs[cpu].available_idle_cpu();
        self.wake_stats.record(kind, read, busy);
        cpu
    }

    /// `select_task_rq_fair(p, prev_cpu, wake_flags)` of 6.12 run on `this_cpu`
    /// (`smp_processor_id()`) at engine time `now`.
    ///
    /// Wakeups record the waker/wakee flip and go affine unless `wake_wide` says the
    /// waker has too many partners; the lowest `SD_WAKE_AFFINE` domain spanning both CPUs
    /// decides between the waker's and the previous CPU (`wake_affine`), and
    /// `select_idle_sibling` looks for an idle CPU around that target. Fork and exec (and
    /// wakeups in an `SD_BALANCE_WAKE` domain) take the slow path through the highest
    /// domain with the matching balance flag.
    ///
    /// With LEGACY_SIS, Linux 4.5's `select_idle_sibling` replaces 6.12's on the fast
    /// path and everything else stays 6.12's ([`v4_5_sis`] lists how 4.5 differed). With
    /// LEGACY_FIND_IDLEST, Linux 4.15's `find_idlest_cpu` replaces 6.12's
    /// `sched_balance_find_dst_cpu` on the slow path ([`v4_15_find_idlest`]).
    pub(crate) fn select_task_rq_fair_v6_12(
        &mut self,
        p: TaskId,
        prev_cpu: usize,
        wake_flags: u32,
        this_cpu: usize,
        now: u64,
    ) -> usize {
        // The waker never exits here (no PF_EXITING in fairsim).
        let sync = wake_flags & wf::SYNC != 0;
        let cpu = this_cpu;
        let mut new_cpu = prev_cpu;
        let mut want_affine = false;
        // SD_* balance flags and WF_* flags share the first nibble.
        let sd_flag = SdFlags(wake_flags & 0xF);

        if wake_flags & wf::TTWU != 0 {
            self.record_wakee(p, this_cpu, now);
            // Energy-aware placement while the root domain is not overutilized (always
            // overutilized without EAS: no energy model, or not this kernel).
            if !self.is_rd_overutilized(this_cpu) {
                let target = self.find_energy_efficient_cpu(p, prev_cpu, this_cpu);
                self.note_feec(p, this_cpu, prev_cpu, target);
                if let Some(c) = target {
                    self.wake_stats.eas += 1;
                    return c;
                }
                new_cpu = prev_cpu;
            } else if self.sched_energy_enabled() {
                self.eas.stats.overutilized_wakeups += 1;
            }
            let wide = self.wake_wide(p, this_cpu);
            if wide {
                self.wake_stats.wake_wide += 1;
            }
            want_affine = !wide && self.tasks[p].allowed_on(cpu);
        }

        let mut sd: Option<SdId> = None;
        let mut affine_sd: Option<SdId> = None;
        for tmp in self.topo.domains_of(cpu) {
            let d = self.topo.domain(tmp);
            if want_affine && d.flags.contains(SdFlags::WAKE_AFFINE) && d.span.test(prev_cpu) {
                // Both CPUs are in this domain: the waker's CPU is a valid affine target,
                // and wake_affine is preferred over the balance flags.
                affine_sd = Some(tmp);
                sd = None;
                break;
            }
            // Usually only fork and exec match here: SD_BALANCE_WAKE is off by default.
            if d.flags.intersects(sd_flag) {
                sd = Some(tmp);
            } else if !want_affine {
                break;
            }
        }
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
            new_cpu = if self.balancer() == crate::lb::era::Balancer::V3_9 {
                self.find_idlest_cpu_v3_9(sd, p, cpu, prev_cpu, sd_flag)
            } else if self.fair.features.has(Feature::LEGACY_FIND_IDLEST) {
                self.find_idlest_cpu_v4_15(sd, p, cpu, prev_cpu, sd_flag)
            } else {
                self.sched_balance_find_dst_cpu(sd, p, cpu, prev_cpu, sd_flag)
            };
        } else if wake_flags & wf::TTWU != 0 {
            new_cpu = if self.fair.features.has(Feature::LEGACY_SIS) {
                // 4.5's function reads the previous CPU from the task itself.
                self.select_idle_sibling_legacy_counted(p, new_cpu)
            } else {
                self.select_idle_sibling(p, prev_cpu, new_cpu)
            };
        }
        new_cpu
    }

    /// Counts a `select_idle_sibling` outcome and returns `cpu`, so that each return of
    /// the function names its branch.
    #[inline]
    pub(crate) fn sis_done(&mut self, o: SisOutcome, cpu: usize) -> usize {
        self.wake_stats.sis[o as usize] += 1;
        cpu
    }

    /// Counts a `wake_affine` call on `this_cpu` that chose `target` (the waker's CPU:
    /// pulled), for [`stats`].
    pub(crate) fn count_wake_affine(&mut self, this_cpu: usize, target: usize) {
        self.wake_stats.affine_calls += 1;
        if target == this_cpu {
            self.wake_stats.affine_pulled += 1;
        }
    }

    /// The domain walk of `select_task_rq_fair` as 4.5 to 6.12 run it, from `cpu` up:
    /// with `want_affine`, the first `SD_WAKE_AFFINE` domain that spans `prev_cpu` ends
    /// the walk as the affine domain; otherwise the highest domain with a flag of
    /// `sd_flag` is kept, the walk stopping at the first without it unless the wakeup
    /// wants affine. Returns `(affine_sd, sd)`; `sd` is `None` when an affine domain was
    /// found, as `wake_affine` is preferred over the balance flags. (3.9's walk skips
    /// rather than stops: see [`v3_9_select`].)
    pub(crate) fn wake_domain_walk(
        &self,
        cpu: usize,
        prev_cpu: usize,
        want_affine: bool,
        sd_flag: SdFlags,
    ) -> (Option<SdId>, Option<SdId>) {
        let mut sd: Option<SdId> = None;
        for tmp in self.topo.domains_of(cpu) {
            let d = self.topo.domain(tmp);
            if want_affine && d.flags.contains(SdFlags::WAKE_AFFINE) && d.span.test(prev_cpu) {
                return (Some(tmp), None);
            }
            if d.flags.intersects(sd_flag) {
                sd = Some(tmp);
            } else if !want_affine {
                break;
            }
        }
        (None, sd)
    }

    /// `current` on `cpu`: the task running there, `None` for the idle task.
    pub(crate) fn current_of(&self, cpu: usize) -> Option<TaskId> {
        self.rqs[cpu].curr
    }

    /// `cpus_share_resources(this_cpu, that_cpu)` (core.c): same cluster (`sd_share_id`),
    /// which is the LLC on machines without clusters.
    pub fn cpus_share_resources(&self, a: usize, b: usize) -> bool {
        a == b || self.topo.cpus[a].sd_share_id == self.topo.cpus[b].sd_share_id
    }

    /// `sched_asym_cpucap_active()`: the `sched_asym_cpucapacity` key.
    pub fn sched_asym_cpucap_active(&self) -> bool {
        self.topo.asym_cpucapacity
    }

    /// `sched_cluster_active`: the key set when a cluster level survives.
    pub fn sched_cluster_active(&self) -> bool {
        self.topo.cluster_active
    }
}
