//! Linux 4.15 and 4.16's `select_task_rq_fair(p, prev_cpu, sd_flag, wake_flags)`, which
//! `--kernel 4.15` and `--kernel 4.16` run in place of 6.12's.
//!
//! # Sources
//!
//! - **Linux 4.15.0**: `github:sndrzt/linux-4.15` @ `6ea06264` (Makefile 4.15.0),
//!   `kernel/sched/fair.c` `select_task_rq_fair` 6317-6382; `kernel/sched/core.c`
//!   `try_to_wake_up` (2063: `select_task_rq(p, p->wake_cpu, SD_BALANCE_WAKE,
//!   wake_flags)`), `wake_up_new_task` (2463), `sched_exec` (2924).
//! - **Linux 4.16.13**: `github:lizuobin/linux-4.16.13_tiny4412` @ `92bab218`,
//!   `kernel/sched/fair.c` 6338-6405, `kernel/sched/core.c` 2450-2470.
//!
//! Its pieces: [`super::v4_15_wake_affine`] (`wake_cap`, `wake_affine`,
//! `wake_affine_idle`, `wake_affine_weight`), [`super::v4_15_sis`]
//! (`select_idle_sibling`, `select_idle_core`, `select_idle_cpu` with SIS_PROP,
//! `select_idle_smt`), [`super::v4_15_find_idlest`] (`find_idlest_cpu` and its group
//! and CPU searches, with the caller's `sync_entity_load_avg`). `record_wakee` and
//! `wake_wide` are 6.12's [`super::wake_affine`], whose bodies are 4.15's and 4.16's line
//! for line (halve `wakee_flips` once per `HZ`, count a flip per new wakee; wide when the
//! smaller flip count is at least `sd_llc_size` and the larger `sd_llc_size` times it).
//!
//! # The steps (4.15)
//!
//! 1. A wakeup (`sd_flag & SD_BALANCE_WAKE`; fairsim's `WF_TTWU`, `WF_FORK`, `WF_EXEC`
//!    are the bits of `SD_BALANCE_WAKE`, `_FORK`, `_EXEC`) records the wakee and wants an
//!    affine placement unless `wake_wide(p)`, or `wake_cap(p, cpu, prev_cpu)` (the task
//!    does not fit the smaller capacity; asymmetric machines only), or the waking CPU is
//!    not allowed. `new_cpu` starts at `prev_cpu`.
//! 2. Up the waking CPU's domains, stopping at one without `SD_LOAD_BALANCE` (every
//!    fairsim domain balances; 6.12 dropped the flag): with `want_affine`, the first
//!    `SD_WAKE_AFFINE` domain spanning `prev_cpu` is `affine_sd` and ends the walk; else
//!    a domain with `sd_flag` becomes `sd`, and without `want_affine` the first lacking
//!    it ends the walk.
//! 3. With `affine_sd`, `sd` is dropped; when the CPUs differ, `wake_affine` may take the
//!    waking CPU.
//! 4. With `sd` (fork, exec), `sync_entity_load_avg(p)` unless forking, then
//!    `find_idlest_cpu`; without, a wakeup goes to `select_idle_sibling(p, prev_cpu,
//!    new_cpu)`.
//!
//! # 4.16 against 4.15 (the whole `diff` of fair.c in this path)
//!
//! - `wake_affine_idle` takes three arguments and returns a CPU: an idle waking CPU
//!   counts only within the previous CPU's LLC, and then an idle previous CPU is kept.
//!   `wake_affine_weight` and `wake_affine` return CPUs; the caller takes
//!   `new_cpu = wake_affine(...)`; `ttwu_move_affine` counts every decision
//!   ([`super::v4_15_wake_affine`]).
//! - `select_idle_sibling` tries `p->recent_used_cpu` after the previous CPU, and after a
//!   fast-path wakeup with `want_affine` the waker's `recent_used_cpu` becomes the waking
//!   CPU; `wake_up_new_task` sets the child's to the parent's CPU (core.c), which
//!   fairsim's fork does for every kernel ([`super::v4_15_sis`]).
//! - `capacity_spare_wake` became `max(capacity_of - cpu_util_wake, 0)` (4.15:
//!   `capacity_orig_of - cpu_util_wake`) and `find_idlest_group_cpu` lost the tie-break
//!   for `this_cpu` among equally loaded busy CPUs. **Not taken**: both kernels run
//!   [`super::v4_15_find_idlest`], 4.15.0's slow path, as that module explains (seed 004
//!   measured on 4.15.0).
//! - The rest of the diff is outside this path: `__schedstat_*` in the wait/sleep
//!   statistics, `arch_scale_freq_capacity`'s argument, return types of `cpu_util`,
//!   `task_util`, `cpu_util_wake` (`int` to `unsigned long`, same values here),
//!   `wakeup_gran`'s arguments, comments.
//!
//! # 4.15/4.16 against 6.12
//!
//! - No EAS, no `WF_CURRENT_CPU`, `sync` without `PF_EXITING` (none of these in fairsim).
//! - `wake_cap` gates `want_affine`; 6.12 has none.
//! - 4.15/4.16 sync the task's load (unless it forks) before calling the slow path, then
//!   `find_idlest_cpu` returns `prev_cpu` when `sd` has no allowed CPU; 6.12 does both
//!   inside `sched_balance_find_dst_cpu`, the check first. The port keeps 4.15's order
//!   ([`Sched::find_idlest_cpu_v4_15`] syncs first).
//! - `wake_affine` and `select_idle_sibling` are 4.15's ([`super::v4_15_wake_affine`],
//!   [`super::v4_15_sis`] list their differences).
//! - **`SD_BALANCE_WAKE` on asymmetric machines.** 4.15's `sd_init` adds
//!   `SD_BALANCE_WAKE` to a domain with `SD_ASYM_CPUCAPACITY` and every domain below it,
//!   so that wakeups `wake_cap` refuses take the slow path. In 4.15 and 4.16 no
//!   architecture set `SD_ASYM_CPUCAPACITY` (`git grep` of both trees' `arch/`,
//!   `drivers/`, `include/`, `kernel/`: only its definition, topology.c and fair.c name
//!   it; neither topology.c detects it as 6.12 does), so no domain had `SD_BALANCE_WAKE`.
//!   fairsim's domains are 6.12's, which carry the detected flag but never
//!   `SD_BALANCE_WAKE`; the walk reads the domains' own flags, which is what mainline
//!   4.15 ran: a wakeup refused by `wake_cap` finds no `sd` and goes to
//!   `select_idle_sibling(p, prev_cpu, prev_cpu)`.
//! - **`current`.** A wakeup from an interrupt on an idle CPU has the idle task as
//!   `current`; fairsim keeps no state for idle tasks, so `record_wakee` records
//!   nothing, `wake_wide` reads 0 flips for the waker, `task_h_load(current)` is 0, and
//!   4.16's write of the waker's `recent_used_cpu` is skipped (nothing reads the idle
//!   task's).

use fairsim_topology::SdFlags;

use crate::kernel::Kernel;
use crate::sched::{wf, Sched};
use crate::task::TaskId;

impl Sched {
    /// `select_task_rq_fair(p, prev_cpu, sd_flag, wake_flags)` of Linux 4.15, and of
    /// 4.16 where the kernel is 4.16 (kernel/sched/fair.c), run on `this_cpu`
    /// (`smp_processor_id()`) at `now`; `sd_flag` is `wake_flags`' low nibble.
    pub(crate) fn select_task_rq_fair_v4_15(
        &mut self,
        p: TaskId,
        prev_cpu: usize,
        wake_flags: u32,
        this_cpu: usize,
        now: u64,
    ) -> usize {
        let v4_16 = self.fair.features.kernel() == Kernel::V4_16;
        let cpu = this_cpu;
        let mut new_cpu = prev_cpu;
        let mut want_affine = false;
        let sync = wake_flags & wf::SYNC != 0;
        // SD_* balance flags and WF_* flags share the first nibble.
        let sd_flag = SdFlags(wake_flags & 0xF);
        let wakeup = sd_flag.intersects(SdFlags::BALANCE_WAKE);

        if wakeup {
            self.record_wakee(p, this_cpu, now);
            // The order matters: wake_cap syncs the task's load, but only when reached.
            let wide = self.wake_wide(p, this_cpu);
            self.wake_stats.wake_wide += u64::from(wide);
            want_affine =
                !wide && !self.wake_cap_v4_15(p, cpu, prev_cpu) && self.tasks[p].allowed_on(cpu);
        }

        let (affine_sd, sd) = self.wake_domain_walk(cpu, prev_cpu, want_affine, sd_flag);

        if let Some(asd) = affine_sd {
            // wake_affine is preferred over the balance flags (the walk left sd None).
            if cpu != prev_cpu {
                new_cpu = self.wake_affine_v4_15(asd, p, cpu, prev_cpu, sync);
                self.count_wake_affine(cpu, new_cpu);
            }
        }

        if sd.is_some() && wakeup {
            self.wake_stats.wake_slow_path += 1;
        }
        match sd {
            // find_idlest_cpu_v4_15 runs the caller's sync_entity_load_avg (not for a
            // fork) before its search.
            Some(sd) => self.find_idlest_cpu_v4_15(sd, p, cpu, prev_cpu, sd_flag),
            None if wakeup => {
                new_cpu = self.select_idle_sibling_v4_15(p, prev_cpu, new_cpu, cpu);
                if v4_16 && want_affine {
                    // The waker's CPU is a candidate for the waker's own next wakeup.
                    if let Some(cur) = self.current_of(cpu) {
                        self.tasks[cur].recent_used_cpu = cpu;
                    }
                }
                new_cpu
            }
            None => new_cpu,
        }
    }
}
