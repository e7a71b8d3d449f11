//! Idle-core tracking for SMT machines: `sd_llc_shared->has_idle_cores`, set when a CPU
//! goes idle and finds its whole core idle, cleared when an idle-core scan of the LLC
//! fails; and `select_idle_core`, the per-core step of that scan (fair.c).

use std::sync::atomic::Ordering;

use fairsim_topology::CpuMask;

use crate::lb::view::LbRead;
use crate::sched::Sched;
use crate::task::TaskId;

impl Sched {
    /// `cpu_smt_mask(cpu)`: the hardware threads of `cpu`'s core.
    pub fn cpu_smt_mask(&self, cpu: usize) -> &CpuMask {
        &self.machine.cpus[cpu].smt_siblings
    }

    /// `set_idle_cores(cpu, val)` (fair.c): write `has_idle_cores` of `cpu`'s LLC.
    pub fn set_idle_cores(&self, cpu: usize, val: bool) {
        if let Some(sds) = self.topo.cpus[cpu].sd_llc_shared {
            self.topo.shared[sds]
                .has_idle_cores
                .store(val, Ordering::Relaxed);
        }
    }

    /// `test_idle_cores(cpu)` (fair.c): read `has_idle_cores` of `cpu`'s LLC (false
    /// without an LLC domain).
    pub fn test_idle_cores(&self, cpu: usize) -> bool {
        self.topo.cpus[cpu]
            .sd_llc_shared
            .is_some_and(|sds| self.topo.shared[sds].has_idle_cores.load(Ordering::Relaxed))
    }

    /// `update_idle_core(rq)` (sched.h), called when `cpu` switches to its idle task:
    /// on SMT machines, `__update_idle_core`.
    pub fn update_idle_core(&self, cpu: usize) {
        if self.sched_smt_active() {
            self.__update_idle_core(cpu);
        }
    }

    /// `__update_idle_core(rq)` (fair.c): if the LLC is not already marked, and every
    /// other thread of `cpu`'s core is idle, mark the LLC as having an idle core.
    pub fn __update_idle_core(&self, cpu: usize) {
        if self.test_idle_cores(cpu) {
            return;
        }
        let all_idle = self
            .cpu_smt_mask(cpu)
            .iter()
            .filter(|&c| c != cpu)
            .all(|c| self.rqs[c].available_idle_cpu());
        if all_idle {
            self.set_idle_cores(cpu, true);
        }
    }

    /// `select_idle_core(p, core, cpus, &idle_cpu)` (fair.c): return `core` if all its
    /// threads are idle. Otherwise drop the core's threads from `cpus` and return `None`;
    /// on the way, remember in `idle_cpu` the first idle (or SCHED_IDLE) thread in `cpus`
    /// as a fallback for the caller.
    pub fn select_idle_core(
        &self,
        _p: TaskId,
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
                    if self.rqs[cpu].sched_idle_rq() && cpus.test(cpu) {
                        *idle_cpu = Some(cpu);
                        break;
                    }
                    continue;
                }
                break;
            }
            if idle_cpu.is_none() && cpus.test(cpu) {
                *idle_cpu = Some(cpu);
            }
        }
        if idle {
            return Some(core);
        }
        cpus.andnot_with(self.cpu_smt_mask(core));
        None
    }
}
