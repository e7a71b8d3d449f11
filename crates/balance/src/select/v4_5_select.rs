//! Linux 4.5's `select_task_rq_fair(p, prev_cpu, sd_flag, wake_flags)`, which
//! `--kernel 4.5` runs in place of 6.12's.
//!
//! # Source
//!
//! `kernel/sched/fair.c` of **Linux 4.5.0** (`github:arthur-lucena/linux-4.5-hw-so` at
//! `f21e75bf`, Makefile 4.5.0), `select_task_rq_fair` 5063-5142. Its pieces:
//! [`super::v4_5_wake_affine`] (`wake_affine`, `effective_load`, and where 4.5's
//! `record_wakee` call differs), [`super::v4_5_sis`] (`select_idle_sibling`, read in
//! 4.5.7, the same function; with seed 001's SIS_FIRST_IDLE patch read inside it),
//! [`super::v4_5_find_idlest`] (`find_idlest_group`, `find_idlest_cpu` and the balance
//! loop). `wake_wide` and `record_wakee` are 6.12's, which are 4.5's line for line.
//!
//! # The steps
//!
//! 1. `sd_flag` is the caller's `SD_BALANCE_*` flag; fairsim's `WF_TTWU`, `WF_FORK` and
//!    `WF_EXEC` are the same bits as `SD_BALANCE_WAKE`, `_FORK` and `_EXEC`. A wakeup
//!    (`sd_flag & SD_BALANCE_WAKE`) wants an affine placement unless `wake_wide(p)` or
//!    the waking CPU is not allowed for the task. `new_cpu` starts at `prev_cpu` for
//!    every kind of placement (6.12's slow path starts from the waking CPU).
//! 2. Walking up the waking CPU's domains, stopping at one without `SD_LOAD_BALANCE`
//!    (every fairsim domain balances): with `want_affine`, the first `SD_WAKE_AFFINE`
//!    domain that spans `prev_cpu` is `affine_sd` and ends the walk; otherwise a domain
//!    with `sd_flag` becomes `sd`, and without `want_affine` the first domain lacking it
//!    ends the walk.
//! 3. With `affine_sd`, `sd` is dropped, and when the CPUs differ `wake_affine` may move
//!    the target to the waking CPU.
//! 4. Without `sd`, a wakeup goes to `select_idle_sibling(p, new_cpu)` and a fork or exec
//!    stays on `new_cpu`; with `sd`, the balance loop descends from it.
//!
//! # Against 6.12
//!
//! No EAS (`find_energy_efficient_cpu`), no `WF_CURRENT_CPU`, no `recent_used_cpu`, no
//! `sync_entity_load_avg` before the slow path, no "no allowed CPU in `sd`" return, and
//! `sync` does not look at `PF_EXITING`. 6.12's `wake_affine` returns a CPU and has the
//! WA_IDLE shortcuts; 4.5's answers yes or no on load alone. 6.12's
//! `select_idle_sibling(p, prev, target)` takes `prev` from its caller; 4.5's reads
//! `task_cpu(p)`, the same CPU in fairsim's wakeups.
//!
//! `select_task_rq()` around it (core.c) is as 6.12's in the steps fairsim models: the
//! class is asked only when `nr_cpus_allowed > 1`, and a disallowed answer falls back to
//! `select_fallback_rq()`.

use fairsim_topology::SdFlags;

use crate::sched::{wf, Sched};
use crate::task::TaskId;

impl Sched {
    /// `select_task_rq_fair(p, prev_cpu, sd_flag, wake_flags)` of Linux 4.5
    /// (kernel/sched/fair.c), run on `this_cpu` (`smp_processor_id()`) at `now`: the
    /// wake-affine domain and `wake_affine` then `select_idle_sibling` for wakeups, the
    /// `find_idlest_group`/`find_idlest_cpu` descent for forks and execs. `record_wakee`,
    /// which 4.5 runs from `task_waking_fair` just before, runs first here.
    pub(crate) fn select_task_rq_fair_v4_5(
        &mut self,
        p: TaskId,
        prev_cpu: usize,
        wake_flags: u32,
        this_cpu: usize,
        now: u64,
    ) -> usize {
        // SD_BALANCE_* and WF_TTWU/FORK/EXEC share the first nibble.
        let sd_flag = SdFlags(wake_flags & 0xF);
        let waking = sd_flag.intersects(SdFlags::BALANCE_WAKE);
        if waking {
            // task_waking_fair() -> record_wakee(p), before select_task_rq().
            self.record_wakee(p, this_cpu, now);
        }

        let cpu = this_cpu;
        let mut new_cpu = prev_cpu;
        let sync = wake_flags & wf::SYNC != 0;
        let wide = waking && self.wake_wide(p, this_cpu);
        self.wake_stats.wake_wide += u64::from(wide);
        let want_affine = waking && !wide && self.tasks[p].allowed_on(cpu);

        // 4.5 breaks at the first domain without SD_LOAD_BALANCE: every fairsim domain
        // balances, so the walk only ends on its other conditions.
        let (affine_sd, sd) = self.wake_domain_walk(cpu, prev_cpu, want_affine, sd_flag);

        if let Some(asd) = affine_sd {
            // wake_affine is preferred over the balance flags (the walk left sd None).
            if cpu != prev_cpu {
                if self.wake_affine_v4_5(asd, p, cpu, prev_cpu, sync) {
                    new_cpu = cpu;
                }
                self.count_wake_affine(cpu, new_cpu);
            }
        }

        if sd.is_some() && waking {
            self.wake_stats.wake_slow_path += 1;
        }
        match sd {
            // "XXX always ?" in 4.5: only wakeups look for an idle sibling.
            None if waking => self.select_idle_sibling_legacy_counted(p, new_cpu),
            None => new_cpu,
            Some(sd) => self.find_idlest_loop_v4_5(sd, p, cpu, new_cpu, sd_flag),
        }
    }
}
