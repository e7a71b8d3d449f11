//! What the load balancer's scan reads of other CPUs without their runqueue locks, as one
//! trait, so that the same decision code runs over the virtual-time engine's [`Sched`] and
//! over the threaded race mode's shared runqueues.
//!
//! The kernel's `update_sg_lb_stats`, `sched_balance_find_src_rq` and `should_we_balance`
//! read `rq->nr_running`, `cfs_rq->avg`, `rq->cpu_capacity`, `idle_cpu()` and
//! `rq->misfit_task_load` of remote CPUs with plain loads (`READ_ONCE` at most), never
//! under the remote lock. [`LbRead`] is exactly that set of reads. In the engine they are
//! field reads of `Sched`; in race mode they are relaxed atomic loads of values each CPU
//! publishes when it changes its own runqueue. Everything above the trait (the statistics,
//! the busiest group and queue, the imbalance) is shared code in [`super::sd_stats`],
//! [`super::find`] and [`super::rq_balance`].
//!
//! [`Sched`]: crate::sched::Sched

use fairsim_topology::{Machine, SchedDomains, SdFlags, SdId};

use crate::features::Features;

/// The load-tracking signals of one CPU's root cfs_rq that balancing reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CfsSignals {
    /// `cfs_rq->avg.load_avg` (`cpu_load`).
    pub load_avg: u64,
    /// `cfs_rq->avg.runnable_avg` (`cpu_runnable`).
    pub runnable_avg: u64,
    /// `cfs_rq->avg.util_avg`.
    pub util_avg: u64,
    /// `cfs_rq->avg.util_est`.
    pub util_est: u64,
}

/// What one scan did, for the caller to fold into its counters: the work the engine's
/// cost model charges, the groups `lb_sg_scan` counts, and the root domain's overload
/// flag, which the kernel writes at the end of the root domain's statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanCounters {
    /// Runqueues read.
    pub cpus_visited: u64,
    /// Of those, in another LLC of the same node.
    pub cpus_visited_remote_llc: u64,
    /// Of those, on another node.
    pub cpus_visited_remote_node: u64,
    /// Groups whose statistics were computed.
    pub groups_visited: u64,
    /// Seed 000 patch 7/7's `lb_sg_scan`: non-local groups scanned.
    pub sg_scan: u64,
    /// `set_rd_overloaded(rd, sg_overloaded)` when the scanned domain is the root.
    pub rd_overloaded: Option<bool>,
    /// `sg_overutilized` of the domain being scanned: some CPU was overutilized.
    pub sg_overutilized: bool,
    /// `set_rd_overutilized(rd, ...)`: at the root the domain's `sg_overutilized`,
    /// below it only a `true` (6.12's `else if (sg_overutilized)`).
    pub rd_overutilized: Option<bool>,
    /// `update_sd_lb_stats` calls made.
    pub sd_lb_stats_calls: u64,
    /// Their summed duration by [`LbRead::scan_clock`] (0 where there is no wall clock).
    pub sd_lb_stats_ns: u64,
}

/// The lockless reads of the machine's state that load balancing's scan makes.
///
/// Implementors answer for the state as it is at the moment of the call; nothing says two
/// reads see the same instant, just as in the kernel.
pub trait LbRead {
    /// The sched domains (their `sched_group_capacity` and `sched_domain_shared` fields
    /// are atomics, shared as they are).
    fn topo(&self) -> &SchedDomains;
    /// The machine.
    fn machine(&self) -> &Machine;
    /// `sched_features`.
    fn features(&self) -> Features;
    /// Whether `UTIL_EST` feeds `cpu_util`.
    fn util_est_enabled(&self) -> bool;
    /// `jiffies` now.
    fn jiffies(&self) -> u64;
    /// `max_load_balance_interval` in jiffies.
    fn max_load_balance_interval(&self) -> u64;
    /// CONFIG_HZ.
    fn hz(&self) -> u64;
    /// `sd->balance_interval` in ms of one of the balancing CPU's own domains.
    fn balance_interval(&self, sd: SdId) -> u64;
    /// `rq->nr_running`.
    fn rq_nr_running(&self, cpu: usize) -> u32;
    /// `rq->cfs.h_nr_queued`.
    fn rq_h_nr_queued(&self, cpu: usize) -> u32;
    /// `rq->ttwu_pending` is set.
    fn rq_ttwu_pending(&self, cpu: usize) -> bool;
    /// `idle_cpu(cpu)`.
    fn idle_cpu(&self, cpu: usize) -> bool;
    /// The root cfs_rq's signals.
    fn cfs_signals(&self, cpu: usize) -> CfsSignals;
    /// `rq->misfit_task_load`.
    fn misfit_task_load(&self, cpu: usize) -> u64;
    /// `capacity_of(cpu)`: `rq->cpu_capacity`.
    fn capacity_of(&self, cpu: usize) -> u64;
    /// `arch_scale_cpu_capacity(cpu)`.
    fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64;
    /// `trace_sched_cpu_capacity_tp(cpu_rq(cpu))` after `update_cpu_capacity` set the
    /// CPU's capacity: logged for a tracer when one listens ([`crate::pelt_tp`]),
    /// nothing by default (race mode has no tracer).
    fn trace_cpu_capacity(&self, _cpu: usize) {}

    /// `sched_smt_active()`: some core has more than one thread.
    fn sched_smt_active(&self) -> bool {
        self.machine().smt_present()
    }

    /// `cpu_overutilized(cpu)`: energy-aware scheduling is on and the CPU's utilization
    /// does not fit its capacity. Never where there is no energy model (race mode).
    fn cpu_overutilized(&self, _cpu: usize) -> bool {
        false
    }

    /// `!is_rd_overutilized(rd) && rd->pd` for the balancing CPU's root domain: EAS's
    /// placement stands and `sched_balance_find_src_group` finds the domain balanced.
    fn rd_eas_balanced(&self, _cpu: usize) -> bool {
        false
    }

    /// A monotonic wall clock in ns to time `update_sd_lb_stats` with, where the reads
    /// are real concurrent loads (race mode). The engine has none: 0, and its costs come
    /// from its cost table instead.
    fn scan_clock(&self) -> u64 {
        0
    }

    /// `sched_idle_rq(rq)`: every runnable task is SCHED_IDLE. fairsim has no SCHED_IDLE
    /// tasks, so never.
    fn sched_idle_rq(&self, _cpu: usize) -> bool {
        false
    }

    /// `cpu`'s LLC id (`per_cpu(sd_llc_id, cpu)`) and NUMA node (`cpu_to_node`), the two
    /// a balance reads of every CPU it scans.
    fn llc_node(&self, cpu: usize) -> (usize, usize) {
        (
            self.topo().cpus[cpu].sd_llc_id,
            self.machine().cpus[cpu].node,
        )
    }

    /// `cpus_share_cache(a, b)`.
    fn cpus_share_cache(&self, a: usize, b: usize) -> bool {
        a == b || self.llc_node(a).0 == self.llc_node(b).0
    }

    /// `cpu_load(rq)`: the root cfs_rq's `load_avg`.
    fn cpu_load(&self, cpu: usize) -> u64 {
        self.cfs_signals(cpu).load_avg
    }

    /// `cpu_runnable(rq)`: the root cfs_rq's `runnable_avg`.
    fn cpu_runnable(&self, cpu: usize) -> u64 {
        self.cfs_signals(cpu).runnable_avg
    }

    /// `cpu_util(cpu, NULL, -1, boost)`: utilization, boosted by the runnable average when
    /// asked, raised to util_est with `UTIL_EST`, capped at the original capacity.
    fn cpu_util_no_task(&self, cpu: usize, boost: bool) -> u64 {
        let s = self.cfs_signals(cpu);
        let mut util = s.util_avg;
        if boost {
            util = util.max(s.runnable_avg);
        }
        if self.util_est_enabled() {
            util = util.max(s.util_est);
        }
        util.min(self.arch_scale_cpu_capacity(cpu))
    }

    /// `cpu_util_cfs(cpu)`.
    fn cpu_util_cfs(&self, cpu: usize) -> u64 {
        self.cpu_util_no_task(cpu, false)
    }

    /// `cpu_util_cfs_boost(cpu)`.
    fn cpu_util_cfs_boost(&self, cpu: usize) -> u64 {
        self.cpu_util_no_task(cpu, true)
    }

    /// `is_core_idle(cpu)`: every other SMT sibling of `cpu` is idle.
    fn is_core_idle(&self, cpu: usize) -> bool {
        self.machine().cpus[cpu]
            .smt_siblings
            .iter()
            .all(|s| s == cpu || self.idle_cpu(s))
    }

    /// `check_cpu_capacity(rq, sd)`: RT, IRQ or thermal pressure took a noticeable share
    /// of the CPU (by `imbalance_pct`).
    fn check_cpu_capacity(&self, cpu: usize, sd: SdId) -> bool {
        let pct = u64::from(self.topo().domain(sd).imbalance_pct);
        self.capacity_of(cpu) * pct < self.arch_scale_cpu_capacity(cpu) * 100
    }

    /// `sched_reduced_capacity(rq, sd)`: one CFS task on a CPU with reduced capacity.
    fn sched_reduced_capacity(&self, cpu: usize, sd: SdId) -> bool {
        self.rq_h_nr_queued(cpu) == 1 && self.check_cpu_capacity(cpu, sd)
    }

    /// `sched_asym_prefer(a, b)`: `arch_asym_cpu_priority` is the machine's ITMT
    /// priority on x86 with ITMT, `-cpu` otherwise (the lower-numbered CPU preferred).
    fn sched_asym_prefer(&self, a: usize, b: usize) -> bool {
        self.machine().sched_asym_prefer(a, b)
    }

    /// `sched_use_asym_prio(sd, cpu)`.
    fn sched_use_asym_prio(&self, sd: SdId, cpu: usize) -> bool {
        let flags = self.topo().domain(sd).flags;
        if !flags.contains(SdFlags::ASYM_PACKING) {
            return false;
        }
        if !self.sched_smt_active() {
            return true;
        }
        flags.contains(SdFlags::SHARE_CPUCAPACITY) || self.is_core_idle(cpu)
    }

    /// `sched_asym(sd, dst_cpu, src_cpu)`.
    fn sched_asym(&self, sd: SdId, dst: usize, src: usize) -> bool {
        self.sched_use_asym_prio(sd, dst) && self.sched_asym_prefer(dst, src)
    }

    /// Counts a runqueue a balance on `from` read, split by distance, for the cost model.
    fn count_balance_visit(&self, c: &mut ScanCounters, from: usize, cpu: usize) {
        c.cpus_visited += 1;
        if self.llc_node(from).1 != self.llc_node(cpu).1 {
            c.cpus_visited_remote_node += 1;
        } else if !self.cpus_share_cache(from, cpu) {
            c.cpus_visited_remote_llc += 1;
        }
    }
}

/// The engine's machine: every read is a field of the one-threaded [`Sched`].
///
/// [`Sched`]: crate::sched::Sched
impl LbRead for crate::sched::Sched {
    fn topo(&self) -> &SchedDomains {
        &self.topo
    }
    fn machine(&self) -> &Machine {
        &self.machine
    }
    fn sched_smt_active(&self) -> bool {
        self.smt_active
    }
    fn cpu_overutilized(&self, cpu: usize) -> bool {
        crate::sched::Sched::cpu_overutilized(self, cpu)
    }
    fn rd_eas_balanced(&self, cpu: usize) -> bool {
        crate::sched::Sched::rd_eas_balanced(self, cpu)
    }
    fn llc_node(&self, cpu: usize) -> (usize, usize) {
        let (llc, node) = self.llc_node[cpu];
        (llc as usize, node as usize)
    }
    fn features(&self) -> Features {
        self.fair.features
    }
    fn util_est_enabled(&self) -> bool {
        self.fair.util_est.enabled()
    }
    fn jiffies(&self) -> u64 {
        self.jiffies_now()
    }
    fn max_load_balance_interval(&self) -> u64 {
        self.lb.max_load_balance_interval
    }
    fn hz(&self) -> u64 {
        u64::from(self.params.hz)
    }
    fn balance_interval(&self, sd: SdId) -> u64 {
        self.lb.sd[sd].balance_interval
    }
    fn rq_nr_running(&self, cpu: usize) -> u32 {
        self.rqs[cpu].nr_running
    }
    fn rq_h_nr_queued(&self, cpu: usize) -> u32 {
        self.rqs[cpu].cfs.h_nr_queued
    }
    fn rq_ttwu_pending(&self, cpu: usize) -> bool {
        self.rqs[cpu].ttwu_pending != 0
    }
    fn idle_cpu(&self, cpu: usize) -> bool {
        self.rqs[cpu].idle_cpu()
    }
    fn cfs_signals(&self, cpu: usize) -> CfsSignals {
        let a = &self.rqs[cpu].cfs.avg.avg;
        CfsSignals {
            load_avg: a.load_avg,
            runnable_avg: a.runnable_avg,
            util_avg: a.util_avg,
            util_est: u64::from(a.util_est),
        }
    }
    fn misfit_task_load(&self, cpu: usize) -> u64 {
        self.rqs[cpu].misfit_task_load
    }
    fn capacity_of(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cpu_capacity
    }
    fn arch_scale_cpu_capacity(&self, cpu: usize) -> u64 {
        self.rqs[cpu].capacity_orig
    }
    fn trace_cpu_capacity(&self, cpu: usize) {
        if self.pelt_tp.on() {
            let rq = &self.rqs[cpu];
            self.pelt_tp.push(
                cpu,
                crate::pelt_tp::PeltTracepoint::CpuCapacity {
                    capacity: rq.cpu_capacity,
                    capacity_orig: rq.capacity_orig,
                    capacity_curr: fairsim_pelt::cap_scale(rq.capacity_orig, rq.freq_capacity),
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LbRead;
    use crate::sched::{Sched, SchedParams};
    use fairsim_topology::{build_sched_domains, source::preset, BuildOptions};

    fn sched(name: &str) -> Sched {
        let m = preset(name).unwrap();
        let topo = build_sched_domains(&m, BuildOptions::default()).unwrap();
        Sched::new(m, topo, SchedParams::default())
    }

    /// The engine's cached `sched_smt_present` is on with SMT siblings, off without.
    #[test]
    fn smt_active_is_the_machines_smt() {
        for (name, smt) in [("numa-2s4c2t", true), ("rk3399", false), ("tc2", false)] {
            let s = sched(name);
            assert_eq!(s.sched_smt_active(), smt, "{name}");
            assert_eq!(s.machine.smt_present(), smt, "{name}");
        }
    }

    /// The engine's packed LLC ids and nodes answer `cpus_share_cache` and split a scan's
    /// visits by distance as the topology's own records (what the trait's default
    /// `llc_node` reads) do.
    #[test]
    fn packed_llc_and_node_match_the_topology() {
        for name in ["numa-2s4c2t", "rk3399", "tc2"] {
            let s = sched(name);
            let n = s.machine.cpus.len();
            for a in 0..n {
                for b in 0..n {
                    let t = &s.topo;
                    let share = a == b || t.cpus[a].sd_llc_id == t.cpus[b].sd_llc_id;
                    assert_eq!(s.cpus_share_cache(a, b), share, "{name} {a} {b}");
                    let mut c = super::ScanCounters::default();
                    s.count_balance_visit(&mut c, a, b);
                    let remote_node = s.machine.cpus[a].node != s.machine.cpus[b].node;
                    assert_eq!(c.cpus_visited, 1);
                    assert_eq!(c.cpus_visited_remote_node, u64::from(remote_node));
                    assert_eq!(c.cpus_visited_remote_llc, u64::from(!remote_node && !share));
                }
            }
        }
    }
}
