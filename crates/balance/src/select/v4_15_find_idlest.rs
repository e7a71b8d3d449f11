//! Linux 4.15's slow placement path, `find_idlest_cpu` / `find_idlest_group` /
//! `find_idlest_group_cpu` (LEGACY_FIND_IDLEST), and seed 004's `SD_NUMA` clause on it
//! (FIND_IDLEST_NUMA), beside 6.12's [`super::slow_path`].
//!
//! # Sources
//!
//! - **Linux 4.15.0**: the tree `github:sndrzt/linux-4.15` at commit `6ea062648` ("linux-4.15
//!   original source code from kernel.org"; its Makefile says 4.15.0, "Fearless Coyote";
//!   the repository's next commit replaces it with Ubuntu's `linux-source-4.15.0`, which
//!   was not used). Read: `kernel/sched/fair.c` lines 3864-3872 (`cfs_rq_runnable_load_avg`,
//!   `cfs_rq_load_avg`), 5466-5470 (`weighted_cpuload`), 5586-5618 (`source_load`,
//!   `target_load`), 5771-5774 (`capacity_spare_wake`), 5776-5908 (`find_idlest_group`),
//!   5910-5961 (`find_idlest_group_cpu`), 5963-6005 (`find_idlest_cpu`), 6250-6277
//!   (`cpu_util`, `task_util`, `cpu_util_wake`), 6318-6380 (`select_task_rq_fair`);
//!   `kernel/sched/topology.c` 1072-1190 (`sd_init`); `kernel/sched/core.c` 3906-3921
//!   (`idle_cpu`).
//! - **Linux 4.16.13**: `github:lizuobin/linux-4.16.13_tiny4412` at `92bab2186` (Makefile
//!   4.16.13). Its three functions still lack the seed's clause: commit 2c833627 was
//!   merged for **v4.17**, not v4.16.
//! - **Linux 4.17.0**: `github:SaumyaSachdev/linux-4.17` at `bd206cf2` (Makefile 4.17.0,
//!   "Merciless Moray"); `github:cgw201410/linux-4.17_jz2440` at `7bbaa205` has a
//!   byte-identical `fair.c`. The seed's clause is at `fair.c` 6064-6074, inside
//!   `find_idlest_group` (5947-6084), after `if (!idlest) return NULL;` and before the two
//!   4.15 comparisons; apart from comments it is the only change to the three functions
//!   between 4.16.13 and 4.17.0.
//!
//! # What is ported
//!
//! 4.15.0's three functions, with the 4.17 clause under FIND_IDLEST_NUMA. Between 4.15.0
//! and 4.16/4.17 two details changed and are **not** taken: `capacity_spare_wake` became
//! `max(capacity_of - cpu_util_wake, 0)` (4.15: `capacity_orig_of - cpu_util_wake`), and
//! `find_idlest_group_cpu` dropped the tie-break that prefers `this_cpu` among equally
//! loaded busy CPUs. The seed measured its patch on a 4.15.0 base, so both kernels of the
//! seed are 4.15.0 here, without and with the clause. 4.17's `cpu_util_wake` also reads
//! util_est; 4.15 has none.
//!
//! # 4.15's loads on 6.12's runqueues
//!
//! - **Load indexes.** `find_idlest_group` reads `source_load(i, load_idx)` for the local
//!   group and `target_load(i, load_idx)` for the others, with `load_idx` =
//!   `sd->forkexec_idx` (or `sd->wake_idx` for `SD_BALANCE_WAKE`). 4.15's `sd_init` sets
//!   both to 0 at every level (only `busy_idx` and `idle_idx` differ per level), and with
//!   `type == 0` both functions return `weighted_cpuload()` whatever LB_BIAS says. So the
//!   `cpu_load[]` history is not needed, and the local/remote bias is absent.
//! - **`weighted_cpuload()`** is the root cfs_rq's `runnable_load_avg`: the PELT average
//!   of the weight of the *queued* entities, added at enqueue, removed at dequeue, and
//!   accrued at each cfs_rq update. 6.12 keeps no such signal. fairsim has no cgroups, so
//!   [`Sched::weighted_cpuload_v4_15`] sums, over the tasks queued on the CPU (current one
//!   included, `rq->cfs_tasks`), each task's `se.avg.load_avg` brought forward, on a copy,
//!   to the cfs_rq's `last_update_time` as a runnable entity (running if it is
//!   `cfs_rq->curr`). For a task entity 4.15's `runnable_load_avg` equals its `load_avg`
//!   (both accrue while on_rq), and the cfs_rq's sum and decay are those of its
//!   entities, so this is 4.15's value up to rounding: the kernel divides the summed
//!   `runnable_load_sum` once, this divides each task's sum (at most one unit per task
//!   lower), and the kernel's value drifts from the exact sum through enqueue/dequeue
//!   rounding that is not replayed. Entities whose dequeue is delayed (6.12's
//!   DELAY_DEQUEUE) are left out: they are sleeping tasks that 4.15 dequeued at once.
//! - **`cfs_rq_load_avg()`** (the `avg_load` tie-break, blocked load included) is the
//!   root cfs_rq's `load_avg`, 6.12's `cpu_load()`. Delayed entities keep accruing
//!   there in 6.12, where 4.15 would have decayed them as blocked.
//! - **`capacity_spare_wake()`** is `capacity_orig_of(cpu) - cpu_util_wake(cpu, p)`, with
//!   4.15's `cpu_util_wake` (the CPU's `util_avg` minus `p`'s when `p` last ran there and
//!   is attached, clamped to the original capacity; no util_est).
//! - **`imbalance_pct`.** 4.15's `sd_init` gives 110 to SMT, 117 to LLC-sharing domains
//!   and 125 to everything above (package and NUMA levels); 6.12 uses 117 above the LLC.
//!   The topology stays 6.12's, so [`imbalance_pct_v4_15`] recomputes 4.15's value from
//!   the domain's flags for `imbalance_scale` and `imbalance`.
//! - **Idle CPUs.** `find_idlest_group_cpu` tests 4.15's `idle_cpu()` (the idle task
//!   runs, nothing queued, empty wake list: [`crate::rq::Rq::idle_cpu`], with the wake
//!   list as `ttwu_pending`), not 6.12's `available_idle_cpu()`/`sched_idle_cpu()`. Its
//!   idle-state tie-break reads the one exit latency `SchedParams::cpuidle_exit_latency_us`
//!   gives every idle CPU (`None`: no cpuidle driver, `idle_get_state()` is NULL) and
//!   `rq->idle_stamp`, which fairsim sets, as 4.15's `idle_balance()` does, when a CPU
//!   goes newly idle and clears when a pull succeeds. fairsim has no per-CPU idle state
//!   depth, so CPUs never differ in exit latency and the tie-break is by `idle_stamp`.
//!
//! # Around it: 4.15 against 6.12
//!
//! LEGACY_FIND_IDLEST replaces `sched_balance_find_dst_cpu` and what it calls; the rest of
//! `select_task_rq_fair` stays 6.12's. 4.15 differs around it in these steps:
//! `sync_entity_load_avg(p)` runs in the caller when a balance domain was found and the
//! task is not forking, before the allowed-CPUs check (ported: it runs first in
//! [`Sched::find_idlest_cpu_v4_15`]); 4.15 clears `want_affine` when the task does not fit
//! the waker's or the previous CPU (`wake_cap`, asymmetric machines only); and 4.15's
//! `sd_init` removes `SD_BALANCE_FORK`/`_EXEC`/`SD_WAKE_AFFINE` from NUMA levels beyond
//! `RECLAIM_DISTANCE` (30) as 6.12 does, so the levels the slow path visits are the same.
//!
//! # Cost
//!
//! Each group whose CPUs are summed counts as one group visit and each CPU read as one CPU
//! visit, as the 6.12 slow path counts them. 4.15 sums every CPU of the group, not only
//! the task's allowed ones.

use fairsim_pelt::{update_load_avg_se, SeInputs, SCHED_CAPACITY_SCALE};
use fairsim_topology::{GroupId, SdFlags, SdId};

use crate::features::Feature;
use crate::sched::Sched;
use crate::task::TaskId;
use crate::weight::{scale_load_down, NICE_0_LOAD};

/// `sd->imbalance_pct` as Linux 4.15's `sd_init` (kernel/sched/topology.c) sets it from
/// the domain's flags: 110 for SMT siblings (`SD_SHARE_CPUCAPACITY`), 117 for domains that
/// share the LLC (`SD_SHARE_PKG_RESOURCES`, 6.12's `SD_SHARE_LLC`), 125 otherwise.
pub fn imbalance_pct_v4_15(flags: SdFlags) -> u32 {
    if flags.contains(SdFlags::SHARE_CPUCAPACITY) {
        110
    } else if flags.contains(SdFlags::SHARE_LLC) {
        117
    } else {
        125
    }
}

impl Sched {
    /// `weighted_cpuload(rq)` of Linux 4.15 (kernel/sched/fair.c), the root cfs_rq's
    /// `runnable_load_avg`: the sum of the `load_avg` of the tasks queued on `cpu` and not
    /// delayed, each brought to the cfs_rq's last update as a runnable entity (see the
    /// module doc for how this differs from the kernel's own signal).
    pub fn weighted_cpuload_v4_15(&self, cpu: usize) -> u64 {
        let rq = &self.rqs[cpu];
        let now = rq.cfs.avg.avg.last_update_time;
        let mut sum = 0u64;
        for &t in &rq.cfs_tasks {
            let se = &self.tasks[t].se;
            // A delayed entity is a sleeping task that 4.15 would have dequeued.
            if !se.on_rq || se.sched_delayed {
                continue;
            }
            let mut avg = se.avg;
            let inp = SeInputs {
                weight: scale_load_down(se.load.weight),
                on_rq: true,
                runnable: 1,
                running: rq.cfs.curr == Some(t),
            };
            update_load_avg_se(now, &mut avg, inp, false);
            sum += avg.load_avg;
        }
        sum
    }

    /// `cpu_util(cpu)` of Linux 4.15 (kernel/sched/fair.c): the root cfs_rq's `util_avg`
    /// clamped to the original capacity; no util_est.
    pub fn cpu_util_v4_15(&self, cpu: usize) -> u64 {
        let util = self.rqs[cpu].cfs.avg.avg.util_avg;
        util.min(self.arch_scale_cpu_capacity(cpu))
    }

    /// `cpu_util_wake(cpu, p)` of Linux 4.15 (kernel/sched/fair.c): `cpu_util` when `p`
    /// did not last run on `cpu` or is new; otherwise the CPU's `util_avg` minus `p`'s
    /// (not below 0), clamped to the original capacity.
    pub fn cpu_util_wake_v4_15(&self, cpu: usize, p: TaskId) -> u64 {
        let t = &self.tasks[p];
        if cpu != t.cpu || t.se.avg.last_update_time == 0 {
            return self.cpu_util_v4_15(cpu);
        }
        let util = self.rqs[cpu]
            .cfs
            .avg
            .avg
            .util_avg
            .saturating_sub(self.task_util(p));
        util.min(self.arch_scale_cpu_capacity(cpu))
    }

    /// `capacity_spare_wake(cpu, p)` of Linux 4.15 (kernel/sched/fair.c): the original
    /// capacity minus [`Sched::cpu_util_wake_v4_15`], which never exceeds it.
    pub fn capacity_spare_wake_v4_15(&self, cpu: usize, p: TaskId) -> u64 {
        self.arch_scale_cpu_capacity(cpu) - self.cpu_util_wake_v4_15(cpu, p)
    }

    /// `find_idlest_group(sd, p, this_cpu, sd_flag)` of Linux 4.15 (kernel/sched/fair.c),
    /// with Linux 4.17's `SD_NUMA` clause when FIND_IDLEST_NUMA is on. `None` keeps the
    /// task in the local group.
    ///
    /// Every group the task may use is summed over all its CPUs: runnable load
    /// ([`Sched::weighted_cpuload_v4_15`]) and load with blocked tasks (`cpu_load`), both
    /// scaled by the group's capacity, and the most spare capacity of one CPU. A remote
    /// group becomes the idlest when its runnable load is lower by more than `imbalance`,
    /// or when the runnable loads are within `imbalance` and its `avg_load` is lower by the
    /// `imbalance_scale` ratio. Unless the task forks, spare capacity decides first: a
    /// local CPU with more than half the task's utilization to spare, and not beaten by
    /// the ratio, keeps it local; else a remote group with such a CPU wins. Then the local
    /// group keeps the task when the idlest is not lighter by more than `imbalance`, or the
    /// loads are close and the local `avg_load` is lower by the ratio.
    ///
    /// The sentinels are `ULONG_MAX` and the sums wrap as the kernel's unsigned longs do
    /// (a skipped local group leaves `this_runnable_load` at `ULONG_MAX`, and adding
    /// `imbalance` to it wraps to a small number).
    pub fn find_idlest_group_v4_15(
        &self,
        sd: SdId,
        p: TaskId,
        this_cpu: usize,
        sd_flag: SdFlags,
    ) -> Option<GroupId> {
        let d = self.topo.domain(sd);
        let allowed = &self.tasks[p].cpus_allowed;
        let mut idlest: Option<GroupId> = None;
        let mut most_spare_sg: Option<GroupId> = None;
        let mut min_runnable_load = u64::MAX;
        let mut this_runnable_load = u64::MAX;
        let mut min_avg_load = u64::MAX;
        let mut this_avg_load = u64::MAX;
        let mut most_spare = 0u64;
        let mut this_spare = 0u64;
        let imbalance_pct = u64::from(imbalance_pct_v4_15(d.flags));
        let imbalance_scale = 100 + (imbalance_pct - 100) / 2;
        let imbalance = scale_load_down(NICE_0_LOAD) * (imbalance_pct - 100) / 100;
        // forkexec_idx and wake_idx are both 0 in 4.15, so the load index changes nothing.

        for &group in &d.groups {
            let span = &self.topo.group(group).span;
            // Skip over a group with no CPU the task may use.
            if !span.intersects(allowed) {
                continue;
            }
            let local_group = span.test(this_cpu);
            self.count_group_visit();
            let mut avg_load = 0u64;
            let mut runnable_load = 0u64;
            let mut max_spare_cap = 0u64;
            for i in span.iter() {
                self.count_cpu_visit();
                // source_load and target_load with index 0 are both weighted_cpuload.
                runnable_load += self.weighted_cpuload_v4_15(i);
                avg_load += self.cpu_load(i);
                max_spare_cap = max_spare_cap.max(self.capacity_spare_wake_v4_15(i, p));
            }
            // Adjust by the relative capacity of the group.
            let capacity = self.topo.group_sgc(group).capacity();
            avg_load = avg_load * SCHED_CAPACITY_SCALE / capacity;
            runnable_load = runnable_load * SCHED_CAPACITY_SCALE / capacity;

            if local_group {
                this_runnable_load = runnable_load;
                this_avg_load = avg_load;
                this_spare = max_spare_cap;
            } else {
                if min_runnable_load > runnable_load.wrapping_add(imbalance) {
                    // Clearly less runnable load: this group is the idlest so far.
                    min_runnable_load = runnable_load;
                    min_avg_load = avg_load;
                    idlest = Some(group);
                } else if runnable_load < min_runnable_load.wrapping_add(imbalance)
                    && min_avg_load.wrapping_mul(100) > imbalance_scale.wrapping_mul(avg_load)
                {
                    // Close runnable loads: the blocked load, through avg_load, decides.
                    min_avg_load = avg_load;
                    idlest = Some(group);
                }
                if most_spare < max_spare_cap {
                    most_spare = max_spare_cap;
                    most_spare_sg = Some(group);
                }
            }
        }

        // A forking task has no utilization yet, so spare capacity cannot be compared
        // with it; half the task's utilization is the margin otherwise.
        if !sd_flag.intersects(SdFlags::BALANCE_FORK) {
            let half_util = self.task_util(p) / 2;
            if this_spare > half_util
                && imbalance_scale.wrapping_mul(this_spare) > most_spare.wrapping_mul(100)
            {
                return None;
            }
            if most_spare > half_util {
                return most_spare_sg;
            }
        }

        let idlest = idlest?;

        // Seed 004: across nodes the remote group must be lighter by more than
        // `imbalance`, or the task stays on the local node.
        if self.fair.features.has(Feature::FIND_IDLEST_NUMA)
            && d.flags.contains(SdFlags::NUMA)
            && min_runnable_load.wrapping_add(imbalance) >= this_runnable_load
        {
            return None;
        }

        if min_runnable_load > this_runnable_load.wrapping_add(imbalance) {
            return None;
        }
        if this_runnable_load < min_runnable_load.wrapping_add(imbalance)
            && this_avg_load.wrapping_mul(100) < imbalance_scale.wrapping_mul(min_avg_load)
        {
            return None;
        }
        Some(idlest)
    }

    /// `find_idlest_group_cpu(group, p, this_cpu)` of Linux 4.15 (kernel/sched/fair.c):
    /// the only CPU of a one-CPU group; else, among the allowed CPUs, the idle one
    /// (4.15's `idle_cpu`) in the shallowest idle state, on equal states (or without a
    /// cpuidle driver) the most recently idled (`idle_stamp`); else the busy CPU with the
    /// least runnable load ([`Sched::weighted_cpuload_v4_15`]), `this_cpu` on a tie with
    /// it, and `this_cpu` when nothing is found.
    pub fn find_idlest_group_cpu_v4_15(&self, group: GroupId, p: TaskId, this_cpu: usize) -> usize {
        let g = self.topo.group(group);
        if g.group_weight == 1 {
            return g.span.first().unwrap_or(this_cpu);
        }
        let mut min_load = u64::MAX;
        let mut min_exit_latency = u32::MAX;
        let mut latest_idle_timestamp = 0u64;
        let mut least_loaded_cpu = this_cpu;
        let mut shallowest_idle_cpu: Option<usize> = None;
        for i in g.span.and(&self.tasks[p].cpus_allowed).iter() {
            self.count_cpu_visit();
            let rq = &self.rqs[i];
            if rq.idle_cpu() {
                let idle = self.params.cpuidle_exit_latency_us;
                match idle {
                    // The shallowest idle state wins whatever the idle timestamp.
                    Some(lat) if lat < min_exit_latency => {
                        min_exit_latency = lat;
                        latest_idle_timestamp = rq.idle_stamp;
                        shallowest_idle_cpu = Some(i);
                    }
                    // Same state (or no driver): the most recently idled CPU has the
                    // warmer cache.
                    _ if (idle.is_none() || idle == Some(min_exit_latency))
                        && rq.idle_stamp > latest_idle_timestamp =>
                    {
                        latest_idle_timestamp = rq.idle_stamp;
                        shallowest_idle_cpu = Some(i);
                    }
                    _ => {}
                }
            } else if shallowest_idle_cpu.is_none() {
                let load = self.weighted_cpuload_v4_15(i);
                // On equal load, 4.15 prefers not to move the task off this CPU.
                if load < min_load || (load == min_load && i == this_cpu) {
                    min_load = load;
                    least_loaded_cpu = i;
                }
            }
        }
        shallowest_idle_cpu.unwrap_or(least_loaded_cpu)
    }

    /// `find_idlest_cpu(sd, p, cpu, prev_cpu, sd_flag)` of Linux 4.15 (kernel/sched/
    /// fair.c), with its caller's `sync_entity_load_avg(p)` for a task that is not forking
    /// (4.15's `select_task_rq_fair` syncs before the call): `prev_cpu` if the task may
    /// use no CPU of `sd`; otherwise from `sd` down, the idlest group and its idlest CPU;
    /// when that moves the task, continue in the new CPU's domains below the current
    /// level; when it does not, try the child.
    pub fn find_idlest_cpu_v4_15(
        &mut self,
        sd: SdId,
        p: TaskId,
        cpu: usize,
        prev_cpu: usize,
        sd_flag: SdFlags,
    ) -> usize {
        // capacity_spare_wake needs the task's utilization synced to its cfs_rq.
        if !sd_flag.intersects(SdFlags::BALANCE_FORK) {
            self.sync_entity_load_avg(p);
        }
        let mut cpu = cpu;
        let mut new_cpu = cpu;
        if !self
            .topo
            .domain(sd)
            .span
            .intersects(&self.tasks[p].cpus_allowed)
        {
            return prev_cpu;
        }
        let mut sd = Some(sd);
        while let Some(cur) = sd {
            let d = self.topo.domain(cur);
            if !d.flags.intersects(sd_flag) {
                sd = d.child;
                continue;
            }
            let Some(group) = self.find_idlest_group_v4_15(cur, p, cpu, sd_flag) else {
                sd = d.child;
                continue;
            };
            new_cpu = self.find_idlest_group_cpu_v4_15(group, p, cpu);
            if new_cpu == cpu {
                // Try a lower level of `cpu`.
                sd = d.child;
                continue;
            }
            // Try the levels of `new_cpu` below this one.
            cpu = new_cpu;
            sd = self.lower_domain_with(cpu, d.span_weight, sd_flag);
        }
        new_cpu
    }
}
